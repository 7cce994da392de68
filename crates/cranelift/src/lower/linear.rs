//! Linear memories (spec/ir.md, "Linear memories"; spec/backends.md, "Linear memories"):
//! `mem_load` and `mem_store` with their bounds check, `mem_grow` as a call of the runtime's
//! `irkit.rt.mem_grow` (`crate::memories`).
//!
//! An access of `n` bytes at `zext(a) + o` reads the record's `size` and `base` and compares:
//! `zext(a) + o + n > size` branches to a cold block calling the trap routine with the
//! instruction's trap line. The record's fields are read with loads Cranelift may merge
//! between calls (nothing but `mem_grow`, a call, writes them). In an executable whose memories
//! have guard regions (`crate::memories::Guarded`), an access with `o + n` at most the guard
//! is not compared: it reads the base (which never moves: a load Cranelift may hoist out of
//! loops) and accesses `base + zext(a) + o`, which faults past the size.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, TrapCode, Value, types as clt};
use cranelift_module::Module as ClModule;
use irkit_backend::{BackendError, trap_kinds};
use irkit_core::{Inst, Op};
use smallvec::smallvec;

use super::func::FnLower;
use crate::memories::{RECORD_BASE, RECORD_SIZE};
use crate::place::Place;
use crate::types::{ClifType, PTR, Scalar};

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// Lowers `mem_load`, `mem_store` or `mem_grow` `inst`.
    pub(crate) fn linear(&mut self, inst: Inst, op: Op, place: &Place) -> Result<(), BackendError> {
        let m = self.ctx.m;
        let ops = m.operands(inst);
        let record = self.val1(ops[0])?;
        let addr = self.val1(ops[1])?;
        if op == Op::MemGrow {
            let grow = self.ctx.func_in_func(self.ctx.rt.mem_grow, self.b.func);
            let call = self.b.ins().call(grow, &[record, addr]);
            let r = self.b.inst_results(call)[0];
            self.set(inst, smallvec![r]);
            return Ok(());
        }
        let ty = match op {
            Op::MemLoad => m.ty(inst),
            _ => ops.get(2).and_then(|&v| m.value_type(v)),
        }
        .ok_or_else(|| self.malformed("a memory access without a type"))?;
        let s = self.scalar(ty)?;
        let n = self
            .ctx
            .layouts
            .get(ty)
            .ok_or_else(|| self.malformed("an access of a type without layout"))?
            .size;
        let offset = m.payload(inst).as_int().unwrap_or(0);
        let guarded = crate::memories::guarded_access(self.ctx, inst);
        let (p, flags) = if guarded {
            // The bytes past the size, up to the guard's end, have no access: an access out of
            // bounds faults there, and the fault handler reports it (`crate::routines`), found
            // by its site code (`crate::sites`) or else by its code range.
            let fixed = MemFlagsData::trusted().with_readonly().with_can_move();
            let base = self.b.ins().load(PTR, fixed, record, RECORD_BASE);
            let ea = self.b.ins().uextend(clt::I64, addr);
            let p = self.b.ins().iadd(base, ea);
            let code = self
                .site_code(trap_kinds::OUT_OF_BOUNDS_MEMORY, place)
                .unwrap_or(TrapCode::HEAP_OUT_OF_BOUNDS);
            (p, MemFlagsData::new().with_trap_code(Some(code)))
        } else {
            let p = self.linear_address(record, addr, offset + n, place)?;
            (p, MemFlagsData::new())
        };
        let p = if offset > i32::MAX as u64 {
            self.b.ins().iadd_imm_u(p, offset as i64)
        } else {
            p
        };
        let at = i32::try_from(offset).unwrap_or(0);
        if op == Op::MemLoad {
            let v = self.b.ins().load(s.clif(), flags, p, at);
            let v = if s == Scalar::Int(1) {
                self.b.ins().band_imm_u(v, 1)
            } else {
                v
            };
            self.set(inst, smallvec![v]);
        } else {
            let v = self.val1(ops[2])?;
            self.b.ins().store(flags, v, p, at);
        }
        Ok(())
    }

    /// The address `base + zext(addr)` of the memory whose record is at `record`, after the
    /// check that an access there ending `end` bytes further lies inside the memory (`end` is
    /// the static offset plus the access's size; the access adds the offset).
    fn linear_address(
        &mut self,
        record: Value,
        addr: Value,
        end: u64,
        place: &Place,
    ) -> Result<Value, BackendError> {
        let fields = MemFlagsData::trusted();
        let ea = self.b.ins().uextend(clt::I64, addr);
        let size = self.b.ins().load(clt::I64, fields, record, RECORD_SIZE);
        // At most 2^32 - 1 + 2^32 - 1 + 256 (the verifier bounds the offset): no wrap-around.
        let last = self.b.ins().iadd_imm_u(ea, end as i64);
        let oob = self.b.ins().icmp(IntCC::UnsignedGreaterThan, last, size);
        self.trap_if(oob, trap_kinds::OUT_OF_BOUNDS_MEMORY, place)?;
        let base = self.b.ins().load(PTR, fields, record, RECORD_BASE);
        Ok(self.b.ins().iadd(base, ea))
    }
}
