//! Type layout, once (spec/ir.md, "Layout"): the size, alignment and field offsets of every
//! value type of a module, for every back end.
//!
//! [`Layouts::new`] lays out the module's pool in order (every type comes after its operands
//! there), so no recursion is needed however deeply types nest. Scalars come from the one table
//! of scalar types ([`crate::scalar`]). A type whose size overflows `u64`, or whose parts are not
//! value types (`void`, a `fn` type, a generic parameter), has no layout: using one is an error
//! of whoever needs it. The interpreter and the native back end add what only they need (value
//! cells, register leaves) on top of these numbers, never their own arithmetic.

use std::collections::HashMap;

use crate::scalar::Scalar;
use crate::{Inst, Module, Opcode};

/// What a value type is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutShape {
    /// A scalar (never `void`).
    Scalar(Scalar),
    /// `[len x elem]`: element `i` is at `i * size(elem)`.
    Array {
        /// The element type.
        elem: Inst,
        /// The length.
        len: u64,
    },
    /// `vec T N`: lane `i` is at `i * size(T)`.
    Vector {
        /// The lane type.
        lane: crate::scalar::Lane,
        /// The number of lanes.
        lanes: u16,
    },
    /// A `struct` or `named_struct`.
    Struct {
        /// The field types, in order.
        fields: Vec<Inst>,
        /// Their offsets, in order.
        offsets: Vec<u64>,
    },
}

/// The layout of one value type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeLayout {
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes (a power of two, at least 1).
    pub align: u64,
    /// What it is made of.
    pub shape: LayoutShape,
}

/// The layouts of every value type of a module's pool (one entry per laid-out type, not per
/// instruction of the module).
#[derive(Clone, Debug, Default)]
pub struct Layouts {
    table: HashMap<Inst, TypeLayout>,
}

impl Layouts {
    /// Lays out every value type in `m`'s pool.
    pub fn new(m: &Module) -> Layouts {
        let mut table: HashMap<Inst, TypeLayout> = HashMap::new();
        for &t in m.pool() {
            let layout = match m.opcode(t) {
                Opcode::ARRAY => array(m, &table, t),
                Opcode::VEC => vector(m, t),
                Opcode::STRUCT | Opcode::NAMED_STRUCT => structure(m, &table, t),
                op => crate::scalar::scalar(op)
                    .filter(|s| s.size > 0)
                    .and_then(|s| {
                        Some(TypeLayout {
                            size: s.size,
                            align: s.align,
                            shape: LayoutShape::Scalar(Scalar::of(op)?),
                        })
                    }),
            };
            if let Some(l) = layout {
                table.insert(t, l);
            }
        }
        Layouts { table }
    }

    /// The layout of value type `ty`, if it has one.
    pub fn get(&self, ty: Inst) -> Option<&TypeLayout> {
        self.table.get(&ty)
    }
}

fn array(m: &Module, table: &HashMap<Inst, TypeLayout>, t: Inst) -> Option<TypeLayout> {
    let elem = *m.operands(t).first()?;
    let len = m.payload(t).as_int()?;
    let e = table.get(&elem)?;
    Some(TypeLayout {
        size: e.size.checked_mul(len)?,
        align: e.align,
        shape: LayoutShape::Array { elem, len },
    })
}

/// `vec T N`: `N` lanes packed like an array; aligned to its size when that is a power of two
/// of at most 16 bytes, else to its lane (spec/ir.md, "Layout").
fn vector(m: &Module, t: Inst) -> Option<TypeLayout> {
    let lane = crate::scalar::Lane::of(m.opcode(*m.operands(t).first()?))?;
    let n = m
        .payload(t)
        .as_int()
        .filter(|n| (1..=crate::scalar::MAX_LANES).contains(n))?;
    let size = lane.size() * n;
    let align = if size.is_power_of_two() && size <= 16 {
        size
    } else {
        lane.size()
    };
    Some(TypeLayout {
        size,
        align,
        shape: LayoutShape::Vector {
            lane,
            lanes: u16::try_from(n).ok()?,
        },
    })
}

fn structure(m: &Module, table: &HashMap<Inst, TypeLayout>, t: Inst) -> Option<TypeLayout> {
    let fields: Vec<Inst> = m.operands(t).to_vec();
    let mut offsets = Vec::with_capacity(fields.len());
    let (mut end, mut align) = (0u64, 1u64);
    for &f in &fields {
        let l = table.get(&f)?;
        let off = end.checked_next_multiple_of(l.align)?;
        offsets.push(off);
        end = off.checked_add(l.size)?;
        align = align.max(l.align);
    }
    let size = if fields.is_empty() {
        0
    } else {
        end.checked_next_multiple_of(align)?
    };
    Some(TypeLayout {
        size,
        align,
        shape: LayoutShape::Struct { fields, offsets },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_follow_the_spec() {
        let mut m = Module::new();
        let i8t = m.ty_i8();
        let i32t = m.ty_i32();
        let i64t = m.ty_i64();
        let i16t = m.ty_int(16).unwrap();
        let g = m.ty_struct(&[i32t, i64t]).unwrap();
        let h = m.ty_struct(&[i64t, i8t]).unwrap();
        let e = m.ty_struct(&[i8t, i16t]).unwrap();
        let a = m.ty_array(e, 3).unwrap();
        let huge = m.ty_array(i64t, u64::MAX / 4).unwrap();
        let empty = m.ty_struct(&[]).unwrap();
        let void = m.ty_void();
        let ls = Layouts::new(&m);
        let sa = |t: Inst| ls.get(t).map(|l| (l.size, l.align));
        assert_eq!(sa(g), Some((16, 8)));
        assert_eq!(
            ls.get(g).map(|l| l.shape.clone()),
            Some(LayoutShape::Struct {
                fields: vec![i32t, i64t],
                offsets: vec![0, 8]
            })
        );
        assert_eq!(sa(h), Some((16, 8)));
        assert_eq!(sa(a), Some((12, 2)));
        assert_eq!(sa(empty), Some((0, 1)));
        assert_eq!(sa(huge), None, "size overflows u64");
        assert_eq!(sa(void), None);
    }

    #[test]
    fn vectors_are_packed_lanes_aligned_to_a_small_power_of_two_size() {
        let mut m = Module::new();
        let (i8t, i32t, f32t, f64t) = (m.ty_i8(), m.ty_i32(), m.ty_f32(), m.ty_f64());
        let i1t = m.ty_i1();
        let v = |m: &mut Module, t, n| m.ty_vec(t, n).unwrap();
        let (a, b, c, d) = (
            v(&mut m, i32t, 4),
            v(&mut m, f32t, 3),
            v(&mut m, i8t, 16),
            v(&mut m, f64t, 4),
        );
        let (e, f, g) = (v(&mut m, i1t, 4), v(&mut m, i32t, 0), v(&mut m, i32t, 257));
        let ls = Layouts::new(&m);
        let sa = |t: Inst| ls.get(t).map(|l| (l.size, l.align));
        assert_eq!(sa(a), Some((16, 16)));
        assert_eq!(sa(b), Some((12, 4)), "float3: not a power of two");
        assert_eq!(sa(c), Some((16, 16)));
        assert_eq!(
            sa(d),
            Some((32, 8)),
            "wider than 16 bytes: the lane's alignment"
        );
        assert_eq!(
            (sa(e), sa(f), sa(g)),
            (None, None, None),
            "i1 lanes, 0 or 257 lanes"
        );
    }
}
