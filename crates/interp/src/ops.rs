//! Pure semantics of the arithmetic, comparison and conversion opcodes (spec/ir.md,
//! "Integer arithmetic", "Float arithmetic", "Comparisons", "Conversions"), on bit patterns.

use irkit_core::Op;

use crate::layout::{Scalar, ScalarValue};
use crate::trap::TrapKind;
use crate::value::{Value, mask, sext};

/// The canonical quiet NaN of `f32`.
pub const CANONICAL_NAN_F32: u32 = 0x7fc0_0000;
/// The canonical quiet NaN of `f64`.
pub const CANONICAL_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

/// An integer binary operation on two `width`-bit patterns (zero-extended); the result is
/// zero-extended too. Traps on division by zero and on signed `MIN / -1`.
pub(crate) fn int_binop(op: Op, width: u32, a: u64, b: u64) -> Result<u64, TrapKind> {
    let shamt = (mask(b, width) & u64::from(width - 1)) as u32;
    let (sa, sb) = (sext(a, width), sext(b, width));
    let min = sext(1u64 << (width - 1), width);
    let r = match op {
        Op::Iadd => a.wrapping_add(b),
        Op::Isub => a.wrapping_sub(b),
        Op::Imul => a.wrapping_mul(b),
        Op::Udiv | Op::Urem if mask(b, width) == 0 => {
            return Err(TrapKind::DivisionByZero);
        }
        Op::Sdiv | Op::Srem if mask(b, width) == 0 => {
            return Err(TrapKind::DivisionByZero);
        }
        Op::Sdiv | Op::Srem if sa == min && sb == -1 => {
            return Err(TrapKind::IntegerOverflow);
        }
        Op::Udiv => mask(a, width) / mask(b, width),
        Op::Urem => mask(a, width) % mask(b, width),
        // In 64 bits, MIN / -1 was excluded above, so these cannot overflow.
        Op::Sdiv => sa.wrapping_div(sb) as u64,
        Op::Srem => sa.wrapping_rem(sb) as u64,
        Op::Shl => a << shamt,
        Op::Lshr => mask(a, width) >> shamt,
        Op::Ashr => (sa >> shamt) as u64,
        Op::And => a & b,
        Op::Or => a | b,
        Op::Xor => a ^ b,
        Op::Rotl | Op::Rotr => {
            let a = mask(a, width);
            // A rotation by the amount modulo the width (a power of two: the same as masking).
            let n = shamt;
            let n = if op == Op::Rotl {
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
pub(crate) fn int_unop(op: Op, width: u32, a: u64) -> Result<u64, TrapKind> {
    let a = mask(a, width);
    let r = match op {
        // The pattern sits in the low `width` bits: leading zeros beyond them are not counted.
        Op::Clz => u64::from(a.leading_zeros() - (64 - width)),
        Op::Ctz => u64::from(a.trailing_zeros().min(width)),
        Op::Popcnt => u64::from(a.count_ones()),
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
pub(crate) fn f32_unop(op: Op, a: u32) -> Result<u32, TrapKind> {
    let x = f32::from_bits(a);
    let r = match op {
        Op::Fneg => return Ok(a ^ 0x8000_0000),
        Op::Fabs => return Ok(a & 0x7fff_ffff),
        Op::Fsqrt => x.sqrt(),
        Op::Fceil => x.ceil(),
        Op::Ffloor => x.floor(),
        Op::Ftrunc => x.trunc(),
        Op::Fnearest => x.round_ties_even(),
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not a float unary operation"
            )));
        }
    };
    Ok(canon32(r))
}

/// A float unary operation on `f64` bits (see [`f32_unop`]).
pub(crate) fn f64_unop(op: Op, a: u64) -> Result<u64, TrapKind> {
    let x = f64::from_bits(a);
    let r = match op {
        Op::Fneg => return Ok(a ^ (1 << 63)),
        Op::Fabs => return Ok(a & !(1 << 63)),
        Op::Fsqrt => x.sqrt(),
        Op::Fceil => x.ceil(),
        Op::Ffloor => x.floor(),
        Op::Ftrunc => x.trunc(),
        Op::Fnearest => x.round_ties_even(),
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
pub(crate) fn f32_binop(op: Op, a: u32, b: u32) -> Result<u32, TrapKind> {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    let r = match op {
        Op::Fcopysign => return Ok((a & 0x7fff_ffff) | (b & 0x8000_0000)),
        Op::Fmin => min_max!(x, y, true),
        Op::Fmax => min_max!(x, y, false),
        Op::Fadd => x + y,
        Op::Fsub => x - y,
        Op::Fmul => x * y,
        Op::Fdiv => x / y,
        Op::Frem => x % y,
        _ => {
            return Err(TrapKind::Malformed(format!(
                "{op} is not a float operation"
            )));
        }
    };
    Ok(canon32(r))
}

/// A float binary operation on `f64` bits (see [`f32_binop`]).
pub(crate) fn f64_binop(op: Op, a: u64, b: u64) -> Result<u64, TrapKind> {
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    let r = match op {
        Op::Fcopysign => return Ok((a & !(1 << 63)) | (b & (1 << 63))),
        Op::Fmin => min_max!(x, y, true),
        Op::Fmax => min_max!(x, y, false),
        Op::Fadd => x + y,
        Op::Fsub => x - y,
        Op::Fmul => x * y,
        Op::Fdiv => x / y,
        Op::Frem => x % y,
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
pub(crate) fn convert(op: Op, v: &Value, to: Scalar) -> Result<Value, TrapKind> {
    let bad = || TrapKind::Malformed(format!("{op} of {v} to {to:?}"));
    let r = match (op, to) {
        (Op::Trunc | Op::Zext, Scalar::Int(w)) => {
            let (_, bits) = v.as_int().ok_or_else(bad)?;
            to.value(mask(bits, w))
        }
        (Op::Sext, Scalar::Int(_)) => to.value(v.as_signed().ok_or_else(bad)? as u64),
        (Op::Fptrunc, Scalar::F32) => Value::F32(canon32(v.as_f64().ok_or_else(bad)? as f32)),
        (Op::Fpext, Scalar::F64) => Value::F64(canon64(f64::from(v.as_f32().ok_or_else(bad)?))),
        (Op::Fptoui, Scalar::Int(w)) => {
            let x = float_of(v).ok_or_else(bad)?;
            // `as` truncates toward zero, saturates, and maps NaN to 0.
            let max = mask(u64::MAX, w);
            to.value((x as u64).min(max))
        }
        (Op::Fptosi, Scalar::Int(w)) => {
            let x = float_of(v).ok_or_else(bad)?;
            let min = sext(1u64 << (w - 1), w);
            let max = !min;
            to.value((x as i64).clamp(min, max) as u64)
        }
        (Op::Uitofp, Scalar::F32) => Value::f32(v.as_int().ok_or_else(bad)?.1 as f32),
        (Op::Uitofp, Scalar::F64) => Value::f64(v.as_int().ok_or_else(bad)?.1 as f64),
        (Op::Sitofp, Scalar::F32) => Value::f32(v.as_signed().ok_or_else(bad)? as f32),
        (Op::Sitofp, Scalar::F64) => Value::f64(v.as_signed().ok_or_else(bad)? as f64),
        (Op::Ptrtoint, Scalar::Int(_)) => to.value(v.as_ptr().ok_or_else(bad)?),
        (Op::Inttoptr, Scalar::Ptr) => Value::Ptr(v.as_int().ok_or_else(bad)?.1),
        (Op::Bitcast, _) => {
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
        assert_eq!(int_binop(Op::Shl, 32, 1, 33), Ok(2));
        assert_eq!(int_binop(Op::Shl, 1, 1, 1), Ok(1));
        assert_eq!(int_binop(Op::Ashr, 8, 0x80, 9), Ok(0xc0));
        assert_eq!(int_binop(Op::Lshr, 8, 0x80, 7), Ok(1));
    }

    #[test]
    fn bit_counts_and_rotates_at_every_width() {
        assert_eq!(int_unop(Op::Clz, 32, 0), Ok(32));
        assert_eq!(int_unop(Op::Clz, 8, 1), Ok(7));
        assert_eq!(int_unop(Op::Clz, 1, 0), Ok(1));
        assert_eq!(int_unop(Op::Clz, 1, 1), Ok(0));
        assert_eq!(int_unop(Op::Ctz, 16, 0), Ok(16));
        assert_eq!(int_unop(Op::Ctz, 64, 1 << 63), Ok(63));
        assert_eq!(int_unop(Op::Popcnt, 64, u64::MAX), Ok(64));
        assert_eq!(int_unop(Op::Popcnt, 8, 0xff), Ok(8));
        assert_eq!(int_binop(Op::Rotl, 8, 0x81, 1), Ok(0x03));
        assert_eq!(int_binop(Op::Rotl, 32, 0x8000_0001, 32), Ok(0x8000_0001));
        assert_eq!(int_binop(Op::Rotr, 16, 0x0001, 1), Ok(0x8000));
        assert_eq!(int_binop(Op::Rotr, 64, 1, 65), Ok(1 << 63));
        assert_eq!(int_binop(Op::Rotl, 1, 1, 1), Ok(1));
    }

    #[test]
    fn float_min_max_and_signs() {
        let (pz, nz) = (0f64.to_bits(), (-0f64).to_bits());
        assert_eq!(f64_binop(Op::Fmin, pz, nz), Ok(nz));
        assert_eq!(f64_binop(Op::Fmin, nz, pz), Ok(nz));
        assert_eq!(f64_binop(Op::Fmax, nz, pz), Ok(pz));
        let nan = 0x7ff0_0000_0000_0001;
        assert_eq!(f64_binop(Op::Fmax, nan, pz), Ok(CANONICAL_NAN_F64));
        assert_eq!(
            f64_binop(Op::Fmin, 1f64.to_bits(), nan),
            Ok(CANONICAL_NAN_F64)
        );
        assert_eq!(f64_unop(Op::Fneg, nan), Ok(nan | 1 << 63));
        assert_eq!(
            f32_binop(Op::Fcopysign, 0x7fc0_0001, 0x8000_0000),
            Ok(0xffc0_0001)
        );
        assert_eq!(f64_unop(Op::Fnearest, 2.5f64.to_bits()), Ok(2f64.to_bits()));
        assert_eq!(f64_unop(Op::Fnearest, (-0.5f64).to_bits()), Ok(nz));
        assert_eq!(
            f32_unop(Op::Fsqrt, (-1f32).to_bits()),
            Ok(CANONICAL_NAN_F32)
        );
    }

    #[test]
    fn division_traps() {
        assert_eq!(int_binop(Op::Sdiv, 1, 1, 1), Err(TrapKind::IntegerOverflow));
        assert_eq!(
            int_binop(Op::Srem, 64, 1 << 63, u64::MAX),
            Err(TrapKind::IntegerOverflow)
        );
        assert_eq!(int_binop(Op::Urem, 8, 5, 0), Err(TrapKind::DivisionByZero));
        assert_eq!(int_binop(Op::Srem, 8, 0xf9, 2), Ok(0xff)); // -7 % 2 = -1
    }

    #[test]
    fn saturating_conversions() {
        let c = |op, v: f64, w| convert(op, &Value::f64(v), Scalar::Int(w)).unwrap();
        assert_eq!(c(Op::Fptosi, f64::NAN, 32), Value::I32(0));
        assert_eq!(c(Op::Fptosi, 1e20, 8), Value::I8(0x7f));
        assert_eq!(c(Op::Fptosi, -1e20, 16), Value::I16(0x8000));
        assert_eq!(c(Op::Fptoui, -5.0, 32), Value::I32(0));
        assert_eq!(c(Op::Fptoui, f64::INFINITY, 8), Value::I8(0xff));
        assert_eq!(c(Op::Fptosi, -1.0, 1), Value::I1(1));
        assert_eq!(c(Op::Fptosi, -2.9, 32), Value::i32(-2));
    }
}
