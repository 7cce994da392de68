//! Control flow: branch edges with their arguments, `switch`, and the block order.

use std::collections::HashSet;

use cranelift_codegen::ir::{self, BlockArg, InstBuilder};
use cranelift_frontend::Switch;
use cranelift_module::Module as ClModule;
use irkit_backend::BackendError;
use irkit_core::{Inst, Module, Opcode};

use super::func::FnLower;

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    /// The edges of a terminator's operands (`irkit_core::edges`), each with its Cranelift
    /// block and arguments.
    pub(crate) fn edges(
        &mut self,
        ops: &[Inst],
    ) -> Result<Vec<(ir::Block, Vec<BlockArg>)>, BackendError> {
        let m = self.ctx.m;
        let (_, edges) = irkit_core::edges::edges(ops, |o| m.opcode(o) == Opcode::BLOCK);
        let mut out = Vec::new();
        for e in edges {
            let cb = *self
                .blocks
                .get(&e.target)
                .ok_or_else(|| self.malformed("branch to an unknown block"))?;
            let mut args = Vec::new();
            for &a in &ops[e.args] {
                args.extend(self.val(a)?.into_iter().map(BlockArg::Value));
            }
            out.push((cb, args));
        }
        Ok(out)
    }

    pub(crate) fn switch(&mut self, ops: &[Inst]) -> Result<(), BackendError> {
        let m = self.ctx.m;
        let v = self.val1(ops[0])?;
        let (leading, _) = irkit_core::edges::edges(ops, |o| m.opcode(o) == Opcode::BLOCK);
        let cases = ops.get(1..leading.end).unwrap_or(&[]);
        let edges = self.edges(ops)?;
        if edges.len() != cases.len() + 1 {
            return Err(self.malformed("switch edges do not match its cases"));
        }
        // One small block per edge, which passes the edge's arguments.
        let edge_blocks: Vec<ir::Block> = edges.iter().map(|_| self.b.create_block()).collect();
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
        m.children(b)
            .last()
            .map(|&t| irkit_core::edges::successors(m, t))
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
