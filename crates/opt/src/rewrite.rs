//! Small rewriting steps the optimization passes share.

use rustc_hash::FxHashMap as HashMap;

use irkit_core::{CoreError, Inst, Module, Opcode, Payload};

/// The top-level functions of `m`, in module order.
pub(crate) fn functions(m: &Module) -> Vec<Inst> {
    m.top_level()
        .iter()
        .copied()
        .filter(|&d| m.opcode(d) == Opcode::FUNC)
        .collect()
}

/// The instructions in the blocks of every function of `m` (parameters included).
pub(crate) fn body_instructions(m: &Module) -> u64 {
    functions(m)
        .into_iter()
        .flat_map(|f| m.blocks(f))
        .map(|b| m.children(b).len() as u64)
        .sum()
}

/// The parent of `inst` and its index among the parent's children.
pub(crate) fn place(m: &Module, inst: Inst) -> Result<(Inst, usize), CoreError> {
    let parent = m.parent(inst).ok_or(CoreError::BadHandle(inst))?;
    let at = m
        .children(parent)
        .iter()
        .position(|&c| c == inst)
        .ok_or(CoreError::BadHandle(inst))?;
    Ok((parent, at))
}

/// Moves every decoration of `from` (its name, its source location, …) to `to`, in order.
pub(crate) fn move_decorations(m: &mut Module, from: Inst, to: Inst) -> Result<(), CoreError> {
    for d in m.decorations(from).to_vec() {
        m.detach(d)?;
        m.attach_decoration(to, d)?;
    }
    Ok(())
}

/// Replaces, in function `f`, every operand that is a key of `map` by its value (following
/// chains: a value may itself be replaced). Only local values (a function's instructions and
/// parameters) may be keys: nothing outside `f` can use them, so `f` is all there is to walk,
/// not the whole module.
pub(crate) fn replace_local_uses(
    m: &mut Module,
    f: Inst,
    map: &HashMap<Inst, Inst>,
) -> Result<(), CoreError> {
    if map.is_empty() {
        return Ok(());
    }
    let lookup = |mut v: Inst| {
        // A chain is at most as long as the map.
        for _ in 0..=map.len() {
            match map.get(&v) {
                Some(&next) => v = next,
                None => return Ok(v),
            }
        }
        Err(CoreError::ReplacementCycle(v))
    };
    let mut ops = Vec::new();
    for i in m.walk_from(f) {
        if !m.operands(i).iter().any(|o| map.contains_key(o)) {
            continue;
        }
        ops.clear();
        for &o in m.operands(i) {
            ops.push(lookup(o)?);
        }
        m.set_operands_from(i, &ops)?;
    }
    Ok(())
}

/// A copy of function `f`'s blocks under a new, detached `func` of the same type (no name, no
/// decorations of its own; the copied instructions keep theirs). Values defined inside `f` are
/// copied; everything else they use (pool values, definitions) is shared.
pub(crate) fn clone_body(m: &mut Module, f: Inst) -> Result<Inst, CoreError> {
    let copy = m.new_inst(Opcode::FUNC, m.ty(f), vec![], Payload::None)?;
    let mut map: HashMap<Inst, Inst> = HashMap::default();
    let mut made: Vec<(Inst, Inst)> = Vec::new();
    // Create every instruction under its copied parent, decorations included, in order.
    let mut stack: Vec<(Inst, Inst, bool)> = m
        .children(f)
        .iter()
        .rev()
        .map(|&b| (b, copy, false))
        .collect();
    while let Some((src, parent, is_decoration)) = stack.pop() {
        let new = m.new_inst(m.opcode(src), None, vec![], m.payload(src).clone())?;
        if is_decoration {
            m.attach_decoration(parent, new)?;
        } else {
            m.append_child(parent, new)?;
        }
        map.insert(src, new);
        made.push((src, new));
        stack.extend(m.children(src).iter().rev().map(|&c| (c, new, false)));
        stack.extend(m.decorations(src).iter().rev().map(|&d| (d, new, true)));
    }
    // Then types and operands, through the map (forward references included).
    let mut ops = Vec::new();
    for (src, new) in made {
        m.set_type(new, m.ty(src))?;
        ops.clear();
        ops.extend(m.operands(src).iter().map(|o| *map.get(o).unwrap_or(o)));
        m.set_operands_from(new, &ops)?;
    }
    Ok(copy)
}

/// Splits the block of `inst` after it: what follows `inst` (the terminator included) moves to
/// a new *continuation* block placed right after it in the function, with one parameter for
/// `inst`'s result if it has one. Returns the continuation and that parameter. The block is
/// left without a terminator, for the caller to end.
pub(crate) fn split_after(m: &mut Module, inst: Inst) -> Result<(Inst, Option<Inst>), CoreError> {
    let (block, at) = place(m, inst)?;
    let cont = m.new_inst(Opcode::BLOCK, None, vec![], Payload::None)?;
    let param = match m.ty(inst) {
        Some(t) => {
            let p = m.new_inst(Opcode::PARAM, Some(t), vec![], Payload::None)?;
            m.append_child(cont, p)?;
            Some(p)
        }
        None => None,
    };
    let after_param = m.children(cont).len();
    m.move_children(block, at + 1, cont, after_param)?;
    let (f, pos) = place(m, block)?;
    m.insert_child(f, pos + 1, cont)?;
    Ok((cont, param))
}
