//! Reading a tool's input: any stream (a file, a pipe, stdin) is read once, and reading stops
//! at a documented limit or at the first bytes that cannot be right, never without bound:
//!
//! * a binary module (it starts with the magic) is read up to the length its header announces
//!   (at most [`MAX_INPUT`]), and refused if the stream holds more or less;
//! * anything else is text, read up to [`MAX_INPUT`] bytes, and refused at its first NUL byte
//!   (no `.ir` text holds one: `/dev/zero` stops at once).
//!
//! It belongs to the format because the header says how long a module is; writing outputs
//! safely is `irkit-io`'s.

use std::io::Read;

/// The largest input read from a stream: 4 GiB (a module file, binary or text).
pub const MAX_INPUT: u64 = 4 << 30;

/// Reads one input from `reader` with the limits above (errors of kind `InvalidData` say which
/// limit or which byte).
pub fn read_input(mut reader: impl Read) -> std::io::Result<Vec<u8>> {
    let bad = |msg: String| std::io::Error::new(std::io::ErrorKind::InvalidData, msg);
    let mut bytes = Vec::new();
    (&mut reader).take(32).read_to_end(&mut bytes)?;
    if bytes.starts_with(&crate::MAGIC) {
        if bytes.len() < 32 {
            return Ok(bytes); // the reader reports the truncated header
        }
        let announced = u64::from_le_bytes(bytes[24..32].try_into().unwrap_or([0; 8]));
        if announced > MAX_INPUT {
            return Err(bad(format!(
                "the header announces {announced} bytes, more than the {MAX_INPUT}-byte \
                 input limit"
            )));
        }
        (&mut reader)
            .take(announced.saturating_sub(32))
            .read_to_end(&mut bytes)?;
        let mut more = [0u8; 1];
        if bytes.len() as u64 == announced && reader.read(&mut more)? > 0 {
            return Err(bad(format!(
                "more bytes than the {announced} the header announces"
            )));
        }
        // A shorter stream is reported by the reader (the header's length check).
        return Ok(bytes);
    }
    // Each byte is looked at once: the first bytes here, every later chunk as it arrives (a
    // scan of the whole buffer per chunk made reading quadratic in the input).
    if let Some(k) = bytes.iter().position(|&b| b == 0) {
        return Err(bad(format!(
            "byte {k} is NUL: neither a binary module nor `.ir` text"
        )));
    }
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut chunk)?;
        if n == 0 {
            return Ok(bytes);
        }
        if bytes.len() as u64 + n as u64 > MAX_INPUT {
            return Err(bad(format!("longer than the {MAX_INPUT}-byte input limit")));
        }
        let start = bytes.len();
        bytes.extend_from_slice(&chunk[..n]);
        if let Some(k) = bytes[start..].iter().position(|&b| b == 0) {
            return Err(bad(format!(
                "byte {} is NUL: neither a binary module nor `.ir` text",
                start + k
            )));
        }
    }
}

/// Reads one input that must be a binary module, like [`read_input`], but stops at its first
/// eight bytes when they are not the magic (an error of kind `InvalidData`), instead of reading
/// on as text: a tool that takes only binary modules never reads an endless stream of
/// anything else.
pub fn read_binary_input(mut reader: impl Read) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::new();
    (&mut reader)
        .take(crate::MAGIC.len() as u64)
        .read_to_end(&mut head)?;
    if head != crate::MAGIC {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a binary irkit module (no IRKMOD magic); `ir-as` makes one",
        ));
    }
    read_input(std::io::Read::chain(&head[..], reader))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_stream_of_zeros_stops_at_once() {
        let e = read_input(std::io::repeat(0)).unwrap_err();
        assert!(e.to_string().contains("byte 0 is NUL"), "{e}");
    }

    #[test]
    fn a_binary_stream_is_read_to_its_announced_length() {
        let m = irkit_core::Module::new();
        let bytes = crate::write(&m).unwrap();
        assert_eq!(read_input(&bytes[..]).unwrap(), bytes);
        // Endless bytes after the module: refused, not read on.
        let more = std::io::Read::chain(&bytes[..], std::io::repeat(7));
        assert!(read_input(more).is_err());
        // A header announcing more than the limit: refused before reading on.
        let mut huge = bytes.clone();
        huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = read_input(std::io::Read::chain(&huge[..], std::io::repeat(0)));
        assert!(e.unwrap_err().to_string().contains("input limit"));
    }

    #[test]
    fn text_is_read_whole() {
        let text = "@f: fn() -> void = func\n".repeat(10_000);
        assert_eq!(read_input(text.as_bytes()).unwrap(), text.as_bytes());
    }
}
