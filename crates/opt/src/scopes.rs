//! The inlining scopes an inlined copy gets (spec/ir.md, "Inlining scopes"; spec/linking.md,
//! "Optimization passes"): when the inliners move a callee's blocks into a caller, the caller
//! gets one `inline_scope` for the copy (the callee's name, the call's `loc` as its call site,
//! the call's own scope as its parent), and every located instruction of the copy is put in
//! it. An instruction that was already in a scope of the callee (the callee had itself
//! inlined something) is put in a copy of that scope made in the caller, re-parented under the
//! new one, so nesting is kept: a chain of scopes is the chain of inlined calls.

use rustc_hash::FxHashMap as HashMap;

use irkit_core::{CoreError, Inst, Module, Opcode, scope};

/// Puts the located instructions of `blocks` (the body of a copy of the function `call`
/// calls, about to be moved into function `g`, which holds `call`) in a new scope of `g` for
/// this copy. Returns the scope; none, and nothing changed, when no instruction of the copy
/// has a location (a scope would describe no code).
pub(crate) fn enter_scope(
    m: &mut Module,
    call: Inst,
    g: Inst,
    blocks: &[Inst],
) -> Result<Option<Inst>, CoreError> {
    let located = blocks.iter().any(|&b| {
        m.children(b)
            .iter()
            .any(|&i| m.find_decoration(i, Opcode::LOC).is_some())
    });
    if !located {
        return Ok(None);
    }
    let callee = m.operands(call).first().copied();
    let name = callee.map_or_else(|| "?".to_string(), |f| scope::function_name(m, f));
    let site = m.find_decoration(call, Opcode::LOC);
    let parent = site.and_then(|l| m.operands(l).get(2).copied());
    let new = scope::add_scope(m, g, &name, site, parent)?;
    // The callee's scopes, by their copies in `g`.
    let mut copies: HashMap<Inst, Inst> = HashMap::default();
    for &b in blocks {
        for i in m.children(b).to_vec() {
            let Some(loc) = m.find_decoration(i, Opcode::LOC) else {
                continue;
            };
            let to = match m.operands(loc).get(2).copied() {
                Some(s) => copy_scope(m, g, s, new, &mut copies)?,
                None => new,
            };
            scope::set_scope(m, i, to)?;
        }
    }
    Ok(Some(new))
}

/// The copy in `g` of the callee's scope `s`, made with its ancestors (outermost first, so
/// each parent comes before its children in `g`'s decorations) unless made already; the
/// copy of an outermost scope gets `root` as its parent.
fn copy_scope(
    m: &mut Module,
    g: Inst,
    s: Inst,
    root: Inst,
    copies: &mut HashMap<Inst, Inst>,
) -> Result<Inst, CoreError> {
    // The chain up to the first scope copied already (or the outermost); each scope's parent
    // is earlier in its function's decorations (rule A12), so the chain is at most as long
    // as that list.
    let limit = m.parent(s).map_or(0, |f| m.decorations(f).len());
    let mut chain = Vec::new();
    let mut at = Some(s);
    while let Some(x) = at {
        if copies.contains_key(&x) || chain.len() >= limit {
            break;
        }
        chain.push(x);
        at = scope::parent(m, x);
    }
    for &x in chain.iter().rev() {
        let parent = scope::parent(m, x)
            .and_then(|p| copies.get(&p).copied())
            .unwrap_or(root);
        let name = scope::callee(m, x).to_string();
        let site = m.find_decoration(x, Opcode::LOC);
        let c = scope::add_scope(m, g, &name, site, Some(parent))?;
        copies.insert(x, c);
    }
    Ok(copies.get(&s).copied().unwrap_or(root))
}
