//! Devirtualization: an indirect call that can reach only one function becomes a direct call
//! of it (spec/linking.md, "Optimization passes"), from the call graph ([`crate::callgraph`]).
//!
//! * When the callee operand can only be that function `f` (of exactly the call's signature),
//!   `call_indirect S, %fp(args)` is rewritten `call @f(args)`: it calls what the indirect call
//!   would have called, with the same arguments.
//! * When `f` is the only function of the call's signature it may reach but the operand may
//!   also be something else (`null`, a function of another signature, an address the analysis
//!   cannot follow), the call is *guarded*: `%fp == @f` branches to `call @f(args)`, anything
//!   else to the original `call_indirect`, which does what it always did (traps, in the
//!   interpreter, as the semantics demand); both continue with the call's result. Nothing is
//!   assumed about values the analysis cannot see, so the rewrite is right whatever `%fp` is.
//! * Otherwise (no target, or several) the call is kept.

use rustc_hash::FxHashMap as HashMap;

use irkit_core::{CoreError, Inst, IntCC, Module, Opcode, Payload};

use crate::callgraph::{CallGraph, Callees};
use crate::inline::Visible;

/// What [`devirtualize`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Devirtualized {
    /// Indirect calls rewritten as direct calls, guarded ones included.
    pub calls: u64,
    /// Of those, the ones behind a guard (`%fp == @f`), keeping the indirect call otherwise.
    pub guarded: u64,
}

/// Rewrites every indirect call of `m` that can reach only one function of the call's
/// signature as a direct call of that function, guarded where the callee may be something
/// else. `m` must verify; it still does afterwards.
pub fn devirtualize(m: &mut Module, visible: &Visible<'_>) -> Result<Devirtualized, CoreError> {
    let graph = CallGraph::of(m, visible);
    let mut done = Devirtualized::default();
    // The calls' results are local values: each function's uses are rewritten in it alone.
    let mut exact: HashMap<Inst, HashMap<Inst, Inst>> = HashMap::default();
    let mut callers: Vec<Inst> = Vec::new();
    for site in &graph.sites {
        let Callees::Indirect { targets, only } = &site.callees else {
            continue;
        };
        let [target] = targets.as_slice() else {
            continue;
        };
        if *only {
            let new = direct_call(m, site.call, *target)?;
            exact.entry(site.caller).or_default().insert(site.call, new);
            callers.push(site.caller);
        } else {
            guard(m, site.call, *target)?;
            done.guarded += 1;
        }
        done.calls += 1;
    }
    callers.dedup();
    for f in callers {
        let uses = &exact[&f];
        crate::rewrite::replace_local_uses(m, f, uses)?;
        let old: Vec<Inst> = uses.keys().copied().collect();
        m.remove_all(&old)?;
    }
    Ok(done)
}

/// `call @target(args)` in place of `call_indirect S, %fp(args)`, taking over its decorations
/// (its name, its source location). Returns the new instruction; the old one is left detached.
fn direct_call(m: &mut Module, call: Inst, target: Inst) -> Result<Inst, CoreError> {
    let new = new_direct_call(m, call, target)?;
    let (block, at) = crate::rewrite::place(m, call)?;
    m.insert_child(block, at, new)?;
    crate::rewrite::move_decorations(m, call, new)?;
    m.detach(call)?;
    Ok(new)
}

/// A detached `call @target(args)` with the arguments and result type of `call`.
fn new_direct_call(m: &mut Module, call: Inst, target: Inst) -> Result<Inst, CoreError> {
    let mut ops = vec![target];
    ops.extend(m.operands(call).get(2..).unwrap_or(&[]).iter().copied());
    m.new_inst(Opcode::CALL, m.ty(call), ops, Payload::None)
}

/// Guards `call` (`call_indirect S, %fp(args)` in function `g`):
///
/// ```text
///   %hit = icmp eq %fp, @target
///   br %hit, ^direct, ^other
/// ^direct:
///   %r1 = call @target(args)
///   jump ^cont(%r1)
/// ^other:
///   %r = call_indirect S, %fp(args)
///   jump ^cont(%r)
/// ^cont(%r2):
///   … what followed the call, with %r2 for %r
/// ```
fn guard(m: &mut Module, call: Inst, target: Inst) -> Result<(), CoreError> {
    let block = m.parent(call).ok_or(CoreError::BadHandle(call))?;
    let g = m.parent(block).ok_or(CoreError::BadHandle(block))?;
    let fp = *m.operands(call).get(1).ok_or(CoreError::BadHandle(call))?;
    let (cont, result) = crate::rewrite::split_after(m, call)?;
    if let Some(r) = result {
        crate::rewrite::replace_local_uses(m, g, &[(call, r)].into_iter().collect())?;
    }
    m.detach(call)?;
    let i1 = m.ty_i1();
    let hit = m.new_inst(
        Opcode::ICMP,
        Some(i1),
        vec![fp, target],
        Payload::Int(IntCC::Eq.code()),
    )?;
    m.append_child(block, hit)?;
    let direct = m.new_inst(Opcode::BLOCK, None, vec![], Payload::None)?;
    let other = m.new_inst(Opcode::BLOCK, None, vec![], Payload::None)?;
    let br = m.new_inst(Opcode::BR, None, vec![hit, direct, other], Payload::None)?;
    m.append_child(block, br)?;
    let new = new_direct_call(m, call, target)?;
    m.append_child(direct, new)?;
    m.append_child(other, call)?;
    for (b, value) in [(direct, new), (other, call)] {
        let mut ops = vec![cont];
        ops.extend(result.map(|_| value));
        let jump = m.new_inst(Opcode::JUMP, None, ops, Payload::None)?;
        m.append_child(b, jump)?;
    }
    let (_, at) = crate::rewrite::place(m, cont)?;
    m.insert_child(g, at, other)?;
    m.insert_child(g, at, direct)?;
    Ok(())
}
