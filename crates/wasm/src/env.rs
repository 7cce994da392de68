//! What a function body needs to know about its module: the irkit definitions standing for
//! wasm's functions, globals and memory, and the wasm types.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;

use irkit_core::{Adopted, BranchPoint, Builder, Inst};
use wasmparser::{FuncType, ValType};

/// A wasm function: its irkit `func` and its wasm type.
#[derive(Clone, Debug)]
pub struct Func {
    /// The irkit function (a declaration when imported).
    pub inst: Inst,
    /// Its wasm type.
    pub ty: FuncType,
}

/// A wasm global.
#[derive(Clone, Copy, Debug)]
pub struct Global {
    /// The irkit `global_var` or `global_const`.
    pub inst: Inst,
    /// Its irkit value type.
    pub ty: Inst,
    /// Its wasm value type.
    pub wasm_ty: ValType,
    /// For a global of `externref`, its irkit type `struct {ptr}` (the value is the field), so
    /// that the linker tells it from a global of `funcref` (`ptr`); `None` otherwise.
    pub boxed: Option<Inst>,
}

impl Global {
    /// The address of the value: the global itself, or its field.
    fn addr(&self, b: &mut Builder<'_>) -> Inst {
        match self.boxed {
            None => self.inst,
            Some(ty) => {
                let zero = b.module().const_i64(0);
                let k = b.module().const_i32(0);
                b.ins().elem(ty, self.inst, &[zero, k])
            }
        }
    }

    /// Loads the global's value.
    pub fn load(&self, b: &mut Builder<'_>) -> Inst {
        let a = self.addr(b);
        b.ins().load(self.ty, a)
    }

    /// Stores `v` into the global.
    pub fn store(&self, b: &mut Builder<'_>, v: Inst) {
        let a = self.addr(b);
        b.ins().store(a, v);
    }
}

/// The irkit type of a global of wasm type `t` holding values of irkit type `ty`: `ty`, except
/// `struct {ptr}` for `externref` (returned second).
pub fn global_type(
    m: &mut irkit_core::Module,
    t: ValType,
    ty: Inst,
) -> Result<(Inst, Option<Inst>), irkit_core::CoreError> {
    if matches!(t, ValType::Ref(r) if r.is_extern_ref()) {
        let boxed = m.ty_struct(&[ty])?;
        Ok((boxed, Some(boxed)))
    } else {
        Ok((ty, None))
    }
}

/// The linear memory: the IR's memory record global (spec/ir.md, "Linear memories").
#[derive(Clone, Copy, Debug)]
pub struct Memory {
    /// The global `{ptr base, i64 size in bytes, i32 maximum pages, i64 reserved}`.
    pub global: Inst,
    /// Its type, `struct {ptr, i64, i32, i64}`.
    pub ty: Inst,
}

/// The C functions the memory's bulk operators and data segments and the tables need
/// (declared by `Libc::declare` in [`crate::memory`]): `calloc` and `free` (a table's
/// entries: zeroed, never `malloc` and `memset`, so entries never touched cost nothing),
/// `memcpy`, `memmove` and `memset`.
#[derive(Clone, Copy, Debug)]
pub struct Libc {
    /// `calloc(i64 count, i64 size) -> ptr`.
    pub calloc: Inst,
    /// `free(ptr)`.
    pub free: Inst,
    /// `memcpy(ptr, ptr, i64) -> ptr`.
    pub memcpy: Inst,
    /// `memmove(ptr, ptr, i64) -> ptr`.
    pub memmove: Inst,
    /// `memset(ptr, i32, i64) -> ptr`.
    pub memset: Inst,
}

/// The module's entities, in wasm's index spaces (imports first).
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Every function type of the type section.
    pub types: Vec<FuncType>,
    /// Every function.
    pub funcs: Vec<Func>,
    /// Every global.
    pub globals: Vec<Global>,
    /// Every memory, imported ones first (wasm's memory index space).
    pub memories: Vec<Memory>,
    /// Every table, imported ones first (wasm's table index space).
    pub tables: Vec<Table>,
    /// The signature id global of each canonical signature in use ([`crate::table`]), made
    /// on first use.
    pub sigs: RefCell<HashMap<String, Inst>>,
    /// The function record (`global_const {ptr function, ptr signature id}`, what a
    /// `funcref` points to) of each wasm function referenced, made on first use.
    pub records: RefCell<HashMap<u32, Inst>>,
    /// The module's table helpers, if it has or imports a table.
    pub table_helpers: Option<TableHelpers>,
    /// The C functions, if the module has or imports a memory or a table.
    pub libc: Option<Libc>,
    /// Every data segment, for `memory.init` and `data.drop` (empty when the module has no
    /// data count section, which those operators require).
    pub data: Vec<DataSegment>,
    /// Every element segment, for `table.init` and `elem.drop` (empty without a table).
    pub elems: Vec<ElemSegment>,
}

impl Env {
    /// The definitions `branch` (this `Env` when a branch of the module was taken at `at`,
    /// since used by the branch's bodies) made on first use that this one has too, each
    /// mapped to this one's: what [`irkit_core::Module::adopt`] maps instead of adopting.
    pub fn same_made(&self, branch: &Env, at: BranchPoint) -> HashMap<Inst, Inst> {
        let mut same = HashMap::new();
        same_in(&self.sigs.borrow(), &branch.sigs.borrow(), at, &mut same);
        same_in(
            &self.records.borrow(),
            &branch.records.borrow(),
            at,
            &mut same,
        );
        same
    }

    /// Records the definitions `branch` made on first use, adopted as `adopted` says, that
    /// this one did not have.
    pub fn take_made(&mut self, branch: &Env, adopted: &Adopted) {
        take_from(&mut self.sigs.borrow_mut(), &branch.sigs.borrow(), adopted);
        take_from(
            &mut self.records.borrow_mut(),
            &branch.records.borrow(),
            adopted,
        );
    }
}

/// Into `same`: each definition of `theirs` made since `at` whose key `mine` has too, mapped
/// to `mine`'s.
fn same_in<K: Eq + Hash>(
    mine: &HashMap<K, Inst>,
    theirs: &HashMap<K, Inst>,
    at: BranchPoint,
    same: &mut HashMap<Inst, Inst>,
) {
    for (key, &made) in theirs.iter().filter(|(_, i)| i.idx() >= at.arena_len()) {
        if let Some(&m) = mine.get(key) {
            same.insert(made, m);
        }
    }
}

/// Into `mine`: each definition of `theirs` under a key `mine` lacks, as `adopted` moved it.
fn take_from<K: Clone + Eq + Hash>(
    mine: &mut HashMap<K, Inst>,
    theirs: &HashMap<K, Inst>,
    adopted: &Adopted,
) {
    for (key, &made) in theirs {
        if !mine.contains_key(key)
            && let Some(m) = adopted.get(made)
        {
            mine.insert(key.clone(), m);
        }
    }
}

/// The functions `table.grow` and `table.fill` call ([`crate::table`]).
#[derive(Clone, Copy, Debug)]
pub struct TableHelpers {
    /// `fn(ptr table, i32 delta, ptr init) -> i32`: wasm's `table.grow` on any table.
    pub grow: Inst,
    /// `fn(ptr entries, i64 start, i64 n, ptr value) -> void`: stores `value` into entries
    /// `start..start+n` (the range already checked).
    pub fill: Inst,
}

/// An element segment as `table.init` and `elem.drop` see it.
#[derive(Clone, Copy, Debug)]
pub struct ElemSegment {
    /// A global `i64`: the segment's length, 0 once dropped (an active or declarative segment
    /// is dropped by instantiation).
    pub len: Inst,
    /// The address of its entries, laid out as a table's (`ptr` references; a
    /// `global_const`, null for an empty, active or declarative segment).
    pub entries: Inst,
}

/// A data segment as `memory.init` and `data.drop` see it.
#[derive(Clone, Copy, Debug)]
pub struct DataSegment {
    /// A global `i64`: the segment's length, 0 once dropped (an active segment is dropped by
    /// instantiation).
    pub len: Inst,
    /// The address of its bytes (a `global_const`; null for an empty or active segment).
    pub bytes: Inst,
}

/// A table of references: a global of type [`Table::ty`], whose entries are `ptr`s.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    /// The global `{ptr entries, i64 length, i64 maximum, i64 capacity}` (and an `i8` tag field
    /// for a table of `externref`).
    pub global: Inst,
    /// Its type.
    pub ty: Inst,
}
