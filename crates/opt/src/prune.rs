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
    let tops: Vec<Inst> = m.top_level().to_vec();
    // Reached definitions and seen pool values, by instruction index.
    let mut reached = vec![false; m.arena_len()];
    let mut seen_pool = vec![false; m.arena_len()];
    let mut work: Vec<Inst> = tops
        .iter()
        .copied()
        .filter(|&d| visible.sees(m, d))
        .collect();
    for &d in &work {
        reached[d.idx()] = true;
    }
    while let Some(d) = work.pop() {
        for i in m.walk_from(d) {
            for &v in m.operands(i).iter().chain(m.ty(i).iter()) {
                m.definitions_named(v, &mut seen_pool, |t| {
                    if !std::mem::replace(&mut reached[t.idx()], true) {
                        work.push(t);
                    }
                });
            }
        }
    }
    let dead: Vec<Inst> = tops.into_iter().filter(|d| !reached[d.idx()]).collect();
    m.remove_all(&dead)?;
    Ok(dead.len() as u64)
}
