//! The small runtime every module gets, as symbols: the routines generated into it (their
//! bodies are in `routines.rs`), the C functions the generated code imports, the session's
//! stop words, and each thread's own state for the stack and call depth checks
//! (spec/backends.md, "Call depth and the native stack"): the lowest stack address a call may
//! leave to its callee, found from the thread's own stack bounds the first time the thread runs
//! a check, and the number of live IR activations when a call depth limit is set.

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

/// The most a function's `stackalloc` objects may take for calls of it to go unchecked when
/// it calls no IR function (a small leaf: `crate::lower::Frames::small_leaves`): its frame
/// then stays within [`STACK_MARGIN`] below its caller's, whose call was checked.
pub(crate) const SMALL_LEAF_FRAME: u64 = 16 * 1024;

/// The main thread's stack assumed when its bounds cannot be read (`pthread_getattr_np` reads
/// `/proc/self/maps` for the main thread) and `getrlimit` fails too.
pub(crate) const DEFAULT_STACK: u64 = 8 << 20;

/// The most of one thread's stack a program uses (a main thread with an unlimited `ulimit -s`
/// reports a stack reaching down to the next mapping).
pub(crate) const MAX_STACK_USE: u64 = 1 << 30;

/// Offset of the stack limit in a thread's state: the lowest stack pointer a call may leave
/// to its callee's `stackalloc` objects; [`UNKNOWN_LIMIT`] until the thread's first check.
pub(crate) const LIMIT: i32 = 0;

/// Offset of the number of live IR activations in a thread's state (counted only when a call
/// depth limit is set).
pub(crate) const DEPTH: i32 = 8;

/// The size of a thread's state.
pub(crate) const THREAD_STATE: usize = 16;

/// A thread's stack limit before its first check: above every stack address, so the first
/// check of every thread takes the slow path, which finds the thread's real limit. Adding a
/// frame (at most the 1 GiB `lower::func::MAX_FRAME`) to it does not wrap.
pub(crate) const UNKNOWN_LIMIT: u64 = 1 << 63;

/// How generated code finds the running thread's state.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Threads {
    /// A thread-local data object of the module (object files: the linker makes the access a
    /// load from the thread pointer in an executable).
    Tls,
    /// Functions of the host process ([`crate::thread`]): the JIT, which cannot define
    /// thread-local data.
    Host,
}

/// Where the running thread's state is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ThreadState {
    /// `irkit.rt.thread`, thread-local ([`Threads::Tls`]).
    Tls(DataId),
    /// `irkit.rt.thread() -> ptr`, the host's ([`Threads::Host`]).
    Host(FuncId),
}

/// The functions generated code calls that are not IR functions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Runtime {
    /// `irkit.rt.trap(msg: ptr, len: i64)`: prints and exits with
    /// [`EXIT_TRAP`](irkit_backend::EXIT_TRAP).
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
    /// C `int sigaction(int, const struct sigaction *, struct sigaction *)`.
    pub(crate) sigaction: FuncId,
    /// C `int raise(int)`.
    pub(crate) raise: FuncId,
    /// C `void (*signal(int, void (*)(int)))(int)`.
    pub(crate) signal: FuncId,
    /// C `pthread_t pthread_self(void)`.
    pub(crate) pthread_self: FuncId,
    /// `int pthread_getattr_np(pthread_t, pthread_attr_t *)` (glibc, musl).
    pub(crate) pthread_getattr_np: FuncId,
    /// `int pthread_attr_getstack(const pthread_attr_t *, void **, size_t *)`.
    pub(crate) pthread_attr_getstack: FuncId,
    /// `int pthread_attr_destroy(pthread_attr_t *)`.
    pub(crate) pthread_attr_destroy: FuncId,
    /// C `void _exit(int)` (async-signal-safe, unlike `exit`).
    pub(crate) exit_now: FuncId,
    /// `irkit.rt.fault(sig: i32, info: ptr, context: ptr)`: the SIGSEGV/SIGBUS handler of
    /// executables, which prints the memory-fault trap line and exits with
    /// [`EXIT_TRAP`](irkit_backend::EXIT_TRAP) (a signal the program raised itself ends it as the
    /// signal's default action does).
    pub(crate) fault: FuncId,
    /// `irkit.rt.state`: the session's stop words ([`STOP`], [`STOP_MSG`], [`STOP_ARG`]); one
    /// unused word outside sessions.
    pub(crate) state: DataId,
    /// The running thread's state ([`LIMIT`], [`DEPTH`]).
    pub(crate) thread: ThreadState,
    /// `irkit.rt.stack_slow(state: ptr, sp: i64, frame: i64) -> i8`: the slow path of a stack
    /// check that failed: finds the thread's limit on its first check, then says whether
    /// `frame` bytes fit below `sp` (1) or the stack is exhausted (0). Generated for
    /// [`Threads::Tls`], the host's for [`Threads::Host`].
    pub(crate) stack_slow: FuncId,
    /// `irkit.rt.mem_grow(record: ptr, pages: i32) -> i32`: `mem_grow` (`crate::memories`).
    pub(crate) mem_grow: FuncId,
    /// C `void *calloc(size_t, size_t)`.
    pub(crate) calloc: FuncId,
    /// C `void *memcpy(void *, const void *, size_t)`.
    pub(crate) memcpy: FuncId,
    /// C `void free(void *)`.
    pub(crate) free: FuncId,
    /// `irkit.rt.fault_once`: one word, set by the fault handler on entry, so a fault while it
    /// flushes C's `stdout` ends the program at once.
    pub(crate) fault_once: DataId,
}

impl Runtime {
    /// Declares the runtime's functions in `cl`, and the state words: `session` is `None` for
    /// a run or an object file (two words, defined), `Some(define)` in a session (the
    /// [`SESSION_STATE`] bytes, defined only by its first lowering: later ones extend the same
    /// Cranelift module).
    pub(crate) fn declare<M: ClModule>(
        cl: &mut M,
        session: Option<bool>,
        threads: Threads,
    ) -> Result<Runtime, BackendError> {
        let state = match session {
            None => words(cl, "irkit.rt.state", 8, true)?,
            Some(define) => words(cl, "irkit.rt.state", SESSION_STATE, define)?,
        };
        let fault_once = words(
            cl,
            "irkit.rt.fault_once",
            8,
            session.is_none_or(|first| first),
        )?;
        let tls = match threads {
            Threads::Tls => Some(thread_words(cl)?),
            Threads::Host => None,
        };
        let mut decl = |name: &str, linkage, params: &[types::Type], ret: Option<types::Type>| {
            declare_fn(cl, name, linkage, params, ret)
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
            sigaction: decl(
                "sigaction",
                Linkage::Import,
                &[types::I32, PTR, PTR],
                Some(types::I32),
            )?,
            raise: decl("raise", Linkage::Import, &[types::I32], Some(types::I32))?,
            signal: decl("signal", Linkage::Import, &[types::I32, PTR], Some(PTR))?,
            pthread_self: decl("pthread_self", Linkage::Import, &[], Some(PTR))?,
            pthread_getattr_np: decl(
                "pthread_getattr_np",
                Linkage::Import,
                &[PTR, PTR],
                Some(types::I32),
            )?,
            pthread_attr_getstack: decl(
                "pthread_attr_getstack",
                Linkage::Import,
                &[PTR, PTR, PTR],
                Some(types::I32),
            )?,
            pthread_attr_destroy: decl(
                "pthread_attr_destroy",
                Linkage::Import,
                &[PTR],
                Some(types::I32),
            )?,
            exit_now: decl("_exit", Linkage::Import, &[types::I32], None)?,
            fault: decl(
                "irkit.rt.fault",
                Linkage::Local,
                &[types::I32, PTR, PTR],
                None,
            )?,
            state,
            thread: match tls {
                Some(id) => ThreadState::Tls(id),
                None => {
                    ThreadState::Host(decl("irkit.rt.thread", Linkage::Import, &[], Some(PTR))?)
                }
            },
            stack_slow: decl(
                "irkit.rt.stack_slow",
                match threads {
                    Threads::Tls => Linkage::Local,
                    Threads::Host => Linkage::Import,
                },
                &[PTR, types::I64, types::I64],
                Some(types::I8),
            )?,
            mem_grow: decl(
                "irkit.rt.mem_grow",
                Linkage::Local,
                &[PTR, types::I32],
                Some(types::I32),
            )?,
            calloc: decl(
                "calloc",
                Linkage::Import,
                &[types::I64, types::I64],
                Some(PTR),
            )?,
            memcpy: decl(
                "memcpy",
                Linkage::Import,
                &[PTR, PTR, types::I64],
                Some(PTR),
            )?,
            free: decl("free", Linkage::Import, &[PTR], None)?,
            fault_once,
        })
    }
}

/// Declares the runtime function `name` (a generated routine or a C function) with the
/// parameters `params` and the result `ret`, if any.
pub(crate) fn declare_fn<M: ClModule>(
    cl: &mut M,
    name: &str,
    linkage: Linkage,
    params: &[types::Type],
    ret: Option<types::Type>,
) -> Result<FuncId, BackendError> {
    let mut sig = cl.make_signature();
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns.extend(ret.map(AbiParam::new));
    cl.declare_function(name, linkage, &sig)
        .map_err(|e| cl_err("runtime", e))
}

/// Session mode only (spec/backends.md, "Sessions"): offset of the word saying how the
/// current call stopped: 0 while it runs (or returned), [`STOPPED_TRAP`] or [`STOPPED_EXIT`].
/// Every call site checks it after the call and returns at once when it is set.
pub(crate) const STOP: i32 = 0;

/// Session mode: offset of the trap line's address (a trap), written with [`STOP`].
pub(crate) const STOP_MSG: i32 = 8;

/// Session mode: offset of the trap line's length (a trap) or the exit code (`exit`).
pub(crate) const STOP_ARG: i32 = 16;

/// [`STOP`] after a trap.
pub(crate) const STOPPED_TRAP: i64 = 1;

/// [`STOP`] after `exit(n)`.
pub(crate) const STOPPED_EXIT: i64 = 2;

/// Session mode: the least stack an indirect call reserves for its callee's `stackalloc`
/// objects, so that functions of its type loaded later with objects up to this size may be
/// called through it (larger ones are refused while such a call site is live).
pub(crate) const SESSION_INDIRECT_RESERVE: u64 = 64 * 1024;

/// The size of the state in session mode.
pub(crate) const SESSION_STATE: usize = 24;

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

/// Declares and defines `irkit.rt.thread`: a thread-local [`THREAD_STATE`]-byte object whose
/// stack limit starts as [`UNKNOWN_LIMIT`] in every thread.
fn thread_words<M: ClModule>(cl: &mut M) -> Result<DataId, BackendError> {
    let id = cl
        .declare_data("irkit.rt.thread", Linkage::Local, true, true)
        .map_err(|e| cl_err("runtime", e))?;
    let mut init = vec![0u8; THREAD_STATE];
    init[LIMIT as usize..LIMIT as usize + 8].copy_from_slice(&UNKNOWN_LIMIT.to_ne_bytes());
    let mut d = DataDescription::new();
    d.set_align(8);
    d.define(init.into_boxed_slice());
    cl.define_data(id, &d).map_err(|e| cl_err("runtime", e))?;
    Ok(id)
}
