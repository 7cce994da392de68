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
use irkit_core::{FloatCC, Inst, IntCC, Opcode};

use super::func::FnLower;
use crate::place::Place;
use crate::types::{ClifType, Scalar};

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// An integer or float binary operation or a conversion.
    pub(crate) fn arith(
        &mut self,
        inst: Inst,
        op: Opcode,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let ops = m.operands(inst);
        let rty = m
            .ty(inst)
            .ok_or_else(|| BackendError::Malformed(format!("{inst} has no type")))?;
        let rs = self.scalar(rty)?;
        if op.is_conversion() {
            let sty = m
                .value_type(ops[0])
                .ok_or_else(|| BackendError::Malformed(format!("{inst}: operand type")))?;
            let ss = self.scalar(sty)?;
            let v = self.val1(ops[0])?;
            return Ok(self.convert(op, v, ss, rs));
        }
        let a = self.val1(ops[0])?;
        if op.is_int_unary() || op.is_float_unary() {
            return Ok(self.unop(op, rs, a));
        }
        let b = self.val1(ops[1])?;
        match rs {
            Scalar::Int(w) => self.int_binop(op, w, a, b, place),
            Scalar::F32 | Scalar::F64 => Ok(self.float_binop(op, rs, a, b)),
            Scalar::Ptr => Err(BackendError::Malformed(format!(
                "{inst}: arithmetic on ptr"
            ))),
        }
    }

    fn int_binop(
        &mut self,
        op: Opcode,
        w: u32,
        a: Value,
        b: Value,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let i = self.b.ins();
        let r = match op {
            Opcode::IADD => i.iadd(a, b),
            Opcode::ISUB => i.isub(a, b),
            Opcode::IMUL => i.imul(a, b),
            Opcode::AND => i.band(a, b),
            Opcode::OR => i.bor(a, b),
            Opcode::XOR => i.bxor(a, b),
            Opcode::SHL | Opcode::LSHR | Opcode::ASHR | Opcode::ROTL | Opcode::ROTR if w == 1 => {
                return Ok(a);
            }
            // Cranelift rotates by the amount modulo the width, as the spec does.
            Opcode::ROTL => i.rotl(a, b),
            Opcode::ROTR => i.rotr(a, b),
            Opcode::SHL => i.ishl(a, b),
            Opcode::LSHR => i.ushr(a, b),
            Opcode::ASHR => i.sshr(a, b),
            Opcode::SDIV | Opcode::UDIV | Opcode::SREM | Opcode::UREM => {
                return self.division(op, w, a, b, place);
            }
            _ => {
                return Err(BackendError::Malformed(format!(
                    "{op} is not an integer operation"
                )));
            }
        };
        Ok(if w == 1 && matches!(op, Opcode::IADD | Opcode::ISUB) {
            self.b.ins().band_imm_u(r, 1)
        } else {
            r
        })
    }

    /// Division and remainder: trap on a zero divisor and on signed `MIN / -1`.
    fn division(
        &mut self,
        op: Opcode,
        w: u32,
        a: Value,
        b: Value,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let zero = self.b.ins().icmp_imm_s(CIntCC::Equal, b, 0);
        self.trap_if(zero, trap_kinds::DIVISION_BY_ZERO, place)?;
        let signed = matches!(op, Opcode::SDIV | Opcode::SREM);
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
            Opcode::SDIV => i.sdiv(a, b),
            Opcode::UDIV => i.udiv(a, b),
            Opcode::SREM => i.srem(a, b),
            _ => i.urem(a, b),
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
    fn unop(&mut self, op: Opcode, s: Scalar, a: Value) -> Value {
        let i = self.b.ins();
        match op {
            Opcode::CLZ | Opcode::CTZ if s == Scalar::Int(1) => i.bxor_imm_u(a, 1),
            Opcode::POPCNT if s == Scalar::Int(1) => a,
            Opcode::CLZ => i.clz(a),
            Opcode::CTZ => i.ctz(a),
            Opcode::POPCNT => i.popcnt(a),
            Opcode::FNEG => i.fneg(a),
            Opcode::FABS => i.fabs(a),
            _ => {
                let r = match op {
                    Opcode::FSQRT => i.sqrt(a),
                    Opcode::FCEIL => i.ceil(a),
                    Opcode::FFLOOR => i.floor(a),
                    Opcode::FTRUNC => i.trunc(a),
                    _ => i.nearest(a),
                };
                self.canonicalize(r, s)
            }
        }
    }

    fn float_binop(&mut self, op: Opcode, s: Scalar, a: Value, b: Value) -> Value {
        let r = match op {
            // A bit operation: a NaN keeps its payload.
            Opcode::FCOPYSIGN => return self.b.ins().fcopysign(a, b),
            // wasm's rules: a NaN if either operand is one, -0 below +0.
            Opcode::FMIN => self.b.ins().fmin(a, b),
            Opcode::FMAX => self.b.ins().fmax(a, b),
            Opcode::FADD => self.b.ins().fadd(a, b),
            Opcode::FSUB => self.b.ins().fsub(a, b),
            Opcode::FMUL => self.b.ins().fmul(a, b),
            Opcode::FDIV => self.b.ins().fdiv(a, b),
            _ => {
                let id = if s == Scalar::F32 {
                    self.ctx.rt.fmodf
                } else {
                    self.ctx.rt.fmod
                };
                let fr = self.ctx.func_in_func(id, self.b.func);
                let call = self.b.ins().call(fr, &[a, b]);
                self.b.inst_results(call)[0]
            }
        };
        self.canonicalize(r, s)
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

    fn convert(&mut self, op: Opcode, v: Value, from: Scalar, to: Scalar) -> Value {
        let tt = to.clif();
        match op {
            Opcode::TRUNC | Opcode::PTRTOINT => {
                let r = self.zext_to(v, from, tt);
                if to == Scalar::Int(1) {
                    self.b.ins().band_imm_u(r, 1)
                } else {
                    r
                }
            }
            Opcode::ZEXT | Opcode::INTTOPTR => self.zext_to(v, from, tt),
            Opcode::SEXT => self.sext_to(v, from, tt),
            Opcode::FPTRUNC => {
                let r = self.b.ins().fdemote(clt::F32, v);
                self.canonicalize(r, Scalar::F32)
            }
            Opcode::FPEXT => {
                let r = self.b.ins().fpromote(clt::F64, v);
                self.canonicalize(r, Scalar::F64)
            }
            Opcode::FPTOSI => {
                let w = to.width().unwrap_or(64);
                let r = self.b.ins().fcvt_to_sint_sat(clt::I64, v);
                if w == 64 {
                    return r;
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
            Opcode::FPTOUI => {
                let w = to.width().unwrap_or(64);
                let r = self.b.ins().fcvt_to_uint_sat(clt::I64, v);
                if w == 64 {
                    return r;
                }
                let hi = self.b.ins().iconst(clt::I64, (1i64 << w) - 1);
                let r = self.b.ins().umin(r, hi);
                self.zext_to(r, Scalar::Int(64), tt)
            }
            Opcode::UITOFP => {
                let x = self.zext_to(v, from, wide(from));
                self.b.ins().fcvt_from_uint(tt, x)
            }
            Opcode::SITOFP => {
                let x = self.sext_to(v, from, wide(from));
                self.b.ins().fcvt_from_sint(tt, x)
            }
            // BITCAST
            _ => {
                if from.clif() == tt {
                    v
                } else {
                    self.b.ins().bitcast(tt, MemFlagsData::new(), v)
                }
            }
        }
    }

    /// `icmp` or `fcmp`: an `I8` 0 or 1.
    pub(crate) fn compare(&mut self, inst: Inst, op: Opcode) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let ops = m.operands(inst);
        let code = m.payload(inst).as_int().unwrap_or(u64::MAX);
        let a = self.val1(ops[0])?;
        let b = self.val1(ops[1])?;
        let bad = || BackendError::Malformed(format!("{inst}: bad condition code {code}"));
        if op == Opcode::ICMP {
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
