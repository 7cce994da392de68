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

/// Renders verifier errors, one line each (see [`verify_error_line`]), naming the module's
/// values once for all of them (the verifier reports up to 1000 errors: naming per error would
/// cost errors x module size).
pub fn verify_error_lines(file: &str, module: &Module, errors: &[VerifyError]) -> Vec<String> {
    let names = irkit_text::Names::new(module);
    errors
        .iter()
        .map(|e| error_line(file, module, &names, e))
        .collect()
}

/// Renders a verifier error on one line: file, function, block, the instruction as printed,
/// and the message.
pub fn verify_error_line(file: &str, module: &Module, e: &VerifyError) -> String {
    error_line(file, module, &irkit_text::Names::new(module), e)
}

fn error_line(file: &str, module: &Module, names: &irkit_text::Names, e: &VerifyError) -> String {
    let text = irkit_text::print_inst_with(module, names, e.inst);
    let text = text.trim();
    let first = text.lines().next().unwrap_or("");
    let shown = if text.lines().count() > 1 {
        format!("{first} ...")
    } else {
        first.to_string()
    };
    format!("{file}: {e}: `{shown}`")
}
