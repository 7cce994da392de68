//! What an extension of a live program added, read from the additions only (for sessions:
//! spec/backends.md, "Sessions"): an extending module holds the live instructions at the same
//! arena slots, so what it adds is in the slots after them.

use irkit_core::{Inst, Module, Opcode, Payload};

/// The export names the instructions of `m` at arena slots from `from` on give top-level
/// definitions, each with its definition, in slot order: the names of new definitions and the
/// new names of live ones (`export`s appended to them, the one change an extension may make to
/// a live definition). Dead instructions are left out.
pub fn new_exports(m: &Module, from: usize) -> Vec<(String, Inst)> {
    let root = m.root();
    (from..m.arena_len())
        .filter_map(|i| {
            let x = Inst::from_index(u32::try_from(i).ok()?);
            let d = m
                .get(x)
                .filter(|d| d.opcode() == Opcode::EXPORT && !d.is_dead())?;
            let def = d
                .parent()
                .filter(|&p| m.parent(p) == Some(root) && m.is_live(p))?;
            let Payload::Str(name) = d.payload() else {
                return None;
            };
            Some((name.to_string(), def))
        })
        .collect()
}

/// Removes what was added to `m` after its first `defs` top-level definitions and `from` arena
/// slots: the new definitions and the new `export`s of the live ones (a load that failed). The
/// live instructions are as they were; the removed ones stay as dead slots, and new types and
/// constants stay in the pool, unused.
pub fn remove_additions(m: &mut Module, defs: usize, from: usize) {
    let top = m.top_level();
    let mut added: Vec<Inst> = top[defs.min(top.len())..].to_vec();
    let root = m.root();
    for i in from..m.arena_len() {
        let Ok(i) = u32::try_from(i) else { break };
        let x = Inst::from_index(i);
        if let Some(d) = m
            .get(x)
            .filter(|d| d.opcode() == Opcode::EXPORT && !d.is_dead())
            && let Some(p) = d.parent()
            && p.idx() < from
            && m.parent(p) == Some(root)
        {
            added.push(x);
        }
    }
    // Live instructions, none hoistable: the removal does not fail.
    let _ = m.remove_all(&added);
}
