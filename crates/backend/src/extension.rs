//! Growing a session's live program (spec/backends.md, "Sessions"): the load steps every
//! session shares ([`load`], [`load_in_place`]: check, swap in, prepare, undo on failure) and
//! what an extension added, read from the additions only (an extending module holds the live
//! instructions at the same arena slots, so what it adds is in the slots after them).

use irkit_core::{Inst, Module, Opcode, Payload};

use crate::BackendError;

/// A session's hold on its live program, as [`load`] and [`load_in_place`] use it.
pub trait Grows {
    /// The live module (an empty one before the first load).
    fn live(&mut self) -> &mut Module;
    /// Whether a program is loaded: the first load instantiates, later ones extend.
    fn loaded(&self) -> bool;
    /// How many arena slots of the live module are prepared.
    fn prepared(&self) -> usize;
    /// Prepares what the live module holds beyond what is prepared (its top-level
    /// definitions from position `from` on); on an error, nothing is prepared.
    fn grow(&mut self, from: usize) -> Result<(), BackendError>;
}

/// [`Session::load`](crate::Session::load) on a session's [`Grows`]: refuses a module that does
/// not extend the live one (after the first load), makes it the live program and prepares its
/// additions, and on an error puts the previous program back.
pub fn load<S: Grows + ?Sized>(s: &mut S, module: Module) -> Result<(), BackendError> {
    let loaded = s.loaded();
    if loaded && let Err(why) = module.extends(s.live()) {
        return Err(BackendError::Malformed(format!(
            "the module does not extend the live program: {why}"
        )));
    }
    let from = if loaded {
        s.live().top_level().len()
    } else {
        0
    };
    let old = std::mem::replace(s.live(), module);
    if let Err(e) = s.grow(from) {
        *s.live() = old;
        return Err(e);
    }
    Ok(())
}

/// [`Session::load_in_place`](crate::Session::load_in_place) on a session's [`Grows`]: lets
/// `append` extend the live module, prepares the additions, and on an error removes them.
pub fn load_in_place<S: Grows + ?Sized>(
    s: &mut S,
    append: &mut dyn FnMut(&mut Module) -> bool,
) -> Result<bool, BackendError> {
    let defs = s.live().top_level().len();
    if !append(s.live()) {
        return Ok(false);
    }
    if let Err(e) = s.grow(defs) {
        let from = s.prepared();
        remove_additions(s.live(), defs, from);
        return Err(e);
    }
    Ok(true)
}

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
