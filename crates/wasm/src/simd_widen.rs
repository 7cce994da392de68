//! The SIMD operators that widen lanes or saturate, composed of the IR's 128-bit lane-wise
//! operations (spec/wasm.md "SIMD"), so that every back end that runs `vec i32 4` runs them.
//!
//! Widening works on a vector seen in the wide shape (`i16x8` for `i8x16` lanes, …): there the
//! *even* narrow lanes are the low halves of the wide lanes and the *odd* ones the high
//! halves, each brought to the wide width by two shifts (signed) or a mask and a shift
//! (unsigned). Then `extadd_pairwise` is even + odd, `dot` is even·even + odd·odd, and
//! `extend_low`/`extend_high` interleave the evens and odds of the low or high half with one
//! `shuffle`; `extmul` multiplies two extended halves, and the extending loads extend a
//! 64-bit load. Saturating arithmetic detects the wrapped lanes with comparisons and selects
//! the bound there (`bitselect` of lane masks); `avgr_u` is `(a | b) - ((a ^ b) >> 1)`;
//! `narrow` clamps the wide lanes the same way and keeps their low halves (a `shuffle`), and
//! `q15mulr_sat_s` is a 32-bit product rounded, shifted and narrowed. The conversions between
//! `f32`, `f64` and `i32` lanes of different widths (`promote_low`, `demote_zero`,
//! `convert_low`, `trunc_sat_zero`) convert their two lanes one by one as scalars.

use irkit_core::{Inst, IntCC, Opcode, Payload};
use wasmparser::{MemArg, Operator};

use crate::error::{At, WasmError};
use crate::func::FuncTranslator;
use crate::simd::Shape;

/// The shape of twice the lane width.
fn wide(sh: Shape) -> Shape {
    match sh {
        Shape::I8x16 => Shape::I16x8,
        Shape::I16x8 => Shape::I32x4,
        _ => Shape::I64x2,
    }
}

impl FuncTranslator<'_, '_> {
    /// A vector of `sh` with every lane `v` (its low bits).
    fn splat_const(&mut self, sh: Shape, v: u64) -> Result<Inst, WasmError> {
        let (lt, n) = sh.lane();
        let c = self.int_like_ty(lt, v);
        let t = self.vty(sh)?;
        let place = self.place();
        let lanes = vec![c; n as usize];
        self.b.module().const_aggregate(t, &lanes).at(place)
    }

    /// `op a, b` on vectors of `sh`.
    fn v2(&mut self, op: Opcode, sh: Shape, a: Inst, b: Inst) -> Result<Inst, WasmError> {
        let t = self.vty(sh)?;
        self.vins(op, t, vec![a, b], Payload::None)
    }

    /// A shift of a vector of `sh` by the constant `n`.
    fn shift_c(&mut self, op: Opcode, sh: Shape, a: Inst, n: u32) -> Result<Inst, WasmError> {
        let (lt, _) = sh.lane();
        let n = self.int_like_ty(lt, u64::from(n));
        self.v2(op, sh, a, n)
    }

    /// The even and odd lanes of `v` (a `v128` of `narrow` lanes), each extended to the wide
    /// shape.
    fn evens_odds(
        &mut self,
        v: Inst,
        narrow: Shape,
        signed: bool,
    ) -> Result<(Inst, Inst), WasmError> {
        let w = wide(narrow);
        let bits = narrow.bits();
        let x = self.as_shape(v, w)?;
        if signed {
            let up = self.shift_c(Opcode::SHL, w, x, bits)?;
            let ev = self.shift_c(Opcode::ASHR, w, up, bits)?;
            let od = self.shift_c(Opcode::ASHR, w, x, bits)?;
            Ok((ev, od))
        } else {
            let mask = self.splat_const(w, (1u64 << bits) - 1)?;
            let ev = self.v2(Opcode::AND, w, x, mask)?;
            let od = self.shift_c(Opcode::LSHR, w, x, bits)?;
            Ok((ev, od))
        }
    }

    /// The low or high half of `v`'s `narrow` lanes, extended to the wide shape.
    fn extend(
        &mut self,
        v: Inst,
        narrow: Shape,
        high: bool,
        signed: bool,
    ) -> Result<Inst, WasmError> {
        let w = wide(narrow);
        let (ev, od) = self.evens_odds(v, narrow, signed)?;
        let n = w.lane().1 as u8;
        let from = if high { n / 2 } else { 0 };
        let idx: Vec<u8> = (from..from + n / 2).flat_map(|k| [k, n + k]).collect();
        let t = self.vty(w)?;
        self.vins(Opcode::SHUFFLE, t, vec![ev, od], Payload::Bytes(idx.into()))
    }

    /// `extend_low`/`extend_high` of the top operand.
    fn extend_op(&mut self, narrow: Shape, high: bool, signed: bool) -> Result<(), WasmError> {
        let v = self.pop();
        let r = self.extend(v, narrow, high, signed)?;
        self.push_v(r, wide(narrow))
    }

    /// `extmul_low`/`extmul_high`.
    fn extmul(&mut self, narrow: Shape, high: bool, signed: bool) -> Result<(), WasmError> {
        let b = self.pop();
        let a = self.pop();
        let a = self.extend(a, narrow, high, signed)?;
        let b = self.extend(b, narrow, high, signed)?;
        let w = wide(narrow);
        let r = self.v2(Opcode::IMUL, w, a, b)?;
        self.push_v(r, w)
    }

    /// `extadd_pairwise`: even + odd lanes.
    fn extadd_pairwise(&mut self, narrow: Shape, signed: bool) -> Result<(), WasmError> {
        let v = self.pop();
        let (ev, od) = self.evens_odds(v, narrow, signed)?;
        let w = wide(narrow);
        let r = self.v2(Opcode::IADD, w, ev, od)?;
        self.push_v(r, w)
    }

    /// `i32x4.dot_i16x8_s`: even·even + odd·odd.
    fn dot(&mut self) -> Result<(), WasmError> {
        let b = self.pop();
        let a = self.pop();
        let (ea, oa) = self.evens_odds(a, Shape::I16x8, true)?;
        let (eb, ob) = self.evens_odds(b, Shape::I16x8, true)?;
        let e = self.v2(Opcode::IMUL, Shape::I32x4, ea, eb)?;
        let o = self.v2(Opcode::IMUL, Shape::I32x4, oa, ob)?;
        let r = self.v2(Opcode::IADD, Shape::I32x4, e, o)?;
        self.push_v(r, Shape::I32x4)
    }

    /// `v128.load8x8_s` and the other extending loads: 64 bits loaded, their lanes extended.
    fn load_extend(&mut self, arg: &MemArg, narrow: Shape, signed: bool) -> Result<(), WasmError> {
        let x = self.load_lane_value(arg, Shape::I64x2)?;
        let t = self.vty(Shape::I64x2)?;
        let place = self.place();
        let zero = self.b.module().const_zero(t).at(place)?;
        let v = self.vins(Opcode::INSERT, t, vec![zero, x], Payload::Int(0))?;
        let r = self.extend(v, narrow, false, signed)?;
        self.push_v(r, wide(narrow))
    }

    /// A lane mask of `sh` comparing `a` and `b` with `cc`.
    fn mask(&mut self, sh: Shape, cc: IntCC, a: Inst, b: Inst) -> Result<Inst, WasmError> {
        let t = self.vty(sh)?;
        self.vins(Opcode::ICMP, t, vec![a, b], Payload::Int(cc.code()))
    }

    /// `add_sat`/`sub_sat` (`sub`), signed or unsigned, of vectors of `sh`.
    fn sat(&mut self, sh: Shape, sub: bool, signed: bool) -> Result<(), WasmError> {
        let b = self.pop_v(sh)?;
        let a = self.pop_v(sh)?;
        let op = if sub { Opcode::ISUB } else { Opcode::IADD };
        let r = self.v2(op, sh, a, b)?;
        let c = |s: &mut Self, v: Inst| s.as_shape(v, Shape::I32x4);
        let out = match (signed, sub) {
            // Wrapped when the sum is below an operand: all ones there.
            (false, false) => {
                let m = self.mask(sh, IntCC::Ult, r, a)?;
                self.v2(Opcode::OR, sh, r, m)?
            }
            // Wrapped when `a < b`: zero there.
            (false, true) => {
                let m = self.mask(sh, IntCC::Ult, a, b)?;
                let (r, m, ones) = (c(self, r)?, c(self, m)?, self.ones()?);
                let keep = self.v2(Opcode::XOR, Shape::I32x4, m, ones)?;
                self.v2(Opcode::AND, Shape::I32x4, r, keep)?
            }
            // Overflowed when the result's sign differs from both operands' (add) or from
            // `a`'s where `b`'s differs from `a`'s (sub): the bound of `a`'s sign there.
            (true, _) => {
                let x = self.v2(Opcode::XOR, sh, r, a)?;
                let y = if sub {
                    self.v2(Opcode::XOR, sh, a, b)?
                } else {
                    self.v2(Opcode::XOR, sh, r, b)?
                };
                let both = self.v2(Opcode::AND, sh, x, y)?;
                let zero = self.splat_const(sh, 0)?;
                let m = self.mask(sh, IntCC::Slt, both, zero)?;
                let bits = sh.bits();
                let sign = self.shift_c(Opcode::ASHR, sh, a, bits - 1)?;
                let max = self.splat_const(sh, (1u64 << (bits - 1)) - 1)?;
                let bound = self.v2(Opcode::XOR, sh, sign, max)?;
                let (bound, r, m) = (c(self, bound)?, c(self, r)?, c(self, m)?);
                self.bitselect(bound, r, m)?
            }
        };
        self.push_v(out, sh)
    }

    /// `avgr_u`: `(a + b + 1) / 2` without overflow, as `(a | b) - ((a ^ b) >> 1)`.
    fn avgr_u(&mut self, sh: Shape) -> Result<(), WasmError> {
        let b = self.pop_v(sh)?;
        let a = self.pop_v(sh)?;
        let or = self.v2(Opcode::OR, sh, a, b)?;
        let x = self.v2(Opcode::XOR, sh, a, b)?;
        let half = self.shift_c(Opcode::LSHR, sh, x, 1)?;
        let r = self.v2(Opcode::ISUB, sh, or, half)?;
        self.push_v(r, sh)
    }

    /// The lanes of `v` (of the wide shape of `narrow`) clamped to `lo..=hi` (signed).
    fn clamp(&mut self, narrow: Shape, v: Inst, lo: u64, hi: u64) -> Result<Inst, WasmError> {
        let w = wide(narrow);
        let c = |s: &mut Self, v: Inst| s.as_shape(v, Shape::I32x4);
        let v = self.as_shape(v, w)?;
        let lo = self.splat_const(w, lo)?;
        let hi = self.splat_const(w, hi)?;
        let below = self.mask(w, IntCC::Slt, v, lo)?;
        let (lo32, v32, below) = (c(self, lo)?, c(self, v)?, c(self, below)?);
        let v = self.bitselect(lo32, v32, below)?;
        let v = self.as_shape(v, w)?;
        let above = self.mask(w, IntCC::Sgt, v, hi)?;
        let (hi32, v32, above) = (c(self, hi)?, c(self, v)?, c(self, above)?);
        self.bitselect(hi32, v32, above)
    }

    /// `narrow`: the wide lanes of `a` then `b`, saturated to the narrow lanes (signed, or
    /// unsigned from signed).
    fn narrow_pair(
        &mut self,
        narrow: Shape,
        a: Inst,
        b: Inst,
        signed: bool,
    ) -> Result<Inst, WasmError> {
        let bits = narrow.bits();
        let (lo, hi) = if signed {
            (
                (1u64 << (bits - 1)).wrapping_neg(),
                (1u64 << (bits - 1)) - 1,
            )
        } else {
            (0, (1u64 << bits) - 1)
        };
        let a = self.clamp(narrow, a, lo, hi)?;
        let b = self.clamp(narrow, b, lo, hi)?;
        // The low half of each wide lane: the even narrow lanes of `a`, then of `b`.
        let (a, b) = (self.as_shape(a, narrow)?, self.as_shape(b, narrow)?);
        let n = narrow.lane().1 as u8;
        let idx: Vec<u8> = (0..n).map(|k| 2 * k).collect();
        let t = self.vty(narrow)?;
        self.vins(Opcode::SHUFFLE, t, vec![a, b], Payload::Bytes(idx.into()))
    }

    fn narrow_op(&mut self, narrow: Shape, signed: bool) -> Result<(), WasmError> {
        let b = self.pop();
        let a = self.pop();
        let r = self.narrow_pair(narrow, a, b, signed)?;
        self.push_v(r, narrow)
    }

    /// `i16x8.q15mulr_sat_s`: `(a·b + 2^14) >> 15` in 32 bits, saturated to 16.
    fn q15mulr(&mut self) -> Result<(), WasmError> {
        let b = self.pop();
        let a = self.pop();
        let mut halves = Vec::with_capacity(2);
        for high in [false, true] {
            let x = self.extend(a, Shape::I16x8, high, true)?;
            let y = self.extend(b, Shape::I16x8, high, true)?;
            let p = self.v2(Opcode::IMUL, Shape::I32x4, x, y)?;
            let r = self.splat_const(Shape::I32x4, 1 << 14)?;
            let p = self.v2(Opcode::IADD, Shape::I32x4, p, r)?;
            halves.push(self.shift_c(Opcode::ASHR, Shape::I32x4, p, 15)?);
        }
        let r = self.narrow_pair(Shape::I16x8, halves[0], halves[1], true)?;
        self.push_v(r, Shape::I16x8)
    }

    /// Lanes `0..n` of `from` (a `v128` of shape `sh`) converted by the scalar conversion `op`
    /// to `to` and placed in lanes `0..n` of a zero vector of shape `out`.
    fn convert_lanes(
        &mut self,
        sh: Shape,
        n: u64,
        op: irkit_core::Conversion,
        out: Shape,
    ) -> Result<(), WasmError> {
        let v = self.pop_v(sh)?;
        let (lt, _) = sh.lane();
        let (ot, _) = out.lane();
        let (lty, oty) = (self.ty(lt), self.ty(ot));
        let t = self.vty(out)?;
        let place = self.place();
        let mut r = self.b.module().const_zero(t).at(place)?;
        for k in 0..n {
            let x = self.vins(Opcode::EXTRACT, lty, vec![v], Payload::Int(k))?;
            let y = self.b.ins().conversion(op, oty, x);
            r = self.vins(Opcode::INSERT, t, vec![r, y], Payload::Int(k))?;
        }
        self.push_v(r, out)
    }

    /// Translates a widening or saturating SIMD operator; `false` if `op` is not one.
    pub(crate) fn simd_widen_operator(&mut self, op: &Operator<'_>) -> Result<bool, WasmError> {
        use Operator as O;
        use Shape::*;
        use irkit_core::Conversion as C;
        match *op {
            O::I16x8ExtendLowI8x16S => self.extend_op(I8x16, false, true)?,
            O::I16x8ExtendHighI8x16S => self.extend_op(I8x16, true, true)?,
            O::I16x8ExtendLowI8x16U => self.extend_op(I8x16, false, false)?,
            O::I16x8ExtendHighI8x16U => self.extend_op(I8x16, true, false)?,
            O::I32x4ExtendLowI16x8S => self.extend_op(I16x8, false, true)?,
            O::I32x4ExtendHighI16x8S => self.extend_op(I16x8, true, true)?,
            O::I32x4ExtendLowI16x8U => self.extend_op(I16x8, false, false)?,
            O::I32x4ExtendHighI16x8U => self.extend_op(I16x8, true, false)?,
            O::I64x2ExtendLowI32x4S => self.extend_op(I32x4, false, true)?,
            O::I64x2ExtendHighI32x4S => self.extend_op(I32x4, true, true)?,
            O::I64x2ExtendLowI32x4U => self.extend_op(I32x4, false, false)?,
            O::I64x2ExtendHighI32x4U => self.extend_op(I32x4, true, false)?,
            O::I16x8ExtMulLowI8x16S => self.extmul(I8x16, false, true)?,
            O::I16x8ExtMulHighI8x16S => self.extmul(I8x16, true, true)?,
            O::I16x8ExtMulLowI8x16U => self.extmul(I8x16, false, false)?,
            O::I16x8ExtMulHighI8x16U => self.extmul(I8x16, true, false)?,
            O::I32x4ExtMulLowI16x8S => self.extmul(I16x8, false, true)?,
            O::I32x4ExtMulHighI16x8S => self.extmul(I16x8, true, true)?,
            O::I32x4ExtMulLowI16x8U => self.extmul(I16x8, false, false)?,
            O::I32x4ExtMulHighI16x8U => self.extmul(I16x8, true, false)?,
            O::I64x2ExtMulLowI32x4S => self.extmul(I32x4, false, true)?,
            O::I64x2ExtMulHighI32x4S => self.extmul(I32x4, true, true)?,
            O::I64x2ExtMulLowI32x4U => self.extmul(I32x4, false, false)?,
            O::I64x2ExtMulHighI32x4U => self.extmul(I32x4, true, false)?,
            O::I16x8ExtAddPairwiseI8x16S => self.extadd_pairwise(I8x16, true)?,
            O::I16x8ExtAddPairwiseI8x16U => self.extadd_pairwise(I8x16, false)?,
            O::I32x4ExtAddPairwiseI16x8S => self.extadd_pairwise(I16x8, true)?,
            O::I32x4ExtAddPairwiseI16x8U => self.extadd_pairwise(I16x8, false)?,
            O::I32x4DotI16x8S => self.dot()?,
            O::V128Load8x8S { memarg } => self.load_extend(&memarg, I8x16, true)?,
            O::V128Load8x8U { memarg } => self.load_extend(&memarg, I8x16, false)?,
            O::V128Load16x4S { memarg } => self.load_extend(&memarg, I16x8, true)?,
            O::V128Load16x4U { memarg } => self.load_extend(&memarg, I16x8, false)?,
            O::V128Load32x2S { memarg } => self.load_extend(&memarg, I32x4, true)?,
            O::V128Load32x2U { memarg } => self.load_extend(&memarg, I32x4, false)?,
            O::I8x16AddSatS => self.sat(I8x16, false, true)?,
            O::I8x16AddSatU => self.sat(I8x16, false, false)?,
            O::I8x16SubSatS => self.sat(I8x16, true, true)?,
            O::I8x16SubSatU => self.sat(I8x16, true, false)?,
            O::I16x8AddSatS => self.sat(I16x8, false, true)?,
            O::I16x8AddSatU => self.sat(I16x8, false, false)?,
            O::I16x8SubSatS => self.sat(I16x8, true, true)?,
            O::I16x8SubSatU => self.sat(I16x8, true, false)?,
            O::I8x16NarrowI16x8S => self.narrow_op(I8x16, true)?,
            O::I8x16NarrowI16x8U => self.narrow_op(I8x16, false)?,
            O::I16x8NarrowI32x4S => self.narrow_op(I16x8, true)?,
            O::I16x8NarrowI32x4U => self.narrow_op(I16x8, false)?,
            O::I16x8Q15MulrSatS => self.q15mulr()?,
            O::F64x2PromoteLowF32x4 => self.convert_lanes(F32x4, 2, C::Fpext, F64x2)?,
            O::F32x4DemoteF64x2Zero => self.convert_lanes(F64x2, 2, C::Fptrunc, F32x4)?,
            O::F64x2ConvertLowI32x4S => self.convert_lanes(I32x4, 2, C::Sitofp, F64x2)?,
            O::F64x2ConvertLowI32x4U => self.convert_lanes(I32x4, 2, C::Uitofp, F64x2)?,
            O::I32x4TruncSatF64x2SZero => self.convert_lanes(F64x2, 2, C::Fptosi, I32x4)?,
            O::I32x4TruncSatF64x2UZero => self.convert_lanes(F64x2, 2, C::Fptoui, I32x4)?,
            O::I8x16AvgrU => self.avgr_u(I8x16)?,
            O::I16x8AvgrU => self.avgr_u(I16x8)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}
