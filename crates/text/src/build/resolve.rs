//! Resolving operands: names to instructions, inline types and constants interned, literals
//! read in their type's format.

use irkit_core::{Inst, Opcode, Payload};

use super::{Binding, Build, Local};
use crate::ast::{ConstValue, Operand, Stmt, StmtKind};
use crate::error::Pos;
use crate::literal::{int_in_width, parse_f32, parse_f64};

impl Build {
    /// Sets the types and operands of the instructions of the item of `local`.
    /// Sets the type and operands of `inst`, the instruction of statement `stmt` written in
    /// the item of `local`.
    pub(super) fn resolve(&mut self, inst: Inst, stmt: &Stmt, local: &Local) {
        if let Some(t) = stmt.result.as_ref().and_then(|r| r.ty.as_ref())
            && let Some(ty) = self.operand(t, Some(local))
            && let Err(e) = self.m.set_type(inst, Some(ty))
        {
            self.error(t.pos(), format!("cannot set the type: {e}"));
        }
        let StmtKind::Inst { operands, .. } = &stmt.kind else {
            return;
        };
        let mut ops = Vec::with_capacity(operands.len());
        for o in operands {
            if let Some(i) = self.operand(o, Some(local)) {
                ops.push(i);
            }
        }
        if ops.len() == operands.len()
            && !ops.is_empty()
            && let Err(e) = self.m.set_operands(inst, ops)
        {
            self.error(stmt.pos, format!("cannot set the operands: {e}"));
        }
    }

    /// The instruction an operand stands for, interning inline types and constants; `None`
    /// after reporting an error (or when it names a value that already failed).
    pub(super) fn operand(&mut self, o: &Operand, local: Option<&Local>) -> Option<Inst> {
        match o {
            Operand::Ref(name, pos) => match self.lookup(local, name) {
                Some(Binding::Inst(i)) => Some(i),
                Some(Binding::Hoist(j)) => self.module_hoists.get(j as usize).copied().flatten(),
                Some(Binding::LocalHoist(j)) => local
                    .and_then(|l| l.hoist_values.get(j as usize))
                    .copied()
                    .flatten(),
                None => {
                    self.error(*pos, format!("undefined name `{}`", name.display()));
                    None
                }
            },
            Operand::Prim(op, pos) => self.intern(*op, None, &[], Payload::None, *pos),
            Operand::Array(n, elem, pos) => {
                let e = self.operand(elem, local)?;
                self.intern(Opcode::ARRAY, None, &[e], Payload::Int(*n), *pos)
            }
            Operand::Vector(n, lane, pos) => {
                let e = self.operand(lane, local)?;
                self.intern(Opcode::VEC, None, &[e], Payload::Int(*n), *pos)
            }
            Operand::Struct(fields, pos) => {
                let ops = self.operands(fields, local)?;
                self.intern(Opcode::STRUCT, None, &ops, Payload::None, *pos)
            }
            Operand::Fn(ops, pos) => {
                let ops = self.operands(ops, local)?;
                self.intern(Opcode::FN, None, &ops, Payload::None, *pos)
            }
            Operand::Const(ty, value, pos) => {
                let t = self.operand(ty, local)?;
                self.constant(t, value, *pos, local)
            }
        }
    }

    pub(super) fn operands(
        &mut self,
        list: &[Operand],
        local: Option<&Local>,
    ) -> Option<Vec<Inst>> {
        let mut out = Vec::with_capacity(list.len());
        let mut ok = true;
        for o in list {
            match self.operand(o, local) {
                Some(i) => out.push(i),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    pub(super) fn intern(
        &mut self,
        op: Opcode,
        ty: Option<Inst>,
        ops: &[Inst],
        payload: Payload,
        pos: Pos,
    ) -> Option<Inst> {
        match self.m.intern(op, ty, ops, payload) {
            Ok(i) => Some(i),
            Err(e) => {
                self.error(pos, format!("cannot build `{op}`: {e}"));
                None
            }
        }
    }

    pub(super) fn type_text(&self, t: Inst) -> String {
        crate::printer::operand_text(&self.m, t)
    }

    pub(super) fn constant(
        &mut self,
        t: Inst,
        value: &ConstValue,
        pos: Pos,
        local: Option<&Local>,
    ) -> Option<Inst> {
        let (op, payload, ops) = match value {
            ConstValue::Int(v) => {
                if let Some(w) = self.m.int_width(t) {
                    match int_in_width(*v, w) {
                        Some(p) => (Opcode::CONST_INT, Payload::Int(p), Vec::new()),
                        None => {
                            let msg = format!("integer `{v}` is out of range for `i{w}`");
                            self.error(pos, msg);
                            return None;
                        }
                    }
                } else if let Some(w) = self.m.float_width(t) {
                    let bits = self.float_bits(value, w, pos)?;
                    (Opcode::CONST_FLOAT, Payload::Float(bits), Vec::new())
                } else {
                    let msg = format!(
                        "an integer constant needs an integer or float type, found `{}`",
                        self.type_text(t)
                    );
                    self.error(pos, msg);
                    return None;
                }
            }
            ConstValue::Bool(b) => {
                if self.m.opcode(t) != Opcode::I1 {
                    let msg = format!(
                        "`{b}` is a constant of type `i1`, not `{}`",
                        self.type_text(t)
                    );
                    self.error(pos, msg);
                    return None;
                }
                (Opcode::CONST_INT, Payload::Int(u64::from(*b)), Vec::new())
            }
            ConstValue::Float(_) | ConstValue::Nan(_) => {
                let Some(w) = self.m.float_width(t) else {
                    let msg = format!(
                        "a float constant needs type `f32` or `f64`, not `{}`",
                        self.type_text(t)
                    );
                    self.error(pos, msg);
                    return None;
                };
                let bits = self.float_bits(value, w, pos)?;
                (Opcode::CONST_FLOAT, Payload::Float(bits), Vec::new())
            }
            ConstValue::Null => (Opcode::CONST_NULL, Payload::None, Vec::new()),
            ConstValue::Zero => (Opcode::CONST_ZERO, Payload::None, Vec::new()),
            ConstValue::Bytes(b) => (
                Opcode::CONST_BYTES,
                Payload::Bytes(b.as_slice().into()),
                Vec::new(),
            ),
            ConstValue::Aggregate(elems) => {
                let ops = self.operands(elems, local)?;
                (Opcode::CONST_AGGREGATE, Payload::None, ops)
            }
        };
        self.intern(op, Some(t), &ops, payload, pos)
    }

    /// The bits of a float literal in a format of `width` bits.
    pub(super) fn float_bits(&mut self, value: &ConstValue, width: u32, pos: Pos) -> Option<u64> {
        let f32_ = width == 32;
        match value {
            ConstValue::Int(v) => Some(if f32_ {
                u64::from((*v as f32).to_bits())
            } else {
                (*v as f64).to_bits()
            }),
            ConstValue::Float(s) => {
                let b = if f32_ { parse_f32(s) } else { parse_f64(s) };
                if b.is_none() {
                    self.error(pos, format!("float `{s}` is out of range for `f{width}`"));
                }
                b
            }
            ConstValue::Nan(None) => Some(if f32_ {
                crate::literal::F32_CANONICAL_NAN
            } else {
                crate::literal::F64_CANONICAL_NAN
            }),
            ConstValue::Nan(Some(b)) => {
                let is_nan = if f32_ {
                    u32::try_from(*b).is_ok_and(|x| f32::from_bits(x).is_nan())
                } else {
                    f64::from_bits(*b).is_nan()
                };
                if !is_nan {
                    self.error(pos, format!("`nan:{b:#x}` is not a NaN of `f{width}`"));
                    return None;
                }
                Some(*b)
            }
            _ => None,
        }
    }
}
