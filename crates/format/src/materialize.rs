//! Rebuilding a core [`Module`] from a file, through the one copy of `copy.rs`: each
//! definition's own instruction is created first (a placeholder with its opcode), then the
//! pool is re-interned in its order (pool values may name definitions), then every definition
//! and the root archive are planned with the identity mapping, in order, and built at once
//! (on every core); the placeholders then become the root's children, after its decorations.
//! The error is the first the copy of each archive in order would report: a plan refused
//! stops the planning, and a body refused before it is reported first.

use irkit_core::{Inst, Module, Payload, Slots};

use crate::build::build_copies;
use crate::copy::{CopyMapper, Place, Reader};
use crate::defview::{DefIndex, DefView, PoolIndex, PoolView, Ref};
use crate::error::{Location, ReadCause, ReadError};
use crate::view::ModuleView;

impl ModuleView {
    /// Validates the whole module (the checks of [`ModuleView::validate_all`], which is this
    /// function without its result: one definition of a valid file for every reader) and
    /// rebuilds it as a core
    /// [`Module`] equal to the one that was written (`irkit_core::equiv::modules_equal`), name
    /// hints and locations included when the file has debug info.
    pub fn materialize(&self) -> Result<Module, ReadError> {
        self.check_all()?;
        let file: std::sync::Arc<str> = self.file().into();
        let place = |index: Option<u32>| Place {
            file: file.clone(),
            reader: Reader::Materialize,
            index,
        };
        let mut m = Module::new();
        let root = m.root();
        let defs: Vec<DefView<'_>> = (0..self.def_count())
            .map(|i| self.def(i))
            .collect::<Result<_, _>>()?;
        let mut ids = Identity {
            file: file.clone(),
            defs: Vec::with_capacity(defs.len()),
            pool: Vec::new(),
        };
        // Detached while the bodies are built (an owner is built in place without a body).
        for (i, d) in (0..).zip(&defs) {
            let inst = m
                .new_inst(d.root().opcode(), None, Vec::new(), Payload::None)
                .map_err(|e| place(Some(i)).err(Some(0), e))?;
            ids.defs.push(inst);
        }
        ids.pool = intern_pool(&mut m, self.pool()?, &ids.defs, &place(None))?;
        let copier = self.copier(true)?;
        let mut plans = Vec::with_capacity(defs.len() + 1);
        let mut refused = None;
        for (i, d) in defs.iter().enumerate() {
            let target = ids.defs[i];
            match copier.plan_as(*d, &mut m, target, &mut ids, Reader::Materialize) {
                Ok(p) => plans.push(p),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        if refused.is_none() {
            let planned = self
                .root()
                .and_then(|r| copier.plan_as(r, &mut m, root, &mut ids, Reader::Materialize));
            match planned {
                Ok(p) => plans.push(p),
                Err(e) => refused = Some(e),
            }
        }
        if let Err(failed) = build_copies(&mut m, Slots::default(), &plans)
            && let Some((_, e)) = failed.into_iter().next()
        {
            return Err(e);
        }
        if let Some(e) = refused {
            return Err(e);
        }
        for (i, &inst) in (0..).zip(&ids.defs) {
            m.append_child(root, inst)
                .map_err(|e| place(Some(i)).err(Some(0), e))?;
        }
        Ok(m)
    }
}

/// The identity mapping of a whole module: pool entry `i` and definition `i` of the file are
/// the `i`-th ones created.
struct Identity {
    file: std::sync::Arc<str>,
    defs: Vec<Inst>,
    pool: Vec<Inst>,
}

impl Identity {
    fn get(&self, r: Ref) -> Result<Inst, ReadError> {
        let found = match r {
            Ref::Pool(p) => self.pool.get(p.idx()),
            Ref::Def(d) => self.defs.get(d.idx()),
            Ref::Local(_) => None,
        };
        found.copied().ok_or_else(|| {
            ReadError::new(
                &self.file,
                Location::Materialize,
                ReadCause::Malformed(format!("reference {r:?} does not resolve")),
            )
        })
    }
}

impl CopyMapper for Identity {
    type Error = ReadError;

    fn pool(&mut self, _: &mut Module, index: PoolIndex) -> Result<Inst, ReadError> {
        self.get(Ref::Pool(index))
    }

    fn def(&mut self, _: &mut Module, index: DefIndex) -> Result<Inst, ReadError> {
        self.get(Ref::Def(index))
    }
}

/// Interns every pool entry of the file in order (each refers to earlier entries and to the
/// definitions `defs`), the `i`-th result standing for entry `i`.
fn intern_pool(
    m: &mut Module,
    pool: PoolView<'_>,
    defs: &[Inst],
    place: &Place,
) -> Result<Vec<Inst>, ReadError> {
    let mut out: Vec<Inst> = Vec::with_capacity(pool.len() as usize);
    for i in 0..pool.len() {
        let Some(e) = pool.get(i) else { break };
        let what = || format!("pool entry {i} (`{}`)", e.opcode());
        let resolve = |r: Ref| {
            let found = match r {
                Ref::Pool(p) => out.get(p.idx()),
                Ref::Def(d) => defs.get(d.idx()),
                Ref::Local(_) => None,
            };
            found.copied().ok_or_else(|| {
                place.err(
                    None,
                    format_args!("{}: reference {r:?} does not resolve", what()),
                )
            })
        };
        let ty = e.ty().map(resolve).transpose()?;
        let ops = e.operands().map(resolve).collect::<Result<Vec<_>, _>>()?;
        let inst = m
            .intern(e.opcode(), ty, &ops, e.payload().to_payload())
            .map_err(|err| place.err(None, format_args!("{}: {err}", what())))?;
        out.push(inst);
    }
    Ok(out)
}
