//! Removing the definitions nothing reaches any more (spec/linking.md, "Optimization passes"):
//! after devirtualization and inlining, a function whose address was only taken by a folded
//! `select`, say, is no longer used. The roots are the definitions the output keeps visible
//! ([`Visible`]); from them, every definition an instruction of a reached definition names
//! (its operands and types, its decorations' operands, the pool values they use) is reached.

use irkit_core::{CoreError, Inst, Module};

use crate::inline::Visible;

/// Removes every top-level definition of `m` not reached from the visible ones; returns how
/// many. `m` must verify; it still does afterwards.
pub fn remove_unreferenced(m: &mut Module, visible: &Visible<'_>) -> Result<u64, CoreError> {
    let root = m.root();
    let tops: Vec<Inst> = m.top_level().to_vec();
    let is_top = |m: &Module, i: Inst| m.parent(i) == Some(root);
    // Reached definitions and seen pool values, by instruction index.
    let mut reached = vec![false; m.arena_len()];
    let mut seen_pool = vec![false; m.arena_len()];
    let first = |seen: &mut Vec<bool>, i: Inst| !std::mem::replace(&mut seen[i.idx()], true);
    let mut work: Vec<Inst> = tops
        .iter()
        .copied()
        .filter(|&d| visible.sees(m, d))
        .collect();
    for &d in &work {
        reached[d.idx()] = true;
    }
    while let Some(d) = work.pop() {
        let mut values: Vec<Inst> = Vec::new();
        for i in m.walk_from(d) {
            values.extend(m.operands(i).iter().copied());
            values.extend(m.ty(i));
        }
        while let Some(v) = values.pop() {
            if is_top(m, v) {
                if first(&mut reached, v) {
                    work.push(v);
                }
            } else if m.opcode(v).is_hoistable() && first(&mut seen_pool, v) {
                values.extend(m.operands(v).iter().copied());
                values.extend(m.ty(v));
            }
        }
    }
    let dead: Vec<Inst> = tops.into_iter().filter(|d| !reached[d.idx()]).collect();
    m.remove_all(&dead)?;
    Ok(dead.len() as u64)
}
