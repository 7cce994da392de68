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
//! * [`parse_with_trivia`] and [`print_with_trivia`] do the same keeping the comments and
//!   blank lines of the source ([`Trivia`]): a formatter that loses no comment.
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
mod trivia;

pub use error::{MAX_ERRORS, ParseError, ParseErrors, Pos};
pub use names::{MAX_INLINE_DEPTH, Names};
pub use parser::MAX_DEPTH;
pub use printer::{print, print_annotated, print_inst, print_inst_with, print_with_trivia};
pub use trivia::Trivia;

use irkit_core::Module;

/// Parses a whole `.ir` file. `file_name` is only used in error messages.
pub fn parse(source: &str, file_name: &str) -> Result<Module, ParseErrors> {
    parse_with_trivia(source, file_name).map(|(m, _)| m)
}

/// Parses a whole `.ir` file like [`parse`], also returning its comments and blank lines
/// attached to the module's instructions, for [`print_with_trivia`] (a formatter that keeps
/// comments: `print_with_trivia(&m, &t)` for `(m, t) = parse_with_trivia(src)`). The module is
/// the one [`parse`] returns; comments are not part of it. The attachment rules are in
/// `spec/text.md`, "Comments and formatting".
pub fn parse_with_trivia(source: &str, file_name: &str) -> Result<(Module, Trivia), ParseErrors> {
    let mut diags = error::Diags::default();
    let (tokens, comments) = lexer::lex_with_comments(source, &mut diags);
    let file = parser::parse_tokens(&tokens, &mut diags);
    if !diags.is_empty() {
        return Err(diags.finish(file_name, source));
    }
    let (module, created) = lower::lower(&file, diags).map_err(|d| d.finish(file_name, source))?;
    let eof = tokens.last().map_or(Pos::default(), |t| t.pos);
    let trivia = trivia::collect(&file, &comments, source, &created, eof);
    Ok((module, trivia))
}
