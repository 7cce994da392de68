//! Module-independent type descriptions: the generator reasons about types here (field types,
//! widths, conversions) and interns them into a module only when it needs a handle, so the same
//! description gives structurally equal types in every module of a set.

use std::collections::HashMap;

use irkit_core::{Inst, Module, Opcode};

/// A value type, independent of any module.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    I1,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    Ptr,
    Array(Box<Ty>, u64),
    Struct(Vec<Ty>),
    Named(String, Vec<Ty>),
}

/// Every scalar type.
pub(crate) const SCALARS: [Ty; 8] = [
    Ty::I1,
    Ty::I8,
    Ty::I16,
    Ty::I32,
    Ty::I64,
    Ty::F32,
    Ty::F64,
    Ty::Ptr,
];

/// Every integer type.
pub(crate) const INTS: [Ty; 5] = [Ty::I1, Ty::I8, Ty::I16, Ty::I32, Ty::I64];

impl Ty {
    /// The width of an integer type.
    pub(crate) fn int_width(&self) -> Option<u32> {
        match self {
            Ty::I1 => Some(1),
            Ty::I8 => Some(8),
            Ty::I16 => Some(16),
            Ty::I32 => Some(32),
            Ty::I64 => Some(64),
            _ => None,
        }
    }

    pub(crate) fn is_int(&self) -> bool {
        self.int_width().is_some()
    }

    pub(crate) fn is_float(&self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    pub(crate) fn is_scalar(&self) -> bool {
        self.is_int() || self.is_float() || *self == Ty::Ptr
    }

    /// The element or field types of an aggregate (`None` for a scalar).
    pub(crate) fn fields(&self) -> Option<Vec<Ty>> {
        match self {
            Ty::Array(elem, len) => Some(vec![(**elem).clone(); *len as usize]),
            Ty::Struct(fields) | Ty::Named(_, fields) => Some(fields.clone()),
            _ => None,
        }
    }

    /// The number of fields or elements of an aggregate (0 for a scalar).
    pub(crate) fn field_count(&self) -> usize {
        match self {
            Ty::Array(_, len) => *len as usize,
            Ty::Struct(fields) | Ty::Named(_, fields) => fields.len(),
            _ => 0,
        }
    }

    /// Field or element `k` of an aggregate.
    pub(crate) fn field(&self, k: usize) -> Option<Ty> {
        match self {
            Ty::Array(elem, len) if (k as u64) < *len => Some((**elem).clone()),
            Ty::Struct(fields) | Ty::Named(_, fields) => fields.get(k).cloned(),
            _ => None,
        }
    }
}

/// Interns [`Ty`] descriptions into one module, caching the handles.
#[derive(Default)]
pub(crate) struct TyCache {
    map: HashMap<Ty, Inst>,
}

impl TyCache {
    pub(crate) fn get(&mut self, m: &mut Module, ty: &Ty) -> Inst {
        if let Some(&t) = self.map.get(ty) {
            return t;
        }
        let t = match ty {
            Ty::I1 => m.ty_prim(Opcode::I1),
            Ty::I8 => m.ty_prim(Opcode::I8),
            Ty::I16 => m.ty_prim(Opcode::I16),
            Ty::I32 => m.ty_prim(Opcode::I32),
            Ty::I64 => m.ty_prim(Opcode::I64),
            Ty::F32 => m.ty_prim(Opcode::F32),
            Ty::F64 => m.ty_prim(Opcode::F64),
            Ty::Ptr => m.ty_prim(Opcode::PTR),
            Ty::Array(elem, len) => {
                let e = self.get(m, elem);
                m.ty_array(e, *len).expect("array types intern")
            }
            Ty::Struct(fields) => {
                let fs: Vec<Inst> = fields.iter().map(|f| self.get(m, f)).collect();
                m.ty_struct(&fs).expect("struct types intern")
            }
            Ty::Named(name, fields) => {
                let fs: Vec<Inst> = fields.iter().map(|f| self.get(m, f)).collect();
                m.ty_named_struct(name, &fs)
                    .expect("named struct types intern")
            }
        };
        self.map.insert(ty.clone(), t);
        t
    }
}
