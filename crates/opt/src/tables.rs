//! What a `load` from a constant global table can yield (spec/linking.md, "Optimization
//! passes"): the functions [`crate::devirtualize()`] may find behind an address read from a
//! `global_const`.
//!
//! The address operand of the `load` is followed back through `elem` to a `global_const`
//! definition with an initial value (the object's bytes can never change: a store into it is a
//! memory error). Where in the object it points is kept as a set of byte offsets: an exact
//! offset while every index is a constant, and otherwise every offset congruent to it modulo
//! `2^t`, where `2^t` is the largest power of two dividing every step a non-constant index
//! multiplies (index arithmetic wraps modulo `2^64`, so a step of 24 can reach every multiple
//! of 8, and nothing finer is sound). Only the offsets at which the 8 bytes of a `ptr` lie
//! inside the object are loads that do not trap (an address computed from one object's address
//! designates that object: spec/ir.md, "Memory"); each of those must be exactly a `ptr` field
//! or element of the initial value holding a function, or the load is unknown. A `null`, a
//! data address, an integer, bytes straddling two fields or padding: unknown.
//!
//! The number of offsets looked at is bounded ([`MAX_SLOTS`]), as is the `elem` chain
//! ([`MAX_CHAIN`]); past either bound the load is unknown.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use irkit_core::layout::{LayoutShape, Layouts};
use irkit_core::{Inst, Module, Opcode};

/// The most offsets of one object looked at for one load.
pub const MAX_SLOTS: u64 = 4096;

/// The most `elem`s followed back from a load's address.
const MAX_CHAIN: usize = 64;

/// Bytes of a `ptr`.
const PTR_SIZE: u64 = 8;

/// Where an address points into a `global_const`: the offsets `base + k * 2^shift` for every
/// integer `k` (modulo `2^64`), or `base` alone when `shift` is 64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slots {
    global: Inst,
    base: u64,
    shift: u32,
}

/// The layouts of a module's types, computed the first time a load needs them.
pub(crate) struct Tables<'m> {
    m: &'m Module,
    layouts: OnceLock<Layouts>,
}

impl<'m> Tables<'m> {
    pub(crate) fn new(m: &'m Module) -> Tables<'m> {
        Tables {
            m,
            layouts: OnceLock::new(),
        }
    }

    fn layouts(&self) -> &Layouts {
        self.layouts.get_or_init(|| Layouts::new(self.m))
    }

    /// The functions `load` (a `load` of a `ptr`) can yield without trapping, or `None` when
    /// it may yield anything else (or this cannot tell).
    pub(crate) fn loaded_functions(&self, load: Inst) -> Option<BTreeSet<Inst>> {
        let m = self.m;
        if m.opcode(load) != Opcode::LOAD || m.ty(load).map(|t| m.opcode(t)) != Some(Opcode::PTR) {
            return None;
        }
        let slots = self.slots(*m.operands(load).first()?)?;
        let init = *m.operands(slots.global).first()?;
        let ty = m.ty(slots.global)?;
        let size = self.layouts().get(ty)?.size;
        let Some(last) = size.checked_sub(PTR_SIZE) else {
            return Some(BTreeSet::new());
        };
        let mut found = BTreeSet::new();
        for offset in offsets(slots, last)? {
            found.insert(self.function_at(init, ty, offset)?);
        }
        Some(found)
    }

    /// Where address `p` points, if into a `global_const` with an initial value.
    fn slots(&self, p: Inst) -> Option<Slots> {
        let m = self.m;
        // The chain of `elem`s from `p` back to the object.
        let mut chain = Vec::new();
        let mut at = p;
        while m.opcode(at) == Opcode::ELEM {
            if chain.len() == MAX_CHAIN {
                return None;
            }
            chain.push(at);
            at = *m.operands(at).get(1)?;
        }
        let global = at;
        if m.opcode(global) != Opcode::GLOBAL_CONST
            || m.parent(global) != Some(m.root())
            || m.operands(global).is_empty()
        {
            return None;
        }
        let mut s = Slots {
            global,
            base: 0,
            shift: 64,
        };
        for &e in chain.iter().rev() {
            let ops = m.operands(e);
            let mut ty = *ops.first()?;
            let mut indices = ops.get(2..)?.iter();
            // The first index steps over whole `T`s.
            self.step(&mut s, *indices.next()?, self.layouts().get(ty)?.size);
            for &i in indices {
                match &self.layouts().get(ty)?.shape {
                    LayoutShape::Array { elem, .. } => {
                        self.step(&mut s, i, self.layouts().get(*elem)?.size);
                        ty = *elem;
                    }
                    LayoutShape::Struct { fields, offsets } => {
                        let k = usize::try_from(self.constant(i)?).ok()?;
                        s.base = s.base.wrapping_add(*offsets.get(k)?);
                        ty = *fields.get(k)?;
                    }
                    LayoutShape::Scalar(_) | LayoutShape::Vector { .. } => return None,
                }
            }
        }
        Some(s)
    }

    /// Adds index `i` times `size` to `s`.
    fn step(&self, s: &mut Slots, i: Inst, size: u64) {
        match self.constant(i) {
            Some(k) => s.base = s.base.wrapping_add(k.wrapping_mul(size)),
            None => s.shift = s.shift.min(size.trailing_zeros()),
        }
    }

    /// The value of integer constant `i`, sign-extended to 64 bits (as `elem` does).
    fn constant(&self, i: Inst) -> Option<u64> {
        let m = self.m;
        if m.opcode(i) != Opcode::CONST_INT {
            return None;
        }
        let v = m.payload(i).as_int()?;
        let width = m.int_width(m.ty(i)?)?;
        let unused = 64u32.checked_sub(width)?;
        Some((((v << unused) as i64) >> unused) as u64)
    }

    /// The function whose address value `v` of type `ty` holds at byte `offset` as a whole
    /// `ptr`, if it does.
    fn function_at(&self, mut v: Inst, mut ty: Inst, mut offset: u64) -> Option<Inst> {
        let m = self.m;
        loop {
            match &self.layouts().get(ty)?.shape {
                LayoutShape::Scalar(_) => {
                    let is_function = offset == 0
                        && m.opcode(ty) == Opcode::PTR
                        && m.opcode(v) == Opcode::FUNC
                        && m.parent(v) == Some(m.root());
                    return is_function.then_some(v);
                }
                // No lane of a vector is a `ptr`.
                LayoutShape::Vector { .. } => return None,
                LayoutShape::Array { elem, len } => {
                    let size = self.layouts().get(*elem)?.size;
                    let k = offset.checked_div(size)?;
                    if k >= *len {
                        return None;
                    }
                    offset -= k * size;
                    ty = *elem;
                    v = self.part(v, k)?;
                }
                LayoutShape::Struct { fields, offsets } => {
                    // The field whose bytes hold `offset` (none: padding).
                    let k = offsets.iter().rposition(|&o| o <= offset)?;
                    let field = *fields.get(k)?;
                    offset -= offsets[k];
                    if offset >= self.layouts().get(field)?.size {
                        return None;
                    }
                    ty = field;
                    v = self.part(v, k as u64)?;
                }
            }
        }
    }

    /// Element or field `k` of constant aggregate `v`.
    fn part(&self, v: Inst, k: u64) -> Option<Inst> {
        let m = self.m;
        if m.opcode(v) != Opcode::CONST_AGGREGATE {
            return None;
        }
        m.operands(v).get(usize::try_from(k).ok()?).copied()
    }
}

/// The offsets of `s` from 0 to `last`, or `None` if there are more than [`MAX_SLOTS`].
fn offsets(s: Slots, last: u64) -> Option<Vec<u64>> {
    if s.shift >= 64 {
        return Some(if s.base <= last { vec![s.base] } else { vec![] });
    }
    let step = 1u64 << s.shift;
    let first = s.base & (step - 1);
    if first > last {
        return Some(vec![]);
    }
    let count = (last - first) / step + 1;
    if count > MAX_SLOTS {
        return None;
    }
    Some((0..count).map(|k| first + k * step).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_the_congruence_class_inside_the_object() {
        let g = Inst::from_index(1);
        let exact = |base| Slots {
            global: g,
            base,
            shift: 64,
        };
        assert_eq!(offsets(exact(8), 16), Some(vec![8]));
        assert_eq!(offsets(exact(24), 16), Some(vec![]));
        // -8, wrapped: below the object, never in it.
        assert_eq!(offsets(exact(u64::MAX - 7), 16), Some(vec![]));
        let every8 = Slots {
            global: g,
            base: u64::MAX - 7,
            shift: 3,
        };
        assert_eq!(offsets(every8, 16), Some(vec![0, 8, 16]));
        let every16 = Slots {
            global: g,
            base: 8,
            shift: 4,
        };
        assert_eq!(offsets(every16, 40), Some(vec![8, 24, 40]));
        let bytes = Slots {
            global: g,
            base: 0,
            shift: 0,
        };
        assert_eq!(offsets(bytes, MAX_SLOTS), None);
        assert_eq!(offsets(bytes, MAX_SLOTS - 1).map(|v| v.len()), Some(4096));
    }
}
