//! Control flow: branch edges with their arguments, `switch`, and the block order.

use std::ops::Range;

use cranelift_codegen::ir::{self, BlockArg, InstBuilder};
use cranelift_frontend::Switch;
use cranelift_module::Module as ClModule;
use irkit_backend::BackendError;
use irkit_core::{Inst, Opcode};
use rustc_hash::{FxHashMap, FxHashSet};

use super::func::FnLower;

/// A lowered edge: the Cranelift block and the arguments passed to it.
type LoweredEdge = (ir::Block, Vec<BlockArg>);

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// The edges of terminator `op` with operands `ops`, as the registry's operand roles
    /// divide them (`irkit_core::edges::branch`), each with its Cranelift block and
    /// arguments; and the variable run of its own operands before them (`switch`'s cases).
    pub(crate) fn edges(
        &mut self,
        op: Opcode,
        ops: &[Inst],
    ) -> Result<(Range<usize>, Vec<LoweredEdge>), BackendError> {
        let m = self.ctx.m;
        let branch = irkit_core::edges::branch(op, ops, |o| m.opcode(o) == Opcode::BLOCK)
            .ok_or_else(|| self.malformed("a terminator without edges"))?;
        let mut out = Vec::new();
        for e in branch.edges {
            let (target, values) = forwarded(
                m,
                &self.forwardable,
                e.target,
                ops.get(e.args).unwrap_or(&[]),
            );
            let cb = *self
                .blocks
                .get(&target)
                .ok_or_else(|| self.malformed("branch to an unknown block"))?;
            let mut args = Vec::new();
            for a in values {
                args.extend(self.val(a)?.into_iter().map(BlockArg::Value));
            }
            out.push((cb, args));
        }
        Ok((branch.run, out))
    }

    pub(crate) fn switch(&mut self, ops: &[Inst]) -> Result<(), BackendError> {
        let m = self.ctx.m;
        let v = self.val1(ops[0])?;
        let (run, edges) = self.edges(Opcode::SWITCH, ops)?;
        let cases = ops.get(run).unwrap_or(&[]);
        if edges.len() != cases.len() + 1 {
            return Err(self.malformed("switch edges do not match its cases"));
        }
        // An edge with arguments goes through a small block of its own, which passes them
        // (Cranelift's `Switch` jumps to blocks without arguments); one without, straight to
        // its target.
        let edge_blocks: Vec<ir::Block> = edges
            .iter()
            .map(|(target, args)| {
                if args.is_empty() {
                    *target
                } else {
                    self.b.create_block()
                }
            })
            .collect();
        let mut sw = Switch::new();
        for (i, &c) in cases.iter().enumerate() {
            let bits = m.payload(c).as_int().unwrap_or(0);
            sw.set_entry(u128::from(bits), edge_blocks[i + 1]);
        }
        sw.emit(&mut self.b, v, edge_blocks[0]);
        for (eb, (target, args)) in edge_blocks.into_iter().zip(edges) {
            if args.is_empty() {
                continue;
            }
            self.b.switch_to_block(eb);
            self.b.ins().jump(target, &args);
        }
        Ok(())
    }
}

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
fn forwarded(
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
