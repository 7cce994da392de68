//! Rebuilding a core [`Module`] from a file: definitions' instructions are created first
//! (detached operands), then the pool is re-interned in its dependency order (pool values may
//! name definitions), then every type and operand is filled in, so forward references resolve.

use irkit_core::{Inst, Module, Opcode, Payload};

use crate::defview::{DefView, PayloadView, Ref};
use crate::error::{Location, ReadCause, ReadError};
use crate::hash::Strings;
use crate::schema::{ArchivedDebugRec, ArchivedDebugTable, DEBUG_LOC, DEBUG_NAME};
use crate::view::ModuleView;

struct Build<'v> {
    view: &'v ModuleView,
    m: Module,
    /// Per definition: local index -> instruction.
    locals: Vec<Vec<Inst>>,
    /// Each definition's own instruction (what a definition reference resolves to; kept
    /// apart from `locals`, which `fill` borrows out while it works on a definition).
    def_insts: Vec<Inst>,
    root_locals: Vec<Inst>,
    pool: Vec<Inst>,
    /// `loc` decorations rebuilt from debug info, with their line and column.
    locs: Vec<(Inst, u32, u32)>,
}

struct Frame<'d> {
    local: u32,
    inst: Inst,
    end: u32,
    decos_left: u32,
    decos_done: u32,
    pending: &'d [ArchivedDebugRec],
}

impl ModuleView {
    /// Validates the whole module (the checks of [`ModuleView::validate_all`], which is this
    /// function without its result: one definition of a valid file for every reader) and
    /// rebuilds it as a core
    /// [`Module`] equal to the one that was written (`irkit_core::equiv::modules_equal`), name
    /// hints and locations included when the file has debug info.
    pub fn materialize(&self) -> Result<Module, ReadError> {
        self.check_all()?;
        let mut b = Build {
            view: self,
            m: Module::new(),
            locals: Vec::with_capacity(self.def_count() as usize),
            def_insts: Vec::with_capacity(self.def_count() as usize),
            root_locals: Vec::new(),
            pool: Vec::new(),
            locs: Vec::new(),
        };
        let debug = self.debug_archive()?;
        let defs: Vec<DefView<'_>> = (0..self.def_count())
            .map(|i| self.def(i))
            .collect::<Result<_, _>>()?;
        let root = self.root()?;
        // Phase 1: every instruction, in tree position, without types or operands.
        for (i, d) in defs.iter().enumerate() {
            let locals = b.create_tree(d, Some(i as u32), debug)?;
            b.def_insts.extend(locals.first().copied());
            b.locals.push(locals);
        }
        b.root_locals = b.create_tree(&root, None, None)?;
        // Phase 2: the pool.
        b.intern_pool()?;
        // Phase 3: types and operands.
        for (i, d) in defs.iter().enumerate() {
            b.fill(d, Some(i))?;
        }
        b.fill(&root, None)?;
        b.fill_locs()?;
        Ok(b.m)
    }
}

impl Build<'_> {
    fn err(&self, msg: String) -> ReadError {
        ReadError::new(
            &self.view.file().into(),
            Location::Materialize,
            ReadCause::Malformed(msg),
        )
    }

    fn debug_for(debug: Option<&ArchivedDebugTable>, def: Option<u32>) -> &[ArchivedDebugRec] {
        let (Some(dbg), Some(def)) = (debug, def) else {
            return &[];
        };
        let e = dbg.entries.as_slice();
        let lo = e.partition_point(|r| r.def.to_native() < def);
        let hi = e.partition_point(|r| r.def.to_native() <= def);
        &e[lo..hi]
    }

    fn create_tree(
        &mut self,
        d: &DefView<'_>,
        def: Option<u32>,
        debug: Option<&ArchivedDebugTable>,
    ) -> Result<Vec<Inst>, ReadError> {
        let what = |l: u32| match def {
            Some(i) => format!("definition {i}, instruction {l}"),
            None => format!("root archive, instruction {l}"),
        };
        let mut dbg = Self::debug_for(debug, def);
        let mut locals = Vec::with_capacity(d.len() as usize);
        let mut stack: Vec<Frame<'_>> = Vec::new();
        for iv in d.insts() {
            let l = iv.local();
            while stack.last().is_some_and(|f| f.end <= l) {
                if let Some(mut f) = stack.pop() {
                    self.flush_debug(&mut f, debug, true)?;
                }
            }
            let payload = iv.payload().to_payload();
            let inst = if def.is_none() && l == 0 {
                if iv.opcode() != Opcode::MODULE || iv.subs().any(|(deco, _)| !deco) {
                    return Err(self.err(
                        "the root archive must hold the `module` instruction and only its \
                         decorations"
                            .into(),
                    ));
                }
                let root = self.m.root();
                if !payload.is_none() {
                    self.m
                        .set_payload(root, payload)
                        .map_err(|e| self.err(e.to_string()))?;
                }
                root
            } else {
                let inst = self
                    .m
                    .new_inst(iv.opcode(), None, Vec::new(), payload)
                    .map_err(|e| self.err(format!("{}: {e}", what(l))))?;
                match stack.last_mut() {
                    None => {
                        let root = self.m.root();
                        self.m
                            .append_child(root, inst)
                            .map_err(|e| self.err(format!("{}: {e}", what(l))))?;
                    }
                    Some(f) if f.decos_left > 0 => {
                        self.flush_debug(f, debug, false)?;
                        self.m
                            .attach_decoration(f.inst, inst)
                            .map_err(|e| self.err(format!("{}: {e}", what(l))))?;
                        f.decos_done += 1;
                        f.decos_left -= 1;
                        if f.decos_left == 0 {
                            self.flush_debug(f, debug, true)?;
                        }
                    }
                    Some(f) => {
                        self.m
                            .append_child(f.inst, inst)
                            .map_err(|e| self.err(format!("{}: {e}", what(l))))?;
                    }
                }
                inst
            };
            locals.push(inst);
            // This instruction's debug records (sorted by local, then position).
            let skip = dbg.partition_point(|r| r.local.to_native() < l);
            dbg = &dbg[skip..];
            let take = dbg.partition_point(|r| r.local.to_native() <= l);
            let (mine, rest) = dbg.split_at(take);
            dbg = rest;
            let mut frame = Frame {
                local: l,
                inst,
                end: iv.subtree_end(),
                decos_left: iv.decoration_count(),
                decos_done: 0,
                pending: mine,
            };
            if frame.decos_left == 0 {
                self.flush_debug(&mut frame, debug, true)?;
            }
            stack.push(frame);
        }
        while let Some(mut f) = stack.pop() {
            self.flush_debug(&mut f, debug, true)?;
        }
        Ok(locals)
    }

    /// Attaches the pending debug decorations of `f` that come at the current position of its
    /// decoration list (with `all`, every remaining one, which must then be contiguous).
    fn flush_debug(
        &mut self,
        f: &mut Frame<'_>,
        debug: Option<&ArchivedDebugTable>,
        all: bool,
    ) -> Result<(), ReadError> {
        while let Some((r, rest)) = f.pending.split_first() {
            let pos = r.position.to_native();
            if pos != f.decos_done {
                if !all && pos > f.decos_done {
                    break;
                }
                return Err(self.err(format!(
                    "debug entry for instruction {} at decoration position {pos}, but the \
                     decoration list is at {}",
                    f.local, f.decos_done
                )));
            }
            f.pending = rest;
            let opcode = match r.kind {
                DEBUG_NAME => Opcode::NAME_HINT,
                DEBUG_LOC => Opcode::LOC,
                // A debug kind from a newer minor version: skipped, but it holds its place
                // in the decoration list (positions count every record, `spec/format.md` §2.3).
                _ => {
                    f.decos_done += 1;
                    continue;
                }
            };
            let text = debug
                .and_then(|d| d.strings.get_str(r.text.to_native()))
                .unwrap_or("");
            let deco = self
                .m
                .add_decoration(f.inst, opcode, Vec::new(), Payload::Str(text.into()))
                .map_err(|e| self.err(e.to_string()))?;
            if r.kind == DEBUG_LOC {
                self.locs
                    .push((deco, r.line.to_native(), r.col.to_native()));
            }
            f.decos_done += 1;
        }
        Ok(())
    }

    fn resolve(
        &self,
        r: Ref,
        locals: &[Inst],
        what: &dyn Fn() -> String,
    ) -> Result<Inst, ReadError> {
        let found = match r {
            Ref::Local(l) => locals.get(l as usize),
            Ref::Pool(p) => self.pool.get(p as usize),
            Ref::Def(d) => self.def_insts.get(d as usize),
        };
        found
            .copied()
            .ok_or_else(|| self.err(format!("{}: reference {r:?} does not resolve", what())))
    }

    fn intern_pool(&mut self) -> Result<(), ReadError> {
        let pool = self.view.pool()?;
        self.pool.reserve(pool.len() as usize);
        for i in 0..pool.len() {
            let Some(e) = pool.get(i) else { break };
            let what = || format!("pool entry {i} (`{}`)", e.opcode());
            let ty = e.ty().map(|t| self.resolve(t, &[], &what)).transpose()?;
            let ops = e
                .operands()
                .map(|o| self.resolve(o, &[], &what))
                .collect::<Result<Vec<_>, _>>()?;
            let inst = self
                .m
                .intern(e.opcode(), ty, &ops, e.payload().to_payload())
                .map_err(|err| self.err(format!("{}: {err}", what())))?;
            self.pool.push(inst);
        }
        Ok(())
    }

    fn fill(&mut self, d: &DefView<'_>, def: Option<usize>) -> Result<(), ReadError> {
        let locals = match def {
            Some(i) => std::mem::take(&mut self.locals[i]),
            None => std::mem::take(&mut self.root_locals),
        };
        let result = (|| {
            for iv in d.insts() {
                let l = iv.local();
                let what = || match def {
                    Some(i) => format!("definition {i}, instruction {l}"),
                    None => format!("root archive, instruction {l}"),
                };
                let inst = locals[l as usize];
                if let Some(t) = iv.ty() {
                    let t = self.resolve(t, &locals, &what)?;
                    self.m
                        .set_type(inst, Some(t))
                        .map_err(|e| self.err(format!("{}: {e}", what())))?;
                }
                if iv.operand_count() > 0 {
                    let ops = iv
                        .operands()
                        .map(|o| self.resolve(o, &locals, &what))
                        .collect::<Result<Vec<_>, _>>()?;
                    self.m
                        .set_operands(inst, ops)
                        .map_err(|e| self.err(format!("{}: {e}", what())))?;
                }
            }
            Ok(())
        })();
        match def {
            Some(i) => self.locals[i] = locals,
            None => self.root_locals = locals,
        }
        result
    }

    fn fill_locs(&mut self) -> Result<(), ReadError> {
        for (deco, line, col) in std::mem::take(&mut self.locs) {
            let i32t = self.m.ty_i32();
            let ops = [line, col]
                .into_iter()
                .map(|v| self.m.const_int(i32t, v as u64))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.err(e.to_string()))?;
            self.m
                .set_operands(deco, ops)
                .map_err(|e| self.err(e.to_string()))?;
        }
        Ok(())
    }
}

impl PayloadView<'_> {
    /// Whether there is no payload.
    pub fn is_none(&self) -> bool {
        matches!(self, PayloadView::None)
    }
}
