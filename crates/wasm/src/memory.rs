//! Linear memory: its representation, bounds-checked loads and stores, `memory.size` and the
//! module's `memory.grow` helper.
//!
//! The memory is a global of type `struct {ptr base, i64 size, i32 max_pages}` (unlike a
//! table's `{ptr, i64, i64}`, so the linker refuses a memory imported as a table): the address
//! of its bytes (from `calloc`; null while the size is 0), its size in bytes, and its declared
//! maximum in pages ([`NO_MAX_PAGES`] if it has none; it grows to at most [`MAX_PAGES`]). An access of `n` bytes at wasm address `a` with static offset `o`
//! computes `ea = zext(a) + o` in 64 bits (no wrap-around), traps unless `ea + n <= size`,
//! then loads or stores at `base + ea`. A function accessing the memory keeps `base` and
//! `size` in two SSA variables, read at its entry and again after every call (a call may have
//! grown, so moved, the memory).

use irkit_core::{Builder, Inst, IntCC, Module, Opcode, Payload};
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

/// The memory global's type, `struct {ptr, i64, i32}`.
pub fn memory_type(m: &mut Module) -> Result<Inst, irkit_core::CoreError> {
    let p = m.ty_ptr();
    let i64t = m.ty_i64();
    let i32t = m.ty_i32();
    m.ty_struct(&[p, i64t, i32t])
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

/// The address of field `k` of the memory global.
fn field(b: &mut Builder<'_>, mem: &Memory, k: u64) -> Result<Inst, irkit_core::CoreError> {
    let zero = b.module().const_i64(0);
    let i32t = b.module().ty_i32();
    let k = b.module().const_int(i32t, k)?;
    b.elem(mem.ty, mem.global, &[zero, k])
}

/// Loads field `k` (0 base, 1 size, 2 maximum pages, as an `i64`) of the memory global.
pub fn load_field(
    b: &mut Builder<'_>,
    mem: &Memory,
    k: u64,
) -> Result<Inst, irkit_core::CoreError> {
    let a = field(b, mem, k)?;
    match k {
        0 => {
            let p = b.module().ty_ptr();
            b.load(p, a)
        }
        1 => {
            let i64t = b.module().ty_i64();
            b.load(i64t, a)
        }
        _ => {
            let (i32t, i64t) = (b.module().ty_i32(), b.module().ty_i64());
            let v = b.load(i32t, a)?;
            b.convert(Opcode::ZEXT, i64t, v)
        }
    }
}

/// Builds the module's `memory.grow` helper, `fn(i32 delta) -> i32`: the old size in pages,
/// or -1 (leaving the memory as it was) if the new size would pass the maximum or the
/// allocation fails. Growing copies the bytes to a new, zeroed allocation (`calloc`) and frees
/// the old one.
pub fn build_grow(
    b: &mut Builder<'_>,
    mem: &Memory,
    libc: &Libc,
    place: Place,
) -> Result<(), WasmError> {
    build_grow_body(b, mem, libc).at(place)
}

fn build_grow_body(
    b: &mut Builder<'_>,
    mem: &Memory,
    libc: &Libc,
) -> Result<(), irkit_core::CoreError> {
    let i32t = b.module().ty_i32();
    let i64t = b.module().ty_i64();
    let f = mem.grow;
    let (entry, params) = b.block(f, &[i32t])?;
    let (check0, _) = b.block(f, &[])?;
    let (alloc, _) = b.block(f, &[])?;
    let (copy, _) = b.block(f, &[])?;
    let (store, _) = b.block(f, &[])?;
    let (done, _) = b.block(f, &[])?;
    let (fail, _) = b.block(f, &[])?;
    b.position_at_end(entry);
    let base = load_field(b, mem, 0)?;
    let size = load_field(b, mem, 1)?;
    let declared = load_field(b, mem, 2)?;
    let cap = b.module().const_i64(MAX_PAGES as i64);
    let over = b.icmp(IntCC::Ugt, declared, cap)?;
    let max = b.select(over, cap, declared)?;
    let sixteen = b.module().const_i64(16);
    let old_pages = b.binary(Opcode::LSHR, size, sixteen)?;
    let delta = b.convert(Opcode::ZEXT, i64t, params[0])?;
    let new_pages = b.binary(Opcode::IADD, old_pages, delta)?;
    let too_big = b.icmp(IntCC::Ugt, new_pages, max)?;
    b.br(too_big, fail, &[], check0, &[])?;
    b.position_at_end(check0);
    let zero = b.module().const_i64(0);
    let none = b.icmp(IntCC::Eq, delta, zero)?;
    b.br(none, done, &[], alloc, &[])?;
    b.position_at_end(alloc);
    let new_size = b.binary(Opcode::SHL, new_pages, sixteen)?;
    let one = b.module().const_i64(1);
    let p = b.call(libc.calloc, &[new_size, one])?;
    let null = b.module().const_null();
    let is_null = b.icmp(IntCC::Eq, p, null)?;
    let was_empty = b.icmp(IntCC::Eq, size, zero)?;
    let (copy_or_store, _) = b.block(f, &[])?;
    b.br(is_null, fail, &[], copy_or_store, &[])?;
    b.position_at_end(copy_or_store);
    b.br(was_empty, store, &[], copy, &[])?;
    b.position_at_end(copy);
    b.call(libc.memcpy, &[p, base, size])?;
    b.call(libc.free, &[base])?;
    b.jump(store, &[])?;
    b.position_at_end(store);
    let fb = field(b, mem, 0)?;
    b.store(fb, p)?;
    let fs = field(b, mem, 1)?;
    b.store(fs, new_size)?;
    b.jump(done, &[])?;
    b.position_at_end(done);
    let r = b.convert(Opcode::TRUNC, i32t, old_pages)?;
    b.ret(Some(r))?;
    b.position_at_end(fail);
    let m1 = b.module().const_i32(-1);
    b.ret(Some(m1))?;
    Ok(())
}

impl FuncTranslator<'_, '_> {
    /// Reads the memory's base and size into their SSA variables (at the function's entry,
    /// and again after every call: any call may grow, so move, the memory).
    pub(crate) fn reload_memory(&mut self) -> Result<(), WasmError> {
        let Some((base_var, size_var)) = self.mem_vars else {
            return Ok(());
        };
        let mem = self.memory()?;
        let place = self.place();
        let base = load_field(&mut self.b, &mem, 0).at(place)?;
        let size = load_field(&mut self.b, &mem, 1).at(place)?;
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
    fn address(&mut self, addr: Inst, arg: &MemArg, n: u64) -> Result<Inst, WasmError> {
        let place = self.place();
        let (base, size) = self.memory_state()?;
        let i64t = self.ty(Ty::I64);
        let mut ea = self.conv(Opcode::ZEXT, i64t, addr)?;
        if arg.offset != 0 {
            let o = self.b.module().const_i64(arg.offset as i64);
            ea = self.binary(Opcode::IADD, ea, o)?;
        }
        let n = self.b.module().const_i64(n as i64);
        let end = self.binary(Opcode::IADD, ea, n)?;
        let oob = self.b.icmp(IntCC::Ugt, end, size).at(place)?;
        self.trap_if(oob, crate::traps::OUT_OF_BOUNDS_MEMORY)?;
        let i8t = self.b.module().ty_i8();
        let p = self.b.module().ty_ptr();
        self.inst(Opcode::ELEM, Some(p), vec![i8t, base, ea], Payload::None)
    }

    /// A load of `n` bytes as `ty`, then `ext` (`ZEXT`/`SEXT`) to `to` when `n` is narrower.
    fn load(
        &mut self,
        arg: &MemArg,
        loaded: Inst,
        ext: Option<(Opcode, Ty)>,
    ) -> Result<(), WasmError> {
        let n = self.byte_size(loaded);
        let a = self.pop()?;
        let p = self.address(a, arg, n)?;
        let mut v = self.inst(Opcode::LOAD, Some(loaded), vec![p], Payload::None)?;
        if let Some((op, to)) = ext {
            let t = self.ty(to);
            v = self.conv(op, t, v)?;
        }
        self.stack.push(v);
        Ok(())
    }

    /// A store of the top operand, truncated to `narrow` first if given.
    fn store(&mut self, arg: &MemArg, narrow: Option<Inst>) -> Result<(), WasmError> {
        let mut v = self.pop()?;
        let a = self.pop()?;
        if let Some(t) = narrow {
            v = self.conv(Opcode::TRUNC, t, v)?;
        }
        let vt = self.b.module().ty(v).unwrap_or(v);
        let n = self.byte_size(vt);
        let p = self.address(a, arg, n)?;
        self.inst(Opcode::STORE, None, vec![p, v], Payload::None)?;
        Ok(())
    }

    fn byte_size(&mut self, ty: Inst) -> u64 {
        let m = self.b.module();
        u64::from(m.int_width(ty).or_else(|| m.float_width(ty)).unwrap_or(64) / 8)
    }

    /// Pops an `i32` operand and zero-extends it to `i64`.
    fn pop_u64(&mut self) -> Result<Inst, WasmError> {
        let v = self.pop()?;
        let i64t = self.ty(Ty::I64);
        self.conv(Opcode::ZEXT, i64t, v)
    }

    /// Pops the `dst`, `src`, `n` operands of a bulk copy (`i32`s), zero-extended to `i64`.
    pub(crate) fn pop_range(&mut self) -> Result<[Inst; 3], WasmError> {
        let n = self.pop_u64()?;
        let src = self.pop_u64()?;
        let dst = self.pop_u64()?;
        Ok([dst, src, n])
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
        let place = self.place();
        let end = self.binary(Opcode::IADD, at, n)?;
        let oob = self.b.icmp(IntCC::Ugt, end, limit).at(place)?;
        self.trap_if(oob, kind)
    }

    /// The address of byte `at` of the memory.
    fn byte_at(&mut self, base: Inst, at: Inst) -> Result<Inst, WasmError> {
        let i8t = self.b.module().ty_i8();
        let p = self.b.module().ty_ptr();
        self.inst(Opcode::ELEM, Some(p), vec![i8t, base, at], Payload::None)
    }

    /// The C functions of the memory and the table (declared with either).
    pub(crate) fn libc(&self) -> Result<Libc, WasmError> {
        self.env.libc.ok_or_else(|| {
            WasmError::unsupported("a bulk operator without a memory or table", self.place())
        })
    }

    /// `memory.copy`: both ranges checked before anything is written (they may overlap).
    fn memory_copy(&mut self) -> Result<(), WasmError> {
        let [dst, src, n] = self.pop_range()?;
        let (base, size) = self.memory_state()?;
        let oob = crate::traps::OUT_OF_BOUNDS_MEMORY;
        self.check_range(src, n, size, oob)?;
        self.check_range(dst, n, size, oob)?;
        let (d, s) = (self.byte_at(base, dst)?, self.byte_at(base, src)?);
        let memmove = self.libc()?.memmove;
        let place = self.place();
        self.b.call(memmove, &[d, s, n]).at(place)?;
        Ok(())
    }

    /// `memory.fill`: the range checked, then every byte set to the value's low 8 bits.
    fn memory_fill(&mut self) -> Result<(), WasmError> {
        let n = self.pop_u64()?;
        let value = self.pop()?;
        let dst = self.pop_u64()?;
        let (base, size) = self.memory_state()?;
        self.check_range(dst, n, size, crate::traps::OUT_OF_BOUNDS_MEMORY)?;
        let d = self.byte_at(base, dst)?;
        let memset = self.libc()?.memset;
        let place = self.place();
        self.b.call(memset, &[d, value, n]).at(place)?;
        Ok(())
    }

    /// `memory.init`: bytes `src..src+n` of data segment `index` (of length 0 once dropped,
    /// and an active segment is dropped by instantiation) to `dst`, both ranges checked first.
    fn memory_init(&mut self, index: u32) -> Result<(), WasmError> {
        let seg = self.data_segment(index)?;
        let [dst, src, n] = self.pop_range()?;
        let (base, size) = self.memory_state()?;
        let i64t = self.ty(Ty::I64);
        let len = self.inst(Opcode::LOAD, Some(i64t), vec![seg.len], Payload::None)?;
        let oob = crate::traps::OUT_OF_BOUNDS_MEMORY;
        self.check_range(src, n, len, oob)?;
        self.check_range(dst, n, size, oob)?;
        let d = self.byte_at(base, dst)?;
        let s = self.byte_at(seg.bytes, src)?;
        let memcpy = self.libc()?.memcpy;
        let place = self.place();
        self.b.call(memcpy, &[d, s, n]).at(place)?;
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
        use Operator as O;
        use Ty::*;
        let m = self.b.module();
        let (i8t, i16t, i32t, i64t, f32t, f64t) = (
            m.ty_i8(),
            m.ty_int(16).unwrap_or(m.ty_i32()),
            m.ty_i32(),
            m.ty_i64(),
            m.ty_f32(),
            m.ty_f64(),
        );
        match op {
            O::I32Load { memarg } => self.load(memarg, i32t, None)?,
            O::I64Load { memarg } => self.load(memarg, i64t, None)?,
            O::F32Load { memarg } => self.load(memarg, f32t, None)?,
            O::F64Load { memarg } => self.load(memarg, f64t, None)?,
            O::I32Load8S { memarg } => self.load(memarg, i8t, Some((Opcode::SEXT, I32)))?,
            O::I32Load8U { memarg } => self.load(memarg, i8t, Some((Opcode::ZEXT, I32)))?,
            O::I32Load16S { memarg } => self.load(memarg, i16t, Some((Opcode::SEXT, I32)))?,
            O::I32Load16U { memarg } => self.load(memarg, i16t, Some((Opcode::ZEXT, I32)))?,
            O::I64Load8S { memarg } => self.load(memarg, i8t, Some((Opcode::SEXT, I64)))?,
            O::I64Load8U { memarg } => self.load(memarg, i8t, Some((Opcode::ZEXT, I64)))?,
            O::I64Load16S { memarg } => self.load(memarg, i16t, Some((Opcode::SEXT, I64)))?,
            O::I64Load16U { memarg } => self.load(memarg, i16t, Some((Opcode::ZEXT, I64)))?,
            O::I64Load32S { memarg } => self.load(memarg, i32t, Some((Opcode::SEXT, I64)))?,
            O::I64Load32U { memarg } => self.load(memarg, i32t, Some((Opcode::ZEXT, I64)))?,
            O::I32Store { memarg }
            | O::I64Store { memarg }
            | O::F32Store { memarg }
            | O::F64Store { memarg } => self.store(memarg, None)?,
            O::I32Store8 { memarg } | O::I64Store8 { memarg } => self.store(memarg, Some(i8t))?,
            O::I32Store16 { memarg } | O::I64Store16 { memarg } => {
                self.store(memarg, Some(i16t))?
            }
            O::I64Store32 { memarg } => self.store(memarg, Some(i32t))?,
            O::MemorySize { .. } => {
                let (_, size) = self.memory_state()?;
                let sixteen = self.b.module().const_i64(16);
                let pages = self.binary(Opcode::LSHR, size, sixteen)?;
                let r = self.conv(Opcode::TRUNC, i32t, pages)?;
                self.stack.push(r);
            }
            O::MemoryCopy { .. } => self.memory_copy()?,
            O::MemoryFill { .. } => self.memory_fill()?,
            O::MemoryInit { data_index, .. } => self.memory_init(*data_index)?,
            O::DataDrop { data_index } => {
                let seg = self.data_segment(*data_index)?;
                let zero = self.b.module().const_i64(0);
                self.inst(Opcode::STORE, None, vec![seg.len, zero], Payload::None)?;
            }
            O::MemoryGrow { .. } => {
                let mem = self.memory()?;
                let d = self.pop()?;
                let place = self.place();
                let r = self.b.call(mem.grow, &[d]).at(place)?;
                self.reload_memory()?;
                self.stack.push(r);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
