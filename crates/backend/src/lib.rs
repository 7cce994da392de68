//! # irkit-backend: the back-end contract
//!
//! This crate owns the interface between a **linked, verified** [`Module`] and whatever turns it
//! into behaviour: the two traits every back end implements, the outcome of a run, the one
//! error type, and the process exit codes the command-line tools use. It owns no back end: the
//! reference interpreter (`irkit-interp`) and the Cranelift native back end (`irkit-cranelift`)
//! each implement the traits in their own crate, and the CLI picks one by [`Backend::name`].
//! Adding a back end is one new crate implementing these traits; no other crate changes.
//!
//! * [`Backend`] runs a module's entry function and reports how it ended ([`Outcome`]).
//! * [`CodeGen`] compiles a module to a relocatable object file.
//!
//! The contract (normative text in `spec/backends.md`):
//!
//! * the module is linked (no unresolved `import` is used) and verified; a back end never
//!   panics on such a module, and reports anything it cannot handle as a [`BackendError`]
//!   naming the function, block and instruction;
//! * the entry's result is the exit code: an integer result truncated or extended to `i32`
//!   (`i1` zero-extended, `i8`/`i16` sign-extended, `i64` truncated), 0 for `void`, `n` when
//!   the program calls `exit(n)`;
//! * a trap is reported as one line, `trap: <kind> in @func ^block, instruction N (opcode)`,
//!   whose `<kind>` spelling is shared by every back end (see [`trap_kinds`]);
//! * native code is limited by its real stack, per thread (the trap
//!   [`trap_kinds::NATIVE_STACK_EXHAUSTED`]), the interpreter by [`DEFAULT_INTERP_DEPTH`]
//!   heap-allocated frames, which reaches at least as deep; a call depth limit given in
//!   [`RunOptions::max_depth`] is the same in every back end: the call made while that many
//!   activations are live is the trap [`trap_kinds::stack_overflow`], at the same call.

use irkit_core::Module;
use thiserror::Error;

pub mod extension;

/// The process exit code of a program that trapped (`ir-run`, and executables built by a
/// native back end). Chosen outside 0–2 (success, bad input, usage) and below 126 (shells).
pub const EXIT_TRAP: i32 = 70;

/// The interpreter's call depth limit when none is given (spec/backends.md, "Call depth and
/// the native stack"): native code is then limited by its stack alone, and the smallest native
/// frame of a recursive call is 16 bytes (a return address and a saved frame pointer), so an
/// executable's usual 8 MiB stack holds fewer than 530,000 activations; the interpreter, whose
/// frames live on its heap (about 150 bytes each for a small function), goes further.
pub const DEFAULT_INTERP_DEPTH: usize = 1_000_000;

/// The largest call depth limit the tools accept (`--max-depth`): the JIT's thread stack is
/// at most 1 GiB (1 KiB per activation at this depth), and the interpreter keeps its frames in
/// memory of its own (about 150 bytes each for a small function, more with many values).
pub const MAX_DEPTH: usize = 1_000_000;

/// The trap kind spellings shared by the back ends: the `<kind>` of a trap line.
pub mod trap_kinds {
    /// `sdiv`, `udiv`, `srem` or `urem` with a zero divisor.
    pub const DIVISION_BY_ZERO: &str = "integer division by zero";
    /// `sdiv` or `srem` of `MIN` by `-1`.
    pub const INTEGER_OVERFLOW: &str = "integer overflow (MIN / -1)";
    /// `unreachable` executed.
    pub const UNREACHABLE: &str = "unreachable executed";
    /// `trap` executed.
    pub const TRAP: &str = "trap executed";
    /// C's `abort()` called.
    pub const ABORT: &str = "abort called";
    /// `mem_load` or `mem_store` outside its linear memory (spec/ir.md, "Linear memories"):
    /// WebAssembly's own spelling.
    pub const OUT_OF_BOUNDS_MEMORY: &str = "out of bounds memory access";
    /// An allocation the program's memory cannot hold (the interpreter's memory limit, or a
    /// null result of the allocator behind `classalloc`).
    pub const OUT_OF_MEMORY: &str = "out of memory";
    /// A field or method of a null object (spec/ir.md, "Objects").
    pub const NULL_RECEIVER: &str = "null receiver";
    /// `as` of an object that is not an instance of the type.
    pub const INVALID_CAST: &str = "invalid cast";
    /// `dynmethod` of a selector the object's class has no method for.
    pub const METHOD_NOT_FOUND: &str = "method not found";

    /// An indirect call through a value that is not a function of the call's signature
    /// (native code checks only null).
    pub fn bad_function_pointer(addr: u64) -> String {
        format!("bad function pointer 0x{addr:x}")
    }

    /// A call made at the call depth limit `limit` (every back end, at the same call).
    pub fn stack_overflow(limit: usize) -> String {
        format!("stack overflow (call depth limit {limit})")
    }

    /// Native code only: a call whose callee's frame would not fit in what is left of the
    /// native stack of its thread (before the call depth limit, when one is set).
    pub const NATIVE_STACK_EXHAUSTED: &str = "stack overflow (native stack exhausted)";

    /// A call of an `extern` function the back end cannot provide.
    pub fn unknown_extern(name: &str) -> String {
        format!("unknown extern function \"{name}\"")
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The entry function returned (or the program called `exit`): the exit code.
    Exited(i32),
    /// The program trapped.
    Trapped {
        /// The trap kind, as spelled in [`trap_kinds`] (or a back end's own resource kinds,
        /// such as the interpreter's "fuel exhausted").
        kind: String,
        /// The whole one-line report: `trap: <kind> in @f ^b, instruction N (op)`.
        message: String,
    },
}

impl Outcome {
    /// The process exit code for this outcome: the program's own, or [`EXIT_TRAP`].
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Exited(c) => *c,
            Outcome::Trapped { .. } => EXIT_TRAP,
        }
    }
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The entry function: an export name (`main` by default).
    pub entry: String,
    /// At most this many executed instructions, for back ends that count them (the
    /// interpreter: running out is the trap "fuel exhausted"); native code ignores it.
    pub fuel: Option<u64>,
    /// The call depth limit (at least 1): a call made while this many activations are live
    /// is the trap [`trap_kinds::stack_overflow`], at the same call in every back end. `None`
    /// (the default): native code is limited by its stack alone (the trap
    /// [`trap_kinds::NATIVE_STACK_EXHAUSTED`]), the interpreter by [`DEFAULT_INTERP_DEPTH`].
    pub max_depth: Option<usize>,
    /// Native code compiled in this process: append each function's address, size and name
    /// to `/tmp/perf-PID.map`, for profilers (spec/backends.md, "Profiling JIT code").
    pub perf_map: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            entry: "main".into(),
            fuel: None,
            max_depth: None,
            perf_map: false,
        }
    }
}

/// An error of a back end: the module cannot be compiled or run (as opposed to a program that
/// runs and traps, which is an [`Outcome`]). Renders in one line.
#[derive(Debug, Error)]
pub enum BackendError {
    /// The module uses something this back end does not handle.
    #[error("{place}: unsupported by the {backend} back end: {what}")]
    Unsupported {
        /// The back end's name.
        backend: &'static str,
        /// Where: `@func ^block, instruction N (opcode)`, or a definition, or `module`.
        place: String,
        /// What is not supported.
        what: String,
    },
    /// The entry function is missing or has a signature the back end cannot call.
    #[error("entry function: {0}")]
    Entry(String),
    /// The module is not one the verifier accepts (the back end noticed).
    #[error("malformed module: {0}")]
    Malformed(String),
    /// The code generator failed (its message, with the place when known).
    #[error("code generation failed: {0}")]
    Codegen(String),
    /// No system linker could be run.
    #[error("no C compiler to link with: {0}")]
    NoLinker(String),
    /// The system linker ran and failed.
    #[error("linking the executable failed: {0}")]
    Link(String),
    /// An I/O error (temporary files, the linker's output).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A back end that runs a module.
pub trait Backend {
    /// The back end's name, as the CLI spells it (`interp`, `jit`).
    fn name(&self) -> &'static str;

    /// Runs the entry function of `module` (linked, verified) and reports how it ended.
    ///
    /// Output of the program (`putchar`) goes to the process's standard output. A back end
    /// that runs native code in the calling process may end that process on a trap (after
    /// printing the trap line to standard error, with exit code [`EXIT_TRAP`]) or on
    /// `exit(n)`; see its documentation.
    fn run(&self, module: &Module, opts: &RunOptions) -> Result<Outcome, BackendError>;

    /// Whether it runs NOIR procs as they are. A back end that does not (native code) takes
    /// modules whose procs were lowered first, by `irkit_noir::lower_procs`, an explicit step
    /// of the pipeline that whoever drives the back end runs (the CLI does); given a proc, it
    /// reports it as unsupported.
    fn runs_procs(&self) -> bool {
        true
    }

    /// Opens a [`Session`] with `opts`' limits (its `entry` is not used). A back end without
    /// sessions reports [`BackendError::Unsupported`].
    fn session(&self, opts: &RunOptions) -> Result<Box<dyn Session>, BackendError> {
        let _ = opts;
        Err(BackendError::Unsupported {
            backend: self.name(),
            place: "module".into(),
            what: "sessions".into(),
        })
    }
}

/// A scalar value passed to, or returned by, a function called through a [`Session`]. Floats
/// are carried as their bits, so NaN payloads cross the boundary unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Val {
    /// `i1`.
    I1(bool),
    /// `i8`.
    I8(u8),
    /// `i16`.
    I16(u16),
    /// `i32`.
    I32(u32),
    /// `i64`.
    I64(u64),
    /// `f32`, as its bits.
    F32(u32),
    /// `f64`, as its bits.
    F64(u64),
    /// `ptr`: an address of the back end's own address space.
    Ptr(u64),
    /// A 128-bit vector (any `vec T N` of 16 bytes: `vec i32 4`, `vec f64 2`, …), as its
    /// bytes in memory order (lane 0 first, each lane little-endian). Vectors of other sizes
    /// do not cross a session's boundary.
    V128([u8; 16]),
}

/// How one call through a [`Session`] ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// The function returned: its result's scalar leaves in field order (none for `void`, one
    /// for a scalar, each field of a `struct` result in turn).
    Returned(Vec<Val>),
    /// The call trapped. The session stays usable: the state the call changed before the
    /// trap (memory, globals) stays changed, as in WebAssembly.
    Trapped {
        /// The trap kind, as spelled in [`trap_kinds`] (or the text of a `trap` that names
        /// its kind).
        kind: String,
        /// The whole one-line report: `trap: <kind> in @f ^b, instruction N (op)`.
        message: String,
    },
    /// The program called C's `exit(n)`. The session stays usable.
    Exited(i32),
}

/// A live program: instantiated once, then its exported functions called many times, its
/// state (globals, memory, heap) kept from one call to the next (spec/backends.md,
/// "Sessions").
pub trait Session {
    /// The live program, as last given to [`Session::load`] (an empty module before).
    fn module(&self) -> &Module;

    /// Makes `module` (linked, verified) the live program. The first load instantiates it
    /// (globals initialized, as [`Backend::run`] does before calling the entry). A later load
    /// takes a module that **extends** the live one: every definition of the live module is
    /// still there, unchanged, at the same instruction (`Inst`), and only new definitions are
    /// appended (`irkit-link` builds such a module). The state of the live definitions is
    /// kept; new globals are initialized. A module that does not extend the live one is
    /// refused ([`BackendError::Malformed`]) and the session is unchanged.
    fn load(&mut self, module: Module) -> Result<(), BackendError>;

    /// Extends the live program in place: `append` is given the live module (an empty one
    /// before the first load) and appends to it what an extending module of [`Session::load`]
    /// adds (new definitions after the live ones, new `export`s of live definitions), changing
    /// nothing else, and answers `true`; the session then loads the additions as `load` loads
    /// an extension, without copying the live module or comparing it with a copy, so that a
    /// load costs what it adds (`irkit_link::extend_live` is such an `append`). Answering
    /// `false`, `append` refuses: it leaves the live instructions unchanged and what it added
    /// unreachable (removed definitions, unused types and constants), the session loads
    /// nothing and answers `Ok(false)`. An error of the load is as `load`'s (the additions are
    /// then removed). The default appends to a copy and loads it with `load`.
    fn load_in_place(
        &mut self,
        append: &mut dyn FnMut(&mut Module) -> bool,
    ) -> Result<bool, BackendError> {
        let mut m = self.module().clone();
        if !append(&mut m) {
            return Ok(false);
        }
        self.load(m).map(|()| true)
    }

    /// Calls the function exported as `export` with `args`, which must match its parameters
    /// in number and scalar type (else [`BackendError::Entry`]); parameters and results are
    /// scalars, or `struct`s of scalars for results.
    fn call(&mut self, export: &str, args: &[Val]) -> Result<Call, BackendError>;
}

/// A back end that compiles a module to a relocatable object file.
pub trait CodeGen {
    /// The back end's name.
    fn name(&self) -> &'static str;

    /// Compiles `module` (linked, verified) to the bytes of an object file for the host, whose
    /// C-callable `main` runs the entry function exported as `opts.entry` and returns its exit
    /// code, with the call depth limit `opts.max_depth` (the rest of [`RunOptions`] is for
    /// runs).
    fn emit_object(&self, module: &Module, opts: &RunOptions) -> Result<Vec<u8>, BackendError>;

    /// Compiles `module` and links it into the executable `out` (with the system's C compiler
    /// or linker), its `main` as [`CodeGen::emit_object`]'s. Intermediate files are the
    /// implementation's business and never outlive the call.
    fn build_executable(
        &self,
        module: &Module,
        opts: &RunOptions,
        out: &std::path::Path,
    ) -> Result<(), BackendError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(Outcome::Exited(3).exit_code(), 3);
        let t = Outcome::Trapped {
            kind: trap_kinds::TRAP.into(),
            message: "trap: trap executed".into(),
        };
        assert_eq!(t.exit_code(), EXIT_TRAP);
    }

    #[test]
    fn errors_render_in_one_line() {
        let e = BackendError::Unsupported {
            backend: "jit",
            place: "@f ^entry, instruction 0 (frem)".into(),
            what: "x".into(),
        };
        assert!(!e.to_string().contains('\n'));
    }
}
