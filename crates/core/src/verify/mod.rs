//! The verifier: checks every structural and typing rule of the IR on any module, however it
//! was built (the rules are those of `spec/ir.md`).
//!
//! [`verify`] never panics, never loops forever and never recurses deeply, whatever the module
//! holds: dangling handles, cycles, opaque opcodes and wrong arities are reported as errors.
//! It runs in passes over shared per-slot tables:
//!
//! 1. [`handles`](self): walks the tree (iteratively) and the pool, checking that every handle
//!    an instruction holds is in range and live; later passes only look closely at
//!    instructions whose handles are all good. Then the nesting limit
//!    ([`check_nesting`](crate::limits::check_nesting)): a module over it gets that one error.
//! 2. registry checks (opcode known and not reserved, arity, type presence, payload kind);
//! 3. the pool (uniqueness, scope, dependency order, which also rules out cycles);
//! 4. type well-formedness, computed in pool order (so a nest 100k deep costs no recursion);
//! 5. constants, then generic parameters and `specialize` values (`generics`);
//! 6. the tree in pre-order: structure, per-opcode typing, decorations, dominance.
//!
//! Errors are returned in tree pre-order (pool entries first), at most [`MAX_ERRORS`].

use std::collections::HashMap;
use std::fmt;

use crate::{Inst, Module, Opcode};

mod calls;
mod cfg;
mod consts;
mod decorations;
mod generics;
mod handles;
mod hoist;
mod insts;
mod procs;
mod structure;
mod types;

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
    let mut cx = Cx::new(m);
    cx.run();
    if cx.errors.is_empty() {
        Ok(())
    } else {
        let mut errs = std::mem::take(&mut cx.errors);
        errs.sort_by_key(|e| e.0);
        Err(errs.into_iter().map(|e| e.1).collect())
    }
}

/// A value type as the verifier sees it: a type instruction, or `None` for `ptr` when the
/// module has no `ptr` type interned (the address of a definition).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct VTy(Option<Inst>);

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

/// Dominator-tree numbers of a slot that has none.
const NO_DOM: (u32, u32) = (u32::MAX, 0);

/// The verifier's state: the module, the errors so far, and per-slot tables.
pub(crate) struct Cx<'m> {
    m: &'m Module,
    errors: Vec<(u64, VerifyError)>,
    /// Sort key per slot: pool position, then tree pre-order position; `u64::MAX` if neither.
    key: Vec<u64>,
    /// Reached (tree or pool) and every handle it holds is in range and live.
    ok: Vec<bool>,
    /// Registry checks passed (known, not reserved, arity, type presence, payload kind).
    reg_ok: Vec<bool>,
    /// In the tree (reached from the root through child and decoration lists).
    in_tree: Vec<bool>,
    /// Position in the pool, if a pool entry.
    pool_pos: Vec<Option<u32>>,
    /// Position in the parent's child list (tree instructions).
    pos: Vec<u32>,
    /// Nearest enclosing `func` in the tree (the func itself for a func).
    func_of: Vec<Option<Inst>>,
    /// Nearest enclosing `block` in the tree (the block itself for a block).
    block_of: Vec<Option<Inst>>,
    /// The parent through which the walk reached a tree instruction.
    tparent: Vec<Option<Inst>>,
    /// Type kind per slot.
    kind: Vec<Kind>,
    /// The tree in pre-order.
    tree: Vec<Inst>,
    /// The module's `ptr` type, if interned.
    ptr: Option<Inst>,
    /// Per block slot: its (pre, post) numbers in its function's dominator tree, or
    /// `NO_DOM` (not a block of a function whose dominators were computed, or unreachable).
    dom_num: Vec<(u32, u32)>,
    /// Scratch for `compute_doms`: a block's position in its function's block list.
    block_ix: Vec<u32>,
    /// Export names seen so far, with their definition.
    exports: HashMap<String, Inst>,
}

impl<'m> Cx<'m> {
    fn new(m: &'m Module) -> Cx<'m> {
        let n = m.insts.len();
        Cx {
            m,
            errors: Vec::new(),
            key: vec![u64::MAX; n],
            ok: vec![false; n],
            reg_ok: vec![false; n],
            in_tree: vec![false; n],
            pool_pos: vec![None; n],
            pos: vec![0; n],
            func_of: vec![None; n],
            block_of: vec![None; n],
            tparent: vec![None; n],
            kind: vec![Kind::NotType; n],
            tree: Vec::new(),
            ptr: None,
            dom_num: vec![NO_DOM; n],
            block_ix: vec![u32::MAX; n],
            exports: HashMap::new(),
        }
    }

    fn run(&mut self) {
        if !self.check_handles() {
            return;
        }
        // Over the nesting limit nothing else is checked: every later pass may then rely on
        // the depth being bounded.
        if let Err(n) = crate::limits::check_nesting(self.m) {
            self.err(n.inst(), n.to_string());
            return;
        }
        let pool: Vec<Inst> = self
            .m
            .pool
            .iter()
            .copied()
            .filter(|&h| self.ok(h))
            .collect();
        for &h in &pool {
            let ok = self.check_registry(h);
            self.reg_ok[h.idx()] = ok;
        }
        let tree = std::mem::take(&mut self.tree);
        for &i in &tree {
            if self.ok(i) {
                let ok = self.check_registry(i);
                self.reg_ok[i.idx()] = ok;
            }
        }
        self.check_pool();
        self.compute_kinds();
        self.check_constants();
        self.check_generic_pool();
        for &i in &tree {
            if self.errors.len() >= MAX_ERRORS {
                break;
            }
            self.check_tree_inst(i);
        }
        self.tree = tree;
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
            _ => {}
        }
        self.check_owner_decorations(i);
        if !self.reg_ok[i.idx()] {
            return;
        }
        if op.is_decoration() {
            self.check_decoration(i);
        } else if op == Opcode::WITNESS_TABLE {
            self.check_witness_table(i);
        } else if matches!(op, Opcode::GLOBAL_VAR | Opcode::GLOBAL_CONST) {
            self.check_global(i);
        } else if op == Opcode::PARAM {
            self.result(i);
        } else if !op.is_definition() && op != Opcode::MODULE && op != Opcode::BLOCK {
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
        let key = self.key.get(inst.idx()).copied().unwrap_or(u64::MAX);
        let e = VerifyError {
            func,
            block,
            inst,
            message: message.into(),
            place: Some(crate::place::describe(self.m, inst)),
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
        d.decorations.iter().find_map(|&dec| {
            let dd = self.live(dec)?;
            if dd.opcode == Opcode::NAME_HINT {
                dd.payload.as_str().filter(|s| !s.is_empty())
            } else {
                None
            }
        })
    }

    /// How a message names an instruction: `@f`, `^b`, `%x`, or `inst 7` without a name hint.
    fn vname(&self, i: Inst) -> String {
        let sigil = match self.opc(i) {
            Some(op) if op.is_definition() => "@",
            Some(Opcode::BLOCK) => "^",
            _ => "%",
        };
        match self.name_of(i) {
            Some(n) => format!("{sigil}{n}"),
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
                    .children
                    .iter()
                    .take_while(|&&c| self.opc(c) == Some(Opcode::PARAM))
                    .count();
                &d.children[..n]
            }
            None => &[],
        }
    }

    /// The first block of a function.
    fn entry_of(&self, f: Inst) -> Option<Inst> {
        self.live(f)?
            .children
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
