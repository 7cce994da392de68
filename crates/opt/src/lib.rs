//! # irkit-opt: the module-level optimization passes
//!
//! The `-O` passes of `ir-link` (spec/linking.md, "Optimization passes"), each a function of
//! any verified [`irkit_core::Module`] (a linked program, usually), needing nothing of the
//! linker: which definitions the outside world can see ([`Visible`]) and the module itself.
//! This crate owns:
//!
//! * the call graph ([`CallGraph`], `callgraph.rs`), and what a load from a constant global
//!   table can yield (`tables.rs`), which it follows;
//! * devirtualization ([`devirtualize()`]), inlining into a single call site
//!   ([`inline_single_calls`]) and of `inline_always` copies ([`inline_always()`]), constant
//!   folding ([`fold_constants`]), jump-chain merging ([`merge_jump_chains`]) and removal of
//!   what nothing uses ([`remove_unreferenced`]), with their shared rewriting helpers
//!   (`rewrite.rs`);
//! * the pipeline that runs them in rounds ([`optimize()`], `optimize.rs`).
//!
//! `irkit-link` runs the pipeline after specialization when asked (`--devirtualize`,
//! `--inline`, `-O`) and re-exports the passes.

pub mod callgraph;
pub mod devirtualize;
pub mod fold;
pub mod inline;
pub mod inline_always;
mod loops;
pub mod merge;
mod optimize;
pub mod prune;
mod rewrite;
mod scopes;
mod tables;

pub use callgraph::{CallGraph, CallSite, Callees};
pub use devirtualize::devirtualize;
pub use fold::fold_constants;
pub use inline::{Visible, inline_single_calls};
pub use inline_always::inline_always;
pub use merge::merge_jump_chains;
pub use optimize::{MAX_ROUNDS, Optimized, PassError, Passes, optimize};
pub use prune::remove_unreferenced;
