//! The small runtime every module gets, as symbols: the routines generated into it (their
//! bodies are in `routines.rs`), the C functions the generated code imports, and the two
//! words of the call depth and stack checks (spec/backends.md, "Call depth and the native
//! stack"): the number of live IR activations, and the lowest stack address a call may leave
//! to its callee, both set by the entry wrapper.

use cranelift_codegen::ir::{AbiParam, TrapCode, types};
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module as ClModule};
use irkit_backend::BackendError;

use crate::error::cl_err;
use crate::types::PTR;

/// The trap code of the `trap` instruction that follows every call of the trap routine (never
/// reached: the routine does not return).
pub(crate) const UNREACHABLE_AFTER_EXIT: TrapCode = TrapCode::unwrap_user(1);

/// Stack kept free below the stack limit: for the frame of a callee beyond its `stackalloc`
/// objects (spills, saved registers, outgoing arguments), C library functions called from IR
/// code, and the trap routine (which calls `write` and `exit`).
pub(crate) const STACK_MARGIN: u64 = 256 * 1024;

/// The stack of an executable's main thread assumed when `getrlimit` fails.
pub(crate) const DEFAULT_STACK: u64 = 8 << 20;

/// The most of an executable's main-thread stack used (with an unlimited `ulimit -s`).
pub(crate) const MAX_MAIN_STACK: u64 = 1 << 30;

/// How much native stack the program may use below the entry wrapper's frame.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StackBudget {
    /// This many bytes (the JIT, which runs the program on a thread of known stack size).
    Fixed(u64),
    /// Three quarters of the main thread's stack limit (`getrlimit(RLIMIT_STACK)`, at most
    /// 1 GiB; Linux lets arguments and environment take up to a quarter of it), less
    /// [`STACK_MARGIN`]: executables.
    MainThread,
}

/// The functions generated code calls that are not IR functions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Runtime {
    /// `irkit.rt.trap(msg: ptr, len: i64)`: prints and exits with [`EXIT_TRAP`].
    pub(crate) trap: FuncId,
    /// C `ssize_t write(int, const void *, size_t)`.
    pub(crate) write: FuncId,
    /// C `void exit(int)`.
    pub(crate) exit: FuncId,
    /// C `int fflush(FILE *)`.
    pub(crate) fflush: FuncId,
    /// C `double fmod(double, double)`.
    pub(crate) fmod: FuncId,
    /// C `float fmodf(float, float)`.
    pub(crate) fmodf: FuncId,
    /// C `int getrlimit(int, struct rlimit *)`.
    pub(crate) getrlimit: FuncId,
    /// C `void (*signal(int, void (*)(int)))(int)`.
    pub(crate) signal: FuncId,
    /// C `void _exit(int)` (async-signal-safe, unlike `exit`).
    pub(crate) exit_now: FuncId,
    /// `irkit.rt.fault(sig: i32)`: the SIGSEGV/SIGBUS handler of executables, which prints the
    /// memory-fault trap line and exits with [`EXIT_TRAP`].
    pub(crate) fault: FuncId,
    /// `irkit.rt.state`, two `i64` words: at [`DEPTH`], the number of live IR activations; at
    /// [`STACK_LIMIT`], the lowest stack pointer a call may leave to its callee's `stackalloc`
    /// objects (0 until the entry wrapper sets it). One object: one address per check.
    pub(crate) state: DataId,
}

impl Runtime {
    /// Declares the runtime's functions in `cl`, and the state words: `session` is `None` for
    /// a run or an object file (two words, defined), `Some(define)` in a session (the
    /// [`SESSION_STATE`] bytes, defined only by its first lowering: later ones extend the same
    /// Cranelift module).
    pub(crate) fn declare<M: ClModule>(
        cl: &mut M,
        session: Option<bool>,
    ) -> Result<Runtime, BackendError> {
        let mut decl = |name: &str, linkage, params: &[types::Type], ret: Option<types::Type>| {
            let mut sig = cl.make_signature();
            sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
            sig.returns.extend(ret.map(AbiParam::new));
            cl.declare_function(name, linkage, &sig)
                .map_err(|e| cl_err("runtime", e))
        };
        Ok(Runtime {
            trap: decl("irkit.rt.trap", Linkage::Local, &[PTR, types::I64], None)?,
            write: decl(
                "write",
                Linkage::Import,
                &[types::I32, PTR, types::I64],
                Some(types::I64),
            )?,
            exit: decl("exit", Linkage::Import, &[types::I32], None)?,
            fflush: decl("fflush", Linkage::Import, &[PTR], Some(types::I32))?,
            fmod: decl(
                "fmod",
                Linkage::Import,
                &[types::F64, types::F64],
                Some(types::F64),
            )?,
            fmodf: decl(
                "fmodf",
                Linkage::Import,
                &[types::F32, types::F32],
                Some(types::F32),
            )?,
            getrlimit: decl(
                "getrlimit",
                Linkage::Import,
                &[types::I32, PTR],
                Some(types::I32),
            )?,
            signal: decl("signal", Linkage::Import, &[types::I32, PTR], Some(PTR))?,
            exit_now: decl("_exit", Linkage::Import, &[types::I32], None)?,
            fault: decl("irkit.rt.fault", Linkage::Local, &[types::I32], None)?,
            state: match session {
                None => words(cl, "irkit.rt.state", 16, true)?,
                Some(define) => words(cl, "irkit.rt.state", SESSION_STATE, define)?,
            },
        })
    }
}

/// Offset of the activation count in [`Runtime::state`].
pub(crate) const DEPTH: i32 = 0;

/// Offset of the stack limit in [`Runtime::state`].
pub(crate) const STACK_LIMIT: i32 = 8;

/// Session mode only (spec/backends.md, "Sessions"): offset of the word saying how the
/// current call stopped: 0 while it runs (or returned), [`STOPPED_TRAP`] or [`STOPPED_EXIT`].
/// Every call site checks it after the call and returns at once when it is set.
pub(crate) const STOP: i32 = 16;

/// Session mode: offset of the trap line's address (a trap), written with [`STOP`].
pub(crate) const STOP_MSG: i32 = 24;

/// Session mode: offset of the trap line's length (a trap) or the exit code (`exit`).
pub(crate) const STOP_ARG: i32 = 32;

/// [`STOP`] after a trap.
pub(crate) const STOPPED_TRAP: i64 = 1;

/// [`STOP`] after `exit(n)`.
pub(crate) const STOPPED_EXIT: i64 = 2;

/// Session mode: the least stack an indirect call reserves for its callee's `stackalloc`
/// objects, so that functions of its type loaded later with objects up to this size may be
/// called through it (larger ones are refused while such a call site is live).
pub(crate) const SESSION_INDIRECT_RESERVE: u64 = 64 * 1024;

/// The size of the state in session mode.
pub(crate) const SESSION_STATE: usize = 40;

/// Declares `size` zeroed, writable, local bytes of 8-byte words, and defines them if
/// `define`.
fn words<M: ClModule>(
    cl: &mut M,
    name: &str,
    size: usize,
    define: bool,
) -> Result<DataId, BackendError> {
    let id = cl
        .declare_data(name, Linkage::Local, true, false)
        .map_err(|e| cl_err("runtime", e))?;
    if define {
        let mut d = DataDescription::new();
        d.set_align(8);
        d.define_zeroinit(size);
        cl.define_data(id, &d).map_err(|e| cl_err("runtime", e))?;
    }
    Ok(id)
}
