//! Flags (`i1` values: *defined*, *updated*, *cued*, a passive condition) folded at lowering
//! time: a flag is either known while lowering or an instruction computing it, and the logic
//! on flags emits nothing when the outcome is known (so a parameter, always defined, costs no
//! flag, and neither does an instruction whose operands are always defined).

use irkit_core::{Inst, Opcode, Payload};

use crate::LowerError;
use crate::emit::Emit;

/// An `i1` flag known at lowering time, or computed at run time by an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bit {
    /// Known while lowering.
    Known(bool),
    /// The value of this `i1` instruction.
    Dynamic(Inst),
}

impl Emit<'_> {
    /// The flag as an `i1` value (a constant when it is known).
    pub(crate) fn bit_inst(&mut self, b: Bit) -> Result<Inst, LowerError> {
        match b {
            Bit::Dynamic(i) => Ok(i),
            Bit::Known(k) => Ok(self.m.const_int(self.i1, u64::from(k))?),
        }
    }

    /// `a AND b`.
    pub(crate) fn and(&mut self, a: Bit, b: Bit) -> Result<Bit, LowerError> {
        Ok(match (a, b) {
            (Bit::Known(false), _) | (_, Bit::Known(false)) => Bit::Known(false),
            (Bit::Known(true), x) | (x, Bit::Known(true)) => x,
            (Bit::Dynamic(x), Bit::Dynamic(y)) if x == y => Bit::Dynamic(x),
            (Bit::Dynamic(x), Bit::Dynamic(y)) => {
                Bit::Dynamic(self.emit(Opcode::AND, Some(self.i1), vec![x, y], Payload::None)?)
            }
        })
    }

    /// `a OR b`.
    pub(crate) fn or(&mut self, a: Bit, b: Bit) -> Result<Bit, LowerError> {
        Ok(match (a, b) {
            (Bit::Known(true), _) | (_, Bit::Known(true)) => Bit::Known(true),
            (Bit::Known(false), x) | (x, Bit::Known(false)) => x,
            (Bit::Dynamic(x), Bit::Dynamic(y)) if x == y => Bit::Dynamic(x),
            (Bit::Dynamic(x), Bit::Dynamic(y)) => {
                Bit::Dynamic(self.emit(Opcode::OR, Some(self.i1), vec![x, y], Payload::None)?)
            }
        })
    }

    /// `NOT a`.
    pub(crate) fn not(&mut self, a: Bit) -> Result<Bit, LowerError> {
        Ok(match a {
            Bit::Known(k) => Bit::Known(!k),
            Bit::Dynamic(x) => {
                let t = self.m.const_int(self.i1, 1)?;
                Bit::Dynamic(self.emit(Opcode::XOR, Some(self.i1), vec![x, t], Payload::None)?)
            }
        })
    }

    /// `c ? a : b` on flags.
    pub(crate) fn sel_bit(&mut self, c: Bit, a: Bit, b: Bit) -> Result<Bit, LowerError> {
        match c {
            Bit::Known(true) => Ok(a),
            Bit::Known(false) => Ok(b),
            Bit::Dynamic(_) if a == b => Ok(a),
            Bit::Dynamic(ci) => match (a, b) {
                (Bit::Known(true), Bit::Known(false)) => Ok(c),
                (Bit::Known(false), Bit::Known(true)) => self.not(c),
                _ => {
                    let (ai, bi) = (self.bit_inst(a)?, self.bit_inst(b)?);
                    let i1 = self.i1;
                    Ok(Bit::Dynamic(self.emit(
                        Opcode::SELECT,
                        Some(i1),
                        vec![ci, ai, bi],
                        Payload::None,
                    )?))
                }
            },
        }
    }

    /// `c ? a : b` on values of type `ty` (no instruction when `c` is known or `a` is `b`).
    pub(crate) fn sel_val(
        &mut self,
        c: Bit,
        a: Inst,
        b: Inst,
        ty: Option<Inst>,
    ) -> Result<Inst, LowerError> {
        match c {
            Bit::Known(true) => Ok(a),
            Bit::Known(false) => Ok(b),
            Bit::Dynamic(_) if a == b => Ok(a),
            Bit::Dynamic(ci) => self.emit(Opcode::SELECT, ty, vec![ci, a, b], Payload::None),
        }
    }
}
