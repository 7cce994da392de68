//! Numeric operators: integer and float arithmetic, comparisons and conversions.
//!
//! Most map to one irkit instruction. wasm's results differ from the IR's in a few places,
//! handled here in ordinary IR: comparisons give an `i32`; `rem_s` of `MIN` by `-1` is 0
//! (the IR's `srem` traps); trapping float-to-integer conversions check their range first
//! (the IR's `fptosi`/`fptoui` saturate). Bit counts, rotates and the float sign, root and
//! rounding operators are the IR's own (format 2.1); the rest are refused by the caller.
//!
//! Each operator names its IR operation by the registry's family enums (`I32Add` is
//! [`IntBinary::Iadd`], `F64Sqrt` [`FloatUnary::Fsqrt`], `I64ExtendI32U`
//! [`Conversion::Zext`]) and builds it on the builder's typed path, which cannot fail: the
//! operands' types are the ones wasm validation proved.

use irkit_core::{
    Conversion, FloatBinary, FloatCC, FloatUnary, Inst, IntBinary, IntCC, IntUnary, Opcode,
};
use wasmparser::Operator;

use crate::error::WasmError;
use crate::func::FuncTranslator;

/// A value type the operators name: wasm's four, and the narrow integers of sign extension
/// and of narrow loads and stores.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl FuncTranslator<'_, '_> {
    pub(crate) fn ty(&mut self, t: Ty) -> Inst {
        let m = self.b.module();
        match t {
            Ty::I8 => m.ty_i8(),
            Ty::I16 => m.ty_i16(),
            Ty::I32 => m.ty_i32(),
            Ty::I64 => m.ty_i64(),
            Ty::F32 => m.ty_f32(),
            Ty::F64 => m.ty_f64(),
        }
    }

    /// An integer binary operator on the two top operands.
    fn int_binary(&mut self, op: IntBinary) {
        let y = self.pop();
        let x = self.pop();
        let r = self.b.ins().int_binary(op, x, y);
        self.stack.push(r);
    }

    /// A float binary operator on the two top operands.
    fn float_binary(&mut self, op: FloatBinary) {
        let y = self.pop();
        let x = self.pop();
        let r = self.b.ins().float_binary(op, x, y);
        self.stack.push(r);
    }

    /// An integer unary operator (`clz`, `ctz`, `popcnt`) on the top operand.
    fn int_unary(&mut self, op: IntUnary) {
        let x = self.pop();
        let r = self.b.ins().int_unary(op, x);
        self.stack.push(r);
    }

    /// A float unary operator (`fneg` … `fnearest`) on the top operand.
    fn float_unary(&mut self, op: FloatUnary) {
        let x = self.pop();
        let r = self.b.ins().float_unary(op, x);
        self.stack.push(r);
    }

    /// A constant of the integer type of the value `like`, `v` truncated to its width.
    pub(crate) fn int_like(&mut self, like: Inst, v: u64) -> Inst {
        let m = self.b.module();
        let width = m.ty(like).and_then(|t| m.int_width(t));
        match width {
            Some(64) => m.const_i64(v as i64),
            _ => m.const_i32(v as i32),
        }
    }

    /// A comparison's `i1` as wasm's `i32`.
    fn push_bool(&mut self, c: Inst) {
        let i32t = self.ty(Ty::I32);
        let r = self.b.ins().zext(i32t, c);
        self.stack.push(r);
    }

    fn icmp(&mut self, cc: IntCC) {
        let y = self.pop();
        let x = self.pop();
        let c = self.b.ins().icmp(cc, x, y);
        self.push_bool(c);
    }

    fn fcmp(&mut self, cc: FloatCC) {
        let y = self.pop();
        let x = self.pop();
        let c = self.b.ins().fcmp(cc, x, y);
        self.push_bool(c);
    }

    fn eqz(&mut self) {
        let x = self.pop();
        let zero = self.int_like(x, 0);
        let c = self.b.ins().icmp(IntCC::Eq, x, zero);
        self.push_bool(c);
    }

    /// `rem_s`: 0 when the divisor is -1 (where the IR's `srem` would trap on `MIN`). A
    /// constant divisor (what compilers mostly emit: `x % 10`) needs no test: -1 gives 0,
    /// any other the IR's `srem` (which then never traps).
    fn rem_s(&mut self) {
        let y = self.pop();
        let x = self.pop();
        let minus1 = self.int_like(y, u64::MAX);
        if y == minus1 {
            // Constants are interned: `y` is the constant -1.
            let zero = self.int_like(y, 0);
            self.stack.push(zero);
            return;
        }
        if self.b.module().opcode(y) == Opcode::CONST_INT {
            let r = self.b.ins().srem(x, y);
            self.stack.push(r);
            return;
        }
        let one = self.int_like(y, 1);
        let zero = self.int_like(y, 0);
        let mut ins = self.b.ins();
        let is_m1 = ins.icmp(IntCC::Eq, y, minus1);
        let safe = ins.select(is_m1, one, y);
        let r = ins.srem(x, safe);
        let r = ins.select(is_m1, zero, r);
        self.stack.push(r);
    }

    /// A conversion `op` from the top operand to `to`.
    fn convert(&mut self, op: Conversion, to: Ty) {
        let x = self.pop();
        self.convert_value(op, to, x);
    }

    /// Sign extension of the low bits (`i32.extend8_s` …): truncated to `narrow`, then
    /// sign-extended to `to`.
    fn extend_s(&mut self, narrow: Ty, to: Ty) {
        let x = self.pop();
        let (narrow, wide) = (self.ty(narrow), self.ty(to));
        let t = self.b.ins().trunc(narrow, x);
        let r = self.b.ins().sext(wide, t);
        self.stack.push(r);
    }

    /// A trapping float-to-integer conversion: traps on NaN ("invalid conversion to integer")
    /// and unless `trunc(x)` fits the integer type ("integer overflow"), then converts (the
    /// IR's conversion is exact in range).
    fn trunc_trap(&mut self, from: Ty, to: Ty, signed: bool) -> Result<(), WasmError> {
        let x = self.pop();
        let bits = if to == Ty::I32 { 32 } else { 64 };
        // The open or closed lower bound and the open upper bound, as exact floats.
        let (lo, lo_inclusive, hi): (f64, bool, f64) = if signed {
            let min = -(2f64.powi(bits - 1));
            // min - 1 when the float type holds it exactly (then x > min - 1), else min itself
            // (then x >= min: no float lies strictly between min - 1 and min).
            let exact = match from {
                Ty::F32 => bits < 24,
                _ => bits < 53,
            };
            if exact {
                (min - 1.0, false, -min)
            } else {
                (min, true, -min)
            }
        } else {
            (-1.0, false, 2f64.powi(bits))
        };
        let m = self.b.module();
        let (lo_c, hi_c) = if from == Ty::F32 {
            (m.const_f32(lo as f32), m.const_f32(hi as f32))
        } else {
            (m.const_f64(lo), m.const_f64(hi))
        };
        let lo_cc = if lo_inclusive {
            FloatCC::Oge
        } else {
            FloatCC::Ogt
        };
        let nan = self.b.ins().fcmp(FloatCC::Uno, x, x);
        self.trap_if(nan, crate::traps::INVALID_CONVERSION)?;
        let above = self.b.ins().fcmp(lo_cc, x, lo_c);
        let below = self.b.ins().fcmp(FloatCC::Olt, x, hi_c);
        let ok = self.b.ins().and(above, below);
        let t = self.b.module().const_bool(true);
        let bad = self.b.ins().xor(ok, t);
        self.trap_if(bad, crate::traps::INTEGER_OVERFLOW)?;
        let op = if signed {
            Conversion::Fptosi
        } else {
            Conversion::Fptoui
        };
        self.convert_value(op, to, x);
        Ok(())
    }

    /// Pushes the conversion `op` of `x` to `to`.
    fn convert_value(&mut self, op: Conversion, to: Ty, x: Inst) {
        let t = self.ty(to);
        let r = self.b.ins().conversion(op, t, x);
        self.stack.push(r);
    }

    /// Translates a numeric operator; `false` if `op` is not one this front end handles.
    pub(crate) fn numeric(&mut self, op: &Operator<'_>) -> Result<bool, WasmError> {
        use Conversion as C;
        use FloatBinary as FB;
        use FloatUnary as FU;
        use IntBinary as IB;
        use IntUnary as IU;
        use Operator as O;
        use Ty::*;
        match *op {
            O::I32Const { value } => {
                let c = self.b.module().const_i32(value);
                self.stack.push(c);
            }
            O::I64Const { value } => {
                let c = self.b.module().const_i64(value);
                self.stack.push(c);
            }
            O::F32Const { value } => {
                let c = self.b.module().const_f32(f32::from_bits(value.bits()));
                self.stack.push(c);
            }
            O::F64Const { value } => {
                let c = self.b.module().const_f64(f64::from_bits(value.bits()));
                self.stack.push(c);
            }
            O::I32Eqz | O::I64Eqz => self.eqz(),
            O::I32Eq | O::I64Eq => self.icmp(IntCC::Eq),
            O::I32Ne | O::I64Ne => self.icmp(IntCC::Ne),
            O::I32LtS | O::I64LtS => self.icmp(IntCC::Slt),
            O::I32LtU | O::I64LtU => self.icmp(IntCC::Ult),
            O::I32GtS | O::I64GtS => self.icmp(IntCC::Sgt),
            O::I32GtU | O::I64GtU => self.icmp(IntCC::Ugt),
            O::I32LeS | O::I64LeS => self.icmp(IntCC::Sle),
            O::I32LeU | O::I64LeU => self.icmp(IntCC::Ule),
            O::I32GeS | O::I64GeS => self.icmp(IntCC::Sge),
            O::I32GeU | O::I64GeU => self.icmp(IntCC::Uge),
            O::F32Eq | O::F64Eq => self.fcmp(FloatCC::Oeq),
            O::F32Ne | O::F64Ne => self.fcmp(FloatCC::Une),
            O::F32Lt | O::F64Lt => self.fcmp(FloatCC::Olt),
            O::F32Gt | O::F64Gt => self.fcmp(FloatCC::Ogt),
            O::F32Le | O::F64Le => self.fcmp(FloatCC::Ole),
            O::F32Ge | O::F64Ge => self.fcmp(FloatCC::Oge),
            O::I32Add | O::I64Add => self.int_binary(IB::Iadd),
            O::I32Sub | O::I64Sub => self.int_binary(IB::Isub),
            O::I32Mul | O::I64Mul => self.int_binary(IB::Imul),
            O::I32DivS | O::I64DivS => self.int_binary(IB::Sdiv),
            O::I32DivU | O::I64DivU => self.int_binary(IB::Udiv),
            O::I32RemS | O::I64RemS => self.rem_s(),
            O::I32RemU | O::I64RemU => self.int_binary(IB::Urem),
            O::I32And | O::I64And => self.int_binary(IB::And),
            O::I32Or | O::I64Or => self.int_binary(IB::Or),
            O::I32Xor | O::I64Xor => self.int_binary(IB::Xor),
            O::I32Shl | O::I64Shl => self.int_binary(IB::Shl),
            O::I32ShrS | O::I64ShrS => self.int_binary(IB::Ashr),
            O::I32ShrU | O::I64ShrU => self.int_binary(IB::Lshr),
            O::I32Rotl | O::I64Rotl => self.int_binary(IB::Rotl),
            O::I32Rotr | O::I64Rotr => self.int_binary(IB::Rotr),
            O::I32Clz | O::I64Clz => self.int_unary(IU::Clz),
            O::I32Ctz | O::I64Ctz => self.int_unary(IU::Ctz),
            O::I32Popcnt | O::I64Popcnt => self.int_unary(IU::Popcnt),
            O::F32Add | O::F64Add => self.float_binary(FB::Fadd),
            O::F32Sub | O::F64Sub => self.float_binary(FB::Fsub),
            O::F32Mul | O::F64Mul => self.float_binary(FB::Fmul),
            O::F32Div | O::F64Div => self.float_binary(FB::Fdiv),
            O::F32Copysign | O::F64Copysign => self.float_binary(FB::Fcopysign),
            O::F32Min | O::F64Min => self.float_binary(FB::Fmin),
            O::F32Max | O::F64Max => self.float_binary(FB::Fmax),
            O::F32Neg | O::F64Neg => self.float_unary(FU::Fneg),
            O::F32Abs | O::F64Abs => self.float_unary(FU::Fabs),
            O::F32Ceil | O::F64Ceil => self.float_unary(FU::Fceil),
            O::F32Floor | O::F64Floor => self.float_unary(FU::Ffloor),
            O::F32Trunc | O::F64Trunc => self.float_unary(FU::Ftrunc),
            O::F32Nearest | O::F64Nearest => self.float_unary(FU::Fnearest),
            O::F32Sqrt | O::F64Sqrt => self.float_unary(FU::Fsqrt),
            O::I32WrapI64 => self.convert(C::Trunc, I32),
            O::I64ExtendI32S => self.convert(C::Sext, I64),
            O::I64ExtendI32U => self.convert(C::Zext, I64),
            O::I32Extend8S => self.extend_s(I8, I32),
            O::I32Extend16S => self.extend_s(I16, I32),
            O::I64Extend8S => self.extend_s(I8, I64),
            O::I64Extend16S => self.extend_s(I16, I64),
            O::I64Extend32S => self.extend_s(I32, I64),
            O::F32DemoteF64 => self.convert(C::Fptrunc, F32),
            O::F64PromoteF32 => self.convert(C::Fpext, F64),
            O::F32ConvertI32S | O::F32ConvertI64S => self.convert(C::Sitofp, F32),
            O::F32ConvertI32U | O::F32ConvertI64U => self.convert(C::Uitofp, F32),
            O::F64ConvertI32S | O::F64ConvertI64S => self.convert(C::Sitofp, F64),
            O::F64ConvertI32U | O::F64ConvertI64U => self.convert(C::Uitofp, F64),
            O::I32ReinterpretF32 => self.convert(C::Bitcast, I32),
            O::I64ReinterpretF64 => self.convert(C::Bitcast, I64),
            O::F32ReinterpretI32 => self.convert(C::Bitcast, F32),
            O::F64ReinterpretI64 => self.convert(C::Bitcast, F64),
            O::I32TruncSatF32S | O::I32TruncSatF64S => self.convert(C::Fptosi, I32),
            O::I32TruncSatF32U | O::I32TruncSatF64U => self.convert(C::Fptoui, I32),
            O::I64TruncSatF32S | O::I64TruncSatF64S => self.convert(C::Fptosi, I64),
            O::I64TruncSatF32U | O::I64TruncSatF64U => self.convert(C::Fptoui, I64),
            O::I32TruncF32S => self.trunc_trap(F32, I32, true)?,
            O::I32TruncF32U => self.trunc_trap(F32, I32, false)?,
            O::I32TruncF64S => self.trunc_trap(F64, I32, true)?,
            O::I32TruncF64U => self.trunc_trap(F64, I32, false)?,
            O::I64TruncF32S => self.trunc_trap(F32, I64, true)?,
            O::I64TruncF32U => self.trunc_trap(F32, I64, false)?,
            O::I64TruncF64S => self.trunc_trap(F64, I64, true)?,
            O::I64TruncF64U => self.trunc_trap(F64, I64, false)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}
