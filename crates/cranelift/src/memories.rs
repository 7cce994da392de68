//! Linear memories at run time (spec/backends.md, "Linear memories"): the record's layout as
//! generated code reads it, and `irkit.rt.mem_grow(record, pages) -> i32`, the routine every
//! `mem_grow` calls, generated into each module in Cranelift IR.
//!
//! The memory's bytes come from C's `calloc` (in the JIT, the program's tracked heap:
//! `crate::heap`). The record's `reserved` field is the size of that block, which may pass the
//! memory's size: its bytes past the size are zero (`calloc`'s, and nothing writes past the
//! size), so a growth within it only moves the size. A growth past it allocates a zeroed block
//! of twice the reservation (at least the new size, at most the maximum; the new size alone if
//! that fails), copies the old bytes and frees the old block: a memory grown page by page
//! copies each byte a bounded number of times.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlagsData, types};
use cranelift_module::Module as ClModule;
use irkit_backend::BackendError;

use crate::context::Ctx;
use crate::routines::define_routine;
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

/// Defines `irkit.rt.mem_grow(record: ptr, pages: i32) -> i32` (spec/ir.md, `mem_grow`).
pub(crate) fn define_mem_grow_routine<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
) -> Result<(), BackendError> {
    let rt = ctx.rt;
    let sig = (
        vec![AbiParam::new(PTR), AbiParam::new(types::I32)],
        vec![AbiParam::new(types::I32)],
    );
    define_routine(
        ctx,
        rt.mem_grow,
        sig,
        "runtime mem_grow routine",
        |ctx, b, entry| {
            let (record, delta) = (b.block_params(entry)[0], b.block_params(entry)[1]);
            let f = MemFlagsData::trusted();
            let base = b.ins().load(PTR, f, record, RECORD_BASE);
            let size = b.ins().load(types::I64, f, record, RECORD_SIZE);
            let declared = b.ins().uload32(f, record, RECORD_MAX);
            let reserved = b.ins().load(types::I64, f, record, RECORD_RESERVED);
            let limit = b.ins().iconst(types::I64, MAX_PAGES);
            let max = b.ins().umin(declared, limit);
            let pages = b.ins().ushr_imm_u(size, 16);
            let d = b.ins().uextend(types::I64, delta);
            let new = b.ins().iadd(pages, d);
            let old = b.ins().ireduce(types::I32, pages);

            let [fail, some, within, alloc, retry, got, copy, done] =
                std::array::from_fn(|_| b.create_block());
            let too_big = b.ins().icmp(IntCC::UnsignedGreaterThan, new, max);
            b.ins().brif(too_big, fail, &[], some, &[]);

            // A growth by 0 pages, or within the reservation, only moves the size.
            b.switch_to_block(some);
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

            b.switch_to_block(fail);
            let minus = b.ins().iconst(types::I32, -1);
            b.ins().return_(&[minus]);
            Ok(())
        },
    )
}
