//! Tail calls (spec/ir.md, "Tail calls"): `tail_call` and `tail_call_indirect` end a block by
//! calling a function whose result becomes the caller's. Their arguments are checked as a
//! `call`'s are; T1: the callee of a `tail_call` is a `func` or a `proc`; T2: the callee's return type is
//! the caller's (both `void`, or the same value type). That they end their block is the
//! terminator flag's rule (structure.rs).

use crate::{Inst, Opcode};

use super::{Cx, Kind};

impl Cx<'_> {
    /// `tail_call @f, args`: T1, the arguments, T2.
    pub(super) fn check_tail_call(&mut self, i: Inst) {
        let Some(&callee) = self.live(i).and_then(|d| d.operands.first()) else {
            return;
        };
        let Some(cd) = self.live(callee) else { return };
        if cd.opcode != Opcode::FUNC && cd.opcode != Opcode::PROC {
            let msg = format!(
                "operand 0 (the callee) of `tail_call` must be a `func` or a `proc`, found {} ({})",
                self.vname(callee),
                self.opname(callee)
            );
            self.err(i, msg);
            return;
        }
        let Some((ret, params)) = cd.ty.and_then(|t| self.sig(t)) else {
            return;
        };
        self.check_args(i, 1, params, Some(callee));
        self.check_tail_result(i, ret);
    }

    /// `tail_call_indirect S, %p, args`: the signature, the pointer, the arguments, T2.
    pub(super) fn check_tail_call_indirect(&mut self, i: Inst) {
        if let Some(ret) = self.check_indirect_callee(i) {
            self.check_tail_result(i, ret);
        }
    }

    /// T2: the callee's return type `ret` against the return type of the function holding
    /// tail call `i`.
    fn check_tail_result(&mut self, i: Inst, ret: Inst) {
        let Some(f) = self.func_of.get(i.idx()).copied().flatten() else {
            return;
        };
        let Some((own, _)) = self.live(f).and_then(|d| d.ty).and_then(|t| self.sig(t)) else {
            return;
        };
        let same = match (self.kind(ret), self.kind(own)) {
            (Kind::Void, Kind::Void) => true,
            (Kind::Value, Kind::Value) => self.as_value_type(ret) == self.as_value_type(own),
            // A malformed type is reported where it is defined.
            (Kind::Bad, _) | (_, Kind::Bad) => true,
            _ => false,
        };
        if !same {
            let msg = format!(
                "{}: the callee returns {}, the caller {} returns {}",
                self.opname(i),
                self.ty_str(ret),
                self.vname(f),
                self.ty_str(own)
            );
            self.err(i, msg);
        }
    }
}
