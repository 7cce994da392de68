//! Devirtualization: an indirect call that can only ever call one function becomes a direct
//! call of it (spec/linking.md, "Optimization passes").
//!
//! A function address is a *set* of possible functions (the design document *Simple, chapter
//! 18*: each call site is linked to the functions it may call). The set of a `call_indirect`'s
//! callee operand is computed from what the operand is built from, within its function:
//!
//! * a `func` definition used as a value: that function;
//! * `select %c, %a, %b`: the sets of `%a` and `%b` together;
//! * a `load` of a `ptr` from a constant global table (a `global_const`, through `elem`): the
//!   functions the initial value holds at every offset the load may read without trapping,
//!   when all of them are functions (`tables.rs`);
//! * a block parameter (not the entry block's: those are the function's arguments): the sets
//!   of the arguments every edge into the block passes for it, together;
//! * anything else (an argument, a load, a call's result, `null`, an integer turned into a
//!   pointer, …): unknown.
//!
//! Loops make the parameters' sets depend on each other: they are solved together, growing
//! from empty until nothing changes (a set only grows, and one larger than [`MAX_TARGETS`] is
//! unknown, so this ends). A call whose set is exactly one function `f`, of exactly the call's
//! signature, is rewritten `call @f(…)`: it calls what the indirect call would have called,
//! with the same arguments, so the program does the same. When the one function has another
//! signature, the indirect call would trap (a mismatched target), and it is kept as it is.

use std::collections::{BTreeSet, HashMap};

use irkit_core::{CoreError, Inst, Module, Opcode, Payload};

use crate::tables::Tables;

/// The most functions a set holds before it counts as unknown.
pub const MAX_TARGETS: usize = 16;

/// The most values one call's set may be computed from before it counts as unknown.
const MAX_NODES: usize = 4096;

/// What [`devirtualize`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Devirtualized {
    /// Indirect calls rewritten as direct calls.
    pub calls: u64,
}

/// The possible values of a function address: some functions, or unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Targets {
    Known(BTreeSet<Inst>),
    Unknown,
}

impl Targets {
    fn join(&mut self, other: &Targets) -> bool {
        match (&mut *self, other) {
            (Targets::Unknown, _) => false,
            (_, Targets::Unknown) => {
                *self = Targets::Unknown;
                true
            }
            (Targets::Known(a), Targets::Known(b)) => {
                let before = a.len();
                a.extend(b.iter().copied());
                if a.len() > MAX_TARGETS {
                    *self = Targets::Unknown;
                    return true;
                }
                a.len() != before
            }
        }
    }
}

/// Rewrites every indirect call of `m` whose callee can only be one function of the call's
/// signature as a direct call of that function. `m` must verify.
pub fn devirtualize(m: &mut Module) -> Result<Devirtualized, CoreError> {
    // (function, call, target), in module order.
    let mut rewrites: Vec<(Inst, Inst, Inst)> = Vec::new();
    let funcs = crate::rewrite::functions(m);
    let tables = crate::tables::Tables::new(m);
    for f in funcs {
        let calls: Vec<Inst> = m
            .blocks(f)
            .flat_map(|b| m.children(b).iter().copied())
            .filter(|&i| m.opcode(i) == Opcode::CALL_INDIRECT)
            .collect();
        if calls.is_empty() {
            continue;
        }
        let edges = Incoming::of(m, f);
        for call in calls {
            let (Some(&sig), Some(&callee)) = (m.operands(call).first(), m.operands(call).get(1))
            else {
                continue;
            };
            if let Targets::Known(set) = targets(m, &tables, &edges, callee)
                && set.len() == 1
                && let Some(&target) = set.first()
                && m.ty(target).map(|t| m.resolve(t)) == Some(m.resolve(sig))
            {
                rewrites.push((f, call, target));
            }
        }
    }
    // The calls' results are local values: each function's uses are rewritten in it alone.
    for group in rewrites.chunk_by(|a, b| a.0 == b.0) {
        let f = group[0].0;
        let mut uses = HashMap::new();
        for &(_, call, target) in group {
            uses.insert(call, direct_call(m, call, target)?);
        }
        crate::rewrite::replace_local_uses(m, f, &uses)?;
        for &(_, call, _) in group {
            m.remove(call)?;
        }
    }
    Ok(Devirtualized {
        calls: rewrites.len() as u64,
    })
}

/// `call @target(args)` in place of `call_indirect S, %fp(args)`, taking over its decorations
/// (its name, its source location). Returns the new instruction; the old one is left detached.
fn direct_call(m: &mut Module, call: Inst, target: Inst) -> Result<Inst, CoreError> {
    let mut ops = vec![target];
    ops.extend(m.operands(call).get(2..).unwrap_or(&[]).iter().copied());
    let ty = m.ty(call);
    let new = m.new_inst(Opcode::CALL, ty, ops, Payload::None)?;
    let block = m.parent(call).ok_or(CoreError::BadHandle(call))?;
    let at = m
        .children(block)
        .iter()
        .position(|&c| c == call)
        .ok_or(CoreError::BadHandle(call))?;
    m.insert_child(block, at, new)?;
    crate::rewrite::move_decorations(m, call, new)?;
    m.detach(call)?;
    Ok(new)
}

/// For each block parameter of a function, the values its incoming edges pass.
struct Incoming {
    args: HashMap<Inst, Vec<Inst>>,
    entry: Option<Inst>,
}

impl Incoming {
    fn of(m: &Module, f: Inst) -> Incoming {
        let mut args: HashMap<Inst, Vec<Inst>> = HashMap::new();
        for b in m.blocks(f) {
            let Some(&term) = m.children(b).last() else {
                continue;
            };
            if !m.opcode(term).is_terminator() {
                continue;
            }
            let ops = m.operands(term);
            let (_, edges) = irkit_core::edges::edges_of(m, term);
            for e in edges {
                let params = m.block_params(e.target);
                for (k, &p) in params.iter().enumerate() {
                    if let Some(&a) = ops.get(e.args.start + k).filter(|_| k < e.args.len()) {
                        args.entry(p).or_default().push(a);
                    }
                }
            }
        }
        Incoming {
            args,
            entry: m.entry_block(f),
        }
    }
}

/// The possible values of function address `v`.
fn targets(m: &Module, tables: &Tables<'_>, inc: &Incoming, v: Inst) -> Targets {
    // The values `v` is built from, through selects and block parameters: solved together.
    let mut nodes: Vec<Inst> = vec![v];
    let mut index: HashMap<Inst, usize> = HashMap::from([(v, 0)]);
    let mut sources: Vec<Vec<usize>> = Vec::new();
    let mut base: Vec<Targets> = Vec::new();
    let mut k = 0;
    while k < nodes.len() {
        if nodes.len() > MAX_NODES {
            return Targets::Unknown;
        }
        let n = nodes[k];
        let (own, from) = node(m, tables, inc, n);
        let mut srcs = Vec::with_capacity(from.len());
        for s in from {
            let next = nodes.len();
            let j = *index.entry(s).or_insert(next);
            if j == next {
                nodes.push(s);
            }
            srcs.push(j);
        }
        base.push(own);
        sources.push(srcs);
        k += 1;
    }
    let mut sets = base;
    loop {
        let mut changed = false;
        for i in 0..sets.len() {
            for &j in &sources[i] {
                if i != j {
                    let s = sets[j].clone();
                    changed |= sets[i].join(&s);
                }
            }
        }
        if !changed {
            break;
        }
    }
    sets.swap_remove(0)
}

/// What value `v` contributes by itself, and the values whose sets flow into it.
fn node(m: &Module, tables: &Tables<'_>, inc: &Incoming, v: Inst) -> (Targets, Vec<Inst>) {
    let none = Targets::Known(BTreeSet::new());
    match m.opcode(v) {
        Opcode::FUNC if m.parent(v) == Some(m.root()) => {
            (Targets::Known(BTreeSet::from([v])), vec![])
        }
        Opcode::SELECT => (none, m.operands(v).get(1..).unwrap_or(&[]).to_vec()),
        Opcode::LOAD => match tables.loaded_functions(v) {
            Some(set) if set.len() <= MAX_TARGETS => (Targets::Known(set), vec![]),
            _ => (Targets::Unknown, vec![]),
        },
        Opcode::PARAM => {
            let in_entry = m.parent(v).is_some_and(|b| Some(b) == inc.entry);
            match inc.args.get(&v) {
                Some(args) if !in_entry => (none, args.clone()),
                // A function argument, or a parameter of a block no edge enters (unreachable:
                // it never has a value, but say nothing about it).
                _ => (Targets::Unknown, vec![]),
            }
        }
        _ => (Targets::Unknown, vec![]),
    }
}
