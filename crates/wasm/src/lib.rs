//! # irkit-wasm: the WebAssembly front end
//!
//! This crate owns the translation of **one** WebAssembly module (binary, or text through the
//! `wat` crate) into **one** irkit [`Module`], using only the public API of `irkit-core`. It
//! validates its input with `wasmparser` first: a malformed or invalid module is refused with
//! wasmparser's message and byte offset ([`WasmError::Invalid`]); a valid module using what
//! is not translated yet is refused naming it and where ([`WasmError::Unsupported`]). It
//! never panics on its input.
//!
//! It does not link, write files or run anything: the result is an ordinary module for
//! `irkit-format`, `irkit-link` and the back ends. Wasm imports and exports become irkit
//! `import`s and `export`s under the name mapping of [`names`], so several wasm modules,
//! translated separately, link with `ir-link` like any others. `spec/wasm.md` is the normative
//! description.
//!
//! The pieces: [`validate`] validates the module (its function bodies on every core);
//! [`parse`] reads the sections; [`translate`](mod@translate) declares imports,
//! definitions and exports, then translates the bodies (a large module's in shards on every
//! core, each in a branch of the module: `irkit_core::branch`); [`func`] translates a body's
//! structured control flow, with
//! [`ssa`] (SSA construction for locals, told by
//! [`assigned`] which locals each loop assigns) over [`cfg`](mod@cfg) (terminators kept open until the body
//! is done); [`ops`] the numeric operators; [`traps`] the trap messages; [`memory`] linear memory; [`table`] tables and references; [`refs`] their operators and `call_indirect`; [`init`]
//! the module initializer; [`entry`] an optional `main` for running a module as a program;
//! [`lines`] the source lines of a module with DWARF (`clang -g`), as `loc` decorations.
//!
//! ```
//! let m = irkit_wasm::translate_input(
//!     br#"(module (func (export "add") (param i32 i32) (result i32)
//!           local.get 0 local.get 1 i32.add))"#,
//!     "lib",
//! )
//! .unwrap();
//! irkit_core::verify::verify(&m).unwrap();
//! assert!(m.find_export("wasm:lib:add").is_some());
//! ```

pub mod assigned;
pub mod cfg;
pub mod entry;
pub mod env;
pub mod error;
pub mod func;
pub mod init;
pub mod lines;
pub mod memory;
pub mod names;
pub mod ops;
pub mod parse;
pub mod refs;
pub mod simd;
mod simd_widen;
pub mod ssa;
pub mod table;
pub mod translate;
pub mod traps;
pub mod types;
pub mod validate;

use std::borrow::Cow;

use irkit_core::Module;

pub use entry::add_main;
pub use error::{Place, WasmError};
pub use names::{init_symbol, symbol};
pub use translate::{
    Nans, Options, features, features_2_0, translate, translate_in_shards, translate_with,
    translate_with_options,
};
/// The feature sets [`translate_with`] takes.
pub use wasmparser::WasmFeatures;

/// The binary form of an input: itself if it starts with wasm's magic bytes `\0asm`, else
/// the text form (`.wat`) assembled by the `wat` crate.
pub fn to_binary(input: &[u8]) -> Result<Cow<'_, [u8]>, WasmError> {
    if input.starts_with(b"\0asm") {
        return Ok(Cow::Borrowed(input));
    }
    wat::parse_bytes(input).map_err(|e| WasmError::Text(one_line(&e.to_string())))
}

/// Translates a binary or text module compiled under the name `name`.
pub fn translate_input(input: &[u8], name: &str) -> Result<Module, WasmError> {
    translate(&to_binary(input)?, name)
}

/// A multi-line message (wat's, with a source excerpt) as one line.
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('|') && !l.chars().all(|c| c == '^' || c == ' ')
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The front-end guide, `docs/frontend.md`, whose examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/frontend.md")]
pub struct FrontendGuide;
