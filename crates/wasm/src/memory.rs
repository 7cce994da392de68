//! Linear memory: its representation, its loads and stores (`mem_load`, `mem_store`),
//! `memory.size`, `memory.grow` (`mem_grow`) and the bulk memory operators.
//!
//! The memory is the IR's linear memory (spec/ir.md, "Linear memories"): a global of the
//! memory record type `struct {ptr base, i64 size, i32 max, i64 reserved}` (unlike a table's
//! `{ptr, i64, i64, i64}`, so the linker refuses a memory imported as a table), whose maximum
//! is the declared one in pages ([`NO_MAX_PAGES`] if it has none; it grows to at most
//! [`MAX_PAGES`]). An access is one `mem_load` or `mem_store` with the memarg's offset: the
//! back end checks it (`zext(a) + o + n <= size`, else the trap "out of bounds memory
//! access") wherever it places the bytes. `memory.grow` is `mem_grow`. The bulk operators read
//! `base` and `size` from the record where they run (a call or `mem_grow` may move `base`).

use irkit_core::{Builder, Conversion, Inst, IntCC, Module, Opcode, Payload};
use wasmparser::{MemArg, Operator};

use crate::env::{Libc, Memory};
use crate::error::{At, Place, WasmError};
use crate::func::FuncTranslator;
use crate::ops::Ty;

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

/// Loads field `k` of the memory record: 0 `base` (a `ptr`) or 1 `size` (an `i64`, bytes).
pub fn load_field(b: &mut Builder<'_>, mem: &Memory, k: i32) -> Inst {
    let zero = b.module().const_i64(0);
    let kc = b.module().const_i32(k);
    let a = b.ins().elem(mem.ty, mem.global, &[zero, kc]);
    let ty = if k == 0 {
        b.module().ty_ptr()
    } else {
        b.module().ty_i64()
    };
    b.ins().load(ty, a)
}

impl FuncTranslator<'_, '_> {
    /// Memory `index`'s `base` and `size` here, read from its record.
    fn memory_state(&mut self, index: u32) -> Result<(Inst, Inst), WasmError> {
        let mem = self.memory(index)?;
        let base = load_field(&mut self.b, &mem, 0);
        let size = load_field(&mut self.b, &mem, 1);
        Ok((base, size))
    }

    /// The memory an access's memarg names.
    fn memory_of(&self, arg: &MemArg) -> Result<Memory, WasmError> {
        match arg.target {
            wasmparser::MemArgTarget::Memory(index) => self.memory(index),
            wasmparser::MemArgTarget::Array(_) => Err(WasmError::unsupported(
                "an access to a GC array's payload",
                self.place(),
            )),
        }
    }

    /// Memory `index` of the module's memory index space.
    fn memory(&self, index: u32) -> Result<Memory, WasmError> {
        self.env
            .memories
            .get(index as usize)
            .copied()
            .ok_or_else(|| WasmError::unsupported(format!("memory {index}"), self.place()))
    }

    /// The memarg's static offset, the payload of `mem_load` and `mem_store` (below 2^32, as
    /// a 32-bit memory's validation guarantees).
    fn static_offset(&self, arg: &MemArg) -> Result<u64, WasmError> {
        if arg.offset >> 32 != 0 {
            return Err(WasmError::unsupported(
                format!("a memory offset of {} (at least 2^32)", arg.offset),
                self.place(),
            ));
        }
        Ok(arg.offset)
    }

    /// `mem_load` of a `ty` at the popped `i32` address plus the memarg's offset.
    pub(crate) fn mem_load(&mut self, ty: Inst, arg: &MemArg) -> Result<Inst, WasmError> {
        let o = self.static_offset(arg)?;
        let mem = self.memory_of(arg)?;
        let a = self.pop();
        Ok(self.b.ins().mem_load(ty, mem.global, a, o))
    }

    /// `mem_store` of `v` at the `i32` address `a` plus the memarg's offset.
    pub(crate) fn mem_store(&mut self, arg: &MemArg, a: Inst, v: Inst) -> Result<(), WasmError> {
        let o = self.static_offset(arg)?;
        let mem = self.memory_of(arg)?;
        self.b.ins().mem_store(mem.global, a, v, o);
        Ok(())
    }

    /// A load of `loaded`, then `ext` (`Zext`/`Sext`) to `to` when it is narrower.
    fn load(
        &mut self,
        arg: &MemArg,
        loaded: Ty,
        ext: Option<(Conversion, Ty)>,
    ) -> Result<(), WasmError> {
        let loaded = self.ty(loaded);
        let mut v = self.mem_load(loaded, arg)?;
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
        self.mem_store(arg, a, v)
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

    /// `memory.copy` from memory `src_mem` to memory `dst_mem` (the same one, or two of
    /// several): both ranges checked before anything is written (they may overlap).
    fn memory_copy(&mut self, dst_mem: u32, src_mem: u32) -> Result<(), WasmError> {
        let [dst, src, n] = self.pop_range();
        let (src_base, src_size) = self.memory_state(src_mem)?;
        let (dst_base, dst_size) = if dst_mem == src_mem {
            (src_base, src_size)
        } else {
            self.memory_state(dst_mem)?
        };
        let oob = crate::traps::OUT_OF_BOUNDS_MEMORY;
        self.check_range(src, n, src_size, oob)?;
        self.check_range(dst, n, dst_size, oob)?;
        let (d, s) = (self.byte_at(dst_base, dst), self.byte_at(src_base, src));
        let memmove = self.libc()?.memmove;
        self.b.ins().call(memmove, &[d, s, n]);
        Ok(())
    }

    /// `memory.fill` of memory `mem`: the range checked, then every byte set to the value's
    /// low 8 bits.
    fn memory_fill(&mut self, mem: u32) -> Result<(), WasmError> {
        let n = self.pop_u64();
        let value = self.pop();
        let dst = self.pop_u64();
        let (base, size) = self.memory_state(mem)?;
        self.check_range(dst, n, size, crate::traps::OUT_OF_BOUNDS_MEMORY)?;
        let d = self.byte_at(base, dst);
        let memset = self.libc()?.memset;
        self.b.ins().call(memset, &[d, value, n]);
        Ok(())
    }

    /// `memory.init`: bytes `src..src+n` of data segment `index` (of length 0 once dropped,
    /// and an active segment is dropped by instantiation) to `dst`, both ranges checked first.
    fn memory_init(&mut self, index: u32, mem: u32) -> Result<(), WasmError> {
        let seg = self.data_segment(index)?;
        let [dst, src, n] = self.pop_range();
        let (base, size) = self.memory_state(mem)?;
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
            O::MemorySize { mem } => {
                let mem = self.memory(*mem)?;
                let size = load_field(&mut self.b, &mem, 1);
                let sixteen = self.b.module().const_i64(16);
                let pages = self.b.ins().lshr(size, sixteen);
                let i32t = self.ty(I32);
                let r = self.b.ins().trunc(i32t, pages);
                self.stack.push(r);
            }
            O::MemoryCopy { dst_mem, src_mem } => self.memory_copy(*dst_mem, *src_mem)?,
            O::MemoryFill { mem } => self.memory_fill(*mem)?,
            O::MemoryInit { data_index, mem } => self.memory_init(*data_index, *mem)?,
            O::DataDrop { data_index } => {
                let seg = self.data_segment(*data_index)?;
                let zero = self.b.module().const_i64(0);
                self.b.ins().store(seg.len, zero);
            }
            O::MemoryGrow { mem } => {
                let mem = self.memory(*mem)?;
                let d = self.pop();
                let r = self.b.ins().mem_grow(mem.global, d);
                self.stack.push(r);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
