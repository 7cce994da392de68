//! Literals: string and byte-string escapes, name quoting, integer and float spelling.
//!
//! The printer and the lexer share these so that every literal the printer writes reads back
//! to the same value.

use std::fmt::{Debug, Write};

/// Whether `c` may appear in a bare (unquoted) name after a sigil.
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')
}

/// Whether `c` may start an identifier (opcode names, keywords).
pub(crate) fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// Whether `c` may continue an identifier.
pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether a name is purely numeric (an anonymous name when written bare).
pub(crate) fn is_numeric_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Appends `sigil` and `name`, quoting the name unless it is a bare name that is not numeric.
pub(crate) fn write_name(out: &mut String, sigil: char, name: &str) {
    out.push(sigil);
    if !name.is_empty() && !is_numeric_name(name) && name.chars().all(is_name_char) {
        out.push_str(name);
    } else {
        write_str_lit(out, name);
    }
}

/// Appends a quoted string literal with escapes (`\n \t \r \\ \" \0 \u{…}`).
pub(crate) fn write_str_lit(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\0' => out.push_str("\\0"),
            c if c.is_control() || is_invisible(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Characters printed escaped although they are not control characters: line and paragraph
/// separators, and the byte-order mark, which editors show badly or not at all.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{200b}'..='\u{200f}'
    )
}

/// Appends a byte-string literal `b"…"` (printable ASCII as is, `\n \t \r \\ \" \0`, else
/// `\xNN`).
pub(crate) fn write_bytes_lit(out: &mut String, bytes: &[u8]) {
    out.push_str("b\"");
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0 => out.push_str("\\0"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
}

/// The canonical quiet NaN of f64.
pub(crate) const F64_CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;
/// The canonical quiet NaN of f32.
pub(crate) const F32_CANONICAL_NAN: u64 = 0x7fc0_0000;

/// Appends the spelling of an f64 value given by its bits: the shortest decimal that reads
/// back to the same bits, `inf`/`-inf`, `nan` (canonical quiet NaN) or `nan:0x<bits>`.
pub(crate) fn write_f64(out: &mut String, bits: u64) {
    let v = f64::from_bits(bits);
    write_float(out, bits, F64_CANONICAL_NAN, v, &v);
}

/// Like [`write_f64`] for an f32 held in the low 32 bits of `bits`.
pub(crate) fn write_f32(out: &mut String, bits: u32) {
    let v = f32::from_bits(bits);
    write_float(out, u64::from(bits), F32_CANONICAL_NAN, f64::from(v), &v);
}

/// The spelling of both widths, for a value with `bits`, classified by `wide` (the value,
/// widened exactly) and spelled by `shortest` (the value at its own width).
fn write_float(out: &mut String, bits: u64, canonical: u64, wide: f64, shortest: &dyn Debug) {
    if wide.is_nan() {
        if bits == canonical {
            out.push_str("nan");
        } else {
            let _ = write!(out, "nan:{bits:#x}");
        }
    } else if wide.is_infinite() {
        out.push_str(if wide < 0.0 { "-inf" } else { "inf" });
    } else {
        let _ = write!(out, "{shortest:?}");
    }
}

/// Reads a decimal float literal (as lexed: `-?digits[.digits][e[+-]digits]`, `inf`, `-inf`)
/// as f64 bits; `None` when it overflows to infinity without being written `inf`.
pub(crate) fn parse_f64(text: &str) -> Option<u64> {
    let v: f64 = text.parse().ok()?;
    if v.is_infinite() && !text.ends_with("inf") {
        return None;
    }
    Some(v.to_bits())
}

/// Like [`parse_f64`] in f32 (rounded once, directly from the decimal).
pub(crate) fn parse_f32(text: &str) -> Option<u64> {
    let v: f32 = text.parse().ok()?;
    if v.is_infinite() && !text.ends_with("inf") {
        return None;
    }
    Some(u64::from(v.to_bits()))
}

/// An integer literal as a 64-bit payload: values in `-2^63 .. 2^64` (negative ones in two's
/// complement).
pub(crate) fn int_payload(v: i128) -> Option<u64> {
    if (-(1i128 << 63)..(1i128 << 64)).contains(&v) {
        Some(v as u64)
    } else {
        None
    }
}

/// An integer literal as a constant of `width` bits: values in `-2^(width-1) .. 2^width`
/// (so both `i8 -1` and `i8 255`), stored zero-extended.
pub(crate) fn int_in_width(v: i128, width: u32) -> Option<u64> {
    let lo = -(1i128 << (width - 1));
    let hi = 1i128 << width;
    if (lo..hi).contains(&v) {
        Some((v as u64) & mask(width))
    } else {
        None
    }
}

/// The low-`width`-bits mask.
pub(crate) fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_quote_when_needed() {
        let q = |s: &str| {
            let mut o = String::new();
            write_name(&mut o, '%', s);
            o
        };
        assert_eq!(q("x"), "%x");
        assert_eq!(q("a.b-c$1"), "%a.b-c$1");
        assert_eq!(q("3"), "%\"3\"");
        assert_eq!(q("3a"), "%3a");
        assert_eq!(q(""), "%\"\"");
        assert_eq!(q("my var"), "%\"my var\"");
        assert_eq!(q("é"), "%\"é\"");
    }

    #[test]
    fn string_escapes() {
        let mut o = String::new();
        write_str_lit(&mut o, "a\"b\\c\n\t\r\0\u{1}é\u{2028}");
        assert_eq!(o, r#""a\"b\\c\n\t\r\0\u{1}é\u{2028}""#);
        let mut o = String::new();
        write_bytes_lit(&mut o, b"hi\n\x00\xff\"");
        assert_eq!(o, r#"b"hi\n\0\xff\"""#);
    }

    #[test]
    fn floats_print_shortest_and_read_back() {
        let p = |v: f64| {
            let mut o = String::new();
            write_f64(&mut o, v.to_bits());
            o
        };
        assert_eq!(p(1.5), "1.5");
        assert_eq!(p(-0.0), "-0.0");
        assert_eq!(p(1.0), "1.0");
        assert_eq!(p(1e300), "1e300");
        assert_eq!(p(f64::INFINITY), "inf");
        assert_eq!(p(f64::NEG_INFINITY), "-inf");
        assert_eq!(p(f64::NAN), "nan");
        for v in [0.1, 5e-324, f64::MAX, f64::MIN_POSITIVE, -123.456e-7] {
            assert_eq!(parse_f64(&p(v)), Some(v.to_bits()));
        }
        let mut o = String::new();
        write_f32(&mut o, 0.1f32.to_bits());
        assert_eq!(o, "0.1");
        assert_eq!(parse_f32("0.1"), Some(u64::from(0.1f32.to_bits())));
        assert_eq!(parse_f64("1e400"), None);
        assert_eq!(parse_f64("-inf"), Some(f64::NEG_INFINITY.to_bits()));
    }

    #[test]
    fn integer_ranges() {
        assert_eq!(int_in_width(-1, 8), Some(0xff));
        assert_eq!(int_in_width(255, 8), Some(0xff));
        assert_eq!(int_in_width(256, 8), None);
        assert_eq!(int_in_width(-129, 8), None);
        assert_eq!(int_in_width(-1, 1), Some(1));
        assert_eq!(int_in_width(2, 1), None);
        assert_eq!(int_in_width(-1, 64), Some(u64::MAX));
        assert_eq!(int_payload(-1), Some(u64::MAX));
        assert_eq!(int_payload(1 << 64), None);
    }
}
