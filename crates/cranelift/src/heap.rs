//! The C heap of JIT-compiled code, owned by what runs it.
//!
//! A program calls C's `malloc` and friends as `extern` functions (the WebAssembly front end
//! does, for a linear memory and its growth: spec/wasm.md, "Linear memory"). A process that
//! runs one program and exits gets that memory back from the OS; a process that compiles and
//! runs many (a script runner, a fuzzer, an embedder: [`crate::JitSession`],
//! [`crate::jit::Compiled`]) would keep every program's heap for good. So in the JIT,
//! `malloc`, `calloc`, `realloc` and `free` are bound to wrappers that call the C library's
//! and record each live block in the [`Heap`] of the program running on the calling thread;
//! when the session or the compiled module is dropped (no code of it running: every call
//! joins its thread), the blocks still live are freed.
//!
//! The wrappers find the heap through the thread: each thread the JIT starts to run a program
//! enters its owner's heap first ([`Heap::enter`]). Called on any other thread (a program's
//! code never is), they only call the C library. `free` of a block the program got elsewhere
//! (from another C function) frees it as C would; only blocks of these four are recorded.
//! Object files (`--emit obj|exe`) call the C library directly: their process ends with them.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use libc::{c_void, size_t};

/// The blocks a program allocated through the C heap and has not freed, by address.
#[derive(Debug, Default)]
pub(crate) struct Heap {
    live: Mutex<HashSet<usize>>,
}

thread_local! {
    /// The heap of the program running on this thread.
    static CURRENT: RefCell<Option<Arc<Heap>>> = const { RefCell::new(None) };
}

/// Leaves the heap [`Heap::enter`] entered when dropped.
pub(crate) struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|c| c.borrow_mut().take());
    }
}

impl Heap {
    fn blocks(&self) -> MutexGuard<'_, HashSet<usize>> {
        // The set is plain data: a panic elsewhere while it was held leaves it usable.
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes `heap` the heap of the code this thread runs, until the guard is dropped.
    pub(crate) fn enter(heap: &Arc<Heap>) -> Entered {
        let _ = CURRENT.try_with(|c| *c.borrow_mut() = Some(Arc::clone(heap)));
        Entered(())
    }

    /// How many blocks are live.
    pub(crate) fn live_blocks(&self) -> usize {
        self.blocks().len()
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        for p in self.blocks().drain() {
            // SAFETY: each address was returned by the C library's `malloc`, `calloc` or
            // `realloc` and not freed since (`free` and `realloc` take it out); no code that
            // could use it is running (the owner is being dropped).
            unsafe { libc::free(p as *mut c_void) };
        }
    }
}

/// Runs `f` on the heap of this thread's program, if it has one.
fn with_heap(f: impl FnOnce(&Heap)) {
    let _ = CURRENT.try_with(|c| {
        if let Some(h) = c.borrow().as_ref() {
            f(h);
        }
    });
}

fn record(p: *mut c_void) -> *mut c_void {
    if !p.is_null() {
        with_heap(|h| {
            h.blocks().insert(p as usize);
        });
    }
    p
}

extern "C" fn heap_malloc(size: size_t) -> *mut c_void {
    // SAFETY: C's `malloc`, any size.
    record(unsafe { libc::malloc(size) })
}

extern "C" fn heap_calloc(n: size_t, size: size_t) -> *mut c_void {
    // SAFETY: C's `calloc`, any sizes (it checks the product).
    record(unsafe { libc::calloc(n, size) })
}

extern "C" fn heap_realloc(p: *mut c_void, size: size_t) -> *mut c_void {
    // SAFETY: C's `realloc`, with the program's pointer, as the program asked.
    let q = unsafe { libc::realloc(p, size) };
    with_heap(|h| {
        let mut blocks = h.blocks();
        // A null result leaves `p` allocated, unless `p` was freed (a size of 0).
        if !q.is_null() || size == 0 {
            blocks.remove(&(p as usize));
        }
        if !q.is_null() {
            blocks.insert(q as usize);
        }
    });
    q
}

extern "C" fn heap_free(p: *mut c_void) {
    with_heap(|h| {
        h.blocks().remove(&(p as usize));
    });
    // SAFETY: C's `free`, with the program's pointer, as the program asked.
    unsafe { libc::free(p) }
}

/// The wrappers, by the C names they stand for in the JIT.
pub(crate) fn symbols() -> [(&'static str, *const u8); 4] {
    [
        ("malloc", heap_malloc as *const u8),
        ("calloc", heap_calloc as *const u8),
        ("realloc", heap_realloc as *const u8),
        ("free", heap_free as *const u8),
    ]
}
