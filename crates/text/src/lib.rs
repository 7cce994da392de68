//! # irkit-text: the `.ir` text format
//!
//! This crate owns the conversion between text and [`Module`]: the lexer, the parser (text to
//! a syntax tree, then to a module, resolving names and forward references), the canonical
//! printer, and the diagnostics of both. The normative description is `spec/text.md`.
//!
//! * [`parse`] reads a whole file; it never panics, bounds its recursion, and reports every
//!   error it can (up to [`MAX_ERRORS`]) with file, line, column and a caret rendering.
//! * [`print()`] writes the canonical text. `parse(print(m))` is structurally equal to `m` for
//!   any module (see [`irkit_core::equiv::modules_equal`]), and printing a parsed canonical
//!   text gives the same text back.
//! * [`print_inst`] and [`print_annotated`] render single instructions and annotated modules,
//!   for verifier messages, with the names [`print()`] uses ([`Names`]).
//!
//! What this crate does **not** do is check meaning: the parser rejects only what cannot be
//! built (unknown opcodes, undefined or duplicate names, malformed literals, a payload of the
//! wrong kind, an integer out of its type's range, …). Whether the module is well typed,
//! well structured and in SSA form is the verifier's job (`irkit_core::verify`).

mod ast;
mod error;
mod lexer;
mod literal;
mod lower;
mod names;
mod parser;
mod printer;

pub use error::{MAX_ERRORS, ParseError, ParseErrors, Pos};
pub use names::{MAX_INLINE_DEPTH, Names};
pub use parser::MAX_DEPTH;
pub use printer::{print, print_annotated, print_inst, print_inst_with};

use irkit_core::Module;

/// Parses a whole `.ir` file. `file_name` is only used in error messages.
pub fn parse(source: &str, file_name: &str) -> Result<Module, ParseErrors> {
    let mut diags = error::Diags::default();
    let tokens = lexer::lex(source, &mut diags);
    let file = parser::parse_tokens(&tokens, &mut diags);
    if !diags.is_empty() {
        return Err(diags.finish(file_name, source));
    }
    lower::lower(&file, diags).map_err(|d| d.finish(file_name, source))
}
