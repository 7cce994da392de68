//! Pass 1: every handle in range and live (like naga's `valid/handles.rs`), so that later
//! passes can look at the instructions they reach without re-checking.
//!
//! Walks the pool and then the tree (iteratively, each instruction at most once, so a corrupted
//! child list with a cycle terminates), recording the pre-order, each instruction's function,
//! block and position. Then whether all the handles each reached instruction holds are good:
//! serially for the pool (`Cx::check_handles`), and per top-level definition, on every core,
//! for the tree (`Cx::check_held_handles`, called by `Cx::check_segment_shape`).

use rayon::prelude::*;

use crate::{Inst, Opcode};

use super::{Cx, Kind, PoolPos, VerifyError};

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

    /// Whether `h` is in range and live.
    #[inline]
    fn good_handle(&self, h: Inst) -> bool {
        self.m.insts.get(h.idx()).is_some_and(|d| !d.dead)
    }

    /// Runs the walk, and the handle checks of the pool; `false` if the root itself is unusable
    /// (nothing else can be checked). The handles held by tree instructions are checked next,
    /// per top-level definition (`Cx::check_held_handles`).
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
                let prev = prev.get();
                self.err(h, format!("is in the pool twice (entries {prev} and {pi})"));
                continue;
            }
            self.pool_pos.to_mut()[h.idx()] = PoolPos::new(pi as u32);
            self.key.to_mut()[h.idx()] = order as u32;
            order += 1;
        }

        self.walk_tree(order);

        // Handles held by every pool entry (the tree's are checked per definition).
        for &h in &m.pool {
            if self.pool_pos.get(h.idx()).is_some_and(|p| p.is_some()) {
                let good = self.check_held_handles(h);
                self.ok.to_mut()[h.idx()] = good;
            }
        }
        true
    }

    /// Live hoistables outside the pool (the last check of pass 1). The same scan of the
    /// arena finds the slots whose kind does not start as `NotType` (`Cx::compute_kinds`):
    /// every live type (`Bad` until the pool pass finds it well formed) and interface
    /// (`Value`, standing for `Self`); scanning a large arena once, not twice, is what counts.
    pub(super) fn check_stray_hoistables(&mut self) -> Vec<(u32, Kind)> {
        // The arena is scanned in chunks on every core; each chunk's findings are in slot
        // order, and the chunks are joined in order, so the errors and kinds are those of a
        // serial scan.
        const CHUNK: usize = 1 << 14;
        let pool_pos = &self.pool_pos;
        // Per chunk: the kinds found, and the stray hoistables' slots.
        type Found = (Vec<(u32, Kind)>, Vec<u32>);
        let found: Vec<Found> = self
            .m
            .insts
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, insts)| {
                let (mut kinds, mut stray) = (Vec::new(), Vec::new());
                for (k, d) in (c * CHUNK..).zip(insts) {
                    if d.dead {
                        continue;
                    }
                    if d.opcode.is_type() {
                        kinds.push((k as u32, Kind::Bad));
                    } else if d.opcode == Opcode::INTERFACE {
                        kinds.push((k as u32, Kind::Value));
                    }
                    if d.opcode.is_hoistable() && pool_pos[k].is_none() {
                        stray.push(k as u32);
                    }
                }
                (kinds, stray)
            })
            .collect();
        let mut first_kinds = Vec::new();
        for (kinds, stray) in found {
            first_kinds.extend(kinds);
            for k in stray {
                let h = Inst::from_index(k);
                let op = self.m.insts[k as usize].opcode;
                self.err(h, format!("hoistable `{op}` is not in the pool"));
            }
        }
        first_kinds
    }

    /// The tree, in pre-order: an instruction, its decorations, then its children. Fills the
    /// per-slot tables of the walk (`func_of`, `block_of`, `tparent`, `pos`, `in_tree`, `key`
    /// from `order` on) and the pre-order `tree`.
    fn walk_tree(&mut self, mut order: u64) {
        let m = self.m;
        let root = m.root();
        // The tables, owned here for the walk (an error reads them back through `push_err`).
        let mut func_of = std::mem::take(&mut self.func_of).into_owned();
        let mut block_of = std::mem::take(&mut self.block_of).into_owned();
        let mut tparent = std::mem::take(&mut self.tparent).into_owned();
        let mut pos_of = std::mem::take(&mut self.pos).into_owned();
        let mut in_tree = std::mem::take(&mut self.in_tree).into_owned();
        let mut key = std::mem::take(&mut self.key).into_owned();
        let mut tree = std::mem::take(&mut self.tree).into_owned();
        let mut errors = std::mem::take(&mut self.errors);
        // An error about `i`, whose walk entries are already filled.
        let push_err = |errors: &mut Vec<(u64, VerifyError)>,
                        i: Inst,
                        (func, block, key): (Option<Inst>, Option<Inst>, u64),
                        message: String| {
            if errors.len() < super::MAX_ERRORS {
                errors.push((key, super::error_at(m, i, func, block, message)));
            }
        };
        // (inst, walk parent, position in the parent's list). An instruction is marked
        // `in_tree` when pushed, so it is pushed at most once.
        let mut stack: Vec<(Inst, Option<Inst>, u32)> = vec![(root, None, 0)];
        in_tree[root.idx()] = true;
        while let Some((i, parent, pos)) = stack.pop() {
            let d = &m.insts[i.idx()];
            let ix = i.idx();
            let (pf, pb) = match parent {
                Some(p) => (func_of[p.idx()], block_of[p.idx()]),
                None => (None, None),
            };
            let f = if matches!(d.opcode, Opcode::FUNC | Opcode::PROC) {
                Some(i)
            } else {
                pf
            };
            let b = if d.opcode == Opcode::BLOCK {
                Some(i)
            } else {
                pb
            };
            func_of[ix] = f;
            block_of[ix] = b;
            tparent[ix] = parent;
            pos_of[ix] = pos;
            key[ix] = order as u32;
            let at = (f, b, order);
            order += 1;
            tree.push(i);
            if let Some(p) = parent
                && d.parent != Some(p)
            {
                let recorded = match d.parent {
                    Some(q) => format!("inst {}", q.index()),
                    None => "none".to_owned(),
                };
                push_err(
                    &mut errors,
                    i,
                    at,
                    format!(
                        "is listed under inst {} but records {recorded} as its parent",
                        p.index()
                    ),
                );
            }
            let base = stack.len();
            for (list, what) in [(d.decorations(), "decoration"), (d.children(), "child")] {
                for (k, &c) in list.iter().enumerate() {
                    // The usual case first: a live, non-hoistable instruction not yet reached.
                    if let Some(cd) = m.insts.get(c.idx())
                        && !cd.dead
                        && !cd.opcode.is_hoistable()
                        && !in_tree[c.idx()]
                    {
                        in_tree[c.idx()] = true;
                        stack.push((c, Some(i), k as u32));
                        continue;
                    }
                    let Some(cd) = m.insts.get(c.idx()).filter(|cd| !cd.dead) else {
                        let why = self.bad_handle(c).unwrap_or_default();
                        push_err(&mut errors, i, at, format!("{what} {k} names {why}"));
                        continue;
                    };
                    if cd.opcode.is_hoistable() {
                        let msg = format!(
                            "{what} {k} is the hoistable `{}` (inst {}): hoistable values live in the pool, not in {what} lists",
                            cd.opcode,
                            c.index()
                        );
                        push_err(&mut errors, i, at, msg);
                        continue;
                    }
                    push_err(
                        &mut errors,
                        i,
                        at,
                        format!(
                            "{what} {k} (inst {}) appears more than once in the tree",
                            c.index()
                        ),
                    );
                }
            }
            stack[base..].reverse();
        }
        self.func_of = func_of.into();
        self.block_of = block_of.into();
        self.tparent = tparent.into();
        self.pos = pos_of.into();
        self.in_tree = in_tree.into();
        self.key = key.into();
        self.tree = tree.into();
        self.errors = errors;
    }

    /// Whether every handle `i` (a reached instruction) holds is good, reporting those that are
    /// not: its type (in range, live, in the pool if hoistable) and operands (in range, live,
    /// in the pool if hoistable, in the tree otherwise). Child and decoration handles were
    /// reported by the walk.
    pub(super) fn check_held_handles(&mut self, i: Inst) -> bool {
        self.held_handles_good(i) || self.report_held_handles(i)
    }

    /// Whether every handle `i` holds is good (`Cx::check_held_handles` without the reports).
    #[inline]
    fn held_handles_good(&self, i: Inst) -> bool {
        let insts = &self.m.insts[..];
        let pool_pos: &[Option<PoolPos>] = &self.pool_pos;
        let in_tree: &[bool] = &self.in_tree;
        let Some(d) = insts.get(i.idx()) else {
            return false;
        };
        let live = |h: Inst| insts.get(h.idx()).filter(|hd| !hd.dead);
        let pooled = |h: Inst| pool_pos.get(h.idx()).is_some_and(|p| p.is_some());
        d.children()
            .iter()
            .chain(d.decorations())
            .all(|&c| live(c).is_some())
            && d.ty
                .is_none_or(|t| live(t).is_some_and(|td| !td.opcode.is_hoistable() || pooled(t)))
            && d.operands.iter().all(|&o| {
                live(o).is_some_and(|od| {
                    if od.opcode.is_hoistable() {
                        pooled(o)
                    } else {
                        in_tree.get(o.idx()).copied().unwrap_or(false)
                    }
                })
            })
    }

    /// `Cx::check_held_handles` for an instruction holding a bad handle: reports them.
    #[cold]
    #[inline(never)]
    fn report_held_handles(&mut self, i: Inst) -> bool {
        let m = self.m;
        let mut good = true;
        let d = &m.insts[i.idx()];
        for &c in d.children().iter().chain(d.decorations()) {
            good &= self.good_handle(c);
        }
        if let Some(t) = d.ty {
            if let Some(why) = self.bad_handle(t) {
                self.err(i, format!("its type names {why}"));
                good = false;
            } else if m.insts[t.idx()].opcode.is_hoistable() && self.pool_pos[t.idx()].is_none() {
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
            let Some(od) = m.insts.get(o.idx()).filter(|od| !od.dead) else {
                let why = self.bad_handle(o).unwrap_or_default();
                self.err(i, format!("operand {k} names {why}"));
                good = false;
                continue;
            };
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
        good
    }
}
