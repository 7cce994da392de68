//! Linear memories (spec/ir.md, "Linear memories", rules M1–M4): the typing of `mem_load`,
//! `mem_store` and `mem_grow`. M1: the memory operand is a `global_var` of the memory record
//! type `struct {ptr, i64, i32, i64}`. M2: the address is an `i32` and the static offset (the
//! payload) is below 2^32; a loaded or stored value is a scalar or a vector. M3: `mem_grow`
//! takes an `i32` page count and yields an `i32`. M4: a memory starts empty: its record's
//! initializer, if it has one, has a null `base` and a `size` and `reserved` of 0.

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

    /// Whether memory record global `g` has no initializer, or one whose `base`, `size` and
    /// `reserved` fields are null and 0 (M4).
    fn starts_empty(&self, g: Inst) -> bool {
        let Some(init) = self.live(g).and_then(|d| d.operands.first().copied()) else {
            return true;
        };
        let Some(d) = self.live(init) else {
            return true;
        };
        match d.opcode {
            Opcode::CONST_ZERO => true,
            Opcode::CONST_AGGREGATE => [0, 1, 3].iter().all(|&k| {
                d.operands
                    .get(k)
                    .and_then(|&f| self.live(f))
                    .is_some_and(|f| {
                        matches!(f.opcode, Opcode::CONST_NULL | Opcode::CONST_ZERO)
                            || (f.opcode == Opcode::CONST_INT && f.payload.as_int() == Some(0))
                    })
            }),
            _ => false,
        }
    }

    /// M1–M4 for `mem_load`, `mem_store` and `mem_grow`.
    pub(super) fn check_memory_inst(&mut self, i: Inst, op: Op, r: Option<VTy>) {
        let Some(d) = self.live(i) else { return };
        if let Some(&m) = d.operands.first() {
            let record = self
                .live(m)
                .filter(|md| md.opcode == Opcode::GLOBAL_VAR)
                .and_then(|md| md.ty)
                .is_some_and(|t| self.is_memory_record(t));
            if record && !self.starts_empty(m) {
                let msg = format!(
                    "the linear memory {} must start empty: its initializer's base, size and \
                     reserved fields must be null and 0 (mem_grow gives it pages)",
                    self.vname(m)
                );
                self.err(i, msg);
            }
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
