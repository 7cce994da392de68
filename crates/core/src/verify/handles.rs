//! Pass 1: every handle in range and live (like naga's `valid/handles.rs`), so that later
//! passes can look at the instructions they reach without re-checking.
//!
//! Walks the pool and then the tree (iteratively, each instruction at most once, so a corrupted
//! child list with a cycle terminates), recording the pre-order, each instruction's function,
//! block and position, and whether all the handles it holds are good.

use crate::{Inst, Opcode};

use super::Cx;

impl Cx<'_> {
    /// Describes why `h` is not a usable handle, or `None` if it is in range and live.
    fn bad_handle(&self, h: Inst) -> Option<String> {
        match self.m.insts.get(h.idx()) {
            None => Some(format!(
                "inst {}, which is out of range (the arena has {} slots)",
                h.index(),
                self.m.insts.len()
            )),
            Some(d) if d.dead => Some(format!("inst {}, which was removed", h.index())),
            Some(_) => None,
        }
    }

    /// Runs the pass; `false` if the root itself is unusable (nothing else can be checked).
    pub(super) fn check_handles(&mut self) -> bool {
        let m = self.m;
        let root = m.root();
        match m.insts.get(root.idx()) {
            None => {
                self.err(root, "the module has no root instruction");
                return false;
            }
            Some(d) if d.dead => {
                self.err(root, "the root `module` instruction was removed");
                return false;
            }
            Some(d) if d.opcode != Opcode::MODULE => {
                self.err(
                    root,
                    format!("the root is `{}`, expected `module`", d.opcode),
                );
                return false;
            }
            Some(_) => {}
        }

        // The pool.
        let mut order: u64 = 0;
        for (pi, &h) in m.pool.iter().enumerate() {
            if let Some(why) = self.bad_handle(h) {
                self.err(root, format!("pool entry {pi} names {why}"));
                continue;
            }
            if let Some(prev) = self.pool_pos[h.idx()] {
                self.err(h, format!("is in the pool twice (entries {prev} and {pi})"));
                continue;
            }
            self.pool_pos.to_mut()[h.idx()] = Some(pi as u32);
            self.key.to_mut()[h.idx()] = order;
            order += 1;
        }

        // The tree, in pre-order: an instruction, its decorations, then its children.
        let mut visited = vec![false; m.insts.len()];
        // (inst, walk parent, position in the parent's list)
        let mut stack: Vec<(Inst, Option<Inst>, u32)> = vec![(root, None, 0)];
        visited[root.idx()] = true;
        while let Some((i, parent, pos)) = stack.pop() {
            let d = &m.insts[i.idx()];
            let (pf, pb) = match parent {
                Some(p) => (self.func_of[p.idx()], self.block_of[p.idx()]),
                None => (None, None),
            };
            self.func_of.to_mut()[i.idx()] = if matches!(d.opcode, Opcode::FUNC | Opcode::PROC) {
                Some(i)
            } else {
                pf
            };
            self.block_of.to_mut()[i.idx()] = if d.opcode == Opcode::BLOCK {
                Some(i)
            } else {
                pb
            };
            self.tparent.to_mut()[i.idx()] = parent;
            self.pos.to_mut()[i.idx()] = pos;
            self.in_tree.to_mut()[i.idx()] = true;
            self.key.to_mut()[i.idx()] = order;
            order += 1;
            self.tree.to_mut().push(i);
            if let Some(p) = parent
                && d.parent != Some(p)
            {
                let recorded = match d.parent {
                    Some(q) => format!("inst {}", q.index()),
                    None => "none".to_owned(),
                };
                self.err(
                    i,
                    format!(
                        "is listed under inst {} but records {recorded} as its parent",
                        p.index()
                    ),
                );
            }
            let mut push: Vec<(Inst, Option<Inst>, u32)> = Vec::new();
            for (list, what) in [(&d.decorations, "decoration"), (&d.children, "child")] {
                for (k, &c) in list.iter().enumerate() {
                    if let Some(why) = self.bad_handle(c) {
                        self.err(i, format!("{what} {k} names {why}"));
                        continue;
                    }
                    if m.insts[c.idx()].opcode.is_hoistable() {
                        let msg = format!(
                            "{what} {k} is the hoistable `{}` (inst {}): hoistable values live in the pool, not in {what} lists",
                            m.insts[c.idx()].opcode,
                            c.index()
                        );
                        self.err(i, msg);
                        continue;
                    }
                    if visited[c.idx()] {
                        self.err(
                            i,
                            format!(
                                "{what} {k} (inst {}) appears more than once in the tree",
                                c.index()
                            ),
                        );
                        continue;
                    }
                    visited[c.idx()] = true;
                    push.push((c, Some(i), k as u32));
                }
            }
            stack.extend(push.into_iter().rev());
        }

        // Handles held by every reached instruction.
        let reached: Vec<Inst> = m
            .pool
            .iter()
            .copied()
            .filter(|h| self.pool_pos.get(h.idx()).is_some_and(|p| p.is_some()))
            .chain(self.tree.iter().copied())
            .collect();
        for i in reached {
            let mut good = true;
            let d = &m.insts[i.idx()];
            for &c in d.children.iter().chain(&d.decorations) {
                good &= self.bad_handle(c).is_none();
            }
            if let Some(t) = d.ty {
                if let Some(why) = self.bad_handle(t) {
                    self.err(i, format!("its type names {why}"));
                    good = false;
                } else if m.insts[t.idx()].opcode.is_hoistable() && self.pool_pos[t.idx()].is_none()
                {
                    self.err(
                        i,
                        format!(
                            "its type names inst {}, which is not in the pool",
                            t.index()
                        ),
                    );
                    good = false;
                }
            }
            for (k, &o) in d.operands.iter().enumerate() {
                if let Some(why) = self.bad_handle(o) {
                    self.err(i, format!("operand {k} names {why}"));
                    good = false;
                    continue;
                }
                let od = &m.insts[o.idx()];
                if od.opcode.is_hoistable() {
                    if self.pool_pos[o.idx()].is_none() {
                        self.err(
                            i,
                            format!(
                                "operand {k} names inst {}, which is not in the pool",
                                o.index()
                            ),
                        );
                        good = false;
                    }
                } else if !self.in_tree[o.idx()] {
                    self.err(
                        i,
                        format!(
                            "operand {k} names inst {}, which is not in the module tree",
                            o.index()
                        ),
                    );
                    good = false;
                }
            }
            self.ok.to_mut()[i.idx()] = good;
        }

        // Live hoistables outside the pool.
        for (k, d) in m.insts.iter().enumerate() {
            if !d.dead && d.opcode.is_hoistable() && self.pool_pos[k].is_none() {
                let h = Inst::from_index(k as u32);
                self.err(h, format!("hoistable `{}` is not in the pool", d.opcode));
            }
        }
        true
    }
}
