//! The JIT's side of each thread's state (spec/backends.md, "Call depth and the native
//! stack"): `cranelift-jit` cannot define thread-local data, so JIT code asks the host for the
//! running thread's state (`irkit.rt.thread`) and for the slow path of a stack check
//! (`irkit.rt.stack_slow`), which object files generate themselves (`routines.rs`). The two
//! agree: a thread's stack limit is the lowest address of its own stack plus the margin, found
//! the first time the thread runs a check, so IR code runs on any thread (the program's own
//! thread, a `pthread_create`d worker, a session's caller) against that thread's stack.

#![allow(unsafe_code)]

use std::cell::UnsafeCell;

use crate::runtime::{
    DEFAULT_STACK, LIMIT, MAX_STACK_USE, STACK_MARGIN, THREAD_STATE, UNKNOWN_LIMIT,
};

thread_local! {
    /// This thread's state: the stack limit at [`LIMIT`], the activation count at
    /// [`crate::runtime::DEPTH`].
    static STATE: UnsafeCell<[u64; THREAD_STATE / 8]> = const {
        UnsafeCell::new([UNKNOWN_LIMIT, 0])
    };
}

/// `irkit.rt.thread() -> ptr`: the running thread's state, valid while the thread lives.
pub(crate) extern "C" fn thread_state() -> *mut u64 {
    STATE.with(|s| s.get().cast())
}

/// `irkit.rt.stack_slow(state, sp, frame) -> i8`: on the thread's first check its limit
/// becomes [`stack_limit`]; then whether `sp` leaves `frame` bytes above it.
pub(crate) extern "C" fn stack_slow(state: *mut u64, sp: u64, frame: u64) -> u8 {
    // SAFETY: `state` is what `thread_state` returned on this thread (generated code passes
    // it back unchanged), so it points to this thread's live, aligned state words, which
    // nothing else accesses while this runs.
    let limit = unsafe { &mut *state.add(LIMIT as usize / 8) };
    if *limit == UNKNOWN_LIMIT {
        *limit = stack_limit(sp);
    }
    u8::from(sp >= limit.saturating_add(frame))
}

/// The stack limit of the running thread, whose stack pointer is about `sp`: the lowest
/// address of its stack plus [`STACK_MARGIN`], at most [`MAX_STACK_USE`] below `sp`; when the
/// bounds cannot be read, three quarters of `RLIMIT_STACK` below `sp` less the margin.
fn stack_limit(sp: u64) -> u64 {
    match stack_low() {
        Some(low) => (low + STACK_MARGIN).max(sp.saturating_sub(MAX_STACK_USE)),
        None => {
            let stack = main_stack().min(MAX_STACK_USE);
            sp.saturating_sub((stack - stack / 4).saturating_sub(STACK_MARGIN))
        }
    }
}

/// The lowest address of the running thread's stack.
fn stack_low() -> Option<u64> {
    // SAFETY: `attr` is initialized by `pthread_getattr_np` before it is read and destroyed
    // once; `addr` and `size` are written by `pthread_attr_getstack`.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let r = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (r == 0 && !addr.is_null()).then_some(addr as u64)
    }
}

/// The stack an executable's main thread has: `RLIMIT_STACK`'s soft limit, [`DEFAULT_STACK`]
/// if it cannot be read, at most [`MAX_STACK_USE`] (unlimited).
pub(crate) fn main_stack() -> u64 {
    // SAFETY: `getrlimit` writes the struct it is given.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } != 0 {
        return DEFAULT_STACK;
    }
    (r.rlim_cur as u64).min(MAX_STACK_USE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_limit_is_found_once_from_its_own_stack() {
        let check = || {
            let state = thread_state();
            let here = 0u8;
            let sp = &here as *const u8 as u64;
            assert_eq!(stack_slow(state, sp, 0), 1, "a shallow frame fits");
            // SAFETY: this thread's state.
            let limit = unsafe { *state };
            assert!(
                limit < sp && sp - limit < MAX_STACK_USE,
                "limit {limit:#x}, sp {sp:#x}"
            );
            assert_eq!(
                stack_slow(state, sp, sp - limit + 1),
                0,
                "too large a frame"
            );
            // SAFETY: as above.
            assert_eq!(unsafe { *state }, limit, "found once");
            limit
        };
        let main = check();
        let worker = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(check)
            .expect("thread")
            .join()
            .expect("joined");
        assert_ne!(main, worker, "each thread has its own limit");
    }
}
