//! Tables and reference values: their representation, function records and signature ids,
//! and the module's `table.grow` and `table.fill` helpers.
//!
//! A reference is a `ptr`, null for `ref.null`. A `funcref` points to the function's
//! **record**, a `global_const` of type `struct {ptr function, ptr signature id}` that the
//! module referencing the function defines (one per function, made on first use); an
//! `externref` is the host's value as it is. A *signature id* is the address of a one-byte
//! `global_const` exported as `wasm-sig:` + the canonical signature (for example
//! `wasm-sig:(i32 i64)->(f32)`) and marked `linkonce`: linking collapses the copies into one,
//! so the id is the same in every module of a program and `call_indirect` compares ids.
//!
//! A table is a global of type `struct {ptr entries, i64 length, i64 maximum, i64 capacity}`
//! (plus an `i8` field for a table of `externref`, so the linker tells the two kinds apart):
//! its entries are references (`ptr`), allocated with `calloc` by the module's grow helper,
//! which the initializer of the defining module calls for the initial size; the capacity is
//! the entries allocated (at least the length: the grow helper's). The maximum is the declared
//! one ([`NO_MAX_ENTRIES`] if none); a table grows to at most [`MAX_ENTRIES`].

use irkit_core::{Builder, CoreError, Inst, IntCC, Module, Opcode, Payload};
use wasmparser::FuncType;

use crate::env::{Env, Libc, Table, TableHelpers};
use crate::error::{At, Place, WasmError};
use crate::types;

/// The canonical text of a signature: `(params)->(results)`, types separated by spaces.
pub fn canonical(ft: &FuncType) -> String {
    let list = |ts: &[wasmparser::ValType]| {
        ts.iter()
            .map(|&t| types::val_type_name(t))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!("({})->({})", list(ft.params()), list(ft.results()))
}

/// The export name of a signature id.
pub fn sig_symbol(ft: &FuncType) -> String {
    format!("wasm-sig:{}", canonical(ft))
}

/// The type of a table global: `struct {ptr, i64, i64, i64}`, and for a table of `externref`
/// `struct {ptr, i64, i64, i64, i8}`.
pub fn table_type(m: &mut Module, externref: bool) -> Result<Inst, CoreError> {
    let p = m.ty_ptr();
    let i64t = m.ty_i64();
    if externref {
        let i8t = m.ty_i8();
        m.ty_struct(&[p, i64t, i64t, i64t, i8t])
    } else {
        m.ty_struct(&[p, i64t, i64t, i64t])
    }
}

/// The type of a function record, `struct {ptr function, ptr signature id}`.
pub fn record_type(m: &mut Module) -> Result<Inst, CoreError> {
    let p = m.ty_ptr();
    m.ty_struct(&[p, p])
}

/// The maximum field of a table declared without a maximum: more than any declared maximum
/// (a `u32`), so an import that declares a maximum never matches it.
pub const NO_MAX_ENTRIES: u64 = 1 << 32;

/// The implementation limit of a table's length: a table is declared with at most this many
/// entries, and `table.grow` past it returns -1 (8 MiB of entries).
pub const MAX_ENTRIES: u64 = 1 << 20;

/// The bytes of one table entry (a `ptr` is 64 bits: spec/ir.md).
pub const ENTRY_BYTES: i64 = 8;

/// The signature id of `ft`, declared in the module on first use.
pub fn sig_id(
    b: &mut Builder<'_>,
    env: &Env,
    ft: &FuncType,
    place: Place,
) -> Result<Inst, WasmError> {
    let name = sig_symbol(ft);
    if let Some(&g) = env.sigs.borrow().get(&name) {
        return Ok(g);
    }
    let i8t = b.module().ty_i8();
    let zero = b.module().const_zero(i8t).at(place)?;
    let g = b.global_const("sig", i8t, zero).at(place)?;
    b.export(g, &name).at(place)?;
    b.decorate(g, Opcode::LINKONCE, Vec::new(), Payload::None)
        .at(place)?;
    env.sigs.borrow_mut().insert(name, g);
    Ok(g)
}

/// The record of wasm function `index` (what a `funcref` to it points to), defined in the
/// module on first use.
pub fn record(b: &mut Builder<'_>, env: &Env, index: u32, place: Place) -> Result<Inst, WasmError> {
    if let Some(&r) = env.records.borrow().get(&index) {
        return Ok(r);
    }
    let func = env
        .funcs
        .get(index as usize)
        .ok_or_else(|| WasmError::unsupported(format!("function {index}"), place))?;
    let sig = sig_id(b, env, &func.ty, place)?;
    let ty = record_type(b.module()).at(place)?;
    let c = b
        .module()
        .const_aggregate(ty, &[func.inst, sig])
        .at(place)?;
    let r = b.global_const(&format!("fref{index}"), ty, c).at(place)?;
    env.records.borrow_mut().insert(index, r);
    Ok(r)
}

/// The address of field `k` of the table global `table` (of type `ty`).
fn field_of(b: &mut Builder<'_>, ty: Inst, table: Inst, k: i32) -> Inst {
    let zero = b.module().const_i64(0);
    let k = b.module().const_i32(k);
    b.ins().elem(ty, table, &[zero, k])
}

/// Loads the entries pointer (`k = 0`), the length (`k = 1`), the maximum (`k = 2`) or the
/// capacity (`k = 3`) of the table.
pub fn load_field(b: &mut Builder<'_>, t: &Table, k: i32) -> Inst {
    load_field_of(b, t.ty, t.global, k)
}

fn load_field_of(b: &mut Builder<'_>, ty: Inst, table: Inst, k: i32) -> Inst {
    let vt = if k == 0 {
        b.module().ty_ptr()
    } else {
        b.module().ty_i64()
    };
    let a = field_of(b, ty, table, k);
    b.ins().load(vt, a)
}

/// The address of entry `index` (an `i64`) of the entries at `entries`.
pub fn entry_addr(b: &mut Builder<'_>, entries: Inst, index: Inst) -> Inst {
    let p = b.module().ty_ptr();
    b.ins().elem(p, entries, &[index])
}

/// Declares and builds the table helpers of a module with a table.
pub fn build_helpers(
    b: &mut Builder<'_>,
    libc: &Libc,
    place: Place,
) -> Result<TableHelpers, WasmError> {
    let m = b.module();
    let (p, i32t, i64t, void) = (m.ty_ptr(), m.ty_i32(), m.ty_i64(), m.ty_void());
    let fill_sig = m.ty_fn(void, &[p, i64t, i64t, p]).at(place)?;
    let grow_sig = m.ty_fn(i32t, &[p, i32t, p]).at(place)?;
    let fill = b.func("table.fill", fill_sig).at(place)?;
    let grow = b.func("table.grow", grow_sig).at(place)?;
    build_fill(b, fill, place)?;
    let h = TableHelpers { grow, fill };
    build_grow(b, &h, libc, place)?;
    Ok(h)
}

/// `fill(entries, start, n, value)`: a loop storing `value` into each entry of the range.
fn build_fill(b: &mut Builder<'_>, f: Inst, place: Place) -> Result<(), WasmError> {
    let (p, i64t) = (b.module().ty_ptr(), b.module().ty_i64());
    let (entry, params) = b.entry_block(f).at(place)?;
    let (head, hp) = b.block(f, &[i64t]).at(place)?;
    let [body, done] = empty_blocks(b, f, place)?;
    let (entries, start, n, value) = (params[0], params[1], params[2], params[3]);
    b.position_at_end(entry);
    let end = b.ins().iadd(start, n);
    b.ins().jump(head, &[start]);
    b.position_at_end(head);
    let more = b.ins().icmp(IntCC::Ult, hp[0], end);
    b.ins().br(more, body, &[], done, &[]);
    b.position_at_end(body);
    let a = b.ins().elem(p, entries, &[hp[0]]);
    b.ins().store(a, value);
    let one = b.module().const_i64(1);
    let next = b.ins().iadd(hp[0], one);
    b.ins().jump(head, &[next]);
    b.position_at_end(done);
    b.ins().ret(None);
    Ok(())
}

/// `grow(table, delta, init)`: the old length, or -1 (the table unchanged) if the new length
/// passes the declared maximum or [`MAX_ENTRIES`], or the allocation fails; `init` is stored
/// into the new entries unless it is null. A new length within the capacity only becomes the
/// length (the entries past the length are null: `calloc`'s, and nothing writes past the
/// length); one past it allocates entries zeroed (`calloc`) for twice the capacity (at least
/// the new length, at most the maximum; the new length alone if that fails), copies the old
/// ones (`memcpy`) and frees the old allocation, as a memory grows (`crate::memory`).
fn build_grow(
    b: &mut Builder<'_>,
    h: &TableHelpers,
    libc: &Libc,
    place: Place,
) -> Result<(), WasmError> {
    let f = h.grow;
    let ty = table_type(b.module(), false).at(place)?;
    let (i32t, i64t, p) = (
        b.module().ty_i32(),
        b.module().ty_i64(),
        b.module().ty_ptr(),
    );
    let (entry, params) = b.entry_block(f).at(place)?;
    let [check0, fits, alloc, exact, copy, fill, done, fail] = empty_blocks(b, f, place)?;
    let (got, got_params) = b.block(f, &[p, i64t]).at(place)?;
    let (fill_or_store, fs_params) = b.block(f, &[p, i64t]).at(place)?;
    let (store, _) = b.block(f, &[]).at(place)?;
    let (table, delta, init) = (params[0], params[1], params[2]);
    b.position_at_end(entry);
    let old = load_field_of(b, ty, table, 0);
    let len = load_field_of(b, ty, table, 1);
    let declared = load_field_of(b, ty, table, 2);
    let limit = b.module().const_i64(MAX_ENTRIES as i64);
    let over = b.ins().icmp(IntCC::Ugt, declared, limit);
    let max = b.ins().select(over, limit, declared);
    let d = b.ins().zext(i64t, delta);
    let new_len = b.ins().iadd(len, d);
    let too_big = b.ins().icmp(IntCC::Ugt, new_len, max);
    b.ins().br(too_big, fail, &[], check0, &[]);
    b.position_at_end(check0);
    let zero = b.module().const_i64(0);
    let none = b.ins().icmp(IntCC::Eq, d, zero);
    b.ins().br(none, done, &[], fits, &[]);
    // Within the capacity: the entries are there, and null.
    b.position_at_end(fits);
    let cap = load_field_of(b, ty, table, 3);
    let within = b.ins().icmp(IntCC::Ule, new_len, cap);
    b.ins().br(within, fill_or_store, &[old, cap], alloc, &[]);
    // Past it: twice the capacity, at least the new length, at most the maximum.
    b.position_at_end(alloc);
    let size = b.module().const_i64(ENTRY_BYTES);
    allocate_grown(b, libc, [cap, new_len, max, size], [exact, got, fail]);
    b.position_at_end(got);
    let (np, nc) = (got_params[0], got_params[1]);
    let was_empty = b.ins().icmp(IntCC::Eq, len, zero);
    b.ins().br(was_empty, fill_or_store, &[np, nc], copy, &[]);
    b.position_at_end(copy);
    let bytes = b.ins().imul(len, size);
    b.ins().call(libc.memcpy, &[np, old, bytes]);
    b.ins().call(libc.free, &[old]);
    b.ins().jump(fill_or_store, &[np, nc]);
    b.position_at_end(fill_or_store);
    let (entries, capacity) = (fs_params[0], fs_params[1]);
    let null = b.module().const_null();
    let init_null = b.ins().icmp(IntCC::Eq, init, null);
    b.ins().br(init_null, store, &[], fill, &[]);
    b.position_at_end(fill);
    b.ins().call(h.fill, &[entries, len, d, init]);
    b.ins().jump(store, &[]);
    b.position_at_end(store);
    let f0 = field_of(b, ty, table, 0);
    b.ins().store(f0, entries);
    let f1 = field_of(b, ty, table, 1);
    b.ins().store(f1, new_len);
    let f3 = field_of(b, ty, table, 3);
    b.ins().store(f3, capacity);
    b.ins().jump(done, &[]);
    b.position_at_end(done);
    let r = b.ins().trunc(i32t, len);
    b.ins().ret(Some(r));
    b.position_at_end(fail);
    let m1 = b.module().const_i32(-1);
    b.ins().ret(Some(m1));
    Ok(())
}

/// In a grow helper whose new size `need` passes the capacity `cap` (both counting elements of
/// `unit` bytes): allocates zeroed room (`calloc`) for twice the capacity, at least `need` and
/// at most `max` elements, and jumps to `got(block, elements)`; if that fails, for `need`
/// alone (in block `exact`); if that fails too, to `fail`.
fn allocate_grown(
    b: &mut Builder<'_>,
    libc: &Libc,
    [cap, need, max, unit]: [Inst; 4],
    [exact, got, fail]: [Inst; 3],
) {
    let one = b.module().const_i64(1);
    let twice = b.ins().shl(cap, one);
    let more = b.ins().icmp(IntCC::Ugt, twice, max);
    let bounded = b.ins().select(more, max, twice);
    let less = b.ins().icmp(IntCC::Ult, bounded, need);
    let want = b.ins().select(less, need, bounded);
    let q = b.ins().call(libc.calloc, &[want, unit]);
    let null = b.module().const_null();
    let q_null = b.ins().icmp(IntCC::Eq, q, null);
    b.ins().br(q_null, exact, &[], got, &[q, want]);
    b.position_at_end(exact);
    let r = b.ins().call(libc.calloc, &[need, unit]);
    let r_null = b.ins().icmp(IntCC::Eq, r, null);
    b.ins().br(r_null, fail, &[], got, &[r, need]);
}

/// `N` new blocks without parameters, appended to `f` in order.
pub(crate) fn empty_blocks<const N: usize>(
    b: &mut Builder<'_>,
    f: Inst,
    place: Place,
) -> Result<[Inst; N], WasmError> {
    let mut blocks = [f; N];
    for blk in &mut blocks {
        *blk = b.block(f, &[]).at(place)?.0;
    }
    Ok(blocks)
}
