//! Linear memory: its representation, bounds-checked loads and stores, `memory.size` and the
//! module's `memory.grow` helper.
//!
//! The memory is a global of type `struct {ptr base, i64 size, i32 max_pages, i64 capacity}`
//! (unlike a table's `{ptr, i64, i64, i64}`, so the linker refuses a memory imported as a table):
//! the address of its bytes (from `calloc`; null while the size is 0), its size in bytes, its
//! declared maximum in pages ([`NO_MAX_PAGES`] if it has none; it grows to at most
//! [`MAX_PAGES`]), and the bytes allocated ([`build_grow`]). An access of `n` bytes at wasm address `a` with static offset `o`
//! computes `ea = zext(a) + o` in 64 bits (no wrap-around), traps unless `ea + n <= size`,
//! then loads or stores at `base + ea`. A function accessing the memory keeps `base` and
//! `size` in two SSA variables, read at its entry and again after every call (a call may have
//! grown, so moved, the memory).

use irkit_core::{Builder, Conversion, Inst, IntCC, Module, Opcode, Payload};
use wasmparser::{MemArg, Operator};

use crate::env::{Libc, Memory};
use crate::error::{At, Place, WasmError};
use crate::func::FuncTranslator;
use crate::ops::Ty;

/// The size of a wasm page.
pub const PAGE: u64 = 65536;
/// The most pages a 32-bit memory has.
pub const MAX_PAGES: u64 = 65536;

/// The maximum field of a memory declared without a maximum: one more than any declared
/// maximum can be, so an import that declares a maximum never matches it; growing stops at
/// [`MAX_PAGES`] all the same.
pub const NO_MAX_PAGES: u64 = MAX_PAGES + 1;

/// The memory global's type, `struct {ptr, i64, i32, i64}`.
pub fn memory_type(m: &mut Module) -> Result<Inst, irkit_core::CoreError> {
    let p = m.ty_ptr();
    let i64t = m.ty_i64();
    let i32t = m.ty_i32();
    m.ty_struct(&[p, i64t, i32t, i64t])
}

impl Libc {
    /// Declares the functions as `extern`s of the module.
    pub fn declare(b: &mut Builder<'_>, place: Place) -> Result<Libc, WasmError> {
        let m = b.module();
        let (p, i32t, i64t, void) = (m.ty_ptr(), m.ty_i32(), m.ty_i64(), m.ty_void());
        let sigs = [
            ("calloc", m.ty_fn(p, &[i64t, i64t])),
            ("free", m.ty_fn(void, &[p])),
            ("memcpy", m.ty_fn(p, &[p, p, i64t])),
            ("memmove", m.ty_fn(p, &[p, p, i64t])),
            ("memset", m.ty_fn(p, &[p, i32t, i64t])),
        ];
        let mut fs = Vec::new();
        for (name, sig) in sigs {
            let f = b.func(name, sig.at(place)?).at(place)?;
            b.decorate(f, Opcode::EXTERN, Vec::new(), Payload::Str(name.into()))
                .at(place)?;
            fs.push(f);
        }
        Ok(Libc {
            calloc: fs[0],
            free: fs[1],
            memcpy: fs[2],
            memmove: fs[3],
            memset: fs[4],
        })
    }
}

/// The address of field `k` (0 to 3) of the memory global.
fn field(b: &mut Builder<'_>, mem: &Memory, k: i32) -> Inst {
    let zero = b.module().const_i64(0);
    let k = b.module().const_i32(k);
    b.ins().elem(mem.ty, mem.global, &[zero, k])
}

/// Loads field `k` (0 base, 1 size, 2 maximum pages, as an `i64`, 3 capacity) of the memory
/// global.
pub fn load_field(b: &mut Builder<'_>, mem: &Memory, k: i32) -> Inst {
    let a = field(b, mem, k);
    match k {
        0 => {
            let p = b.module().ty_ptr();
            b.ins().load(p, a)
        }
        1 | 3 => {
            let i64t = b.module().ty_i64();
            b.ins().load(i64t, a)
        }
        _ => {
            let (i32t, i64t) = (b.module().ty_i32(), b.module().ty_i64());
            let v = b.ins().load(i32t, a);
            b.ins().zext(i64t, v)
        }
    }
}

/// Builds the module's `memory.grow` helper, `fn(i32 delta) -> i32`: the old size in pages,
/// or -1 (leaving the memory as it was) if the new size would pass the maximum or the
/// allocation fails.
///
/// The allocation has a capacity (the record's fourth field) that may pass the size: its
/// bytes past the size are zero (`calloc`'s, and nothing writes past the size), so a growth
/// within the capacity only moves the size. A growth past it allocates a new zeroed block
/// (`calloc`) of twice the capacity (at least the new size, at most the maximum; the new size
/// alone if that fails), copies the old bytes and frees the old block: growing a memory page
/// by page copies each byte a bounded number of times, not once per growth.
pub fn build_grow(
    b: &mut Builder<'_>,
    mem: &Memory,
    libc: &Libc,
    place: Place,
) -> Result<(), WasmError> {
    let (i32t, i64t, ptr) = (
        b.module().ty_i32(),
        b.module().ty_i64(),
        b.module().ty_ptr(),
    );
    let f = mem.grow;
    let (entry, params) = b.entry_block(f).at(place)?;
    let [check0, fits, bump, alloc, exact, done, fail] = empty_blocks(b, f, place)?;
    let (got, got_params) = b.block(f, &[ptr, i64t]).at(place)?;
    let (copy, _) = b.block(f, &[]).at(place)?;
    let (store, _) = b.block(f, &[]).at(place)?;
    let (p, c) = (got_params[0], got_params[1]);
    b.position_at_end(entry);
    let base = load_field(b, mem, 0);
    let size = load_field(b, mem, 1);
    let declared = load_field(b, mem, 2);
    let limit = b.module().const_i64(MAX_PAGES as i64);
    let over = b.ins().icmp(IntCC::Ugt, declared, limit);
    let max = b.ins().select(over, limit, declared);
    let sixteen = b.module().const_i64(16);
    let old_pages = b.ins().lshr(size, sixteen);
    let delta = b.ins().zext(i64t, params[0]);
    let new_pages = b.ins().iadd(old_pages, delta);
    let too_big = b.ins().icmp(IntCC::Ugt, new_pages, max);
    b.ins().br(too_big, fail, &[], check0, &[]);
    b.position_at_end(check0);
    let zero = b.module().const_i64(0);
    let none = b.ins().icmp(IntCC::Eq, delta, zero);
    b.ins().br(none, done, &[], fits, &[]);
    // Within the capacity: the bytes are there, and zero.
    b.position_at_end(fits);
    let new_size = b.ins().shl(new_pages, sixteen);
    let cap = load_field(b, mem, 3);
    let within = b.ins().icmp(IntCC::Ule, new_size, cap);
    b.ins().br(within, bump, &[], alloc, &[]);
    b.position_at_end(bump);
    let fs = field(b, mem, 1);
    b.ins().store(fs, new_size);
    b.ins().jump(done, &[]);
    // Past it: twice the capacity, at least the new size, at most the maximum.
    b.position_at_end(alloc);
    let max_size = b.ins().shl(max, sixteen);
    let one = b.module().const_i64(1);
    allocate_grown(b, libc, [cap, new_size, max_size, one], [exact, got, fail]);
    b.position_at_end(got);
    let was_empty = b.ins().icmp(IntCC::Eq, size, zero);
    b.ins().br(was_empty, store, &[], copy, &[]);
    b.position_at_end(copy);
    b.ins().call(libc.memcpy, &[p, base, size]);
    b.ins().call(libc.free, &[base]);
    b.ins().jump(store, &[]);
    b.position_at_end(store);
    let fb = field(b, mem, 0);
    b.ins().store(fb, p);
    let fs = field(b, mem, 1);
    b.ins().store(fs, new_size);
    let fc = field(b, mem, 3);
    b.ins().store(fc, c);
    b.ins().jump(done, &[]);
    b.position_at_end(done);
    let r = b.ins().trunc(i32t, old_pages);
    b.ins().ret(Some(r));
    b.position_at_end(fail);
    let m1 = b.module().const_i32(-1);
    b.ins().ret(Some(m1));
    Ok(())
}

/// In a grow helper whose new size `need` passes the capacity `cap` (both counting elements of
/// `unit` bytes): allocates zeroed room (`calloc`) for twice the capacity, at least `need` and
/// at most `max` elements, and jumps to `got(block, elements)`; if that fails, for `need`
/// alone (in block `exact`); if that fails too, to `fail`. Shared by memories and tables.
pub(crate) fn allocate_grown(
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

impl FuncTranslator<'_, '_> {
    /// Reads the memory's base and size into their SSA variables (at the function's entry,
    /// and again after every call: any call may grow, so move, the memory).
    pub(crate) fn reload_memory(&mut self) -> Result<(), WasmError> {
        let Some((base_var, size_var)) = self.mem_vars else {
            return Ok(());
        };
        let mem = self.memory()?;
        let base = load_field(&mut self.b, &mem, 0);
        let size = load_field(&mut self.b, &mem, 1);
        self.ssa.def_var(base_var, self.block, base);
        self.ssa.def_var(size_var, self.block, size);
        Ok(())
    }

    /// The memory's base and size here.
    fn memory_state(&mut self) -> Result<(Inst, Inst), WasmError> {
        let place = self.place();
        let (base_var, size_var) = self
            .mem_vars
            .ok_or_else(|| WasmError::unsupported("a memory access without a memory", place))?;
        let base = self
            .ssa
            .use_var(&mut self.b, base_var, self.block)
            .at(place)?;
        let size = self
            .ssa
            .use_var(&mut self.b, size_var, self.block)
            .at(place)?;
        Ok((base, size))
    }

    fn memory(&self) -> Result<Memory, WasmError> {
        self.env
            .memory
            .ok_or_else(|| WasmError::unsupported("a memory access without a memory", self.place()))
    }

    /// The checked address of an `n`-byte access at wasm address `addr` (an `i32`).
    pub(crate) fn address(&mut self, addr: Inst, arg: &MemArg, n: u64) -> Result<Inst, WasmError> {
        let (base, size) = self.memory_state()?;
        let i64t = self.ty(Ty::I64);
        let mut ea = self.b.ins().zext(i64t, addr);
        if arg.offset != 0 {
            let o = self.b.module().const_i64(arg.offset as i64);
            ea = self.b.ins().iadd(ea, o);
        }
        let n = self.b.module().const_i64(n as i64);
        let end = self.b.ins().iadd(ea, n);
        let oob = self.b.ins().icmp(IntCC::Ugt, end, size);
        self.bounds_checks.push(self.block);
        self.trap_if(oob, crate::traps::OUT_OF_BOUNDS_MEMORY)?;
        Ok(self.byte_at(base, ea))
    }

    /// A load of `n` bytes as `ty`, then `ext` (`Zext`/`Sext`) to `to` when `n` is narrower.
    fn load(
        &mut self,
        arg: &MemArg,
        loaded: Ty,
        ext: Option<(Conversion, Ty)>,
    ) -> Result<(), WasmError> {
        let loaded = self.ty(loaded);
        let n = self.byte_size(loaded);
        let a = self.pop();
        let p = self.address(a, arg, n)?;
        let mut v = self.b.ins().load(loaded, p);
        if let Some((op, to)) = ext {
            let t = self.ty(to);
            v = self.b.ins().conversion(op, t, v);
        }
        self.stack.push(v);
        Ok(())
    }

    /// A store of the top operand, truncated to `narrow` first if given.
    fn store(&mut self, arg: &MemArg, narrow: Option<Ty>) -> Result<(), WasmError> {
        let mut v = self.pop();
        let a = self.pop();
        if let Some(t) = narrow {
            let t = self.ty(t);
            v = self.b.ins().trunc(t, v);
        }
        let vt = self.b.module().ty(v).unwrap_or(v);
        let n = self.byte_size(vt);
        let p = self.address(a, arg, n)?;
        self.b.ins().store(p, v);
        Ok(())
    }

    fn byte_size(&mut self, ty: Inst) -> u64 {
        let m = self.b.module();
        u64::from(m.int_width(ty).or_else(|| m.float_width(ty)).unwrap_or(64) / 8)
    }

    /// Pops an `i32` operand and zero-extends it to `i64`.
    pub(crate) fn pop_u64(&mut self) -> Inst {
        let v = self.pop();
        let i64t = self.ty(Ty::I64);
        self.b.ins().zext(i64t, v)
    }

    /// Pops the `dst`, `src`, `n` operands of a bulk copy (`i32`s), zero-extended to `i64`.
    pub(crate) fn pop_range(&mut self) -> [Inst; 3] {
        let n = self.pop_u64();
        let src = self.pop_u64();
        let dst = self.pop_u64();
        [dst, src, n]
    }

    /// Traps with `kind` unless `at + n <= limit` (all `i64`, from zero-extended `i32`s, so
    /// the sum does not wrap).
    pub(crate) fn check_range(
        &mut self,
        at: Inst,
        n: Inst,
        limit: Inst,
        kind: &'static str,
    ) -> Result<(), WasmError> {
        let end = self.b.ins().iadd(at, n);
        let oob = self.b.ins().icmp(IntCC::Ugt, end, limit);
        self.trap_if(oob, kind)
    }

    /// The address of byte `at` of the memory.
    fn byte_at(&mut self, base: Inst, at: Inst) -> Inst {
        let i8t = self.b.module().ty_i8();
        self.b.ins().elem(i8t, base, &[at])
    }

    /// The C functions of the memory and the table (declared with either).
    pub(crate) fn libc(&self) -> Result<Libc, WasmError> {
        self.env.libc.ok_or_else(|| {
            WasmError::unsupported("a bulk operator without a memory or table", self.place())
        })
    }

    /// `memory.copy`: both ranges checked before anything is written (they may overlap).
    fn memory_copy(&mut self) -> Result<(), WasmError> {
        let [dst, src, n] = self.pop_range();
        let (base, size) = self.memory_state()?;
        let oob = crate::traps::OUT_OF_BOUNDS_MEMORY;
        self.check_range(src, n, size, oob)?;
        self.check_range(dst, n, size, oob)?;
        let (d, s) = (self.byte_at(base, dst), self.byte_at(base, src));
        let memmove = self.libc()?.memmove;
        self.b.ins().call(memmove, &[d, s, n]);
        Ok(())
    }

    /// `memory.fill`: the range checked, then every byte set to the value's low 8 bits.
    fn memory_fill(&mut self) -> Result<(), WasmError> {
        let n = self.pop_u64();
        let value = self.pop();
        let dst = self.pop_u64();
        let (base, size) = self.memory_state()?;
        self.check_range(dst, n, size, crate::traps::OUT_OF_BOUNDS_MEMORY)?;
        let d = self.byte_at(base, dst);
        let memset = self.libc()?.memset;
        self.b.ins().call(memset, &[d, value, n]);
        Ok(())
    }

    /// `memory.init`: bytes `src..src+n` of data segment `index` (of length 0 once dropped,
    /// and an active segment is dropped by instantiation) to `dst`, both ranges checked first.
    fn memory_init(&mut self, index: u32) -> Result<(), WasmError> {
        let seg = self.data_segment(index)?;
        let [dst, src, n] = self.pop_range();
        let (base, size) = self.memory_state()?;
        let i64t = self.ty(Ty::I64);
        let len = self.b.ins().load(i64t, seg.len);
        let oob = crate::traps::OUT_OF_BOUNDS_MEMORY;
        self.check_range(src, n, len, oob)?;
        self.check_range(dst, n, size, oob)?;
        let d = self.byte_at(base, dst);
        let s = self.byte_at(seg.bytes, src);
        let memcpy = self.libc()?.memcpy;
        self.b.ins().call(memcpy, &[d, s, n]);
        Ok(())
    }

    fn data_segment(&self, index: u32) -> Result<crate::env::DataSegment, WasmError> {
        self.env
            .data
            .get(index as usize)
            .copied()
            .ok_or_else(|| WasmError::unsupported(format!("data segment {index}"), self.place()))
    }

    /// Translates a memory operator; `false` if `op` is not one.
    pub(crate) fn memory_operator(&mut self, op: &Operator<'_>) -> Result<bool, WasmError> {
        use Conversion::{Sext, Zext};
        use Operator as O;
        use Ty::*;
        match op {
            O::I32Load { memarg } => self.load(memarg, I32, None)?,
            O::I64Load { memarg } => self.load(memarg, I64, None)?,
            O::F32Load { memarg } => self.load(memarg, F32, None)?,
            O::F64Load { memarg } => self.load(memarg, F64, None)?,
            O::I32Load8S { memarg } => self.load(memarg, I8, Some((Sext, I32)))?,
            O::I32Load8U { memarg } => self.load(memarg, I8, Some((Zext, I32)))?,
            O::I32Load16S { memarg } => self.load(memarg, I16, Some((Sext, I32)))?,
            O::I32Load16U { memarg } => self.load(memarg, I16, Some((Zext, I32)))?,
            O::I64Load8S { memarg } => self.load(memarg, I8, Some((Sext, I64)))?,
            O::I64Load8U { memarg } => self.load(memarg, I8, Some((Zext, I64)))?,
            O::I64Load16S { memarg } => self.load(memarg, I16, Some((Sext, I64)))?,
            O::I64Load16U { memarg } => self.load(memarg, I16, Some((Zext, I64)))?,
            O::I64Load32S { memarg } => self.load(memarg, I32, Some((Sext, I64)))?,
            O::I64Load32U { memarg } => self.load(memarg, I32, Some((Zext, I64)))?,
            O::I32Store { memarg }
            | O::I64Store { memarg }
            | O::F32Store { memarg }
            | O::F64Store { memarg } => self.store(memarg, None)?,
            O::I32Store8 { memarg } | O::I64Store8 { memarg } => self.store(memarg, Some(I8))?,
            O::I32Store16 { memarg } | O::I64Store16 { memarg } => self.store(memarg, Some(I16))?,
            O::I64Store32 { memarg } => self.store(memarg, Some(I32))?,
            O::MemorySize { .. } => {
                let (_, size) = self.memory_state()?;
                let sixteen = self.b.module().const_i64(16);
                let pages = self.b.ins().lshr(size, sixteen);
                let i32t = self.ty(I32);
                let r = self.b.ins().trunc(i32t, pages);
                self.stack.push(r);
            }
            O::MemoryCopy { .. } => self.memory_copy()?,
            O::MemoryFill { .. } => self.memory_fill()?,
            O::MemoryInit { data_index, .. } => self.memory_init(*data_index)?,
            O::DataDrop { data_index } => {
                let seg = self.data_segment(*data_index)?;
                let zero = self.b.module().const_i64(0);
                self.b.ins().store(seg.len, zero);
            }
            O::MemoryGrow { .. } => {
                let mem = self.memory()?;
                let d = self.pop();
                let r = self.b.ins().call(mem.grow, &[d]);
                self.reload_memory()?;
                self.stack.push(r);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
