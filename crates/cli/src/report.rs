//! Collecting problems and printing them, one per line (a rendered parse error also shows its
//! source line and a caret under the column).

use std::process::ExitCode;

use irkit_core::Module;
use irkit_core::verify::VerifyError;

use crate::{EXIT_OK, EXIT_PROBLEMS};

/// The problems found by one tool run, in the order found.
#[derive(Default, Debug)]
pub struct Problems {
    lines: Vec<String>,
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

    /// Whether any problem was recorded.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Number of problems.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Prints every problem to stderr and returns the exit code: 0 if none, 1 otherwise.
    pub fn finish(self) -> ExitCode {
        for l in &self.lines {
            eprintln!("{l}");
        }
        ExitCode::from(if self.lines.is_empty() {
            EXIT_OK
        } else {
            EXIT_PROBLEMS
        })
    }
}

/// Renders a verifier error on one line: file, function, block, the instruction as printed,
/// and the message.
pub fn verify_error_line(file: &str, module: &Module, e: &VerifyError) -> String {
    let text = irkit_text::print_inst(module, e.inst);
    let text = text.trim();
    let first = text.lines().next().unwrap_or("");
    let shown = if text.lines().count() > 1 {
        format!("{first} ...")
    } else {
        first.to_string()
    };
    format!("{file}: {e}: `{shown}`")
}
