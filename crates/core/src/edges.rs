//! A terminator's edges, decoded one way for every crate.
//!
//! The operands of a terminator are divided into *edges* by its block operands
//! (spec/ir.md, "Edges"): the operands after a block operand, up to the next block operand or
//! the end, are the arguments of the edge to that block. The operands before the first block
//! operand are the terminator's own (the condition of `br`, the value and case values of
//! `switch`). The verifier, the CFG code, the interpreter, the Cranelift lowering and the
//! printer all read edges through [`edges`], so a new terminator, or a change to how edges are
//! written, is made in one place.
//!
//! Whether an operand is a block is the caller's question ([`edges`] takes a predicate), so the
//! verifier can ask it with its checked accessors on a module it has not yet accepted.

use std::ops::Range;

use crate::{Inst, Module, Opcode};

/// One edge: the position of its block operand and the range of its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The target block.
    pub target: Inst,
    /// The position of the target among the terminator's operands.
    pub at: usize,
    /// The positions of its arguments among the terminator's operands.
    pub args: Range<usize>,
}

/// The edges of operand list `ops`, in order, block operands recognized by `is_block`, without
/// allocating (an edge's end is found when it is reached); and the range of the operands
/// before the first edge.
pub fn edges<F: Fn(Inst) -> bool>(ops: &[Inst], is_block: F) -> (Range<usize>, Edges<'_, F>) {
    let first = next_block(ops, 0, &is_block);
    (
        0..first,
        Edges {
            ops,
            is_block,
            next: first,
        },
    )
}

fn next_block(ops: &[Inst], from: usize, is_block: &impl Fn(Inst) -> bool) -> usize {
    (from..ops.len())
        .find(|&k| is_block(ops[k]))
        .unwrap_or(ops.len())
}

/// The iterator of [`edges`].
#[derive(Clone, Debug)]
pub struct Edges<'a, F> {
    ops: &'a [Inst],
    is_block: F,
    /// Position of the next edge's block operand (`ops.len()` at the end).
    next: usize,
}

impl<F: Fn(Inst) -> bool> Iterator for Edges<'_, F> {
    type Item = Edge;

    fn next(&mut self) -> Option<Edge> {
        let at = self.next;
        let target = *self.ops.get(at)?;
        let end = next_block(self.ops, at + 1, &self.is_block);
        self.next = end;
        Some(Edge {
            target,
            at,
            args: at + 1..end,
        })
    }
}

/// The edges of terminator `term` of a module whose handles are valid (a verified or
/// trusted module).
pub fn edges_of(m: &Module, term: Inst) -> (Range<usize>, Vec<Edge>) {
    let (leading, es) = edges(m.operands(term), |o| m.opcode(o) == Opcode::BLOCK);
    (leading, es.collect())
}

/// The successor blocks of `term`, in edge order, each once.
pub fn successors(m: &Module, term: Inst) -> Vec<Inst> {
    let mut out: Vec<Inst> = Vec::new();
    for e in edges_of(m, term).1 {
        if !out.contains(&e.target) {
            out.push(e.target);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_split_at_block_operands() {
        let v = |k: u32| Inst::from_index(k);
        // br %c, ^t(%x), ^e(%y, %z): blocks are 10 and 11.
        let ops = [v(1), v(10), v(2), v(11), v(3), v(4)];
        let (lead, es) = edges(&ops, |o| o.index() >= 10);
        let es: Vec<Edge> = es.collect();
        assert_eq!(lead, 0..1);
        assert_eq!(
            es,
            vec![
                Edge {
                    target: v(10),
                    at: 1,
                    args: 2..3
                },
                Edge {
                    target: v(11),
                    at: 3,
                    args: 4..6
                },
            ]
        );
        let none = [v(1), v(2)];
        let (lead, mut es) = edges(&none, |o| o.index() >= 10);
        assert_eq!((lead, es.next()), (0..2, None));
    }
}
