//! Linear memories (spec/ir.md, "Linear memories", rules M1–M3): the typing of `mem_load`,
//! `mem_store` and `mem_grow`. M1: the memory operand is a `global_var` of the memory record
//! type `struct {ptr, i64, i32, i64}`. M2: the address is an `i32` and the static offset (the
//! payload) is below 2^32; a loaded or stored value is a scalar or a vector. M3: `mem_grow`
//! takes an `i32` page count and yields an `i32`.

use crate::{Inst, Op, Opcode};

use super::{Cx, VTy};

/// The largest static offset of an access (the payload of `mem_load` and `mem_store`).
const MAX_MEM_OFFSET: u64 = u32::MAX as u64;

impl Cx<'_> {
    /// Whether `t` is the memory record type `struct {ptr, i64, i32, i64}`.
    fn is_memory_record(&self, t: Inst) -> bool {
        let Some(d) = self.live(t) else { return false };
        let want = [Opcode::PTR, Opcode::I64, Opcode::I32, Opcode::I64];
        d.opcode == Opcode::STRUCT
            && d.operands.len() == want.len()
            && d.operands
                .iter()
                .zip(want)
                .all(|(&f, op)| self.opc(f) == Some(op))
    }

    /// M1–M3 for `mem_load`, `mem_store` and `mem_grow`.
    pub(super) fn check_memory_inst(&mut self, i: Inst, op: Op, r: Option<VTy>) {
        let Some(d) = self.live(i) else { return };
        if let Some(&m) = d.operands.first() {
            let record = self
                .live(m)
                .filter(|md| md.opcode == Opcode::GLOBAL_VAR)
                .and_then(|md| md.ty)
                .is_some_and(|t| self.is_memory_record(t));
            if !record {
                let msg = format!(
                    "operand 0 of {} must be a `global_var` of the memory record type \
                     struct {{ptr, i64, i32, i64}}, found {} ({})",
                    self.opname(i),
                    self.vname(m),
                    self.opname(m)
                );
                self.err(i, msg);
            }
        }
        if let Some(a) = self.val(i, 1) {
            let ok = self.int_w(a) == Some(32);
            self.need(i, 1, a, ok, "i32");
        }
        match op {
            Op::MemLoad | Op::MemStore => {
                let offset = d.payload.as_int().unwrap_or(0);
                if offset > MAX_MEM_OFFSET {
                    let msg = format!(
                        "the offset {offset} of {} is not below 2^32",
                        self.opname(i)
                    );
                    self.err(i, msg);
                }
                if op == Op::MemLoad {
                    if let Some(r) = r {
                        let ok = self.is_scalar(r) || self.is_vec(r);
                        self.need_res(i, r, ok, "a scalar (int, float or ptr) or a vector");
                    }
                } else if let Some(v) = self.val(i, 2) {
                    let ok = self.is_scalar(v) || self.is_vec(v);
                    self.need(i, 2, v, ok, "a scalar (int, float or ptr) or a vector");
                }
            }
            _ => {
                if let Some(r) = r {
                    let ok = self.int_w(r) == Some(32);
                    self.need_res(i, r, ok, "i32");
                }
            }
        }
    }
}
