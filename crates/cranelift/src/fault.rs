//! A memory fault in JIT-compiled code ends the run as a trap line, not as a signal; so does a
//! failed check that is a machine trap (spec/backends.md, "Checks as machine traps": SIGILL or
//! SIGFPE at one of the program's trap sites, `crate::sites`, prints that check's line).
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

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set by the handler's first entry.
static ENTERED: AtomicBool = AtomicBool::new(false);

/// The running program's tables, while a [`Guard`] for them is installed: the address of its
/// `irkit.rt.memories` table (0 for none), its number of entries, and the address of its
/// `irkit.rt.sites` table (0 for none).
static MEMORIES: AtomicUsize = AtomicUsize::new(0);
static MEMORY_COUNT: AtomicUsize = AtomicUsize::new(0);
static SITES: AtomicUsize = AtomicUsize::new(0);

/// Where a compiled program keeps what the fault handler reads: its guarded linear memories
/// (`crate::memories`) and its trap sites (`crate::sites`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FaultTables {
    /// The address of `irkit.rt.memories` (one base per memory, 0 until reserved), or 0.
    pub(crate) memories: usize,
    /// Its number of entries.
    pub(crate) count: usize,
    /// The address of `irkit.rt.sites` (a count, then `crate::sites::SITE_BYTES` entries),
    /// or 0.
    pub(crate) sites: usize,
}

/// Installs the handler for SIGSEGV and SIGBUS (and SIGILL and SIGFPE, for a program with trap
/// sites) until dropped.
pub(crate) struct Guard {
    /// The signals handled and their dispositions before: the first `handled` entries.
    previous: [(libc::c_int, libc::sigaction); 4],
    handled: usize,
    installed: bool,
}

impl Guard {
    /// Installs the handler (a failure leaves the signals as they were), which reports a
    /// fault inside one of `tables`' memories' reservations at its access, and a machine trap
    /// at one of its sites as that check's trap.
    pub(crate) fn install(tables: Option<FaultTables>) -> Guard {
        let t = tables.unwrap_or_default();
        let sites = if crate::sites::PC_IN_CONTEXT.is_some() {
            t.sites
        } else {
            0
        };
        MEMORY_COUNT.store(t.count, Ordering::SeqCst);
        SITES.store(sites, Ordering::SeqCst);
        MEMORIES.store(t.memories, Ordering::SeqCst);
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
                (libc::SIGILL, std::mem::zeroed::<libc::sigaction>()),
                (libc::SIGFPE, std::mem::zeroed::<libc::sigaction>()),
            ];
            // Machine traps only for a program with trap sites.
            let handled = if sites == 0 { 2 } else { 4 };
            let mut installed = true;
            for (sig, old) in &mut previous[..handled] {
                installed &= libc::sigaction(*sig, &action, old) == 0;
            }
            Guard {
                previous,
                handled,
                installed,
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        MEMORIES.store(0, Ordering::SeqCst);
        SITES.store(0, Ordering::SeqCst);
        if !self.installed {
            return;
        }
        for (sig, old) in &self.previous[..self.handled] {
            // SAFETY: restores the disposition `install` read.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
    }
}

/// The trap line of the site holding the program counter in `ctx`, if any.
fn site_line(ctx: *mut libc::c_void) -> Option<&'static [u8]> {
    let sites = SITES.load(Ordering::SeqCst);
    let at = crate::sites::PC_IN_CONTEXT?;
    if sites == 0 || ctx.is_null() {
        return None;
    }
    // SAFETY: `ctx` is the handler's `ucontext_t`; the table is the finalized data of the
    // program running now (the guard is dropped before its code is freed): a count, then
    // that many entries of five words.
    unsafe {
        let pc = (ctx as *const u8)
            .add(at as usize)
            .cast::<usize>()
            .read_unaligned();
        let n = (sites as *const u64).read() as usize;
        for k in 0..n {
            let e = (sites + 8 + k * crate::sites::SITE_BYTES as usize) as *const usize;
            let (func, start, end) = (e.read(), e.add(1).read(), e.add(2).read());
            if pc.wrapping_sub(func).wrapping_sub(start) < end.wrapping_sub(start) {
                let (line, len) = (e.add(3).read(), e.add(4).read());
                return Some(std::slice::from_raw_parts(line as *const u8, len));
            }
        }
    }
    None
}

/// The trap line of a guarded access that faulted at `addr` with the program counter in
/// `ctx`, if `addr` is inside a reservation of the running program's memories: the access's
/// own line from the sites table, else one naming no instruction.
fn guarded_line(addr: usize, ctx: *mut libc::c_void) -> Option<&'static [u8]> {
    let table = MEMORIES.load(Ordering::SeqCst);
    if table == 0 {
        return None;
    }
    let count = MEMORY_COUNT.load(Ordering::SeqCst);
    let reservation = crate::guard::RESERVATION as usize;
    // SAFETY: the table is the finalized data of the program running now, `count` words.
    let inside = (0..count).any(|k| {
        let base = unsafe { (table as *const usize).add(k).read() };
        base != 0 && addr.wrapping_sub(base) < reservation
    });
    inside.then(|| site_line(ctx).unwrap_or(OOB_LINE))
}

/// The line of a fault inside a reservation that no site covers.
const OOB_LINE: &[u8] =
    b"trap: out of bounds memory access (in the memory's guard region; `ir-run --interp` reports the instruction)\n";

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
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
    let line = match sig {
        libc::SIGILL | libc::SIGFPE => site_line(ctx),
        _ => guarded_line(addr, ctx),
    };
    if code > 0
        && let Some(line) = line
    {
        // SAFETY: write and _exit are async-signal-safe; `line` is the program's data.
        unsafe {
            libc::write(2, line.as_ptr().cast(), line.len());
            libc::_exit(irkit_backend::EXIT_TRAP);
        }
    }
    if matches!(sig, libc::SIGILL | libc::SIGFPE) {
        // Not a check's trap: the signal's default action, as without the handler.
        // SAFETY: `signal` and `raise` are async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return;
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
