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

/// At most `max` characters of `text` for a message, control characters escaped (`\n`,
/// `\u{7}`, …; a tab too, so a message stays on one line), and `…` when it was cut.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (k, c) in text.chars().enumerate() {
        if k == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
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
    /// The part of the source line the error is on, for rendering: the whole line when it is
    /// short, else a window of at most [`WINDOW`] characters around the column, cut ends
    /// marked `…`; control characters but tabs are escaped (`\u{1b}`), so a message never
    /// carries raw terminal codes.
    pub source_line: String,
    /// The 1-based column of the error within [`source_line`](Self::source_line), in `char`s
    /// (where the caret goes).
    pub caret: u32,
}

/// The most characters of a source line an error quotes.
pub const WINDOW: usize = 100;

/// The part of `line` an error at 1-based `column` quotes, and the caret's column in it.
fn window(line: &str, column: u32) -> (String, u32) {
    let col = column.saturating_sub(1) as usize;
    let len = line.chars().count();
    // Start so that the column sits a third of the way in (or at its place in a short line).
    let start = if len <= WINDOW {
        0
    } else {
        col.saturating_sub(WINDOW / 3).min(len - WINDOW)
    };
    let mut out = String::new();
    let mut caret = 1u32;
    if start > 0 {
        out.push('…');
        caret += 1;
    }
    for (k, c) in line.chars().enumerate().skip(start).take(WINDOW) {
        let piece: String = if c.is_control() && c != '\t' {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        if k < col {
            caret += piece.chars().count() as u32;
        }
        out.push_str(&piece);
    }
    if start + WINDOW < len {
        out.push('…');
    }
    (out, caret)
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
        for c in line.chars().take(self.caret.saturating_sub(1) as usize) {
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
        let mut out = Vec::new();
        for (i, (pos, msg)) in self.list.into_iter().enumerate() {
            let msg = if i == MAX_ERRORS {
                "too many errors; stopping".to_string()
            } else {
                msg
            };
            let full = source
                .split('\n')
                .nth(pos.line.saturating_sub(1) as usize)
                .map_or("", |l| l.trim_end_matches('\r'));
            let (source_line, caret) = window(full, pos.col);
            out.push(ParseError {
                file: file.to_string(),
                line: pos.line,
                column: pos.col,
                message: msg,
                source_line,
                caret,
            });
            if i == MAX_ERRORS {
                break;
            }
        }
        ParseErrors(out)
    }
}
