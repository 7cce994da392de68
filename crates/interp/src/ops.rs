//! Pure semantics of the arithmetic, comparison and conversion opcodes (spec/ir.md,
//! "Integer arithmetic", "Float arithmetic", "Comparisons", "Conversions"), on bit patterns.

use irkit_core::{Conversion, FloatBinary, FloatUnary, IntBinary, IntUnary};

use crate::layout::{Scalar, ScalarValue};
use crate::trap::TrapKind;
use crate::value::{Value, mask, sext};

/// The canonical quiet NaN of `f32`.
pub const CANONICAL_NAN_F32: u32 = 0x7fc0_0000;
/// The canonical quiet NaN of `f64`.
pub const CANONICAL_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

/// An integer binary operation on two `width`-bit patterns (zero-extended); the result is
/// zero-extended too. Traps on division by zero and on signed `MIN / -1`.
pub(crate) fn int_binop(op: IntBinary, width: u32, a: u64, b: u64) -> Result<u64, TrapKind> {
    use IntBinary as B;
    let shamt = (mask(b, width) & u64::from(width - 1)) as u32;
    let (sa, sb) = (sext(a, width), sext(b, width));
    let min = sext(1u64 << (width - 1), width);
    let r = match op {
        B::Iadd => a.wrapping_add(b),
        B::Isub => a.wrapping_sub(b),
        B::Imul => a.wrapping_mul(b),
        B::Udiv | B::Urem if mask(b, width) == 0 => {
            return Err(TrapKind::DivisionByZero);
        }
        B::Sdiv | B::Srem if mask(b, width) == 0 => {
            return Err(TrapKind::DivisionByZero);
        }
        B::Sdiv | B::Srem if sa == min && sb == -1 => {
            return Err(TrapKind::IntegerOverflow);
        }
        B::Udiv => mask(a, width) / mask(b, width),
        B::Urem => mask(a, width) % mask(b, width),
        // In 64 bits, MIN / -1 was excluded above, so these cannot overflow.
        B::Sdiv => sa.wrapping_div(sb) as u64,
        B::Srem => sa.wrapping_rem(sb) as u64,
        B::Shl => a << shamt,
        B::Lshr => mask(a, width) >> shamt,
        B::Ashr => (sa >> shamt) as u64,
        B::And => a & b,
        B::Or => a | b,
        B::Xor => a ^ b,
        B::Rotl | B::Rotr => {
            let a = mask(a, width);
            // A rotation by the amount modulo the width (a power of two: the same as masking).
            let n = shamt;
            let n = if op == B::Rotl {
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
    };
    Ok(mask(r, width))
}

/// An integer unary operation (`clz`, `ctz`, `popcnt`) on a `width`-bit pattern; the result
/// is a count, at most `width`.
pub(crate) fn int_unop(op: IntUnary, width: u32, a: u64) -> u64 {
    let a = mask(a, width);
    match op {
        // The pattern sits in the low `width` bits: leading zeros beyond them are not counted.
        IntUnary::Clz => u64::from(a.leading_zeros() - (64 - width)),
        IntUnary::Ctz => u64::from(a.trailing_zeros().min(width)),
        IntUnary::Popcnt => u64::from(a.count_ones()),
    }
}

/// The two float formats, seen through their bit patterns, so that each float operation is
/// written once.
pub(crate) trait Float:
    Copy
    + PartialEq
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
{
    /// The bit pattern (`u32` or `u64`).
    type Bits: Copy
        + std::ops::BitAnd<Output = Self::Bits>
        + std::ops::BitOr<Output = Self::Bits>
        + std::ops::BitXor<Output = Self::Bits>
        + std::ops::Not<Output = Self::Bits>;
    /// The sign bit.
    const SIGN: Self::Bits;
    /// The canonical quiet NaN.
    const CANONICAL_NAN: Self::Bits;
    fn from_bits(bits: Self::Bits) -> Self;
    fn to_bits(self) -> Self::Bits;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn sqrt(self) -> Self;
    fn ceil(self) -> Self;
    fn floor(self) -> Self;
    fn trunc(self) -> Self;
    fn round_ties_even(self) -> Self;
}

macro_rules! float_impl {
    ($f:ty, $bits:ty, $nan:expr) => {
        impl Float for $f {
            type Bits = $bits;
            const SIGN: $bits = 1 << (<$bits>::BITS - 1);
            const CANONICAL_NAN: $bits = $nan;
            fn from_bits(bits: $bits) -> $f {
                <$f>::from_bits(bits)
            }
            fn to_bits(self) -> $bits {
                <$f>::to_bits(self)
            }
            fn is_nan(self) -> bool {
                <$f>::is_nan(self)
            }
            fn is_sign_negative(self) -> bool {
                <$f>::is_sign_negative(self)
            }
            fn sqrt(self) -> $f {
                <$f>::sqrt(self)
            }
            fn ceil(self) -> $f {
                <$f>::ceil(self)
            }
            fn floor(self) -> $f {
                <$f>::floor(self)
            }
            fn trunc(self) -> $f {
                <$f>::trunc(self)
            }
            fn round_ties_even(self) -> $f {
                <$f>::round_ties_even(self)
            }
        }
    };
}

float_impl!(f32, u32, CANONICAL_NAN_F32);
float_impl!(f64, u64, CANONICAL_NAN_F64);

/// `x`'s bits, or the canonical NaN if `x` is a NaN.
fn canonical<F: Float>(x: F) -> F::Bits {
    if x.is_nan() {
        F::CANONICAL_NAN
    } else {
        x.to_bits()
    }
}

/// wasm's `min`/`max` (spec/ir.md `fmin`): a NaN if either operand is one; -0 is below +0.
fn min_max<F: Float>(x: F, y: F, min: bool) -> F {
    if x.is_nan() || y.is_nan() {
        x + y
    } else if x == y {
        // Equal: only the signs of zeros may differ.
        if x.is_sign_negative() == min { x } else { y }
    } else if (x < y) == min {
        x
    } else {
        y
    }
}

/// A float unary operation on the bits of an `F`: `fneg` and `fabs` change the sign bit only
/// (a NaN keeps its payload); the others give the canonical NaN for a NaN.
pub(crate) fn float_unop<F: Float>(op: FloatUnary, a: F::Bits) -> F::Bits {
    let x = F::from_bits(a);
    let r = match op {
        FloatUnary::Fneg => return a ^ F::SIGN,
        FloatUnary::Fabs => return a & !F::SIGN,
        FloatUnary::Fsqrt => x.sqrt(),
        FloatUnary::Fceil => x.ceil(),
        FloatUnary::Ffloor => x.floor(),
        FloatUnary::Ftrunc => x.trunc(),
        FloatUnary::Fnearest => x.round_ties_even(),
    };
    canonical(r)
}

/// A float binary operation on the bits of two `F`s; a NaN result is the canonical NaN,
/// except for `fcopysign`, which changes the sign bit only.
pub(crate) fn float_binop<F: Float>(op: FloatBinary, a: F::Bits, b: F::Bits) -> F::Bits {
    let (x, y) = (F::from_bits(a), F::from_bits(b));
    let r = match op {
        FloatBinary::Fcopysign => return (a & !F::SIGN) | (b & F::SIGN),
        FloatBinary::Fmin => min_max(x, y, true),
        FloatBinary::Fmax => min_max(x, y, false),
        FloatBinary::Fadd => x + y,
        FloatBinary::Fsub => x - y,
        FloatBinary::Fmul => x * y,
        FloatBinary::Fdiv => x / y,
        FloatBinary::Frem => x % y,
    };
    canonical(r)
}

/// A conversion opcode applied to `v`, producing a value of scalar kind `to`.
pub(crate) fn convert(op: Conversion, v: &Value, to: Scalar) -> Result<Value, TrapKind> {
    use Conversion as C;
    let bad = || TrapKind::Malformed(format!("{op} of {v} to {to:?}"));
    let r = match (op, to) {
        (C::Trunc | C::Zext, Scalar::Int(w)) => {
            let (_, bits) = v.as_int().ok_or_else(bad)?;
            to.value(mask(bits, w))
        }
        (C::Sext, Scalar::Int(_)) => to.value(v.as_signed().ok_or_else(bad)? as u64),
        (C::Fptrunc, Scalar::F32) => Value::F32(canonical(v.as_f64().ok_or_else(bad)? as f32)),
        (C::Fpext, Scalar::F64) => Value::F64(canonical(f64::from(v.as_f32().ok_or_else(bad)?))),
        (C::Fptoui, Scalar::Int(w)) => {
            let x = float_of(v).ok_or_else(bad)?;
            // `as` truncates toward zero, saturates, and maps NaN to 0.
            let max = mask(u64::MAX, w);
            to.value((x as u64).min(max))
        }
        (C::Fptosi, Scalar::Int(w)) => {
            let x = float_of(v).ok_or_else(bad)?;
            let min = sext(1u64 << (w - 1), w);
            let max = !min;
            to.value((x as i64).clamp(min, max) as u64)
        }
        (C::Uitofp, Scalar::F32) => Value::f32(v.as_int().ok_or_else(bad)?.1 as f32),
        (C::Uitofp, Scalar::F64) => Value::f64(v.as_int().ok_or_else(bad)?.1 as f64),
        (C::Sitofp, Scalar::F32) => Value::f32(v.as_signed().ok_or_else(bad)? as f32),
        (C::Sitofp, Scalar::F64) => Value::f64(v.as_signed().ok_or_else(bad)? as f64),
        (C::Ptrtoint, Scalar::Int(_)) => to.value(v.as_ptr().ok_or_else(bad)?),
        (C::Inttoptr, Scalar::Ptr) => Value::Ptr(v.as_int().ok_or_else(bad)?.1),
        (C::Bitcast, _) => {
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
        assert_eq!(int_binop(IntBinary::Shl, 32, 1, 33), Ok(2));
        assert_eq!(int_binop(IntBinary::Shl, 1, 1, 1), Ok(1));
        assert_eq!(int_binop(IntBinary::Ashr, 8, 0x80, 9), Ok(0xc0));
        assert_eq!(int_binop(IntBinary::Lshr, 8, 0x80, 7), Ok(1));
    }

    #[test]
    fn bit_counts_and_rotates_at_every_width() {
        assert_eq!(int_unop(IntUnary::Clz, 32, 0), 32);
        assert_eq!(int_unop(IntUnary::Clz, 8, 1), 7);
        assert_eq!(int_unop(IntUnary::Clz, 1, 0), 1);
        assert_eq!(int_unop(IntUnary::Clz, 1, 1), 0);
        assert_eq!(int_unop(IntUnary::Ctz, 16, 0), 16);
        assert_eq!(int_unop(IntUnary::Ctz, 64, 1 << 63), 63);
        assert_eq!(int_unop(IntUnary::Popcnt, 64, u64::MAX), 64);
        assert_eq!(int_unop(IntUnary::Popcnt, 8, 0xff), 8);
        assert_eq!(int_binop(IntBinary::Rotl, 8, 0x81, 1), Ok(0x03));
        assert_eq!(
            int_binop(IntBinary::Rotl, 32, 0x8000_0001, 32),
            Ok(0x8000_0001)
        );
        assert_eq!(int_binop(IntBinary::Rotr, 16, 0x0001, 1), Ok(0x8000));
        assert_eq!(int_binop(IntBinary::Rotr, 64, 1, 65), Ok(1 << 63));
        assert_eq!(int_binop(IntBinary::Rotl, 1, 1, 1), Ok(1));
    }

    #[test]
    fn float_min_max_and_signs() {
        let (pz, nz) = (0f64.to_bits(), (-0f64).to_bits());
        assert_eq!(float_binop::<f64>(FloatBinary::Fmin, pz, nz), nz);
        assert_eq!(float_binop::<f64>(FloatBinary::Fmin, nz, pz), nz);
        assert_eq!(float_binop::<f64>(FloatBinary::Fmax, nz, pz), pz);
        let nan = 0x7ff0_0000_0000_0001;
        assert_eq!(
            float_binop::<f64>(FloatBinary::Fmax, nan, pz),
            CANONICAL_NAN_F64
        );
        assert_eq!(
            float_binop::<f64>(FloatBinary::Fmin, 1f64.to_bits(), nan),
            CANONICAL_NAN_F64
        );
        assert_eq!(float_unop::<f64>(FloatUnary::Fneg, nan), nan | 1 << 63);
        assert_eq!(
            float_binop::<f32>(FloatBinary::Fcopysign, 0x7fc0_0001, 0x8000_0000),
            0xffc0_0001
        );
        assert_eq!(
            float_unop::<f64>(FloatUnary::Fnearest, 2.5f64.to_bits()),
            2f64.to_bits()
        );
        assert_eq!(
            float_unop::<f64>(FloatUnary::Fnearest, (-0.5f64).to_bits()),
            nz
        );
        assert_eq!(
            float_unop::<f32>(FloatUnary::Fsqrt, (-1f32).to_bits()),
            CANONICAL_NAN_F32
        );
    }

    #[test]
    fn division_traps() {
        assert_eq!(
            int_binop(IntBinary::Sdiv, 1, 1, 1),
            Err(TrapKind::IntegerOverflow)
        );
        assert_eq!(
            int_binop(IntBinary::Srem, 64, 1 << 63, u64::MAX),
            Err(TrapKind::IntegerOverflow)
        );
        assert_eq!(
            int_binop(IntBinary::Urem, 8, 5, 0),
            Err(TrapKind::DivisionByZero)
        );
        assert_eq!(int_binop(IntBinary::Srem, 8, 0xf9, 2), Ok(0xff)); // -7 % 2 = -1
    }

    #[test]
    fn saturating_conversions() {
        let c = |op, v: f64, w| convert(op, &Value::f64(v), Scalar::Int(w)).unwrap();
        assert_eq!(c(Conversion::Fptosi, f64::NAN, 32), Value::I32(0));
        assert_eq!(c(Conversion::Fptosi, 1e20, 8), Value::I8(0x7f));
        assert_eq!(c(Conversion::Fptosi, -1e20, 16), Value::I16(0x8000));
        assert_eq!(c(Conversion::Fptoui, -5.0, 32), Value::I32(0));
        assert_eq!(c(Conversion::Fptoui, f64::INFINITY, 8), Value::I8(0xff));
        assert_eq!(c(Conversion::Fptosi, -1.0, 1), Value::I1(1));
        assert_eq!(c(Conversion::Fptosi, -2.9, 32), Value::i32(-2));
    }
}
