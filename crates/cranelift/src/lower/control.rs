//! Control flow: branch edges with their arguments, `switch`, and the block order.

use std::collections::HashSet;

use cranelift_codegen::ir::{self, BlockArg, InstBuilder};
use cranelift_frontend::Switch;
use cranelift_module::Module as ClModule;
use irkit_backend::BackendError;
use irkit_core::{Inst, Module, Opcode};

use super::func::FnLower;

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// The edge starting at block operand `ops[at]`: its Cranelift block and arguments (up to
    /// the next block operand).
    pub(crate) fn edge(
        &mut self,
        ops: &[Inst],
        at: usize,
    ) -> Result<(ir::Block, Vec<BlockArg>), BackendError> {
        let m = self.ctx.m;
        let target = *ops
            .get(at)
            .ok_or_else(|| self.malformed("edge without target"))?;
        let cb = *self
            .blocks
            .get(&target)
            .ok_or_else(|| self.malformed("branch to an unknown block"))?;
        let mut args = Vec::new();
        for &a in ops[at + 1..]
            .iter()
            .take_while(|&&o| m.opcode(o) != Opcode::BLOCK)
        {
            args.extend(self.val(a)?.into_iter().map(BlockArg::Value));
        }
        Ok((cb, args))
    }

    pub(crate) fn switch(&mut self, ops: &[Inst]) -> Result<(), BackendError> {
        let m = self.ctx.m;
        let v = self.val1(ops[0])?;
        let first_block = ops
            .iter()
            .position(|&o| m.opcode(o) == Opcode::BLOCK)
            .ok_or_else(|| self.malformed("switch without default"))?;
        let cases = &ops[1..first_block];
        let edge_starts: Vec<usize> = (first_block..ops.len())
            .filter(|&i| m.opcode(ops[i]) == Opcode::BLOCK)
            .collect();
        if edge_starts.len() != cases.len() + 1 {
            return Err(self.malformed("switch edges do not match its cases"));
        }
        // One small block per edge, which passes the edge's arguments.
        let mut edge_blocks = Vec::with_capacity(edge_starts.len());
        let mut edges = Vec::with_capacity(edge_starts.len());
        for &at in &edge_starts {
            edges.push(self.edge(ops, at)?);
            edge_blocks.push(self.b.create_block());
        }
        let mut sw = Switch::new();
        for (i, &c) in cases.iter().enumerate() {
            let bits = m.payload(c).as_int().unwrap_or(0);
            sw.set_entry(u128::from(bits), edge_blocks[i + 1]);
        }
        sw.emit(&mut self.b, v, edge_blocks[0]);
        for (eb, (target, args)) in edge_blocks.into_iter().zip(edges) {
            self.b.switch_to_block(eb);
            self.b.ins().jump(target, &args);
        }
        Ok(())
    }
}

/// The blocks of `f` reachable from its entry, in reverse post-order (entry first).
pub(crate) fn rpo(m: &Module, f: Inst) -> Vec<Inst> {
    let Some(entry) = m.entry_block(f) else {
        return Vec::new();
    };
    let succs = |b: Inst| -> Vec<Inst> {
        let ch = m.children(b);
        ch.last()
            .map(|&t| {
                m.operands(t)
                    .iter()
                    .copied()
                    .filter(|&o| m.opcode(o) == Opcode::BLOCK)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut post = Vec::new();
    let mut seen = HashSet::new();
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
