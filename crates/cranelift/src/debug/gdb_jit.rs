//! GDB's JIT interface (spec/backends.md, "Debugging JIT code"; GDB's manual, "JIT Compilation
//! Interface"): how a process tells a debugger about code it compiled.
//!
//! The process defines [`__jit_debug_descriptor`], the head of a doubly linked list of entries
//! each pointing to an object file in memory (here a [`super::jit_image`]), and
//! [`__jit_debug_register_code`], an empty function on which GDB sets a breakpoint. To add or
//! remove an entry, the process links or unlinks it, points `relevant_entry` at it, sets
//! `action_flag` and calls the function: GDB, stopped there, reads the image (or forgets it).
//! A debugger attached later walks the list from `first_entry`.
//!
//! A [`Registration`] is one entry: made when the code is finalized, it is unlinked when
//! dropped, which its owner does before freeing the code, so GDB never holds an entry whose
//! image or code is gone. Every change of the list happens under one process-wide lock.

use std::ptr::null_mut;
use std::sync::Mutex;

/// One object file in the list (GDB's `struct jit_code_entry`).
#[repr(C)]
struct CodeEntry {
    next: *mut CodeEntry,
    prev: *mut CodeEntry,
    symfile_addr: *const u8,
    symfile_size: u64,
}

/// The list's head (GDB's `struct jit_descriptor`).
#[repr(C)]
pub struct JitDescriptor {
    version: u32,
    action_flag: u32,
    relevant_entry: *mut CodeEntry,
    first_entry: *mut CodeEntry,
}

/// `action_flag`: nothing to do.
const JIT_NOACTION: u32 = 0;
/// `action_flag`: `relevant_entry` was added.
const JIT_REGISTER_FN: u32 = 1;
/// `action_flag`: `relevant_entry` is being removed.
const JIT_UNREGISTER_FN: u32 = 2;

/// The descriptor GDB reads, by this name. Changed only under [`LOCK`].
#[allow(unsafe_code, non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mut __jit_debug_descriptor: JitDescriptor = JitDescriptor {
    version: 1,
    action_flag: JIT_NOACTION,
    relevant_entry: null_mut(),
    first_entry: null_mut(),
};

/// The function GDB sets its breakpoint on, called after each change of the list. It must
/// stay a real, separate function, called each time, and one the compiler believes may read
/// the descriptor: otherwise the stores before a call (`action_flag`, `relevant_entry`) would
/// be dead ones, overwritten after it, and could be removed.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn __jit_debug_register_code() {
    // The descriptor's address handed to code the compiler cannot see into.
    std::hint::black_box(&raw mut __jit_debug_descriptor);
}

/// Serializes every change of the list (and GDB's view of it) in the process.
static LOCK: Mutex<()> = Mutex::new(());

/// An image registered with GDB: unregistered when dropped.
pub(crate) struct Registration {
    /// The list entry (its address is what the list holds; boxed so it does not move).
    entry: Box<CodeEntry>,
    /// The image the entry points to.
    image: Box<[u8]>,
}

// SAFETY: the entry is only read or changed under `LOCK`, by whichever thread holds it, and
// the image is immutable: nothing in a `Registration` belongs to one thread.
#[allow(unsafe_code)]
unsafe impl Send for Registration {}
// SAFETY: as above; `&Registration` gives access to nothing.
#[allow(unsafe_code)]
unsafe impl Sync for Registration {}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("image_bytes", &self.image().len())
            .finish()
    }
}

impl Registration {
    /// Adds `image` (an object file describing code of this process) to GDB's list and tells
    /// an attached GDB.
    #[allow(unsafe_code)]
    pub(crate) fn new(image: Vec<u8>) -> Registration {
        let image = image.into_boxed_slice();
        let mut entry = Box::new(CodeEntry {
            next: null_mut(),
            prev: null_mut(),
            symfile_addr: image.as_ptr(),
            symfile_size: image.len() as u64,
        });
        let at: *mut CodeEntry = &mut *entry;
        let _held = LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: the descriptor and every entry in its list are changed only under `LOCK`,
        // held here; the entries in the list are alive (each is unlinked by its
        // `Registration`'s `drop`, under the lock, before it is freed), and `at` is this new,
        // boxed entry, which stays where it is until then.
        unsafe {
            let d = &raw mut __jit_debug_descriptor;
            (*at).next = (*d).first_entry;
            if let Some(first) = (*d).first_entry.as_mut() {
                first.prev = at;
            }
            (*d).first_entry = at;
            (*d).relevant_entry = at;
            (*d).action_flag = JIT_REGISTER_FN;
            __jit_debug_register_code();
            (*d).action_flag = JIT_NOACTION;
            (*d).relevant_entry = null_mut();
        }
        Registration { entry, image }
    }
}

impl Registration {
    /// The registered image.
    pub(crate) fn image(&self) -> &[u8] {
        &self.image
    }
}

impl Drop for Registration {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        let at: *mut CodeEntry = &mut *self.entry;
        let _held = LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: as in `new`: under `LOCK`, the list holds live entries only, this one among
        // them (linked by `new`, not unlinked before); its neighbours are relinked around it
        // before GDB is told and before it is freed.
        unsafe {
            let d = &raw mut __jit_debug_descriptor;
            let (prev, next) = ((*at).prev, (*at).next);
            match prev.as_mut() {
                Some(p) => p.next = next,
                None => (*d).first_entry = next,
            }
            if let Some(n) = next.as_mut() {
                n.prev = prev;
            }
            (*d).relevant_entry = at;
            (*d).action_flag = JIT_UNREGISTER_FN;
            __jit_debug_register_code();
            (*d).action_flag = JIT_NOACTION;
            (*d).relevant_entry = null_mut();
        }
    }
}

/// The images registered now, in list order (for tests).
#[cfg(test)]
#[allow(unsafe_code)]
pub(crate) fn registered() -> Vec<(*const u8, u64)> {
    let _held = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out = Vec::new();
    // SAFETY: under `LOCK`, the list holds live entries only.
    unsafe {
        let d = &raw const __jit_debug_descriptor;
        let mut e = (*d).first_entry;
        while let Some(entry) = e.as_ref() {
            out.push((entry.symfile_addr, entry.symfile_size));
            e = entry.next;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_are_listed_until_dropped_in_any_order() {
        let a = Registration::new(vec![1; 3]);
        let b = Registration::new(vec![2; 5]);
        let c = Registration::new(vec![3; 7]);
        let mine = |all: Vec<(*const u8, u64)>| -> Vec<u64> {
            all.into_iter()
                .map(|(_, n)| n)
                .filter(|n| [3, 5, 7].contains(n))
                .collect()
        };
        assert_eq!(mine(registered()), vec![7, 5, 3]);
        drop(b);
        assert_eq!(mine(registered()), vec![7, 3]);
        drop(c);
        assert_eq!(mine(registered()), vec![3]);
        drop(a);
        assert_eq!(mine(registered()), Vec::<u64>::new());
    }
}
