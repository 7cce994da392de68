//! Tables of function references and `call_indirect`.
//!
//! A table is a global of type `struct {ptr entries, i64 length, i64 maximum}` (the maximum
//! declared, [`NO_MAX_ENTRIES`] if none: tables do not grow, it is there for import
//! matching); an entry is
//! `struct {ptr function, ptr signature}`, both null in an empty entry. A *signature id* is
//! the address of a one-byte `global_const` exported as `wasm-sig:` + the canonical signature
//! (for example `wasm-sig:(i32 i64)->(f32)`) and marked `linkonce`: every module using the
//! signature has a copy, and linking collapses them into one, so the id is the same in every
//! module of a program. `call_indirect` loads the entry at the index, traps if the index is out
//! of bounds, the entry is null or its signature id is not the expected one, and otherwise
//! calls the function through `call_indirect` with the irkit signature.

use irkit_core::{Builder, CoreError, Inst, IntCC, Module, Opcode, Payload};
use wasmparser::FuncType;

use crate::env::{Env, Table};
use crate::error::{At, Place, WasmError};
use crate::func::FuncTranslator;
use crate::ops::Ty;
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

/// The table global's type and the entry type.
pub fn table_types(m: &mut Module) -> Result<(Inst, Inst), CoreError> {
    let p = m.ty_ptr();
    let i64t = m.ty_i64();
    Ok((m.ty_struct(&[p, i64t, i64t])?, m.ty_struct(&[p, p])?))
}

/// The maximum field of a table declared without a maximum: more than any declared maximum
/// (a `u32`), so an import that declares a maximum never matches it.
pub const NO_MAX_ENTRIES: u64 = 1 << 32;

/// The signature id of `ft`, declared in the module on first use.
pub fn sig_id(
    b: &mut Builder<'_>,
    env: &mut Env,
    ft: &FuncType,
    place: Place,
) -> Result<Inst, WasmError> {
    let name = sig_symbol(ft);
    if let Some(&g) = env.sigs.get(&name) {
        return Ok(g);
    }
    let i8t = b.module().ty_i8();
    let zero = b.module().const_zero(i8t).at(place)?;
    let g = b.global_const("sig", i8t, zero).at(place)?;
    b.export(g, &name).at(place)?;
    b.decorate(g, Opcode::LINKONCE, Vec::new(), Payload::None)
        .at(place)?;
    env.sigs.insert(name, g);
    Ok(g)
}

/// What a table entry holds for wasm function `index`: the function and its signature id.
pub fn func_entry(env: &Env, index: u32, place: Place) -> Result<(Inst, Inst), WasmError> {
    let func = env
        .funcs
        .get(index as usize)
        .ok_or_else(|| WasmError::unsupported(format!("function {index}"), place))?;
    let sig = env
        .sigs
        .get(&sig_symbol(&func.ty))
        .copied()
        .ok_or_else(|| WasmError::unsupported("a function of a signature without an id", place))?;
    Ok((func.inst, sig))
}

/// The address of entry `index` (an `i64`) of the table whose entries start at `entries`.
pub fn entry_addr(b: &mut Builder<'_>, t: &Table, entries: Inst, index: Inst) -> Inst {
    b.ins().elem(t.entry_ty, entries, &[index])
}

/// The address of field `k` of the table global.
fn field(b: &mut Builder<'_>, t: &Table, k: i32) -> Inst {
    let zero = b.module().const_i64(0);
    let k = b.module().const_i32(k);
    b.ins().elem(t.ty, t.global, &[zero, k])
}

/// Loads the entries pointer (`k = 0`), the length (`k = 1`) or the maximum (`k = 2`) of the
/// table.
pub fn load_field(b: &mut Builder<'_>, t: &Table, k: i32) -> Inst {
    let ty = if k == 0 {
        b.module().ty_ptr()
    } else {
        b.module().ty_i64()
    };
    let a = field(b, t, k);
    b.ins().load(ty, a)
}

/// The address of field `k` (0 the function, 1 the signature id) of an entry at `entry`.
pub fn entry_field(b: &mut Builder<'_>, t: &Table, entry: Inst, k: i32) -> Inst {
    let zero = b.module().const_i64(0);
    let k = b.module().const_i32(k);
    b.ins().elem(t.entry_ty, entry, &[zero, k])
}

/// The bytes of one table entry, `struct {ptr, ptr}` (a pointer is 64 bits: spec/ir.md).
const ENTRY_BYTES: i64 = 16;

impl FuncTranslator<'_, '_> {
    /// Translates a table operator of bulk memory (`table.copy`, `table.init`, `elem.drop`);
    /// `false` if `op` is not one.
    pub(crate) fn table_operator(
        &mut self,
        op: &wasmparser::Operator<'_>,
    ) -> Result<bool, WasmError> {
        use wasmparser::Operator as O;
        match op {
            O::TableCopy { .. } => self.table_copy()?,
            O::TableInit { elem_index, .. } => self.table_init(*elem_index)?,
            O::ElemDrop { elem_index } => {
                let seg = self.elem_segment(*elem_index)?;
                let zero = self.b.module().const_i64(0);
                self.b.ins().store(seg.len, zero);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn table(&self) -> Result<Table, WasmError> {
        self.env
            .table
            .ok_or_else(|| WasmError::unsupported("a table operator without a table", self.place()))
    }

    fn elem_segment(&self, index: u32) -> Result<crate::env::ElemSegment, WasmError> {
        self.env
            .elems
            .get(index as usize)
            .copied()
            .ok_or_else(|| WasmError::unsupported(format!("element segment {index}"), self.place()))
    }

    /// Copies `n` entries from `src` to `dst` with the C function `copy` (`memmove` or
    /// `memcpy`).
    fn copy_entries(&mut self, copy: Inst, dst: Inst, src: Inst, n: Inst) {
        let size = self.b.module().const_i64(ENTRY_BYTES);
        let bytes = self.b.ins().imul(n, size);
        self.b.ins().call(copy, &[dst, src, bytes]);
    }

    /// `table.copy` within the one table: both ranges checked before anything moves.
    fn table_copy(&mut self) -> Result<(), WasmError> {
        let t = self.table()?;
        let [dst, src, n] = self.pop_range();
        let len = load_field(&mut self.b, &t, 1);
        let oob = crate::traps::OUT_OF_BOUNDS_TABLE;
        self.check_range(src, n, len, oob)?;
        self.check_range(dst, n, len, oob)?;
        let entries = load_field(&mut self.b, &t, 0);
        let d = entry_addr(&mut self.b, &t, entries, dst);
        let s = entry_addr(&mut self.b, &t, entries, src);
        let memmove = self.libc()?.memmove;
        self.copy_entries(memmove, d, s, n);
        Ok(())
    }

    /// `table.init`: entries `src..src+n` of element segment `index` (of length 0 once
    /// dropped) to `dst`, both ranges checked first.
    fn table_init(&mut self, index: u32) -> Result<(), WasmError> {
        let t = self.table()?;
        let seg = self.elem_segment(index)?;
        let [dst, src, n] = self.pop_range();
        let i64t = self.b.module().ty_i64();
        let seg_len = self.b.ins().load(i64t, seg.len);
        let oob = crate::traps::OUT_OF_BOUNDS_TABLE;
        self.check_range(src, n, seg_len, oob)?;
        let len = load_field(&mut self.b, &t, 1);
        self.check_range(dst, n, len, oob)?;
        let entries = load_field(&mut self.b, &t, 0);
        let d = entry_addr(&mut self.b, &t, entries, dst);
        let s = entry_addr(&mut self.b, &t, seg.entries, src);
        let memcpy = self.libc()?.memcpy;
        self.copy_entries(memcpy, d, s, n);
        Ok(())
    }

    /// `call_indirect (type type_index)` through the table.
    pub(crate) fn call_indirect(&mut self, type_index: u32) -> Result<(), WasmError> {
        let place = self.place();
        let t = self
            .env
            .table
            .ok_or_else(|| WasmError::unsupported("`call_indirect` without a table", place))?;
        let ft = self
            .env
            .types
            .get(type_index as usize)
            .cloned()
            .ok_or_else(|| WasmError::unsupported(format!("type {type_index}"), place))?;
        let expected = *self.env.sigs.get(&sig_symbol(&ft)).ok_or_else(|| {
            WasmError::unsupported(format!("signature {} without an id", canonical(&ft)), place)
        })?;
        let sig = types::signature(self.b.module(), &ft)
            .map_err(|v| {
                WasmError::unsupported(format!("value type {}", types::val_type_name(v)), place)
            })?
            .at(place)?;
        let index = self.pop();
        let args = self.pop_n(ft.params().len());
        let i64t = self.ty(Ty::I64);
        let index = self.b.ins().zext(i64t, index);
        let entries = load_field(&mut self.b, &t, 0);
        let len = load_field(&mut self.b, &t, 1);
        let oob = self.b.ins().icmp(IntCC::Uge, index, len);
        self.trap_if(oob, crate::traps::UNDEFINED_ELEMENT)?;
        let e = entry_addr(&mut self.b, &t, entries, index);
        let p = self.b.module().ty_ptr();
        let fa = entry_field(&mut self.b, &t, e, 0);
        let fp = self.b.ins().load(p, fa);
        let sa = entry_field(&mut self.b, &t, e, 1);
        let sp = self.b.ins().load(p, sa);
        let null = self.b.module().const_null();
        let is_null = self.b.ins().icmp(IntCC::Eq, fp, null);
        self.trap_if(is_null, crate::traps::UNINITIALIZED_ELEMENT)?;
        let wrong = self.b.ins().icmp(IntCC::Ne, sp, expected);
        self.trap_if(wrong, crate::traps::INDIRECT_CALL_TYPE_MISMATCH)?;
        let r = self.b.ins().call_indirect(sig, fp, &args);
        self.reload_memory()?;
        self.push_results(r, ft.results().len());
        Ok(())
    }
}
