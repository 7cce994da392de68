//! Guard pages for linear memories (spec/backends.md, "Linear memories"): the address space a
//! guarded memory reserves, what its fault handlers read (`si_addr`, the interrupted program
//! counter), and [`Guarded`], the memories of one build and its runtime symbols for them. The
//! code that uses them (the access lowering, the reservation and growth routines, the site
//! table) is in `crate::memories`; this module depends on no other part of the back end, so
//! that the lowering context can hold a [`Guarded`].

use std::collections::HashSet;

use cranelift_codegen::ir::types;
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module as ClModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Module, Opcode};

use crate::error::cl_err;
use crate::types::PTR;

/// The offset of the interrupted program counter in the `ucontext_t` a signal handler gets,
/// on the targets whose layout is known here (elsewhere a guarded access's fault is reported
/// without its instruction).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub(crate) const PC_IN_CONTEXT: Option<i32> = Some(
    (std::mem::offset_of!(libc::ucontext_t, uc_mcontext)
        + std::mem::offset_of!(libc::mcontext_t, gregs)
        + 8 * libc::REG_RIP as usize) as i32,
);
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
pub(crate) const PC_IN_CONTEXT: Option<i32> = Some(
    (std::mem::offset_of!(libc::ucontext_t, uc_mcontext)
        + std::mem::offset_of!(libc::mcontext_t, pc)) as i32,
);
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub(crate) const PC_IN_CONTEXT: Option<i32> = None;

/// The offset of `si_addr` in Linux's `siginfo_t` (after `si_signo`, `si_errno`, `si_code`
/// and padding), for SIGSEGV and SIGBUS.
pub(crate) const SI_ADDR: i32 = 16;

/// The guard region after a guarded memory's largest size: an access whose static offset and
/// size together are at most this needs no comparison.
pub(crate) const GUARD: u64 = 2 << 30;

/// The address space a guarded memory reserves: its largest size (4 GiB) and the guard.
pub(crate) const RESERVATION: u64 = (4 << 30) + GUARD;

/// The linear memories of an executable reserved with guard regions, and what its runtime
/// needs for them (spec/backends.md, "Linear memories").
#[derive(Clone, Debug)]
pub(crate) struct Guarded {
    /// The memory records (globals some `mem_load`, `mem_store` or `mem_grow` names), in the
    /// order the module first uses them.
    pub(crate) globals: Vec<Inst>,
    /// `irkit.rt.memories`: one word per memory, its base once reserved (the fault handler
    /// reads them).
    pub(crate) table: DataId,
    /// C `void *mmap(void *, size_t, int, int, int, off_t)`.
    pub(crate) mmap: FuncId,
    /// C `int mprotect(void *, size_t, int)`.
    pub(crate) mprotect: FuncId,
    /// `irkit.rt.mem_reserve(record: ptr, slot: ptr)`: reserves a memory, moves its initial
    /// bytes there and records its base in `slot`.
    pub(crate) reserve: FuncId,
    /// `irkit.rt.sites`: the guarded accesses' code ranges and trap lines, for the fault
    /// handler ([`Guarded::define_sites`]).
    pub(crate) sites: DataId,
    /// The guarded accesses found so far ([`Guarded::note_sites`]).
    pub(crate) found: Vec<Site>,
    /// Their trap lines, one after the other.
    pub(crate) lines: String,
}

/// A guarded access's machine code: bytes `start..end` of function `func`, whose fault is
/// the trap line at `line..line + len` of [`Guarded::lines`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Site {
    pub(crate) func: FuncId,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) line: u32,
    pub(crate) len: u32,
}

/// The bytes of one entry of `irkit.rt.sites`: the function's address, the start and end of
/// the code range in it, the trap line's address and length.
pub(crate) const SITE_BYTES: i32 = 40;

impl Guarded {
    /// Finds the memories of the module and declares the runtime's symbols for them.
    pub(crate) fn declare<M: ClModule>(cl: &mut M, m: &Module) -> Result<Guarded, BackendError> {
        let globals = memory_globals(m);
        let table = cl
            .declare_data("irkit.rt.memories", Linkage::Local, true, false)
            .map_err(|e| cl_err("runtime", e))?;
        let mut d = DataDescription::new();
        d.set_align(8);
        d.define_zeroinit(8 * globals.len().max(1));
        cl.define_data(table, &d)
            .map_err(|e| cl_err("runtime", e))?;
        let mut decl = |name: &str, linkage, params: &[types::Type], ret: Option<types::Type>| {
            crate::runtime::declare_fn(cl, name, linkage, params, ret)
        };
        let i32t = types::I32;
        Ok(Guarded {
            globals,
            table,
            mmap: decl(
                "mmap",
                Linkage::Import,
                &[PTR, types::I64, i32t, i32t, i32t, types::I64],
                Some(PTR),
            )?,
            mprotect: decl(
                "mprotect",
                Linkage::Import,
                &[PTR, types::I64, i32t],
                Some(i32t),
            )?,
            reserve: decl("irkit.rt.mem_reserve", Linkage::Local, &[PTR, PTR], None)?,
            sites: cl
                .declare_data("irkit.rt.sites", Linkage::Local, false, false)
                .map_err(|e| cl_err("runtime", e))?,
            found: Vec::new(),
            lines: String::new(),
        })
    }
}

/// The globals the linear memory instructions of `m`'s function bodies name, in first-use
/// order.
fn memory_globals(m: &Module) -> Vec<Inst> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for &f in m.top_level() {
        if m.opcode(f) != Opcode::FUNC {
            continue;
        }
        for blk in m.blocks(f) {
            for &i in m.children(blk) {
                let op = m.opcode(i);
                if (op == Opcode::MEM_LOAD || op == Opcode::MEM_STORE || op == Opcode::MEM_GROW)
                    && let Some(&g) = m.operands(i).first()
                    && seen.insert(g)
                {
                    out.push(g);
                }
            }
        }
    }
    out
}
