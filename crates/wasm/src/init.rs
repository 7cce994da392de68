//! The module initializer, `wasm-init:<name>`: what wasm does when it instantiates a module.
//!
//! In order: return at once if it already ran (a guard global); run the initializers of the
//! modules this one imports from, in the order of their first import; allocate the defined
//! memory's initial pages and the defined tables' initial entries; set the globals whose
//! initial value is another global; write the active element segments into their tables and
//! copy the active data segments (trapping if one does not fit the memory); call the `start`
//! function.

use irkit_core::{Builder, Inst, IntBinary, IntCC, Module};
use wasmparser::{ConstExpr, Data, DataKind, Element, ElementItems, ElementKind, Operator};

use crate::env::Libc;
use crate::env::{Env, Memory, Table};
use crate::error::{At, Place, WasmError};
use crate::memory;
use crate::names;
use crate::table::{self, empty_blocks};

/// A defined global whose initial value is the value of another (imported) global.
pub struct GlobalInit<'a> {
    /// The global to set.
    pub dst: u32,
    /// Its initial value: a `global.get`, or an extended constant expression.
    pub expr: ConstExpr<'a>,
}

/// The limits an imported memory or table is declared with, which the exported one must
/// match (wasm's import matching): its size at least `min`, and, if the import declares a
/// maximum, a declared maximum of at most that.
pub struct ImportLimits {
    /// The imported global (the memory's or the table's: `{ptr, i64 size, maximum, i64
    /// capacity}`).
    pub global: Inst,
    /// How far to shift the size field right to count in the limits' unit (16 for a memory's
    /// bytes to pages, 0 for a table's entries).
    pub unit_shift: u64,
    /// The import's minimum.
    pub min: u64,
    /// The import's maximum, if it declares one.
    pub max: Option<u64>,
    /// Whether the global's maximum field is an `i32` (a memory's) rather than an `i64`.
    pub max_is_i32: bool,
}

/// What the initializer does.
pub struct Init<'s, 'a> {
    /// The module's name.
    pub name: &'s str,
    /// The modules imported from, in order of first import.
    pub init_modules: Vec<String>,
    /// The defined memories and their initial pages.
    pub memories: Vec<(Memory, u64)>,
    /// The defined tables, their initial lengths and the expression of their initial entries
    /// (`None`: null).
    pub tables: Vec<(Table, u64, Option<ConstExpr<'a>>)>,
    /// The limits of the imported memory and table.
    pub import_limits: Vec<ImportLimits>,
    /// The C functions, if there is a memory.
    pub libc: Option<Libc>,
    /// Globals set from other globals.
    pub global_inits: Vec<GlobalInit<'a>>,
    /// The data segments.
    pub data: &'s [Data<'a>],
    /// The element segments.
    pub elements: &'s [Element<'a>],
    /// The start function and the offset of its section.
    pub start: Option<(u32, u64)>,
}

impl Init<'_, '_> {
    /// Builds the initializer into `m`.
    pub fn build(&self, m: &mut Module, env: &Env) -> Result<Inst, WasmError> {
        let place = Place::at(0);
        let mut b = Builder::new(m);
        let i1 = b.module().ty_i1();
        let void = b.module().ty_void();
        let sig = b.module().ty_fn(void, &[]).at(place)?;
        let guard = b.global_var("initialized", i1, None).at(place)?;
        let f = b.func("wasm_init", sig).at(place)?;
        b.export(f, &names::init_symbol(self.name)).at(place)?;
        let (entry, _) = b.entry_block(f).at(place)?;
        let [done, go, trap] = empty_blocks(&mut b, f, place)?;
        b.position_at_end(trap);
        b.ins().trap();
        let mut traps = Traps {
            f,
            blocks: Vec::new(),
        };
        b.position_at_end(done);
        b.ins().ret(None);
        b.position_at_end(entry);
        let ran = b.ins().load(i1, guard);
        b.ins().br(ran, done, &[], go, &[]);
        b.position_at_end(go);
        let t = b.module().const_bool(true);
        b.ins().store(guard, t);
        for module in &self.init_modules {
            let name = format!("init_{}", crate::names::escape(module));
            let d = b
                .import_func(&name, sig, &names::init_symbol(module))
                .at(place)?;
            b.ins().call(d, &[]);
        }
        if !self.import_limits.is_empty() {
            let trap = traps.block(&mut b, crate::traps::INCOMPATIBLE_IMPORT, place)?;
            for l in &self.import_limits {
                check_limits(&mut b, f, trap, l, place)?;
            }
        }
        for (mem, initial) in &self.memories {
            if *initial == 0 {
                continue;
            }
            let n = b.module().const_i32(*initial as i32);
            let r = b.ins().mem_grow(mem.global, n);
            let m1 = b.module().const_i32(-1);
            let failed = b.ins().icmp(IntCC::Eq, r, m1);
            check(&mut b, f, failed, trap, place)?;
        }
        for (t, initial, entry) in &self.tables {
            if *initial == 0 {
                continue;
            }
            let grow = env
                .table_helpers
                .ok_or_else(|| WasmError::unsupported("a table without helpers", place))?
                .grow;
            let n = b.module().const_i32(*initial as i32);
            let entry = match entry {
                Some(e) => const_expr(&mut b, env, e, place)?,
                None => b.module().const_null(),
            };
            let r = b.ins().call(grow, &[t.global, n, entry]);
            let m1 = b.module().const_i32(-1);
            let failed = b.ins().icmp(IntCC::Eq, r, m1);
            check(&mut b, f, failed, trap, place)?;
        }
        for gi in &self.global_inits {
            let dst = env
                .globals
                .get(gi.dst as usize)
                .copied()
                .ok_or_else(|| WasmError::unsupported(format!("global {}", gi.dst), place))?;
            let v = const_expr(&mut b, env, &gi.expr, place)?;
            dst.store(&mut b, v);
        }
        for e in self.elements {
            let trap = traps.block(&mut b, crate::traps::OUT_OF_BOUNDS_TABLE, place)?;
            self.element(&mut b, env, f, trap, e)?;
        }
        for d in self.data {
            let place = Place::at(d.range.start);
            let DataKind::Active {
                offset_expr,
                memory_index,
            } = &d.kind
            else {
                continue;
            };
            let (Some(&mem), Some(libc)) = (env.memories.get(*memory_index as usize), self.libc)
            else {
                return Err(WasmError::unsupported(
                    "a data segment without a memory",
                    place,
                ));
            };
            let offset = offset(&mut b, env, offset_expr, place)?;
            let len = b.module().const_i64(d.data.len() as i64);
            let end = b.ins().iadd(offset, len);
            let size = memory::load_field(&mut b, &mem, 1);
            let oob = b.ins().icmp(IntCC::Ugt, end, size);
            let trap = traps.block(&mut b, crate::traps::OUT_OF_BOUNDS_MEMORY, place)?;
            check(&mut b, f, oob, trap, place)?;
            if d.data.is_empty() {
                continue;
            }
            let bytes = b.module().const_bytes(d.data);
            let bytes_ty = b
                .module()
                .ty(bytes)
                .ok_or_else(|| WasmError::unsupported("an untyped constant", place))?;
            let seg = b.global_const("data", bytes_ty, bytes).at(place)?;
            let base = memory::load_field(&mut b, &mem, 0);
            let i8t = b.module().ty_i8();
            let dst = b.ins().elem(i8t, base, &[offset]);
            b.ins().call(libc.memcpy, &[dst, seg, len]);
        }
        if let Some((start, offset)) = self.start {
            let place = Place::at(offset);
            let s = env
                .funcs
                .get(start as usize)
                .ok_or_else(|| WasmError::unsupported(format!("start function {start}"), place))?;
            b.ins().call(s.inst, &[]);
        }
        b.ins().ret(None);
        Ok(f)
    }
}

impl Init<'_, '_> {
    /// Writes the entries of an active element segment into its table, trapping if it does
    /// not fit.
    fn element(
        &self,
        b: &mut Builder<'_>,
        env: &Env,
        f: Inst,
        trap: Inst,
        e: &Element<'_>,
    ) -> Result<(), WasmError> {
        let place = Place::at(e.range.start);
        let ElementKind::Active {
            offset_expr,
            table_index,
        } = &e.kind
        else {
            return Ok(());
        };
        let index = table_index.unwrap_or(0);
        let t =
            env.tables.get(index as usize).copied().ok_or_else(|| {
                WasmError::unsupported("an element segment without a table", place)
            })?;
        let items = segment_items(e, place)?;
        let off = offset(b, env, offset_expr, place)?;
        let n = b.module().const_i64(items.len() as i64);
        let end = b.ins().iadd(off, n);
        let len = table::load_field(b, &t, 1);
        let oob = b.ins().icmp(IntCC::Ugt, end, len);
        check(b, f, oob, trap, place)?;
        let entries = table::load_field(b, &t, 0);
        for (k, item) in items.into_iter().enumerate() {
            let kc = b.module().const_i64(k as i64);
            let idx = b.ins().iadd(off, kc);
            let entry = table::entry_addr(b, entries, idx);
            let v = match item {
                Item::Func(fi) => table::record(b, env, fi, place)?,
                Item::Null => b.module().const_null(),
                Item::Global(g) => {
                    let g = env
                        .globals
                        .get(g as usize)
                        .ok_or_else(|| WasmError::unsupported(format!("global {g}"), place))?;
                    g.load(b)
                }
            };
            b.ins().store(entry, v);
        }
        Ok(())
    }
}

/// One item of an element segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// `ref.func f` (or a function index).
    Func(u32),
    /// `ref.null`.
    Null,
    /// `global.get g` (of an imported global of a reference type).
    Global(u32),
}

/// The items an element segment lists, in order.
pub(crate) fn segment_items(e: &Element<'_>, place: Place) -> Result<Vec<Item>, WasmError> {
    let invalid = |e: wasmparser::BinaryReaderError| WasmError::invalid(&e);
    let mut items = Vec::new();
    match &e.items {
        ElementItems::Functions(r) => {
            for i in r.clone() {
                items.push(Item::Func(i.map_err(invalid)?));
            }
        }
        ElementItems::Expressions(_, r) => {
            for x in r.clone() {
                let x = x.map_err(invalid)?;
                items.push(match x.get_operators_reader().read().map_err(invalid)? {
                    Operator::RefFunc { function_index } => Item::Func(function_index),
                    Operator::RefNull { .. } => Item::Null,
                    Operator::GlobalGet { global_index } => Item::Global(global_index),
                    other => return Err(not_translated("element expression", &other, place)),
                });
            }
        }
    }
    Ok(items)
}

/// The value of an offset expression (an `i32` constant expression) as an `i64`.
fn offset(
    b: &mut Builder<'_>,
    env: &Env,
    expr: &ConstExpr<'_>,
    place: Place,
) -> Result<Inst, WasmError> {
    let i64t = b.module().ty_i64();
    let v = const_expr(b, env, expr, place)?;
    Ok(b.ins().zext(i64t, v))
}

/// The value of a constant expression, computed where the builder is (in the initializer): a
/// constant (a number, `ref.null`, `ref.func`), a `global.get`, or (extended constant expressions, WebAssembly 3.0) any
/// sequence of those and `i32`/`i64` `add`, `sub` and `mul`, which wrap as in code. The
/// validator has checked the expression's stack and types.
pub(crate) fn const_expr(
    b: &mut Builder<'_>,
    env: &Env,
    expr: &ConstExpr<'_>,
    place: Place,
) -> Result<Inst, WasmError> {
    let mut stack: Vec<Inst> = Vec::new();
    let mut ops = expr.get_operators_reader();
    loop {
        let op = ops.read().map_err(|e| WasmError::invalid(&e))?;
        let mut binary = |b: &mut Builder<'_>, op: IntBinary| {
            let (Some(y), Some(x)) = (stack.pop(), stack.pop()) else {
                return Err(WasmError::unsupported(
                    "an unbalanced constant expression",
                    place,
                ));
            };
            stack.push(b.ins().int_binary(op, x, y));
            Ok(())
        };
        match op {
            Operator::End => break,
            Operator::I32Const { value } => stack.push(b.module().const_i32(value)),
            Operator::I64Const { value } => stack.push(b.module().const_i64(value)),
            Operator::RefNull { .. } => stack.push(b.module().const_null()),
            Operator::RefFunc { function_index } => {
                stack.push(table::record(b, env, function_index, place)?)
            }
            Operator::I32Add | Operator::I64Add => binary(b, IntBinary::Iadd)?,
            Operator::I32Sub | Operator::I64Sub => binary(b, IntBinary::Isub)?,
            Operator::I32Mul | Operator::I64Mul => binary(b, IntBinary::Imul)?,
            Operator::GlobalGet { global_index } => {
                let g = env.globals.get(global_index as usize).ok_or_else(|| {
                    WasmError::unsupported(format!("global {global_index}"), place)
                })?;
                stack.push(g.load(b));
            }
            other => return Err(not_translated("constant expression", &other, place)),
        }
    }
    match stack.as_slice() {
        [v] => Ok(*v),
        _ => Err(WasmError::unsupported(
            "an unbalanced constant expression",
            place,
        )),
    }
}

/// The refusal of an operator of a constant or element expression (`what`) that is not
/// translated: `what \`op\``.
pub(crate) fn not_translated(what: &str, op: &Operator<'_>, place: Place) -> WasmError {
    WasmError::unsupported(
        format!("{what} `{}`", crate::func::operator_name(op)),
        place,
    )
}

/// The initializer's blocks that trap with a wasm message, made on first use (one per kind).
struct Traps {
    f: Inst,
    blocks: Vec<(&'static str, Inst)>,
}

impl Traps {
    /// The block that traps with `kind`; the builder's cursor stays where it was.
    fn block(
        &mut self,
        b: &mut Builder<'_>,
        kind: &'static str,
        place: Place,
    ) -> Result<Inst, WasmError> {
        if let Some(&(_, t)) = self.blocks.iter().find(|(k, _)| *k == kind) {
            return Ok(t);
        }
        let here = b.current_block();
        let [t] = empty_blocks(b, self.f, place)?;
        b.position_at_end(t);
        b.ins().trap_msg(kind);
        if let Some(here) = here {
            b.position_at_end(here);
        }
        self.blocks.push((kind, t));
        Ok(t)
    }
}

/// Traps to `trap` unless the imported global of `l` satisfies its limits (its modules'
/// initializers have run: the size is the current one).
fn check_limits(
    b: &mut Builder<'_>,
    f: Inst,
    trap: Inst,
    l: &ImportLimits,
    place: Place,
) -> Result<(), WasmError> {
    let ty = b
        .module()
        .ty(l.global)
        .ok_or_else(|| WasmError::unsupported("an untyped import", place))?;
    let (i32t, i64t) = (b.module().ty_i32(), b.module().ty_i64());
    let field = |b: &mut Builder<'_>, k: i32| {
        let zero = b.module().const_i64(0);
        let kc = b.module().const_i32(k);
        let a = b.ins().elem(ty, l.global, &[zero, kc]);
        if k == 2 && l.max_is_i32 {
            let v = b.ins().load(i32t, a);
            b.ins().zext(i64t, v)
        } else {
            b.ins().load(i64t, a)
        }
    };
    let size = field(b, 1);
    let shift = b.module().const_i64(l.unit_shift as i64);
    let units = b.ins().lshr(size, shift);
    let min = b.module().const_i64(l.min as i64);
    let small = b.ins().icmp(IntCC::Ult, units, min);
    check(b, f, small, trap, place)?;
    if let Some(max) = l.max {
        let declared = field(b, 2);
        let max = b.module().const_i64(max as i64);
        let big = b.ins().icmp(IntCC::Ugt, declared, max);
        check(b, f, big, trap, place)?;
    }
    Ok(())
}

/// Traps if `cond`; continues in a new block of `f` otherwise.
fn check(
    b: &mut Builder<'_>,
    f: Inst,
    cond: Inst,
    trap: Inst,
    place: Place,
) -> Result<(), WasmError> {
    let [cont] = empty_blocks(b, f, place)?;
    b.ins().br(cond, trap, &[], cont, &[]);
    b.position_at_end(cont);
    Ok(())
}
