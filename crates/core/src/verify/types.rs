//! Type well-formedness, value types, and how messages spell types.
//!
//! Kinds are computed in pool order: the pool pass has already checked that every operand of a
//! pool entry comes earlier in the pool, so each type's kind is known before its users' and no
//! recursion is needed, however deep the nest. A malformed type is reported once; types built
//! on it become `Bad` silently.

use crate::{Inst, Opcode, Payload};

use super::{Cx, Kind, VTy};

/// Longest type spelling in a message before it is cut with `…`.
const RENDER_BUDGET: usize = 120;
/// Deepest type nesting spelled out in a message.
const RENDER_DEPTH: usize = 8;

impl Cx<'_> {
    /// Computes the kind of every pool entry, reporting malformed types. `first_kinds` (from
    /// `Cx::check_stray_hoistables`' scan) starts them: every live type outside the pool is
    /// unusable (reported by the handle pass); an interface used as a type stands for the
    /// conforming type (`Self`).
    pub(super) fn compute_kinds(&mut self, first_kinds: Vec<(u32, Kind)>) {
        let kind = self.kind.to_mut();
        for (k, first) in first_kinds {
            kind[k as usize] = first;
        }
        let pool: Vec<Inst> = self.m.pool.to_vec();
        for h in pool {
            if self.pool_pos.get(h.idx()).copied().flatten().is_none() {
                continue;
            }
            let Some(op) = self.opc(h) else { continue };
            if op == Opcode::SPECIALIZE {
                // A specialized generic type is a value type.
                let g = self.live(h).and_then(|d| d.operands.first().copied());
                if self.ok(h)
                    && self.reg_ok[h.idx()]
                    && let Some(g) = g
                    && matches!(
                        self.generic_defines(g),
                        Some(super::generics::Defines::Type(_))
                    )
                {
                    self.kind.to_mut()[h.idx()] = Kind::Value;
                }
                continue;
            }
            if !op.is_type() {
                continue;
            }
            let k = if self.ok(h) && self.reg_ok[h.idx()] {
                self.type_kind(h, op)
            } else {
                Kind::Bad
            };
            self.kind.to_mut()[h.idx()] = k;
            if op == Opcode::PTR && k == Kind::Value && self.ptr.is_none() {
                self.ptr = Some(h);
            }
        }
    }

    /// The kind of a well-handled, registry-valid type whose operands' kinds are known.
    fn type_kind(&mut self, t: Inst, op: Opcode) -> Kind {
        let ops: &[Inst] = self.live(t).map_or(&[], |d| &d.operands);
        match op {
            Opcode::VOID => Kind::Void,
            Opcode::TYPE_PARAM => Kind::Value,
            // A value of an interface type: one pointer-sized scalar (spec/ir.md,
            // "Existentials"), of an interface.
            Opcode::EXISTS => {
                let iface = ops.first().copied();
                if iface.is_some_and(|x| self.opc(x) == Some(Opcode::INTERFACE)) {
                    Kind::Value
                } else {
                    self.err(t, "`exists` needs an `interface` as its operand");
                    Kind::Bad
                }
            }
            op if crate::scalar::scalar(op).is_some() => Kind::Value,
            Opcode::VEC => {
                let lane = ops.first().and_then(|&o| self.opc(o));
                let n = self.live(t).and_then(|d| d.payload.as_int());
                let lane_ok = lane.and_then(crate::scalar::Lane::of).is_some();
                let n_ok = n.is_some_and(|n| (1..=crate::scalar::MAX_LANES).contains(&n));
                if lane_ok && n_ok {
                    Kind::Value
                } else {
                    let lane = ops.first().map_or("?".to_owned(), |&o| self.ty_str(o));
                    let msg = if lane_ok {
                        format!(
                            "`vec` needs 1 to {} lanes, found {}",
                            crate::scalar::MAX_LANES,
                            n.unwrap_or(0)
                        )
                    } else {
                        format!("`vec` lane type {lane} is not i8, i16, i32, i64, f32 or f64")
                    };
                    self.err(t, msg);
                    Kind::Bad
                }
            }
            Opcode::ARRAY | Opcode::STRUCT | Opcode::NAMED_STRUCT => {
                let what = if op == Opcode::ARRAY {
                    "element"
                } else {
                    "field"
                };
                let mut kind = Kind::Value;
                for (k, &o) in ops.iter().enumerate() {
                    match self.kind(o) {
                        Kind::Value => {}
                        Kind::Bad => kind = Kind::Bad,
                        _ => {
                            let msg = if op == Opcode::ARRAY {
                                format!("array {what} type {} is not a value type", self.ty_str(o))
                            } else {
                                format!(
                                    "{what} {k} has type {}, which is not a value type",
                                    self.ty_str(o)
                                )
                            };
                            self.err(t, msg);
                            kind = Kind::Bad;
                        }
                    }
                    if self.errors.len() >= super::MAX_ERRORS {
                        break;
                    }
                }
                if op == Opcode::NAMED_STRUCT
                    && self
                        .live(t)
                        .is_some_and(|d| d.payload.as_str().is_some_and(str::is_empty))
                {
                    self.err(t, "`named_struct` needs a non-empty name");
                    kind = Kind::Bad;
                }
                kind
            }
            Opcode::FN => {
                let mut kind = Kind::Fn;
                for (k, &o) in ops.iter().enumerate() {
                    match (k, self.kind(o)) {
                        (_, Kind::Value) | (0, Kind::Void) => {}
                        (_, Kind::Bad) => kind = Kind::Bad,
                        (0, _) => {
                            let msg = format!(
                                "fn return type {} is not a value type or void",
                                self.ty_str(o)
                            );
                            self.err(t, msg);
                            kind = Kind::Bad;
                        }
                        _ => {
                            let msg = format!(
                                "fn parameter {} has type {}, which is not a value type",
                                k - 1,
                                self.ty_str(o)
                            );
                            self.err(t, msg);
                            kind = Kind::Bad;
                        }
                    }
                    if self.errors.len() >= super::MAX_ERRORS {
                        break;
                    }
                }
                kind
            }
            _ => Kind::Bad,
        }
    }

    // ---- value-type queries -------------------------------------------------------------

    /// The opcode of a value type (`ptr` for the un-interned pointer).
    fn vop(&self, v: VTy) -> Option<Opcode> {
        match v.0 {
            None => Some(Opcode::PTR),
            Some(t) => self.opc(t),
        }
    }

    /// The width of an integer value type.
    pub(super) fn int_w(&self, v: VTy) -> Option<u32> {
        crate::scalar::int_width(self.vop(v)?)
    }

    /// The width of a float value type.
    pub(super) fn float_w(&self, v: VTy) -> Option<u32> {
        crate::scalar::float_width(self.vop(v)?)
    }

    /// Whether `v` is `ptr`.
    pub(super) fn is_ptr(&self, v: VTy) -> bool {
        self.vop(v) == Some(Opcode::PTR)
    }

    /// Whether `v` is `i1`.
    pub(super) fn is_i1(&self, v: VTy) -> bool {
        self.vop(v) == Some(Opcode::I1)
    }

    /// Whether `v` is a scalar (int, float, ptr, or an existential: one pointer).
    pub(super) fn is_scalar(&self, v: VTy) -> bool {
        self.int_w(v).is_some()
            || self.float_w(v).is_some()
            || self.is_ptr(v)
            || self.vop(v) == Some(Opcode::EXISTS)
    }

    /// The type of field / element `k` of an aggregate value type, or why there is none:
    /// `Err(None)` for a non-aggregate, `Err(Some(count))` for an index out of range.
    pub(super) fn field(&self, v: VTy, k: u64) -> Result<Inst, Option<u64>> {
        let t = v.0.ok_or(None)?;
        let d = self.live(t).ok_or(None)?;
        match d.opcode {
            Opcode::ARRAY | Opcode::VEC => {
                let len = d.payload.as_int().unwrap_or(0);
                if k < len {
                    d.operands.first().copied().ok_or(Some(len))
                } else {
                    Err(Some(len))
                }
            }
            Opcode::STRUCT | Opcode::NAMED_STRUCT => usize::try_from(k)
                .ok()
                .and_then(|k| d.operands.get(k).copied())
                .ok_or(Some(d.operands.len() as u64)),
            _ => Err(None),
        }
    }

    /// The lane type and lane count of a vector value type.
    pub(super) fn vec_of(&self, v: VTy) -> Option<(Inst, u64)> {
        let t = v.0?;
        let d = self.live(t)?;
        if d.opcode != Opcode::VEC {
            return None;
        }
        Some((*d.operands.first()?, d.payload.as_int()?))
    }

    /// Whether `v` is a vector type.
    pub(super) fn is_vec(&self, v: VTy) -> bool {
        self.vec_of(v).is_some()
    }

    /// Whether `v` is an aggregate (array, struct, named_struct).
    pub(super) fn is_aggregate(&self, v: VTy) -> bool {
        matches!(
            self.vop(v),
            Some(Opcode::ARRAY | Opcode::STRUCT | Opcode::NAMED_STRUCT)
        )
    }

    /// The value type of `t` if it is a well-formed value type.
    pub(super) fn as_value_type(&self, t: Inst) -> Option<VTy> {
        (self.kind(t) == Kind::Value).then_some(VTy(Some(t)))
    }

    // ---- spelling -----------------------------------------------------------------------

    /// A value type as text.
    pub(super) fn vty_str(&self, v: VTy) -> String {
        match v.0 {
            None => "ptr".to_owned(),
            Some(t) => self.ty_str(t),
        }
    }

    /// A type as text (as the text format spells it), cut short when long or deep.
    pub(super) fn ty_str(&self, t: Inst) -> String {
        let mut out = String::new();
        self.render(t, 0, &mut out);
        out
    }

    fn render(&self, t: Inst, depth: usize, out: &mut String) {
        use std::fmt::Write as _;
        if out.len() > RENDER_BUDGET || depth > RENDER_DEPTH {
            out.push('…');
            return;
        }
        let Some(d) = self.live(t) else {
            let _ = write!(out, "<inst {}>", t.index());
            return;
        };
        match d.opcode {
            Opcode::ARRAY => {
                let len = match &*d.payload {
                    Payload::Int(n) => n.to_string(),
                    _ => "?".to_owned(),
                };
                let _ = write!(out, "[{len} x ");
                match d.operands.first() {
                    Some(&e) => self.render(e, depth + 1, out),
                    None => out.push('?'),
                }
                out.push(']');
            }
            Opcode::VEC => {
                out.push_str("vec ");
                match d.operands.first() {
                    Some(&e) => self.render(e, depth + 1, out),
                    None => out.push('?'),
                }
                let _ = write!(out, " {}", d.payload.as_int().unwrap_or(0));
            }
            Opcode::STRUCT | Opcode::NAMED_STRUCT => {
                if d.opcode == Opcode::NAMED_STRUCT {
                    let _ = write!(out, "named_struct {:?} ", d.payload.as_str().unwrap_or(""));
                }
                out.push_str("struct {");
                self.render_list(&d.operands, depth, out);
                out.push('}');
            }
            Opcode::FN => {
                out.push_str("fn(");
                self.render_list(d.operands.get(1..).unwrap_or(&[]), depth, out);
                out.push_str(") -> ");
                match d.operands.first() {
                    Some(&r) => self.render(r, depth + 1, out),
                    None => out.push('?'),
                }
            }
            Opcode::TYPE_PARAM => {
                let g = d
                    .operands
                    .first()
                    .map_or("?".to_owned(), |&g| self.vname(g));
                let _ = write!(out, "{g}.T{}", d.payload.as_int().unwrap_or(0));
            }
            Opcode::SPECIALIZE => {
                let g = d
                    .operands
                    .first()
                    .map_or("?".to_owned(), |&g| self.vname(g));
                let _ = write!(out, "{g}<");
                self.render_list(d.operands.get(1..).unwrap_or(&[]), depth, out);
                out.push('>');
            }
            Opcode::INTERFACE | Opcode::WITNESS_TABLE | Opcode::WITNESS_PARAM => {
                out.push_str(&self.vname(t));
            }
            op if op.is_type() => {
                let _ = write!(out, "{op}");
            }
            op => {
                let _ = write!(out, "`{op}` (inst {})", t.index());
            }
        }
    }

    fn render_list(&self, items: &[Inst], depth: usize, out: &mut String) {
        for (k, &f) in items.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            if out.len() > RENDER_BUDGET {
                out.push('…');
                return;
            }
            self.render(f, depth + 1, out);
        }
    }
}
