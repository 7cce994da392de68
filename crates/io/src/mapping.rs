//! Memory-mapped input files, and what happens when one shrinks while it is mapped.
//!
//! A reader maps its input read-only ([`Mapping`]) so that opening a module costs the same at
//! 1 MB and at 1 GB. Another process may truncate the file meanwhile; touching a mapped page
//! past the new end raises `SIGBUS`, which by default kills the process without a word.
//!
//! [`guard_truncation`] (called once by an application, e.g. every `ir-*` tool, before it maps
//! files) installs a `SIGBUS` handler that recognises a fault inside a live mapping, puts a
//! zero page where the file's page was (so the faulting read completes, seeing zeros) and
//! marks the mapping as *changed*. Whoever read from it then asks [`Mapping::changed`] before
//! trusting what it read (the linker does, before it hands out its result): the input is
//! reported as changed while it was read, naming the file, instead of the process dying. A
//! fault outside every live mapping is left to the disposition the handler replaced.
//!
//! The mappings are registered in a fixed table of [`MAX_GUARDED`] slots, readable from the
//! handler without locks or allocation. A file mapped while the table is full is read into
//! memory instead, so no input is ever mapped unguarded once the guard is installed.
//!
//! Without the guard (a library user who does not call [`guard_truncation`]), a mapping works
//! as before and a truncation is the application's signal to handle.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many files can be mapped under the guard at once.
pub const MAX_GUARDED: usize = 4096;

struct Slot {
    /// Start address of the mapping; 0 when the slot is free.
    start: AtomicUsize,
    len: AtomicUsize,
    /// Set by the handler when it replaced a page of this mapping.
    changed: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    changed: AtomicBool::new(false),
};

static SLOTS: [Slot; MAX_GUARDED] = [FREE; MAX_GUARDED];
/// Whether [`guard_truncation`] installed the handler (then mappings must get a slot).
static GUARDED: AtomicBool = AtomicBool::new(false);
/// The system page size, set when the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// A read-only mapping of a whole file, registered with the truncation guard when it is on.
pub struct Mapping {
    map: memmap2::Mmap,
    slot: Option<usize>,
}

impl Mapping {
    /// Maps `file`, or returns `None` when the guard is on and its table is full (the caller
    /// then reads the file into memory).
    pub fn new(file: &std::fs::File) -> std::io::Result<Option<Mapping>> {
        let map = map_file(file)?;
        if !GUARDED.load(Ordering::Acquire) || map.is_empty() {
            return Ok(Some(Mapping { map, slot: None }));
        }
        let start = map.as_ptr() as usize;
        for (i, slot) in SLOTS.iter().enumerate() {
            if slot
                .start
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                // Claimed (usize::MAX matches no address); fill it, then publish the start.
                slot.len.store(map.len(), Ordering::Relaxed);
                slot.changed.store(false, Ordering::Relaxed);
                slot.start.store(start, Ordering::Release);
                return Ok(Some(Mapping { map, slot: Some(i) }));
            }
        }
        Ok(None)
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Whether the file shrank under the mapping and a read saw a page the guard replaced by
    /// zeros: nothing read from it can be trusted.
    pub fn changed(&self) -> bool {
        self.slot
            .is_some_and(|i| SLOTS[i].changed.load(Ordering::Acquire))
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregister before the mapping goes (the field is dropped after this body).
        if let Some(i) = self.slot {
            SLOTS[i].start.store(0, Ordering::Release);
        }
    }
}

/// Maps `file` read-only.
#[allow(unsafe_code)]
fn map_file(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: the mapping is read-only and every byte of it is treated as untrusted input:
    // nothing is assumed about its contents, which are checked (bounds, hashes, bytecheck,
    // index ranges) before use. Another process may still truncate or rewrite the file while
    // it is mapped: a read past the new end faults (see `guard_truncation`), and changed bytes
    // are caught by the hashes wherever a part is validated before use.
    unsafe { memmap2::Mmap::map(file) }
}

/// Installs the `SIGBUS` handler described in the module documentation, once per process
/// (later calls do nothing). Returns the error of `sigaction` if it cannot be installed.
#[cfg(unix)]
pub fn guard_truncation() -> std::io::Result<()> {
    use std::sync::Once;
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| result = handler::install());
    result
}

/// Does nothing where there is no `SIGBUS`.
#[cfg(not(unix))]
pub fn guard_truncation() -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
#[allow(unsafe_code)]
mod handler {
    use super::{GUARDED, PAGE, SLOTS};
    use std::sync::OnceLock;
    use std::sync::atomic::Ordering;

    /// The disposition replaced, restored for a fault that is not ours.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    pub(super) fn install() -> std::io::Result<()> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction is a valid value to fill in, and the handler has the
        // SA_SIGINFO signature. PREVIOUS is set right after; a fault before that finds it
        // empty and falls back to the default disposition.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let _ = PREVIOUS.set(previous);
        }
        GUARDED.store(true, Ordering::Release);
        Ok(())
    }

    /// Async-signal-safe: atomics, `mmap` and `sigaction` only; no allocation, no locks.
    extern "C" fn on_sigbus(
        _sig: libc::c_int,
        info: *mut libc::siginfo_t,
        _ctx: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        let page = PAGE.load(Ordering::Relaxed);
        for slot in SLOTS.iter() {
            let start = slot.start.load(Ordering::Acquire);
            let len = slot.len.load(Ordering::Relaxed);
            if start == 0 || start == usize::MAX || addr < start || addr - start >= len {
                continue;
            }
            let base = addr & !(page - 1);
            // SAFETY: `base` is a page of a live read-only file mapping of ours (registered
            // until its `Mapping` is dropped, which cannot happen while a read of it is
            // faulting); replacing it by an anonymous zero page changes only what that
            // mapping reads, and munmap of the whole mapping later removes it too.
            let p = unsafe {
                libc::mmap(
                    base as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                slot.changed.store(true, Ordering::Release);
                return;
            }
            break;
        }
        // Not ours (or the page could not be replaced): restore what was there and return, so
        // the fault happens again under that disposition.
        // SAFETY: a zeroed sigaction with SIG_DFL is the default disposition; `OnceLock::get`
        // is an atomic load.
        unsafe {
            let previous = PREVIOUS.get().copied().unwrap_or_else(|| {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                dfl
            });
            libc::sigaction(libc::SIGBUS, &previous, std::ptr::null_mut());
        }
    }
}
