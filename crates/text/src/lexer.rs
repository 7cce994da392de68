//! The lexer: source text to tokens with positions, on demand.
//!
//! It reads the source in place (byte offsets, no copy) and hands out one token at a time
//! ([`Lexer::next_token`]): the parser keeps only a few tokens of lookahead, so lexing holds
//! no memory proportional to the input beyond the comments it sets apart. Whitespace is dropped and comments (`;` to end of line) are set apart (the formatter keeps
//! them, see [`crate::trivia`]); each token records whether it is the first on its line, which
//! the parser needs for the few places where line ends matter (the end of a statement and of a
//! block label).

use crate::error::{Diags, Pos};
use crate::literal::{is_ident_char, is_ident_start, is_name_char, is_numeric_name};

/// A token kind with its value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A word: opcode name, type keyword, condition code, `x`, `true`, `zero`, …
    Ident(String),
    /// `%name`, `@name` or `^name`; `anon` for a bare all-digits name.
    Name {
        sigil: char,
        text: String,
        anon: bool,
    },
    /// `#123`: an opcode by stable id.
    Opaque(u16),
    /// An integer literal (decimal or hex, optionally negative).
    Int(i128),
    /// A decimal float literal, or `inf` / `-inf`, as written.
    Float(String),
    /// `nan` (`None`) or `nan:0x…` (the bits).
    Nan(Option<u64>),
    /// `fbits:0x…`: raw float bits.
    FBits(u64),
    /// A string literal, unescaped.
    Str(String),
    /// A byte-string literal `b"…"`, unescaped.
    Bytes(Vec<u8>),
    /// `#[`
    HashBracket,
    /// `#![`
    HashBang,
    /// `=`
    Eq,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `->`
    Arrow,
    /// `?`: ends a list of positive passive dependencies (NOIR).
    Question,
    /// `!`: ends a list of negative passive dependencies (NOIR).
    Bang,
    /// End of input.
    Eof,
}

/// A comment: `;` to the end of its line.
#[derive(Clone, Debug)]
pub(crate) struct Comment {
    /// The position of its `;`.
    pub(crate) pos: Pos,
    /// The text after the `;`, verbatim but for trailing whitespace.
    pub(crate) text: String,
    /// Whether only whitespace precedes it on its line.
    pub(crate) own_line: bool,
}

/// A token with its position and where it is in the source.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) pos: Pos,
    /// Whether this is the first token on its line.
    pub(crate) line_start: bool,
    /// Its byte range in the source, for messages.
    pub(crate) span: (usize, usize),
}

impl Token {
    /// How the token is named in messages: `` `text` `` (at most 32 characters of it, control
    /// characters escaped) or "end of file".
    pub(crate) fn describe(&self, source: &str) -> String {
        match self.tok {
            Tok::Eof => "end of file".to_string(),
            _ => {
                let text = source.get(self.span.0..self.span.1).unwrap_or("");
                format!("`{}`", crate::error::excerpt(text, 32))
            }
        }
    }
}

/// The lexer over one source text.
pub(crate) struct Lexer<'s, 'd> {
    src: &'s str,
    /// Byte offset of the next character.
    i: usize,
    line: u32,
    col: u32,
    line_start: bool,
    pub(crate) diags: &'d mut Diags,
    /// Tokens lexed but not yet handed out (a step can make at most one).
    out: Option<Token>,
    /// The end-of-file token, once reached (handed out again on every later call).
    eof: Option<Token>,
    /// Whether comments are kept (for the formatter), or only skipped.
    keep_comments: bool,
    comments: Vec<Comment>,
}

/// Splits `source` into tokens (always ending with [`Tok::Eof`]); lexical errors go to `diags`.
#[cfg(test)]
pub(crate) fn lex(source: &str, diags: &mut Diags) -> Vec<Token> {
    lex_with_comments(source, diags).0
}

/// Splits `source` into tokens (always ending with [`Tok::Eof`]) and comments, each in source
/// order; lexical errors go to `diags`.
#[cfg(test)]
pub(crate) fn lex_with_comments(source: &str, diags: &mut Diags) -> (Vec<Token>, Vec<Comment>) {
    let mut lx = Lexer::new(source, diags, true);
    let mut out = Vec::new();
    loop {
        let t = lx.next_token();
        let end = t.tok == Tok::Eof;
        out.push(t);
        if end {
            break;
        }
    }
    (out, lx.into_comments())
}

impl<'s, 'd> Lexer<'s, 'd> {
    /// A lexer over `src` that keeps its comments if `keep_comments` (see [`Lexer::into_comments`]).
    pub(crate) fn new(src: &'s str, diags: &'d mut Diags, keep_comments: bool) -> Lexer<'s, 'd> {
        Lexer {
            src,
            i: 0,
            line: 1,
            col: 1,
            line_start: true,
            diags,
            out: None,
            eof: None,
            keep_comments,
            comments: Vec::new(),
        }
    }

    /// The source text.
    pub(crate) fn source(&self) -> &'s str {
        self.src
    }

    /// The comments met so far, in source order.
    pub(crate) fn into_comments(self) -> Vec<Comment> {
        self.comments
    }

    /// The next token; [`Tok::Eof`] at the end (or once the error cap is reached), and again
    /// on every later call.
    pub(crate) fn next_token(&mut self) -> Token {
        loop {
            if let Some(t) = self.out.take() {
                return t;
            }
            if let Some(t) = &self.eof {
                return t.clone();
            }
            self.step();
        }
    }

    fn peek(&self) -> Option<char> {
        self.src.get(self.i..)?.chars().next()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.src.get(self.i..)?.chars().nth(k)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn starts_with(&self, s: &str) -> bool {
        self.src
            .get(self.i..)
            .is_some_and(|rest| rest.starts_with(s))
    }

    fn push(&mut self, tok: Tok, pos: Pos, start: usize) {
        let t = Token {
            tok,
            pos,
            line_start: self.line_start,
            span: (start, self.i),
        };
        if t.tok == Tok::Eof {
            self.eof = Some(t);
        } else {
            self.out = Some(t);
        }
        self.line_start = false;
    }

    /// Reads whitespace, one comment, one token or one malformed token (reported).
    fn step(&mut self) {
        if let Some(c) = self.peek().filter(|_| !self.diags.full()) {
            match c {
                '\n' => {
                    self.bump();
                    self.line_start = true;
                }
                c if c.is_whitespace() => {
                    self.bump();
                }
                ';' => {
                    let pos = self.pos();
                    self.bump();
                    let start = self.i;
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                    if self.keep_comments {
                        let text = self.src[start..self.i].trim_end().to_string();
                        self.comments.push(Comment {
                            pos,
                            text,
                            own_line: self.line_start,
                        });
                    }
                }
                _ => self.token(),
            }
            return;
        }
        let pos = self.pos();
        let start = self.i;
        self.push(Tok::Eof, pos, start);
    }

    fn token(&mut self) {
        let pos = self.pos();
        let start = self.i;
        let c = self.peek().unwrap_or('\0');
        let simple = match c {
            '=' => Some(Tok::Eq),
            ',' => Some(Tok::Comma),
            ':' => Some(Tok::Colon),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            '[' => Some(Tok::LBracket),
            ']' => Some(Tok::RBracket),
            '?' => Some(Tok::Question),
            '!' => Some(Tok::Bang),
            _ => None,
        };
        if let Some(t) = simple {
            self.bump();
            self.push(t, pos, start);
            return;
        }
        match c {
            '#' => self.hash(pos, start),
            '%' | '@' | '^' => self.name(c, pos, start),
            '"' => {
                if let Some(s) = self.string(pos) {
                    self.push(Tok::Str(s), pos, start);
                }
            }
            '-' if self.peek_at(1) == Some('>') => {
                self.bump();
                self.bump();
                self.push(Tok::Arrow, pos, start);
            }
            '-' if self.starts_with("-inf") && !self.peek_at(4).is_some_and(is_ident_char) => {
                for _ in 0..4 {
                    self.bump();
                }
                self.push(Tok::Float("-inf".into()), pos, start);
            }
            '-' if self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) => self.number(pos, start),
            c if c.is_ascii_digit() => self.number(pos, start),
            c if is_ident_start(c) => self.word(pos, start),
            c => {
                self.bump();
                self.diags
                    .push(pos, format!("unexpected character `{}`", c.escape_debug()));
            }
        }
    }

    fn hash(&mut self, pos: Pos, start: usize) {
        self.bump();
        if self.peek() == Some('[') {
            self.bump();
            self.push(Tok::HashBracket, pos, start);
        } else if self.starts_with("![") {
            self.bump();
            self.bump();
            self.push(Tok::HashBang, pos, start);
        } else if self.peek().is_some_and(|c| c.is_ascii_digit()) {
            let mut digits = String::new();
            while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric()) {
                digits.push(c);
                self.bump();
            }
            match digits.parse::<u16>() {
                Ok(id) => self.push(Tok::Opaque(id), pos, start),
                Err(_) if digits.bytes().all(|b| b.is_ascii_digit()) => self.diags.push(
                    pos,
                    format!("opcode id `#{digits}` is out of range (at most 65535)"),
                ),
                Err(_) => self
                    .diags
                    .push(pos, format!("malformed opcode id `#{digits}`")),
            }
        } else {
            self.diags.push(
                pos,
                "expected `[`, `![` or a decimal opcode id after `#`".to_string(),
            );
        }
    }

    fn name(&mut self, sigil: char, pos: Pos, start: usize) {
        self.bump();
        if self.peek() == Some('"') {
            let spos = self.pos();
            if let Some(s) = self.string(spos) {
                self.push(
                    Tok::Name {
                        sigil,
                        text: s,
                        anon: false,
                    },
                    pos,
                    start,
                );
            }
            return;
        }
        let mut text = String::new();
        while let Some(c) = self.peek().filter(|&c| is_name_char(c)) {
            text.push(c);
            self.bump();
        }
        if text.is_empty() {
            self.diags
                .push(pos, format!("expected a name after `{sigil}`"));
            return;
        }
        let anon = is_numeric_name(&text);
        self.push(Tok::Name { sigil, text, anon }, pos, start);
    }

    /// Reads `"…"` (the cursor on the quote); `None` after reporting an error.
    fn string(&mut self, pos: Pos) -> Option<String> {
        self.bump();
        let mut s = String::new();
        let mut ok = true;
        loop {
            let epos = self.pos();
            match self.bump() {
                None | Some('\n') => {
                    self.diags.push(pos, "unterminated string literal");
                    return None;
                }
                Some('"') => break,
                Some('\\') => match self.escape(false) {
                    Ok(Esc::Char(c)) => s.push(c),
                    Ok(Esc::Byte(b)) => s.push(char::from(b)),
                    Err(msg) => {
                        self.diags.push(epos, msg);
                        ok = false;
                    }
                },
                Some(c) => s.push(c),
            }
        }
        ok.then_some(s)
    }

    /// Reads `b"…"` (the cursor on the quote).
    fn bytes(&mut self, pos: Pos) -> Option<Vec<u8>> {
        self.bump();
        let mut out = Vec::new();
        let mut ok = true;
        loop {
            let epos = self.pos();
            match self.bump() {
                None | Some('\n') => {
                    self.diags.push(pos, "unterminated byte string literal");
                    return None;
                }
                Some('"') => break,
                Some('\\') => match self.escape(true) {
                    Ok(Esc::Byte(b)) => out.push(b),
                    Ok(Esc::Char(c)) => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    Err(msg) => {
                        self.diags.push(epos, msg);
                        ok = false;
                    }
                },
                Some(c) => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        ok.then_some(out)
    }

    /// Reads the escape after a backslash.
    fn escape(&mut self, bytes: bool) -> Result<Esc, String> {
        let c = match self.peek() {
            None | Some('\n') => return Err("unterminated escape sequence".into()),
            Some(c) => c,
        };
        self.bump();
        Ok(match c {
            'n' => Esc::Char('\n'),
            't' => Esc::Char('\t'),
            'r' => Esc::Char('\r'),
            '\\' => Esc::Char('\\'),
            '"' => Esc::Char('"'),
            '0' => Esc::Char('\0'),
            'x' if bytes => {
                let hex: String = (0..2).filter_map(|k| self.peek_at(k)).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(b) if hex.len() == 2 && hex.chars().all(|c| c.is_ascii_hexdigit()) => {
                        self.bump();
                        self.bump();
                        Esc::Byte(b)
                    }
                    _ => return Err("expected two hex digits after `\\x`".into()),
                }
            }
            'u' if !bytes => {
                if self.peek() != Some('{') {
                    return Err("expected `{` after `\\u`".into());
                }
                self.bump();
                let mut hex = String::new();
                while let Some(c) = self.peek().filter(|c| c.is_ascii_hexdigit()) {
                    hex.push(c);
                    self.bump();
                }
                if self.peek() != Some('}') || hex.is_empty() || hex.len() > 6 {
                    return Err("expected 1 to 6 hex digits and `}` in `\\u{…}`".into());
                }
                self.bump();
                let v = u32::from_str_radix(&hex, 16).unwrap_or(u32::MAX);
                match char::from_u32(v) {
                    Some(c) => Esc::Char(c),
                    None => return Err(format!("`\\u{{{hex}}}` is not a Unicode scalar value")),
                }
            }
            c => {
                let which = if bytes {
                    "\\n \\t \\r \\\\ \\\" \\0 \\xNN"
                } else {
                    "\\n \\t \\r \\\\ \\\" \\0 \\u{…}"
                };
                return Err(format!(
                    "unknown escape `\\{}` (expected one of {which})",
                    c.escape_debug()
                ));
            }
        })
    }

    fn number(&mut self, pos: Pos, start: usize) {
        let neg = self.peek() == Some('-');
        if neg {
            self.bump();
        }
        let mut text = String::new();
        let hex = self.starts_with("0x") || self.starts_with("0X");
        let mut is_float = false;
        if hex {
            self.bump();
            self.bump();
            while let Some(c) = self.peek().filter(|c| c.is_ascii_hexdigit()) {
                text.push(c);
                self.bump();
            }
        } else {
            self.digits(&mut text);
            if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                text.push('.');
                self.bump();
                self.digits(&mut text);
            }
            if matches!(self.peek(), Some('e' | 'E')) {
                let k = if matches!(self.peek_at(1), Some('+' | '-')) {
                    2
                } else {
                    1
                };
                if self.peek_at(k).is_some_and(|c| c.is_ascii_digit()) {
                    is_float = true;
                    for _ in 0..k {
                        text.push(self.bump().unwrap_or('e'));
                    }
                    self.digits(&mut text);
                }
            }
        }
        // A literal glued to letters, digits or dots (`4xi32`, `1.2.3`, `0x`) is malformed.
        let mut junk = false;
        while self.peek().is_some_and(|c| is_ident_char(c) || c == '.') {
            junk = true;
            self.bump();
        }
        let spelled = crate::error::excerpt(&self.src[start..self.i], 40);
        if junk || (hex && text.is_empty()) {
            self.diags
                .push(pos, format!("malformed number literal `{spelled}`"));
            return;
        }
        if is_float {
            let t = if neg { format!("-{text}") } else { text };
            self.push(Tok::Float(t), pos, start);
            return;
        }
        let radix = if hex { 16 } else { 10 };
        match u64::from_str_radix(&text, radix) {
            Ok(v) => {
                let v = i128::from(v);
                self.push(Tok::Int(if neg { -v } else { v }), pos, start);
            }
            Err(_) => self.diags.push(
                pos,
                format!("integer literal `{spelled}` does not fit in 64 bits"),
            ),
        }
    }

    fn digits(&mut self, text: &mut String) {
        while let Some(c) = self.peek().filter(|c| c.is_ascii_digit()) {
            text.push(c);
            self.bump();
        }
    }

    fn word(&mut self, pos: Pos, start: usize) {
        if self.starts_with("b\"") {
            self.bump();
            if let Some(b) = self.bytes(pos) {
                self.push(Tok::Bytes(b), pos, start);
            }
            return;
        }
        let mut w = String::new();
        while let Some(c) = self.peek().filter(|&c| is_ident_char(c)) {
            w.push(c);
            self.bump();
        }
        if (w == "nan" || w == "fbits") && self.peek() == Some(':') {
            if !(self.peek_at(1) == Some('0') && self.peek_at(2) == Some('x')) {
                self.bump();
                self.diags
                    .push(pos, format!("expected `0x` and hex digits after `{w}:`"));
                return;
            }
            for _ in 0..3 {
                self.bump();
            }
            let mut hex = String::new();
            while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric()) {
                hex.push(c);
                self.bump();
            }
            match u64::from_str_radix(&hex, 16) {
                Ok(bits) if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) => {
                    let t = if w == "nan" {
                        Tok::Nan(Some(bits))
                    } else {
                        Tok::FBits(bits)
                    };
                    self.push(t, pos, start);
                }
                _ => self.diags.push(
                    pos,
                    format!("malformed `{w}:0x…` literal: expected 1 to 16 hex digits"),
                ),
            }
            return;
        }
        let t = match w.as_str() {
            "inf" => Tok::Float(w),
            "nan" => Tok::Nan(None),
            _ => Tok::Ident(w),
        };
        self.push(t, pos, start);
    }
}

enum Esc {
    Char(char),
    Byte(u8),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> (Vec<Tok>, Vec<String>) {
        let mut d = Diags::default();
        let t = lex(src, &mut d);
        let errs = d
            .finish("t", src)
            .0
            .into_iter()
            .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
            .collect();
        (t.into_iter().map(|t| t.tok).collect(), errs)
    }

    #[test]
    fn punctuation_and_names() {
        let (t, e) = toks("%x: i32 = iadd %a, @\"b c\" ; comment\n^0 -> #[ #![ #4660");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(
            t,
            vec![
                Tok::Name {
                    sigil: '%',
                    text: "x".into(),
                    anon: false
                },
                Tok::Colon,
                Tok::Ident("i32".into()),
                Tok::Eq,
                Tok::Ident("iadd".into()),
                Tok::Name {
                    sigil: '%',
                    text: "a".into(),
                    anon: false
                },
                Tok::Comma,
                Tok::Name {
                    sigil: '@',
                    text: "b c".into(),
                    anon: false
                },
                Tok::Name {
                    sigil: '^',
                    text: "0".into(),
                    anon: true
                },
                Tok::Arrow,
                Tok::HashBracket,
                Tok::HashBang,
                Tok::Opaque(4660),
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn numbers() {
        let (t, e) = toks(
            "42 -3 0x2a -0x10 1.5 -0.0 1e300 2.5E-3 inf -inf nan nan:0x7ff8000000000001 fbits:0x3ff8000000000000 18446744073709551615",
        );
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(
            t,
            vec![
                Tok::Int(42),
                Tok::Int(-3),
                Tok::Int(42),
                Tok::Int(-16),
                Tok::Float("1.5".into()),
                Tok::Float("-0.0".into()),
                Tok::Float("1e300".into()),
                Tok::Float("2.5E-3".into()),
                Tok::Float("inf".into()),
                Tok::Float("-inf".into()),
                Tok::Nan(None),
                Tok::Nan(Some(0x7ff8000000000001)),
                Tok::FBits(0x3ff8000000000000),
                Tok::Int(u64::MAX as i128),
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn literal_errors() {
        let (_, e) = toks("4xi32 18446744073709551616 0x #70000 \"abc\n b\"\\q\" \"\\u{d800}\" $");
        assert_eq!(
            e,
            vec![
                "1:1: malformed number literal `4xi32`",
                "1:7: integer literal `18446744073709551616` does not fit in 64 bits",
                "1:28: malformed number literal `0x`",
                "1:31: opcode id `#70000` is out of range (at most 65535)",
                "1:38: unterminated string literal",
                "2:4: unknown escape `\\q` (expected one of \\n \\t \\r \\\\ \\\" \\0 \\xNN)",
                "2:9: `\\u{d800}` is not a Unicode scalar value",
                "2:19: unexpected character `$`",
            ]
        );
    }

    #[test]
    fn strings_and_bytes() {
        let (t, e) = toks(r#""a\n\"\u{e9}" b"\x00\xffz""#);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(
            t,
            vec![
                Tok::Str("a\n\"é".into()),
                Tok::Bytes(vec![0, 0xff, b'z']),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn comments_are_collected() {
        let mut d = Diags::default();
        let (t, c) = lex_with_comments("  ;  own \t\na \"x;y\" ;trail\r\n;\n", &mut d);
        assert_eq!(t.len(), 3);
        let got: Vec<(u32, u32, &str, bool)> = c
            .iter()
            .map(|c| (c.pos.line, c.pos.col, c.text.as_str(), c.own_line))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 3, "  own", true),
                (2, 9, "trail", false),
                (3, 1, "", true)
            ]
        );
    }

    #[test]
    fn line_starts_are_tracked() {
        let mut d = Diags::default();
        let t = lex("a b\n c ; x\nd", &mut d);
        let starts: Vec<bool> = t.iter().map(|t| t.line_start).collect();
        assert_eq!(starts, vec![true, false, true, true, false]);
    }
}
