//! Replace-all-uses that keeps the hoistable invariants.
//!
//! Slang's IR document warns that replacing an operand of a hoistable value can make it equal
//! to an existing value (so it must be merged) or movable to an outer scope (so it must be
//! hoisted), and that this cascades to its users. It also warns against rewriting while walking
//! a list. [`Module::replace_all_uses`] therefore takes the whole replacement as a map, computes
//! the new pool in dependency order *before* touching anything (so a cycle is refused with the
//! module unchanged), merges values that became equal, and only then rewrites every use. Handles
//! to merged values stay usable: [`Module::resolve`] (and every constructor) forwards them.

use std::collections::HashMap;

use crate::module::HoistKey;
use crate::{CoreError, Inst, Module};

/// What a replacement did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplaceReport {
    /// Hoistable values merged into an equal one as a consequence, as (merged, survivor).
    pub merged: Vec<(Inst, Inst)>,
    /// Operand and type slots rewritten.
    pub uses_rewritten: usize,
}

impl Module {
    /// Replaces every use (operand or type slot, anywhere in the module, decorations included)
    /// of each key of `map` with its value, then restores the hoistable invariants.
    ///
    /// The replaced instructions themselves stay in place; remove them afterwards if they are
    /// dead. On error nothing has changed.
    pub fn replace_all_uses(
        &mut self,
        map: &HashMap<Inst, Inst>,
    ) -> Result<ReplaceReport, CoreError> {
        let mut subst: HashMap<Inst, Inst> = HashMap::with_capacity(map.len());
        for (&from, &to) in map {
            self.check_live(from)?;
            let to = self.resolve(to);
            self.check_live(to)?;
            if from != to {
                subst.insert(from, to);
            }
        }
        // Collapse chains (a -> b -> c becomes a -> c); a chain back to its start is a cycle.
        let keys: Vec<Inst> = subst.keys().copied().collect();
        for k in keys {
            let end = follow(&subst, k).ok_or(CoreError::cycle(k))?;
            subst.insert(k, end);
        }

        // Hoistables whose key changes: users (transitively) of a replaced value. The pool is in
        // dependency order, so one forward pass finds them. The others keep their keys, and win
        // when a changed value becomes equal to one of them.
        let mut affected: std::collections::HashSet<Inst> = std::collections::HashSet::new();
        for &h in &self.pool {
            let d = self.data(h);
            if d.ty
                .iter()
                .chain(d.operands.iter())
                .any(|x| subst.contains_key(x) || affected.contains(x))
            {
                affected.insert(h);
            }
        }

        let mut report = ReplaceReport::default();
        // No pool value uses a replaced one (the common case of a pass rewriting instructions):
        // the pool stays as it is, only the uses change.
        if affected.is_empty() {
            self.rewrite_uses(&subst, &mut report);
            return Ok(report);
        }

        // Stage the new pool: unchanged values first, then the changed ones in dependency order
        // under the substitution, merging values that became equal.
        let order = self.pool_order(&subst)?;
        let mut staged_key: HashMap<HoistKey, Inst> = HashMap::with_capacity(order.len());
        let mut staged: Vec<(Inst, HoistKey, Inst)> = Vec::with_capacity(order.len());
        let mut new_scope: HashMap<Inst, Inst> = HashMap::new();
        for &h in self.pool.iter().filter(|h| !affected.contains(h)) {
            let d = self.data(h);
            let key = HoistKey {
                opcode: d.opcode,
                ty: d.ty,
                operands: d.operands.as_slice().into(),
                payload: (*d.payload).clone(),
            };
            staged_key.insert(key.clone(), h);
            staged.push((h, key, d.parent.unwrap_or(self.root())));
        }
        for h in order.into_iter().filter(|h| affected.contains(h)) {
            let d = self.data(h);
            let sub = |x: Inst| *subst.get(&x).unwrap_or(&x);
            let key = HoistKey {
                opcode: d.opcode,
                ty: d.ty.map(sub),
                operands: d.operands.iter().map(|&o| sub(o)).collect(),
                payload: (*d.payload).clone(),
            };
            if let Some(&survivor) = staged_key.get(&key) {
                subst.insert(h, survivor);
                report.merged.push((h, survivor));
                continue;
            }
            let scope = self.staged_scope(&key, &new_scope)?;
            new_scope.insert(h, scope);
            staged_key.insert(key.clone(), h);
            staged.push((h, key, scope));
        }

        // Commit: nothing below can fail.
        self.intern.clear();
        self.pool.clear();
        for (h, key, scope) in staged {
            let d = &mut self.insts[h.idx()];
            d.ty = key.ty;
            d.operands = key.operands.iter().copied().collect();
            d.parent = Some(scope);
            self.intern.insert(key, h);
            self.pool.push(h);
        }
        for &(merged, survivor) in &report.merged {
            self.insts[merged.idx()].dead = true;
            self.forward.insert(merged, survivor);
        }
        self.rewrite_uses(&subst, &mut report);
        Ok(report)
    }

    /// Rewrites every operand and type slot of the live instructions outside the pool through
    /// `subst`, counting them in `report`.
    fn rewrite_uses(&mut self, subst: &HashMap<Inst, Inst>, report: &mut ReplaceReport) {
        for d in self.insts.iter_mut() {
            if d.dead || d.opcode.is_hoistable() {
                continue;
            }
            if let Some(t) = d.ty
                && let Some(&n) = subst.get(&t)
            {
                d.ty = Some(n);
                report.uses_rewritten += 1;
            }
            for o in d.operands.iter_mut() {
                if let Some(&n) = subst.get(o) {
                    *o = n;
                    report.uses_rewritten += 1;
                }
            }
        }
    }

    /// The pool in dependency order once `subst` is applied; an error if that order has a cycle.
    fn pool_order(&self, subst: &HashMap<Inst, Inst>) -> Result<Vec<Inst>, CoreError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let mut mark: HashMap<Inst, Mark> = self.pool.iter().map(|&h| (h, Mark::New)).collect();
        let mut order = Vec::with_capacity(self.pool.len());
        let deps = |h: Inst| -> Vec<Inst> {
            let d = self.data(h);
            d.ty.iter()
                .chain(d.operands.iter())
                .map(|&x| *subst.get(&x).unwrap_or(&x))
                .filter(|&x| self.opcode(x).is_hoistable())
                .collect()
        };
        for &start in &self.pool {
            if mark[&start] != Mark::New {
                continue;
            }
            let mut stack: Vec<(Inst, Vec<Inst>)> = vec![(start, deps(start))];
            mark.insert(start, Mark::Open);
            while let Some((h, pending)) = stack.last_mut() {
                if let Some(next) = pending.pop() {
                    match mark.get(&next).copied() {
                        Some(Mark::New) => {
                            mark.insert(next, Mark::Open);
                            let nd = deps(next);
                            stack.push((next, nd));
                        }
                        Some(Mark::Open) => return Err(CoreError::cycle(next)),
                        _ => {}
                    }
                } else {
                    let h = *h;
                    mark.insert(h, Mark::Done);
                    order.push(h);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }

    fn staged_scope(
        &self,
        key: &HoistKey,
        new_scope: &HashMap<Inst, Inst>,
    ) -> Result<Inst, CoreError> {
        let root = self.root();
        let scope_of = |x: Inst| {
            new_scope
                .get(&x)
                .copied()
                .or(self.parent(x))
                .unwrap_or(root)
        };
        let mut best = root;
        for &o in key.ty.iter().chain(key.operands.iter()) {
            let s = scope_of(o);
            if s == best || s == root {
                continue;
            }
            if best == root || self.is_ancestor(best, s) {
                best = s;
            } else if !self.is_ancestor(s, best) {
                return Err(CoreError::ScopeConflict {
                    opcode: key.opcode,
                    a: best,
                    b: s,
                });
            }
        }
        Ok(best)
    }
}

/// Follows `x` through the map to its end; `None` if the chain loops.
fn follow(subst: &HashMap<Inst, Inst>, mut x: Inst) -> Option<Inst> {
    for _ in 0..=subst.len() {
        match subst.get(&x) {
            Some(&y) => x = y,
            None => return Some(x),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Opcode, Payload};

    /// Slang's example: replacing the operand of `ptr(%x)`-like values makes them equal to
    /// existing ones, and the merge cascades to their users.
    #[test]
    fn replacement_merges_and_cascades() {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let i64t = m.ty_i64();
        let a32 = m.ty_array(i32t, 4).unwrap();
        let a64 = m.ty_array(i64t, 4).unwrap();
        let s32 = m.ty_struct(&[a32]).unwrap();
        let s64 = m.ty_struct(&[a64]).unwrap();
        let root = m.root();
        let g = m
            .new_inst(Opcode::GLOBAL_VAR, Some(s32), vec![], Payload::None)
            .unwrap();
        m.append_child(root, g).unwrap();

        let report = m.replace_all_uses(&HashMap::from([(i32t, i64t)])).unwrap();
        assert_eq!(report.merged, vec![(a32, a64), (s32, s64)]);
        assert_eq!(m.ty(g), Some(s64));
        assert!(!m.is_live(a32));
        // Stale handles forward to the survivor.
        assert_eq!(m.resolve(s32), s64);
        assert_eq!(m.ty_struct(&[a32]).unwrap(), s64);
        assert_eq!(m.pool().len(), 4); // i32 (unused, still live), i64, a64, s64
    }

    #[test]
    fn cycles_are_refused_and_change_nothing() {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let arr = m.ty_array(i32t, 4).unwrap();
        let before = m.pool().to_vec();
        let err = m
            .replace_all_uses(&HashMap::from([(i32t, arr)]))
            .unwrap_err();
        assert!(matches!(err, CoreError::ReplacementCycle(_)));
        assert_eq!(m.pool(), &before[..]);
        assert_eq!(m.operands(arr), &[i32t]);
    }

    #[test]
    fn chains_in_the_map_collapse() {
        let mut m = Module::new();
        let root = m.root();
        let (a, b, c) = (m.const_i32(1), m.const_i32(2), m.const_i32(3));
        let i32t = m.ty(a);
        let g = m
            .new_inst(Opcode::GLOBAL_VAR, i32t, vec![a], Payload::None)
            .unwrap();
        m.append_child(root, g).unwrap();
        m.replace_all_uses(&HashMap::from([(a, b), (b, c)]))
            .unwrap();
        assert_eq!(m.operands(g), &[c]);
        let loop_map = HashMap::from([(a, b), (b, a)]);
        assert!(m.replace_all_uses(&loop_map).is_err());
    }
}
