//! Copying single definitions out of a [`ModuleView`] into an existing core [`Module`], with
//! the caller deciding what pool values and other definitions map to (the linker's lazy
//! copy: only the definitions it reaches are validated and copied, and their references to
//! other definitions and to the pool are remapped on the fly).
//!
//! Unlike [`ModuleView::materialize`], nothing outside the copied definition is decoded except
//! the debug section (for name hints and source locations, when asked for) and whatever the
//! caller's [`CopyMapper`] touches.
//!
//! This is the one archive-to-module decoder: [`ModuleView::materialize`] is this copy of
//! every definition (and of the root archive) with the identity mapping, so both readers build
//! the same instructions, merge the same debug records by the same rule
//! ([`DefCopier::attach_decorations`]) and refuse the same inputs. The linker copies compact
//! bodies in two steps instead ([`crate::plan`]: the mapper's answers first, the instructions
//! later, on every core), building what this copy builds by the same rules; where a build is
//! refused, the linker redoes its walk with this copy, which says why.

use std::sync::Arc;

use irkit_core::{Inst, Module, Opcode, Payload};

use crate::compact::Compact;
use crate::defview::{DefIndex, DefView, InstView, PoolIndex, Ref};
use crate::error::{Location, ReadCause, ReadError};
use crate::placed::{DebugBytes, DebugEntry, DebugRecs};
use crate::schema::{DEBUG_LOC, DEBUG_NAME};
use crate::view::ModuleView;

/// Decides what the outside references of a copied definition become in the destination
/// module, and which decorations are copied.
///
/// Within one copy, the answer for a pool entry or a definition must not change: a 3.0
/// definition names each through its table of external references, and the copy asks for
/// each once, at its first use (instructions in local order, a type before the operands),
/// reusing the answer for every later use.
pub trait CopyMapper {
    /// The caller's error type; read and build failures of the copy convert into it.
    type Error: From<ReadError>;

    /// The destination value for pool entry `index` of the source file.
    fn pool(&mut self, dst: &mut Module, index: PoolIndex) -> Result<Inst, Self::Error>;

    /// The destination instruction standing for top-level definition `index` of the source
    /// file (used as an operand: its address).
    fn def(&mut self, dst: &mut Module, index: DefIndex) -> Result<Inst, Self::Error>;

    /// Whether to copy decoration `deco` of the instruction with local index `owner` (called
    /// before any of its operands is mapped, so a skipped decoration's references are never
    /// passed to [`CopyMapper::def`] or [`CopyMapper::pool`]). The default keeps everything.
    fn keep_decoration(
        &mut self,
        dst: &mut Module,
        owner: u32,
        deco: InstView<'_>,
    ) -> Result<bool, Self::Error> {
        let _ = (dst, owner, deco);
        Ok(true)
    }
}

/// What [`ModuleView::copy_def`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopySummary {
    /// Instructions created in the destination (the definition's own included, name hints and
    /// locations from the debug section included, pool values not counted).
    pub insts: u64,
}

impl ModuleView {
    /// The opcode of definition `i`, from the definitions directory (nothing is validated).
    pub fn def_opcode(&self, i: u32) -> Option<Opcode> {
        self.def_entry_opcode(i).map(Opcode)
    }

    /// A copier for this file's definitions; with `debug`, it re-creates name hints and
    /// source locations from the debug section (validated here, once).
    pub fn copier(&self, debug: bool) -> Result<DefCopier<'_>, ReadError> {
        let debug = if debug { self.debug()? } else { None };
        Ok(DefCopier { view: self, debug })
    }

    /// Copies definition `index` into `dst` (see [`DefCopier::copy`]; this convenience
    /// makes a copier each time).
    pub fn copy_def<M: CopyMapper>(
        &self,
        index: u32,
        dst: &mut Module,
        target: Inst,
        debug: bool,
        map: &mut M,
    ) -> Result<CopySummary, M::Error> {
        let d = self.def(index)?;
        self.copier(debug)?.copy(d, dst, target, map)
    }
}

/// Where [`DefCopier::attach_decorations`] puts what it attaches: the destination module, or
/// a body built apart from it ([`crate::plan`]).
pub(crate) trait Decorate {
    /// Attaches `deco` (created detached) to `owner`, last.
    fn attach(&mut self, owner: Inst, deco: Inst) -> Result<(), irkit_core::CoreError>;

    /// Creates a debug decoration (`name_hint`, or `loc` with its line and column) with
    /// string payload `text` and attaches it to `owner`, the copy of local `local`.
    fn debug(
        &mut self,
        owner: Inst,
        opcode: Opcode,
        loc: Option<(u32, u32)>,
        text: &str,
        place: &Place,
        local: u32,
    ) -> Result<(), ReadError>;
}

impl Decorate for Module {
    fn attach(&mut self, owner: Inst, deco: Inst) -> Result<(), irkit_core::CoreError> {
        self.attach_decoration(owner, deco)
    }

    fn debug(
        &mut self,
        owner: Inst,
        opcode: Opcode,
        loc: Option<(u32, u32)>,
        text: &str,
        place: &Place,
        local: u32,
    ) -> Result<(), ReadError> {
        let ops = match loc {
            Some((line, col)) => {
                let i32t = self.ty_i32();
                [line, col]
                    .into_iter()
                    .map(|v| self.const_int(i32t, v as u64))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| place.err(None, e))?
            }
            None => Vec::new(),
        };
        self.add_decoration(owner, opcode, ops, Payload::Str(text.into()))
            .map_err(|e| place.err(Some(local), e))?;
        Ok(())
    }
}

/// Copies definitions of one file into core modules (made by [`ModuleView::copier`]; cheap
/// to keep: it holds the file's validated debug section, if any).
#[derive(Clone, Copy)]
pub struct DefCopier<'v> {
    pub(crate) view: &'v ModuleView,
    pub(crate) debug: Option<DebugBytes<'v>>,
}

/// Reference index `v` of local `l` of a 3.0 body (`n` locals) not answered yet: a local, an
/// external reference (mapped by `resolve` on first use, kept in `external`), or (only in
/// bytes changed after validation) neither, read as local 0 the way `Ref::decode` falls back.
fn by_index<E>(
    c: &Compact<'_>,
    v: u32,
    l: u32,
    external: &mut [Option<Inst>],
    dst: &mut Module,
    resolve: &mut impl FnMut(Ref, u32, &mut Module) -> Result<Inst, E>,
) -> Result<Inst, E> {
    let n = c.locals();
    if v < n {
        return resolve(Ref::Local(v), l, dst);
    }
    let x = v - n;
    match external.get_mut(x as usize) {
        Some(Some(i)) => Ok(*i),
        Some(slot) => {
            let r = Ref::decode(c.external_ref(x)).unwrap_or(Ref::Local(0));
            let i = resolve(r, l, dst)?;
            *slot = Some(i);
            Ok(i)
        }
        None => resolve(Ref::Local(0), l, dst),
    }
}

/// What the second pass of a decode needs of one copied instruction: its copy, its local
/// index, its raw type reference and the range of its operands in the archive.
struct Pending {
    inst: Inst,
    local: u32,
    ty: u32,
    ops: std::ops::Range<u32>,
}

/// A record of a body with where it sits in the tree, as a pre-order walk meets it.
pub(crate) struct Placed {
    pub rec: crate::flat::Rec,
    pub local: u32,
    /// The instruction it is a sub-instruction of (0 for local 0 itself).
    pub owner: u32,
    /// Whether it is one of its owner's decorations (they come before the children).
    pub is_deco: bool,
    /// Whether it is at the nesting limit (the definition being at depth 1): a debug
    /// decoration re-inserted on it would be too deep.
    pub at_limit: bool,
}

/// Every record of `d` in pre-order, placed (one sequential pass, an explicit stack).
pub(crate) fn placed_records<'a>(d: &'a DefView<'_>) -> impl Iterator<Item = Placed> + 'a {
    // Open subtrees: (local, end, decorations left).
    let mut stack: Vec<(u32, u32, u32)> = Vec::new();
    d.records().zip(0u32..).map(move |(rec, l)| {
        while stack.last().is_some_and(|&(_, end, _)| end <= l) {
            stack.pop();
        }
        let mut is_deco = false;
        let mut owner = 0;
        if let Some(top) = stack.last_mut() {
            owner = top.0;
            if top.2 > 0 {
                top.2 -= 1;
                is_deco = true;
            }
        }
        stack.push((l, rec.end, rec.n_decos));
        Placed {
            rec,
            local: l,
            owner,
            is_deco,
            at_limit: stack.len() as u32 >= irkit_core::MAX_NESTING,
        }
    })
}

/// Who decodes, for the place its errors name: `copy` names the definition
/// (`section definitions: definition 3: instruction 7: …`), `materialize` the whole module
/// (`materialize: definition 3, instruction 7: …`, `materialize: root archive, …`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    Copy,
    Materialize,
}

/// Builds the errors of one decoded archive (`index`: the definition, `None` for the root).
pub(crate) struct Place {
    pub file: Arc<str>,
    pub reader: Reader,
    pub index: Option<u32>,
}

impl Place {
    /// A malformed input at instruction `local` of the archive (or at the archive).
    pub(crate) fn err(&self, local: Option<u32>, msg: impl std::fmt::Display) -> ReadError {
        let (location, msg) = match (self.reader, self.index, local) {
            (Reader::Copy, Some(i), Some(l)) => {
                (Location::Definition(i), format!("instruction {l}: {msg}"))
            }
            (Reader::Copy, Some(i), None) => (Location::Definition(i), msg.to_string()),
            (_, Some(i), Some(l)) => (
                Location::Materialize,
                format!("definition {i}, instruction {l}: {msg}"),
            ),
            (_, None, Some(l)) => (
                Location::Materialize,
                format!("root archive, instruction {l}: {msg}"),
            ),
            (_, _, None) => (Location::Materialize, msg.to_string()),
        };
        ReadError::new(&self.file, location, ReadCause::Malformed(msg))
    }
}

impl<'v> DefCopier<'v> {
    /// Copies definition `d` (from [`ModuleView::def`], so already validated) into `dst`, as
    /// the already created instruction `target` (which must have the definition's opcode;
    /// where it sits in `dst`'s tree is up to the caller). Sets `target`'s payload, type and
    /// operands, and creates its decorations and children (recursively). References to the
    /// pool and to other definitions go through `map`; name hints and source locations are
    /// re-created from the debug section at their recorded positions when the copier was made
    /// with debug info. Errors name the file and the definition.
    pub fn copy<M: CopyMapper>(
        &self,
        d: DefView<'v>,
        dst: &mut Module,
        target: Inst,
        map: &mut M,
    ) -> Result<CopySummary, M::Error> {
        let file: Arc<str> = self.view.file().into();
        let Some(index) = d.index() else {
            return Err(ReadError::new(
                &file,
                Location::Section("root".into()),
                ReadCause::Malformed("the root archive is not a definition".into()),
            )
            .into());
        };
        self.decode(d, dst, target, map, &self.place(index))
    }

    /// Decodes archive `d` (a definition, or the root archive into `dst`'s root) as `target`:
    /// the one decoding path of [`DefCopier::copy`] and [`ModuleView::materialize`].
    pub(crate) fn decode<M: CopyMapper>(
        &self,
        d: DefView<'v>,
        dst: &mut Module,
        target: Inst,
        map: &mut M,
        place: &Place,
    ) -> Result<CopySummary, M::Error> {
        let bad = |local: Option<u32>, msg: &dyn std::fmt::Display| place.err(local, msg);
        if d.index().is_none()
            && (d.root().opcode() != Opcode::MODULE || d.root().subs().any(|(deco, _)| !deco))
        {
            return Err(bad(
                None,
                &"the root archive must hold the `module` instruction and only its decorations",
            )
            .into());
        }
        if dst.get(target).map(|t| t.opcode()) != Some(d.root().opcode()) {
            return Err(bad(
                None,
                &format_args!(
                    "copy target {target} is not a `{}` instruction",
                    d.root().opcode()
                ),
            )
            .into());
        }
        let n = d.len() as usize;
        // Local index -> destination instruction (`None`: a skipped decoration's subtree).
        let mut locals: Vec<Option<Inst>> = vec![None; n];
        // Decorations in pre-order: (owner local, the copy or `None` when skipped).
        let mut decos: Vec<(u32, Option<Inst>)> = Vec::new();
        let mut skip_until = 0u32;
        let mut summary = CopySummary::default();
        // Whether a local is at the nesting limit (the definition is at depth 1): a debug
        // decoration re-inserted on it would be too deep.
        let mut at_limit: Vec<bool> = vec![false; n];
        // What the second pass needs of each copied instruction, kept from this one so that
        // the body is read once.
        let mut refs: Vec<Pending> = Vec::with_capacity(n);
        for p in placed_records(&d) {
            let Placed {
                rec,
                local: l,
                owner,
                is_deco,
                ..
            } = p;
            if let Some(a) = at_limit.get_mut(l as usize) {
                *a = p.at_limit;
            }
            if l < skip_until {
                // Not copied, but it holds its place in its owner's decoration list, which
                // the owner's debug records count (spec/format.md §2.3).
                if is_deco {
                    decos.push((owner, None));
                }
                continue;
            }
            let payload = d.payload_of(&rec).to_payload();
            let inst = if l == 0 {
                if !payload.is_none() {
                    dst.set_payload(target, payload)
                        .map_err(|e| bad(Some(0), &e))?;
                }
                target
            } else {
                if is_deco && !map.keep_decoration(dst, owner, d.inst_with(l, rec))? {
                    decos.push((owner, None));
                    skip_until = rec.end;
                    continue;
                }
                let opcode = Opcode(rec.opcode);
                if is_deco {
                    let inst = dst
                        .new_inst(opcode, None, Vec::new(), payload)
                        .map_err(|e| bad(Some(l), &e))?;
                    decos.push((owner, Some(inst)));
                    inst
                } else {
                    let parent = locals.get(owner as usize).copied().flatten();
                    dst.append_new_child(parent.unwrap_or(target), opcode, payload)
                        .map_err(|e| bad(Some(l), &e))?
                }
            };
            if let Some(slot) = locals.get_mut(l as usize) {
                *slot = Some(inst);
            }
            refs.push(Pending {
                inst,
                local: l,
                ty: rec.ty,
                ops: rec.ops_start..rec.ops_end,
            });
            summary.insts += 1;
        }
        summary.insts +=
            self.attach_all_decorations(dst, &locals, &mut decos, &at_limit, d.index(), place)?;
        // Types and operands, now that every local exists (in local order, as the mapper
        // reaches what they name). A 3.0 body names each pool entry or definition through
        // its table of external references: each is mapped once, at its first use.
        let mut ops: Vec<Inst> = Vec::new();
        let compact = d.compact();
        let n = compact.as_ref().map_or(0, |c| c.locals());
        let mut external: Vec<Option<Inst>> =
            vec![None; compact.as_ref().map_or(0, |c| c.external_count() as usize)];
        // Reference `r` of local `l`.
        let mut resolve = |r: Ref, l: u32, dst: &mut Module| -> Result<Inst, M::Error> {
            match r {
                Ref::Local(x) => locals.get(x as usize).copied().flatten().ok_or_else(|| {
                    bad(
                        Some(l),
                        &format_args!("reference to local {x}, which is not copied"),
                    )
                    .into()
                }),
                Ref::Pool(p) => map.pool(dst, p),
                Ref::Def(x) => map.def(dst, x),
            }
        };
        // A copied local or an external reference mapped already: answered here.
        let known = |v: u32, external: &[Option<Inst>]| {
            let slot = if v < n {
                locals.get(v as usize)
            } else {
                external.get((v - n) as usize)
            };
            slot.copied().flatten()
        };
        for p in refs {
            let (l, inst) = (p.local, p.inst);
            ops.clear();
            let ty = if let Some(c) = &compact {
                let ty = match c.ty_index(l as usize) {
                    Some(v) if v < n || v - n < c.external_count() => match known(v, &external) {
                        Some(i) => Some(i),
                        None => Some(by_index(c, v, l, &mut external, dst, &mut resolve)?),
                    },
                    _ => None,
                };
                for v in c.operand_indices(p.ops.start, p.ops.end) {
                    ops.push(match known(v, &external) {
                        Some(i) => i,
                        None => by_index(c, v, l, &mut external, dst, &mut resolve)?,
                    });
                }
                ty
            } else {
                let ty = match Ref::decode(p.ty) {
                    Some(t) => Some(resolve(t, l, dst)?),
                    None => None,
                };
                for j in p.ops {
                    ops.push(resolve(d.operand(j).unwrap_or(Ref::Local(0)), l, dst)?);
                }
                ty
            };
            if ty.is_some() || !ops.is_empty() {
                dst.set_type_and_operands(inst, ty, &ops)
                    .map_err(|e| bad(Some(l), &e))?;
            }
        }
        Ok(summary)
    }

    /// Where the errors of definition `index`'s copy point.
    pub(crate) fn place(&self, index: u32) -> Place {
        Place {
            file: self.view.file().into(),
            reader: Reader::Copy,
            index: Some(index),
        }
    }

    /// The debug records of definition `index`: none for the root archive (`None`, whose
    /// decorations stay in it, spec/format.md §2.3) or without debug info.
    pub(crate) fn debug_records(&self, index: Option<u32>) -> DebugRecs<'v> {
        match (self.debug, index) {
            (Some(t), Some(index)) => t.entries.of_def(index),
            _ => DebugRecs::default(),
        }
    }

    /// The last step of a body's first pass, for the copy and the planned build alike: the
    /// body's decorations (`decos`, in pre-order) grouped by owner, a debug record on a local
    /// at the nesting limit (`at_limit`) refused, then both attached by
    /// [`DefCopier::attach_decorations`]. Returns how many debug decorations were created.
    pub(crate) fn attach_all_decorations(
        &self,
        dst: &mut impl Decorate,
        locals: &[Option<Inst>],
        decos: &mut [(u32, Option<Inst>)],
        at_limit: &[bool],
        index: Option<u32>,
        place: &Place,
    ) -> Result<u64, ReadError> {
        // Decorations of decorations (refused by the verifier, but representable) would
        // interleave owners: group by owner, keeping each owner's order.
        decos.sort_by_key(|&(owner, _)| owner);
        let dbg = self.debug_records(index);
        if let (Some(index), Some(r)) = (
            index,
            dbg.iter()
                .find(|r| at_limit.get(r.local as usize) == Some(&true)),
        ) {
            return Err(crate::validate::debug_too_deep(&place.file, index, r.local));
        }
        self.attach_decorations(dst, locals, decos, dbg, place)
    }

    /// Attaches the copied body decorations and the debug ones, merged by position: the one
    /// rule for debug records (`spec/format.md` §2.3). A record holds position `position` of
    /// its owner's full decoration list; the owner's body decorations (copied or not) fill
    /// the other positions, in order; a record past the end of the merged list (a gap) is
    /// refused. So the `m` records of an instruction with `n` body decorations must take
    /// positions below `m + n`, which `validate_all` checks up front. Returns how many debug
    /// decorations were created.
    pub(crate) fn attach_decorations(
        &self,
        dst: &mut impl Decorate,
        locals: &[Option<Inst>],
        decos: &[(u32, Option<Inst>)],
        dbg: DebugRecs<'_>,
        place: &Place,
    ) -> Result<u64, ReadError> {
        let debug_strings = self.debug.map(|t| t.strings);
        let mut created = 0;
        let (mut bi, mut di) = (0usize, 0usize);
        while bi < decos.len() || di < dbg.len() {
            // The next owner in pre-order (local index order) with anything to attach.
            let owner = match (decos.get(bi), dbg.get(di)) {
                (Some(&(a, _)), Some(r)) => a.min(r.local),
                (Some(&(a, _)), None) => a,
                (None, Some(r)) => r.local,
                (None, None) => break,
            };
            let owner_inst = locals.get(owner as usize).copied().flatten();
            let mut pos = 0u32;
            loop {
                let debug_here = dbg
                    .get(di)
                    .filter(|r| r.local == owner && r.position == pos);
                if let Some(r) = debug_here {
                    di += 1;
                    pos += 1;
                    if let Some(o) = owner_inst
                        && self.debug_decoration(dst, o, &r, debug_strings, place, owner)?
                    {
                        created += 1;
                    }
                    continue;
                }
                match decos.get(bi) {
                    Some(&(a, copy)) if a == owner => {
                        bi += 1;
                        pos += 1;
                        if let (Some(o), Some(c)) = (owner_inst, copy) {
                            dst.attach(o, c).map_err(|e| place.err(Some(owner), e))?;
                        }
                    }
                    _ => {
                        // A debug record left for this owner is past the end of its list.
                        if let Some(r) = dbg.get(di).filter(|r| r.local == owner) {
                            return Err(place.err(
                                None,
                                format_args!(
                                    "debug entry for instruction {owner} at decoration \
                                     position {}, but the decoration list ends at {pos}",
                                    r.position
                                ),
                            ));
                        }
                        break;
                    }
                }
            }
        }
        Ok(created)
    }

    /// Re-creates the decoration of debug record `r` on `owner` (local `local`); `false` for a
    /// kind from a newer minor version, which is skipped (it held its place in the list).
    fn debug_decoration(
        &self,
        dst: &mut impl Decorate,
        owner: Inst,
        r: &DebugEntry,
        strings: Option<crate::flat::FileStrings<'_>>,
        place: &Place,
        local: u32,
    ) -> Result<bool, ReadError> {
        let opcode = match r.kind {
            DEBUG_NAME => Opcode::NAME_HINT,
            DEBUG_LOC => Opcode::LOC,
            _ => return Ok(false),
        };
        let text = strings.and_then(|s| s.str_at(r.text)).unwrap_or("");
        let loc = (r.kind == DEBUG_LOC).then_some((r.line, r.col));
        dst.debug(owner, opcode, loc, text, place, local)?;
        Ok(true)
    }
}
