//! Arithmetic, comparisons and conversions with spec/ir.md's exact semantics, where Cranelift's
//! instructions differ:
//!
//! * `i1` lives in an `I8` holding 0 or 1: results that can leave that range are masked, and
//!   signed interpretations negate it first (the `i1` value 1 is −1);
//! * division checks the divisor for zero and `MIN / -1` first and branches to the trap;
//! * shifts: Cranelift masks the amount to the type's width like the spec, except for `i1`
//!   (held in 8 bits), whose shifts return the value unchanged;
//! * float results that are NaN are replaced by the canonical NaN (except those of the bit
//!   operations `fneg`, `fabs` and `fcopysign`); `frem` calls C's `fmod`;
//! * bit counts and rotates of `i1` are computed on its 0/1 directly;
//! * float-to-integer conversions saturate (`fcvt_to_*_sat` to 64 bits, then clamped).

use cranelift_codegen::ir::condcodes::{FloatCC as CFloatCC, IntCC as CIntCC};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types as clt};
use cranelift_module::Module as ClModule;
use irkit_backend::{BackendError, trap_kinds};
use irkit_core::{FloatCC, Inst, IntCC, Op};

use super::func::FnLower;
use crate::place::Place;
use crate::types::{ClifType, Scalar};

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// An integer or float binary operation or a conversion.
    pub(crate) fn arith(
        &mut self,
        inst: Inst,
        op: Op,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let ops = m.operands(inst);
        let rty = m
            .ty(inst)
            .ok_or_else(|| BackendError::Malformed(format!("{inst} has no type")))?;
        let rs = self.scalar(rty)?;
        if op.opcode().is_conversion() {
            let sty = m
                .value_type(ops[0])
                .ok_or_else(|| BackendError::Malformed(format!("{inst}: operand type")))?;
            let ss = self.scalar(sty)?;
            let v = self.val1(ops[0])?;
            return self.convert(op, v, ss, rs);
        }
        let a = self.val1(ops[0])?;
        if op.opcode().is_int_unary() || op.opcode().is_float_unary() {
            return self.unop(op, rs, a);
        }
        let b = self.val1(ops[1])?;
        match rs {
            Scalar::Int(w) => self.int_binop(op, w, a, b, place),
            Scalar::F32 | Scalar::F64 => self.float_binop(op, rs, a, b),
            Scalar::Ptr => Err(BackendError::Malformed(format!(
                "{inst}: arithmetic on ptr"
            ))),
        }
    }

    fn int_binop(
        &mut self,
        op: Op,
        w: u32,
        a: Value,
        b: Value,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let i = self.b.ins();
        let r = match op {
            Op::Iadd => i.iadd(a, b),
            Op::Isub => i.isub(a, b),
            Op::Imul => i.imul(a, b),
            Op::And => i.band(a, b),
            Op::Or => i.bor(a, b),
            Op::Xor => i.bxor(a, b),
            Op::Shl | Op::Lshr | Op::Ashr | Op::Rotl | Op::Rotr if w == 1 => {
                return Ok(a);
            }
            // Cranelift rotates by the amount modulo the width, as the spec does.
            Op::Rotl => i.rotl(a, b),
            Op::Rotr => i.rotr(a, b),
            Op::Shl => i.ishl(a, b),
            Op::Lshr => i.ushr(a, b),
            Op::Ashr => i.sshr(a, b),
            Op::Sdiv | Op::Udiv | Op::Srem | Op::Urem => {
                return self.division(op, w, a, b, place);
            }
            _ => return Err(not_in_group(op, "an integer operation")),
        };
        Ok(if w == 1 && matches!(op, Op::Iadd | Op::Isub) {
            self.b.ins().band_imm_u(r, 1)
        } else {
            r
        })
    }

    /// Division and remainder: trap on a zero divisor and on signed `MIN / -1`.
    fn division(
        &mut self,
        op: Op,
        w: u32,
        a: Value,
        b: Value,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let zero = self.b.ins().icmp_imm_s(CIntCC::Equal, b, 0);
        self.trap_if(zero, trap_kinds::DIVISION_BY_ZERO, place)?;
        let signed = matches!(op, Op::Sdiv | Op::Srem);
        let (a, b) = if signed && w == 1 {
            (self.b.ins().ineg(a), self.b.ins().ineg(b))
        } else {
            (a, b)
        };
        if signed {
            let ty = Scalar::Int(w).clif();
            let min: i64 = if w == 1 {
                -1
            } else {
                i64::MIN >> (64 - ty.bits())
            };
            let is_min = self.b.ins().icmp_imm_s(CIntCC::Equal, a, min);
            let is_m1 = self.b.ins().icmp_imm_s(CIntCC::Equal, b, -1);
            let both = self.b.ins().band(is_min, is_m1);
            self.trap_if(both, trap_kinds::INTEGER_OVERFLOW, place)?;
        }
        let i = self.b.ins();
        let r = match op {
            Op::Sdiv => i.sdiv(a, b),
            Op::Udiv => i.udiv(a, b),
            Op::Srem => i.srem(a, b),
            Op::Urem => i.urem(a, b),
            _ => return Err(not_in_group(op, "a division")),
        };
        Ok(if w == 1 {
            self.b.ins().band_imm_u(r, 1)
        } else {
            r
        })
    }

    /// A unary operation: a bit count (an `i1` lives in an `I8` holding 0 or 1, so its
    /// `clz` and `ctz` are `1 - x` and its `popcnt` is `x`) or a float unary operation
    /// (`fneg` and `fabs` are bit operations that keep a NaN's payload, the others give the
    /// canonical NaN).
    fn unop(&mut self, op: Op, s: Scalar, a: Value) -> Result<Value, BackendError> {
        let i = self.b.ins();
        Ok(match op {
            Op::Clz | Op::Ctz if s == Scalar::Int(1) => i.bxor_imm_u(a, 1),
            Op::Popcnt if s == Scalar::Int(1) => a,
            Op::Clz => i.clz(a),
            Op::Ctz => i.ctz(a),
            Op::Popcnt => i.popcnt(a),
            Op::Fneg => i.fneg(a),
            Op::Fabs => i.fabs(a),
            Op::Fsqrt | Op::Fceil | Op::Ffloor | Op::Ftrunc | Op::Fnearest => {
                let r = match op {
                    Op::Fsqrt => i.sqrt(a),
                    Op::Fceil => i.ceil(a),
                    Op::Ffloor => i.floor(a),
                    Op::Ftrunc => i.trunc(a),
                    _ => i.nearest(a),
                };
                self.canonicalize(r, s)
            }
            _ => return Err(not_in_group(op, "a unary operation")),
        })
    }

    fn float_binop(
        &mut self,
        op: Op,
        s: Scalar,
        a: Value,
        b: Value,
    ) -> Result<Value, BackendError> {
        let r = match op {
            // A bit operation: a NaN keeps its payload.
            Op::Fcopysign => return Ok(self.b.ins().fcopysign(a, b)),
            // wasm's rules: a NaN if either operand is one, -0 below +0.
            Op::Fmin => self.b.ins().fmin(a, b),
            Op::Fmax => self.b.ins().fmax(a, b),
            Op::Fadd => self.b.ins().fadd(a, b),
            Op::Fsub => self.b.ins().fsub(a, b),
            Op::Fmul => self.b.ins().fmul(a, b),
            Op::Fdiv => self.b.ins().fdiv(a, b),
            Op::Frem => {
                let id = if s == Scalar::F32 {
                    self.ctx.rt.fmodf
                } else {
                    self.ctx.rt.fmod
                };
                let fr = self.ctx.func_in_func(id, self.b.func);
                let call = self.b.ins().call(fr, &[a, b]);
                self.b.inst_results(call)[0]
            }
            _ => return Err(not_in_group(op, "a float operation")),
        };
        Ok(self.canonicalize(r, s))
    }

    /// `v`, or the canonical NaN of its type if `v` is a NaN.
    fn canonicalize(&mut self, v: Value, s: Scalar) -> Value {
        let nan = self.b.ins().fcmp(CFloatCC::Unordered, v, v);
        let canon = if s == Scalar::F32 {
            self.b.ins().f32const(f32::from_bits(0x7fc0_0000))
        } else {
            self.b.ins().f64const(f64::from_bits(0x7ff8_0000_0000_0000))
        };
        self.b.ins().select(nan, canon, v)
    }

    /// Sign-extends integer `v` of kind `s` to `to` (an `i1` 1 is −1).
    pub(crate) fn sext_to(&mut self, v: Value, s: Scalar, to: Type) -> Value {
        let v = if s == Scalar::Int(1) {
            self.b.ins().ineg(v)
        } else {
            v
        };
        if s.clif() == to {
            v
        } else if s.clif().bits() < to.bits() {
            self.b.ins().sextend(to, v)
        } else {
            self.b.ins().ireduce(to, v)
        }
    }

    /// Zero-extends (or truncates) integer `v` of kind `s` to `to`.
    fn zext_to(&mut self, v: Value, s: Scalar, to: Type) -> Value {
        if s.clif() == to {
            v
        } else if s.clif().bits() < to.bits() {
            self.b.ins().uextend(to, v)
        } else {
            self.b.ins().ireduce(to, v)
        }
    }

    fn convert(
        &mut self,
        op: Op,
        v: Value,
        from: Scalar,
        to: Scalar,
    ) -> Result<Value, BackendError> {
        let tt = to.clif();
        Ok(match op {
            Op::Trunc | Op::Ptrtoint => {
                let r = self.zext_to(v, from, tt);
                if to == Scalar::Int(1) {
                    self.b.ins().band_imm_u(r, 1)
                } else {
                    r
                }
            }
            Op::Zext | Op::Inttoptr => self.zext_to(v, from, tt),
            Op::Sext => self.sext_to(v, from, tt),
            Op::Fptrunc => {
                let r = self.b.ins().fdemote(clt::F32, v);
                self.canonicalize(r, Scalar::F32)
            }
            Op::Fpext => {
                let r = self.b.ins().fpromote(clt::F64, v);
                self.canonicalize(r, Scalar::F64)
            }
            Op::Fptosi => {
                let w = to.width().unwrap_or(64);
                let r = self.b.ins().fcvt_to_sint_sat(clt::I64, v);
                if w == 64 {
                    return Ok(r);
                }
                let (min, max) = (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1);
                let lo = self.b.ins().iconst(clt::I64, min);
                let hi = self.b.ins().iconst(clt::I64, max);
                let r = self.b.ins().smax(r, lo);
                let r = self.b.ins().smin(r, hi);
                let r = self.zext_to(r, Scalar::Int(64), tt);
                if w == 1 {
                    self.b.ins().band_imm_u(r, 1)
                } else {
                    r
                }
            }
            Op::Fptoui => {
                let w = to.width().unwrap_or(64);
                let r = self.b.ins().fcvt_to_uint_sat(clt::I64, v);
                if w == 64 {
                    return Ok(r);
                }
                let hi = self.b.ins().iconst(clt::I64, (1i64 << w) - 1);
                let r = self.b.ins().umin(r, hi);
                self.zext_to(r, Scalar::Int(64), tt)
            }
            Op::Uitofp => {
                let x = self.zext_to(v, from, wide(from));
                self.b.ins().fcvt_from_uint(tt, x)
            }
            Op::Sitofp => {
                let x = self.sext_to(v, from, wide(from));
                self.b.ins().fcvt_from_sint(tt, x)
            }
            Op::Bitcast => {
                if from.clif() == tt {
                    v
                } else {
                    self.b.ins().bitcast(tt, MemFlagsData::new(), v)
                }
            }
            _ => return Err(not_in_group(op, "a conversion")),
        })
    }

    /// `icmp` or `fcmp`: an `I8` 0 or 1.
    pub(crate) fn compare(&mut self, inst: Inst, op: Op) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let ops = m.operands(inst);
        let code = m.payload(inst).as_int().unwrap_or(u64::MAX);
        let a = self.val1(ops[0])?;
        let b = self.val1(ops[1])?;
        let bad = || BackendError::Malformed(format!("{inst}: bad condition code {code}"));
        if op == Op::Icmp {
            let cc = IntCC::from_code(code).ok_or_else(bad)?;
            let sty = m
                .value_type(ops[0])
                .ok_or_else(|| BackendError::Malformed(format!("{inst}: operand type")))?;
            let s = self.scalar(sty)?;
            let signed = matches!(cc, IntCC::Sgt | IntCC::Sge | IntCC::Slt | IntCC::Sle);
            let (a, b) = if signed && s == Scalar::Int(1) {
                (self.b.ins().ineg(a), self.b.ins().ineg(b))
            } else {
                (a, b)
            };
            let c = match cc {
                IntCC::Eq => CIntCC::Equal,
                IntCC::Ne => CIntCC::NotEqual,
                IntCC::Ugt => CIntCC::UnsignedGreaterThan,
                IntCC::Uge => CIntCC::UnsignedGreaterThanOrEqual,
                IntCC::Ult => CIntCC::UnsignedLessThan,
                IntCC::Ule => CIntCC::UnsignedLessThanOrEqual,
                IntCC::Sgt => CIntCC::SignedGreaterThan,
                IntCC::Sge => CIntCC::SignedGreaterThanOrEqual,
                IntCC::Slt => CIntCC::SignedLessThan,
                IntCC::Sle => CIntCC::SignedLessThanOrEqual,
            };
            return Ok(self.b.ins().icmp(c, a, b));
        }
        let cc = FloatCC::from_code(code).ok_or_else(bad)?;
        let c = match cc {
            FloatCC::False => return Ok(self.b.ins().iconst(clt::I8, 0)),
            FloatCC::True => return Ok(self.b.ins().iconst(clt::I8, 1)),
            FloatCC::Oeq => CFloatCC::Equal,
            FloatCC::Ogt => CFloatCC::GreaterThan,
            FloatCC::Oge => CFloatCC::GreaterThanOrEqual,
            FloatCC::Olt => CFloatCC::LessThan,
            FloatCC::Ole => CFloatCC::LessThanOrEqual,
            FloatCC::One => CFloatCC::OrderedNotEqual,
            FloatCC::Ord => CFloatCC::Ordered,
            FloatCC::Uno => CFloatCC::Unordered,
            FloatCC::Ueq => CFloatCC::UnorderedOrEqual,
            FloatCC::Ugt => CFloatCC::UnorderedOrGreaterThan,
            FloatCC::Uge => CFloatCC::UnorderedOrGreaterThanOrEqual,
            FloatCC::Ult => CFloatCC::UnorderedOrLessThan,
            FloatCC::Ule => CFloatCC::UnorderedOrLessThanOrEqual,
            FloatCC::Une => CFloatCC::NotEqual,
        };
        Ok(self.b.ins().fcmp(c, a, b))
    }
}

/// The type an integer is widened to before an int-to-float conversion (Cranelift converts
/// from 32 and 64 bits).
fn wide(s: Scalar) -> Type {
    if s.clif() == clt::I64 {
        clt::I64
    } else {
        clt::I32
    }
}

/// The error of an arithmetic helper handed an opcode of another group: the dispatch in
/// [`super::func`] routes each opcode to one helper, so this is an internal error.
fn not_in_group(op: Op, group: &str) -> BackendError {
    BackendError::Malformed(format!("{op} is not {group}"))
}
