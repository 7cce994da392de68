//! Arithmetic, comparisons and conversions with spec/ir.md's exact semantics, where Cranelift's
//! instructions differ:
//!
//! * `i1` lives in an `I8` holding 0 or 1: results that can leave that range are masked, and
//!   signed interpretations negate it first (the `i1` value 1 is −1);
//! * division checks the divisor for zero and `MIN / -1` first and branches to the trap;
//! * shifts: Cranelift masks the amount to the type's width like the spec, except for `i1`
//!   (held in 8 bits), whose shifts return the value unchanged;
//! * float results that are NaN are replaced by the canonical NaN (except those of the bit
//!   operations `fneg`, `fabs` and `fcopysign`, and those whose bits no use can see:
//!   [`super::nan`]); `frem` calls C's `fmod`;
//! * bit counts and rotates of `i1` are computed on its 0/1 directly;
//! * float-to-integer conversions saturate (`fcvt_to_*_sat` to 64 bits, then clamped).

use cranelift_codegen::ir::condcodes::{FloatCC as CFloatCC, IntCC as CIntCC};
use cranelift_codegen::ir::{
    InstBuilder, InstructionData, MemFlagsData, Opcode as ClOpcode, Type, Value, types as clt,
};
use cranelift_module::Module as ClModule;
use irkit_backend::{BackendError, trap_kinds};
use irkit_core::{
    Conversion, FloatBinary, FloatCC, FloatUnary, Inst, IntBinary, IntCC, IntUnary, Op,
};

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
        let malformed = || BackendError::Malformed(format!("{inst}: {op} on its operand types"));
        if let Some(c) = op.conversion() {
            let sty = m
                .value_type(ops[0])
                .ok_or_else(|| BackendError::Malformed(format!("{inst}: operand type")))?;
            let ss = self.scalar(sty)?;
            let v = self.val1(ops[0])?;
            return Ok(self.convert(inst, c, v, ss, rs));
        }
        let a = self.val1(ops[0])?;
        if let Some(u) = op.int_unary() {
            return Ok(self.int_unop(u, rs, a));
        }
        if let Some(u) = op.float_unary() {
            return Ok(self.float_unop(inst, u, rs, a));
        }
        if let (Some(IntBinary::Imul), Scalar::Int(32 | 64)) = (op.int_binary(), rs)
            && let Some((x, k)) = self.times_lea_factor(ops)?
        {
            return Ok(self.shift_add(x, k));
        }
        let b = self.val1(ops[1])?;
        match (rs, op.int_binary(), op.float_binary()) {
            (Scalar::Int(w), Some(bin), _) => self.int_binop(bin, w, a, b, place),
            (Scalar::F32 | Scalar::F64, _, Some(bin)) => Ok(self.float_binop(inst, bin, rs, a, b)),
            _ => Err(malformed()),
        }
    }

    /// For `imul` operands `ops` of which one is a constant 3, 5 or 9 (`2^k + 1`, `k` ≤ 3):
    /// the other operand's value and `k`.
    fn times_lea_factor(&mut self, ops: &[Inst]) -> Result<Option<(Value, i64)>, BackendError> {
        let m = self.ctx.m;
        let factor = |v: Inst| match m.opcode(v) {
            irkit_core::Opcode::CONST_INT => match m.payload(v).as_int() {
                Some(3) => Some(1),
                Some(5) => Some(2),
                Some(9) => Some(3),
                _ => None,
            },
            _ => None,
        };
        let (x, k) = match (factor(ops[0]), factor(ops[1])) {
            (_, Some(k)) => (ops[0], k),
            (Some(k), None) => (ops[1], k),
            (None, None) => return Ok(None),
        };
        Ok(Some((self.val1(x)?, k)))
    }

    /// `x * (2^k + 1)` as `x + (x << k)`, the same bits: x86-64 computes it in one `lea`
    /// (`lea (x,x,2^k)`, a cycle against `imul`'s three), AArch64 in one shifted `add`. A
    /// multiplication by 3 on a loop's critical path (`3n + 1`) is where it shows.
    fn shift_add(&mut self, x: Value, k: i64) -> Value {
        let shifted = self.b.ins().ishl_imm_u(x, k);
        self.b.ins().iadd(x, shifted)
    }

    fn int_binop(
        &mut self,
        op: IntBinary,
        w: u32,
        a: Value,
        b: Value,
        place: &Place,
    ) -> Result<Value, BackendError> {
        use IntBinary as B;
        if let (B::Isub, 2..=64, Some(k)) = (op, w, self.constant(b)) {
            return Ok(self.add_negated(w, a, k));
        }
        let i = self.b.ins();
        let r = match op {
            B::Iadd => i.iadd(a, b),
            B::Isub => i.isub(a, b),
            B::Imul => i.imul(a, b),
            B::And => i.band(a, b),
            B::Or => i.bor(a, b),
            B::Xor => i.bxor(a, b),
            B::Shl | B::Lshr | B::Ashr | B::Rotl | B::Rotr if w == 1 => {
                return Ok(a);
            }
            // Cranelift rotates by the amount modulo the width, as the spec does.
            B::Rotl => i.rotl(a, b),
            B::Rotr => i.rotr(a, b),
            B::Shl => i.ishl(a, b),
            B::Lshr => i.ushr(a, b),
            B::Ashr => i.sshr(a, b),
            B::Sdiv | B::Udiv | B::Srem | B::Urem => {
                return self.division(op, w, a, b, place);
            }
        };
        Ok(if w == 1 && matches!(op, B::Iadd | B::Isub) {
            self.b.ins().band_imm_u(r, 1)
        } else {
            r
        })
    }

    /// `a - k` of width `w` (2 to 64) as `a + (-k)`, the same bits: Cranelift folds an added
    /// constant into an address (`lea -288(%r, %i, 4)`) and into the constants of further
    /// additions, not a subtracted one (clang's frames are `sp - size`, their slots `+ offset`).
    fn add_negated(&mut self, w: u32, a: Value, k: i64) -> Value {
        let ty = Scalar::Int(w).clif();
        let mask = u64::MAX >> (64 - ty.bits());
        let negated = (k as u64).wrapping_neg() & mask;
        let c = self.b.ins().iconst(ty, negated as i64);
        self.b.ins().iadd(a, c)
    }

    /// The value of `v` if the lowering made it an integer constant (`iconst`), sign-extended
    /// from its type's width.
    fn constant(&self, v: Value) -> Option<i64> {
        let dfg = &self.b.func.dfg;
        let inst = dfg.value_def(v).inst()?;
        match dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: ClOpcode::Iconst,
                imm,
            } => {
                let bits = dfg.value_type(v).bits();
                let raw = imm.bits();
                Some(if bits >= 64 {
                    raw
                } else {
                    (raw << (64 - bits)) >> (64 - bits)
                })
            }
            _ => None,
        }
    }

    /// The `integer overflow` trap at `place` if `a` is the minimum of `iw` and `b` is -1.
    fn signed_overflow(
        &mut self,
        w: u32,
        a: Value,
        b: Value,
        place: &Place,
    ) -> Result<(), BackendError> {
        let ty = Scalar::Int(w).clif();
        let min: i64 = if w == 1 {
            -1
        } else {
            i64::MIN >> (64 - ty.bits())
        };
        let is_min = self.b.ins().icmp_imm_s(CIntCC::Equal, a, min);
        let is_m1 = self.b.ins().icmp_imm_s(CIntCC::Equal, b, -1);
        let both = self.b.ins().band(is_min, is_m1);
        self.trap_if(both, trap_kinds::INTEGER_OVERFLOW, place)
    }

    /// Division and remainder: trap on a zero divisor and on signed `MIN / -1`. Where checks
    /// are machine traps (`crate::sites`), Cranelift's own: its division traps on both (a
    /// remainder of `MIN` by -1 is 0 there, so that one is checked here), and the fault
    /// handler finds the division by its code range.
    fn division(
        &mut self,
        op: IntBinary,
        w: u32,
        a: Value,
        b: Value,
        place: &Place,
    ) -> Result<Value, BackendError> {
        // A constant divisor other than 0 and -1 (what `x / 10` and `x % 7` compile to)
        // cannot trap: no check (and Cranelift's optimizer makes the division a multiply).
        let cannot_trap = w > 1 && self.constant(b).is_some_and(|d| d != 0 && d != -1);
        if cannot_trap || (self.ctx.site_codes() && w > 1) {
            if !cannot_trap && op == IntBinary::Srem {
                self.signed_overflow(w, a, b, place)?;
            }
            return Ok(self.divide(op, a, b));
        }
        let zero = self.b.ins().icmp_imm_s(CIntCC::Equal, b, 0);
        self.trap_if(zero, trap_kinds::DIVISION_BY_ZERO, place)?;
        let signed = matches!(op, IntBinary::Sdiv | IntBinary::Srem);
        let (a, b) = if signed && w == 1 {
            (self.b.ins().ineg(a), self.b.ins().ineg(b))
        } else {
            (a, b)
        };
        if signed {
            self.signed_overflow(w, a, b, place)?;
        }
        let r = self.divide(op, a, b);
        Ok(if w == 1 {
            self.b.ins().band_imm_u(r, 1)
        } else {
            r
        })
    }

    /// Cranelift's division or remainder `op` of `a` by `b`, unchecked.
    fn divide(&mut self, op: IntBinary, a: Value, b: Value) -> Value {
        let i = self.b.ins();
        match op {
            IntBinary::Sdiv => i.sdiv(a, b),
            IntBinary::Udiv => i.udiv(a, b),
            IntBinary::Srem => i.srem(a, b),
            _ => i.urem(a, b),
        }
    }

    /// A bit count (an `i1` lives in an `I8` holding 0 or 1, so its `clz` and `ctz` are
    /// `1 - x` and its `popcnt` is `x`).
    fn int_unop(&mut self, op: IntUnary, s: Scalar, a: Value) -> Value {
        let i = self.b.ins();
        match op {
            IntUnary::Clz | IntUnary::Ctz if s == Scalar::Int(1) => i.bxor_imm_u(a, 1),
            IntUnary::Popcnt if s == Scalar::Int(1) => a,
            IntUnary::Clz => i.clz(a),
            IntUnary::Ctz => i.ctz(a),
            IntUnary::Popcnt => i.popcnt(a),
        }
    }

    /// A float unary operation: `fneg` and `fabs` are bit operations that keep a NaN's
    /// payload, the others give the canonical NaN.
    fn float_unop(&mut self, inst: Inst, op: FloatUnary, s: Scalar, a: Value) -> Value {
        let i = self.b.ins();
        let r = match op {
            FloatUnary::Fneg => return i.fneg(a),
            FloatUnary::Fabs => return i.fabs(a),
            FloatUnary::Fsqrt => i.sqrt(a),
            FloatUnary::Fceil => i.ceil(a),
            FloatUnary::Ffloor => i.floor(a),
            FloatUnary::Ftrunc => i.trunc(a),
            FloatUnary::Fnearest => i.nearest(a),
        };
        self.canonicalize(inst, r, s)
    }

    fn float_binop(&mut self, inst: Inst, op: FloatBinary, s: Scalar, a: Value, b: Value) -> Value {
        use FloatBinary as B;
        let r = match op {
            // A bit operation: a NaN keeps its payload.
            B::Fcopysign => return self.b.ins().fcopysign(a, b),
            // wasm's rules: a NaN if either operand is one, -0 below +0.
            B::Fmin => self.b.ins().fmin(a, b),
            B::Fmax => self.b.ins().fmax(a, b),
            B::Fadd => self.b.ins().fadd(a, b),
            B::Fsub => self.b.ins().fsub(a, b),
            B::Fmul => self.b.ins().fmul(a, b),
            B::Fdiv => self.b.ins().fdiv(a, b),
            B::Frem => {
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
        self.canonicalize(inst, r, s)
    }

    /// `v`, the result of `inst`, or the canonical NaN of its type if `v` is a NaN; just `v`
    /// when no use of `inst` can see a NaN's bits ([`super::nan`]).
    fn canonicalize(&mut self, inst: Inst, v: Value, s: Scalar) -> Value {
        if !self.nan_observed.contains(&inst) {
            return v;
        }
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

    fn convert(&mut self, inst: Inst, op: Conversion, v: Value, from: Scalar, to: Scalar) -> Value {
        use Conversion as C;
        let tt = to.clif();
        match op {
            C::Trunc | C::Ptrtoint => {
                let r = self.zext_to(v, from, tt);
                if to == Scalar::Int(1) {
                    self.b.ins().band_imm_u(r, 1)
                } else {
                    r
                }
            }
            C::Zext | C::Inttoptr => self.zext_to(v, from, tt),
            C::Sext => self.sext_to(v, from, tt),
            C::Fptrunc => {
                let r = self.b.ins().fdemote(clt::F32, v);
                self.canonicalize(inst, r, Scalar::F32)
            }
            C::Fpext => {
                let r = self.b.ins().fpromote(clt::F64, v);
                self.canonicalize(inst, r, Scalar::F64)
            }
            C::Fptosi => {
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
            C::Fptoui => {
                let w = to.width().unwrap_or(64);
                let r = self.b.ins().fcvt_to_uint_sat(clt::I64, v);
                if w == 64 {
                    return r;
                }
                let hi = self.b.ins().iconst(clt::I64, (1i64 << w) - 1);
                let r = self.b.ins().umin(r, hi);
                self.zext_to(r, Scalar::Int(64), tt)
            }
            C::Uitofp => {
                let x = self.zext_to(v, from, wide(from));
                self.b.ins().fcvt_from_uint(tt, x)
            }
            C::Sitofp => {
                let x = self.sext_to(v, from, wide(from));
                self.b.ins().fcvt_from_sint(tt, x)
            }
            C::Bitcast => {
                if from.clif() == tt {
                    v
                } else {
                    self.b.ins().bitcast(tt, MemFlagsData::new(), v)
                }
            }
        }
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
            return Ok(self.b.ins().icmp(clif_int_cc(cc), a, b));
        }
        let cc = FloatCC::from_code(code).ok_or_else(bad)?;
        match clif_float_cc(cc) {
            Some(c) => Ok(self.b.ins().fcmp(c, a, b)),
            None => Ok(self.b.ins().iconst(clt::I8, i64::from(cc == FloatCC::True))),
        }
    }
}

/// Cranelift's condition code for integer condition `cc` (spec/ir.md, "Condition codes").
pub(crate) fn clif_int_cc(cc: IntCC) -> CIntCC {
    match cc {
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
    }
}

/// Cranelift's condition code for float condition `cc`; `None` for `false` and `true`, which
/// compare nothing.
pub(crate) fn clif_float_cc(cc: FloatCC) -> Option<CFloatCC> {
    Some(match cc {
        FloatCC::False | FloatCC::True => return None,
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
    })
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
