//! Guard pages for linear memories (spec/backends.md, "Linear memories"): the address space a
//! guarded memory reserves, what its fault handlers read (`si_addr`), and [`Guarded`], the
//! memories of one build and its runtime symbols for them. The code that uses them (the
//! access lowering, the reservation and growth routines) is in `crate::memories`, the table
//! of trap sites the handlers search in `crate::sites`; this module depends on no other part
//! of the back end, so that the lowering context can hold a [`Guarded`].

use std::collections::HashSet;

use cranelift_codegen::ir::types;
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module as ClModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Module, Opcode};

use crate::error::cl_err;
use crate::types::PTR;

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
}

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
