//! # irkit-text: the `.ir` text format
//!
//! This crate owns the conversion between text and [`Module`]: the lexer, the parser (text to
//! a syntax tree, then to a module, resolving names and forward references), the canonical
//! printer, and the diagnostics of both. The normative description is `spec/text.md`. Files:
//! `lexer`, `parser/` (text to the syntax tree of `ast`), `build/` (the syntax tree to a
//! module: scopes, named types and constants, operands), `printer/` with `names` and `trivia`
//! (module to text), `literal` and `error` (shared by both directions).
//!
//! * [`parse`] reads a whole file; it never panics, bounds its recursion, and reports every
//!   error it can (up to [`MAX_ERRORS`]) with file, line, column and a caret rendering.
//! * [`print()`] writes the canonical text. `parse(print(m))` is structurally equal to `m` for
//!   any module (see [`irkit_core::equiv::modules_equal`]), and printing a parsed canonical
//!   text gives the same text back.
//! * [`parse_with_trivia`] and [`print_with_trivia`] do the same keeping the comments and
//!   blank lines of the source ([`Trivia`]): a formatter that loses no comment.
//! * [`parse_with_source_map`] also says where each instruction was written, and
//!   [`attach_locations`] turns that into `loc` decorations (what `-g` asks of the tools).
//! * [`print_inst`] and [`print_annotated`] render single instructions and annotated modules,
//!   for verifier messages, with the names [`print()`] uses ([`Names`]).
//!
//! What this crate does **not** do is check meaning: the parser rejects only what cannot be
//! built (unknown opcodes, undefined or duplicate names, malformed literals, a payload of the
//! wrong kind, an integer out of its type's range, …). Whether the module is well typed,
//! well structured and in SSA form is the verifier's job (`irkit_core::verify`).

mod ast;
mod build;
mod error;
mod lexer;
mod literal;
mod locations;
mod names;
mod parser;
mod printer;
mod trivia;

pub use error::{MAX_ERRORS, ParseError, ParseErrors, Pos, WINDOW};
pub use locations::attach_locations;
pub use names::{MAX_INLINE_DEPTH, Names};
pub use parser::MAX_DEPTH;
pub use printer::{print, print_annotated, print_inst, print_inst_with, print_with_trivia};
pub use trivia::Trivia;

use irkit_core::Module;

/// Parses a whole `.ir` file. `file_name` is only used in error messages.
pub fn parse(source: &str, file_name: &str) -> Result<Module, ParseErrors> {
    build::build_source(source, false)
        .map(|l| l.module)
        .map_err(|d| d.finish(file_name, source))
}

/// Where the instructions of a parsed module were written: for messages about a module that
/// came from text (a verifier error, say) to name the line and column as well as the place.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    positions: std::collections::HashMap<irkit_core::Inst, Pos>,
}

impl SourceMap {
    /// The position of `inst`'s statement (its result name, else its opcode), if `inst` was
    /// written in the text (types, constants and name hints were not).
    pub fn pos(&self, inst: irkit_core::Inst) -> Option<Pos> {
        self.positions.get(&inst).copied()
    }
}

/// Parses like [`parse`] (the same module, instruction for instruction), also returning where
/// each instruction was written.
pub fn parse_with_source_map(
    source: &str,
    file_name: &str,
) -> Result<(Module, SourceMap), ParseErrors> {
    build::build_source(source, true)
        .map(|l| {
            (
                l.module,
                SourceMap {
                    positions: l.positions,
                },
            )
        })
        .map_err(|d| d.finish(file_name, source))
}

/// Parses a whole `.ir` file like [`parse`], also returning its comments and blank lines
/// attached to the module's instructions, for [`print_with_trivia`] (a formatter that keeps
/// comments: `print_with_trivia(&m, &t)` for `(m, t) = parse_with_trivia(src)`). The module is
/// the one [`parse`] returns; comments are not part of it. The attachment rules are in
/// `spec/text.md`, "Comments and formatting".
pub fn parse_with_trivia(source: &str, file_name: &str) -> Result<(Module, Trivia), ParseErrors> {
    let mut diags = error::Diags::default();
    let (file, comments, eof) = parser::parse_source(source, &mut diags);
    if !diags.is_empty() {
        return Err(diags.finish(file_name, source));
    }
    let built = build::build_file(&file, true).map_err(|d| d.finish(file_name, source))?;
    let (module, created, numbers) = (built.module, built.created, built.numbers);
    let mut trivia = trivia::collect(&file, &comments, source, &created, eof);
    trivia.numbers = numbers;
    Ok((module, trivia))
}
