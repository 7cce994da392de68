//! Removing the definitions nothing reaches any more (spec/linking.md, "Optimization passes"):
//! after devirtualization and inlining, a function whose address was only taken by a folded
//! `select`, say, is no longer used. The roots are the definitions the output keeps visible
//! ([`Visible`]); from them, every definition an instruction of a reached definition names
//! (its operands and types, its decorations' operands, the pool values they use) is reached.

use std::collections::HashSet;

use irkit_core::{CoreError, Inst, Module};

use crate::inline::Visible;

/// Removes every top-level definition of `m` not reached from the visible ones; returns how
/// many. `m` must verify; it still does afterwards.
pub fn remove_unreferenced(m: &mut Module, visible: &Visible<'_>) -> Result<u64, CoreError> {
    let root = m.root();
    let tops: Vec<Inst> = m.top_level().to_vec();
    let is_top = |m: &Module, i: Inst| m.parent(i) == Some(root);
    let mut reached: HashSet<Inst> = HashSet::new();
    let mut seen_pool: HashSet<Inst> = HashSet::new();
    let mut work: Vec<Inst> = tops
        .iter()
        .copied()
        .filter(|&d| visible.sees(m, d))
        .collect();
    reached.extend(work.iter().copied());
    while let Some(d) = work.pop() {
        let mut values: Vec<Inst> = Vec::new();
        for i in m.walk_from(d) {
            values.extend(m.operands(i).iter().copied());
            values.extend(m.ty(i));
        }
        while let Some(v) = values.pop() {
            if is_top(m, v) {
                if reached.insert(v) {
                    work.push(v);
                }
            } else if m.opcode(v).is_hoistable() && seen_pool.insert(v) {
                values.extend(m.operands(v).iter().copied());
                values.extend(m.ty(v));
            }
        }
    }
    let dead: Vec<Inst> = tops.into_iter().filter(|d| !reached.contains(d)).collect();
    m.remove_all(&dead)?;
    Ok(dead.len() as u64)
}
