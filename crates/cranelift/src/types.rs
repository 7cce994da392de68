//! IR types as Cranelift sees them: the memory layout of every value type (spec/ir.md,
//! "Layout") and its *leaves*, the scalar Cranelift values an SSA value of that type is split
//! into. An aggregate value lives in registers as its leaves, in field order; `i1` is an `I8`
//! holding 0 or 1; `ptr` is an `I64`.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::Type;
use cranelift_codegen::ir::types;
use irkit_core::{Inst, Module};

/// The pointer type.
pub(crate) const PTR: Type = types::I64;

/// The largest number of leaves an aggregate value may have in registers.
pub(crate) const MAX_LEAVES: usize = 1024;

pub(crate) use irkit_core::scalar::{Lane, Scalar};

/// The Cranelift type of a scalar.
pub(crate) trait ClifType {
    /// The Cranelift type holding it.
    fn clif(self) -> Type;
}

impl ClifType for Scalar {
    fn clif(self) -> Type {
        match self {
            Scalar::Int(1 | 8) => types::I8,
            Scalar::Int(16) => types::I16,
            Scalar::Int(32) => types::I32,
            Scalar::Int(_) | Scalar::Ptr => types::I64,
            Scalar::F32 => types::F32,
            Scalar::F64 => types::F64,
            Scalar::Vector(lane, n) => lane_clif(lane).by(u32::from(n)).unwrap_or(types::I8X16),
        }
    }
}

/// The Cranelift type of a vector lane.
pub(crate) fn lane_clif(lane: Lane) -> Type {
    lane.scalar().clif()
}

/// Whether Cranelift holds `vec lane n` in one register: a 128-bit vector (spec/ir.md,
/// "Vectors": `i8x16`, `i16x8`, `i32x4`, `i64x2`, `f32x4`, `f64x2`).
pub(crate) fn vector_fits(lane: Lane, n: u16) -> bool {
    lane.bits() * u32::from(n) == 128
}

/// The 8-byte words a leaf takes in a session wrapper's argument and result arrays.
pub(crate) fn words(s: Scalar) -> usize {
    s.size().div_ceil(8).max(1) as usize
}

/// The layout of one value type.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// Size in bytes.
    pub(crate) size: u64,
    /// Alignment in bytes.
    pub(crate) align: u64,
    /// The scalar leaves with their byte offsets, in order (empty for an empty aggregate).
    /// `None` when there are more than [`MAX_LEAVES`]: the type can live in memory only.
    pub(crate) leaves: Option<Vec<(Scalar, u64)>>,
    /// What it is made of.
    pub(crate) shape: Shape,
}

/// The shape of a value type: what core's layout says it is made of.
pub(crate) use irkit_core::layout::LayoutShape as Shape;

/// The layouts of every value type of a module, computed once in pool order.
#[derive(Debug, Default)]
pub(crate) struct Layouts {
    map: HashMap<Inst, Layout>,
}

impl Layouts {
    /// Lays out every value type in `m`'s pool: sizes, alignments and offsets from
    /// `irkit_core::layout` (the one computation of spec/ir.md's "Layout"), plus the scalar
    /// leaves a value of the type is split into (types come after their operands in the pool).
    pub(crate) fn new(m: &Module) -> Layouts {
        let core = irkit_core::layout::Layouts::new(m);
        let mut map: HashMap<Inst, Layout> = HashMap::default();
        for &t in m.pool() {
            let Some(cl) = core.get(t) else { continue };
            let (shape, leaves) = match &cl.shape {
                Shape::Scalar(s) => (Shape::Scalar(*s), Some(vec![(*s, 0)])),
                // One register when Cranelift has the shape; otherwise in memory only (and
                // refused where a value of it is needed, `Ctx::leaves`).
                Shape::Vector { lane, lanes } => (
                    Shape::Vector {
                        lane: *lane,
                        lanes: *lanes,
                    },
                    vector_fits(*lane, *lanes).then(|| vec![(Scalar::Vector(*lane, *lanes), 0)]),
                ),
                Shape::Array { elem, len } => {
                    let Some(e) = map.get(elem) else { continue };
                    let leaves = e.leaves.as_ref().and_then(|el| {
                        let n = (el.len() as u64).checked_mul(*len)?;
                        if n > MAX_LEAVES as u64 {
                            return None;
                        }
                        let mut v = Vec::with_capacity(n as usize);
                        for i in 0..*len {
                            v.extend(el.iter().map(|&(s, o)| (s, o + i * e.size)));
                        }
                        Some(v)
                    });
                    (
                        Shape::Array {
                            elem: *elem,
                            len: *len,
                        },
                        leaves,
                    )
                }
                Shape::Struct { fields, offsets } => {
                    let mut leaves = Some(Vec::new());
                    let mut ok = true;
                    for (f, &off) in fields.iter().zip(offsets) {
                        let Some(fl) = map.get(f) else {
                            ok = false;
                            break;
                        };
                        leaves = match (leaves, &fl.leaves) {
                            (Some(mut v), Some(fv)) if v.len() + fv.len() <= MAX_LEAVES => {
                                v.extend(fv.iter().map(|&(s, o)| (s, o + off)));
                                Some(v)
                            }
                            _ => None,
                        };
                    }
                    if !ok {
                        continue;
                    }
                    (
                        Shape::Struct {
                            fields: fields.clone(),
                            offsets: offsets.clone(),
                        },
                        leaves,
                    )
                }
            };
            map.insert(
                t,
                Layout {
                    size: cl.size,
                    align: cl.align,
                    leaves,
                    shape,
                },
            );
        }
        Layouts { map }
    }

    /// The layout of value type `t`.
    pub(crate) fn get(&self, t: Inst) -> Option<&Layout> {
        self.map.get(&t)
    }

    /// The scalar kind of `t`, if it is a scalar type.
    pub(crate) fn scalar(&self, t: Inst) -> Option<Scalar> {
        let l = self.get(t)?;
        match l.shape {
            Shape::Scalar(s) => Some(s),
            // A vector in one register is a leaf like a scalar.
            Shape::Vector { lane, lanes } if l.leaves.is_some() => {
                Some(Scalar::Vector(lane, lanes))
            }
            _ => None,
        }
    }

    /// The range of leaves of field or element `k` of aggregate type `t`, and its type.
    pub(crate) fn field_leaves(&self, t: Inst, k: u64) -> Option<(std::ops::Range<usize>, Inst)> {
        let l = self.get(t)?;
        let (before, fty): (usize, Inst) = match &l.shape {
            Shape::Array { elem, len } if k < *len => {
                let n = self.get(*elem)?.leaves.as_ref()?.len();
                (n.checked_mul(usize::try_from(k).ok()?)?, *elem)
            }
            Shape::Struct { fields, .. } => {
                let k = usize::try_from(k).ok()?;
                let fty = *fields.get(k)?;
                let mut n = 0;
                for f in &fields[..k] {
                    n += self.get(*f)?.leaves.as_ref()?.len();
                }
                (n, fty)
            }
            _ => return None,
        };
        let n = self.get(fty)?.leaves.as_ref()?.len();
        Some((before..before + n, fty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layout_follows_the_spec() {
        let src = "@g: struct {i32, i64} = global_var\n@h: struct {i64, i8} = global_var\n@a: [3 x struct {i8, i16}] = global_var\n";
        let m = irkit_text::parse(src, "t.ir").unwrap();
        let ls = Layouts::new(&m);
        let ty = |n: &str| m.ty(m.find_named(n).unwrap()).unwrap();
        let g = ls.get(ty("g")).unwrap();
        assert_eq!((g.size, g.align), (16, 8));
        assert_eq!(
            g.leaves.as_deref(),
            Some(&[(Scalar::Int(32), 0), (Scalar::Int(64), 8)][..])
        );
        assert_eq!(ls.get(ty("h")).unwrap().size, 16);
        let a = ls.get(ty("a")).unwrap();
        assert_eq!((a.size, a.align), (12, 2));
        assert_eq!(a.leaves.as_ref().unwrap()[5], (Scalar::Int(16), 10));
        assert_eq!(ls.field_leaves(ty("a"), 2).unwrap().0, 4..6);
    }
}
