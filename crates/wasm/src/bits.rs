//! wasm operators the IR has no instruction for, built from exact sequences of instructions
//! it has: bit counts (`clz`, `ctz`, `popcnt`, by the classic branch-free bit tricks), rotates
//! (two masked shifts), and the float sign operations and `min`/`max` (bit operations on the
//! reinterpreted value, comparisons and selects).

use irkit_core::{FloatCC, Inst, Opcode, Payload};

use crate::error::{At, WasmError};
use crate::func::FuncTranslator;

/// A value repeated in every byte of an integer of `width` bits.
fn splat(byte: u8, width: u32) -> u64 {
    let all = u64::from(byte) * 0x0101_0101_0101_0101;
    if width >= 64 {
        all
    } else {
        all & ((1u64 << width) - 1)
    }
}

impl FuncTranslator<'_, '_> {
    fn width(&mut self, x: Inst) -> u32 {
        let m = self.b.module();
        m.ty(x)
            .and_then(|t| m.int_width(t).or_else(|| m.float_width(t)))
            .unwrap_or(64)
    }

    fn binc(&mut self, op: Opcode, x: Inst, c: u64) -> Result<Inst, WasmError> {
        let c = self.int_like(x, c)?;
        self.binary(op, x, c)
    }

    /// `popcnt`, by summing bits in ever wider fields.
    pub(crate) fn popcnt(&mut self, x: Inst) -> Result<Inst, WasmError> {
        let w = self.width(x);
        let s1 = self.binc(Opcode::LSHR, x, 1)?;
        let m1 = self.binc(Opcode::AND, s1, splat(0x55, w))?;
        let x = self.binary(Opcode::ISUB, x, m1)?;
        let a = self.binc(Opcode::AND, x, splat(0x33, w))?;
        let s2 = self.binc(Opcode::LSHR, x, 2)?;
        let b = self.binc(Opcode::AND, s2, splat(0x33, w))?;
        let x = self.binary(Opcode::IADD, a, b)?;
        let s4 = self.binc(Opcode::LSHR, x, 4)?;
        let x = self.binary(Opcode::IADD, x, s4)?;
        let x = self.binc(Opcode::AND, x, splat(0x0f, w))?;
        let x = self.binc(Opcode::IMUL, x, splat(0x01, w))?;
        self.binc(Opcode::LSHR, x, u64::from(w - 8))
    }

    /// `clz`: every bit below the highest set bit is set, then the zeros are counted.
    pub(crate) fn clz(&mut self, x: Inst) -> Result<Inst, WasmError> {
        let w = self.width(x);
        let mut x = x;
        let mut s = 1;
        while s < w {
            let sh = self.binc(Opcode::LSHR, x, u64::from(s))?;
            x = self.binary(Opcode::OR, x, sh)?;
            s *= 2;
        }
        let not = self.binc(Opcode::XOR, x, u64::MAX)?;
        self.popcnt(not)
    }

    /// `ctz`: the bits below the lowest set bit, counted (all of them for 0).
    pub(crate) fn ctz(&mut self, x: Inst) -> Result<Inst, WasmError> {
        let not = self.binc(Opcode::XOR, x, u64::MAX)?;
        let dec = self.binc(Opcode::ISUB, x, 1)?;
        let below = self.binary(Opcode::AND, not, dec)?;
        self.popcnt(below)
    }

    /// `rotl`/`rotr`: two shifts by `k` and `-k`, which the IR masks to the width, or-ed.
    pub(crate) fn rotate(&mut self, left: bool) -> Result<(), WasmError> {
        let k = self.pop()?;
        let x = self.pop()?;
        let zero = self.int_like(k, 0)?;
        let neg = self.binary(Opcode::ISUB, zero, k)?;
        let (a, b) = if left {
            (Opcode::SHL, Opcode::LSHR)
        } else {
            (Opcode::LSHR, Opcode::SHL)
        };
        let p = self.binary(a, x, k)?;
        let q = self.binary(b, x, neg)?;
        let r = self.binary(Opcode::OR, p, q)?;
        self.stack.push(r);
        Ok(())
    }

    /// The integer type of the float `x`'s width, and its sign bit.
    fn float_bits(&mut self, x: Inst) -> Result<(Inst, Inst, u64), WasmError> {
        let w = self.width(x);
        let place = self.place();
        let it = self
            .b
            .module()
            .ty_int(w)
            .ok_or_else(|| WasmError::unsupported("a float of this width", place))?;
        let bits = self.conv(Opcode::BITCAST, it, x)?;
        Ok((it, bits, 1u64 << (w - 1)))
    }

    fn float_from_bits(&mut self, like: Inst, bits: Inst) -> Result<Inst, WasmError> {
        let place = self.place();
        let ft = self
            .b
            .module()
            .ty(like)
            .ok_or_else(|| WasmError::unsupported("an untyped operand", place))?;
        self.conv(Opcode::BITCAST, ft, bits)
    }

    /// `neg`: the sign bit flipped (NaN bits otherwise kept, as wasm requires).
    pub(crate) fn fneg(&mut self, x: Inst) -> Result<Inst, WasmError> {
        let (_, bits, sign) = self.float_bits(x)?;
        let r = self.binc(Opcode::XOR, bits, sign)?;
        self.float_from_bits(x, r)
    }

    /// `abs`: the sign bit cleared.
    pub(crate) fn fabs(&mut self, x: Inst) -> Result<Inst, WasmError> {
        let (_, bits, sign) = self.float_bits(x)?;
        let r = self.binc(Opcode::AND, bits, !sign)?;
        self.float_from_bits(x, r)
    }

    /// `copysign x y`: `x`'s magnitude with `y`'s sign bit.
    pub(crate) fn copysign(&mut self) -> Result<(), WasmError> {
        let y = self.pop()?;
        let x = self.pop()?;
        let (_, xb, sign) = self.float_bits(x)?;
        let (_, yb, _) = self.float_bits(y)?;
        let mag = self.binc(Opcode::AND, xb, !sign)?;
        let sgn = self.binc(Opcode::AND, yb, sign)?;
        let r = self.binary(Opcode::OR, mag, sgn)?;
        let r = self.float_from_bits(x, r)?;
        self.stack.push(r);
        Ok(())
    }

    /// `min`/`max`: NaN if either operand is NaN; of two equal operands (`-0` and `+0`) the
    /// bits or-ed for `min` (so `-0` wins) and and-ed for `max`.
    pub(crate) fn min_max(&mut self, min: bool) -> Result<(), WasmError> {
        let y = self.pop()?;
        let x = self.pop()?;
        let place = self.place();
        let lt = self.b.fcmp(FloatCC::Olt, x, y).at(place)?;
        let gt = self.b.fcmp(FloatCC::Ogt, x, y).at(place)?;
        let uno = self.b.fcmp(FloatCC::Uno, x, y).at(place)?;
        let (_, xb, _) = self.float_bits(x)?;
        let (_, yb, _) = self.float_bits(y)?;
        let eq_bits = self.binary(if min { Opcode::OR } else { Opcode::AND }, xb, yb)?;
        let eq = self.float_from_bits(x, eq_bits)?;
        let ft = self.b.module().ty(x);
        let (first, second) = if min { (lt, gt) } else { (gt, lt) };
        let r = self.inst(Opcode::SELECT, ft, vec![second, y, eq], Payload::None)?;
        let r = self.inst(Opcode::SELECT, ft, vec![first, x, r], Payload::None)?;
        let w = self.width(x);
        let nan_bits = if w == 32 {
            0x7fc0_0000
        } else {
            0x7ff8_0000_0000_0000
        };
        let ftt = ft.ok_or_else(|| WasmError::unsupported("an untyped operand", place))?;
        let nan = self.b.module().const_float_bits(ftt, nan_bits).at(place)?;
        let r = self.inst(Opcode::SELECT, ft, vec![uno, nan, r], Payload::None)?;
        self.stack.push(r);
        Ok(())
    }
}
