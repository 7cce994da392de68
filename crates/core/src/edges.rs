//! A terminator's edges, decoded one way for every crate.
//!
//! The operands of a terminator are divided into *edges* by its block operands
//! (spec/ir.md, "Edges"): the operands after a block operand, up to the next block operand or
//! the end, are the arguments of the edge to that block. The operands before the first edge
//! are the terminator's own (the condition of `br`, the value and case values of `switch`):
//! how many there are is the registry's answer ([`branch`] reads the opcode's operand roles,
//! [`crate::roles::Signature::edge_start`]), so an opcode whose roles say "edges follow" is
//! decoded without any code of its own. The verifier, the CFG code, the interpreter, the
//! Cranelift lowering and testgen read a terminator's edges through [`branch`]; the printer,
//! which spells any operand list (a malformed one too), groups a block operand with the
//! operands after it with the same splitter, [`edges`].
//!
//! Whether an operand is a block is the caller's question (both take a predicate), so the
//! verifier can ask it with its checked accessors on a module it has not yet accepted.

use foldhash::HashSet;
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

/// A terminator's operands as its operand roles divide them ([`branch`]).
#[derive(Clone, Debug)]
pub struct Branch<'a, F> {
    /// The fixed leading operands (`br`'s condition, `switch`'s value).
    pub fixed: Range<usize>,
    /// The variable run after them, up to the first edge (`switch`'s case values).
    pub run: Range<usize>,
    /// The edges, in order.
    pub edges: Edges<'a, F>,
}

/// The operands of a terminator of opcode `op` divided as its operand roles say: its own
/// operands and its edges, in order; `None` if the registry gives `op` no edges (not a
/// branch, or an opaque opcode). The edges start after the signature's fixed leading operands
/// (`br`'s condition), or, when a variable run follows them (`switch`'s case values), at the
/// first block operand after those: so the first edge's target is at the position the
/// signature gives it even when that operand is not a block (which the verifier reports).
pub fn branch<F: Fn(Inst) -> bool>(op: Opcode, ops: &[Inst], is_block: F) -> Option<Branch<'_, F>> {
    let start = op.info()?.signature.edge_start()?;
    let fixed = start.fixed.min(ops.len());
    let first = if start.variable {
        next_block(ops, fixed, &is_block)
    } else {
        fixed
    };
    Some(Branch {
        fixed: 0..fixed,
        run: fixed..first,
        edges: Edges {
            ops,
            is_block,
            next: first,
        },
    })
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
/// trusted module), as [`branch`] decodes them; all its operands and no edge for an
/// instruction that has none.
pub fn edges_of(m: &Module, term: Inst) -> (Range<usize>, Vec<Edge>) {
    let ops = m.operands(term);
    match branch(m.opcode(term), ops, |o| m.opcode(o) == Opcode::BLOCK) {
        Some(b) => (0..b.run.end, b.edges.collect()),
        None => (0..ops.len(), Vec::new()),
    }
}

/// The successor blocks of `term`, in edge order, each once. A terminator with few edges is
/// deduplicated by a scan; one with many (a big `switch`) through a set, one look-up per edge,
/// so it costs what its edges cost.
pub fn successors(m: &Module, term: Inst) -> Vec<Inst> {
    let edges = edges_of(m, term).1;
    let mut out: Vec<Inst> = Vec::new();
    if edges.len() <= SMALL {
        for e in edges {
            if !out.contains(&e.target) {
                out.push(e.target);
            }
        }
        return out;
    }
    let mut seen: HashSet<Inst> =
        HashSet::with_capacity_and_hasher(edges.len(), Default::default());
    for e in edges {
        if seen.insert(e.target) {
            out.push(e.target);
        }
    }
    out
}

/// Up to this many edges, [`successors`] deduplicates by a scan.
const SMALL: usize = 8;

/// The blocks of function `f` reachable from its entry, in reverse post-order (entry first):
/// every block comes after its dominators. Iterative, so any depth of nesting is fine.
pub fn reverse_postorder(m: &Module, f: Inst) -> Vec<Inst> {
    let Some(entry) = m.entry_block(f) else {
        return Vec::new();
    };
    let succs = |b: Inst| -> Vec<Inst> {
        m.children(b)
            .last()
            .map(|&t| successors(m, t))
            .unwrap_or_default()
    };
    let mut post = Vec::new();
    let mut seen: HashSet<Inst> = HashSet::default();
    seen.insert(entry);
    let mut stack = vec![(entry, succs(entry), 0usize)];
    while let Some((b, ss, i)) = stack.last_mut() {
        if let Some(&s) = ss.get(*i) {
            *i += 1;
            if seen.insert(s) {
                let next = succs(s);
                stack.push((s, next, 0));
            }
        } else {
            post.push(*b);
            stack.pop();
        }
    }
    post.reverse();
    post
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

    /// [`branch`] takes the leading operands from the registry: `br`'s one condition (even if
    /// it were a block), `switch`'s value and the case values up to the first block; nothing
    /// for an instruction without edges.
    #[test]
    fn leading_operands_come_from_the_roles() {
        let v = |k: u32| Inst::from_index(k);
        let is_block = |o: Inst| o.index() >= 10;
        // (fixed operands, variable run, [(target position, argument positions)]).
        type Decoded = (Range<usize>, Range<usize>, Vec<(usize, Range<usize>)>);
        let targets = |op, ops: &[Inst]| -> Option<Decoded> {
            let b = branch(op, ops, is_block)?;
            Some((b.fixed, b.run, b.edges.map(|e| (e.at, e.args)).collect()))
        };
        // br ^c, ^t(%x), ^e: a block in the condition's place is the condition.
        let br = [v(10), v(11), v(1), v(12)];
        assert_eq!(
            targets(Opcode::BR, &br),
            Some((0..1, 1..1, vec![(1, 2..3), (3, 4..4)]))
        );
        // switch %v, 1, 2, ^d, ^a(%x), ^b
        let sw = [v(1), v(2), v(3), v(10), v(11), v(4), v(12)];
        assert_eq!(
            targets(Opcode::SWITCH, &sw),
            Some((0..1, 1..3, vec![(3, 4..4), (4, 5..6), (6, 7..7)]))
        );
        assert_eq!(
            targets(Opcode::JUMP, &[v(10), v(1)]),
            Some((0..0, 0..0, vec![(0, 1..2)]))
        );
        // Too few operands: no panic, the edges that are there.
        assert_eq!(targets(Opcode::BR, &[]), Some((0..0, 0..0, vec![])));
        assert_eq!(targets(Opcode::RET, &[v(1)]), None);
        assert_eq!(targets(Opcode(0x7777), &[v(10)]), None);
    }
}
