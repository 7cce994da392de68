//! A memory fault in JIT-compiled code ends the run as a trap line, not as a signal.
//!
//! Native code does not check memory accesses (spec/backends.md, "What native code does not
//! check"): a store out of bounds may hit unmapped memory and raise SIGSEGV (or SIGBUS). While
//! JIT code runs ([`Guard`]), a handler turns that into
//!
//! ```text
//! trap: memory fault at 0x10 (native code does not check memory accesses; `ir-run --interp` reports the instruction)
//! ```
//!
//! on standard error and exit code 70, like every other trap, instead of the process dying by
//! the signal, as an executable's handler does (`routines.rs`). The address is the faulting
//! one, given by the kernel; a SIGSEGV or SIGBUS the program sent itself (`raise`, `kill`:
//! `si_code` ≤ 0) is no fault: it gets its default action back and is raised again, so the
//! process ends by the signal as a C program would. Before the line, C's `stdout` is flushed
//! (what the program printed is not lost); the handler runs with the signal unblocked and
//! marks its first entry, so a fault inside that flush enters it again, which writes the line
//! and ends the process at once. Otherwise it formats into a stack buffer and calls `write`
//! and `_exit` only. It runs on the thread's alternate signal stack, which Rust sets up for
//! every thread it starts, so a fault on an exhausted stack is reported too. The previous
//! dispositions come back when the guard is dropped.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the handler's first entry.
static ENTERED: AtomicBool = AtomicBool::new(false);

/// Installs the handler for SIGSEGV and SIGBUS until dropped.
pub(crate) struct Guard {
    previous: [(libc::c_int, libc::sigaction); 2],
    installed: bool,
}

impl Guard {
    /// Installs the handler (a failure leaves the signals as they were).
    pub(crate) fn install() -> Guard {
        // SAFETY: zeroed sigaction structs are valid to fill in; the handler has the
        // SA_SIGINFO signature and only calls async-signal-safe functions.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous = [
                (libc::SIGSEGV, std::mem::zeroed::<libc::sigaction>()),
                (libc::SIGBUS, std::mem::zeroed::<libc::sigaction>()),
            ];
            let mut installed = true;
            for (sig, old) in &mut previous {
                installed &= libc::sigaction(*sig, &action, old) == 0;
            }
            Guard {
                previous,
                installed,
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.installed {
            return;
        }
        for (sig, old) in &self.previous {
            // SAFETY: restores the disposition `install` read.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
    }
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    let again = ENTERED.swap(true, Ordering::SeqCst);
    if !again {
        if code <= 0 {
            // Sent by the program itself: the signal's default action, as in a C program.
            // SAFETY: `signal` and `raise` are async-signal-safe.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            return;
        }
        // SAFETY: flushing may fault if the program broke `stdio`'s state; the handler is then
        // entered again (SA_NODEFER) and ends the process without flushing.
        unsafe {
            libc::fflush(std::ptr::null_mut());
        }
    }
    let mut buf = [0u8; 200];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if n < buf.len() {
                buf[n] = b;
                n += 1;
            }
        }
    };
    put(b"trap: memory fault");
    if code > 0 {
        put(b" at 0x");
        let mut digits = [0u8; 16];
        let mut k = digits.len();
        let mut v = addr;
        loop {
            k -= 1;
            digits[k] = b"0123456789abcdef"[v & 15];
            v >>= 4;
            if v == 0 || k == 0 {
                break;
            }
        }
        put(&digits[k..]);
    }
    put(
        b" (native code does not check memory accesses; `ir-run --interp` reports the instruction)\n",
    );
    // SAFETY: write and _exit are async-signal-safe; `buf[..n]` is initialized.
    unsafe {
        libc::write(2, buf.as_ptr().cast(), n);
        libc::_exit(irkit_backend::EXIT_TRAP);
    }
}
