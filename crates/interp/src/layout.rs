//! Type layout (spec/ir.md, "Layout"): size, alignment, field offsets and zero values of every
//! value type of a module, computed once, in pool order (every type after its operands, so no
//! recursion is needed however deeply types nest).

use irkit_core::{Inst, Module, Opcode};

use crate::value::Value;

/// The largest number of scalar leaves an aggregate *value* may have (values in registers;
/// memory objects are limited separately). Larger aggregates can live in memory only.
pub(crate) const MAX_VALUE_CELLS: u64 = 1 << 16;

/// What kind of scalar a scalar type is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// `iN`.
    Int(u32),
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `ptr`.
    Ptr,
}

impl Scalar {
    /// Size in memory, in bytes.
    pub(crate) fn size(self) -> u64 {
        match self {
            Scalar::Int(w) => u64::from(w.div_ceil(8)),
            Scalar::F32 => 4,
            Scalar::F64 | Scalar::Ptr => 8,
        }
    }

    /// The value with these raw bits (integers are masked to their width).
    pub(crate) fn value(self, bits: u64) -> Value {
        match self {
            Scalar::Int(w) => Value::int(w, bits).unwrap_or(Value::I64(bits)),
            Scalar::F32 => Value::F32(bits as u32),
            Scalar::F64 => Value::F64(bits),
            Scalar::Ptr => Value::Ptr(bits),
        }
    }
}

/// The shape of a value type.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    /// A scalar.
    Scalar(Scalar),
    /// `[len x elem]`.
    Array {
        /// Element type.
        elem: Inst,
        /// Length.
        len: u64,
    },
    /// A `struct` or `named_struct`.
    Struct {
        /// Field types, in order.
        fields: Vec<Inst>,
        /// Field offsets, in order.
        offsets: Vec<u64>,
    },
}

/// The layout of one value type.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// Size in bytes.
    pub(crate) size: u64,
    /// Alignment in bytes.
    pub(crate) align: u64,
    /// Number of scalar leaves of a value (saturating).
    pub(crate) cells: u64,
    /// The shape.
    pub(crate) shape: Shape,
    /// The all-zero value, when small enough to be a register value.
    pub(crate) zero: Option<Value>,
}

/// Layouts of every value type of a module, indexed by arena slot.
#[derive(Debug, Default)]
pub(crate) struct Layouts {
    table: Vec<Option<Layout>>,
}

impl Layouts {
    /// Computes the layouts of the module's types. A type whose size overflows `u64`, or whose
    /// operands are not value types, gets none (using it is reported as an error later).
    pub(crate) fn compute(m: &Module) -> Layouts {
        let mut table: Vec<Option<Layout>> = vec![None; m.arena_len()];
        for &t in m.pool() {
            let op = m.opcode(t);
            if !op.is_type() {
                continue;
            }
            let scalar = match op {
                Opcode::I1 => Some(Scalar::Int(1)),
                Opcode::I8 => Some(Scalar::Int(8)),
                Opcode::I16 => Some(Scalar::Int(16)),
                Opcode::I32 => Some(Scalar::Int(32)),
                Opcode::I64 => Some(Scalar::Int(64)),
                Opcode::F32 => Some(Scalar::F32),
                Opcode::F64 => Some(Scalar::F64),
                Opcode::PTR => Some(Scalar::Ptr),
                _ => None,
            };
            let layout = if let Some(s) = scalar {
                Some(Layout {
                    size: s.size(),
                    align: s.size(),
                    cells: 1,
                    shape: Shape::Scalar(s),
                    zero: Some(s.value(0)),
                })
            } else if op == Opcode::ARRAY {
                array_layout(m, &table, t)
            } else if op == Opcode::STRUCT || op == Opcode::NAMED_STRUCT {
                struct_layout(m, &table, t)
            } else {
                None
            };
            if let Some(slot) = table.get_mut(t.idx()) {
                *slot = layout;
            }
        }
        Layouts { table }
    }

    /// The layout of value type `ty`, if it is one.
    pub(crate) fn get(&self, ty: Inst) -> Option<&Layout> {
        self.table.get(ty.idx()).and_then(Option::as_ref)
    }

    /// The scalar kind of `ty`, if it is a scalar type.
    pub(crate) fn scalar(&self, ty: Inst) -> Option<Scalar> {
        match self.get(ty)?.shape {
            Shape::Scalar(s) => Some(s),
            _ => None,
        }
    }
}

fn lookup(table: &[Option<Layout>], t: Inst) -> Option<&Layout> {
    table.get(t.idx()).and_then(Option::as_ref)
}

fn array_layout(m: &Module, table: &[Option<Layout>], t: Inst) -> Option<Layout> {
    let elem = *m.operands(t).first()?;
    let len = m.payload(t).as_int()?;
    let e = lookup(table, elem)?;
    let size = e.size.checked_mul(len)?;
    let cells = e.cells.saturating_mul(len).max(1);
    let zero = match &e.zero {
        Some(z) if cells <= MAX_VALUE_CELLS => Some(Value::Aggregate(
            vec![z.clone(); usize::try_from(len).ok()?].into(),
        )),
        _ => None,
    };
    Some(Layout {
        size,
        align: e.align,
        cells,
        shape: Shape::Array { elem, len },
        zero,
    })
}

fn struct_layout(m: &Module, table: &[Option<Layout>], t: Inst) -> Option<Layout> {
    let fields: Vec<Inst> = m.operands(t).to_vec();
    let mut offsets = Vec::with_capacity(fields.len());
    let mut end = 0u64;
    let mut align = 1u64;
    let mut cells = 1u64;
    let mut zeros = Some(Vec::with_capacity(fields.len()));
    for &f in &fields {
        let l = lookup(table, f)?;
        let off = end.checked_next_multiple_of(l.align)?;
        offsets.push(off);
        end = off.checked_add(l.size)?;
        align = align.max(l.align);
        cells = cells.saturating_add(l.cells);
        match (&mut zeros, &l.zero) {
            (Some(zs), Some(z)) => zs.push(z.clone()),
            _ => zeros = None,
        }
    }
    let size = if fields.is_empty() {
        0
    } else {
        end.checked_next_multiple_of(align)?
    };
    let zero = zeros
        .filter(|_| cells <= MAX_VALUE_CELLS)
        .map(|zs| Value::Aggregate(zs.into()));
    Some(Layout {
        size,
        align,
        cells,
        shape: Shape::Struct { fields, offsets },
        zero,
    })
}
