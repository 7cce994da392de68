//! Control flow: branch edges with their arguments, `switch`, and the block order.

use std::ops::Range;

use cranelift_codegen::ir::{self, BlockArg, InstBuilder};
use cranelift_frontend::Switch;
use cranelift_module::Module as ClModule;
use irkit_backend::BackendError;
use irkit_core::{Inst, Opcode};

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
            let (target, values) = super::forward::forwarded(
                m,
                (&self.forwardable, &self.latches),
                self.source,
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
