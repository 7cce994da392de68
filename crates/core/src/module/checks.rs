//! The rules of building a tree, written once: the module's own constructors
//! ([`Module::new_inst`], [`Module::insert_child`], [`Module::insert_decoration`],
//! [`Module::set_type`], [`Module::set_operands_from`]) and a [`crate::Fragment`] (a body built
//! in reserved slots, on any thread) call these same functions, so they refuse the same
//! instructions with the same errors by construction. What differs between them is only which
//! handles name an instruction they may touch (the whole arena, or the fragment's slots and
//! what the module held before).

use std::collections::HashMap;

use super::{InstData, Operands};
use crate::{CoreError, Inst, Module, Opcode};

impl Module {
    /// Refuses an opcode no tree instruction may be created with: a hoistable value (interned
    /// instead) or the root.
    pub(crate) fn check_creatable(opcode: Opcode) -> Result<(), CoreError> {
        if opcode.is_hoistable() {
            return Err(CoreError::WrongKind {
                opcode,
                what: "is hoistable: use `intern`",
            });
        }
        if opcode == Opcode::MODULE {
            return Err(CoreError::WrongKind {
                opcode,
                what: "is the root: there is only one",
            });
        }
        Ok(())
    }
}

/// Refuses attaching `child` (data `d`, live) under `parent`, as a child or a decoration: it
/// has a parent already, it is hoistable or the root (`is_root`), or it would become its own
/// ancestor (`is_ancestor(child, parent)`, asked only when `child` has a subtree: a fresh
/// instruction is nobody's ancestor, so attaching one costs O(1), not O(depth)).
pub(crate) fn check_attach(
    parent: Inst,
    child: Inst,
    d: &InstData,
    is_root: bool,
    is_ancestor: impl FnOnce() -> bool,
) -> Result<(), CoreError> {
    let why = if d.parent.is_some() {
        Some("it already has a parent")
    } else if d.opcode.is_hoistable() {
        Some("hoistable values live in the pool, not in child lists")
    } else if is_root {
        Some("it is the root")
    } else if child == parent || (!d.is_leaf() && is_ancestor()) {
        Some("it would become its own ancestor")
    } else {
        None
    };
    match why {
        Some(why) => Err(CoreError::BadAttach { parent, child, why }),
        None => Ok(()),
    }
}

/// Refuses a decoration (opcode `opcode`) as a child of `parent`.
pub(crate) fn check_child_kind(parent: Inst, child: Inst, opcode: Opcode) -> Result<(), CoreError> {
    if opcode.is_decoration() {
        return Err(CoreError::BadAttach {
            parent,
            child,
            why: "decorations go in the decoration list",
        });
    }
    Ok(())
}

/// Refuses `deco` (opcode `deco_op`) as a decoration of `owner` (opcode `owner_op`): a known
/// opcode that is not a decoration, or a hoistable owner.
pub(crate) fn check_decoration_kind(
    owner: Inst,
    owner_op: Opcode,
    deco: Inst,
    deco_op: Opcode,
) -> Result<(), CoreError> {
    let bad = |why| CoreError::BadAttach {
        parent: owner,
        child: deco,
        why,
    };
    if !deco_op.is_decoration() && deco_op.is_known() {
        return Err(bad("not a decoration"));
    }
    if owner_op.is_hoistable() {
        return Err(bad("hoistable values carry no decorations"));
    }
    Ok(())
}

/// Refuses a type or operand handle that names no instruction one may refer to (`names`).
pub(crate) fn check_refs(
    ty: Option<Inst>,
    operands: &[Inst],
    names: impl Fn(Inst) -> bool,
) -> Result<(), CoreError> {
    match ty
        .into_iter()
        .chain(operands.iter().copied())
        .find(|&i| !names(i))
    {
        Some(i) => Err(CoreError::BadHandle(i)),
        None => Ok(()),
    }
}

/// `i`, followed through values merged away (`forward`, see [`Module::resolve`]).
#[inline]
pub(crate) fn follow(forward: &HashMap<Inst, Inst>, mut i: Inst) -> Inst {
    // Most modules never merged a value away: no lookup per operand then.
    if forward.is_empty() {
        return i;
    }
    while let Some(&next) = forward.get(&i) {
        i = next;
    }
    i
}

/// `operands`, each followed through values merged away.
pub(crate) fn followed(forward: &HashMap<Inst, Inst>, operands: &[Inst]) -> Operands {
    if forward.is_empty() {
        Operands::from_slice(operands)
    } else {
        operands.iter().map(|&o| follow(forward, o)).collect()
    }
}

/// For tests: the module's own calls spelled as a [`crate::Fragment`]'s, so that a test can
/// build one body both ways.
#[cfg(test)]
pub(crate) trait Fill {
    /// [`Module::new_inst`] then [`Module::append_child`].
    fn append_new_child(
        &mut self,
        parent: Inst,
        opcode: Opcode,
        payload: crate::Payload,
    ) -> Result<Inst, CoreError>;
    /// [`Module::set_type`] then [`Module::set_operands_from`].
    fn set_type_and_operands(
        &mut self,
        inst: Inst,
        ty: Option<Inst>,
        operands: &[Inst],
    ) -> Result<(), CoreError>;
}

#[cfg(test)]
impl Fill for Module {
    fn append_new_child(
        &mut self,
        parent: Inst,
        opcode: Opcode,
        payload: crate::Payload,
    ) -> Result<Inst, CoreError> {
        let child = self.new_inst(opcode, None, Vec::new(), payload)?;
        self.append_child(parent, child)?;
        Ok(child)
    }

    fn set_type_and_operands(
        &mut self,
        inst: Inst,
        ty: Option<Inst>,
        operands: &[Inst],
    ) -> Result<(), CoreError> {
        self.set_type(inst, ty)?;
        self.set_operands_from(inst, operands)
    }
}
