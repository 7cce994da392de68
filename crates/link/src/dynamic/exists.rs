//! Existentials lowered (spec/linking.md, "Existentials"): a value of `exists @I` becomes a
//! pointer to a heap cell holding the witness table of its type (the shared generics' table,
//! [`Glue::table`], one thunk per requirement taking `Self` by pointer) at offset 0, the
//! type's descriptor at offset 8 and the value at offset 16.
//!
//! * `pack %v, @w` allocates the cell (`__irkit.alloc`, the objects' allocator: `calloc`, or
//!   the collector with `--gc boehm`), stores the table, the descriptor and the value (leaf
//!   by leaf);
//! * `exists_call %e, @r, args…` loads the table from the cell, entry `k` (the requirement's
//!   position) from the table, and calls it with a pointer to the value and the arguments;
//! * `exists_open @g, %e, args…` calls `@g`'s shared version (the policy shares every generic
//!   an `exists_open` names) with the cell's descriptor and table and a pointer to the value;
//! * every `exists @I` type is then replaced by `ptr`, in signatures, globals and constants
//!   alike, so that the back ends see ordinary IR.
//!
//! A cell is never written after `pack`: an existential is a value, copied as its pointer.

use std::collections::HashMap;

use irkit_core::{Builder, CoreError, Inst, Module, Opcode};

use super::glue::{Glue, store_value};
use super::internal;
use crate::error::LinkError;
use crate::objects::Gc;

/// Offset of the descriptor in a cell (after the table pointer).
const DESC_AT: i64 = 8;
/// Offset of the value in a cell (values are at most 8-aligned).
const VALUE_AT: i64 = 16;

fn err(e: CoreError) -> LinkError {
    internal("an existential", e)
}

/// Lowers every `pack` and `exists_call` outside generics, then every `exists` type; returns
/// how many instructions were lowered.
pub(crate) fn lower_existentials(g: &mut Glue<'_>, gc: Gc) -> Result<u64, LinkError> {
    let m = &*g.m;
    let types: Vec<Inst> = m
        .pool()
        .iter()
        .copied()
        .filter(|&t| m.opcode(t) == Opcode::EXISTS)
        .collect();
    if types.is_empty() {
        return Ok(0);
    }
    let insts = existential_insts(m);
    let mut rauw: HashMap<Inst, Inst> = HashMap::new();
    for &i in &insts {
        let new = match g.m.opcode(i) {
            Opcode::PACK => pack(g, i, gc)?,
            Opcode::EXISTS_OPEN => open(g, i)?,
            _ => call(g, i)?,
        };
        if let Some(n) = new {
            rauw.insert(i, n);
        }
    }
    if !rauw.is_empty() {
        g.m.replace_all_uses(&rauw).map_err(err)?;
    }
    g.m.remove_all(&insts).map_err(err)?;
    let ptr = g.m.ty_ptr();
    let to_ptr: HashMap<Inst, Inst> = types.into_iter().map(|t| (t, ptr)).collect();
    g.m.replace_all_uses(&to_ptr).map_err(err)?;
    Ok(insts.len() as u64)
}

/// The `pack` and `exists_call` instructions of the module's functions (those in a generic's
/// body were cloned or shared with it; the generic itself goes).
fn existential_insts(m: &Module) -> Vec<Inst> {
    let mut out = Vec::new();
    for &d in m.top_level() {
        if m.opcode(d) != Opcode::FUNC {
            continue;
        }
        for i in m.walk_from(d) {
            if matches!(
                m.opcode(i),
                Opcode::PACK | Opcode::EXISTS_CALL | Opcode::EXISTS_OPEN
            ) {
                out.push(i);
            }
        }
    }
    out
}

/// `pack %v, @w`: the cell.
fn pack(g: &mut Glue<'_>, i: Inst, gc: Gc) -> Result<Option<Inst>, LinkError> {
    let (v, w) = match *g.m.operands(i) {
        [v, w] => (v, w),
        _ => return Err(internal("an existential", "`pack` takes two operands")),
    };
    let Some(ty) = g.m.value_type(v) else {
        return Err(internal("an existential", "the packed value has no type"));
    };
    let (size, _) = g.layout_of(ty)?;
    let table = g.table(w)?;
    let desc = g.desc(ty)?;
    let total = g.m.const_i64((size as i64).saturating_add(VALUE_AT));
    let (i8t, at) = (g.m.ty_i8(), g.m.const_i64(VALUE_AT));
    let desc_at = g.m.const_i64(DESC_AT);
    let mut b = Builder::new(g.m);
    let alloc = crate::objects::alloc(&mut b, gc).map_err(err)?;
    b.position_before(i);
    let cell = b.call(alloc, &[total]).map_err(err)?;
    b.store(cell, table).map_err(err)?;
    let d = b.elem(i8t, cell, &[desc_at]).map_err(err)?;
    b.store(d, desc).map_err(err)?;
    let body = b.elem(i8t, cell, &[at]).map_err(err)?;
    store_value(&mut b, body, ty, v)?;
    Ok(Some(cell))
}

/// `exists_call %e, @r, args…`: the call through the cell's table.
fn call(g: &mut Glue<'_>, i: Inst) -> Result<Option<Inst>, LinkError> {
    let ops = g.m.operands(i).to_vec();
    let [e, r, ref args @ ..] = ops[..] else {
        return Err(internal(
            "an existential",
            "`exists_call` takes a value and a requirement",
        ));
    };
    let sig = g.thunk_sig(r)?;
    let k = g.requirement_index(r)?;
    let (ptr, i8t) = (g.m.ty_ptr(), g.m.ty_i8());
    let (idx, at) = (g.m.const_i64(k as i64), g.m.const_i64(VALUE_AT));
    let mut b = Builder::new(g.m);
    b.position_before(i);
    let table = b.load(ptr, e).map_err(err)?;
    let entry = b.elem(ptr, table, &[idx]).map_err(err)?;
    let fp = b.load(ptr, entry).map_err(err)?;
    let body = b.elem(i8t, e, &[at]).map_err(err)?;
    let mut call_args = vec![body];
    call_args.extend_from_slice(args);
    let c = b.call_indirect(sig, fp, &call_args).map_err(err)?;
    Ok(b.module().ty(c).is_some().then_some(c))
}

/// `exists_open @g, %e, args…`: the call of `@g`'s shared version.
fn open(g: &mut Glue<'_>, i: Inst) -> Result<Option<Inst>, LinkError> {
    let ops = g.m.operands(i).to_vec();
    let [generic, e, ref args @ ..] = ops[..] else {
        return Err(internal(
            "an existential",
            "`exists_open` takes a generic and a value",
        ));
    };
    let Some(&shared) = g.shared_fn.get(&generic) else {
        return Err(internal(
            "an existential",
            "the opened generic is not shared",
        ));
    };
    let (ptr, i8t) = (g.m.ty_ptr(), g.m.ty_i8());
    let (desc_at, at) = (g.m.const_i64(DESC_AT), g.m.const_i64(VALUE_AT));
    let mut b = Builder::new(g.m);
    b.position_before(i);
    let table = b.load(ptr, e).map_err(err)?;
    let d = b.elem(i8t, e, &[desc_at]).map_err(err)?;
    let desc = b.load(ptr, d).map_err(err)?;
    let body = b.elem(i8t, e, &[at]).map_err(err)?;
    let mut call_args = vec![desc, table, body];
    call_args.extend_from_slice(args);
    let c = b.call(shared, &call_args).map_err(err)?;
    Ok(b.module().ty(c).is_some().then_some(c))
}
