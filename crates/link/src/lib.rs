//! # irkit-link: the linker
//!
//! Links binary modules (`.irm` files, or modules a front end built and encoded in memory:
//! [`Input::from_module`]) into one module, lazily and independently of the order of its
//! inputs. It reads module views only: parsing `.ir` text is the caller's (the CLI's). `spec/linking.md` is the normative
//! description; in short:
//!
//! * **Roots**: the entry point (`main` by default) in an executable link, every name given
//!   with [`LinkOptions::exports`], and in a library link every exported name.
//! * **Reachability** (Scala Native NIR's *Reach*): a work list from the roots follows operand
//!   and type references and the pins (`pin`; `pin_if` once its condition is reached;
//!   `pin_weak` unless its target is unresolved). Only reached definitions are copied, and
//!   only their validation is reported; nothing else is decoded (inputs are opened, which
//!   reads their symbol tables, and each reached definition is validated on first touch,
//!   usually ahead of the copy by a spare thread: `linker/ahead.rs`). The walk only plans
//!   each copy (the answers it needs, in its order); the bodies are built afterwards on every
//!   core, into slots reserved in walk order, so the output does not depend on the thread
//!   count (`irkit_format::CopyPlan`, `irkit_core::Fragment`).
//! * **Resolution**: an import goes to the export of the same name, type-checked by
//!   structure; duplicate strong definitions are an error; `weak` yields to strong;
//!   `linkonce` copies with equal linking hashes collapse, unequal ones are an error; a
//!   reached `stub` needs [`LinkOptions::link_stubs`]. Types and constants are re-interned in
//!   the output, so equal ones from different inputs merge. A definition may be exported
//!   under several names; a re-export (`#[import("a"), export("b")]`) makes `b` resolve to
//!   whatever `a` resolves to, chains followed iteratively (cycles are errors), and the
//!   output's definition carries the re-exported names as extra exports.
//! * **Determinism**: inputs are sorted by name first; roots are sorted; output definitions
//!   are in first-reached order of a breadth-first work list. The same inputs in any order
//!   give the same module, hence the same bytes.
//! * **Specialization** (after the copy, before verification): every `specialize` of a
//!   generic the link found is instantiated once, its witness lookups resolved, until none
//!   is left; unused generic definitions are removed (see `specialize.rs`).
//! * **Objects** (after specialization, executable links only): classes, traits and objects
//!   are laid out, their dispatch tables built and the object instructions lowered to ordinary
//!   ones (see `objects/`), so a front end never decides a field offset or a method slot.
//! * **Diagnostics**: every problem is collected ([`LinkErrors`]), each one line; a missing
//!   symbol names the chain that needs it.
//!
//! ```no_run
//! use irkit_link::{Input, LinkOptions, link};
//! let bytes = std::fs::read("lib.irm")?;
//! let inputs = vec![
//!     Input::from_bytes("main.irm", &std::fs::read("main.irm")?)?,
//!     Input::from_bytes("lib.irm", &bytes)?,
//! ];
//! let linked = link(inputs, &LinkOptions::default()).map_err(|e| e.to_string())?;
//! let bytes = irkit_format::write(&linked.module).map_err(|e| e.to_string())?;
//! # let _ = bytes;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod dynamic;
mod error;
mod extend;
mod input;
mod label;
mod linker;
pub mod objects;
mod optimize;
pub mod specialize;

pub use dynamic::{Generics, Shared};
pub use error::{Chain, ChainLink, LinkError, LinkErrors};
pub use extend::{LIVE_PROGRAM, LiveNames, extend, extend_live};
pub use input::{Input, Opened};
pub use linker::{link, link_files, verify_linked};
pub use objects::Gc;
pub use specialize::{Sharing, specialize, specialize_with};
// The `-O` passes live in `irkit-opt` (they need no linker state); re-exported under their
// former paths.
pub use irkit_opt::{
    CallGraph, CallSite, Callees, Visible, callgraph, devirtualize, fold, fold_constants, inline,
    inline_always, inline_single_calls, merge, merge_jump_chains, prune, remove_unreferenced,
};

use std::time::Duration;

use irkit_core::Module;

/// How to link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkOptions {
    /// The entry point's export name (`main` by default). Required in an executable link; a
    /// root in a library link when some input exports it.
    pub entry: String,
    /// Extra roots, by export name (`--export`).
    pub exports: Vec<String>,
    /// A partial link (`--library`): every export is a root, unresolved imports stay as import
    /// declarations, no entry point is required.
    pub library: bool,
    /// Drop the export names not asked for with [`LinkOptions::exports`] or
    /// [`LinkOptions::entry`] (`--internalize`). In a library link, only those names are roots.
    pub internalize: bool,
    /// Link reached `stub` definitions instead of refusing them (`--link-stubs`).
    pub link_stubs: bool,
    /// Copy name hints and source locations from the inputs' debug sections.
    pub debug_info: bool,
    /// Run the verifier on the result (a failure is reported as an internal error).
    pub verify: bool,
    /// How deep specialization may nest: an instantiation made while instantiating another
    /// counts one level more; beyond this (polymorphic recursion) the link fails naming the
    /// chain.
    pub max_instantiation_depth: usize,
    /// Rewrite indirect calls that can only call one function as direct calls
    /// (`--devirtualize`, part of `-O`; see [`devirtualize()`]).
    pub devirtualize: bool,
    /// Inline each function into its only call site, fold what became constant, remove what
    /// nothing uses any more (`--inline`, part of `-O`; see [`inline_single_calls()`]).
    pub inline: bool,
    /// The allocation routine of `classalloc` and of objects' instances (`--gc`, see [`Gc`]).
    pub gc: Gc,
    /// Which generic functions an executable link shares with one dynamic-dispatch version
    /// instead of cloning them per instance (`--generics`, see [`Generics`]).
    pub generics: Generics,
}

impl Default for LinkOptions {
    fn default() -> LinkOptions {
        LinkOptions {
            entry: "main".to_string(),
            exports: Vec::new(),
            library: false,
            internalize: false,
            link_stubs: false,
            debug_info: true,
            verify: true,
            max_instantiation_depth: 64,
            devirtualize: false,
            inline: false,
            gc: Gc::None,
            generics: Generics::default(),
        }
    }
}

/// Counts and per-phase times of one link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Number of inputs.
    pub inputs: usize,
    /// Definitions in all inputs together.
    pub defs_available: u64,
    /// Definitions reached (validated): copied bodies and declarations, plus the import and
    /// extern declarations that resolved to something else.
    pub defs_reached: u64,
    /// Definitions copied into the output.
    pub defs_copied: u64,
    /// Instructions copied (pool values excluded).
    pub insts_copied: u64,
    /// Distinct generic instantiations (each `specialize` value is instantiated once).
    pub instantiations: u64,
    /// Generic functions shared with one dynamic-dispatch version, instances they serve,
    /// calls through witness tables in them, and why some asked for were cloned.
    pub shared: Shared,
    /// Opening the inputs (header, directory, strings, symbols, definition index; text
    /// inputs are parsed and encoded here).
    pub open: Duration,
    /// Resolving names (symbol lookups, conflict checks, import type checks).
    pub resolve: Duration,
    /// Following references and copying (validation of reached definitions included).
    pub reach_copy: Duration,
    /// Specializing generics.
    pub specialize: Duration,
    /// Classes and objects laid out (executable links).
    pub classes: u64,
    /// Of those, the ones instantiated (a `classalloc` or `instance` reached).
    pub classes_live: u64,
    /// Method implementations and constructors kept by the class analysis.
    pub methods_reached: u64,
    /// Method implementations and constructors it dropped (no reached call selects them).
    pub methods_dropped: u64,
    /// `method` instructions lowered to their one possible implementation (`-O`).
    pub methods_devirtualized: u64,
    /// Object instructions lowered.
    pub object_insts: u64,
    /// Laying out the classes and lowering the object instructions.
    pub objects: Duration,
    /// Indirect calls rewritten as direct calls ([`LinkOptions::devirtualize`]).
    pub devirtualized: u64,
    /// Of those, the ones behind a guard that keeps the indirect call for other callees.
    pub devirtualized_guarded: u64,
    /// Functions inlined into their only call site ([`LinkOptions::inline`]).
    pub inlined: u64,
    /// Call sites that received a copy of an `inline_always` callee ([`LinkOptions::inline`]).
    pub inlined_copies: u64,
    /// Blocks merged into their only predecessor ([`LinkOptions::inline`]).
    pub blocks_merged: u64,
    /// Instructions in function bodies before the optimization passes (0 if none ran).
    pub insts_before_optimize: u64,
    /// Instructions in function bodies after them (0 if none ran).
    pub insts_after_optimize: u64,
    /// Definitions removed because nothing used them any more after the passes.
    pub removed: u64,
    /// The optimization passes.
    pub optimize: Duration,
    /// Verifying the result.
    pub verify: Duration,
}

/// A successful link.
#[derive(Debug)]
pub struct Linked {
    /// The linked module (verified, unless [`LinkOptions::verify`] was off).
    pub module: Module,
    /// What it took.
    pub stats: Stats,
}
