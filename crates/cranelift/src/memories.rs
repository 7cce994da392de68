//! Linear memories at run time (spec/backends.md, "Linear memories"): the record's layout as
//! generated code reads it, `irkit.rt.mem_grow(record, pages) -> i32` (the routine every
//! `mem_grow` calls, generated into each module in Cranelift IR), and, in a build whose
//! memories have guard pages (`crate::guard`), which accesses the guard covers, the
//! reservation routine the entry wrapper calls for each memory, and the table of guarded
//! accesses the fault handlers read.
//!
//! Without guard pages the memory's bytes come from C's `calloc` (in the JIT, the program's
//! tracked heap: `crate::heap`). The record's `reserved` field is the size of that block, which
//! may pass the memory's size: its bytes past the size are zero (`calloc`'s, and nothing writes
//! past the size), so a growth within it only moves the size. A growth past it allocates a
//! zeroed block of twice the reservation (at least the new size, at most the maximum; the new
//! size alone if that fails), copies the old bytes and frees the old block: a memory grown page
//! by page copies each byte a bounded number of times. With guard pages the memory never
//! moves: a growth gives the next pages of its reservation access.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, Block, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::{FuncId, Module as ClModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Opcode};

use crate::context::Ctx;
use crate::guard::{GUARD, Guarded, RESERVATION};
use crate::routine::define_routine;
use crate::runtime::UNREACHABLE_AFTER_EXIT;
use crate::types::PTR;

/// Offset of the record's `base` (`ptr`).
pub(crate) const RECORD_BASE: i32 = 0;
/// Offset of the record's `size` (`i64`, bytes).
pub(crate) const RECORD_SIZE: i32 = 8;
/// Offset of the record's `max` (`i32`, pages).
pub(crate) const RECORD_MAX: i32 = 16;
/// Offset of the record's `reserved` (`i64`, bytes).
pub(crate) const RECORD_RESERVED: i32 = 24;

/// The most pages a memory has (4 GiB).
const MAX_PAGES: i64 = 65536;

/// The parameters and result of `irkit.rt.mem_grow`: `(ptr record, i32 pages) -> i32`.
fn grow_signature() -> (Vec<AbiParam>, Vec<AbiParam>) {
    (
        vec![AbiParam::new(PTR), AbiParam::new(types::I32)],
        vec![AbiParam::new(types::I32)],
    )
}

/// What both forms of `irkit.rt.mem_grow` do first, from the entry block `entry` of the
/// routine (parameters: the record, the pages to add): read the record's base and size and
/// the most pages the memory may have, and go on (in a new current block) only if the pages
/// it would have are not more; `fail` returns -1.
struct Growth {
    record: Value,
    base: Value,
    size: Value,
    /// The most pages (`i64`).
    max: Value,
    /// The pages to add (`i64`).
    d: Value,
    /// The pages it would have (`i64`).
    new: Value,
    /// Its pages now (`i32`): the result of a growth that succeeds.
    old: Value,
    /// Returns -1.
    fail: Block,
}

fn growth(b: &mut FunctionBuilder<'_>, entry: Block) -> Growth {
    let (record, delta) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let f = MemFlagsData::trusted();
    let base = b.ins().load(PTR, f, record, RECORD_BASE);
    let size = b.ins().load(types::I64, f, record, RECORD_SIZE);
    let declared = b.ins().uload32(f, record, RECORD_MAX);
    let limit = b.ins().iconst(types::I64, MAX_PAGES);
    let max = b.ins().umin(declared, limit);
    let pages = b.ins().ushr_imm_u(size, 16);
    let d = b.ins().uextend(types::I64, delta);
    let new = b.ins().iadd(pages, d);
    let old = b.ins().ireduce(types::I32, pages);
    let (fail, fits) = (b.create_block(), b.create_block());
    let too_big = b.ins().icmp(IntCC::UnsignedGreaterThan, new, max);
    b.ins().brif(too_big, fail, &[], fits, &[]);
    b.switch_to_block(fail);
    let minus = b.ins().iconst(types::I32, -1);
    b.ins().return_(&[minus]);
    b.switch_to_block(fits);
    Growth {
        record,
        base,
        size,
        max,
        d,
        new,
        old,
        fail,
    }
}

/// Defines `irkit.rt.mem_grow(record: ptr, pages: i32) -> i32` (spec/ir.md, `mem_grow`).
pub(crate) fn define_mem_grow_routine<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
) -> Result<(), BackendError> {
    if let Some(guard) = ctx.guard.clone() {
        define_guarded_grow(ctx, guard.mprotect)?;
        return define_reserve_routine(ctx, &guard);
    }
    let rt = ctx.rt;
    define_routine(
        ctx,
        rt.mem_grow,
        grow_signature(),
        "runtime mem_grow routine",
        |ctx, b, entry| {
            let f = MemFlagsData::trusted();
            let Growth {
                record,
                base,
                size,
                max,
                new,
                old,
                fail,
                ..
            } = growth(b, entry);
            let reserved = b.ins().load(types::I64, f, record, RECORD_RESERVED);
            let [within, alloc, retry, got, copy, done] = std::array::from_fn(|_| b.create_block());
            // A growth by 0 pages, or within the reservation, only moves the size.
            let need = b.ins().ishl_imm_u(new, 16);
            let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, need, reserved);
            b.ins().brif(fits, within, &[], alloc, &[]);

            b.switch_to_block(within);
            b.ins().store(f, need, record, RECORD_SIZE);
            b.ins().return_(&[old]);

            // Twice the reservation, at least the new size, at most the maximum.
            b.switch_to_block(alloc);
            let twice = b.ins().ishl_imm_u(reserved, 1);
            let most = b.ins().ishl_imm_u(max, 16);
            let want = b.ins().umax(twice, need);
            let want = b.ins().umin(want, most);
            let calloc = ctx.func_in_func(rt.calloc, b.func);
            let one = b.ins().iconst(types::I64, 1);
            let call = b.ins().call(calloc, &[want, one]);
            let q = b.inst_results(call)[0];
            let got_p = b.append_block_param(got, PTR);
            let got_n = b.append_block_param(got, types::I64);
            b.ins().brif(q, got, &[q.into(), want.into()], retry, &[]);

            b.switch_to_block(retry);
            let call = b.ins().call(calloc, &[need, one]);
            let q = b.inst_results(call)[0];
            b.ins().brif(q, got, &[q.into(), need.into()], fail, &[]);

            b.switch_to_block(got);
            b.ins().brif(size, copy, &[], done, &[]);

            b.switch_to_block(copy);
            let memcpy = ctx.func_in_func(rt.memcpy, b.func);
            b.ins().call(memcpy, &[got_p, base, size]);
            let free = ctx.func_in_func(rt.free, b.func);
            b.ins().call(free, &[base]);
            b.ins().jump(done, &[]);

            b.switch_to_block(done);
            b.ins().store(f, got_p, record, RECORD_BASE);
            b.ins().store(f, need, record, RECORD_SIZE);
            b.ins().store(f, got_n, record, RECORD_RESERVED);
            b.ins().return_(&[old]);
            Ok(())
        },
    )
}

/// The trap line of an executable whose memory cannot be reserved.
const RESERVE_FAILED: &str =
    "trap: out of memory (a linear memory's 6 GiB address space reservation failed)\n";

/// Whether `inst` is an access an executable leaves to its memory's guard region
/// ([`GUARD`]): a `mem_load` or `mem_store` whose static offset plus size is at most the
/// guard, in a build that reserves memories.
pub(crate) fn guarded_access<M: ClModule>(ctx: &Ctx<'_, M>, inst: Inst) -> bool {
    let m = ctx.m;
    let ty = match m.opcode(inst) {
        Opcode::MEM_LOAD => m.ty(inst),
        Opcode::MEM_STORE => m.operands(inst).get(2).and_then(|&v| m.value_type(v)),
        _ => return false,
    };
    let size = ty.and_then(|t| ctx.layouts.get(t)).map(|l| l.size);
    let offset = m.payload(inst).as_int().unwrap_or(u64::MAX);
    ctx.guard.is_some() && size.is_some_and(|n| offset.saturating_add(n) <= GUARD)
}

/// Emits, in the entry wrapper, the reservation of every memory (before any IR code runs).
pub(crate) fn reserve_all<M: ClModule>(
    ctx: &Ctx<'_, M>,
    guard: &Guarded,
    b: &mut FunctionBuilder<'_>,
) -> Result<(), BackendError> {
    let reserve = ctx.func_in_func(guard.reserve, b.func);
    let gv = ctx.data_in_func(guard.table, b.func);
    let table = b.ins().symbol_value(PTR, gv);
    for (k, g) in guard.globals.iter().enumerate() {
        let id = *ctx.globals.get(g).ok_or_else(|| {
            BackendError::Malformed(format!(
                "the linear memory {} is not defined in the program",
                irkit_core::place::def_label(ctx.m, *g)
            ))
        })?;
        let gv = ctx.data_in_func(id, b.func);
        let record = b.ins().symbol_value(PTR, gv);
        let slot = b.ins().iadd_imm_u(table, 8 * k as i64);
        b.ins().call(reserve, &[record, slot]);
    }
    Ok(())
}

/// Defines `irkit.rt.mem_reserve(record, slot)`: `mmap`s [`RESERVATION`] bytes of no access,
/// gives the memory's initial bytes (a record whose initializer has a size) access and copies
/// them there, and stores the base in the record and in `slot`. A reservation the system
/// refuses ends the program with the trap line [`RESERVE_FAILED`].
pub(crate) fn define_reserve_routine<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    guard: &Guarded,
) -> Result<(), BackendError> {
    let rt = ctx.rt;
    let msg = ctx.message(RESERVE_FAILED)?;
    let (mmap, mprotect) = (guard.mmap, guard.mprotect);
    let sig = (vec![AbiParam::new(PTR), AbiParam::new(PTR)], Vec::new());
    define_routine(
        ctx,
        guard.reserve,
        sig,
        "runtime mem_reserve routine",
        |ctx, b, entry| {
            let (record, slot) = (b.block_params(entry)[0], b.block_params(entry)[1]);
            let f = MemFlagsData::trusted();
            let [failed, reserved, copy, done, fresh] = std::array::from_fn(|_| b.create_block());
            // Reserved by an earlier run of the same code (the JIT's): kept as it is.
            let held = b.ins().load(types::I64, f, record, RECORD_RESERVED);
            let again = b.ins().icmp_imm_u(IntCC::Equal, held, RESERVATION as i64);
            b.ins().brif(again, done, &[], fresh, &[]);
            b.switch_to_block(fresh);
            let mmap = ctx.func_in_func(mmap, b.func);
            let null = b.ins().iconst(PTR, 0);
            let len = b.ins().iconst(types::I64, RESERVATION as i64);
            let none = b.ins().iconst(types::I32, i64::from(libc::PROT_NONE));
            let how = b.ins().iconst(
                types::I32,
                i64::from(libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE),
            );
            let fd = b.ins().iconst(types::I32, -1);
            let zero = b.ins().iconst(types::I64, 0);
            let call = b.ins().call(mmap, &[null, len, none, how, fd, zero]);
            let p = b.inst_results(call)[0];
            let bad = b.ins().icmp_imm_s(IntCC::Equal, p, -1);
            b.ins().brif(bad, failed, &[], reserved, &[]);

            b.switch_to_block(reserved);
            let size = b.ins().load(types::I64, f, record, RECORD_SIZE);
            let install = b.create_block();
            b.ins().brif(size, copy, &[], install, &[]);

            b.switch_to_block(copy);
            let mprotect = ctx.func_in_func(mprotect, b.func);
            let rw = b
                .ins()
                .iconst(types::I32, i64::from(libc::PROT_READ | libc::PROT_WRITE));
            let call = b.ins().call(mprotect, &[p, size, rw]);
            let r = b.inst_results(call)[0];
            let old = b.ins().load(PTR, f, record, RECORD_BASE);
            let copy_now = b.create_block();
            b.ins().brif(r, failed, &[], copy_now, &[]);
            b.switch_to_block(copy_now);
            let memcpy = ctx.func_in_func(rt.memcpy, b.func);
            b.ins().call(memcpy, &[p, old, size]);
            b.ins().jump(install, &[]);

            b.switch_to_block(install);
            b.ins().store(f, p, record, RECORD_BASE);
            let all = b.ins().iconst(types::I64, RESERVATION as i64);
            b.ins().store(f, all, record, RECORD_RESERVED);
            b.ins().jump(done, &[]);

            b.switch_to_block(done);
            let base = b.ins().load(PTR, f, record, RECORD_BASE);
            b.ins().store(f, base, slot, 0);
            b.ins().return_(&[]);

            b.switch_to_block(failed);
            let trap = ctx.func_in_func(rt.trap, b.func);
            let gv = ctx.data_in_func(msg, b.func);
            let text = b.ins().symbol_value(PTR, gv);
            let n = b.ins().iconst(types::I64, RESERVE_FAILED.len() as i64);
            b.ins().call(trap, &[text, n]);
            b.ins().trap(UNREACHABLE_AFTER_EXIT);
            Ok(())
        },
    )
}

/// The guarded variant of `irkit.rt.mem_grow`: the memory never moves; a growth gives the new
/// pages access (`mprotect`; fresh pages of an anonymous mapping are zero).
fn define_guarded_grow<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    mprotect: FuncId,
) -> Result<(), BackendError> {
    let rt = ctx.rt;
    define_routine(
        ctx,
        rt.mem_grow,
        grow_signature(),
        "runtime mem_grow routine",
        |ctx, b, entry| {
            let f = MemFlagsData::trusted();
            let Growth {
                record,
                base,
                size,
                d,
                new,
                old,
                fail,
                ..
            } = growth(b, entry);
            let [grow, done] = std::array::from_fn(|_| b.create_block());
            b.ins().brif(d, grow, &[], done, &[]);

            b.switch_to_block(grow);
            let need = b.ins().ishl_imm_u(new, 16);
            let at = b.ins().iadd(base, size);
            let more = b.ins().isub(need, size);
            let mprotect = ctx.func_in_func(mprotect, b.func);
            let rw = b
                .ins()
                .iconst(types::I32, i64::from(libc::PROT_READ | libc::PROT_WRITE));
            let call = b.ins().call(mprotect, &[at, more, rw]);
            let r = b.inst_results(call)[0];
            let moved = b.create_block();
            b.ins().brif(r, fail, &[], moved, &[]);
            b.switch_to_block(moved);
            b.ins().store(f, need, record, RECORD_SIZE);
            b.ins().jump(done, &[]);

            b.switch_to_block(done);
            b.ins().return_(&[old]);
            Ok(())
        },
    )
}
