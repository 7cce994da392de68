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
    Str(Text),
    /// A byte string.
    Bytes(Blob),
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

/// A payload as the arena holds it: one pointer, null for [`Payload::None`] (what most
/// instructions carry), else to the boxed payload. It reads as the [`Payload`] it holds
/// (`Deref`). The arena holds every instruction of a program; a payload held inline took 16
/// of an instruction's 64 bytes.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Stored(Option<Box<Payload>>);

/// What an absent [`Stored`] payload reads as.
static NONE: Payload = Payload::None;

impl From<Payload> for Stored {
    #[inline]
    fn from(p: Payload) -> Stored {
        match p {
            Payload::None => Stored(None),
            p => Stored(Some(Box::new(p))),
        }
    }
}

impl std::ops::Deref for Stored {
    type Target = Payload;
    #[inline]
    fn deref(&self) -> &Payload {
        self.0.as_deref().unwrap_or(&NONE)
    }
}

impl fmt::Debug for Stored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A string payload, one pointer wide (the text sits behind a second box), so that a
/// [`Payload`] takes 16 bytes and not 24: every instruction of a module holds a payload, and
/// few hold a string. It reads as a `&str` (`Deref`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Box<Box<str>>);

/// A byte-string payload, one pointer wide like [`Text`]; it reads as a `&[u8]` (`Deref`).
/// Its bytes are shared, not copied, by a clone: a module's data (a wasm data segment, a
/// constant array) is copied once however often the module is (a branch, `crate::branch`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Blob(std::sync::Arc<Box<[u8]>>);

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self
    }
}

impl AsRef<[u8]> for Blob {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Text {
        Text(Box::new(s))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::from(s.into_boxed_str())
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::from(Box::<str>::from(s))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::from(s.as_str())
    }
}

impl From<Box<[u8]>> for Blob {
    fn from(b: Box<[u8]>) -> Blob {
        Blob(std::sync::Arc::new(b))
    }
}

impl From<Vec<u8>> for Blob {
    fn from(b: Vec<u8>) -> Blob {
        Blob::from(b.into_boxed_slice())
    }
}

impl From<&[u8]> for Blob {
    fn from(b: &[u8]) -> Blob {
        Blob::from(Box::<[u8]>::from(b))
    }
}

impl FromIterator<u8> for Blob {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Blob {
        Blob::from(iter.into_iter().collect::<Vec<u8>>())
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        **self == *other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl fmt::Debug for Blob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
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

    /// A clone of a module shares its byte payloads (a branch costs no copy of the data).
    #[test]
    fn a_blob_clone_shares_its_bytes() {
        let b = Blob::from(vec![7u8; 1 << 16]);
        let c = b.clone();
        assert!(std::ptr::eq(b.as_ptr(), c.as_ptr()));
        assert_eq!(b, c);
        assert_eq!(b, Blob::from(vec![7u8; 1 << 16]));
    }

    #[test]
    fn a_payload_is_two_words() {
        assert_eq!(std::mem::size_of::<Payload>(), 16);
        let t = Text::from("é");
        assert_eq!(&*t, "é");
        assert_eq!(format!("{:?}", Payload::Str(t)), "Str(\"é\")");
    }

    #[test]
    fn masking_and_sign_extension() {
        assert_eq!(mask_to_width(u64::MAX, 8), 0xff);
        assert_eq!(mask_to_width(u64::MAX, 64), u64::MAX);
        assert_eq!(sign_extend(0xff, 8), -1);
        assert_eq!(sign_extend(0x7f, 8), 127);
        assert_eq!(sign_extend(1, 1), -1);
    }
}
