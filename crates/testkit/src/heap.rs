//! A counting global allocator: a test binary installs it (`#[global_allocator] static A:
//! Counting = Counting;`) and reads what a piece of work allocated ([`Heap::of`]). The counters
//! are process-wide, so the tests of such a binary that measure must not run at the same time
//! as others that allocate (a test binary of its own, or [`Heap::serial`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The system allocator, counting.
pub struct Counting;

/// Bytes allocated so far (a reallocation counts its new size), by every thread.
static ALLOCATED: AtomicU64 = AtomicU64::new(0);
/// Bytes live now.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most bytes live at once since the last [`Heap::of`] began.
static PEAK: AtomicUsize = AtomicUsize::new(0);
static SERIAL: Mutex<()> = Mutex::new(());

fn grew(by: usize) {
    ALLOCATED.fetch_add(by as u64, Ordering::Relaxed);
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

#[allow(unsafe_code)]
// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as given.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

/// What a piece of work did to the heap (with [`Counting`] installed; zeros without).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Heap {
    /// Bytes it allocated in all (freed or not; a reallocation counts its new size).
    pub allocated: u64,
    /// The most bytes live at once while it ran, above what was live when it began.
    pub peak: usize,
}

impl Heap {
    /// Runs `f` and reports its heap use with its result.
    pub fn of<R>(f: impl FnOnce() -> R) -> (R, Heap) {
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let before = ALLOCATED.load(Ordering::Relaxed);
        let r = f();
        let heap = Heap {
            allocated: ALLOCATED.load(Ordering::Relaxed) - before,
            peak: PEAK.load(Ordering::Relaxed).saturating_sub(base),
        };
        (r, heap)
    }

    /// A lock the measuring tests of one binary hold, so that they run one at a time.
    pub fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }
}
