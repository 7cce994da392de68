//! # irkit-wast: WebAssembly scripts as the judge
//!
//! This crate owns running `.wast` scripts, the official WebAssembly testsuite's format,
//! against irkit: each `module` of a script is translated by `irkit-wasm`, written to `.irm`
//! bytes and read back (separate compilation for real), linked by `irkit-link` onto the live
//! program (imports bind to the live instances of earlier modules), and run by a back end's
//! [`Session`](irkit_backend::Session), which keeps every instance's state from one command
//! to the next. `assert_return` (with `nan:canonical` and `nan:arithmetic`), `assert_trap`,
//! `assert_exhaustion`, `assert_invalid`, `assert_malformed` and `assert_unlinkable` are
//! checked; what is out of the front end's scope (GC references, threads, …) is skipped
//! with the reason. spec/wasm.md, "Scripts", is the normative description.
//!
//! It depends on the back-end *contract* only; the caller picks the back end (`ir-wast
//! --backend interp|jit`).
//!
//! [`differential`] runs one module on two back ends and compares every exported function's
//! outcome: the oracle for random modules.
//!
//! The pieces: [`runner`] the directives, [`store`] the live program, [`values`] arguments and
//! expected results, [`spectest`] the host module scripts import from, [`report`] the
//! verdicts.

pub mod differential;
pub mod report;
pub mod runner;
pub mod script;
pub mod spectest;
pub mod store;
pub mod values;

pub use report::{CommandResult, Counts, Report, Verdict};
pub use runner::{run_script, run_script_with, trap_matches};
pub use script::{MAX_SCRIPT, read_script};
pub use store::{InstantiateError, SCRIPT_MAX_DEPTH, Store, StoreStats};
