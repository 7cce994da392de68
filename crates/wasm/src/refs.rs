//! The operators on references and tables in a function body: `ref.null`, `ref.is_null`,
//! `ref.func`, `table.get/set/size/grow/fill/copy/init`, `elem.drop` and `call_indirect`, on
//! any table (representation in [`crate::table`]).
//!
//! Every index is checked against the table's current length (loaded at the operator: a call
//! may have grown the table) and traps with wasm's message; ranges (`fill`, `copy`, `init`)
//! are checked whole before any entry is written.

use irkit_core::{Inst, IntCC};

use crate::cfg::{Edge, Term};

use crate::env::Table;
use crate::error::{At, WasmError};
use crate::func::FuncTranslator;
use crate::ops::Ty;
use crate::table::{self, ENTRY_BYTES, entry_addr, load_field};
use crate::traps::OUT_OF_BOUNDS_TABLE;
use crate::types;

impl FuncTranslator<'_, '_> {
    /// Translates a reference or table operator; `false` if `op` is not one.
    pub(crate) fn table_operator(
        &mut self,
        op: &wasmparser::Operator<'_>,
    ) -> Result<bool, WasmError> {
        use wasmparser::Operator as O;
        match *op {
            O::RefNull { .. } => {
                let null = self.b.module().const_null();
                self.stack.push(null);
            }
            O::RefIsNull => {
                let v = self.pop();
                let null = self.b.module().const_null();
                let c = self.b.ins().icmp(IntCC::Eq, v, null);
                let i32t = self.ty(Ty::I32);
                let r = self.b.ins().zext(i32t, c);
                self.stack.push(r);
            }
            O::RefFunc { function_index } => {
                let place = self.place();
                let r = table::record(&mut self.b, self.env, function_index, place)?;
                self.stack.push(r);
            }
            // Typed function references (WebAssembly 3.0).
            O::RefAsNonNull => {
                let v = self.pop();
                self.stack.push(v);
                let is_null = self.is_null(v);
                self.trap_if(is_null, crate::traps::NULL_REFERENCE)?;
            }
            O::BrOnNull { relative_depth } => {
                // Null: to the label with the operands below the reference; else on, with it.
                let v = self.pop();
                let is_null = self.is_null(v);
                let e = self.branch_edge(relative_depth)?;
                let cont = self.new_block(&[])?;
                self.terminate(Term::Br(is_null, e, Edge::new(cont, &[])));
                self.ssa.seal_block(cont);
                self.switch_to(cont);
                self.stack.push(v);
            }
            O::BrOnNonNull { relative_depth } => {
                // Not null: to the label with the reference last; else on, without it.
                let v = self.pop();
                self.stack.push(v);
                let is_null = self.is_null(v);
                let e = self.branch_edge(relative_depth)?;
                let cont = self.new_block(&[])?;
                self.terminate(Term::Br(is_null, Edge::new(cont, &[]), e));
                self.ssa.seal_block(cont);
                self.switch_to(cont);
                self.pop();
            }
            O::CallRef { type_index } => self.call_ref(type_index, false)?,
            O::ReturnCallRef { type_index } => self.call_ref(type_index, true)?,
            O::TableGet { table } => {
                let t = self.table(table)?;
                let i = self.pop_u64();
                let a = self.checked_entry(&t, i)?;
                let p = self.b.module().ty_ptr();
                let v = self.b.ins().load(p, a);
                self.stack.push(v);
            }
            O::TableSet { table } => {
                let t = self.table(table)?;
                let v = self.pop();
                let i = self.pop_u64();
                let a = self.checked_entry(&t, i)?;
                self.b.ins().store(a, v);
            }
            O::TableSize { table } => {
                let t = self.table(table)?;
                let len = load_field(&mut self.b, &t, 1);
                let i32t = self.ty(Ty::I32);
                let r = self.b.ins().trunc(i32t, len);
                self.stack.push(r);
            }
            O::TableGrow { table } => {
                let t = self.table(table)?;
                let n = self.pop();
                let init = self.pop();
                let grow = self.helpers()?.grow;
                let r = self.b.ins().call(grow, &[t.global, n, init]);
                self.stack.push(r);
            }
            O::TableFill { table } => {
                let t = self.table(table)?;
                let n = self.pop_u64();
                let v = self.pop();
                let i = self.pop_u64();
                let len = load_field(&mut self.b, &t, 1);
                self.check_range(i, n, len, OUT_OF_BOUNDS_TABLE)?;
                let entries = load_field(&mut self.b, &t, 0);
                let fill = self.helpers()?.fill;
                self.b.ins().call(fill, &[entries, i, n, v]);
            }
            O::TableCopy {
                dst_table,
                src_table,
            } => self.table_copy(dst_table, src_table)?,
            O::TableInit { elem_index, table } => self.table_init(elem_index, table)?,
            O::ElemDrop { elem_index } => {
                let seg = self.elem_segment(elem_index)?;
                let zero = self.b.module().const_i64(0);
                self.b.ins().store(seg.len, zero);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn table(&self, index: u32) -> Result<Table, WasmError> {
        self.env
            .tables
            .get(index as usize)
            .copied()
            .ok_or_else(|| WasmError::unsupported(format!("table {index}"), self.place()))
    }

    fn helpers(&self) -> Result<crate::env::TableHelpers, WasmError> {
        self.env
            .table_helpers
            .ok_or_else(|| WasmError::unsupported("a table operator without a table", self.place()))
    }

    fn elem_segment(&self, index: u32) -> Result<crate::env::ElemSegment, WasmError> {
        self.env
            .elems
            .get(index as usize)
            .copied()
            .ok_or_else(|| WasmError::unsupported(format!("element segment {index}"), self.place()))
    }

    /// The address of entry `i` (an `i64`) of `t`, trapping with "out of bounds table
    /// access" unless `i < length`.
    fn checked_entry(&mut self, t: &Table, i: Inst) -> Result<Inst, WasmError> {
        let len = load_field(&mut self.b, t, 1);
        let oob = self.b.ins().icmp(IntCC::Uge, i, len);
        self.trap_if(oob, OUT_OF_BOUNDS_TABLE)?;
        let entries = load_field(&mut self.b, t, 0);
        Ok(entry_addr(&mut self.b, entries, i))
    }

    /// Copies `n` entries from `src` to `dst` with the C function `copy` (`memmove` or
    /// `memcpy`).
    fn copy_entries(&mut self, copy: Inst, dst: Inst, src: Inst, n: Inst) {
        let size = self.b.module().const_i64(ENTRY_BYTES);
        let bytes = self.b.ins().imul(n, size);
        self.b.ins().call(copy, &[dst, src, bytes]);
    }

    /// `table.copy`: both ranges checked before anything moves (they may overlap).
    fn table_copy(&mut self, dst_table: u32, src_table: u32) -> Result<(), WasmError> {
        let (dt, st) = (self.table(dst_table)?, self.table(src_table)?);
        let [dst, src, n] = self.pop_range();
        let src_len = load_field(&mut self.b, &st, 1);
        self.check_range(src, n, src_len, OUT_OF_BOUNDS_TABLE)?;
        let dst_len = load_field(&mut self.b, &dt, 1);
        self.check_range(dst, n, dst_len, OUT_OF_BOUNDS_TABLE)?;
        let d_entries = load_field(&mut self.b, &dt, 0);
        let s_entries = load_field(&mut self.b, &st, 0);
        let d = entry_addr(&mut self.b, d_entries, dst);
        let s = entry_addr(&mut self.b, s_entries, src);
        let memmove = self.libc()?.memmove;
        self.copy_entries(memmove, d, s, n);
        Ok(())
    }

    /// `table.init`: entries `src..src+n` of element segment `index` (of length 0 once
    /// dropped) to `dst` of table `table`, both ranges checked first.
    fn table_init(&mut self, index: u32, table: u32) -> Result<(), WasmError> {
        let t = self.table(table)?;
        let seg = self.elem_segment(index)?;
        let [dst, src, n] = self.pop_range();
        let i64t = self.b.module().ty_i64();
        let seg_len = self.b.ins().load(i64t, seg.len);
        self.check_range(src, n, seg_len, OUT_OF_BOUNDS_TABLE)?;
        let len = load_field(&mut self.b, &t, 1);
        self.check_range(dst, n, len, OUT_OF_BOUNDS_TABLE)?;
        let entries = load_field(&mut self.b, &t, 0);
        let d = entry_addr(&mut self.b, entries, dst);
        let s = entry_addr(&mut self.b, seg.entries, src);
        let memcpy = self.libc()?.memcpy;
        self.copy_entries(memcpy, d, s, n);
        Ok(())
    }

    /// Whether reference `v` is null (an `i1`).
    fn is_null(&mut self, v: Inst) -> Inst {
        let null = self.b.module().const_null();
        self.b.ins().icmp(IntCC::Eq, v, null)
    }

    /// `call_ref (type type_index)`: the reference non-null ("null function reference"), then
    /// its record's function; validation has checked its type. `tail`: `return_call_ref`.
    fn call_ref(&mut self, type_index: u32, tail: bool) -> Result<(), WasmError> {
        let ft = self.func_type(type_index)?;
        let sig = self.signature(&ft)?;
        let rec = self.pop();
        let args = self.pop_n(ft.params().len());
        let is_null = self.is_null(rec);
        self.trap_if(is_null, crate::traps::NULL_FUNCTION_REFERENCE)?;
        self.call_record(&ft, sig, rec, &args, tail)
    }

    /// Function type `type_index`.
    fn func_type(&self, type_index: u32) -> Result<wasmparser::FuncType, WasmError> {
        self.env
            .types
            .get(type_index as usize)
            .cloned()
            .ok_or_else(|| WasmError::unsupported(format!("type {type_index}"), self.place()))
    }

    /// The irkit signature of function type `ft`.
    fn signature(&mut self, ft: &wasmparser::FuncType) -> Result<Inst, WasmError> {
        let place = self.place();
        types::signature(self.b.module(), ft)
            .map_err(|v| {
                WasmError::unsupported(format!("value type {}", types::val_type_name(v)), place)
            })?
            .at(place)
    }

    /// irkit's `call_indirect` of the function of record `rec` (non-null, of type `ft`) with
    /// `args`; its results pushed. `tail`: its `tail_call_indirect`, which ends the block.
    fn call_record(
        &mut self,
        ft: &wasmparser::FuncType,
        sig: Inst,
        rec: Inst,
        args: &[Inst],
        tail: bool,
    ) -> Result<(), WasmError> {
        let place = self.place();
        let p = self.b.module().ty_ptr();
        let rty = table::record_type(self.b.module()).at(place)?;
        let zero = self.b.module().const_i64(0);
        let k0 = self.b.module().const_i32(0);
        let fa = self.b.ins().elem(rty, rec, &[zero, k0]);
        let fp = self.b.ins().load(p, fa);
        if tail {
            self.terminate(Term::TailCallIndirect(sig, fp, args.to_vec()));
            self.reachable = false;
            return Ok(());
        }
        let r = self.b.ins().call_indirect(sig, fp, args);
        self.push_results(r, ft.results().len());
        Ok(())
    }

    /// `call_indirect (type type_index)` through table `table_index`: the index checked
    /// ("undefined element"), the entry's record non-null ("uninitialized element") and of
    /// the expected signature id ("indirect call type mismatch"), then irkit's
    /// `call_indirect` of the record's function (`tail`: `return_call_indirect`, its
    /// `tail_call_indirect`).
    pub(crate) fn call_indirect(
        &mut self,
        type_index: u32,
        table_index: u32,
        tail: bool,
    ) -> Result<(), WasmError> {
        let place = self.place();
        let t = self.table(table_index)?;
        let ft = self.func_type(type_index)?;
        let expected = table::sig_id(&mut self.b, self.env, &ft, place)?;
        let sig = self.signature(&ft)?;
        let index = self.pop();
        let args = self.pop_n(ft.params().len());
        let i64t = self.ty(Ty::I64);
        let index = self.b.ins().zext(i64t, index);
        let len = load_field(&mut self.b, &t, 1);
        let oob = self.b.ins().icmp(IntCC::Uge, index, len);
        self.trap_if(oob, crate::traps::UNDEFINED_ELEMENT)?;
        let entries = load_field(&mut self.b, &t, 0);
        let e = entry_addr(&mut self.b, entries, index);
        let p = self.b.module().ty_ptr();
        let rec = self.b.ins().load(p, e);
        let is_null = self.is_null(rec);
        self.trap_if(is_null, crate::traps::UNINITIALIZED_ELEMENT)?;
        let rty = table::record_type(self.b.module()).at(place)?;
        let zero = self.b.module().const_i64(0);
        let k1 = self.b.module().const_i32(1);
        let sa = self.b.ins().elem(rty, rec, &[zero, k1]);
        let sp = self.b.ins().load(p, sa);
        let wrong = self.b.ins().icmp(IntCC::Ne, sp, expected);
        self.trap_if(wrong, crate::traps::INDIRECT_CALL_TYPE_MISMATCH)?;
        self.call_record(&ft, sig, rec, &args, tail)
    }
}
