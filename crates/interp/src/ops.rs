//! Pure semantics of the arithmetic, comparison and conversion opcodes (spec/ir.md,
//! "Integer arithmetic", "Float arithmetic", "Comparisons", "Conversions"), on bit patterns.

use irkit_core::Opcode;

use crate::layout::{Scalar, ScalarValue};
use crate::trap::TrapKind;
use crate::value::{Value, mask, sext};

/// The canonical quiet NaN of `f32`.
pub const CANONICAL_NAN_F32: u32 = 0x7fc0_0000;
/// The canonical quiet NaN of `f64`.
pub const CANONICAL_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

/// An integer binary operation on two `width`-bit patterns (zero-extended); the result is
/// zero-extended too. Traps on division by zero and on signed `MIN / -1`.
pub(crate) fn int_binop(op: Opcode, width: u32, a: u64, b: u64) -> Result<u64, TrapKind> {
    let shamt = (mask(b, width) & u64::from(width - 1)) as u32;
    let (sa, sb) = (sext(a, width), sext(b, width));
    let min = sext(1u64 << (width - 1), width);
    let r = match op {
        Opcode::IADD => a.wrapping_add(b),
        Opcode::ISUB => a.wrapping_sub(b),
        Opcode::IMUL => a.wrapping_mul(b),
        Opcode::UDIV | Opcode::UREM if mask(b, width) == 0 => {
            return Err(TrapKind::DivisionByZero);
        }
        Opcode::SDIV | Opcode::SREM if mask(b, width) == 0 => {
            return Err(TrapKind::DivisionByZero);
        }
        Opcode::SDIV | Opcode::SREM if sa == min && sb == -1 => {
            return Err(TrapKind::IntegerOverflow);
        }
        Opcode::UDIV => mask(a, width) / mask(b, width),
        Opcode::UREM => mask(a, width) % mask(b, width),
        // In 64 bits, MIN / -1 was excluded above, so these cannot overflow.
        Opcode::SDIV => sa.wrapping_div(sb) as u64,
        Opcode::SREM => sa.wrapping_rem(sb) as u64,
        Opcode::SHL => a << shamt,
        Opcode::LSHR => mask(a, width) >> shamt,
        Opcode::ASHR => (sa >> shamt) as u64,
        Opcode::AND => a & b,
        Opcode::OR => a | b,
        Opcode::XOR => a ^ b,
        Opcode::ROTL | Opcode::ROTR => {
            let a = mask(a, width);
            // A rotation by the amount modulo the width (a power of two: the same as masking).
            let n = shamt;
            let n = if op == Opcode::ROTL {
                n
            } else {
                (width - n) % width
            };
            if n == 0 {
                a
            } else {
                (a << n) | (a >> (width - n))
            }
        }
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not an integer operation"
            )));
        }
    };
    Ok(mask(r, width))
}

/// An integer unary operation (`clz`, `ctz`, `popcnt`) on a `width`-bit pattern; the result
/// is a count, at most `width`.
pub(crate) fn int_unop(op: Opcode, width: u32, a: u64) -> Result<u64, TrapKind> {
    let a = mask(a, width);
    let r = match op {
        // The pattern sits in the low `width` bits: leading zeros beyond them are not counted.
        Opcode::CLZ => u64::from(a.leading_zeros() - (64 - width)),
        Opcode::CTZ => u64::from(a.trailing_zeros().min(width)),
        Opcode::POPCNT => u64::from(a.count_ones()),
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not an integer unary operation"
            )));
        }
    };
    Ok(r)
}

/// wasm's `min`/`max` (spec/ir.md `fmin`): a NaN if either operand is one; -0 is below +0.
macro_rules! min_max {
    ($x:expr, $y:expr, $min:expr) => {{
        let (x, y) = ($x, $y);
        if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            // Equal: only the signs of zeros may differ.
            if x.is_sign_negative() == $min { x } else { y }
        } else if (x < y) == $min {
            x
        } else {
            y
        }
    }};
}

/// A float unary operation on `f32` bits: `fneg` and `fabs` change the sign bit only (a NaN
/// keeps its payload); the others give the canonical NaN for a NaN.
pub(crate) fn f32_unop(op: Opcode, a: u32) -> Result<u32, TrapKind> {
    let x = f32::from_bits(a);
    let r = match op {
        Opcode::FNEG => return Ok(a ^ 0x8000_0000),
        Opcode::FABS => return Ok(a & 0x7fff_ffff),
        Opcode::FSQRT => x.sqrt(),
        Opcode::FCEIL => x.ceil(),
        Opcode::FFLOOR => x.floor(),
        Opcode::FTRUNC => x.trunc(),
        Opcode::FNEAREST => x.round_ties_even(),
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not a float unary operation"
            )));
        }
    };
    Ok(canon32(r))
}

/// A float unary operation on `f64` bits (see [`f32_unop`]).
pub(crate) fn f64_unop(op: Opcode, a: u64) -> Result<u64, TrapKind> {
    let x = f64::from_bits(a);
    let r = match op {
        Opcode::FNEG => return Ok(a ^ (1 << 63)),
        Opcode::FABS => return Ok(a & !(1 << 63)),
        Opcode::FSQRT => x.sqrt(),
        Opcode::FCEIL => x.ceil(),
        Opcode::FFLOOR => x.floor(),
        Opcode::FTRUNC => x.trunc(),
        Opcode::FNEAREST => x.round_ties_even(),
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not a float unary operation"
            )));
        }
    };
    Ok(canon64(r))
}

/// A float binary operation on `f32` bits; a NaN result is the canonical NaN, except for
/// `fcopysign`, which changes the sign bit only.
pub(crate) fn f32_binop(op: Opcode, a: u32, b: u32) -> Result<u32, TrapKind> {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    let r = match op {
        Opcode::FCOPYSIGN => return Ok((a & 0x7fff_ffff) | (b & 0x8000_0000)),
        Opcode::FMIN => min_max!(x, y, true),
        Opcode::FMAX => min_max!(x, y, false),
        Opcode::FADD => x + y,
        Opcode::FSUB => x - y,
        Opcode::FMUL => x * y,
        Opcode::FDIV => x / y,
        Opcode::FREM => x % y,
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not a float operation"
            )));
        }
    };
    Ok(canon32(r))
}

/// A float binary operation on `f64` bits (see [`f32_binop`]).
pub(crate) fn f64_binop(op: Opcode, a: u64, b: u64) -> Result<u64, TrapKind> {
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    let r = match op {
        Opcode::FCOPYSIGN => return Ok((a & !(1 << 63)) | (b & (1 << 63))),
        Opcode::FMIN => min_max!(x, y, true),
        Opcode::FMAX => min_max!(x, y, false),
        Opcode::FADD => x + y,
        Opcode::FSUB => x - y,
        Opcode::FMUL => x * y,
        Opcode::FDIV => x / y,
        Opcode::FREM => x % y,
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not a float operation"
            )));
        }
    };
    Ok(canon64(r))
}

fn canon32(x: f32) -> u32 {
    if x.is_nan() {
        CANONICAL_NAN_F32
    } else {
        x.to_bits()
    }
}

fn canon64(x: f64) -> u64 {
    if x.is_nan() {
        CANONICAL_NAN_F64
    } else {
        x.to_bits()
    }
}

/// A conversion opcode applied to `v`, producing a value of scalar kind `to`.
pub(crate) fn convert(op: Opcode, v: &Value, to: Scalar) -> Result<Value, TrapKind> {
    let bad = || TrapKind::Malformed(format!("{op} of {v} to {to:?}"));
    let r = match (op, to) {
        (Opcode::TRUNC | Opcode::ZEXT, Scalar::Int(w)) => {
            let (_, bits) = v.as_int().ok_or_else(bad)?;
            to.value(mask(bits, w))
        }
        (Opcode::SEXT, Scalar::Int(_)) => to.value(v.as_signed().ok_or_else(bad)? as u64),
        (Opcode::FPTRUNC, Scalar::F32) => Value::F32(canon32(v.as_f64().ok_or_else(bad)? as f32)),
        (Opcode::FPEXT, Scalar::F64) => Value::F64(canon64(f64::from(v.as_f32().ok_or_else(bad)?))),
        (Opcode::FPTOUI, Scalar::Int(w)) => {
            let x = float_of(v).ok_or_else(bad)?;
            // `as` truncates toward zero, saturates, and maps NaN to 0.
            let max = mask(u64::MAX, w);
            to.value((x as u64).min(max))
        }
        (Opcode::FPTOSI, Scalar::Int(w)) => {
            let x = float_of(v).ok_or_else(bad)?;
            let min = sext(1u64 << (w - 1), w);
            let max = !min;
            to.value((x as i64).clamp(min, max) as u64)
        }
        (Opcode::UITOFP, Scalar::F32) => Value::f32(v.as_int().ok_or_else(bad)?.1 as f32),
        (Opcode::UITOFP, Scalar::F64) => Value::f64(v.as_int().ok_or_else(bad)?.1 as f64),
        (Opcode::SITOFP, Scalar::F32) => Value::f32(v.as_signed().ok_or_else(bad)? as f32),
        (Opcode::SITOFP, Scalar::F64) => Value::f64(v.as_signed().ok_or_else(bad)? as f64),
        (Opcode::PTRTOINT, Scalar::Int(_)) => to.value(v.as_ptr().ok_or_else(bad)?),
        (Opcode::INTTOPTR, Scalar::Ptr) => Value::Ptr(v.as_int().ok_or_else(bad)?.1),
        (Opcode::BITCAST, _) => {
            let bits = v.scalar_bits().ok_or_else(bad)?;
            if v.scalar_size() != Some(to.size()) {
                return Err(bad());
            }
            to.value(bits)
        }
        _ => return Err(bad()),
    };
    Ok(r)
}

/// A float value widened exactly to `f64`.
pub(crate) fn float_of(v: &Value) -> Option<f64> {
    match *v {
        Value::F32(b) => Some(f64::from(f32::from_bits(b))),
        Value::F64(b) => Some(f64::from_bits(b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_are_masked() {
        assert_eq!(int_binop(Opcode::SHL, 32, 1, 33), Ok(2));
        assert_eq!(int_binop(Opcode::SHL, 1, 1, 1), Ok(1));
        assert_eq!(int_binop(Opcode::ASHR, 8, 0x80, 9), Ok(0xc0));
        assert_eq!(int_binop(Opcode::LSHR, 8, 0x80, 7), Ok(1));
    }

    #[test]
    fn bit_counts_and_rotates_at_every_width() {
        assert_eq!(int_unop(Opcode::CLZ, 32, 0), Ok(32));
        assert_eq!(int_unop(Opcode::CLZ, 8, 1), Ok(7));
        assert_eq!(int_unop(Opcode::CLZ, 1, 0), Ok(1));
        assert_eq!(int_unop(Opcode::CLZ, 1, 1), Ok(0));
        assert_eq!(int_unop(Opcode::CTZ, 16, 0), Ok(16));
        assert_eq!(int_unop(Opcode::CTZ, 64, 1 << 63), Ok(63));
        assert_eq!(int_unop(Opcode::POPCNT, 64, u64::MAX), Ok(64));
        assert_eq!(int_unop(Opcode::POPCNT, 8, 0xff), Ok(8));
        assert_eq!(int_binop(Opcode::ROTL, 8, 0x81, 1), Ok(0x03));
        assert_eq!(
            int_binop(Opcode::ROTL, 32, 0x8000_0001, 32),
            Ok(0x8000_0001)
        );
        assert_eq!(int_binop(Opcode::ROTR, 16, 0x0001, 1), Ok(0x8000));
        assert_eq!(int_binop(Opcode::ROTR, 64, 1, 65), Ok(1 << 63));
        assert_eq!(int_binop(Opcode::ROTL, 1, 1, 1), Ok(1));
    }

    #[test]
    fn float_min_max_and_signs() {
        let (pz, nz) = (0f64.to_bits(), (-0f64).to_bits());
        assert_eq!(f64_binop(Opcode::FMIN, pz, nz), Ok(nz));
        assert_eq!(f64_binop(Opcode::FMIN, nz, pz), Ok(nz));
        assert_eq!(f64_binop(Opcode::FMAX, nz, pz), Ok(pz));
        let nan = 0x7ff0_0000_0000_0001;
        assert_eq!(f64_binop(Opcode::FMAX, nan, pz), Ok(CANONICAL_NAN_F64));
        assert_eq!(
            f64_binop(Opcode::FMIN, 1f64.to_bits(), nan),
            Ok(CANONICAL_NAN_F64)
        );
        assert_eq!(f64_unop(Opcode::FNEG, nan), Ok(nan | 1 << 63));
        assert_eq!(
            f32_binop(Opcode::FCOPYSIGN, 0x7fc0_0001, 0x8000_0000),
            Ok(0xffc0_0001)
        );
        assert_eq!(
            f64_unop(Opcode::FNEAREST, 2.5f64.to_bits()),
            Ok(2f64.to_bits())
        );
        assert_eq!(f64_unop(Opcode::FNEAREST, (-0.5f64).to_bits()), Ok(nz));
        assert_eq!(
            f32_unop(Opcode::FSQRT, (-1f32).to_bits()),
            Ok(CANONICAL_NAN_F32)
        );
    }

    #[test]
    fn division_traps() {
        assert_eq!(
            int_binop(Opcode::SDIV, 1, 1, 1),
            Err(TrapKind::IntegerOverflow)
        );
        assert_eq!(
            int_binop(Opcode::SREM, 64, 1 << 63, u64::MAX),
            Err(TrapKind::IntegerOverflow)
        );
        assert_eq!(
            int_binop(Opcode::UREM, 8, 5, 0),
            Err(TrapKind::DivisionByZero)
        );
        assert_eq!(int_binop(Opcode::SREM, 8, 0xf9, 2), Ok(0xff)); // -7 % 2 = -1
    }

    #[test]
    fn saturating_conversions() {
        let c = |op, v: f64, w| convert(op, &Value::f64(v), Scalar::Int(w)).unwrap();
        assert_eq!(c(Opcode::FPTOSI, f64::NAN, 32), Value::I32(0));
        assert_eq!(c(Opcode::FPTOSI, 1e20, 8), Value::I8(0x7f));
        assert_eq!(c(Opcode::FPTOSI, -1e20, 16), Value::I16(0x8000));
        assert_eq!(c(Opcode::FPTOUI, -5.0, 32), Value::I32(0));
        assert_eq!(c(Opcode::FPTOUI, f64::INFINITY, 8), Value::I8(0xff));
        assert_eq!(c(Opcode::FPTOSI, -1.0, 1), Value::I1(1));
        assert_eq!(c(Opcode::FPTOSI, -2.9, 32), Value::i32(-2));
    }
}
