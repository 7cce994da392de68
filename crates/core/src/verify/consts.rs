//! Constants: each of a type its opcode allows, with a payload that fits it.

use crate::{Inst, Opcode};

use super::{Cx, Kind, VTy, plural};

impl Cx<'_> {
    /// Checks every constant of the pool.
    pub(super) fn check_constants(&mut self) {
        let pool: Vec<Inst> = self.m.pool.to_vec();
        for h in pool {
            if self.errors.len() >= super::MAX_ERRORS {
                return;
            }
            if !self.ok(h) || !self.reg_ok[h.idx()] {
                continue;
            }
            if self.opc(h).is_some_and(|op| op.is_constant()) {
                self.check_constant(h);
            }
        }
    }

    fn check_constant(&mut self, c: Inst) {
        let Some(d) = self.live(c) else { return };
        let Some(t) = d.ty else { return };
        let tk = self.kind(t);
        if tk == Kind::Bad {
            return;
        }
        let op = d.opcode;
        if tk != Kind::Value {
            let msg = format!(
                "`{op}` has type {}, which is not a value type",
                self.ty_str(t)
            );
            self.err(c, msg);
            return;
        }
        let v = VTy(Some(t));
        match op {
            Opcode::CONST_INT => match self.int_w(v) {
                None => {
                    let msg = format!(
                        "`const_int` has type {}, expected an integer type",
                        self.ty_str(t)
                    );
                    self.err(c, msg);
                }
                Some(w) => {
                    let val = d.payload.as_int().unwrap_or(0);
                    if w < 64 && val >> w != 0 {
                        let msg =
                            format!("`const_int` value {val} does not fit in {}", self.ty_str(t));
                        self.err(c, msg);
                    }
                }
            },
            Opcode::CONST_FLOAT => match self.float_w(v) {
                None => {
                    let msg = format!(
                        "`const_float` has type {}, expected a float type",
                        self.ty_str(t)
                    );
                    self.err(c, msg);
                }
                Some(32) if d.payload.as_float_bits().unwrap_or(0) >> 32 != 0 => {
                    self.err(c, "`const_float` of type f32 has bits set above the low 32");
                }
                Some(_) => {}
            },
            Opcode::CONST_NULL if !self.is_ptr(v) => {
                let msg = format!("`const_null` has type {}, expected ptr", self.ty_str(t));
                self.err(c, msg);
            }
            Opcode::CONST_ZERO => {}
            Opcode::CONST_AGGREGATE => self.check_aggregate(c, v),
            Opcode::CONST_BYTES => {
                let n = d.payload.as_bytes().map_or(0, <[u8]>::len) as u64;
                let td = self.live(t);
                let is_i8_array = td.is_some_and(|td| {
                    td.opcode == Opcode::ARRAY
                        && td.operands.first().and_then(|&e| self.opc(e)) == Some(Opcode::I8)
                });
                if !is_i8_array {
                    let msg = format!(
                        "`const_bytes` has type {}, expected [{n} x i8]",
                        self.ty_str(t)
                    );
                    self.err(c, msg);
                } else {
                    let len = td.and_then(|td| td.payload.as_int()).unwrap_or(0);
                    if len != n {
                        let msg = format!(
                            "`const_bytes` holds {}, its type {} has {len}",
                            plural(n as usize, "byte"),
                            self.ty_str(t)
                        );
                        self.err(c, msg);
                    }
                }
            }
            _ => {}
        }
    }

    fn check_aggregate(&mut self, c: Inst, v: VTy) {
        let Some(d) = self.live(c) else { return };
        let Some(t) = v.0 else { return };
        let Some(td) = self.live(t) else { return };
        let n = d.operands.len();
        let (count, what) = match td.opcode {
            Opcode::ARRAY => (td.payload.as_int().unwrap_or(0), "element"),
            Opcode::VEC => (td.payload.as_int().unwrap_or(0), "lane"),
            Opcode::STRUCT | Opcode::NAMED_STRUCT => (td.operands.len() as u64, "field"),
            _ => {
                let msg = format!(
                    "`const_aggregate` has type {}, expected a struct, array or vector type",
                    self.ty_str(t)
                );
                self.err(c, msg);
                return;
            }
        };
        if n as u64 != count {
            let msg = format!(
                "`const_aggregate` has {}, its type {} has {}",
                plural(n, "element"),
                self.ty_str(t),
                plural(usize::try_from(count).unwrap_or(usize::MAX), what)
            );
            self.err(c, msg);
            return;
        }
        for (k, &o) in d.operands.iter().enumerate() {
            let Some(od) = self.live(o) else { continue };
            let is_def = od.opcode.is_definition();
            if !od.opcode.is_constant() && !is_def {
                let msg = format!(
                    "element {k} must be a constant or a definition, found {}",
                    self.opname(o)
                );
                self.err(c, msg);
                continue;
            }
            let got = if is_def {
                VTy(self.ptr)
            } else {
                match od.ty.and_then(|ot| self.as_value_type(ot)) {
                    Some(g) => g,
                    None => continue,
                }
            };
            let Ok(want) = self.field(v, k as u64) else {
                continue;
            };
            if got != VTy(Some(want)) {
                let msg = format!(
                    "element {k} has type {}, expected {}",
                    self.vty_str(got),
                    self.ty_str(want)
                );
                self.err(c, msg);
            }
        }
    }
}
