//! Inlining scopes (spec/ir.md, "Inlining scopes"): an `inline_scope` decoration of a function
//! stands for one inlined copy of another function's body in it; the `loc` of each instruction
//! that copy brought names it as a third operand. A11: a `loc`'s scope is an `inline_scope` of
//! the function whose body holds the located instruction. A12: an `inline_scope` decorates a
//! `func`; its one optional operand, its parent, is an `inline_scope` of the same function
//! earlier in its decoration list (so every chain ends); its decorations are at most one
//! `loc` with two operands, its call site, and a name (`name_hint`, as any instruction).

use crate::{Inst, Opcode};

use super::Cx;

impl Cx<'_> {
    /// A11 for `loc` decoration `dec` of `owner`, whose third operand is `scope`.
    pub(super) fn check_loc_scope(&mut self, dec: Inst, owner: Inst, scope: Inst) {
        let func = self.func_of.get(owner.idx()).copied().flatten();
        let in_body = self.block_of.get(owner.idx()).copied().flatten().is_some();
        let good = self
            .live(scope)
            .is_some_and(|s| s.opcode == Opcode::INLINE_SCOPE)
            && in_body
            && func.is_some()
            && self.tparent.get(scope.idx()).copied().flatten() == func;
        if !good {
            let msg = format!(
                "`loc` operand 2 (scope) must be an `inline_scope` of the function whose body holds the instruction, found {} ({})",
                self.vname(scope),
                self.opname(scope)
            );
            self.err(dec, msg);
        }
    }

    /// A12 for `inline_scope` decoration `dec` of `owner`.
    pub(super) fn check_inline_scope(&mut self, dec: Inst, owner: Inst) {
        let Some(d) = self.live(dec) else { return };
        if self.live(owner).map(|o| o.opcode) != Some(Opcode::FUNC) {
            let msg = format!(
                "`inline_scope` is only allowed on a `func`, not on {}",
                self.opname(owner)
            );
            self.err(dec, msg);
            return;
        }
        if let Some(&parent) = d.operands.first() {
            let at = |x: Inst| self.pos.get(x.idx()).copied().unwrap_or(u32::MAX);
            let good = self
                .live(parent)
                .is_some_and(|p| p.opcode == Opcode::INLINE_SCOPE)
                && self.tparent.get(parent.idx()).copied().flatten() == Some(owner)
                && at(parent) < at(dec);
            if !good {
                let msg = format!(
                    "`inline_scope` operand 0 (parent) must be an `inline_scope` earlier in the same function's decorations, found {} ({})",
                    self.vname(parent),
                    self.opname(parent)
                );
                self.err(dec, msg);
            }
        }
        let (mut locs, mut other) = (0, false);
        for &x in d.decorations() {
            match self.live(x).map(|l| (l.opcode, l.operands.len())) {
                Some((Opcode::LOC, 2)) => locs += 1,
                Some((Opcode::NAME_HINT, _)) => {}
                _ => other = true,
            }
        }
        if locs > 1 || other {
            self.err(
                dec,
                "an `inline_scope` carries no decorations but one `loc` with two operands (its call site) and a name",
            );
        }
    }
}
