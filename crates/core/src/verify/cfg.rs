//! Control flow: dominators by the Cooper–Harvey–Kennedy iterative algorithm ("A Simple, Fast
//! Dominance Algorithm"), and the SSA rule that every definition dominates its uses.
//!
//! Everything here is iterative (depth-first orders with explicit stacks), so a function with
//! a million blocks in a chain costs no recursion.

use crate::opcode::Flags;
use crate::{Inst, Opcode};

use super::{Cx, NO_DOM};

/// Sentinel for "no immediate dominator yet".
const UNDEF: usize = usize::MAX;

impl<'m> Cx<'m> {
    /// Computes the dominator tree of function `f` and stores it.
    pub(super) fn compute_doms(&mut self, f: Inst) {
        // From here on, dominance questions are about `f`'s blocks (pass 6 checks a
        // function's instructions right after the function).
        self.doms.func = Some(f);
        self.doms.num.clear();
        let Some(fd) = self.live(f) else { return };
        self.doms.num.resize(fd.children().len(), NO_DOM);
        let blocks: Vec<Inst> = fd
            .children()
            .iter()
            .copied()
            .filter(|&c| {
                self.opc(c) == Some(Opcode::BLOCK)
                    && self.tparent.get(c.idx()).copied().flatten() == Some(f)
            })
            .collect();
        // A block of `f` by its position among `f`'s children (each block has one walk
        // parent, so one position); an entry is trusted only if `blocks` agrees.
        let mut block_at = vec![u32::MAX; fd.children().len()];
        for (k, &b) in blocks.iter().enumerate() {
            if let Some(slot) = self
                .pos
                .get(b.idx())
                .and_then(|&p| block_at.get_mut(p as usize))
            {
                *slot = k as u32;
            }
        }
        let index = |o: Inst| -> Option<usize> {
            if self.tparent.get(o.idx()).copied().flatten() != Some(f) {
                return None;
            }
            let k = *block_at.get(*self.pos.get(o.idx())? as usize)? as usize;
            (blocks.get(k) == Some(&o)).then_some(k)
        };
        // Successors: every edge target of a block's terminator that is a block of `f`, each
        // once (`added[t] == k` once `t` is a successor of block `k`: one step per edge, so a
        // `switch` with many targets costs what its edges cost).
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
        let mut added = vec![usize::MAX; blocks.len()];
        for (k, &b) in blocks.iter().enumerate() {
            let Some(&last) = self.live(b).and_then(|d| d.children().last()) else {
                continue;
            };
            let Some(ld) = self.live(last) else { continue };
            if !ld.opcode.is_terminator() {
                continue;
            }
            let Some(branch) =
                crate::edges::branch(ld.opcode, &ld.operands, |o| index(o).is_some())
            else {
                continue;
            };
            for e in branch.edges {
                if let Some(t) = index(e.target)
                    && added[t] != k
                {
                    added[t] = k;
                    succs[k].push(t);
                }
            }
        }
        if blocks.is_empty() {
            return;
        }
        // Reverse post-order from the entry (iterative DFS).
        let n = blocks.len();
        let mut visited = vec![false; n];
        let mut post: Vec<usize> = Vec::with_capacity(n);
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        visited[0] = true;
        while let Some(top) = stack.last_mut() {
            let (b, next) = *top;
            if let Some(&s) = succs[b].get(next) {
                top.1 += 1;
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        let rpo: Vec<usize> = post.iter().rev().copied().collect();
        let mut rpo_num = vec![UNDEF; n];
        for (k, &b) in rpo.iter().enumerate() {
            rpo_num[b] = k;
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            if rpo_num[b] == UNDEF {
                continue;
            }
            for &s in ss {
                preds[s].push(b);
            }
        }
        // Cooper–Harvey–Kennedy.
        let mut idom = vec![UNDEF; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new_idom = UNDEF;
                for &p in &preds[b] {
                    if idom[p] == UNDEF {
                        continue;
                    }
                    new_idom = if new_idom == UNDEF {
                        p
                    } else {
                        intersect(&idom, &rpo_num, p, new_idom)
                    };
                }
                if new_idom != UNDEF && idom[b] != new_idom {
                    idom[b] = new_idom;
                    changed = true;
                }
            }
        }
        // Dominator tree pre/post numbers (iterative DFS), for O(1) dominance queries.
        let mut kids: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &b in rpo.iter().skip(1) {
            if idom[b] != UNDEF {
                kids[idom[b]].push(b);
            }
        }
        let mut pre = vec![0u32; n];
        let mut clock = 0u32;
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        pre[0] = clock;
        clock += 1;
        while let Some(top) = stack.last_mut() {
            let (b, next) = *top;
            if let Some(&c) = kids[b].get(next) {
                top.1 += 1;
                pre[c] = clock;
                clock += 1;
                stack.push((c, 0));
            } else {
                let at = self.pos.get(blocks[b].idx()).copied().unwrap_or(u32::MAX);
                if let Some(slot) = self.doms.num.get_mut(at as usize) {
                    *slot = (pre[b], clock);
                }
                clock += 1;
                stack.pop();
            }
        }
    }

    /// Whether block `a` dominates block `b`, two blocks of one function (`None` if `b` is
    /// unreachable or nothing is known).
    fn dominates(&self, a: Inst, b: Inst) -> Option<bool> {
        let (pb, qb) = self.dom_numbers(b)?;
        Some(match self.dom_numbers(a) {
            Some((pa, qa)) => pa <= pb && qb <= qa,
            None => false,
        })
    }

    /// The dominator-tree numbers of block `b` of the function whose dominators were
    /// computed last (`None` for any other block, or an unreachable one).
    fn dom_numbers(&self, b: Inst) -> Option<(u32, u32)> {
        let f = self.doms.func?;
        if self.tparent.get(b.idx()).copied().flatten() != Some(f) {
            return None;
        }
        let at = *self.pos.get(b.idx())? as usize;
        self.doms.num.get(at).copied().filter(|&n| n != NO_DOM)
    }

    /// Every local value `i` uses is defined in its function and dominates the use.
    pub(super) fn check_dominance(&mut self, i: Inst) {
        let Some(d) = self.live(i) else { return };
        if d.opcode.is_decoration() {
            return;
        }
        // Only instructions directly in a block directly in a function.
        let Some(u) = self.block_of.get(i.idx()).copied().flatten() else {
            return;
        };
        let Some(f) = self.func_of.get(i.idx()).copied().flatten() else {
            return;
        };
        if self.tparent[i.idx()] != Some(u) || self.tparent[u.idx()] != Some(f) {
            return;
        }
        let i_pos = self.pos[i.idx()];
        for (k, &v) in d.operands.iter().enumerate() {
            let Some(vd) = self.live(v) else { continue };
            let op = vd.opcode;
            let flags = op.flags();
            if flags.contains(Flags::HOISTABLE)
                || flags.contains(Flags::DEFINITION)
                || flags.contains(Flags::DECORATION)
                || op == Opcode::BLOCK
                || op == Opcode::MODULE
                || !self.in_tree.get(v.idx()).copied().unwrap_or(false)
            {
                continue;
            }
            let vf = self.func_of[v.idx()];
            if vf != Some(f) {
                let msg = match vf {
                    Some(g) => format!(
                        "operand {k}: value {} is defined in another function ({})",
                        self.vname(v),
                        self.vname(g)
                    ),
                    None => format!(
                        "operand {k}: value {} is not defined inside a function",
                        self.vname(v)
                    ),
                };
                self.err(i, msg);
                continue;
            }
            let Some(db) = self.block_of[v.idx()] else {
                continue;
            };
            if self.tparent[v.idx()] != Some(db) || self.tparent[db.idx()] != Some(f) {
                continue; // misplaced definition, reported by the structure checks
            }
            if v == i {
                self.err(
                    i,
                    format!("operand {k}: the instruction uses its own result"),
                );
                continue;
            }
            if db == u {
                if self.pos[v.idx()] > i_pos {
                    let msg = format!(
                        "operand {k}: value {} is used before it is defined",
                        self.vname(v)
                    );
                    self.err(i, msg);
                }
                continue;
            }
            if self.dominates(db, u) == Some(false) {
                let msg = format!(
                    "operand {k}: value {} does not dominate this use",
                    self.vname(v)
                );
                self.err(i, msg);
            }
        }
    }
}

/// The CHK "intersect": walks both fingers up the dominator tree to their common ancestor.
fn intersect(idom: &[usize], rpo_num: &[usize], mut a: usize, mut b: usize) -> usize {
    // Each step strictly decreases an rpo number, so this terminates.
    while a != b {
        while rpo_num[a] > rpo_num[b] {
            a = idom[a];
        }
        while rpo_num[b] > rpo_num[a] {
            b = idom[b];
        }
    }
    a
}
