//! Reading a script: text of any content up to [`MAX_SCRIPT`] bytes, UTF-8. Unlike an `.ir`
//! input, a script may hold NUL bytes (the official testsuite's `comments.wast` has them inside
//! a block comment), so the only bound on reading is the size: an endless stream stops there.

use std::io::Read;

/// The largest script read: 256 MiB (the official testsuite's largest file is under 1 MiB).
pub const MAX_SCRIPT: u64 = 256 << 20;

/// Reads one script from `reader` (errors of kind `InvalidData` say which limit or which byte).
pub fn read_script(reader: impl Read) -> std::io::Result<String> {
    let bad = |msg: String| std::io::Error::new(std::io::ErrorKind::InvalidData, msg);
    let mut bytes = Vec::new();
    reader.take(MAX_SCRIPT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SCRIPT {
        return Err(bad(format!(
            "longer than the {MAX_SCRIPT}-byte script limit"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|e| bad(format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_bytes_in_comments_are_text() {
        let s = read_script(&b"(module) (; a \0 NUL ;)"[..]).expect("reads");
        assert!(s.contains('\0'));
    }

    #[test]
    fn limits_and_encoding_are_errors() {
        let e = read_script(std::io::repeat(b' ')).unwrap_err();
        assert!(e.to_string().contains("script limit"), "{e}");
        let e = read_script(&b"(module) \xff"[..]).unwrap_err();
        assert_eq!(e.to_string(), "not UTF-8 (byte 9)");
    }
}
