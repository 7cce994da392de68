//! Types built from a shared generic's type parameters ("dependent" types: `T`,
//! `struct {T, i32}`, `[4 x T]`, an instance of a generic type such as `Pair<T>`), and what
//! their layout is made of (spec/linking.md, "Dynamic generics", "Run-time layouts").
//!
//! A dependent type's layout is known only at run time, from the descriptors: the shared body
//! computes each one in its entry block, fields placed as spec/ir.md's "Layout" places them
//! (each at the next multiple of its alignment, the size rounded up to the largest). Its slots
//! are sized at link time by the same rules over the largest size and alignment of each type
//! parameter (an upper bound: offsets only grow with sizes and alignments).

use irkit_core::{Inst, Module, Opcode};

/// Whether hoistable `x` mentions a parameter of `g` (it then lives in `g`: spec/ir.md,
/// "Scopes").
pub(crate) fn in_generic(m: &Module, g: Inst, x: Inst) -> bool {
    m.opcode(x).is_hoistable() && m.parent(x) == Some(g)
}

/// Whether `t` is a type parameter of `g`.
pub(crate) fn is_type_param(m: &Module, g: Inst, t: Inst) -> bool {
    m.opcode(t) == Opcode::TYPE_PARAM && m.parent(t) == Some(g)
}

/// The most nesting of dependent types followed (a bound on work whatever the input; the
/// module's own nesting limit is lower).
pub(crate) const MAX_DEPTH: usize = 64;

/// What a dependent type is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A type parameter of the generic.
    Param,
    /// A structure: its field types, in order (each dependent or concrete).
    Fields(Vec<Inst>),
    /// An array: its element type and length.
    Array(Inst, u64),
}

/// Whether `t` is a dependent type of generic `g` (a type built from its parameters).
pub(crate) fn is_dependent(m: &Module, g: Inst, t: Inst) -> bool {
    if !in_generic(m, g, t) {
        return false;
    }
    match m.opcode(t) {
        Opcode::SPECIALIZE => m
            .operands(t)
            .first()
            .is_some_and(|&h| m.opcode(h) == Opcode::GENERIC && m.children(h).is_empty()),
        op => op.is_type() && op != Opcode::FN,
    }
}

/// The shape of dependent type `t` of `g`, or `None` when the lowering cannot lay it out (an
/// instance of a generic type whose shape nests its own parameters, a `fn` type).
pub(crate) fn shape(m: &Module, g: Inst, t: Inst) -> Option<Shape> {
    if is_type_param(m, g, t) {
        return Some(Shape::Param);
    }
    match m.opcode(t) {
        Opcode::STRUCT | Opcode::NAMED_STRUCT => Some(Shape::Fields(m.operands(t).to_vec())),
        Opcode::ARRAY => Some(Shape::Array(
            *m.operands(t).first()?,
            m.payload(t).as_int()?,
        )),
        Opcode::SPECIALIZE => {
            // `Pair<T>`: the generic type's shape with its parameters replaced by the
            // arguments.
            let (&h, args) = m.operands(t).split_first()?;
            let params = m.operands(h);
            let body = m.ty(h)?;
            let arg_of = |f: Inst| -> Option<Inst> {
                match params.iter().position(|&p| p == f) {
                    Some(k) => args.get(k).copied(),
                    None if !in_generic(m, h, f) => Some(f),
                    None => None,
                }
            };
            match m.opcode(body) {
                Opcode::STRUCT | Opcode::NAMED_STRUCT => Some(Shape::Fields(
                    m.operands(body)
                        .iter()
                        .map(|&f| arg_of(f))
                        .collect::<Option<Vec<_>>>()?,
                )),
                Opcode::ARRAY => Some(Shape::Array(
                    arg_of(*m.operands(body).first()?)?,
                    m.payload(body).as_int()?,
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether every part of dependent type `t` can be laid out (iterative, bounded).
pub(crate) fn layable(m: &Module, g: Inst, t: Inst) -> bool {
    let mut stack = vec![(t, 0usize)];
    while let Some((x, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return false;
        }
        if !is_dependent(m, g, x) {
            if in_generic(m, g, x) {
                return false;
            }
            continue;
        }
        match shape(m, g, x) {
            None => return false,
            Some(Shape::Param) => {}
            Some(Shape::Fields(fs)) => stack.extend(fs.into_iter().map(|f| (f, depth + 1))),
            Some(Shape::Array(e, _)) => stack.push((e, depth + 1)),
        }
    }
    true
}
