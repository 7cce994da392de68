//! Numeric operators: integer and float arithmetic, comparisons and conversions.
//!
//! Most map to one irkit instruction. wasm's results differ from the IR's in a few places,
//! handled here in ordinary IR: comparisons give an `i32`; `rem_s` of `MIN` by `-1` is 0
//! (the IR's `srem` traps); trapping float-to-integer conversions check their range first
//! (the IR's `fptosi`/`fptoui` saturate). Bit counts, rotates and the float sign, root and
//! rounding operators are the IR's own (format 2.1); the rest are refused by the caller.

use irkit_core::{FloatCC, Inst, IntCC, Opcode, Payload};
use wasmparser::Operator;

use crate::error::{At, WasmError};
use crate::func::FuncTranslator;

/// Integer or float operand width, for the conversions.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    I32,
    I64,
    F32,
    F64,
}

impl FuncTranslator<'_, '_> {
    pub(crate) fn ty(&mut self, t: Ty) -> Inst {
        let m = self.b.module();
        match t {
            Ty::I32 => m.ty_i32(),
            Ty::I64 => m.ty_i64(),
            Ty::F32 => m.ty_f32(),
            Ty::F64 => m.ty_f64(),
        }
    }

    /// A binary operator on the two top operands.
    pub(crate) fn bin(&mut self, op: Opcode) -> Result<(), WasmError> {
        let y = self.pop()?;
        let x = self.pop()?;
        let r = self.binary(op, x, y)?;
        self.stack.push(r);
        Ok(())
    }

    pub(crate) fn binary(&mut self, op: Opcode, x: Inst, y: Inst) -> Result<Inst, WasmError> {
        let place = self.place();
        self.b.binary(op, x, y).at(place)
    }

    pub(crate) fn conv(&mut self, op: Opcode, to: Inst, v: Inst) -> Result<Inst, WasmError> {
        let place = self.place();
        self.b.convert(op, to, v).at(place)
    }

    /// A constant of the integer type of `like`.
    pub(crate) fn int_like(&mut self, like: Inst, v: u64) -> Result<Inst, WasmError> {
        let place = self.place();
        let m = self.b.module();
        let ty = m.ty(like).or_else(|| m.value_type(like));
        let ty = ty.ok_or_else(|| WasmError::unsupported("an untyped operand", place))?;
        let width = m.int_width(ty).unwrap_or(64);
        let v = if width >= 64 {
            v
        } else {
            v & ((1u64 << width) - 1)
        };
        m.const_int(ty, v).at(place)
    }

    /// A comparison's `i1` as wasm's `i32`.
    fn push_bool(&mut self, c: Inst) -> Result<(), WasmError> {
        let i32t = self.ty(Ty::I32);
        let r = self.conv(Opcode::ZEXT, i32t, c)?;
        self.stack.push(r);
        Ok(())
    }

    fn icmp(&mut self, cc: IntCC) -> Result<(), WasmError> {
        let y = self.pop()?;
        let x = self.pop()?;
        let place = self.place();
        let c = self.b.icmp(cc, x, y).at(place)?;
        self.push_bool(c)
    }

    fn fcmp(&mut self, cc: FloatCC) -> Result<(), WasmError> {
        let y = self.pop()?;
        let x = self.pop()?;
        let place = self.place();
        let c = self.b.fcmp(cc, x, y).at(place)?;
        self.push_bool(c)
    }

    fn eqz(&mut self) -> Result<(), WasmError> {
        let x = self.pop()?;
        let zero = self.int_like(x, 0)?;
        let place = self.place();
        let c = self.b.icmp(IntCC::Eq, x, zero).at(place)?;
        self.push_bool(c)
    }

    /// `rem_s`: 0 when the divisor is -1 (where the IR's `srem` would trap on `MIN`).
    fn rem_s(&mut self) -> Result<(), WasmError> {
        let y = self.pop()?;
        let x = self.pop()?;
        let minus1 = self.int_like(y, u64::MAX)?;
        let one = self.int_like(y, 1)?;
        let zero = self.int_like(y, 0)?;
        let place = self.place();
        let is_m1 = self.b.icmp(IntCC::Eq, y, minus1).at(place)?;
        let ty = self.b.module().ty(x);
        let safe = self.inst(Opcode::SELECT, ty, vec![is_m1, one, y], Payload::None)?;
        let r = self.binary(Opcode::SREM, x, safe)?;
        let r = self.inst(Opcode::SELECT, ty, vec![is_m1, zero, r], Payload::None)?;
        self.stack.push(r);
        Ok(())
    }

    /// A conversion `op` from the top operand to `to`.
    fn convert(&mut self, op: Opcode, to: Ty) -> Result<(), WasmError> {
        let x = self.pop()?;
        let t = self.ty(to);
        let r = self.conv(op, t, x)?;
        self.stack.push(r);
        Ok(())
    }

    /// Sign extension of the low `bits` bits (`i32.extend8_s` …).
    fn extend_s(&mut self, bits: u32, to: Ty) -> Result<(), WasmError> {
        let x = self.pop()?;
        let place = self.place();
        let narrow =
            self.b.module().ty_int(bits).ok_or_else(|| {
                WasmError::unsupported(format!("extension from {bits} bits"), place)
            })?;
        let t = self.conv(Opcode::TRUNC, narrow, x)?;
        let wide = self.ty(to);
        let r = self.conv(Opcode::SEXT, wide, t)?;
        self.stack.push(r);
        Ok(())
    }

    /// A trapping float-to-integer conversion: traps on NaN ("invalid conversion to integer")
    /// and unless `trunc(x)` fits the integer type ("integer overflow"), then converts (the IR's conversion is exact in range).
    fn trunc_trap(&mut self, from: Ty, to: Ty, signed: bool) -> Result<(), WasmError> {
        let x = self.pop()?;
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
        let place = self.place();
        let ft = self.ty(from);
        let m = self.b.module();
        let (lo_c, hi_c) = if from == Ty::F32 {
            (m.const_f32(lo as f32), m.const_f32(hi as f32))
        } else {
            (m.const_f64(lo), m.const_f64(hi))
        };
        let _ = ft;
        let lo_cc = if lo_inclusive {
            FloatCC::Oge
        } else {
            FloatCC::Ogt
        };
        let nan = self.b.fcmp(FloatCC::Uno, x, x).at(place)?;
        self.trap_if(nan, crate::traps::INVALID_CONVERSION)?;
        let above = self.b.fcmp(lo_cc, x, lo_c).at(place)?;
        let below = self.b.fcmp(FloatCC::Olt, x, hi_c).at(place)?;
        let ok = self.binary(Opcode::AND, above, below)?;
        let t = self.b.module().const_bool(true);
        let bad = self.binary(Opcode::XOR, ok, t)?;
        self.trap_if(bad, crate::traps::INTEGER_OVERFLOW)?;
        let it = self.ty(to);
        let op = if signed {
            Opcode::FPTOSI
        } else {
            Opcode::FPTOUI
        };
        let r = self.conv(op, it, x)?;
        self.stack.push(r);
        Ok(())
    }

    /// A unary operator (`clz` … `popcnt`, `fneg` … `fnearest`) on the top operand.
    fn un(&mut self, op: Opcode) -> Result<(), WasmError> {
        let x = self.pop()?;
        let place = self.place();
        let r = self.b.unary(op, x).at(place)?;
        self.stack.push(r);
        Ok(())
    }

    /// Translates a numeric operator; `false` if `op` is not one this front end handles.
    pub(crate) fn numeric(&mut self, op: &Operator<'_>) -> Result<bool, WasmError> {
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
                let t = self.ty(F32);
                let place = self.place();
                let c = self
                    .b
                    .module()
                    .const_float_bits(t, u64::from(value.bits()))
                    .at(place)?;
                self.stack.push(c);
            }
            O::F64Const { value } => {
                let t = self.ty(F64);
                let place = self.place();
                let c = self
                    .b
                    .module()
                    .const_float_bits(t, value.bits())
                    .at(place)?;
                self.stack.push(c);
            }
            O::I32Eqz | O::I64Eqz => self.eqz()?,
            O::I32Eq | O::I64Eq => self.icmp(IntCC::Eq)?,
            O::I32Ne | O::I64Ne => self.icmp(IntCC::Ne)?,
            O::I32LtS | O::I64LtS => self.icmp(IntCC::Slt)?,
            O::I32LtU | O::I64LtU => self.icmp(IntCC::Ult)?,
            O::I32GtS | O::I64GtS => self.icmp(IntCC::Sgt)?,
            O::I32GtU | O::I64GtU => self.icmp(IntCC::Ugt)?,
            O::I32LeS | O::I64LeS => self.icmp(IntCC::Sle)?,
            O::I32LeU | O::I64LeU => self.icmp(IntCC::Ule)?,
            O::I32GeS | O::I64GeS => self.icmp(IntCC::Sge)?,
            O::I32GeU | O::I64GeU => self.icmp(IntCC::Uge)?,
            O::F32Eq | O::F64Eq => self.fcmp(FloatCC::Oeq)?,
            O::F32Ne | O::F64Ne => self.fcmp(FloatCC::Une)?,
            O::F32Lt | O::F64Lt => self.fcmp(FloatCC::Olt)?,
            O::F32Gt | O::F64Gt => self.fcmp(FloatCC::Ogt)?,
            O::F32Le | O::F64Le => self.fcmp(FloatCC::Ole)?,
            O::F32Ge | O::F64Ge => self.fcmp(FloatCC::Oge)?,
            O::I32Add | O::I64Add => self.bin(Opcode::IADD)?,
            O::I32Sub | O::I64Sub => self.bin(Opcode::ISUB)?,
            O::I32Mul | O::I64Mul => self.bin(Opcode::IMUL)?,
            O::I32DivS | O::I64DivS => self.bin(Opcode::SDIV)?,
            O::I32DivU | O::I64DivU => self.bin(Opcode::UDIV)?,
            O::I32RemS | O::I64RemS => self.rem_s()?,
            O::I32RemU | O::I64RemU => self.bin(Opcode::UREM)?,
            O::I32And | O::I64And => self.bin(Opcode::AND)?,
            O::I32Or | O::I64Or => self.bin(Opcode::OR)?,
            O::I32Xor | O::I64Xor => self.bin(Opcode::XOR)?,
            O::I32Shl | O::I64Shl => self.bin(Opcode::SHL)?,
            O::I32ShrS | O::I64ShrS => self.bin(Opcode::ASHR)?,
            O::I32ShrU | O::I64ShrU => self.bin(Opcode::LSHR)?,
            O::I32Rotl | O::I64Rotl => self.bin(Opcode::ROTL)?,
            O::I32Rotr | O::I64Rotr => self.bin(Opcode::ROTR)?,
            O::I32Clz | O::I64Clz => self.un(Opcode::CLZ)?,
            O::I32Ctz | O::I64Ctz => self.un(Opcode::CTZ)?,
            O::I32Popcnt | O::I64Popcnt => self.un(Opcode::POPCNT)?,
            O::F32Add | O::F64Add => self.bin(Opcode::FADD)?,
            O::F32Sub | O::F64Sub => self.bin(Opcode::FSUB)?,
            O::F32Mul | O::F64Mul => self.bin(Opcode::FMUL)?,
            O::F32Div | O::F64Div => self.bin(Opcode::FDIV)?,
            O::F32Neg | O::F64Neg => self.un(Opcode::FNEG)?,
            O::F32Abs | O::F64Abs => self.un(Opcode::FABS)?,
            O::F32Copysign | O::F64Copysign => self.bin(Opcode::FCOPYSIGN)?,
            O::F32Ceil | O::F64Ceil => self.un(Opcode::FCEIL)?,
            O::F32Floor | O::F64Floor => self.un(Opcode::FFLOOR)?,
            O::F32Trunc | O::F64Trunc => self.un(Opcode::FTRUNC)?,
            O::F32Nearest | O::F64Nearest => self.un(Opcode::FNEAREST)?,
            O::F32Sqrt | O::F64Sqrt => self.un(Opcode::FSQRT)?,
            O::F32Min | O::F64Min => self.bin(Opcode::FMIN)?,
            O::F32Max | O::F64Max => self.bin(Opcode::FMAX)?,
            O::I32WrapI64 => self.convert(Opcode::TRUNC, I32)?,
            O::I64ExtendI32S => self.convert(Opcode::SEXT, I64)?,
            O::I64ExtendI32U => self.convert(Opcode::ZEXT, I64)?,
            O::I32Extend8S => self.extend_s(8, I32)?,
            O::I32Extend16S => self.extend_s(16, I32)?,
            O::I64Extend8S => self.extend_s(8, I64)?,
            O::I64Extend16S => self.extend_s(16, I64)?,
            O::I64Extend32S => self.extend_s(32, I64)?,
            O::F32DemoteF64 => self.convert(Opcode::FPTRUNC, F32)?,
            O::F64PromoteF32 => self.convert(Opcode::FPEXT, F64)?,
            O::F32ConvertI32S | O::F32ConvertI64S => self.convert(Opcode::SITOFP, F32)?,
            O::F32ConvertI32U | O::F32ConvertI64U => self.convert(Opcode::UITOFP, F32)?,
            O::F64ConvertI32S | O::F64ConvertI64S => self.convert(Opcode::SITOFP, F64)?,
            O::F64ConvertI32U | O::F64ConvertI64U => self.convert(Opcode::UITOFP, F64)?,
            O::I32ReinterpretF32 => self.convert(Opcode::BITCAST, I32)?,
            O::I64ReinterpretF64 => self.convert(Opcode::BITCAST, I64)?,
            O::F32ReinterpretI32 => self.convert(Opcode::BITCAST, F32)?,
            O::F64ReinterpretI64 => self.convert(Opcode::BITCAST, F64)?,
            O::I32TruncSatF32S | O::I32TruncSatF64S => self.convert(Opcode::FPTOSI, I32)?,
            O::I32TruncSatF32U | O::I32TruncSatF64U => self.convert(Opcode::FPTOUI, I32)?,
            O::I64TruncSatF32S | O::I64TruncSatF64S => self.convert(Opcode::FPTOSI, I64)?,
            O::I64TruncSatF32U | O::I64TruncSatF64U => self.convert(Opcode::FPTOUI, I64)?,
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
