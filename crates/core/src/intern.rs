//! Hash-consing of hoistable values (Slang's "global and hoistable value deduplication").
//!
//! A hoistable value is created only through [`Module::intern`], which returns the existing
//! instruction when one with the same (opcode, type, operands, payload) is live, and otherwise
//! creates one at the *outermost scope its operands allow*: the innermost of the scopes its
//! type and operands live in. With no generics, that is always the module root. A generic's
//! parameters (`type_param`, `witness_param`) name their generic as operand 0 and live *in* it,
//! so every value built on a parameter (`fn(%T) -> %T`, `specialize @g, %T`) lives in the
//! generic too, as in Slang.

use crate::module::{HoistKey, InstData};
use crate::payload::mask_to_width;
use crate::{CoreError, Inst, Module, Opcode, Payload};

impl Module {
    /// The unique hoistable value for (opcode, type, operands, payload), created if needed.
    ///
    /// Stale handles among `ty` and `operands` (hoistables merged away by a replacement) are
    /// resolved first, so the result never refers to a dead value.
    pub fn intern(
        &mut self,
        opcode: Opcode,
        ty: Option<Inst>,
        operands: &[Inst],
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        if !opcode.is_hoistable() {
            return Err(CoreError::WrongKind {
                opcode,
                what: "is not hoistable: use `new_inst`",
            });
        }
        let ty = match ty {
            Some(t) => {
                let t = self.resolve(t);
                self.check_live(t)?;
                Some(t)
            }
            None => None,
        };
        let mut ops = Vec::with_capacity(operands.len());
        for &o in operands {
            let o = self.resolve(o);
            self.check_live(o)?;
            ops.push(o);
        }
        let key = HoistKey {
            opcode,
            ty,
            operands: ops.into_boxed_slice(),
            payload,
        };
        if let Some(&existing) = self.intern.get(&key) {
            return Ok(existing);
        }
        let scope = self.hoist_scope(opcode, key.ty, &key.operands)?;
        let operands = key.operands.iter().copied().collect();
        let mut data = InstData::new(opcode, key.ty, operands, key.payload.clone());
        data.parent = Some(scope);
        let inst = self.alloc(data)?;
        self.intern.insert(key, inst);
        self.pool.push(inst);
        Ok(inst)
    }

    /// The existing hoistable value for this key, without creating one.
    pub fn lookup(
        &self,
        opcode: Opcode,
        ty: Option<Inst>,
        operands: &[Inst],
        payload: &Payload,
    ) -> Option<Inst> {
        let key = HoistKey {
            opcode,
            ty: ty.map(|t| self.resolve(t)),
            operands: operands.iter().map(|&o| self.resolve(o)).collect(),
            payload: payload.clone(),
        };
        self.intern.get(&key).copied()
    }

    /// The scope a value is visible in: a hoistable's own scope, or the parent of any other
    /// instruction (a definition is visible in the module, a parameter in its block, …).
    fn scope_of(&self, inst: Inst) -> Inst {
        self.parent(inst).unwrap_or(self.root())
    }

    pub(crate) fn hoist_scope(
        &self,
        opcode: Opcode,
        ty: Option<Inst>,
        operands: &[Inst],
    ) -> Result<Inst, CoreError> {
        let root = self.root();
        let mut best = root;
        for (k, &o) in ty.iter().chain(operands).enumerate() {
            let s = if k == usize::from(ty.is_some())
                && is_param(opcode)
                && self.get(o).is_some_and(|d| !d.opcode().is_hoistable())
            {
                o
            } else {
                self.scope_of(o)
            };
            if s == best || s == root {
                continue;
            }
            if best == root || self.is_ancestor(best, s) {
                best = s;
            } else if !self.is_ancestor(s, best) {
                return Err(CoreError::ScopeConflict {
                    opcode,
                    a: best,
                    b: s,
                });
            }
        }
        Ok(best)
    }
}

/// Whether `opcode` is a generic parameter, which lives in the generic named by its operand 0.
pub fn is_param(opcode: Opcode) -> bool {
    matches!(opcode, Opcode::TYPE_PARAM | Opcode::WITNESS_PARAM)
}

impl Module {
    // ---- typed constructors --------------------------------------------------------------

    /// A primitive type with no operands (`void`, `i1` … `i64`, `f32`, `f64`, `ptr`).
    pub fn ty_prim(&mut self, opcode: Opcode) -> Inst {
        debug_assert!(opcode.is_type());
        self.intern(opcode, None, &[], Payload::None)
            .expect("primitive types always intern")
    }

    /// `void`.
    pub fn ty_void(&mut self) -> Inst {
        self.ty_prim(Opcode::VOID)
    }
    /// `ptr`.
    pub fn ty_ptr(&mut self) -> Inst {
        self.ty_prim(Opcode::PTR)
    }
    /// The integer type of `width` bits (1, 8, 16, 32 or 64).
    pub fn ty_int(&mut self, width: u32) -> Option<Inst> {
        let op = crate::scalar::int_of_width(width)?;
        Some(self.ty_prim(op))
    }
    /// `i1`.
    pub fn ty_i1(&mut self) -> Inst {
        self.ty_prim(Opcode::I1)
    }
    /// `i8`.
    pub fn ty_i8(&mut self) -> Inst {
        self.ty_prim(Opcode::I8)
    }
    /// `i16`.
    pub fn ty_i16(&mut self) -> Inst {
        self.ty_prim(Opcode::I16)
    }
    /// `i32`.
    pub fn ty_i32(&mut self) -> Inst {
        self.ty_prim(Opcode::I32)
    }
    /// `i64`.
    pub fn ty_i64(&mut self) -> Inst {
        self.ty_prim(Opcode::I64)
    }
    /// `f32`.
    pub fn ty_f32(&mut self) -> Inst {
        self.ty_prim(Opcode::F32)
    }
    /// `f64`.
    pub fn ty_f64(&mut self) -> Inst {
        self.ty_prim(Opcode::F64)
    }
    /// `[len x elem]`.
    pub fn ty_array(&mut self, elem: Inst, len: u64) -> Result<Inst, CoreError> {
        self.intern(Opcode::ARRAY, None, &[elem], Payload::Int(len))
    }
    /// `vec lane lanes` (spec/ir.md, "Types"): `lanes` lanes of type `lane`.
    pub fn ty_vec(&mut self, lane: Inst, lanes: u64) -> Result<Inst, CoreError> {
        self.intern(Opcode::VEC, None, &[lane], Payload::Int(lanes))
    }
    /// `struct {fields…}` (anonymous, structural).
    pub fn ty_struct(&mut self, fields: &[Inst]) -> Result<Inst, CoreError> {
        self.intern(Opcode::STRUCT, None, fields, Payload::None)
    }
    /// A named struct: distinct from every struct with another name or other fields.
    pub fn ty_named_struct(&mut self, name: &str, fields: &[Inst]) -> Result<Inst, CoreError> {
        self.intern(
            Opcode::NAMED_STRUCT,
            None,
            fields,
            Payload::Str(name.into()),
        )
    }
    /// `fn(params…) -> ret`.
    pub fn ty_fn(&mut self, ret: Inst, params: &[Inst]) -> Result<Inst, CoreError> {
        let mut ops = Vec::with_capacity(params.len() + 1);
        ops.push(ret);
        ops.extend_from_slice(params);
        self.intern(Opcode::FN, None, &ops, Payload::None)
    }

    /// An integer constant of type `ty`; `value` is truncated to the type's width.
    pub fn const_int(&mut self, ty: Inst, value: u64) -> Result<Inst, CoreError> {
        let width = self.int_width(ty).unwrap_or(64);
        self.intern(
            Opcode::CONST_INT,
            Some(ty),
            &[],
            Payload::Int(mask_to_width(value, width)),
        )
    }
    /// An `i32` constant.
    pub fn const_i32(&mut self, value: i32) -> Inst {
        let t = self.ty_i32();
        self.const_int(t, value as u32 as u64)
            .expect("i32 constants always intern")
    }
    /// An `i64` constant.
    pub fn const_i64(&mut self, value: i64) -> Inst {
        let t = self.ty_i64();
        self.const_int(t, value as u64)
            .expect("i64 constants always intern")
    }
    /// An `i1` constant.
    pub fn const_bool(&mut self, value: bool) -> Inst {
        let t = self.ty_i1();
        self.const_int(t, value as u64)
            .expect("i1 constants always intern")
    }
    /// A float constant from its bits in the type's own format.
    pub fn const_float_bits(&mut self, ty: Inst, bits: u64) -> Result<Inst, CoreError> {
        self.intern(Opcode::CONST_FLOAT, Some(ty), &[], Payload::Float(bits))
    }
    /// An `f64` constant.
    pub fn const_f64(&mut self, value: f64) -> Inst {
        let t = self.ty_f64();
        self.const_float_bits(t, value.to_bits())
            .expect("f64 constants always intern")
    }
    /// An `f32` constant.
    pub fn const_f32(&mut self, value: f32) -> Inst {
        let t = self.ty_f32();
        self.const_float_bits(t, value.to_bits() as u64)
            .expect("f32 constants always intern")
    }
    /// The null pointer.
    pub fn const_null(&mut self) -> Inst {
        let t = self.ty_ptr();
        self.intern(Opcode::CONST_NULL, Some(t), &[], Payload::None)
            .expect("null always interns")
    }
    /// The all-zero value of any type.
    pub fn const_zero(&mut self, ty: Inst) -> Result<Inst, CoreError> {
        self.intern(Opcode::CONST_ZERO, Some(ty), &[], Payload::None)
    }
    /// An aggregate (struct or array) constant.
    pub fn const_aggregate(&mut self, ty: Inst, elems: &[Inst]) -> Result<Inst, CoreError> {
        self.intern(Opcode::CONST_AGGREGATE, Some(ty), elems, Payload::None)
    }
    /// A byte-string constant of type `[len x i8]`.
    pub fn const_bytes(&mut self, bytes: &[u8]) -> Inst {
        let i8t = self.ty_i8();
        let t = self
            .ty_array(i8t, bytes.len() as u64)
            .expect("array types always intern");
        self.intern(
            Opcode::CONST_BYTES,
            Some(t),
            &[],
            Payload::Bytes(bytes.into()),
        )
        .expect("byte constants always intern")
    }

    // ---- type queries ---------------------------------------------------------------------

    /// The width of an integer type, `None` for anything else.
    pub fn int_width(&self, ty: Inst) -> Option<u32> {
        crate::scalar::int_width(self.get(ty)?.opcode)
    }

    /// The width of a float type, `None` for anything else.
    pub fn float_width(&self, ty: Inst) -> Option<u32> {
        crate::scalar::float_width(self.get(ty)?.opcode)
    }

    /// For `fn(params…) -> ret`: `(ret, params)`.
    pub fn fn_signature(&self, fn_ty: Inst) -> Option<(Inst, &[Inst])> {
        let d = self.get(fn_ty)?;
        if d.opcode != Opcode::FN || d.operands.is_empty() {
            return None;
        }
        Some((d.operands[0], &d.operands[1..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hoistables_are_unique() {
        let mut m = Module::new();
        let a = m.ty_i32();
        let b = m.ty_i32();
        assert_eq!(a, b);
        let c1 = m.const_i32(7);
        let c2 = m.const_i32(7);
        assert_eq!(c1, c2);
        let arr1 = m.ty_array(a, 4).unwrap();
        let arr2 = m.ty_array(b, 4).unwrap();
        assert_eq!(arr1, arr2);
        assert_eq!(m.parent(arr1), Some(m.root()));
        assert!(
            m.children(m.root()).is_empty(),
            "hoistables live in the pool"
        );
        let c8 = m.const_i32(8);
        assert_eq!(m.pool(), &[a, c1, arr1, c8]);
    }

    #[test]
    fn integer_constants_are_canonicalized_to_width() {
        let mut m = Module::new();
        let i8t = m.ty_i8();
        assert_eq!(
            m.const_int(i8t, u64::MAX).unwrap(),
            m.const_int(i8t, 0xff).unwrap()
        );
    }

    #[test]
    fn non_hoistables_are_refused() {
        let mut m = Module::new();
        assert!(matches!(
            m.intern(Opcode::IADD, None, &[], Payload::None),
            Err(CoreError::WrongKind { .. })
        ));
        assert!(matches!(
            m.new_inst(Opcode::I32, None, vec![], Payload::None),
            Err(CoreError::WrongKind { .. })
        ));
    }

    #[test]
    fn generic_parameters_and_their_users_live_in_the_generic() {
        let mut m = Module::new();
        let root = m.root();
        let g = m
            .new_inst(Opcode::GENERIC, None, vec![], Payload::None)
            .unwrap();
        m.append_child(root, g).unwrap();
        let t = m
            .intern(Opcode::TYPE_PARAM, None, &[g], Payload::Int(0))
            .unwrap();
        assert_eq!(m.parent(t), Some(g));
        let f = m.ty_fn(t, &[t]).unwrap();
        assert_eq!(m.parent(f), Some(g));
        let i32t = m.ty_i32();
        let s = m
            .intern(Opcode::SPECIALIZE, None, &[g, i32t], Payload::None)
            .unwrap();
        assert_eq!(m.parent(s), Some(root), "concrete arguments: module scope");
        let s2 = m
            .intern(Opcode::SPECIALIZE, None, &[g, t], Payload::None)
            .unwrap();
        assert_eq!(m.parent(s2), Some(g));
        // A malformed parameter naming a hoistable is not scoped in it.
        let bad = m
            .intern(Opcode::TYPE_PARAM, None, &[i32t], Payload::Int(0))
            .unwrap();
        assert_eq!(m.parent(bad), Some(root));
    }

    #[test]
    fn scope_is_innermost_operand_scope() {
        let mut m = Module::new();
        let root = m.root();
        let f = m
            .new_inst(Opcode::FUNC, None, vec![], Payload::None)
            .unwrap();
        m.append_child(root, f).unwrap();
        // A hoistable referring to a definition still lives at module scope.
        let t = m.ty_ptr();
        let agg = m.const_aggregate(t, &[f]).unwrap();
        assert_eq!(m.parent(agg), Some(root));
        // One referring to something inside the function lives in the function's scope.
        let b = m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
            .unwrap();
        m.append_child(f, b).unwrap();
        let s = m.intern(Opcode::STRUCT, None, &[b], Payload::None).unwrap();
        assert_eq!(m.parent(s), Some(f));
    }
}
