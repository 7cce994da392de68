//! The name mapping: how wasm's two-level import and export names (a module name and a field
//! name, each any UTF-8 string) become irkit's one-level `import`/`export` names.
//!
//! `symbol(module, field)` is `wasm:` + `escape(module)` + `:` + `escape(field)`, where
//! [`escape`] percent-encodes `%`, `:` and the control characters (U+0000–U+001F, U+007F) as
//! `%XX` (two upper-case hex digits of the byte) and keeps every other character. An escaped
//! string contains no `:`, so the two colons of a symbol split it unambiguously, and
//! percent-decoding inverts the escape: the mapping is injective. A module's initializer is
//! exported as [`init_symbol`]`(name)`, `wasm-init:` + `escape(name)`, a prefix no symbol has.

/// The escaped form of a wasm name: `%`, `:` and control characters as `%XX`.
pub fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c == '%' || c == ':' || c.is_ascii_control() {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`escape`]; `None` if `s` is not an escaped name.
pub fn unescape(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b':' => return None,
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                let v = u8::from_str_radix(hex, 16).ok()?;
                if hex.bytes().any(|b| b.is_ascii_lowercase()) {
                    return None;
                }
                out.push(v);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    let out = String::from_utf8(out).ok()?;
    (escape(&out) == s).then_some(out)
}

/// The irkit symbol of field `field` of wasm module `module`.
pub fn symbol(module: &str, field: &str) -> String {
    format!("wasm:{}:{}", escape(module), escape(field))
}

/// The (module, field) pair a symbol stands for; `None` if it is not one.
pub fn parse_symbol(s: &str) -> Option<(String, String)> {
    let rest = s.strip_prefix("wasm:")?;
    let (m, f) = rest.split_once(':')?;
    Some((unescape(m)?, unescape(f)?))
}

/// The export name of the initializer of the module compiled under `name`.
pub fn init_symbol(name: &str) -> String {
    format!("wasm-init:{}", escape(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols() {
        assert_eq!(symbol("lib", "f"), "wasm:lib:f");
        assert_eq!(symbol("a:b", "c%d"), "wasm:a%3Ab:c%25d");
        assert_eq!(symbol("", "\n"), "wasm::%0A");
        assert_eq!(symbol("ünï", "☃"), "wasm:ünï:☃");
        assert_eq!(init_symbol("lib"), "wasm-init:lib");
    }

    #[test]
    fn injective() {
        let names = [
            "", ":", "%", "%3A", "a:b", "a", "b", "a%b", "\u{7f}", "x y", "é:",
        ];
        let mut seen = std::collections::HashMap::new();
        for m in names {
            for f in names {
                let s = symbol(m, f);
                assert_eq!(parse_symbol(&s), Some((m.to_string(), f.to_string())));
                assert!(seen.insert(s.clone(), (m, f)).is_none(), "{s} twice");
            }
        }
        assert_eq!(parse_symbol("wasm:a:b:c"), None);
        assert_eq!(parse_symbol("wasm:%3a:b"), None);
        assert_eq!(parse_symbol("wasm:%zz:b"), None);
    }
}
