//! Run-time values: what registers, arguments and results hold.

use std::fmt;
use std::sync::Arc;

/// A run-time value of one of the IR's value types.
///
/// Integers hold their bit pattern zero-extended into a `u64` (always `< 2^N` for `iN`; use
/// [`Value::int`] to build one from any bits); floats hold their IEEE bits, so NaN payloads
/// are preserved exactly; pointers hold the interpreter's encoded 64-bit address (an object id
/// and an offset; null is 0); aggregates hold their field or element values in order, shared
/// (cloning an aggregate is O(1), so nested constants and zero values cost memory linear in
/// the module, not in the product of their depths and sizes; `insert` copies on write).
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// An `i1`: 0 or 1.
    I1(u64),
    /// An `i8`, zero-extended.
    I8(u64),
    /// An `i16`, zero-extended.
    I16(u64),
    /// An `i32`, zero-extended.
    I32(u64),
    /// An `i64`.
    I64(u64),
    /// An `f32`, as its IEEE bits.
    F32(u32),
    /// An `f64`, as its IEEE bits.
    F64(u64),
    /// A `ptr`: an encoded address (0 is null).
    Ptr(u64),
    /// A `struct`, `named_struct` or `array` value: its fields or elements, in order.
    Aggregate(Arc<Vec<Value>>),
}

impl Value {
    /// An integer of `width` bits (1, 8, 16, 32 or 64) holding the low `width` bits of
    /// `bits`; `None` for any other width.
    pub fn int(width: u32, bits: u64) -> Option<Value> {
        let b = mask(bits, width);
        Some(match width {
            1 => Value::I1(b),
            8 => Value::I8(b),
            16 => Value::I16(b),
            32 => Value::I32(b),
            64 => Value::I64(b),
            _ => return None,
        })
    }

    /// An `i1` holding `b`.
    pub fn bool(b: bool) -> Value {
        Value::I1(u64::from(b))
    }

    /// An `i32` holding `v`'s two's-complement bits.
    pub fn i32(v: i32) -> Value {
        Value::I32(u64::from(v as u32))
    }

    /// An `i64` holding `v`'s two's-complement bits.
    pub fn i64(v: i64) -> Value {
        Value::I64(v as u64)
    }

    /// An `f32` holding `v`'s bits.
    pub fn f32(v: f32) -> Value {
        Value::F32(v.to_bits())
    }

    /// An `f64` holding `v`'s bits.
    pub fn f64(v: f64) -> Value {
        Value::F64(v.to_bits())
    }

    /// For an integer: `(width, zero-extended bits)`.
    pub fn as_int(&self) -> Option<(u32, u64)> {
        match *self {
            Value::I1(b) => Some((1, b)),
            Value::I8(b) => Some((8, b)),
            Value::I16(b) => Some((16, b)),
            Value::I32(b) => Some((32, b)),
            Value::I64(b) => Some((64, b)),
            _ => None,
        }
    }

    /// For an integer: its signed interpretation.
    pub fn as_signed(&self) -> Option<i64> {
        self.as_int().map(|(w, b)| sext(b, w))
    }

    /// For a pointer: its encoded address.
    pub fn as_ptr(&self) -> Option<u64> {
        match *self {
            Value::Ptr(p) => Some(p),
            _ => None,
        }
    }

    /// For an `f32`: the float.
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            Value::F32(b) => Some(f32::from_bits(b)),
            _ => None,
        }
    }

    /// For an `f64`: the float.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F64(b) => Some(f64::from_bits(b)),
            _ => None,
        }
    }

    /// For a scalar: its raw bits zero-extended to 64 (integers, float bits, addresses).
    pub fn scalar_bits(&self) -> Option<u64> {
        match *self {
            Value::I1(b) | Value::I8(b) | Value::I16(b) | Value::I32(b) | Value::I64(b) => Some(b),
            Value::F32(b) => Some(u64::from(b)),
            Value::F64(b) | Value::Ptr(b) => Some(b),
            Value::Aggregate(_) => None,
        }
    }

    /// For a scalar: its size in memory, in bytes (`i1` occupies one byte).
    pub fn scalar_size(&self) -> Option<u64> {
        match self {
            Value::I1(_) | Value::I8(_) => Some(1),
            Value::I16(_) => Some(2),
            Value::I32(_) | Value::F32(_) => Some(4),
            Value::I64(_) | Value::F64(_) | Value::Ptr(_) => Some(8),
            Value::Aggregate(_) => None,
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::I1(b) => write!(f, "i1 {}", if *b != 0 { "true" } else { "false" }),
            Value::I8(b) => write!(f, "i8 {}", sext(*b, 8)),
            Value::I16(b) => write!(f, "i16 {}", sext(*b, 16)),
            Value::I32(b) => write!(f, "i32 {}", sext(*b, 32)),
            Value::I64(b) => write!(f, "i64 {}", *b as i64),
            Value::F32(b) => write!(f, "f32 {:?} (0x{b:08x})", f32::from_bits(*b)),
            Value::F64(b) => write!(f, "f64 {:?} (0x{b:016x})", f64::from_bits(*b)),
            Value::Ptr(p) => write!(f, "ptr 0x{p:x}"),
            Value::Aggregate(vs) => {
                f.write_str("[")?;
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// The low `width` bits of `v` (`width` 1..=64).
#[inline]
pub(crate) fn mask(v: u64, width: u32) -> u64 {
    if width >= 64 {
        v
    } else {
        v & ((1u64 << width) - 1)
    }
}

/// The low `width` bits of `v`, sign-extended.
#[inline]
pub(crate) fn sext(v: u64, width: u32) -> i64 {
    let shift = 64 - width.clamp(1, 64);
    ((v << shift) as i64) >> shift
}
