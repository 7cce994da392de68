//! Collecting problems and printing them, one per line (a rendered parse error also shows its
//! source line and a caret under the column).

use std::process::ExitCode;

use irkit_core::Module;
use irkit_core::verify::VerifyError;

use crate::{EXIT_OK, EXIT_PROBLEMS};

/// Writes one line to stderr, like `eprintln!`, but without panicking when stderr is closed
/// or full (there is nowhere left to report that).
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// The problems found by one tool run, in the order found.
#[derive(Default, Debug)]
pub struct Problems {
    lines: Vec<String>,
    /// A failure that is reported by the exit code alone (stdout closed by the reader).
    quiet_failure: bool,
}

impl Problems {
    /// No problems yet.
    pub fn new() -> Problems {
        Problems::default()
    }

    /// Records one problem (already naming its file and place).
    pub fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    /// Records a failure that needs no message: the exit code is 1 (stdout was a pipe whose
    /// reader went away, as with `| head`; Unix tools end quietly then).
    pub fn fail_quietly(&mut self) {
        self.quiet_failure = true;
    }

    /// Whether any problem was recorded.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Number of problems.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Moves `other`'s problems after these (problems found apart, reported in order).
    pub fn append(&mut self, other: &mut Problems) {
        self.lines.append(&mut other.lines);
        self.quiet_failure |= std::mem::take(&mut other.quiet_failure);
    }

    /// Prints every problem to stderr and returns the exit code: 0 if none, 1 otherwise. A
    /// failure to write to stderr itself is ignored (there is nowhere left to report it).
    pub fn finish(self) -> ExitCode {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        for l in &self.lines {
            let _ = writeln!(err, "{l}");
        }
        ExitCode::from(if self.lines.is_empty() && !self.quiet_failure {
            EXIT_OK
        } else {
            EXIT_PROBLEMS
        })
    }
}

/// Renders a verifier error on one line: `file:line:col: error: in <place>: message:
/// `instruction as printed``, the line and column only for text (`positions` from
/// [`irkit_text::parse_with_source_map`]), the place as [`irkit_core::place`] says it.
/// `names` is the module's naming table, computed once for all its errors (the verifier
/// reports up to 1000: naming per error would cost errors × module size).
pub fn verify_error_line(
    file: &str,
    module: &Module,
    names: &irkit_text::Names,
    e: &VerifyError,
    positions: Option<&irkit_text::SourceMap>,
) -> String {
    let text = irkit_text::print_inst_with(module, names, e.inst);
    let text = text.trim();
    let first = text.lines().next().unwrap_or("");
    let shown = if text.lines().count() > 1 {
        format!("{first} ...")
    } else {
        first.to_string()
    };
    let at = positions
        .and_then(|p| p.pos(e.inst))
        .map_or_else(String::new, |p| format!(":{}:{}", p.line, p.col));
    format!("{file}{at}: error: {e}: `{shown}`")
}
