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
    /// Declares the runtime's functions in `cl`.
    pub(crate) fn declare<M: ClModule>(cl: &mut M) -> Result<Runtime, BackendError> {
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
            state: words(cl, "irkit.rt.state")?,
        })
    }
}

/// Offset of the activation count in [`Runtime::state`].
pub(crate) const DEPTH: i32 = 0;

/// Offset of the stack limit in [`Runtime::state`].
pub(crate) const STACK_LIMIT: i32 = 8;

/// Declares and defines two zeroed, writable, local 8-byte words.
fn words<M: ClModule>(cl: &mut M, name: &str) -> Result<DataId, BackendError> {
    let id = cl
        .declare_data(name, Linkage::Local, true, false)
        .map_err(|e| cl_err("runtime", e))?;
    let mut d = DataDescription::new();
    d.set_align(8);
    d.define_zeroinit(16);
    cl.define_data(id, &d).map_err(|e| cl_err("runtime", e))?;
    Ok(id)
}
