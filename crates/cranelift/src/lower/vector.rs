//! Vectors (spec/ir.md, "Vectors") in Cranelift's 128-bit vector registers: `vec T N` of 16
//! bytes is one value of type `i8x16`, `i16x8`, `i32x4`, `i64x2`, `f32x4` or `f64x2`
//! ([`crate::types`]); other shapes are refused where a value of one is needed.
//!
//! Lane-wise operations map to Cranelift's vector instructions, with the spec's semantics
//! where they differ: shift amounts are masked to the lane width, float results that are NaN
//! become the canonical NaN lane by lane (when a use can see them, [`super::nan`]), and a
//! comparison yields Cranelift's lane masks (all ones or zero), which is the spec's result.
//! `shuffle` is Cranelift's byte shuffle of the two operands seen as `i8x16`. What Cranelift
//! has no instruction for (vector division and remainder, rotates, `clz`/`ctz`, `frem`,
//! `fcopysign`, conversions between lanes of different sizes) is refused with
//! [`BackendError::Unsupported`] naming the instruction.

use cranelift_codegen::ir::condcodes::FloatCC as CFloatCC;
use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, Value, types as clt};
use cranelift_module::Module as ClModule;
use irkit_backend::BackendError;
use irkit_core::{
    Conversion, FloatBinary, FloatCC, FloatUnary, Inst, IntBinary, IntCC, IntUnary, Op, Opcode,
};

use super::func::FnLower;
use crate::error::unsupported;
use crate::place::Place;
use crate::types::{ClifType, Lane, Scalar};

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// The vector kind of value `v`'s type, if it is a vector held in a register.
    fn vector_of(&self, v: Inst) -> Option<(Lane, u16)> {
        let t = self.ctx.m.value_type(v)?;
        match self.ctx.layouts.scalar(t)? {
            Scalar::Vector(lane, n) => Some((lane, n)),
            _ => None,
        }
    }

    /// Whether `inst` (of opcode `op`) works on vectors: `splat`, `shuffle`, or a lane-wise
    /// operation, `extract` or `insert` whose operand 0 is a vector.
    pub(crate) fn is_vector_inst(&self, inst: Inst, op: Op) -> bool {
        let lanewise = op.is_lanewise() || matches!(op, Op::Extract | Op::Insert);
        let m = self.ctx.m;
        let vector_type = |v: Inst| m.value_type(v).is_some_and(|t| m.opcode(t) == Opcode::VEC);
        matches!(op, Op::Splat | Op::Shuffle | Op::Swizzle)
            || (lanewise && m.operands(inst).first().is_some_and(|&o| vector_type(o)))
    }

    /// Lowers vector instruction `inst` ([`FnLower::is_vector_inst`]).
    pub(crate) fn vector(
        &mut self,
        inst: Inst,
        op: Op,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let ops = m.operands(inst);
        let refuse = |what: String| unsupported(place.render(m), what);
        let rty = m
            .ty(inst)
            .ok_or_else(|| BackendError::Malformed(format!("{inst} has no type")))?;
        let rs = self.ctx.layouts.scalar(rty);
        let held = |v: Inst| {
            let t = m.value_type(v).unwrap_or(v);
            match self.ctx.leaves(t) {
                Ok(_) => Ok(()),
                Err(what) => Err(unsupported(place.render(m), what)),
            }
        };
        held(ops[0])?;
        held(rty)?;
        let k = m.payload(inst).as_int().unwrap_or(0);
        match op {
            Op::Splat => {
                let x = self.val1(ops[0])?;
                let ty = self.vec_clif(rs)?;
                return Ok(self.b.ins().splat(ty, x));
            }
            Op::Extract => {
                let v = self.val1(ops[0])?;
                let (lane, _) = self
                    .vector_of(ops[0])
                    .ok_or_else(|| self.malformed("extract"))?;
                let x = self.b.ins().extractlane(v, k as u8);
                let _ = lane;
                return Ok(x);
            }
            Op::Insert => {
                let v = self.val1(ops[0])?;
                let x = self.val1(ops[1])?;
                return Ok(self.b.ins().insertlane(v, x, k as u8));
            }
            Op::Shuffle => return self.shuffle(inst, ops, rs),
            // Cranelift's `swizzle` is of bytes, out-of-range indices giving 0, as the spec.
            Op::Swizzle => {
                let byte = Some((Lane::Int(8), 16));
                if self.vector_of(ops[0]) != byte || self.vector_of(ops[1]) != byte {
                    return Err(refuse(
                        "`swizzle` of other than vec i8 16 by vec i8 16 (not lowered)".into(),
                    ));
                }
                let a = self.val1(ops[0])?;
                let idx = self.val1(ops[1])?;
                return Ok(self.b.ins().swizzle(a, idx));
            }
            _ => {}
        }
        let (lane, n) = self
            .vector_of(ops[0])
            .ok_or_else(|| self.malformed("a vector operand"))?;
        let a = self.val1(ops[0])?;
        if let Some(c) = op.conversion() {
            return self.vector_conversion(c, a, lane, rs, &refuse);
        }
        if let Some(u) = op.int_unary() {
            return match u {
                IntUnary::Popcnt => Ok(self.b.ins().popcnt(a)),
                IntUnary::Clz | IntUnary::Ctz => Err(refuse(format!(
                    "`{op}` of a vector (no Cranelift vector instruction)"
                ))),
            };
        }
        if let Some(u) = op.float_unary() {
            let i = self.b.ins();
            let r = match u {
                FloatUnary::Fneg => return Ok(i.fneg(a)),
                FloatUnary::Fabs => return Ok(i.fabs(a)),
                FloatUnary::Fsqrt => i.sqrt(a),
                FloatUnary::Fceil => i.ceil(a),
                FloatUnary::Ffloor => i.floor(a),
                FloatUnary::Ftrunc => i.trunc(a),
                FloatUnary::Fnearest => i.nearest(a),
            };
            return Ok(self.canonicalize_lanes(inst, r, lane, n));
        }
        let b = self.val1(ops[1])?;
        if let Some(bin) = op.int_binary() {
            use IntBinary as B;
            let i = self.b.ins();
            return Ok(match bin {
                B::Iadd => i.iadd(a, b),
                B::Isub => i.isub(a, b),
                B::Imul => i.imul(a, b),
                B::And => i.band(a, b),
                B::Or => i.bor(a, b),
                B::Xor => i.bxor(a, b),
                B::Shl | B::Lshr | B::Ashr => {
                    // The amount modulo the lane width, as the spec says.
                    let amt = i.band_imm_u(b, i64::from(lane.bits() - 1));
                    let i = self.b.ins();
                    match bin {
                        B::Shl => i.ishl(a, amt),
                        B::Lshr => i.ushr(a, amt),
                        _ => i.sshr(a, amt),
                    }
                }
                B::Rotl | B::Rotr | B::Sdiv | B::Udiv | B::Srem | B::Urem => {
                    return Err(refuse(format!(
                        "`{op}` of a vector (no Cranelift vector instruction)"
                    )));
                }
            });
        }
        if let Some(bin) = op.float_binary() {
            use FloatBinary as B;
            let i = self.b.ins();
            let r = match bin {
                B::Fadd => i.fadd(a, b),
                B::Fsub => i.fsub(a, b),
                B::Fmul => i.fmul(a, b),
                B::Fdiv => i.fdiv(a, b),
                // wasm's rules lane by lane: a NaN if either operand is one, -0 below +0.
                B::Fmin => i.fmin(a, b),
                B::Fmax => i.fmax(a, b),
                B::Frem | B::Fcopysign => {
                    return Err(refuse(format!(
                        "`{op}` of a vector (no Cranelift vector instruction)"
                    )));
                }
            };
            return Ok(self.canonicalize_lanes(inst, r, lane, n));
        }
        let code = m.payload(inst).as_int().unwrap_or(u64::MAX);
        let bad = || BackendError::Malformed(format!("{inst}: bad condition code {code}"));
        match op {
            Op::Icmp => {
                let c = super::arith::clif_int_cc(IntCC::from_code(code).ok_or_else(bad)?);
                Ok(self.b.ins().icmp(c, a, b))
            }
            Op::Fcmp => {
                let mask_ty = self.vec_clif(rs)?;
                let cc = FloatCC::from_code(code).ok_or_else(bad)?;
                let Some(c) = super::arith::clif_float_cc(cc) else {
                    let fill = if cc == FloatCC::True { 0xff } else { 0 };
                    return Ok(self.vconst(Scalar::Vector(Lane::Int(8), 16), &[fill; 16]))
                        .map(|v| self.b.ins().bitcast(mask_ty, little(), v));
                };
                Ok(self.b.ins().fcmp(c, a, b))
            }
            _ => Err(self.malformed(&format!("{op} is not a vector operation"))),
        }
    }

    /// The Cranelift vector type of result kind `rs`.
    fn vec_clif(&self, rs: Option<Scalar>) -> Result<ir::Type, BackendError> {
        match rs {
            Some(s @ Scalar::Vector(..)) => Ok(s.clif()),
            _ => Err(self.malformed("a vector result type was expected")),
        }
    }

    /// A vector constant of kind `s` holding `bytes` (lane 0 first, little-endian lanes).
    pub(crate) fn vconst(&mut self, s: Scalar, bytes: &[u8; 16]) -> Value {
        let c = self
            .b
            .func
            .dfg
            .constants
            .insert(ir::ConstantData::from(bytes.as_slice()));
        self.b.ins().vconst(s.clif(), c)
    }

    /// The constant `const_aggregate` `c` of vector type `ty`.
    pub(crate) fn vector_const(&mut self, c: Inst, ty: Inst) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let s = self
            .ctx
            .layouts
            .scalar(ty)
            .ok_or_else(|| self.malformed(&self.ctx.leaves(ty).err().unwrap_or_default()))?;
        let Scalar::Vector(lane, _) = s else {
            return Err(self.malformed("a vector constant of another type"));
        };
        let size = lane.size() as usize;
        let mut bytes = [0u8; 16];
        for (k, &e) in m.operands(c).iter().enumerate() {
            let bits = match m.payload(e) {
                irkit_core::Payload::Int(b) | irkit_core::Payload::Float(b) => *b,
                _ => 0, // `const_zero`
            };
            let at = k * size;
            let slot = bytes
                .get_mut(at..at + size)
                .ok_or_else(|| self.malformed("a vector constant with too many lanes"))?;
            slot.copy_from_slice(&bits.to_le_bytes()[..size]);
        }
        Ok(self.vconst(s, &bytes))
    }

    /// `shuffle a, b, [k…]`: Cranelift's byte shuffle of `a` and `b` as `i8x16`.
    fn shuffle(
        &mut self,
        inst: Inst,
        ops: &[Inst],
        rs: Option<Scalar>,
    ) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let (lane, _) = self
            .vector_of(ops[0])
            .ok_or_else(|| self.malformed("shuffle of a non-vector"))?;
        let idx = m.payload(inst).as_bytes().unwrap_or(&[]);
        let size = lane.size() as u8;
        let mut bytes = [0u8; 16];
        if idx.len() * usize::from(size) != 16 {
            return Err(self.malformed("a shuffle result that is not 128 bits"));
        }
        for (k, &x) in idx.iter().enumerate() {
            for j in 0..size {
                bytes[k * usize::from(size) + usize::from(j)] = x * size + j;
            }
        }
        let rty = self.vec_clif(rs)?;
        let a = self.val1(ops[0])?;
        let b = self.val1(ops[1])?;
        let (a, b) = (self.as_bytes(a), self.as_bytes(b));
        let imm = self
            .b
            .func
            .dfg
            .immediates
            .push(ir::ConstantData::from(bytes.as_slice()));
        let r = self.b.ins().shuffle(a, b, imm);
        Ok(self.b.ins().bitcast(rty, little(), r))
    }

    /// `v` seen as `i8x16`.
    fn as_bytes(&mut self, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == clt::I8X16 {
            v
        } else {
            self.b.ins().bitcast(clt::I8X16, little(), v)
        }
    }

    /// A lane-wise conversion of `a` (lanes `lane`) to kind `rs`.
    fn vector_conversion(
        &mut self,
        c: Conversion,
        a: Value,
        lane: Lane,
        rs: Option<Scalar>,
        refuse: &dyn Fn(String) -> BackendError,
    ) -> Result<Value, BackendError> {
        let rty = self.vec_clif(rs)?;
        let Some(Scalar::Vector(rlane, _)) = rs else {
            return Err(self.malformed("a vector conversion to a non-vector"));
        };
        let i = self.b.ins();
        Ok(match (c, lane, rlane) {
            (Conversion::Bitcast, _, _) => i.bitcast(rty, little(), a),
            (Conversion::Sitofp, Lane::Int(32), Lane::F32) => i.fcvt_from_sint(rty, a),
            (Conversion::Uitofp, Lane::Int(32), Lane::F32) => i.fcvt_from_uint(rty, a),
            // Saturating, NaN to 0, as the scalar conversions.
            (Conversion::Fptosi, Lane::F32, Lane::Int(32)) => i.fcvt_to_sint_sat(rty, a),
            (Conversion::Fptoui, Lane::F32, Lane::Int(32)) => i.fcvt_to_uint_sat(rty, a),
            _ => {
                return Err(refuse(format!(
                    "`{c}` from {} lanes to {} lanes (not lowered for vectors)",
                    lane.scalar().clif(),
                    rlane.scalar().clif()
                )));
            }
        })
    }

    /// `v`, the result of `inst`, with each NaN lane the canonical NaN; just `v` when no use
    /// of `inst` can see a NaN's bits.
    fn canonicalize_lanes(&mut self, inst: Inst, v: Value, lane: Lane, n: u16) -> Value {
        if !self.nan_observed.contains(&inst) {
            return v;
        }
        let vty = Scalar::Vector(lane, n);
        let canon: u64 = if lane == Lane::F32 {
            0x7fc0_0000
        } else {
            0x7ff8_0000_0000_0000
        };
        let size = lane.size() as usize;
        let mut bytes = [0u8; 16];
        for c in bytes.chunks_exact_mut(size) {
            c.copy_from_slice(&canon.to_le_bytes()[..size]);
        }
        let canon = self.vconst(vty, &bytes);
        let nan = self.b.ins().fcmp(CFloatCC::Unordered, v, v);
        let nan = self.b.ins().bitcast(vty.clif(), little(), nan);
        self.b.ins().bitselect(nan, canon, v)
    }
}

/// The flags of a lane-order bitcast between vector types (lanes in memory order).
fn little() -> MemFlagsData {
    MemFlagsData::new().with_endianness(ir::Endianness::Little)
}
