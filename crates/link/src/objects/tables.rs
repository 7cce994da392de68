//! The run-time data and routines of the objects of a linked module (spec/linking.md,
//! "Objects", step 5): class descriptors with their vtables and selector tables, the null
//! descriptor and null object, the trait dispatch table packed by row displacement, trait
//! membership tables, the objects' instance variables, and the routines `__irkit.alloc` (over
//! the allocator [`Gc`] chooses), `__irkit.dynmethod` and `__irkit.instance.M`. All are
//! ordinary definitions.

use std::collections::{BTreeSet, HashMap};

use irkit_core::{Builder, CoreError, Inst, IntCC, Module, Opcode, Payload};

use super::Gc;
use super::hierarchy::{Hierarchy, Kind};

/// Offsets in a class descriptor.
pub(super) const DESC_ID: u64 = 0;
pub(super) const DESC_COUNT: u64 = 16;
pub(super) const DESC_SELECTORS: u64 = 24;
pub(super) const DESC_VTABLE: u64 = 32;

/// The interned types the tables and the lowering use.
#[derive(Clone, Copy)]
pub(super) struct Types {
    pub i1: Inst,
    pub i8: Inst,
    pub i64: Inst,
    pub ptr: Inst,
}

impl Types {
    pub fn new(m: &mut Module) -> Types {
        Types {
            i1: m.ty_i1(),
            i8: m.ty_i8(),
            i64: m.ty_i64(),
            ptr: m.ty_ptr(),
        }
    }
}

/// What the lowering needs of the tables.
pub(super) struct Tables {
    /// Descriptor per definition (classes and objects).
    pub desc: HashMap<usize, Inst>,
    /// One word holding the null descriptor's address: what `is` reads for null.
    pub null_object: Inst,
    /// The shared trait dispatch table and each row's offset, by selector.
    pub itable: Option<Inst>,
    pub row: HashMap<String, u64>,
    /// Membership bytes per trait.
    pub members: HashMap<usize, Inst>,
    /// Selector numbers (for `dynmethod`).
    pub selector: HashMap<String, u64>,
    pub alloc: Inst,
    /// `__irkit.dynmethod`, made when a `dynmethod` is lowered.
    pub dynmethod: Option<Inst>,
    /// Accessor per object.
    pub instance: HashMap<usize, Inst>,
}

/// What the code asks of the tables: the selectors called through traits and the traits
/// tested by `is`/`as`.
#[derive(Default)]
pub(super) struct Needs {
    pub trait_selectors: BTreeSet<String>,
    pub tested_traits: BTreeSet<usize>,
    /// Object instructions found.
    pub instructions: u64,
    /// Whether a `dynmethod` is among them.
    pub dynmethod: bool,
}

/// Builds every table and routine into `m`.
pub(super) fn build(
    m: &mut Module,
    h: &Hierarchy,
    needs: &Needs,
    ty: Types,
    gc: Gc,
) -> Result<Tables, CoreError> {
    let classes = h.by_id.len() as u64;
    // Selector numbers: every selector some class implements, in string order.
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for &k in live(h) {
        names.extend(
            h.defs[k]
                .impls
                .keys()
                .filter(|s| h.implementation(k, s).is_some())
                .map(AsRef::as_ref),
        );
    }
    let selector: HashMap<String, u64> = names
        .iter()
        .enumerate()
        .map(|(n, s)| (s.to_string(), n as u64))
        .collect();
    let null = m.const_null();
    let mut b = Builder::new(m);
    // The null descriptor: an id past every class, no methods.
    let head = [ty.i64, ty.i64, ty.i64, ty.ptr];
    let null_ty = b.module().ty_struct(&head)?;
    let null_init = {
        let m = b.module();
        let id = m.const_int(ty.i64, classes)?;
        let zero = m.const_int(ty.i64, 0)?;
        m.const_aggregate(null_ty, &[id, zero, zero, null])?
    };
    let null_desc = b.global_const("__irkit.null_descriptor", null_ty, null_init)?;
    let null_object = b.global_const("__irkit.null_object", ty.ptr, null_desc)?;
    let mut desc = HashMap::new();
    for &k in live(h) {
        let d = &h.defs[k];
        // The selector table, sorted by number.
        let mut entries: Vec<(u64, Inst)> = d
            .impls
            .keys()
            .filter_map(|s| Some((*selector.get(s.as_ref())?, h.implementation(k, s)?)))
            .collect();
        entries.sort_unstable();
        let m = b.module();
        let pair = m.ty_struct(&[ty.i64, ty.ptr])?;
        let table = if entries.is_empty() {
            null
        } else {
            let arr = m.ty_array(pair, entries.len() as u64)?;
            let mut elems = Vec::with_capacity(entries.len());
            for (n, f) in &entries {
                let n = m.const_int(ty.i64, *n)?;
                elems.push(m.const_aggregate(pair, &[n, *f])?);
            }
            let init = m.const_aggregate(arr, &elems)?;
            b.global_const(&format!("__irkit.selectors.{}", d.name), arr, init)?
        };
        let m = b.module();
        let mut fields = head.to_vec();
        let id = m.const_int(ty.i64, d.id)?;
        let last = m.const_int(ty.i64, d.last)?;
        let count = m.const_int(ty.i64, entries.len() as u64)?;
        let mut init = vec![id, last, count, table];
        if !d.slots.is_empty() {
            let arr = m.ty_array(ty.ptr, d.slots.len() as u64)?;
            let vt: Vec<Inst> = d
                .slots
                .iter()
                .map(|s| h.implementation(k, s).unwrap_or(null))
                .collect();
            fields.push(arr);
            init.push(m.const_aggregate(arr, &vt)?);
        }
        let dty = m.ty_struct(&fields)?;
        let init = m.const_aggregate(dty, &init)?;
        let g = b.global_const(&format!("__irkit.class.{}", d.name), dty, init)?;
        desc.insert(k, g);
    }
    let (itable, row) = dispatch_table(&mut b, h, needs, ty, null)?;
    let mut members = HashMap::new();
    for &t in &needs.tested_traits {
        let mut bytes = vec![0u8; classes as usize + 1];
        for (id, &k) in h.by_id.iter().enumerate() {
            bytes[id] = u8::from(h.extends_trait(k, t));
        }
        let m = b.module();
        let arr = m.ty_array(ty.i8, bytes.len() as u64)?;
        let init = m.const_bytes(&bytes);
        let g = b.global_const(&format!("__irkit.members.{}", h.defs[t].name), arr, init)?;
        members.insert(t, g);
    }
    let alloc = alloc(&mut b, gc)?;
    let dynmethod = if needs.dynmethod {
        Some(dynmethod_routine(&mut b, ty)?)
    } else {
        None
    };
    let mut instance = HashMap::new();
    for (k, d) in h.defs.iter().enumerate() {
        if d.kind == Kind::Object && h.live[k] {
            let f = instance_routine(&mut b, ty, d.name.as_str(), d.size, desc[&k], d.ctor, alloc)?;
            instance.insert(k, f);
        }
    }
    Ok(Tables {
        desc,
        null_object,
        itable,
        row,
        members,
        selector,
        alloc,
        dynmethod,
        instance,
    })
}

/// The live classes and objects, by type id: only they have instances, so only they need a
/// descriptor, a selector table or a row entry.
fn live(h: &Hierarchy) -> impl Iterator<Item = &usize> {
    h.by_id.iter().filter(|&&k| h.live[k])
}

/// The trait dispatch table: one row per selector called through a trait, indexed by type id,
/// placed first-fit (largest rows first) where its entries collide with no other row's.
fn dispatch_table(
    b: &mut Builder<'_>,
    h: &Hierarchy,
    needs: &Needs,
    ty: Types,
    null: Inst,
) -> Result<(Option<Inst>, HashMap<String, u64>), CoreError> {
    if needs.trait_selectors.is_empty() {
        return Ok((None, HashMap::new()));
    }
    let mut rows: Vec<(&String, Vec<(u64, Inst)>)> = needs
        .trait_selectors
        .iter()
        .map(|s| {
            let entries = live(h)
                .filter(|&&k| h.defs[k].sees.contains_key(s.as_str()))
                .map(|&k| (h.defs[k].id, h.implementation(k, s).unwrap_or(null)))
                .collect();
            (s, entries)
        })
        .collect();
    rows.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(b.0)));
    let mut used: Vec<bool> = Vec::new();
    let mut cells: Vec<Inst> = Vec::new();
    let mut offsets = HashMap::new();
    for (s, entries) in rows {
        let mut at = 0u64;
        while entries
            .iter()
            .any(|(id, _)| used.get((at + id) as usize).copied().unwrap_or(false))
        {
            at += 1;
        }
        for &(id, f) in &entries {
            let i = (at + id) as usize;
            if used.len() <= i {
                used.resize(i + 1, false);
                cells.resize(i + 1, null);
            }
            used[i] = true;
            cells[i] = f;
        }
        offsets.insert(s.clone(), at);
    }
    // Every `offset + id` of a class is in range, whatever the class.
    let max = offsets.values().copied().max().unwrap_or(0) + h.by_id.len() as u64 + 1;
    cells.resize(max as usize, null);
    let m = b.module();
    let arr = m.ty_array(ty.ptr, cells.len() as u64)?;
    let init = m.const_aggregate(arr, &cells)?;
    let g = b.global_const("__irkit.trait_dispatch", arr, init)?;
    Ok((Some(g), offsets))
}

/// The C function `name` of type `sig`, declared once (an extern declaration of that name and
/// type already in `m` is used).
fn extern_fn(b: &mut Builder<'_>, name: &str, sig: Inst) -> Result<Inst, CoreError> {
    let m = b.module();
    let existing = m.top_level().iter().copied().find(|&f| {
        m.opcode(f) == Opcode::FUNC
            && m.ty(f) == Some(sig)
            && m.decoration_str(f, Opcode::EXTERN) == Some(name)
    });
    if let Some(f) = existing {
        return Ok(f);
    }
    let f = b.func(name, sig)?;
    b.decorate(f, Opcode::EXTERN, Vec::new(), Payload::Str(name.into()))?;
    Ok(f)
}

/// The module's `__irkit.alloc` ([`alloc_routine`]), made on first use: objects and
/// existentials (`dynamic/exists.rs`) allocate through the one routine.
pub(crate) fn alloc(b: &mut Builder<'_>, gc: Gc) -> Result<Inst, CoreError> {
    let ty = Types::new(b.module());
    let sig = b.module().ty_fn(ty.ptr, &[ty.i64])?;
    let m = b.module();
    let existing = m.top_level().iter().copied().find(|&f| {
        m.opcode(f) == Opcode::FUNC && m.ty(f) == Some(sig) && m.name(f) == Some("__irkit.alloc")
    });
    match existing {
        Some(f) => Ok(f),
        None => alloc_routine(b, ty, gc),
    }
}

/// `__irkit.alloc(size) -> ptr`: zeroed memory, or the `out of memory` trap when the allocator
/// returns null. With [`Gc::None`] from `calloc(1, size)`; with [`Gc::Boehm`] from
/// `GC_malloc(size)` (which clears what it returns), after `GC_init()` on the first call (a
/// flag in `__irkit.gc_started` says it was made: `GC_INIT()` is `GC_init()` on Linux).
fn alloc_routine(b: &mut Builder<'_>, ty: Types, gc: Gc) -> Result<Inst, CoreError> {
    let sig = b.module().ty_fn(ty.ptr, &[ty.i64])?;
    // The allocator's declarations come first, as `calloc`'s always has.
    let (allocate, start) = match gc {
        Gc::None => {
            let calloc_sig = b.module().ty_fn(ty.ptr, &[ty.i64, ty.i64])?;
            (extern_fn(b, "calloc", calloc_sig)?, None)
        }
        Gc::Boehm => {
            let void = b.module().ty_void();
            let init_sig = b.module().ty_fn(void, &[])?;
            let init = extern_fn(b, "GC_init", init_sig)?;
            let malloc = extern_fn(b, "GC_malloc", sig)?;
            let zero = b.module().const_int(ty.i8, 0)?;
            let started = b.global_var("__irkit.gc_started", ty.i8, Some(zero))?;
            (malloc, Some((init, started)))
        }
    };
    let f = b.func("__irkit.alloc", sig)?;
    let (entry, params) = b.entry_block(f)?;
    let (ok, _) = b.block(f, &[])?;
    let (oom, _) = b.block(f, &[])?;
    let p = match start {
        None => {
            b.position_at_end(entry);
            let one = b.module().const_int(ty.i64, 1)?;
            b.call(allocate, &[one, params[0]])?
        }
        Some((init, started)) => {
            let zero = b.module().const_int(ty.i8, 0)?;
            let one = b.module().const_int(ty.i8, 1)?;
            let (first, _) = b.block(f, &[])?;
            let (get, _) = b.block(f, &[])?;
            b.position_at_end(entry);
            let s = b.load(ty.i8, started)?;
            let fresh = b.icmp(IntCC::Eq, s, zero)?;
            b.br(fresh, first, &[], get, &[])?;
            b.position_at_end(first);
            b.call(init, &[])?;
            b.store(started, one)?;
            b.jump(get, &[])?;
            b.position_at_end(get);
            b.call(allocate, &[params[0]])?
        }
    };
    let null = b.module().const_null();
    let is_null = b.icmp(IntCC::Eq, p, null)?;
    b.br(is_null, oom, &[], ok, &[])?;
    b.position_at_end(ok);
    b.ret(Some(p))?;
    b.position_at_end(oom);
    b.trap_msg(irkit_backend::trap_kinds::OUT_OF_MEMORY)?;
    Ok(f)
}

/// `__irkit.dynmethod(descriptor, selector) -> ptr`: binary search of the descriptor's selector
/// table; null when the class has no such method.
fn dynmethod_routine(b: &mut Builder<'_>, ty: Types) -> Result<Inst, CoreError> {
    let sig = b.module().ty_fn(ty.ptr, &[ty.ptr, ty.i64])?;
    let f = b.func("__irkit.dynmethod", sig)?;
    let (entry, params) = b.entry_block(f)?;
    let (desc, sel) = (params[0], params[1]);
    let (head, hp) = b.block(f, &[ty.i64, ty.i64])?;
    let (probe, _) = b.block(f, &[])?;
    let (found, _) = b.block(f, &[])?;
    let (next, _) = b.block(f, &[])?;
    let (missing, _) = b.block(f, &[])?;
    let m = b.module();
    let pair = m.ty_struct(&[ty.i64, ty.ptr])?;
    let zero = m.const_int(ty.i64, 0)?;
    let one = m.const_int(ty.i64, 1)?;
    let at_count = m.const_int(ty.i64, DESC_COUNT)?;
    let at_table = m.const_int(ty.i64, DESC_SELECTORS)?;
    let i32t = m.ty_i32();
    let field1 = m.const_int(i32t, 1)?;
    let null = m.const_null();
    b.position_at_end(entry);
    let pc = b.elem(ty.i8, desc, &[at_count])?;
    let count = b.load(ty.i64, pc)?;
    let pt = b.elem(ty.i8, desc, &[at_table])?;
    let table = b.load(ty.ptr, pt)?;
    b.jump(head, &[zero, count])?;
    // head(lo, hi): while lo < hi
    b.position_at_end(head);
    let (lo, hi) = (hp[0], hp[1]);
    let more = b.icmp(IntCC::Ult, lo, hi)?;
    b.br(more, probe, &[], missing, &[])?;
    b.position_at_end(probe);
    let sum = b.binary(Opcode::IADD, lo, hi)?;
    let mid = b.binary(Opcode::LSHR, sum, one)?;
    let e = b.elem(pair, table, &[mid])?;
    let key = b.load(ty.i64, e)?;
    let hit = b.icmp(IntCC::Eq, key, sel)?;
    b.br(hit, found, &[], next, &[])?;
    b.position_at_end(found);
    let pf = b.elem(pair, table, &[mid, field1])?;
    let impl_ = b.load(ty.ptr, pf)?;
    b.ret(Some(impl_))?;
    b.position_at_end(next);
    let below = b.icmp(IntCC::Ult, key, sel)?;
    let up = b.binary(Opcode::IADD, mid, one)?;
    let lo2 = b.select(below, up, lo)?;
    let hi2 = b.select(below, hi, mid)?;
    b.jump(head, &[lo2, hi2])?;
    b.position_at_end(missing);
    b.ret(Some(null))?;
    Ok(f)
}

/// `__irkit.instance.M() -> ptr`: object `M`'s instance, made on first use (recorded before
/// its constructor runs).
fn instance_routine(
    b: &mut Builder<'_>,
    ty: Types,
    name: &str,
    size: u64,
    desc: Inst,
    ctor: Option<Inst>,
    alloc: Inst,
) -> Result<Inst, CoreError> {
    let null = b.module().const_null();
    let var = b.global_var(&format!("__irkit.instance_of.{name}"), ty.ptr, Some(null))?;
    let sig = b.module().ty_fn(ty.ptr, &[])?;
    let f = b.func(&format!("__irkit.instance.{name}"), sig)?;
    let (entry, _) = b.entry_block(f)?;
    let (have, _) = b.block(f, &[])?;
    let (make, _) = b.block(f, &[])?;
    b.position_at_end(entry);
    let cur = b.load(ty.ptr, var)?;
    let none = b.icmp(IntCC::Eq, cur, null)?;
    b.br(none, make, &[], have, &[])?;
    b.position_at_end(have);
    b.ret(Some(cur))?;
    b.position_at_end(make);
    let n = b.module().const_int(ty.i64, size)?;
    let obj = b.call(alloc, &[n])?;
    b.store(obj, desc)?;
    b.store(var, obj)?;
    if let Some(c) = ctor {
        b.call(c, &[obj])?;
    }
    b.ret(Some(obj))?;
    Ok(f)
}
