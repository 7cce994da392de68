//! Edges past jump-only blocks (spec/backends.md, "Native code generation"): which blocks an
//! edge may skip ([`forwardable`]), the loops' latches ([`latches`]) and where an edge then
//! ends ([`forwarded`]).

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

/// The loops' latches among `order` (a function's reachable blocks in reverse postorder):
/// the blocks with an edge back to themselves or to a block before them.
pub(crate) fn latches(m: &irkit_core::Module, order: &[Inst]) -> FxHashSet<Inst> {
    let position: FxHashMap<Inst, usize> = order.iter().enumerate().map(|(k, &b)| (b, k)).collect();
    let mut latches = FxHashSet::default();
    for (k, &blk) in order.iter().enumerate() {
        let Some(&term) = m.children(blk).last() else {
            continue;
        };
        let ops = m.operands(term);
        let Some(branch) =
            irkit_core::edges::branch(m.opcode(term), ops, |o| m.opcode(o) == Opcode::BLOCK)
        else {
            continue;
        };
        if branch
            .edges
            .into_iter()
            .any(|e| position.get(&e.target).is_some_and(|&t| t <= k))
        {
            latches.insert(blk);
        }
    }
    latches
}

/// Where an edge from IR block `source` to IR block `target` with arguments `args` ends:
/// past [`forwardable`] blocks (front ends leave many: WebAssembly's `end` of a `block`), to
/// the jump's target with its arguments, a parameter of the skipped block replaced by the
/// argument the edge gives it. The skipped block itself is still lowered (a branch whose
/// edges are not forwarded may reach it). Fewer blocks and block parameters for Cranelift to
/// allocate registers across; the same behaviour.
///
/// From a loop's latch (`latches`), a block whose jump passes a value Cranelift computes
/// again at each use ([`recomputed_at_use`]) defined in another block than `source` is not
/// skipped: the use would move from the skipped block, on the way out of the loop, into the
/// latch, and the value be computed on every iteration (a loop counting `n + 1` for after
/// it, say) instead of once.
pub(crate) fn forwarded(
    m: &irkit_core::Module,
    (forwardable, latches): (&FxHashSet<Inst>, &FxHashSet<Inst>),
    source: Inst,
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
        let passed = jops.get(edge.args).unwrap_or(&[]);
        if latches.contains(&source)
            && passed.iter().any(|&a| {
                !params.contains(&a) && m.parent(a) != Some(source) && recomputed_at_use(m, a)
            })
        {
            break;
        }
        let next = passed
            .iter()
            .map(|&a| params.iter().position(|&p| p == a).map_or(a, |k| args[k]))
            .collect();
        (target, args) = (edge.target, next);
    }
    (target, args)
}

/// Whether Cranelift's optimizer computes IR value `v` again in each block using it
/// (Cranelift's rematerialization): an integer `iadd`, `isub`, `and`, `or` or `xor` with a
/// constant operand. (A constant itself is too, but costs nothing or an immediate.)
fn recomputed_at_use(m: &irkit_core::Module, v: Inst) -> bool {
    matches!(
        m.opcode(v),
        Opcode::IADD | Opcode::ISUB | Opcode::AND | Opcode::OR | Opcode::XOR
    ) && m
        .operands(v)
        .iter()
        .any(|&o| m.opcode(o) == Opcode::CONST_INT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `^2` passes `%1 = %0 + 1` on to `^3`: an edge from the entry (which computes `%1`)
    /// skips it; the exit edge of the loop `^1` does not (Cranelift would compute `%1` in
    /// the loop), nor does any edge to a block that is not jump-only.
    #[test]
    fn exits_of_loops_keep_blocks_passing_values_computed_again_at_use() {
        let m = irkit_text::parse(
            "@f: fn(i32, i1) -> i32 = func {
^0(%0: i32, %9: i1):
  %1: i32 = iadd %0, i32 1
  br %9, ^2, ^1(i32 0)
^1(%2: i32):
  %3: i32 = iadd %2, i32 1
  %4: i1 = icmp ult %3, i32 10
  br %4, ^1(%3), ^2
^2:
  jump ^3(%1)
^3(%5: i32):
  ret %5
}
",
            "t.ir",
        )
        .unwrap();
        let f = m.find_named("f").unwrap();
        let blocks: Vec<Inst> = m.blocks(f).collect();
        let order = irkit_core::edges::reverse_postorder(&m, f);
        let (fwd, latches) = (forwardable(&m, &order), latches(&m, &order));
        assert_eq!(latches.iter().copied().collect::<Vec<_>>(), [blocks[1]]);
        let one = m.children(blocks[0])[m.block_params(blocks[0]).len()];
        assert_eq!(
            forwarded(&m, (&fwd, &latches), blocks[0], blocks[2], &[]),
            (blocks[3], vec![one])
        );
        assert_eq!(
            forwarded(&m, (&fwd, &latches), blocks[1], blocks[2], &[]),
            (blocks[2], vec![])
        );
        assert_eq!(
            forwarded(&m, (&fwd, &latches), blocks[1], blocks[1], &[one]),
            (blocks[1], vec![one])
        );
    }
}
