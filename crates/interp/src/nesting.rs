//! The nesting limit (`irkit_core::check_nesting`, spec/ir.md "Nesting limit") checked for
//! what an extending module adds to a live program: its new instructions only, the live ones
//! having been checked when they were loaded, so an extension costs what it adds.

use std::collections::HashMap;

use irkit_core::{Inst, MAX_NESTING, Module};

/// Checks the instructions of `m` at arena slots from `from` on: none of those in the tree has
/// more than [`MAX_NESTING`] ancestors, and no new hoistable of the pool is more than
/// [`MAX_NESTING`] values deep. `live` holds the value depth of every hoistable of the live
/// slots (as `irkit_core::limits::value_depths` measures it); the new ones' are added to `new`.
/// Returns the first instruction over the limit. A new hoistable that depends on one after it
/// in the pool (a module the verifier refuses) is measured with the whole module's depths.
pub(crate) fn check_new(
    m: &Module,
    from: usize,
    live: &HashMap<Inst, u32>,
    new: &mut HashMap<Inst, u32>,
) -> Result<(), Inst> {
    let root = m.root();
    for i in from..m.arena_len() {
        let Ok(i) = u32::try_from(i) else { break };
        let x = Inst::from_index(i);
        // Its ancestors, up to one more than the limit.
        let mut up = x;
        let mut depth = 0u32;
        while let Some(p) = m.parent(up).filter(|_| up != root) {
            depth += 1;
            if depth > MAX_NESTING {
                return Err(x);
            }
            up = p;
        }
    }
    let hoistable = |i: Inst| m.get(i).is_some_and(|d| d.opcode().is_hoistable());
    let mut whole: Option<Vec<u32>> = None;
    for &h in m.pool().iter().filter(|h| h.idx() >= from) {
        if !hoistable(h) {
            continue;
        }
        let d = m.data(h);
        let mut deepest = 0u32;
        for o in d.ty().into_iter().chain(d.operands().iter().copied()) {
            if !hoistable(o) {
                continue;
            }
            match live.get(&o).or_else(|| new.get(&o)) {
                Some(&k) => deepest = deepest.max(k),
                None => {
                    let all = whole.get_or_insert_with(|| irkit_core::limits::value_depths(m));
                    deepest = deepest.max(all.get(o.idx()).copied().unwrap_or(0));
                }
            }
        }
        let depth = deepest.saturating_add(1);
        if depth > MAX_NESTING {
            return Err(h);
        }
        new.insert(h, depth);
    }
    Ok(())
}
