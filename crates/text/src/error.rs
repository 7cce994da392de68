//! Parse errors: positions, messages, and their rendering.

use std::fmt;

/// The most errors one [`parse`](crate::parse) call reports; past it, a last error says
/// "too many errors" and parsing stops.
pub const MAX_ERRORS: usize = 20;

/// A position in the source: 1-based line and column, the column counted in `char`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in `char`s.
    pub col: u32,
}

/// One error found while reading a `.ir` text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file name given to [`parse`](crate::parse).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in `char`s.
    pub column: u32,
    /// What was expected and what was found, e.g. "expected `,` or end of line, found `%x`".
    pub message: String,
    /// The text of the source line the error is on (without its line break), for rendering.
    pub source_line: String,
}

impl ParseError {
    /// The multi-line rendering: `file:line:col: error: message`, then the source line and a
    /// caret under the column.
    ///
    /// ```text
    /// a.ir:3:18: error: expected `,` or end of line, found `%c`
    ///   %x: i32 = iadd %a, %b %c
    ///                         ^
    /// ```
    pub fn render(&self) -> String {
        let mut out = format!("{self}\n");
        // Tabs are kept so the caret lines up with the source as a terminal shows it.
        let line: String = self.source_line.chars().filter(|c| *c != '\r').collect();
        out.push_str(&line);
        out.push('\n');
        for c in line.chars().take(self.column.saturating_sub(1) as usize) {
            out.push(if c == '\t' { '\t' } else { ' ' });
        }
        out.push('^');
        out
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// All errors of one [`parse`](crate::parse) call (at least one), in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseErrors(pub Vec<ParseError>);

impl ParseErrors {
    /// The errors.
    pub fn errors(&self) -> &[ParseError] {
        &self.0
    }

    /// Every error in its multi-line form (see [`ParseError::render`]), separated by lines.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for e in &self.0 {
            out.push_str(&e.render());
            out.push('\n');
        }
        out
    }
}

/// One line per error.
impl fmt::Display for ParseErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseErrors {}

/// Collects errors (position + message) and turns them into [`ParseErrors`] at the end.
#[derive(Default)]
pub(crate) struct Diags {
    list: Vec<(Pos, String)>,
}

impl Diags {
    pub(crate) fn push(&mut self, pos: Pos, msg: impl Into<String>) {
        self.list.push((pos, msg.into()));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether the cap is reached (callers stop early).
    pub(crate) fn full(&self) -> bool {
        self.list.len() > MAX_ERRORS
    }

    pub(crate) fn finish(mut self, file: &str, source: &str) -> ParseErrors {
        self.list.sort_by_key(|(p, _)| *p);
        self.list.dedup();
        let lines: Vec<&str> = source.split('\n').collect();
        let mut out = Vec::new();
        for (i, (pos, msg)) in self.list.into_iter().enumerate() {
            let msg = if i == MAX_ERRORS {
                "too many errors; stopping".to_string()
            } else {
                msg
            };
            let source_line = lines
                .get(pos.line.saturating_sub(1) as usize)
                .map(|l| l.trim_end_matches('\r').to_string())
                .unwrap_or_default();
            out.push(ParseError {
                file: file.to_string(),
                line: pos.line,
                column: pos.col,
                message: msg,
                source_line,
            });
            if i == MAX_ERRORS {
                break;
            }
        }
        ParseErrors(out)
    }
}
