//! The verifier: checks every structural and typing rule of the IR on any module, however it
//! was built (the rules are those of `spec/ir.md`).
//!
//! [`verify`] never panics, never loops forever and never recurses deeply, whatever the module
//! holds: dangling handles, cycles, opaque opcodes and wrong arities are reported as errors.
//! It runs in passes over shared per-slot tables:
//!
//! 1. [`handles`](self): walks the tree (iteratively) and the pool, recording the pre-order and
//!    each instruction's function, block and position; then checks that every handle an
//!    instruction holds is in range and live (the pool's serially, the tree's per top-level
//!    definition, on every core); later passes only look closely at instructions whose handles
//!    are all good. Then the nesting limit
//!    ([`check_nesting`](crate::limits::check_nesting)): a module over it gets that one error.
//! 2. registry checks (opcode known and not reserved, arity, type presence, payload kind): the
//!    pool's serially, the tree's in the same parallel pass as its handles;
//! 3. the pool (uniqueness, scope, dependency order, which also rules out cycles);
//! 4. type well-formedness, computed in pool order (so a nest 100k deep costs no recursion);
//! 5. constants, then generic parameters and `specialize` values (`generics`);
//! 6. the tree in pre-order: structure, per-opcode typing, decorations, dominance. Passes
//!    1–5 fill the tables; this one only reads them, so each top-level definition is checked
//!    on its own, on every core (rayon), by a checker borrowing the tables; then export
//!    names, which are unique across definitions, are checked in tree order.
//!
//! The parallel parts of passes 1 and 2 record their errors as a serial run would: pass 1's
//! (the pool's, the tree's in tree order, then hoistables outside the pool) before pass 2's,
//! all counted against one bound of [`MAX_ERRORS`] before passes 3–5 run.
//!
//! Errors are returned in tree pre-order (pool entries first), at most [`MAX_ERRORS`], the
//! same on any number of threads.

use std::borrow::Cow;
use std::fmt;

use rayon::prelude::*;

use crate::{Inst, Module, Opcode};

mod calls;
mod cfg;
mod consts;
mod decorations;
mod existentials;
mod generics;
mod handles;
mod hoist;
mod insts;
mod memories;
mod objects;
mod procs;
mod scopes;
mod structure;
mod tail_calls;
mod types;
mod vectors;

#[cfg(test)]
mod tests;

/// The most errors [`verify`] reports for one module.
pub const MAX_ERRORS: usize = 1000;

/// One problem found by the verifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// The function the problem is in, if any.
    pub func: Option<Inst>,
    /// The block the problem is in, if any.
    pub block: Option<Inst>,
    /// The instruction the problem is about.
    pub inst: Inst,
    /// What is wrong, in one line.
    pub message: String,
    /// Where `inst` is, in the style of [`crate::place`], as of verification time (for
    /// `Display`).
    place: Option<String>,
}

impl VerifyError {
    /// An error about `inst` (in `func` and `block`, if given), without name hints.
    pub fn new(
        func: Option<Inst>,
        block: Option<Inst>,
        inst: Inst,
        message: impl Into<String>,
    ) -> VerifyError {
        VerifyError {
            func,
            block,
            inst,
            message: message.into(),
            place: None,
        }
    }
}

/// One line: `in <place>: message`, the place as [`crate::place::describe`] says it (`in
/// @f ^entry, instruction 2 (iadd %x): …`); `in #<arena index>` for an error made without a
/// module ([`VerifyError::new`]).
impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Some(p) => write!(f, "in {p}: {}", self.message),
            None => write!(f, "in #{}: {}", self.inst.index(), self.message),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Verifies a module: `Ok(())` if it is well formed, otherwise every problem found (at most
/// [`MAX_ERRORS`]), in tree pre-order (pool entries first).
pub fn verify(m: &Module) -> Result<(), Vec<VerifyError>> {
    verify_with(m, Nesting::Check)
}

/// Whether [`verify_with`] checks the nesting limit itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// Check it first (what [`verify`] does): a module over the limit gets that one error.
    Check,
    /// The caller has established that `m` is within the limit (every value and definition
    /// came from a reader that enforces it, and nothing deepened them since, as after a link
    /// that only copied: spec/linking.md §5). Over the limit, nothing is unsafe (every pass is
    /// iterative), but the errors are those of a module that was not checked.
    Established,
}

/// [`verify`], skipping the nesting check when the caller has `established` it.
pub fn verify_with(m: &Module, nesting: Nesting) -> Result<(), Vec<VerifyError>> {
    let mut cx = Cx::new(m);
    cx.run(nesting);
    if cx.errors.is_empty() {
        Ok(())
    } else {
        let mut errs = std::mem::take(&mut cx.errors);
        errs.sort_by_key(|e| e.0);
        errs.truncate(MAX_ERRORS);
        Err(errs.into_iter().map(|e| e.1).collect())
    }
}

/// A value type as the verifier sees it: a type instruction, or `None` for `ptr` when the
/// module has no `ptr` type interned (the address of a definition).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct VTy(Option<Inst>);

/// What pass 6 found in one part of the tree: errors, and well-placed `export` decorations
/// with their owners.
type Checked = (Vec<(u64, VerifyError)>, Vec<(Inst, Inst)>);

/// What passes 1 and 2 found in one part of the tree: per instruction, whether its handles are
/// good (bit 0) and its registry checks passed (`REG_OK`); pass 1's errors, and pass 2's.
struct Shape {
    flags: Vec<u8>,
    handle_errors: Vec<(u64, VerifyError)>,
    registry_errors: Vec<(u64, VerifyError)>,
}

/// The bit of [`Shape::flags`] saying the registry checks passed.
const REG_OK: u8 = 2;

/// An error about `inst` of `m`, in `func` and `block`.
fn error_at(
    m: &Module,
    inst: Inst,
    func: Option<Inst>,
    block: Option<Inst>,
    message: String,
) -> VerifyError {
    VerifyError {
        func,
        block,
        inst,
        message,
        place: Some(crate::place::describe(m, inst)),
    }
}

/// What a slot is, as a type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// Not a type at all.
    NotType,
    /// A malformed type (already reported), or a type that could not be checked.
    Bad,
    /// A value type: int, float, ptr, array, struct, named_struct.
    Value,
    /// `void`.
    Void,
    /// A `fn` type.
    Fn,
}

/// A position in the pool, held as `position + 1`: a table of `Option<PoolPos>` takes four
/// bytes a slot, not eight (a large module's tables are tens of megabytes).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) struct PoolPos(std::num::NonZeroU32);

impl PoolPos {
    /// Position `p` (`None` for `u32::MAX`, which no pool of an arena reaches).
    fn new(p: u32) -> Option<PoolPos> {
        p.checked_add(1)
            .and_then(std::num::NonZeroU32::new)
            .map(PoolPos)
    }

    /// The position.
    fn get(self) -> u32 {
        self.0.get() - 1
    }
}

/// Dominator-tree numbers of a block that has none.
const NO_DOM: (u32, u32) = (u32::MAX, 0);

/// A per-slot table: owned while passes 1–5 fill it, borrowed by the checkers of pass 6.
type Table<'a, T> = Cow<'a, [T]>;

/// The dominator tree of the function being checked (pass 6 checks one function at a time,
/// its blocks after it): per child position of the function, its block's (pre, post)
/// numbers, or `NO_DOM` (not a block, or unreachable).
#[derive(Default)]
struct Doms {
    func: Option<Inst>,
    num: Vec<(u32, u32)>,
}

/// The verifier's state: the module, the errors so far, and per-slot tables.
pub(crate) struct Cx<'m> {
    m: &'m Module,
    errors: Vec<(u64, VerifyError)>,
    /// Sort key per slot: pool position, then tree pre-order position; `u32::MAX` if neither
    /// (an arena has fewer slots; 4 bytes a slot, not 8, is what a large module notices).
    key: Table<'m, u32>,
    /// Reached (tree or pool) and every handle it holds is in range and live.
    ok: Table<'m, bool>,
    /// Registry checks passed (known, not reserved, arity, type presence, payload kind).
    reg_ok: Table<'m, bool>,
    /// In the tree (reached from the root through child and decoration lists).
    in_tree: Table<'m, bool>,
    /// Position in the pool, if a pool entry.
    pool_pos: Table<'m, Option<PoolPos>>,
    /// Position in the parent's child list (tree instructions).
    pos: Table<'m, u32>,
    /// Nearest enclosing `func` in the tree (the func itself for a func).
    func_of: Table<'m, Option<Inst>>,
    /// Nearest enclosing `block` in the tree (the block itself for a block).
    block_of: Table<'m, Option<Inst>>,
    /// The parent through which the walk reached a tree instruction.
    tparent: Table<'m, Option<Inst>>,
    /// Type kind per slot.
    kind: Table<'m, Kind>,
    /// The tree in pre-order.
    tree: Table<'m, Inst>,
    /// The module's `ptr` type, if interned.
    ptr: Option<Inst>,
    /// The dominator tree of the function being checked.
    doms: Doms,
    /// `export` decorations found well placed, with their owner, in tree order: their names
    /// are checked for uniqueness once every definition has been checked.
    exports: Vec<(Inst, Inst)>,
}

impl<'m> Cx<'m> {
    fn new(m: &'m Module) -> Cx<'m> {
        let n = m.insts.len();
        // The tables that are not all zero bytes are filled on two cores (a large module's
        // tables take tens of megabytes).
        let ((key, pool_pos, kind), (func_of, block_of, tparent)) = rayon::join(
            || (vec![u32::MAX; n], vec![None; n], vec![Kind::NotType; n]),
            || (vec![None; n], vec![None; n], vec![None; n]),
        );
        Cx {
            m,
            errors: Vec::new(),
            key: Cow::Owned(key),
            ok: Cow::Owned(vec![false; n]),
            reg_ok: Cow::Owned(vec![false; n]),
            in_tree: Cow::Owned(vec![false; n]),
            pool_pos: Cow::Owned(pool_pos),
            pos: Cow::Owned(vec![0; n]),
            func_of: Cow::Owned(func_of),
            block_of: Cow::Owned(block_of),
            tparent: Cow::Owned(tparent),
            kind: Cow::Owned(kind),
            tree: Cow::Owned(Vec::with_capacity(n)),
            ptr: None,
            doms: Doms::default(),
            exports: Vec::new(),
        }
    }

    /// A checker for pass 6, reading this one's tables (filled by passes 1–5).
    fn checker(&self) -> Cx<'_> {
        Cx {
            m: self.m,
            errors: Vec::new(),
            key: Cow::Borrowed(&self.key),
            ok: Cow::Borrowed(&self.ok),
            reg_ok: Cow::Borrowed(&self.reg_ok),
            in_tree: Cow::Borrowed(&self.in_tree),
            pool_pos: Cow::Borrowed(&self.pool_pos),
            pos: Cow::Borrowed(&self.pos),
            func_of: Cow::Borrowed(&self.func_of),
            block_of: Cow::Borrowed(&self.block_of),
            tparent: Cow::Borrowed(&self.tparent),
            kind: Cow::Borrowed(&self.kind),
            tree: Cow::Borrowed(&[]),
            ptr: self.ptr,
            doms: Doms::default(),
            exports: Vec::new(),
        }
    }

    /// Pass 6 over `insts` (a slice of the tree in pre-order): its errors and well-placed
    /// exports.
    fn check_segment(&self, insts: &[Inst]) -> Checked {
        let mut cx = self.checker();
        for &i in insts {
            if cx.errors.len() >= MAX_ERRORS {
                break;
            }
            cx.check_tree_inst(i);
        }
        // Pass 6 reads the tables only: a write would have copied one for this checker alone.
        debug_assert!(
            [&cx.ok, &cx.reg_ok, &cx.in_tree]
                .iter()
                .all(|t| matches!(t, Cow::Borrowed(_)))
                && matches!(cx.kind, Cow::Borrowed(_))
                && matches!(cx.key, Cow::Borrowed(_))
                && matches!(cx.pool_pos, Cow::Borrowed(_))
                && matches!(cx.pos, Cow::Borrowed(_))
                && [&cx.func_of, &cx.block_of, &cx.tparent]
                    .iter()
                    .all(|t| matches!(t, Cow::Borrowed(_)))
        );
        (cx.errors, cx.exports)
    }

    /// Where each top-level definition's subtree starts in the tree (pre-order: the root and
    /// its decorations come first, then each child of the root with its whole subtree).
    fn segment_starts(&self) -> Vec<usize> {
        let root = self.m.root();
        let first = self.key.get(root.idx()).copied().unwrap_or(0);
        let mut starts: Vec<usize> = self
            .live(root)
            .map_or(&[][..], |d| d.children())
            .iter()
            .filter(|c| self.tparent.get(c.idx()).copied().flatten() == Some(root))
            .filter_map(|c| self.key.get(c.idx()).copied())
            .filter(|&k| k != u32::MAX && k >= first)
            .map(|k| (k - first) as usize)
            .filter(|&k| k > 0 && k < self.tree.len())
            .collect();
        starts.sort_unstable();
        starts.dedup();
        starts
    }

    /// The tree split at the start of each top-level definition: the first segment is the
    /// root and its decorations, then one segment per definition (see [`Cx::segment_starts`]).
    fn segment_bounds(&self) -> Vec<usize> {
        let starts = self.segment_starts();
        let mut bounds = Vec::with_capacity(starts.len() + 2);
        bounds.push(0);
        bounds.extend(starts);
        bounds.push(self.tree.len());
        bounds
    }

    /// Passes 1 and 2 over `insts` (a slice of the tree in pre-order): the handles each
    /// instruction holds, then the registry checks of those whose handles are good.
    fn check_segment_shape(&self, insts: &[Inst]) -> Shape {
        let mut cx = self.checker();
        let mut flags: Vec<u8> = insts
            .iter()
            .map(|&i| u8::from(cx.check_held_handles(i)))
            .collect();
        let handle_errors = std::mem::take(&mut cx.errors);
        for (&i, f) in insts.iter().zip(&mut flags) {
            if *f != 0 && cx.check_registry(i) {
                *f |= REG_OK;
            }
        }
        Shape {
            flags,
            handle_errors,
            registry_errors: cx.errors,
        }
    }

    /// Records errors found by a checker as if this verifier had found them (at most
    /// [`MAX_ERRORS`] in all).
    fn adopt(&mut self, errors: Vec<(u64, VerifyError)>) {
        let room = MAX_ERRORS.saturating_sub(self.errors.len());
        self.errors.extend(errors.into_iter().take(room));
    }

    fn run(&mut self, nesting: Nesting) {
        if !self.check_handles() {
            return;
        }
        // The tree's part of passes 1 and 2, per definition on every core. Their errors are
        // recorded in the order (and under the bound) of a serial run: pass 1's (the pool's,
        // then the tree's, then hoistables outside the pool), then pass 2's.
        let bounds = self.segment_bounds();
        let shapes: Vec<Shape> = bounds
            .par_windows(2)
            .map(|w| self.check_segment_shape(&self.tree[w[0]..w[1]]))
            .collect();
        let tree = std::mem::take(&mut self.tree).into_owned();
        let mut ok = std::mem::take(&mut self.ok).into_owned();
        let mut reg_ok = std::mem::take(&mut self.reg_ok).into_owned();
        let mut registry_errors = Vec::with_capacity(shapes.len());
        for (w, shape) in bounds.windows(2).zip(shapes) {
            for (&i, &f) in tree[w[0]..w[1]].iter().zip(&shape.flags) {
                ok[i.idx()] = f != 0;
                reg_ok[i.idx()] = f & REG_OK != 0;
            }
            self.adopt(shape.handle_errors);
            registry_errors.push(shape.registry_errors);
        }
        self.tree = Cow::Owned(tree);
        self.ok = Cow::Owned(ok);
        self.reg_ok = Cow::Owned(reg_ok);
        let first_kinds = self.check_stray_hoistables();
        // Over the nesting limit nothing else is checked: every later pass may then rely on
        // the depth being bounded.
        if nesting == Nesting::Check
            && let Err(n) = crate::limits::check_nesting(self.m)
        {
            self.err(n.inst(), n.to_string());
            return;
        }
        let m = self.m;
        for &h in &m.pool {
            if self.ok(h) {
                let ok = self.check_registry(h);
                self.reg_ok.to_mut()[h.idx()] = ok;
            }
        }
        for errors in registry_errors {
            self.adopt(errors);
        }
        self.check_pool();
        self.compute_kinds(first_kinds);
        self.check_constants();
        self.check_generic_pool();
        // Pass 6: the root and its decorations, then every definition on its own.
        let segments: Vec<Checked> = bounds
            .par_windows(2)
            .map(|w| self.check_segment(&self.tree[w[0]..w[1]]))
            .collect();
        let mut exports = Vec::new();
        for (errors, found) in segments {
            self.errors.extend(errors);
            exports.extend(found);
        }
        self.check_export_names(&exports);
    }

    /// Checks one tree instruction: its structure as a parent, its typing, its decorations and
    /// the dominance of its operands.
    fn check_tree_inst(&mut self, i: Inst) {
        if !self.ok(i) {
            return;
        }
        let Some(op) = self.opc(i) else { return };
        match op {
            Opcode::MODULE => self.check_module_children(i),
            Opcode::FUNC => {
                self.compute_doms(i);
                self.check_func(i);
            }
            Opcode::BLOCK => self.check_block(i),
            Opcode::GENERIC => self.check_generic(i),
            Opcode::PROC => self.check_proc(i),
            Opcode::INTERFACE => self.check_interface(i),
            Opcode::INTERFACE_REQ => self.check_interface_req(i),
            Opcode::CLASS | Opcode::TRAIT | Opcode::OBJECT => self.check_object_def(i, op),
            _ => {}
        }
        if self.live(i).is_some_and(|d| !d.decorations().is_empty()) {
            self.check_owner_decorations(i);
        }
        if !self.reg_ok[i.idx()] {
            return;
        }
        let flags = op.flags();
        if flags.contains(crate::opcode::Flags::DECORATION) {
            self.check_decoration(i);
        } else if op == Opcode::WITNESS_TABLE {
            self.check_witness_table(i);
        } else if matches!(op, Opcode::GLOBAL_VAR | Opcode::GLOBAL_CONST) {
            self.check_global(i);
        } else if op == Opcode::PARAM {
            self.result(i);
        } else if !flags.contains(crate::opcode::Flags::DEFINITION)
            && op != Opcode::MODULE
            && op != Opcode::BLOCK
        {
            self.check_typed(i);
        }
        self.check_dominance(i);
    }

    // ---- error reporting ----------------------------------------------------------------

    /// Records an error about `inst`.
    fn err(&mut self, inst: Inst, message: impl Into<String>) {
        if self.errors.len() >= MAX_ERRORS {
            return;
        }
        let func = self.func_of.get(inst.idx()).copied().flatten();
        let block = self.block_of.get(inst.idx()).copied().flatten();
        let key = match self.key.get(inst.idx()) {
            Some(&k) if k != u32::MAX => u64::from(k),
            _ => u64::MAX,
        };
        // An instruction's place is described once for a run of its errors (a `switch` with
        // many duplicate cases): describing it walks its block and function.
        let e = match self.errors.last() {
            Some((_, last)) if last.inst == inst => VerifyError {
                func,
                block,
                inst,
                message: message.into(),
                place: last.place.clone(),
            },
            _ => error_at(self.m, inst, func, block, message.into()),
        };
        self.errors.push((key, e));
    }

    // ---- safe accessors -----------------------------------------------------------------

    /// Whether `i` was reached and all its handles are good.
    fn ok(&self, i: Inst) -> bool {
        self.ok.get(i.idx()).copied().unwrap_or(false)
    }

    /// The data of a live instruction.
    fn live(&self, i: Inst) -> Option<&'m crate::InstData> {
        self.m.insts.get(i.idx()).filter(|d| !d.dead)
    }

    /// The opcode of a live instruction.
    fn opc(&self, i: Inst) -> Option<Opcode> {
        self.live(i).map(|d| d.opcode)
    }

    /// The type kind of `t` (`Bad` for anything out of range).
    fn kind(&self, t: Inst) -> Kind {
        self.kind.get(t.idx()).copied().unwrap_or(Kind::Bad)
    }

    /// The name hint of `i`, read defensively.
    fn name_of(&self, i: Inst) -> Option<&'m str> {
        let d = self.live(i)?;
        d.decorations().iter().find_map(|&dec| {
            let dd = self.live(dec)?;
            if dd.opcode == Opcode::NAME_HINT {
                dd.payload.as_str().filter(|s| !s.is_empty())
            } else {
                None
            }
        })
    }

    /// How a message names an instruction: `@f`, `^b`, `%x`; without a name hint `^bb2` for a block
    /// (its position), else `inst 7`.
    fn vname(&self, i: Inst) -> String {
        let sigil = match self.opc(i) {
            Some(op) if op.is_definition() => "@",
            Some(Opcode::BLOCK) => "^",
            _ => "%",
        };
        match self.name_of(i) {
            Some(n) => format!("{sigil}{n}"),
            // An unnamed block as every message and back end spells it: `^bb<n>`, its position
            // in its function (crate::place).
            None if sigil == "^" => match self.live(i).and_then(|d| d.parent()) {
                Some(f) => crate::place::block_label(self.m, f, i),
                None => format!("inst {}", i.index()),
            },
            None => format!("inst {}", i.index()),
        }
    }

    /// The opcode of `i` in backquotes, for messages (`#N` when opaque, `removed` when dead).
    fn opname(&self, i: Inst) -> String {
        match self.opc(i) {
            Some(op) => format!("`{op}`"),
            None => "a removed instruction".to_owned(),
        }
    }

    /// The leading `param` children of a block.
    fn params_of(&self, b: Inst) -> &'m [Inst] {
        match self.live(b) {
            Some(d) => {
                let n = d
                    .children()
                    .iter()
                    .take_while(|&&c| self.opc(c) == Some(Opcode::PARAM))
                    .count();
                &d.children()[..n]
            }
            None => &[],
        }
    }

    /// The first block of a function.
    fn entry_of(&self, f: Inst) -> Option<Inst> {
        self.live(f)?
            .children()
            .iter()
            .copied()
            .find(|&c| self.opc(c) == Some(Opcode::BLOCK))
    }

    /// Whether `d` is a top-level definition of the tree.
    fn is_top_def(&self, d: Inst) -> bool {
        self.opc(d).is_some_and(|op| op.is_definition())
            && self.in_tree.get(d.idx()).copied().unwrap_or(false)
            && self.tparent.get(d.idx()).copied().flatten() == Some(self.m.root())
    }
}

use crate::message::count as plural;
