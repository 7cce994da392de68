//! The literal payload an instruction may carry (Ark's per-gate bitfield, Slang's literal
//! constants): an integer, float bits, a string or bytes.

use std::fmt;

/// A literal payload. Integer values are stored zero-extended from their type's width, so that
/// equal constants hash-cons to one instruction; float values are stored as the IEEE bits of the
/// value in its own format (an `f32` in the low 32 bits).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub enum Payload {
    /// No payload.
    #[default]
    None,
    /// An integer (or a condition code).
    Int(u64),
    /// IEEE float bits.
    Float(u64),
    /// A UTF-8 string.
    Str(Box<str>),
    /// A byte string.
    Bytes(Box<[u8]>),
}

impl Payload {
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<u64> {
        match *self {
            Payload::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The float bits, if this is a float.
    pub fn as_float_bits(&self) -> Option<u64> {
        match *self {
            Payload::Float(v) => Some(v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Payload::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes, if this is a byte string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Payload::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// Whether there is no payload.
    pub fn is_none(&self) -> bool {
        matches!(self, Payload::None)
    }

    /// The name of the variant, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Payload::None => "none",
            Payload::Int(_) => "integer",
            Payload::Float(_) => "float",
            Payload::Str(_) => "string",
            Payload::Bytes(_) => "bytes",
        }
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::None => f.write_str("None"),
            Payload::Int(v) => write!(f, "Int({v})"),
            Payload::Float(v) => write!(f, "Float({v:#x})"),
            Payload::Str(s) => write!(f, "Str({s:?})"),
            Payload::Bytes(b) => write!(f, "Bytes({:?})", b.escape_ascii().to_string()),
        }
    }
}

/// Masks `value` to its low `width` bits (`width` 1..=64): the canonical stored form of an
/// integer constant of that width.
#[inline]
pub fn mask_to_width(value: u64, width: u32) -> u64 {
    if width >= 64 {
        value
    } else {
        value & ((1u64 << width) - 1)
    }
}

/// Sign-extends the low `width` bits of `value` to an `i64`.
#[inline]
pub fn sign_extend(value: u64, width: u32) -> i64 {
    let shift = 64 - width.clamp(1, 64);
    ((value << shift) as i64) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_and_sign_extension() {
        assert_eq!(mask_to_width(u64::MAX, 8), 0xff);
        assert_eq!(mask_to_width(u64::MAX, 64), u64::MAX);
        assert_eq!(sign_extend(0xff, 8), -1);
        assert_eq!(sign_extend(0x7f, 8), 127);
        assert_eq!(sign_extend(1, 1), -1);
    }
}
