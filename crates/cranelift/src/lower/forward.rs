//! Edges past jump-only blocks (spec/backends.md, "Native code generation"): which blocks an
//! edge may skip ([`forwardable`]) and where an edge then ends ([`forwarded`]).

use irkit_core::{Inst, Opcode};
use rustc_hash::{FxHashMap, FxHashSet};

/// The most jump-only blocks one edge is forwarded through ([`forwarded`]).
const MAX_FORWARDS: usize = 8;

/// The blocks among `order` (a function's reachable blocks) an edge may skip: those whose only
/// instruction is a `jump` to another block and whose parameters nothing uses but that jump.
/// Skipping such a block keeps every definition dominating its uses: the block defines no
/// value anything else uses, and every value its jump passes is defined in a block
/// dominating it, hence dominating each block branching to it.
pub(crate) fn forwardable(m: &irkit_core::Module, order: &[Inst]) -> FxHashSet<Inst> {
    let mut jumps = FxHashSet::default();
    let mut param_of: FxHashMap<Inst, Inst> = FxHashMap::default();
    for &blk in order {
        let params = m.block_params(blk);
        if let &[jump] = &m.children(blk)[params.len()..]
            && m.opcode(jump) == Opcode::JUMP
        {
            jumps.insert(blk);
            param_of.extend(params.iter().map(|&p| (p, blk)));
        }
    }
    if !param_of.is_empty() {
        for &blk in order {
            for &i in &m.children(blk)[m.block_params(blk).len()..] {
                for o in m.operands(i) {
                    if let Some(&owner) = param_of.get(o)
                        && (owner != blk || m.opcode(i) != Opcode::JUMP)
                    {
                        jumps.remove(&owner);
                    }
                }
            }
        }
    }
    jumps
}

/// Where an edge to IR block `target` with arguments `args` ends: past [`forwardable`]
/// blocks (front ends leave many: WebAssembly's `end` of a `block`), to the jump's target
/// with its arguments, a parameter of the skipped block replaced by the argument the edge
/// gives it. The skipped block itself is still lowered (a branch whose edges are not
/// forwarded may reach it). Fewer blocks and block parameters for Cranelift to allocate
/// registers across; the same behaviour.
pub(crate) fn forwarded(
    m: &irkit_core::Module,
    forwardable: &FxHashSet<Inst>,
    target: Inst,
    args: &[Inst],
) -> (Inst, Vec<Inst>) {
    let (mut target, mut args) = (target, args.to_vec());
    for _ in 0..MAX_FORWARDS {
        if !forwardable.contains(&target) {
            break;
        }
        let params = m.block_params(target);
        let &[jump] = &m.children(target)[params.len()..] else {
            break;
        };
        if params.len() != args.len() {
            break;
        }
        let jops = m.operands(jump);
        let Some(edge) =
            irkit_core::edges::branch(Opcode::JUMP, jops, |o| m.opcode(o) == Opcode::BLOCK)
                .and_then(|mut b| b.edges.next())
        else {
            break;
        };
        if edge.target == target || m.opcode(edge.target) != Opcode::BLOCK {
            break;
        }
        let next = jops
            .get(edge.args)
            .unwrap_or(&[])
            .iter()
            .map(|&a| params.iter().position(|&p| p == a).map_or(a, |k| args[k]))
            .collect();
        (target, args) = (edge.target, next);
    }
    (target, args)
}
