//! Fixed-width SIMD (`v128`, spec/wasm.md "SIMD"): wasm's untyped 128-bit vector is the IR's
//! `vec i32 4` wherever it is stored (locals, globals, parameters, results, the operand stack
//! between operators); each operator reinterprets its operands as the shape it works on
//! (`bitcast` in lane order, free in native code), applies the IR's lane-wise operation and
//! reinterprets the result back.
//!
//! Most operators are one IR operation (`i8x16.swizzle` is the IR's `swizzle`). Composed in ordinary IR: `v128.not` (xor with all
//! ones), `andnot`, `bitselect` (`b ^ ((a ^ b) & m)`), integer `neg` (0 − x), `abs`, `min`
//! and `max` (a comparison's lane mask selecting bits), `pmin`/`pmax`, `any_true`,
//! `all_true` and `bitmask` (lanes read out), the narrow-lane `splat` and `replace_lane`
//! (truncating the `i32` operand) and `extract_lane_s/u` (extending the lane), and the
//! lane loads and stores (a scalar access and a lane insert or extract). The widening,
//! narrowing and saturating operators are those of `simd_widen.rs`.

use irkit_core::{Conversion, FloatBinary, FloatCC, FloatUnary, Inst, IntBinary, IntCC, IntUnary};
use irkit_core::{Opcode, Payload};
use wasmparser::{MemArg, Operator};

use crate::error::{At, WasmError};
use crate::func::FuncTranslator;
use crate::ops::Ty;

/// A lane shape of wasm's SIMD operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Shape {
    I8x16,
    I16x8,
    I32x4,
    I64x2,
    F32x4,
    F64x2,
}

impl Shape {
    /// The lane type and the lane count.
    pub(crate) fn lane(self) -> (Ty, u64) {
        match self {
            Shape::I8x16 => (Ty::I8, 16),
            Shape::I16x8 => (Ty::I16, 8),
            Shape::I32x4 => (Ty::I32, 4),
            Shape::I64x2 => (Ty::I64, 2),
            Shape::F32x4 => (Ty::F32, 4),
            Shape::F64x2 => (Ty::F64, 2),
        }
    }

    /// The lane width in bits.
    pub(crate) fn bits(self) -> u32 {
        128 / self.lane().1 as u32
    }

    /// The integer shape of the same lane width (a comparison's result).
    fn int(self) -> Shape {
        match self {
            Shape::F32x4 => Shape::I32x4,
            Shape::F64x2 => Shape::I64x2,
            s => s,
        }
    }
}

impl FuncTranslator<'_, '_> {
    /// The vector type of `sh`.
    pub(crate) fn vty(&mut self, sh: Shape) -> Result<Inst, WasmError> {
        let (lane, n) = sh.lane();
        let lane = self.ty(lane);
        let place = self.place();
        self.b.module().ty_vec(lane, n).at(place)
    }

    /// Appends an instruction through the checked path (the verifier's vector rules).
    pub(crate) fn vins(
        &mut self,
        op: Opcode,
        ty: Inst,
        ops: Vec<Inst>,
        payload: Payload,
    ) -> Result<Inst, WasmError> {
        let place = self.place();
        self.b.inst(op, Some(ty), ops, payload).at(place)
    }

    /// `v` (a `v128`) seen as shape `sh`.
    pub(crate) fn as_shape(&mut self, v: Inst, sh: Shape) -> Result<Inst, WasmError> {
        let t = self.vty(sh)?;
        if self.b.module().ty(v) == Some(t) {
            return Ok(v);
        }
        self.vins(Opcode::BITCAST, t, vec![v], Payload::None)
    }

    /// Pushes `v` (of shape `sh`) as a `v128`.
    pub(crate) fn push_v(&mut self, v: Inst, sh: Shape) -> Result<(), WasmError> {
        let _ = sh;
        let canon = self.vty(Shape::I32x4)?;
        let v = if self.b.module().ty(v) == Some(canon) {
            v
        } else {
            self.vins(Opcode::BITCAST, canon, vec![v], Payload::None)?
        };
        self.stack.push(v);
        Ok(())
    }

    /// Pops a `v128` as shape `sh`.
    pub(crate) fn pop_v(&mut self, sh: Shape) -> Result<Inst, WasmError> {
        let v = self.pop();
        self.as_shape(v, sh)
    }

    /// A lane-wise binary operation `op` (with payload `payload`) on two vectors of `sh`,
    /// giving a vector of `out`.
    fn vbinary(
        &mut self,
        op: Opcode,
        sh: Shape,
        out: Shape,
        payload: Payload,
    ) -> Result<(), WasmError> {
        let b = self.pop_v(sh)?;
        let a = self.pop_v(sh)?;
        let t = self.vty(out)?;
        let r = self.vins(op, t, vec![a, b], payload)?;
        self.push_v(r, out)
    }

    /// A lane-wise unary operation `op` on a vector of `sh`, giving a vector of `out`.
    fn vunary(&mut self, op: Opcode, sh: Shape, out: Shape) -> Result<(), WasmError> {
        let a = self.pop_v(sh)?;
        let t = self.vty(out)?;
        let r = self.vins(op, t, vec![a], Payload::None)?;
        self.push_v(r, out)
    }

    fn icmp_v(&mut self, sh: Shape, cc: IntCC) -> Result<(), WasmError> {
        self.vbinary(Opcode::ICMP, sh, sh, Payload::Int(cc.code()))
    }

    fn fcmp_v(&mut self, sh: Shape, cc: FloatCC) -> Result<(), WasmError> {
        self.vbinary(Opcode::FCMP, sh, sh.int(), Payload::Int(cc.code()))
    }

    /// All ones in every bit, as a `v128`.
    pub(crate) fn ones(&mut self) -> Result<Inst, WasmError> {
        let m = self.b.module();
        let all = m.const_i32(-1);
        let t = self.vty(Shape::I32x4)?;
        let place = self.place();
        self.b.module().const_aggregate(t, &[all; 4]).at(place)
    }

    /// `b ^ ((a ^ b) & m)`: the bits of `a` where `m` has ones, of `b` elsewhere (`v128`s).
    pub(crate) fn bitselect(&mut self, a: Inst, b: Inst, m: Inst) -> Result<Inst, WasmError> {
        let t = self.vty(Shape::I32x4)?;
        let x = self.vins(Opcode::XOR, t, vec![a, b], Payload::None)?;
        let x = self.vins(Opcode::AND, t, vec![x, m], Payload::None)?;
        self.vins(Opcode::XOR, t, vec![b, x], Payload::None)
    }

    /// `a` where the comparison `cc` of `a` and `b` holds, else `b` (integer `min`/`max`).
    fn pick_int(&mut self, sh: Shape, cc: IntCC) -> Result<(), WasmError> {
        let b = self.pop_v(sh)?;
        let a = self.pop_v(sh)?;
        let t = self.vty(sh)?;
        let m = self.vins(Opcode::ICMP, t, vec![a, b], Payload::Int(cc.code()))?;
        let (a, b, m) = (
            self.as_shape(a, Shape::I32x4)?,
            self.as_shape(b, Shape::I32x4)?,
            self.as_shape(m, Shape::I32x4)?,
        );
        let r = self.bitselect(a, b, m)?;
        self.push_v(r, Shape::I32x4)
    }

    /// `pmin` (`b < a ? b : a`) and `pmax` (`a < b ? b : a`), lane by lane.
    fn pminmax(&mut self, sh: Shape, max: bool) -> Result<(), WasmError> {
        let b = self.pop_v(sh)?;
        let a = self.pop_v(sh)?;
        let mt = self.vty(sh.int())?;
        let (x, y) = if max { (a, b) } else { (b, a) };
        let m = self.vins(
            Opcode::FCMP,
            mt,
            vec![x, y],
            Payload::Int(FloatCC::Olt.code()),
        )?;
        let (a, b, m) = (
            self.as_shape(a, Shape::I32x4)?,
            self.as_shape(b, Shape::I32x4)?,
            self.as_shape(m, Shape::I32x4)?,
        );
        // Where the mask holds the result is `b`, else `a`.
        let r = self.bitselect(b, a, m)?;
        self.push_v(r, Shape::I32x4)
    }

    /// Integer `abs`: `0 - x` where `x < 0`.
    fn abs_v(&mut self, sh: Shape) -> Result<(), WasmError> {
        let a = self.pop_v(sh)?;
        let t = self.vty(sh)?;
        let place = self.place();
        let zero = self.b.module().const_zero(t).at(place)?;
        let neg = self.vins(Opcode::ISUB, t, vec![zero, a], Payload::None)?;
        let m = self.vins(
            Opcode::ICMP,
            t,
            vec![a, zero],
            Payload::Int(IntCC::Slt.code()),
        )?;
        let (neg, a, m) = (
            self.as_shape(neg, Shape::I32x4)?,
            self.as_shape(a, Shape::I32x4)?,
            self.as_shape(m, Shape::I32x4)?,
        );
        let r = self.bitselect(neg, a, m)?;
        self.push_v(r, Shape::I32x4)
    }

    /// A shift of a vector of `sh` by an `i32` amount (modulo the lane width, the IR's rule).
    fn shift_v(&mut self, sh: Shape, op: IntBinary) -> Result<(), WasmError> {
        let n = self.pop();
        let a = self.pop_v(sh)?;
        let (lane, _) = sh.lane();
        let lt = self.ty(lane);
        let n = match lane {
            Ty::I8 | Ty::I16 => self.b.ins().trunc(lt, n),
            Ty::I64 => self.b.ins().zext(lt, n),
            _ => n,
        };
        let t = self.vty(sh)?;
        let r = self.vins(op.op().opcode(), t, vec![a, n], Payload::None)?;
        self.push_v(r, sh)
    }

    /// `splat` of the top operand (an `i32` truncated for the narrow lanes).
    fn splat_v(&mut self, sh: Shape) -> Result<(), WasmError> {
        let x = self.pop();
        let (lane, _) = sh.lane();
        let x = match lane {
            Ty::I8 | Ty::I16 => {
                let lt = self.ty(lane);
                self.b.ins().trunc(lt, x)
            }
            _ => x,
        };
        let t = self.vty(sh)?;
        let r = self.vins(Opcode::SPLAT, t, vec![x], Payload::None)?;
        self.push_v(r, sh)
    }

    /// `extract_lane` (`signed` for `_s`, `Some(false)` for `_u`, `None` for wide lanes).
    fn extract_v(&mut self, sh: Shape, lane: u8, signed: Option<bool>) -> Result<(), WasmError> {
        let v = self.pop_v(sh)?;
        let (lt, _) = sh.lane();
        let lty = self.ty(lt);
        let x = self.vins(Opcode::EXTRACT, lty, vec![v], Payload::Int(u64::from(lane)))?;
        let i32t = self.ty(Ty::I32);
        let x = match signed {
            Some(true) => self.b.ins().sext(i32t, x),
            Some(false) => self.b.ins().zext(i32t, x),
            None => x,
        };
        self.stack.push(x);
        Ok(())
    }

    /// `replace_lane`.
    fn replace_v(&mut self, sh: Shape, lane: u8) -> Result<(), WasmError> {
        let x = self.pop();
        let v = self.pop_v(sh)?;
        let (lt, _) = sh.lane();
        let x = match lt {
            Ty::I8 | Ty::I16 => {
                let t = self.ty(lt);
                self.b.ins().trunc(t, x)
            }
            _ => x,
        };
        let t = self.vty(sh)?;
        let r = self.vins(Opcode::INSERT, t, vec![v, x], Payload::Int(u64::from(lane)))?;
        self.push_v(r, sh)
    }

    /// The `i64` lanes of `v` (a `v128`) combined by `op`, compared with `want` (`any_true`:
    /// or, not 0; `all_true` of a mask: and, all ones), as wasm's `i32`.
    fn reduce_i64(
        &mut self,
        v: Inst,
        op: IntBinary,
        cc: IntCC,
        want: i64,
    ) -> Result<(), WasmError> {
        let v = self.as_shape(v, Shape::I64x2)?;
        let i64t = self.ty(Ty::I64);
        let lo = self.vins(Opcode::EXTRACT, i64t, vec![v], Payload::Int(0))?;
        let hi = self.vins(Opcode::EXTRACT, i64t, vec![v], Payload::Int(1))?;
        let x = self.b.ins().int_binary(op, lo, hi);
        let w = self.b.module().const_i64(want);
        let c = self.b.ins().icmp(cc, x, w);
        let i32t = self.ty(Ty::I32);
        let r = self.b.ins().zext(i32t, c);
        self.stack.push(r);
        Ok(())
    }

    /// `all_true`: every lane of `sh` nonzero.
    fn all_true(&mut self, sh: Shape) -> Result<(), WasmError> {
        let a = self.pop_v(sh)?;
        let t = self.vty(sh)?;
        let place = self.place();
        let zero = self.b.module().const_zero(t).at(place)?;
        let m = self.vins(
            Opcode::ICMP,
            t,
            vec![a, zero],
            Payload::Int(IntCC::Ne.code()),
        )?;
        self.reduce_i64(m, IntBinary::And, IntCC::Eq, -1)
    }

    /// `bitmask`: bit `k` of the `i32` is the sign bit of lane `k`.
    fn bitmask(&mut self, sh: Shape) -> Result<(), WasmError> {
        let a = self.pop_v(sh)?;
        let (lt, n) = sh.lane();
        let lty = self.ty(lt);
        let i32t = self.ty(Ty::I32);
        let mut acc = self.b.module().const_i32(0);
        for k in 0..n {
            let x = self.vins(Opcode::EXTRACT, lty, vec![a], Payload::Int(k))?;
            let top = self.int_like_ty(lt, u64::from(sh.bits() - 1));
            let s = self.b.ins().lshr(x, top);
            let s = match lt {
                Ty::I64 => self.b.ins().trunc(i32t, s),
                Ty::I32 => s,
                _ => self.b.ins().zext(i32t, s),
            };
            let kk = self.b.module().const_i32(k as i32);
            let s = self.b.ins().shl(s, kk);
            acc = self.b.ins().or(acc, s);
        }
        self.stack.push(acc);
        Ok(())
    }

    /// A constant `v` of integer type `t`.
    pub(crate) fn int_like_ty(&mut self, t: Ty, v: u64) -> Inst {
        let m = self.b.module();
        match t {
            Ty::I8 => {
                let ty = m.ty_i8();
                m.const_int(ty, v).unwrap_or(ty)
            }
            Ty::I16 => {
                let ty = m.ty_i16();
                m.const_int(ty, v).unwrap_or(ty)
            }
            Ty::I64 => m.const_i64(v as i64),
            _ => m.const_i32(v as i32),
        }
    }

    /// `v128.load` of shape-free bytes, or a scalar of `lane` loaded and placed by `place`.
    fn load_v(&mut self, arg: &MemArg) -> Result<(), WasmError> {
        let t = self.vty(Shape::I32x4)?;
        let v = self.mem_load(t, arg)?;
        self.stack.push(v);
        Ok(())
    }

    /// A scalar of `sh`'s lane loaded from memory.
    pub(crate) fn load_lane_value(&mut self, arg: &MemArg, sh: Shape) -> Result<Inst, WasmError> {
        let (lt, _) = sh.lane();
        let t = self.ty(lt);
        self.mem_load(t, arg)
    }

    /// `v128.loadN_splat`.
    fn load_splat(&mut self, arg: &MemArg, sh: Shape) -> Result<(), WasmError> {
        let x = self.load_lane_value(arg, sh)?;
        let t = self.vty(sh)?;
        let r = self.vins(Opcode::SPLAT, t, vec![x], Payload::None)?;
        self.push_v(r, sh)
    }

    /// `v128.loadN_zero`: lane 0 loaded, the others 0.
    fn load_zero(&mut self, arg: &MemArg, sh: Shape) -> Result<(), WasmError> {
        let x = self.load_lane_value(arg, sh)?;
        let t = self.vty(sh)?;
        let place = self.place();
        let zero = self.b.module().const_zero(t).at(place)?;
        let r = self.vins(Opcode::INSERT, t, vec![zero, x], Payload::Int(0))?;
        self.push_v(r, sh)
    }

    /// `v128.loadN_lane`: the vector with one lane loaded.
    fn load_lane(&mut self, arg: &MemArg, sh: Shape, lane: u8) -> Result<(), WasmError> {
        let v = self.pop_v(sh)?;
        let x = self.load_lane_value(arg, sh)?;
        let t = self.vty(sh)?;
        let r = self.vins(Opcode::INSERT, t, vec![v, x], Payload::Int(u64::from(lane)))?;
        self.push_v(r, sh)
    }

    /// `v128.storeN_lane`.
    fn store_lane(&mut self, arg: &MemArg, sh: Shape, lane: u8) -> Result<(), WasmError> {
        let v = self.pop_v(sh)?;
        let (lt, _) = sh.lane();
        let t = self.ty(lt);
        let x = self.vins(Opcode::EXTRACT, t, vec![v], Payload::Int(u64::from(lane)))?;
        let a = self.pop();
        self.mem_store(arg, a, x)
    }

    /// Translates a SIMD operator; `false` if `op` is not one this front end handles.
    pub(crate) fn simd_operator(&mut self, op: &Operator<'_>) -> Result<bool, WasmError> {
        use Operator as O;
        use Shape::*;
        let (ib, fb) = (
            |o: IntBinary| o.op().opcode(),
            |o: FloatBinary| o.op().opcode(),
        );
        let fu = |o: FloatUnary| o.op().opcode();
        match *op {
            O::V128Const { value } => {
                let b = value.bytes();
                let m = self.b.module();
                let lanes: Vec<Inst> = b
                    .chunks_exact(4)
                    .map(|c| m.const_i32(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                    .collect();
                let t = self.vty(I32x4)?;
                let place = self.place();
                let c = self.b.module().const_aggregate(t, &lanes).at(place)?;
                self.stack.push(c);
            }
            O::V128Load { memarg } => self.load_v(&memarg)?,
            O::V128Store { memarg } => {
                let v = self.pop();
                let a = self.pop();
                self.mem_store(&memarg, a, v)?;
            }
            O::V128Load8Splat { memarg } => self.load_splat(&memarg, I8x16)?,
            O::V128Load16Splat { memarg } => self.load_splat(&memarg, I16x8)?,
            O::V128Load32Splat { memarg } => self.load_splat(&memarg, I32x4)?,
            O::V128Load64Splat { memarg } => self.load_splat(&memarg, I64x2)?,
            O::V128Load32Zero { memarg } => self.load_zero(&memarg, I32x4)?,
            O::V128Load64Zero { memarg } => self.load_zero(&memarg, I64x2)?,
            O::V128Load8Lane { memarg, lane } => self.load_lane(&memarg, I8x16, lane)?,
            O::V128Load16Lane { memarg, lane } => self.load_lane(&memarg, I16x8, lane)?,
            O::V128Load32Lane { memarg, lane } => self.load_lane(&memarg, I32x4, lane)?,
            O::V128Load64Lane { memarg, lane } => self.load_lane(&memarg, I64x2, lane)?,
            O::V128Store8Lane { memarg, lane } => self.store_lane(&memarg, I8x16, lane)?,
            O::V128Store16Lane { memarg, lane } => self.store_lane(&memarg, I16x8, lane)?,
            O::V128Store32Lane { memarg, lane } => self.store_lane(&memarg, I32x4, lane)?,
            O::V128Store64Lane { memarg, lane } => self.store_lane(&memarg, I64x2, lane)?,
            O::I8x16Splat => self.splat_v(I8x16)?,
            O::I16x8Splat => self.splat_v(I16x8)?,
            O::I32x4Splat => self.splat_v(I32x4)?,
            O::I64x2Splat => self.splat_v(I64x2)?,
            O::F32x4Splat => self.splat_v(F32x4)?,
            O::F64x2Splat => self.splat_v(F64x2)?,
            O::I8x16ExtractLaneS { lane } => self.extract_v(I8x16, lane, Some(true))?,
            O::I8x16ExtractLaneU { lane } => self.extract_v(I8x16, lane, Some(false))?,
            O::I16x8ExtractLaneS { lane } => self.extract_v(I16x8, lane, Some(true))?,
            O::I16x8ExtractLaneU { lane } => self.extract_v(I16x8, lane, Some(false))?,
            O::I32x4ExtractLane { lane } => self.extract_v(I32x4, lane, None)?,
            O::I64x2ExtractLane { lane } => self.extract_v(I64x2, lane, None)?,
            O::F32x4ExtractLane { lane } => self.extract_v(F32x4, lane, None)?,
            O::F64x2ExtractLane { lane } => self.extract_v(F64x2, lane, None)?,
            O::I8x16ReplaceLane { lane } => self.replace_v(I8x16, lane)?,
            O::I16x8ReplaceLane { lane } => self.replace_v(I16x8, lane)?,
            O::I32x4ReplaceLane { lane } => self.replace_v(I32x4, lane)?,
            O::I64x2ReplaceLane { lane } => self.replace_v(I64x2, lane)?,
            O::F32x4ReplaceLane { lane } => self.replace_v(F32x4, lane)?,
            O::F64x2ReplaceLane { lane } => self.replace_v(F64x2, lane)?,
            O::I8x16Shuffle { lanes } => {
                let b = self.pop_v(I8x16)?;
                let a = self.pop_v(I8x16)?;
                let t = self.vty(I8x16)?;
                let r = self.vins(
                    Opcode::SHUFFLE,
                    t,
                    vec![a, b],
                    Payload::Bytes(lanes.to_vec().into()),
                )?;
                self.push_v(r, I8x16)?;
            }
            O::I8x16Swizzle => {
                self.vbinary(Opcode::SWIZZLE, I8x16, I8x16, Payload::None)?;
            }
            O::V128Not => {
                let a = self.pop();
                let ones = self.ones()?;
                let t = self.vty(I32x4)?;
                let r = self.vins(Opcode::XOR, t, vec![a, ones], Payload::None)?;
                self.stack.push(r);
            }
            O::V128And => self.vbinary(Opcode::AND, I32x4, I32x4, Payload::None)?,
            O::V128Or => self.vbinary(Opcode::OR, I32x4, I32x4, Payload::None)?,
            O::V128Xor => self.vbinary(Opcode::XOR, I32x4, I32x4, Payload::None)?,
            O::V128AndNot => {
                let b = self.pop();
                let a = self.pop();
                let ones = self.ones()?;
                let t = self.vty(I32x4)?;
                let nb = self.vins(Opcode::XOR, t, vec![b, ones], Payload::None)?;
                let r = self.vins(Opcode::AND, t, vec![a, nb], Payload::None)?;
                self.stack.push(r);
            }
            O::V128Bitselect => {
                let m = self.pop();
                let b = self.pop();
                let a = self.pop();
                let r = self.bitselect(a, b, m)?;
                self.stack.push(r);
            }
            O::V128AnyTrue => {
                let v = self.pop();
                self.reduce_i64(v, IntBinary::Or, IntCC::Ne, 0)?;
            }
            O::I8x16AllTrue => self.all_true(I8x16)?,
            O::I16x8AllTrue => self.all_true(I16x8)?,
            O::I32x4AllTrue => self.all_true(I32x4)?,
            O::I64x2AllTrue => self.all_true(I64x2)?,
            O::I8x16Bitmask => self.bitmask(I8x16)?,
            O::I16x8Bitmask => self.bitmask(I16x8)?,
            O::I32x4Bitmask => self.bitmask(I32x4)?,
            O::I64x2Bitmask => self.bitmask(I64x2)?,
            O::I8x16Eq => self.icmp_v(I8x16, IntCC::Eq)?,
            O::I8x16Ne => self.icmp_v(I8x16, IntCC::Ne)?,
            O::I8x16LtS => self.icmp_v(I8x16, IntCC::Slt)?,
            O::I8x16LtU => self.icmp_v(I8x16, IntCC::Ult)?,
            O::I8x16GtS => self.icmp_v(I8x16, IntCC::Sgt)?,
            O::I8x16GtU => self.icmp_v(I8x16, IntCC::Ugt)?,
            O::I8x16LeS => self.icmp_v(I8x16, IntCC::Sle)?,
            O::I8x16LeU => self.icmp_v(I8x16, IntCC::Ule)?,
            O::I8x16GeS => self.icmp_v(I8x16, IntCC::Sge)?,
            O::I8x16GeU => self.icmp_v(I8x16, IntCC::Uge)?,
            O::I16x8Eq => self.icmp_v(I16x8, IntCC::Eq)?,
            O::I16x8Ne => self.icmp_v(I16x8, IntCC::Ne)?,
            O::I16x8LtS => self.icmp_v(I16x8, IntCC::Slt)?,
            O::I16x8LtU => self.icmp_v(I16x8, IntCC::Ult)?,
            O::I16x8GtS => self.icmp_v(I16x8, IntCC::Sgt)?,
            O::I16x8GtU => self.icmp_v(I16x8, IntCC::Ugt)?,
            O::I16x8LeS => self.icmp_v(I16x8, IntCC::Sle)?,
            O::I16x8LeU => self.icmp_v(I16x8, IntCC::Ule)?,
            O::I16x8GeS => self.icmp_v(I16x8, IntCC::Sge)?,
            O::I16x8GeU => self.icmp_v(I16x8, IntCC::Uge)?,
            O::I32x4Eq => self.icmp_v(I32x4, IntCC::Eq)?,
            O::I32x4Ne => self.icmp_v(I32x4, IntCC::Ne)?,
            O::I32x4LtS => self.icmp_v(I32x4, IntCC::Slt)?,
            O::I32x4LtU => self.icmp_v(I32x4, IntCC::Ult)?,
            O::I32x4GtS => self.icmp_v(I32x4, IntCC::Sgt)?,
            O::I32x4GtU => self.icmp_v(I32x4, IntCC::Ugt)?,
            O::I32x4LeS => self.icmp_v(I32x4, IntCC::Sle)?,
            O::I32x4LeU => self.icmp_v(I32x4, IntCC::Ule)?,
            O::I32x4GeS => self.icmp_v(I32x4, IntCC::Sge)?,
            O::I32x4GeU => self.icmp_v(I32x4, IntCC::Uge)?,
            O::I64x2Eq => self.icmp_v(I64x2, IntCC::Eq)?,
            O::I64x2Ne => self.icmp_v(I64x2, IntCC::Ne)?,
            O::I64x2LtS => self.icmp_v(I64x2, IntCC::Slt)?,
            O::I64x2GtS => self.icmp_v(I64x2, IntCC::Sgt)?,
            O::I64x2LeS => self.icmp_v(I64x2, IntCC::Sle)?,
            O::I64x2GeS => self.icmp_v(I64x2, IntCC::Sge)?,
            O::F32x4Eq => self.fcmp_v(F32x4, FloatCC::Oeq)?,
            O::F32x4Ne => self.fcmp_v(F32x4, FloatCC::Une)?,
            O::F32x4Lt => self.fcmp_v(F32x4, FloatCC::Olt)?,
            O::F32x4Gt => self.fcmp_v(F32x4, FloatCC::Ogt)?,
            O::F32x4Le => self.fcmp_v(F32x4, FloatCC::Ole)?,
            O::F32x4Ge => self.fcmp_v(F32x4, FloatCC::Oge)?,
            O::F64x2Eq => self.fcmp_v(F64x2, FloatCC::Oeq)?,
            O::F64x2Ne => self.fcmp_v(F64x2, FloatCC::Une)?,
            O::F64x2Lt => self.fcmp_v(F64x2, FloatCC::Olt)?,
            O::F64x2Gt => self.fcmp_v(F64x2, FloatCC::Ogt)?,
            O::F64x2Le => self.fcmp_v(F64x2, FloatCC::Ole)?,
            O::F64x2Ge => self.fcmp_v(F64x2, FloatCC::Oge)?,
            O::I8x16Add => self.vbinary(ib(IntBinary::Iadd), I8x16, I8x16, Payload::None)?,
            O::I16x8Add => self.vbinary(ib(IntBinary::Iadd), I16x8, I16x8, Payload::None)?,
            O::I32x4Add => self.vbinary(ib(IntBinary::Iadd), I32x4, I32x4, Payload::None)?,
            O::I64x2Add => self.vbinary(ib(IntBinary::Iadd), I64x2, I64x2, Payload::None)?,
            O::I8x16Sub => self.vbinary(ib(IntBinary::Isub), I8x16, I8x16, Payload::None)?,
            O::I16x8Sub => self.vbinary(ib(IntBinary::Isub), I16x8, I16x8, Payload::None)?,
            O::I32x4Sub => self.vbinary(ib(IntBinary::Isub), I32x4, I32x4, Payload::None)?,
            O::I64x2Sub => self.vbinary(ib(IntBinary::Isub), I64x2, I64x2, Payload::None)?,
            O::I16x8Mul => self.vbinary(ib(IntBinary::Imul), I16x8, I16x8, Payload::None)?,
            O::I32x4Mul => self.vbinary(ib(IntBinary::Imul), I32x4, I32x4, Payload::None)?,
            O::I64x2Mul => self.vbinary(ib(IntBinary::Imul), I64x2, I64x2, Payload::None)?,
            O::I8x16Neg | O::I16x8Neg | O::I32x4Neg | O::I64x2Neg => {
                let sh = match *op {
                    O::I8x16Neg => I8x16,
                    O::I16x8Neg => I16x8,
                    O::I32x4Neg => I32x4,
                    _ => I64x2,
                };
                let a = self.pop_v(sh)?;
                let t = self.vty(sh)?;
                let place = self.place();
                let zero = self.b.module().const_zero(t).at(place)?;
                let r = self.vins(Opcode::ISUB, t, vec![zero, a], Payload::None)?;
                self.push_v(r, sh)?;
            }
            O::I8x16Abs => self.abs_v(I8x16)?,
            O::I16x8Abs => self.abs_v(I16x8)?,
            O::I32x4Abs => self.abs_v(I32x4)?,
            O::I64x2Abs => self.abs_v(I64x2)?,
            O::I8x16Popcnt => self.vunary(IntUnary::Popcnt.op().opcode(), I8x16, I8x16)?,
            O::I8x16Shl => self.shift_v(I8x16, IntBinary::Shl)?,
            O::I16x8Shl => self.shift_v(I16x8, IntBinary::Shl)?,
            O::I32x4Shl => self.shift_v(I32x4, IntBinary::Shl)?,
            O::I64x2Shl => self.shift_v(I64x2, IntBinary::Shl)?,
            O::I8x16ShrS => self.shift_v(I8x16, IntBinary::Ashr)?,
            O::I16x8ShrS => self.shift_v(I16x8, IntBinary::Ashr)?,
            O::I32x4ShrS => self.shift_v(I32x4, IntBinary::Ashr)?,
            O::I64x2ShrS => self.shift_v(I64x2, IntBinary::Ashr)?,
            O::I8x16ShrU => self.shift_v(I8x16, IntBinary::Lshr)?,
            O::I16x8ShrU => self.shift_v(I16x8, IntBinary::Lshr)?,
            O::I32x4ShrU => self.shift_v(I32x4, IntBinary::Lshr)?,
            O::I64x2ShrU => self.shift_v(I64x2, IntBinary::Lshr)?,
            O::I8x16MinS => self.pick_int(I8x16, IntCC::Slt)?,
            O::I8x16MinU => self.pick_int(I8x16, IntCC::Ult)?,
            O::I8x16MaxS => self.pick_int(I8x16, IntCC::Sgt)?,
            O::I8x16MaxU => self.pick_int(I8x16, IntCC::Ugt)?,
            O::I16x8MinS => self.pick_int(I16x8, IntCC::Slt)?,
            O::I16x8MinU => self.pick_int(I16x8, IntCC::Ult)?,
            O::I16x8MaxS => self.pick_int(I16x8, IntCC::Sgt)?,
            O::I16x8MaxU => self.pick_int(I16x8, IntCC::Ugt)?,
            O::I32x4MinS => self.pick_int(I32x4, IntCC::Slt)?,
            O::I32x4MinU => self.pick_int(I32x4, IntCC::Ult)?,
            O::I32x4MaxS => self.pick_int(I32x4, IntCC::Sgt)?,
            O::I32x4MaxU => self.pick_int(I32x4, IntCC::Ugt)?,
            O::F32x4Add => self.vbinary(fb(FloatBinary::Fadd), F32x4, F32x4, Payload::None)?,
            O::F32x4Sub => self.vbinary(fb(FloatBinary::Fsub), F32x4, F32x4, Payload::None)?,
            O::F32x4Mul => self.vbinary(fb(FloatBinary::Fmul), F32x4, F32x4, Payload::None)?,
            O::F32x4Div => self.vbinary(fb(FloatBinary::Fdiv), F32x4, F32x4, Payload::None)?,
            O::F32x4Min => self.vbinary(fb(FloatBinary::Fmin), F32x4, F32x4, Payload::None)?,
            O::F32x4Max => self.vbinary(fb(FloatBinary::Fmax), F32x4, F32x4, Payload::None)?,
            O::F64x2Add => self.vbinary(fb(FloatBinary::Fadd), F64x2, F64x2, Payload::None)?,
            O::F64x2Sub => self.vbinary(fb(FloatBinary::Fsub), F64x2, F64x2, Payload::None)?,
            O::F64x2Mul => self.vbinary(fb(FloatBinary::Fmul), F64x2, F64x2, Payload::None)?,
            O::F64x2Div => self.vbinary(fb(FloatBinary::Fdiv), F64x2, F64x2, Payload::None)?,
            O::F64x2Min => self.vbinary(fb(FloatBinary::Fmin), F64x2, F64x2, Payload::None)?,
            O::F64x2Max => self.vbinary(fb(FloatBinary::Fmax), F64x2, F64x2, Payload::None)?,
            O::F32x4PMin => self.pminmax(F32x4, false)?,
            O::F32x4PMax => self.pminmax(F32x4, true)?,
            O::F64x2PMin => self.pminmax(F64x2, false)?,
            O::F64x2PMax => self.pminmax(F64x2, true)?,
            O::F32x4Neg => self.vunary(fu(FloatUnary::Fneg), F32x4, F32x4)?,
            O::F32x4Abs => self.vunary(fu(FloatUnary::Fabs), F32x4, F32x4)?,
            O::F32x4Sqrt => self.vunary(fu(FloatUnary::Fsqrt), F32x4, F32x4)?,
            O::F32x4Ceil => self.vunary(fu(FloatUnary::Fceil), F32x4, F32x4)?,
            O::F32x4Floor => self.vunary(fu(FloatUnary::Ffloor), F32x4, F32x4)?,
            O::F32x4Trunc => self.vunary(fu(FloatUnary::Ftrunc), F32x4, F32x4)?,
            O::F32x4Nearest => self.vunary(fu(FloatUnary::Fnearest), F32x4, F32x4)?,
            O::F64x2Neg => self.vunary(fu(FloatUnary::Fneg), F64x2, F64x2)?,
            O::F64x2Abs => self.vunary(fu(FloatUnary::Fabs), F64x2, F64x2)?,
            O::F64x2Sqrt => self.vunary(fu(FloatUnary::Fsqrt), F64x2, F64x2)?,
            O::F64x2Ceil => self.vunary(fu(FloatUnary::Fceil), F64x2, F64x2)?,
            O::F64x2Floor => self.vunary(fu(FloatUnary::Ffloor), F64x2, F64x2)?,
            O::F64x2Trunc => self.vunary(fu(FloatUnary::Ftrunc), F64x2, F64x2)?,
            O::F64x2Nearest => self.vunary(fu(FloatUnary::Fnearest), F64x2, F64x2)?,
            O::F32x4ConvertI32x4S => self.vunary(Conversion::Sitofp.op().opcode(), I32x4, F32x4)?,
            O::F32x4ConvertI32x4U => self.vunary(Conversion::Uitofp.op().opcode(), I32x4, F32x4)?,
            O::I32x4TruncSatF32x4S => {
                self.vunary(Conversion::Fptosi.op().opcode(), F32x4, I32x4)?
            }
            O::I32x4TruncSatF32x4U => {
                self.vunary(Conversion::Fptoui.op().opcode(), F32x4, I32x4)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
