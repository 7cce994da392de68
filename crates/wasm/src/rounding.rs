//! `ceil`, `floor`, `trunc` and `nearest` on floats, in exact IR.
//!
//! A float of magnitude at least `2^(p-1)` (`p` the precision: 24 for `f32`, 53 for `f64`)
//! is already an integer, and an infinity is its own rounding: those are returned as they are.
//! NaN gives the canonical NaN. Below that magnitude:
//!
//! * `trunc`: `fptosi` to `i64` and back (exact in that range), with the sign of the operand
//!   (so `trunc(-0.5)` is `-0`);
//! * `floor`: the truncation, minus 1 if it is greater than the operand;
//! * `ceil`: the truncation, plus 1 if it is less than the operand;
//! * `nearest`: `(|x| + 2^(p-1)) - 2^(p-1)`, which IEEE round-to-nearest-even rounds exactly as
//!   wasm's `nearest` does (the sum's unit in the last place is 1), with the sign of `x`.

use irkit_core::{FloatCC, Inst, Opcode, Payload};

use crate::error::{At, WasmError};
use crate::func::FuncTranslator;

/// A rounding operator.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Round {
    Ceil,
    Floor,
    Trunc,
    Nearest,
}

impl FuncTranslator<'_, '_> {
    fn float_const(&mut self, like: Inst, v: f64) -> Result<Inst, WasmError> {
        let place = self.place();
        let m = self.b.module();
        let ty = m
            .ty(like)
            .ok_or_else(|| WasmError::unsupported("an untyped operand", place))?;
        Ok(if m.float_width(ty) == Some(32) {
            m.const_f32(v as f32)
        } else {
            m.const_f64(v)
        })
    }

    fn select_like(&mut self, like: Inst, c: Inst, a: Inst, b: Inst) -> Result<Inst, WasmError> {
        let ty = self.b.module().ty(like);
        self.inst(Opcode::SELECT, ty, vec![c, a, b], Payload::None)
    }

    /// `x` with the sign bit of `sign`.
    fn with_sign_of(&mut self, x: Inst, sign: Inst) -> Result<Inst, WasmError> {
        self.stack.push(x);
        self.stack.push(sign);
        self.copysign()?;
        self.pop()
    }

    /// Applies rounding operator `r` to the top operand.
    pub(crate) fn round(&mut self, r: Round) -> Result<(), WasmError> {
        let x = self.pop()?;
        let place = self.place();
        let ty = self
            .b
            .module()
            .ty(x)
            .ok_or_else(|| WasmError::unsupported("an untyped operand", place))?;
        let f32 = self.b.module().float_width(ty) == Some(32);
        let big = if f32 {
            8_388_608.0
        } else {
            4_503_599_627_370_496.0
        };
        let ax = self.fabs(x)?;
        let limit = self.float_const(x, big)?;
        let small = self.b.fcmp(FloatCC::Olt, ax, limit).at(place)?;
        let rounded = match r {
            Round::Nearest => {
                let s = self.binary(Opcode::FADD, ax, limit)?;
                let n = self.binary(Opcode::FSUB, s, limit)?;
                self.with_sign_of(n, x)?
            }
            _ => {
                let i64t = self.b.module().ty_i64();
                let i = self.conv(Opcode::FPTOSI, i64t, x)?;
                let t = self.conv(Opcode::SITOFP, ty, i)?;
                let t = self.with_sign_of(t, x)?;
                match r {
                    Round::Trunc => t,
                    Round::Floor => {
                        let one = self.float_const(x, 1.0)?;
                        let above = self.b.fcmp(FloatCC::Ogt, t, x).at(place)?;
                        let m1 = self.binary(Opcode::FSUB, t, one)?;
                        self.select_like(x, above, m1, t)?
                    }
                    _ => {
                        let one = self.float_const(x, 1.0)?;
                        let below = self.b.fcmp(FloatCC::Olt, t, x).at(place)?;
                        let p1 = self.binary(Opcode::FADD, t, one)?;
                        self.select_like(x, below, p1, t)?
                    }
                }
            }
        };
        let uno = self.b.fcmp(FloatCC::Uno, x, x).at(place)?;
        let nan_bits = if f32 {
            0x7fc0_0000
        } else {
            0x7ff8_0000_0000_0000
        };
        let nan = self.b.module().const_float_bits(ty, nan_bits).at(place)?;
        let other = self.select_like(x, uno, nan, x)?;
        let r = self.select_like(x, small, rounded, other)?;
        self.stack.push(r);
        Ok(())
    }
}
