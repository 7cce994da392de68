//! Type layout for the interpreter: the sizes and field offsets of `irkit_core::layout` (the
//! one computation of spec/ir.md's "Layout"), with the interpreter's scalar kinds and the
//! number of value cells of each type, in pool order (every type after its operands, so no
//! recursion is needed however deeply types nest). Zero values are built only for the types of
//! `const_zero` constants, when the constants are evaluated ([`Layouts::zero`]).

use std::collections::HashMap;

use irkit_core::{Inst, Module};

use crate::value::Value;

/// The largest number of scalar leaves an aggregate *value* may have (values in registers;
/// memory objects are limited separately). Larger aggregates can live in memory only.
pub(crate) const MAX_VALUE_CELLS: u64 = 1 << 16;

/// The most cells all constant values of a module may allocate together (each a few bytes:
/// 256 MiB at most). Aggregates share their parts, so only a module with very many large
/// constants reaches it; past it, constants are memory-only, like those over
/// [`MAX_VALUE_CELLS`] (using one as a register value traps with out of memory).
pub(crate) const MAX_CONST_CELLS: u64 = 1 << 24;

pub(crate) use irkit_core::scalar::Scalar;

/// The interpreter value of a scalar.
pub(crate) trait ScalarValue {
    /// The value with these raw bits (integers are masked to their width).
    fn value(self, bits: u64) -> Value;
}

impl ScalarValue for Scalar {
    fn value(self, bits: u64) -> Value {
        match self {
            Scalar::Int(w) => Value::int(w, bits).unwrap_or(Value::I64(bits)),
            Scalar::F32 => Value::F32(bits as u32),
            Scalar::F64 => Value::F64(bits),
            Scalar::Ptr => Value::Ptr(bits),
            // Core's layout gives vectors their own shape, never this scalar.
            Scalar::Vector(..) => Value::Aggregate(Vec::new().into()),
        }
    }
}

/// The shape of a value type: what core's layout says it is made of.
pub(crate) use irkit_core::layout::LayoutShape as Shape;

/// The layout of one value type.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// Size in bytes.
    pub(crate) size: u64,
    /// Number of scalar leaves of a value (saturating).
    pub(crate) cells: u64,
    /// The shape.
    pub(crate) shape: Shape,
}

/// Layouts of every value type of a module, indexed by arena slot.
#[derive(Debug, Default)]
pub(crate) struct Layouts {
    table: Vec<Option<Layout>>,
}

impl Layouts {
    /// Adds the layouts of the types of `m` at arena slots from `from` on (`m` extends the
    /// module of the types laid out, which are in the first `from` slots; 0 for all of `m`'s).
    /// A type whose size overflows `u64`, or whose operands are not value types, gets none
    /// (using it is reported as an error later).
    pub(crate) fn extend(&mut self, m: &Module, from: usize) {
        let core = irkit_core::layout::Layouts::new(m);
        let table = &mut self.table;
        table.truncate(from);
        table.resize(m.arena_len(), None);
        for &t in m.pool().iter().filter(|t| t.idx() >= from) {
            let Some(cl) = core.get(t) else { continue };
            // Cells: one per scalar leaf (saturating), at least one for an empty aggregate.
            let cells = match &cl.shape {
                Shape::Scalar(_) => Some(1),
                Shape::Vector { lanes, .. } => Some(u64::from(*lanes)),
                Shape::Array { elem, len } => {
                    lookup(table, *elem).map(|e| e.cells.saturating_mul(*len).max(1))
                }
                Shape::Struct { fields, .. } => fields.iter().try_fold(1u64, |cells, &f| {
                    lookup(table, f).map(|l| cells.saturating_add(l.cells))
                }),
            };
            let layout = cells.map(|cells| (cl.shape.clone(), cells));
            if let (Some((shape, cells)), Some(slot)) = (layout, table.get_mut(t.idx())) {
                *slot = Some(Layout {
                    size: cl.size,
                    cells,
                    shape,
                });
            }
        }
    }

    /// Forgets the layouts at arena slots from `len` on.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.table.truncate(len);
    }

    /// The layout of value type `ty`, if it is one.
    pub(crate) fn get(&self, ty: Inst) -> Option<&Layout> {
        self.table.get(ty.idx()).and_then(Option::as_ref)
    }

    /// The all-zero value of `ty`, when it is small enough to be a register value (at most
    /// [`MAX_VALUE_CELLS`] cells) and `budget` (cells that may still be allocated for constant
    /// values) allows; memoized per type in `memo`, and built from the memoized zeros of its
    /// element and field types (shared, not copied), with an explicit stack.
    pub(crate) fn zero(
        &self,
        ty: Inst,
        memo: &mut HashMap<Inst, Option<Value>>,
        budget: &mut u64,
    ) -> Option<Value> {
        let mut stack = vec![(ty, false)];
        while let Some((t, ready)) = stack.pop() {
            if memo.contains_key(&t) {
                continue;
            }
            let Some(l) = self.get(t) else {
                memo.insert(t, None);
                continue;
            };
            let parts: &[Inst] = match &l.shape {
                Shape::Scalar(s) => {
                    memo.insert(t, Some(s.value(0)));
                    continue;
                }
                Shape::Vector { lane, lanes } => {
                    let z = lane.scalar().value(0);
                    memo.insert(
                        t,
                        Some(Value::Aggregate(vec![z; usize::from(*lanes)].into())),
                    );
                    continue;
                }
                _ if l.cells > MAX_VALUE_CELLS => {
                    memo.insert(t, None);
                    continue;
                }
                Shape::Array { elem, .. } => std::slice::from_ref(elem),
                Shape::Struct { fields, .. } => fields,
            };
            if !ready {
                stack.push((t, true));
                stack.extend(parts.iter().map(|&p| (p, false)));
                continue;
            }
            let len = match l.shape {
                Shape::Array { len, .. } => len,
                _ => parts.len() as u64,
            };
            let value = (len <= *budget)
                .then(|| {
                    *budget -= len;
                    match l.shape {
                        Shape::Array { elem, .. } => {
                            let z = memo.get(&elem).cloned().flatten()?;
                            Some(vec![z; usize::try_from(len).ok()?])
                        }
                        _ => parts
                            .iter()
                            .map(|p| memo.get(p).cloned().flatten())
                            .collect(),
                    }
                })
                .flatten()
                .map(|vs| Value::Aggregate(vs.into()));
            memo.insert(t, value);
        }
        memo.get(&ty).cloned().flatten()
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
