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
//! input can exhaust the stack. Once the body is complete, [`Ssa::remove_trivial_params`]
//! removes the parameters every edge passes the same value to (or the parameter itself), as
//! Braun et al.'s trivial phis, until none is left.
//!
//! Two shortcuts keep most such parameters from being made at all, each giving the value the
//! parameter would have been replaced by. A read through a loop header for a local the loop
//! does not assign ([`crate::assigned`]) looks it up where the loop is entered. A read in a
//! sealed block with several predecessors first looks the local up in each of them, through
//! a bounded number of blocks with one predecessor and without making anything: if each has a
//! definition and they agree (a predecessor reached back from the block itself counts as
//! agreeing), that is the value.

use std::collections::VecDeque;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{Builder, CoreError, Inst, Opcode};

use crate::assigned::Assigned;
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
    /// Every parameter made here, with its block.
    made: Vec<(Inst, Inst)>,
    /// The blocks a read walked through ([`Ssa::use_var`]'s, kept for its memory).
    chain: Vec<Inst>,
    /// The loops of the body and what they assign.
    assigned: Assigned,
    /// Each loop header: the block entering the loop, and the positions of the loop's `loop`
    /// and `end` operators.
    loops: HashMap<Inst, (Inst, (u32, u32))>,
}

/// The most blocks [`Ssa::look_up`] walks through: a read in a block with many predecessors
/// costs at most this many steps for each, whatever the function's shape (beyond, a
/// parameter is made as without the look-up).
const LOOK_UP_STEPS: usize = 64;

/// Where a walk for a variable's definition ([`Ssa::walk`]) stopped.
enum Stop {
    /// At a definition.
    Value(Inst),
    /// Back at the block the walk was to avoid: no value of its own.
    Back,
    /// At a block without a definition that is not sealed.
    Open(Inst),
    /// At a sealed block without a definition and with several predecessors.
    Merge(Inst),
    /// At a block without a definition and without predecessors.
    Start,
    /// After the most steps it was allowed.
    Long,
}

impl Ssa {
    /// A new state for variables of the given types, in a body whose loops assign what
    /// `assigned` says.
    pub fn new(var_types: Vec<Inst>, assigned: Assigned) -> Ssa {
        Ssa {
            cfg: Cfg::default(),
            var_types,
            defs: HashMap::default(),
            sealed: HashSet::default(),
            incomplete: HashMap::default(),
            pending: VecDeque::new(),
            made: Vec::new(),
            chain: Vec::new(),
            assigned,
            loops: HashMap::default(),
        }
    }

    /// `header` is the header of the loop whose `loop` operator is at position `start`,
    /// entered from block `entry` (its only predecessor yet).
    pub fn enter_loop(&mut self, header: Inst, entry: Inst, start: u32) {
        if let Some(end) = self.assigned.loop_end(start) {
            self.loops.insert(header, (entry, (start, end)));
        }
    }

    /// If `block` is the header of a loop that does not assign `var`, the block entering it.
    fn invariant_entry(&self, block: Inst, var: Var) -> Option<Inst> {
        let &(entry, range) = self.loops.get(&block)?;
        (!self.assigned.assigns(var, range)).then_some(entry)
    }

    /// The value of `var` at the end of every predecessor of sealed `block`, if each has one
    /// without making anything and they agree.
    fn agreed(&mut self, var: Var, block: Inst) -> Option<Inst> {
        let mut value = None;
        for i in 0..self.cfg.preds(block).len() {
            let src = self.cfg.preds(block)[i].0;
            match self.look_up(var, src, block) {
                Stop::Value(v) if value.is_some_and(|known| known != v) => return None,
                Stop::Value(v) => value = Some(v),
                Stop::Back => {}
                Stop::Open(_) | Stop::Merge(_) | Stop::Start | Stop::Long => return None,
            }
        }
        value
    }

    /// [`Ssa::walk`] from `block` for at most [`LOOK_UP_STEPS`] steps, stopping back at
    /// `from`. A definition found is also recorded as the value at the end of each block the
    /// walk passed, as [`Ssa::use_var`] records it: a later walk through them stops there.
    fn look_up(&mut self, var: Var, block: Inst, from: Inst) -> Stop {
        let mut chain = std::mem::take(&mut self.chain);
        let stop = self.walk(var, block, Some(from), LOOK_UP_STEPS, &mut chain);
        if let Stop::Value(v) = stop {
            for &c in &chain {
                self.defs.insert((c, var), v);
            }
        }
        chain.clear();
        self.chain = chain;
        stop
    }

    /// Looks for `var`'s definition at the end of `block`, then of its single predecessor,
    /// and so on, hopping over loops that do not assign it, without making anything; stops
    /// back at `from` (if given) or after `limit` steps. Pushes the blocks it passed onto
    /// `chain`. (Inlined: it is each read's whole cost when the definition is near.)
    #[inline(always)]
    fn walk(
        &self,
        var: Var,
        block: Inst,
        from: Option<Inst>,
        limit: usize,
        chain: &mut Vec<Inst>,
    ) -> Stop {
        let mut cur = block;
        loop {
            if Some(cur) == from {
                return Stop::Back;
            }
            if let Some(&v) = self.defs.get(&(cur, var)) {
                return Stop::Value(v);
            }
            if chain.len() >= limit {
                return Stop::Long;
            }
            if let Some(entry) = self.invariant_entry(cur, var) {
                chain.push(cur);
                cur = entry;
                continue;
            }
            if !self.sealed.contains(&cur) {
                return Stop::Open(cur);
            }
            match self.cfg.preds(cur) {
                [] => return Stop::Start,
                [(src, _)] => {
                    chain.push(cur);
                    cur = *src;
                }
                _ => return Stop::Merge(cur),
            }
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
        let mut chain = std::mem::take(&mut self.chain);
        let steps = self.cfg.blocks().len() + 1;
        let value = match self.walk(var, block, None, steps, &mut chain) {
            Stop::Value(v) => v,
            // More steps than blocks: a cycle of single-predecessor blocks, unreachable from
            // the entry (a walk without `from` never comes back).
            Stop::Long | Stop::Back => b.module().const_zero(ty)?,
            Stop::Start => b.module().const_zero(ty)?,
            Stop::Open(cur) => {
                let p = b.append_block_param(cur, ty)?;
                self.made.push((cur, p));
                self.incomplete.entry(cur).or_default().push((var, p));
                self.defs.insert((cur, var), p);
                p
            }
            Stop::Merge(cur) => match self.agreed(var, cur) {
                Some(v) => {
                    self.defs.insert((cur, var), v);
                    v
                }
                None => {
                    let p = b.append_block_param(cur, ty)?;
                    self.made.push((cur, p));
                    self.defs.insert((cur, var), p);
                    self.pending.push_back((cur, var));
                    p
                }
            },
        };
        for c in chain.drain(..) {
            self.defs.insert((c, var), value);
        }
        self.chain = chain;
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

impl Ssa {
    /// Removes the trivial parameters made here (after [`Ssa::fill_pending`]): a parameter
    /// whose incoming arguments are all one value `v` or itself is replaced by `v` (by zero if
    /// it has no other incoming value: its block is unreachable), in the function's
    /// instructions and in the edges, and removed with its arguments, repeatedly, since a
    /// replacement can make other parameters trivial.
    pub fn remove_trivial_params(
        &mut self,
        b: &mut Builder<'_>,
        func: Inst,
    ) -> Result<(), CoreError> {
        let mut subst: HashMap<Inst, Inst> = HashMap::default();
        let find = |subst: &HashMap<Inst, Inst>, mut x: Inst| {
            while let Some(&y) = subst.get(&x) {
                x = y;
            }
            x
        };
        let index: HashMap<Inst, usize> = self
            .made
            .iter()
            .filter_map(|&(blk, p)| {
                b.module()
                    .block_params(blk)
                    .iter()
                    .position(|&q| q == p)
                    .map(|i| (p, i))
            })
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for &(blk, p) in &self.made {
                if subst.contains_key(&p) {
                    continue;
                }
                let Some(&i) = index.get(&p) else { continue };
                let mut only: Option<Inst> = None;
                let mut trivial = true;
                for &(src, edge) in self.cfg.preds(blk) {
                    let Some(&a) = self.cfg.edge_args(src, edge).and_then(|args| args.get(i))
                    else {
                        trivial = false;
                        break;
                    };
                    let a = find(&subst, a);
                    if a == p || only == Some(a) {
                        continue;
                    }
                    if only.is_some() {
                        trivial = false;
                        break;
                    }
                    only = Some(a);
                }
                if !trivial {
                    continue;
                }
                let v = match only {
                    Some(v) => v,
                    None => {
                        let ty = b.module().ty(p).ok_or(CoreError::WrongKind {
                            opcode: Opcode::PARAM,
                            what: "has no type",
                        })?;
                        b.module().const_zero(ty)?
                    }
                };
                subst.insert(p, v);
                changed = true;
            }
        }
        if subst.is_empty() {
            return Ok(());
        }
        let resolved: HashMap<Inst, Inst> = subst.keys().map(|&k| (k, find(&subst, k))).collect();
        // Uses in the function's instructions.
        let m = b.module();
        let blocks: Vec<Inst> = m.blocks(func).collect();
        for &blk in &blocks {
            for i in 0..m.children(blk).len() {
                let inst = m.children(blk)[i];
                for k in 0..m.operands(inst).len() {
                    if let Some(&v) = resolved.get(&m.operands(inst)[k]) {
                        m.set_operand(inst, k, v)?;
                    }
                }
            }
        }
        // Uses in the terminators, then the removed parameters' arguments and the parameters.
        self.cfg
            .map_values(|x| resolved.get(&x).copied().unwrap_or(x));
        let mut removed: Vec<(Inst, usize, Inst)> = self
            .made
            .iter()
            .filter(|(_, p)| resolved.contains_key(p))
            .filter_map(|&(blk, p)| index.get(&p).map(|&i| (blk, i, p)))
            .collect();
        removed.sort_by_key(|&(blk, i, _)| (blk, std::cmp::Reverse(i)));
        for (blk, i, p) in removed {
            for (src, edge) in self.cfg.preds(blk).to_vec() {
                self.cfg.remove_arg(src, edge, i);
            }
            b.module().remove(p)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::{Edge, Term};
    use irkit_core::Module;

    /// A read in a cycle of single-predecessor blocks (unreachable from the entry: no block
    /// of it has another predecessor) walks the cycle at most once around, and the variable
    /// is zero there.
    #[test]
    fn a_read_in_an_unreachable_cycle_is_zero() {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let sig = m.ty_fn(i32t, &[]).unwrap();
        let mut b = Builder::new(&mut m);
        let f = b.func("f", sig).unwrap();
        let (entry, _) = b.entry_block(f).unwrap();
        let (x, _) = b.block(f, &[]).unwrap();
        let (y, _) = b.block(f, &[]).unwrap();
        let mut ssa = Ssa::new(vec![i32t], Assigned::default());
        for blk in [entry, x, y] {
            ssa.cfg.add_block(blk);
        }
        ssa.cfg.terminate(x, Term::Jump(Edge::new(y, &[])));
        ssa.cfg.terminate(y, Term::Jump(Edge::new(x, &[])));
        for blk in [entry, x, y] {
            ssa.seal_block(blk);
        }
        let v = ssa.use_var(&mut b, 0, x).unwrap();
        assert_eq!(v, b.module().const_zero(i32t).unwrap());
        // Every block of the walk now knows the value.
        assert_eq!(ssa.use_var(&mut b, 0, y).unwrap(), v);
    }
}
