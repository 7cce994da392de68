//! # irkit-cranelift: the native back end
//!
//! This crate owns native code generation with Cranelift for a **linked, verified** irkit
//! module: lowering every core opcode to Cranelift IR (the private `lower` module: blocks with
//! parameters, `switch`, direct and indirect calls, stack slots, aggregates split into scalar
//! values), global data with initializers and relocations (`data`), the generated trap routine
//! and C `main` (`routines`, their symbols in `runtime`), and `extern` calls into C. From the
//! same lowering it produces
//!
//! * object files ([`emit_object`], through `cranelift-object`),
//! * executables ([`build_executable`]: the object linked by the system `cc`),
//! * in-process runs ([`jit::compile`], through `cranelift-jit`), behind the
//!   [`irkit_backend::Backend`] trait as [`Jit`] (name `jit`),
//! * sessions ([`JitSession`], `Jit::session`): a live program whose exports are called many
//!   times and onto which extending modules are compiled; in session mode traps and `exit`
//!   return to the host instead of ending the process (spec/backends.md, "Sessions").
//!
//! It takes modules without NOIR procs: rewriting procs into functions
//! (`irkit_noir::lower_procs`) is a pipeline step of its own, run before (the CLI runs it; a
//! proc given here is reported as unsupported). Semantics are spec/ir.md's, bit for bit with the interpreter (`irkit-interp`, the oracle):
//! wrapping integers, masked shifts, canonical NaNs, saturating float-to-integer conversions.
//! Traps are explicit checks that branch to a generated routine printing the interpreter's trap
//! line (`trap: <kind> in @f ^b, instruction N (op)`) to standard error and exiting with code
//! 70. What native code does **not** check (spec/backends.md): memory errors (bounds, null,
//! use after free, stores into `global_const`), indirect calls through a pointer that is not a
//! function of the call's signature. Every call checks that the callee's stack objects fit above
//! the running thread's stack limit, and, when a call depth limit is set, the depth as the
//! interpreter checks it (the same limit, the same trapping call; spec/backends.md, "Call
//! depth and the native stack").
//!
//! It does not parse, link or verify: use `irkit-text`/`irkit-format`, `irkit-link` and
//! `irkit_core::verify` first.
//!
//! Files, each using only those above it: `types` (layouts and leaves of IR types, the pointer
//! type), `place` (trap locations as the interpreter spells them), `runtime` (the runtime's
//! symbols and state words), `context` (the state one lowering shares), `data` (globals),
//! `routines` (trap, fault and entry routines), `lower` (the driver and declarations; function
//! bodies in `lower/func`, with `arith`, `memory` and `control`), and last `object`, `exe` and
//! `jit`. Code generation of a whole object: `isa` (the host target at a
//! [`CodegenLevel`]), `names` (what a function's external names denote, apart from one
//! build's ids; trap messages declared in definition order), `code` (machine code with its
//! relocations by name), `fingerprint` (a function's cache key, from its irkit tree), `cache`
//! (the code cache directory; an entry's bytes in `cache/entry`, bounded reads in
//! `cache/read`, a build's entries in one file, read in one call, in `cache/pack`) and
//! `parallel` (lowering and compiling on every core, defining
//! in module order); `debug` (debug information of an object file: each function's line
//! rows and call frame program, then the DWARF sections and `.eh_frame`, spec/backends.md
//! "Debug information"); `session` (JIT sessions), `thread` (the JIT's per-thread state and stack
//! bounds) and `fault` (a memory fault in JIT code as a trap line).

mod cache;
mod code;
mod context;
mod data;
mod debug;
mod error;
pub mod exe;
#[cfg(unix)]
mod fault;
mod fingerprint;
mod guard;
mod heap;
pub(crate) mod isa;
pub mod jit;
mod licm;
mod lower;
mod memories;
mod names;
mod object;
mod parallel;
pub mod perf_map;
mod place;
mod routine;
mod routines;
mod runtime;
mod session;
mod site_table;
mod sites;
mod thread;
mod types;

pub use cache::{RemoteOptions, RemoteStats};
pub use data::MAX_GLOBAL_SIZE;
pub use exe::{
    build_executable, build_executable_verifying, build_executable_with,
    build_executable_with_depth, link_executable, link_executable_with,
};
/// The code cache's entry format version: a cache lives in `DIR/irkit-code-v<this>`.
pub use fingerprint::FORMAT_VERSION as CODE_CACHE_VERSION;
pub use object::{
    CodegenLevel, CodegenOptions, CodegenStats, compile_object, compile_object_verifying,
    emit_object, emit_object_with, emit_object_with_entry,
};
pub use session::JitSession;

use irkit_backend::{Backend, BackendError, CodeGen, Outcome, RunOptions, Session};
use irkit_core::Module;

/// The JIT back end (name `jit`): compiles the module into this process and runs it.
///
/// # Trust
///
/// The module runs as native code **inside the calling process**, with its privileges: it may
/// call any C function of the process (`system`, `unlink`, …), and its memory errors are not
/// checked (a fault ends the process with the memory-fault trap line; an error that does not
/// fault corrupts the process). Run only modules you would run as programs; the interpreter
/// (`irkit-interp`, back end `interp`) is the way to run an untrusted one.
///
/// [`Backend::run`] returns only [`Outcome::Exited`]: a trap prints its line to standard error
/// and ends the calling process with exit code [`irkit_backend::EXIT_TRAP`] (there is no
/// unwinding through native code), and `exit(n)` ends it with `n`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Jit;

impl Backend for Jit {
    fn name(&self) -> &'static str {
        "jit"
    }

    fn run(&self, module: &Module, opts: &RunOptions) -> Result<Outcome, BackendError> {
        let compiled = jit::compile_with(module, opts)?;
        Ok(Outcome::Exited(compiled.run()?))
    }

    fn runs_procs(&self) -> bool {
        false
    }

    /// A [`JitSession`]: traps and `exit` are call results, the process goes on.
    fn session(&self, opts: &RunOptions) -> Result<Box<dyn Session>, BackendError> {
        Ok(Box::new(JitSession::new(opts)))
    }
}

/// The object-file code generator (name `cranelift`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ObjectGen;

impl CodeGen for ObjectGen {
    fn name(&self) -> &'static str {
        "cranelift"
    }

    fn emit_object(&self, module: &Module, opts: &RunOptions) -> Result<Vec<u8>, BackendError> {
        emit_object_with(module, &opts.entry, opts.max_depth)
    }

    fn build_executable(
        &self,
        module: &Module,
        opts: &RunOptions,
        out: &std::path::Path,
    ) -> Result<(), BackendError> {
        exe::build_executable_with_depth(module, &opts.entry, opts.max_depth, out)
    }
}
