//! Memory: `stackalloc` (a stack slot per instruction, zeroed each time it executes), `load`
//! and `store` (unaligned, little-endian host; `i1` is a byte 0 or 1), and `elem` address
//! arithmetic (`p + sext(i0) * size(T) + offset(T; i1, ...)`, constant parts folded).

use cranelift_codegen::ir::{
    InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value, types as clt,
};
use cranelift_module::Module as ClModule;
use irkit_backend::BackendError;
use irkit_core::{Inst, Opcode};

use super::func::FnLower;
use crate::error::unsupported;
use crate::place::Place;
use crate::types::PTR;
use crate::types::{ClifType, Scalar, Shape};

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// `stackalloc T`: the address of this instruction's zeroed stack slot.
    pub(crate) fn stackalloc(&mut self, ty: Inst, place: &Place) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let l = self
            .ctx
            .layouts
            .get(ty)
            .ok_or_else(|| self.malformed("stackalloc of a non-value type"))?;
        let (size, align) = (l.size.max(1), l.align);
        let size32 = u32::try_from(size)
            .map_err(|_| unsupported(place.render(m), format!("a stack object of {size} bytes")))?;
        let shift = align.trailing_zeros() as u8;
        let ss = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size32,
            shift,
        ));
        let p = self.b.ins().stack_addr(PTR, ss, 0);
        // Every execution gives a zeroed object.
        let cfg = self.ctx.cl.target_config();
        if size <= 256 {
            let a = u8::try_from(align.min(8)).unwrap_or(8);
            let a = a.min(1u8 << size.trailing_zeros().min(3));
            self.b
                .emit_small_memset(cfg, p, 0, size, a, MemFlagsData::new());
        } else {
            let zero = self.b.ins().iconst(clt::I8, 0);
            let n = self.b.ins().iconst(PTR, size as i64);
            self.b.call_memset(cfg, p, zero, n);
        }
        Ok(p)
    }

    /// `load`: a scalar of the instruction's type.
    pub(crate) fn load(&mut self, inst: Inst, ptr: Inst) -> Result<Value, BackendError> {
        let p = self.val1(ptr)?;
        let ty = self
            .ctx
            .m
            .ty(inst)
            .ok_or_else(|| self.malformed("load without type"))?;
        let s = self.scalar(ty)?;
        let v = self.b.ins().load(s.clif(), MemFlagsData::new(), p, 0);
        Ok(if s == Scalar::Int(1) {
            // Bit 0 of the byte.
            self.b.ins().band_imm_u(v, 1)
        } else {
            v
        })
    }

    /// `store`.
    pub(crate) fn store(&mut self, ptr: Inst, value: Inst) -> Result<(), BackendError> {
        let p = self.val1(ptr)?;
        let v = self.val1(value)?;
        self.b.ins().store(MemFlagsData::new(), v, p, 0);
        Ok(())
    }

    /// `elem T, p, i0, i1, ...`: `p + sext(i0) * size(T) + offset(T; i1, ...)`.
    pub(crate) fn elem(&mut self, inst: Inst, ops: &[Inst]) -> Result<Value, BackendError> {
        let m = self.ctx.m;
        let mut addr = self.val1(ops[1])?;
        let mut ty = ops[0];
        let mut scale = self
            .ctx
            .layouts
            .get(ty)
            .ok_or_else(|| self.malformed("elem of a non-value type"))?
            .size;
        let mut konst: i64 = 0;
        for (k, &idx) in ops[2..].iter().enumerate() {
            if k > 0 {
                let l = self
                    .ctx
                    .layouts
                    .get(ty)
                    .ok_or_else(|| self.malformed("elem steps into a non-value type"))?;
                match &l.shape {
                    Shape::Struct { fields, offsets } => {
                        let f = m.payload(idx).as_int().unwrap_or(u64::MAX) as usize;
                        let (Some(&fty), Some(&off)) = (fields.get(f), offsets.get(f)) else {
                            return Err(self.malformed("elem field index out of range"));
                        };
                        konst = konst.wrapping_add(off as i64);
                        ty = fty;
                        continue;
                    }
                    Shape::Array { elem, .. } => {
                        ty = *elem;
                        scale = self.ctx.layouts.get(ty).map_or(0, |l| l.size);
                    }
                    Shape::Scalar(_) | Shape::Vector { .. } => {
                        return Err(self.malformed(&format!("elem {inst} steps into a scalar")));
                    }
                }
            }
            // An array step (or the first index): sext(i) * scale.
            let ity = m
                .value_type(idx)
                .ok_or_else(|| self.malformed("index without type"))?;
            if let (Opcode::CONST_INT, Some(w)) = (m.opcode(idx), self.scalar(ity)?.width()) {
                let bits = m.payload(idx).as_int().unwrap_or(0);
                let i = irkit_core::payload::sign_extend(bits, w);
                konst = konst.wrapping_add(i.wrapping_mul(scale as i64));
                continue;
            }
            let s = self.scalar(ity)?;
            let v = self.val1(idx)?;
            let i64v = self.sext_to(v, s, clt::I64);
            let off = self.b.ins().imul_imm_s(i64v, scale as i64);
            addr = self.b.ins().iadd(addr, off);
        }
        if konst != 0 {
            addr = self.b.ins().iadd_imm_s(addr, konst);
        }
        Ok(addr)
    }
}
