//! SSA construction for the locals of a function, after Braun, Buchwald, Hack, Leißa, Mallon
//! and Zwinkau, "Simple and Efficient SSA Construction" (CC 2013), as Cranelift's frontend
//! does it, with block parameters instead of phis.
//!
//! A *variable* (a wasm local) is defined in a block by [`Ssa::def_var`] and read by
//! [`Ssa::use_var`]. A read with no definition in its block looks through the predecessors:
//! a block with one predecessor forwards the read; a block with several, or one not yet
//! *sealed* (its predecessors are not all known: a loop header before its back edges), gets
//! a new parameter, whose argument on every incoming edge is the variable's value at the end
//! of that predecessor. Those arguments are filled from a work list, never by recursion, so no
//! input can exhaust the stack. Trivial parameters (every edge passes the same value) are
//! kept: they are correct, only redundant.

use std::collections::{HashMap, HashSet, VecDeque};

use irkit_core::{Builder, CoreError, Inst};

use crate::cfg::Cfg;

/// A variable: the index of a wasm local.
pub type Var = u32;

/// The SSA construction state of one function.
#[derive(Debug)]
pub struct Ssa {
    /// The function's control-flow graph.
    pub cfg: Cfg,
    var_types: Vec<Inst>,
    defs: HashMap<(Inst, Var), Inst>,
    sealed: HashSet<Inst>,
    /// Parameters made for reads in unsealed blocks, completed when the block is sealed.
    incomplete: HashMap<Inst, Vec<(Var, Inst)>>,
    /// Parameters whose edge arguments are still to be filled, in creation order.
    pending: VecDeque<(Inst, Var)>,
}

impl Ssa {
    /// A new state for variables of the given types.
    pub fn new(var_types: Vec<Inst>) -> Ssa {
        Ssa {
            cfg: Cfg::default(),
            var_types,
            defs: HashMap::new(),
            sealed: HashSet::new(),
            incomplete: HashMap::new(),
            pending: VecDeque::new(),
        }
    }

    /// `var` has value `v` from here to the end of `block` (or the next definition).
    pub fn def_var(&mut self, var: Var, block: Inst, v: Inst) {
        self.defs.insert((block, var), v);
    }

    /// Declares that every predecessor of `block` is known.
    pub fn seal_block(&mut self, block: Inst) {
        if self.sealed.insert(block) {
            for (var, _) in self.incomplete.remove(&block).unwrap_or_default() {
                self.pending.push_back((block, var));
            }
        }
    }

    /// Whether `block` is sealed.
    pub fn is_sealed(&self, block: Inst) -> bool {
        self.sealed.contains(&block)
    }

    /// The value of `var` at the current end of `block`.
    pub fn use_var(
        &mut self,
        b: &mut Builder<'_>,
        var: Var,
        block: Inst,
    ) -> Result<Inst, CoreError> {
        let ty = *self
            .var_types
            .get(var as usize)
            .ok_or(CoreError::WrongKind {
                opcode: irkit_core::Opcode::PARAM,
                what: "is not a local of the function",
            })?;
        let mut chain = Vec::new();
        let mut visited = HashSet::new();
        let mut cur = block;
        let value = loop {
            if let Some(&v) = self.defs.get(&(cur, var)) {
                break v;
            }
            if !visited.insert(cur) {
                // A cycle of single-predecessor blocks: unreachable from the entry.
                break b.module().const_zero(ty)?;
            }
            if !self.sealed.contains(&cur) {
                let p = b.append_block_param(cur, ty)?;
                self.incomplete.entry(cur).or_default().push((var, p));
                self.defs.insert((cur, var), p);
                break p;
            }
            match self.cfg.preds(cur) {
                [] => break b.module().const_zero(ty)?,
                [(src, _)] => {
                    chain.push(cur);
                    cur = *src;
                }
                _ => {
                    let p = b.append_block_param(cur, ty)?;
                    self.defs.insert((cur, var), p);
                    self.pending.push_back((cur, var));
                    break p;
                }
            }
        };
        for c in chain {
            self.defs.insert((c, var), value);
        }
        Ok(value)
    }

    /// Fills the edge arguments of every parameter made so far (and of those that filling
    /// makes), in creation order, so each edge gets its arguments in parameter order.
    pub fn fill_pending(&mut self, b: &mut Builder<'_>) -> Result<(), CoreError> {
        while let Some((block, var)) = self.pending.pop_front() {
            let preds = self.cfg.preds(block).to_vec();
            for (src, edge) in preds {
                let v = self.use_var(b, var, src)?;
                self.cfg.push_arg(src, edge, v);
            }
        }
        Ok(())
    }
}
