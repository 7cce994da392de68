//! The dependency graph of a NOIR proc (the blockless function form of the design document
//! *NOIR*) and the proc analyses built on it.
//!
//! A `proc` is a definition whose children are its parameters, then its instructions directly
//! (no blocks), then one `result`. Order among the instructions comes from their
//! *dependencies*, not from the child list: an instruction depends on the proc-local values it
//! reads (its operands, except the target of a `next`, which it writes) and on its *passive*
//! dependencies, the operands of its `when` and `unless` decorations. The dependency graph is
//! acyclic in a valid proc (loops are expressed by `var`/`next` and `event`/`cue`, which carry
//! state between iterations instead of forming cycles).
//!
//! [`ProcGraph`] is that graph, computed once and shared by the verifier, the evaluator
//! (`irkit-interp`) and the lowering to the block form (`irkit-noir`): the instructions in a
//! deterministic topological order, each one's dependencies, which ones an `event` reaches
//! (*dynamic*: re-executed when that event is cued), and which `next` writes each `var`.
//! [`merge_nexts`] is the rewrite of the seed's footnote 2: several `next`s of one `var` become
//! one `next` of a `coalesce`. The semantics are normative in spec/ir.md, chapter "NOIR".

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::{CoreError, Inst, Module, Opcode, Payload};

/// Whether `op` may appear in a proc's body besides the NOIR opcodes: the core operations
/// without effects on memory or control (integer and float arithmetic, comparisons,
/// conversions, `select`, `extract`, `insert`, `elem`): the registry's `in-proc` flag.
pub fn is_pure_core(op: Opcode) -> bool {
    op.info()
        .is_some_and(|i| i.flags.contains(crate::Flags::IN_PROC))
}

/// Whether `op` is one of the NOIR body opcodes (`event` … `coalesce`; not `proc`, `result`
/// or the passive-dependency decorations).
pub fn is_noir_op(op: Opcode) -> bool {
    op.info()
        .is_some_and(|i| i.flags.contains(crate::Flags::NOIR))
}

/// Whether an instruction of this opcode produces only a void (defined or undefined) value in
/// a proc: it can be a passive dependency but never an operand read as a value.
pub fn is_void_in_proc(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::EVENT | Opcode::CUE | Opcode::NEXT | Opcode::CASE
    )
}

/// The operands of `i` that it reads (its *active* dependencies, before filtering to
/// proc-local ones): every operand whose registry role is read ([`Role::is_read`]), so all
/// but the target of a `next` (written, not read) and the type operand of `elem`. For the
/// opcodes a proc may hold the unread operands lead (a test of [`crate::roles`] checks it),
/// so they are a suffix of the operands.
///
/// [`Role::is_read`]: crate::roles::Role::is_read
pub fn read_operands(m: &Module, i: Inst) -> &[Inst] {
    let Some(d) = m.get(i) else { return &[] };
    let ops = d.operands();
    let unread = d
        .opcode()
        .info()
        .map_or(0, |info| info.signature.unread_prefix());
    ops.get(unread..).unwrap_or(&[])
}

/// The passive dependencies of `i`: the operands of all its `when` decorations (each must be
/// defined) and of all its `unless` decorations (each must be undefined).
pub fn passive_deps(m: &Module, i: Inst) -> (Vec<Inst>, Vec<Inst>) {
    let mut when = Vec::new();
    let mut unless = Vec::new();
    let Some(d) = m.get(i) else {
        return (when, unless);
    };
    for &deco in d.decorations() {
        let Some(dd) = m.get(deco) else { continue };
        match dd.opcode() {
            Opcode::WHEN => when.extend_from_slice(dd.operands()),
            Opcode::UNLESS => unless.extend_from_slice(dd.operands()),
            _ => {}
        }
    }
    (when, unless)
}

/// A proc's structure and dependency graph. Built by [`ProcGraph::new`]; every index is a
/// position in [`ProcGraph::order`].
#[derive(Clone, Debug)]
pub struct ProcGraph {
    /// The proc.
    pub proc_: Inst,
    /// Its leading `param` children.
    pub params: Vec<Inst>,
    /// Its `result` child, if it has one.
    pub result: Option<Inst>,
    /// The body instructions (every child but the parameters and `result`) in topological
    /// order: each after all its dependencies; ties keep child order.
    pub order: Vec<Inst>,
    /// Position in `order` of each body instruction.
    pub index: HashMap<Inst, usize>,
    /// Per body instruction: the positions of the body instructions it depends on (reads or
    /// passively depends on), without repeats. Parameters are not listed: they never change.
    pub deps: Vec<Vec<usize>>,
    /// Per body instruction: it is an `event` or depends, directly or not, on one; only these
    /// run again after the first iteration.
    pub dynamic: Vec<bool>,
    /// For each `var` (by position) written by exactly one `next`, that `next`'s position.
    pub next_of: HashMap<usize, usize>,
    /// For each `var` (by position), how many `next`s write it (those with more than one are
    /// invalid until [`merge_nexts`] runs).
    pub next_count: HashMap<usize, usize>,
}

/// Why a [`ProcGraph`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcGraphError {
    /// The instruction the problem is about.
    pub inst: Inst,
    /// What is wrong, in one line.
    pub message: String,
}

impl ProcGraph {
    /// Analyses proc `p`. Tolerates any module (dangling handles are skipped); the only error
    /// is a dependency cycle, named instruction by instruction.
    pub fn new(m: &Module, p: Inst) -> Result<ProcGraph, ProcGraphError> {
        let children: &[Inst] = m.get(p).map_or(&[], |d| d.children());
        let live_op = |i: Inst| m.get(i).filter(|d| !d.is_dead()).map(|d| d.opcode());
        let nparams = children
            .iter()
            .take_while(|&&c| live_op(c) == Some(Opcode::PARAM))
            .count();
        let params = children[..nparams].to_vec();
        let mut result = None;
        let mut body = Vec::new();
        for &c in &children[nparams..] {
            match live_op(c) {
                Some(Opcode::RESULT) if result.is_none() => result = Some(c),
                Some(Opcode::PARAM) | Some(Opcode::RESULT) | None => {}
                Some(_) => body.push(c),
            }
        }
        let child_pos: HashMap<Inst, usize> =
            body.iter().enumerate().map(|(k, &i)| (i, k)).collect();
        // Dependencies in child positions.
        let mut cdeps: Vec<Vec<usize>> = Vec::with_capacity(body.len());
        for &i in &body {
            let mut ds: Vec<usize> = Vec::new();
            let (when, unless) = passive_deps(m, i);
            for &v in read_operands(m, i).iter().chain(&when).chain(&unless) {
                if let Some(&k) = child_pos.get(&v)
                    && !ds.contains(&k)
                {
                    ds.push(k);
                }
            }
            cdeps.push(ds);
        }
        // Kahn's algorithm, smallest child position first.
        let n = body.len();
        let mut indeg = vec![0usize; n];
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (k, ds) in cdeps.iter().enumerate() {
            indeg[k] = ds.len();
            for &d in ds {
                users[d].push(k);
            }
        }
        let mut ready: BinaryHeap<Reverse<usize>> =
            (0..n).filter(|&k| indeg[k] == 0).map(Reverse).collect();
        let mut topo = Vec::with_capacity(n);
        while let Some(Reverse(k)) = ready.pop() {
            topo.push(k);
            for &u in &users[k] {
                indeg[u] -= 1;
                if indeg[u] == 0 {
                    ready.push(Reverse(u));
                }
            }
        }
        if topo.len() < n {
            return Err(cycle_error(m, &body, &cdeps, &indeg));
        }
        let mut new_pos = vec![0usize; n];
        for (t, &k) in topo.iter().enumerate() {
            new_pos[k] = t;
        }
        let order: Vec<Inst> = topo.iter().map(|&k| body[k]).collect();
        let index: HashMap<Inst, usize> = order.iter().enumerate().map(|(t, &i)| (i, t)).collect();
        let deps: Vec<Vec<usize>> = topo
            .iter()
            .map(|&k| cdeps[k].iter().map(|&d| new_pos[d]).collect())
            .collect();
        let mut dynamic = vec![false; n];
        for t in 0..n {
            dynamic[t] =
                live_op(order[t]) == Some(Opcode::EVENT) || deps[t].iter().any(|&d| dynamic[d]);
        }
        let mut next_of = HashMap::new();
        let mut next_count: HashMap<usize, usize> = HashMap::new();
        for (t, &i) in order.iter().enumerate() {
            if live_op(i) == Some(Opcode::VAR) {
                next_count.entry(t).or_insert(0);
            }
        }
        for (t, &i) in order.iter().enumerate() {
            if live_op(i) != Some(Opcode::NEXT) {
                continue;
            }
            let Some(&target) = m.get(i).and_then(|d| d.operands().first()) else {
                continue;
            };
            if let Some(&v) = index.get(&target)
                && live_op(target) == Some(Opcode::VAR)
            {
                *next_count.entry(v).or_insert(0) += 1;
                next_of.insert(v, t);
            }
        }
        next_of.retain(|v, _| next_count.get(v) == Some(&1));
        Ok(ProcGraph {
            proc_: p,
            params,
            result,
            order,
            index,
            deps,
            dynamic,
            next_of,
            next_count,
        })
    }

    /// The position of the operand `v` in [`ProcGraph::order`], if it is a body instruction.
    pub fn pos(&self, v: Inst) -> Option<usize> {
        self.index.get(&v).copied()
    }

    /// The position of parameter `v` among the proc's parameters, if it is one.
    pub fn param_pos(&self, v: Inst) -> Option<usize> {
        self.params.iter().position(|&p| p == v)
    }
}

/// Names one cycle among the instructions Kahn's algorithm could not order.
fn cycle_error(m: &Module, body: &[Inst], cdeps: &[Vec<usize>], indeg: &[usize]) -> ProcGraphError {
    // Every left-over node has a left-over dependency; walking those must revisit a node.
    let start = (0..body.len()).find(|&k| indeg[k] > 0).unwrap_or(0);
    let mut seen: HashMap<usize, usize> = HashMap::new();
    let mut path = Vec::new();
    let mut cur = start;
    loop {
        if let Some(&at) = seen.get(&cur) {
            path.drain(..at);
            break;
        }
        seen.insert(cur, path.len());
        path.push(cur);
        match cdeps[cur].iter().copied().find(|&d| indeg[d] > 0) {
            Some(d) => cur = d,
            None => break,
        }
    }
    // `path` lists users before their dependencies; print in dependency direction.
    path.reverse();
    let mut names: Vec<String> = path.iter().map(|&k| describe(m, body[k])).collect();
    if let Some(first) = names.first().cloned() {
        names.push(first);
    }
    ProcGraphError {
        inst: body[path.first().copied().unwrap_or(start)],
        message: format!("dependency cycle: {}", names.join(" -> ")),
    }
}

/// `%name` (`@name` for a definition) or `inst N (opcode)`, for messages.
pub fn describe(m: &Module, i: Inst) -> String {
    match m.get(i).and_then(|_| m.name(i)) {
        Some(n) if m.opcode(i).is_definition() => format!("@{n}"),
        Some(n) => format!("%{n}"),
        None => match m.get(i) {
            Some(d) => format!("inst {} ({})", i.index(), d.opcode()),
            None => format!("inst {}", i.index()),
        },
    }
}

/// The procs of a module (top-level `proc` definitions; any module may be asked, verified or
/// not: a handle outside the arena is no proc).
pub fn procs(m: &Module) -> Vec<Inst> {
    m.top_level()
        .iter()
        .copied()
        .filter(|&d| m.get(d).is_some_and(|d| d.opcode() == Opcode::PROC))
        .collect()
}

/// The seed's footnote 2: every `var` of proc `p` written by several `next`s gets one `next`
/// of a `coalesce` of their values, in reverse topological order (the last `next` that applies
/// wins). Each old `next %v, %x` with passive dependencies `D` becomes `%w = D coalesce %x`, a
/// value defined exactly when that `next` would have applied, and `next %v, coalesce(%w_k, …,
/// %w_1)` replaces them all, at the place of the last one. Returns how many vars were merged.
/// The proc must have an acyclic dependency graph; the result does too.
pub fn merge_nexts(m: &mut Module, p: Inst) -> Result<usize, MergeError> {
    let g = ProcGraph::new(m, p).map_err(MergeError::Cycle)?;
    let mut by_var: Vec<(usize, Vec<usize>)> = Vec::new();
    for (t, &i) in g.order.iter().enumerate() {
        if m.opcode(i) != Opcode::NEXT {
            continue;
        }
        let Some(v) = m.operands(i).first().and_then(|&v| g.pos(v)) else {
            continue;
        };
        if g.next_count.get(&v).copied().unwrap_or(0) < 2 {
            continue;
        }
        match by_var.iter_mut().find(|(var, _)| *var == v) {
            Some((_, ns)) => ns.push(t),
            None => by_var.push((v, vec![t])),
        }
    }
    for (v, nexts) in &by_var {
        let var = g.order[*v];
        let ty = m.ty(var);
        let mut ws = Vec::with_capacity(nexts.len());
        let last = *nexts.last().unwrap_or(&0);
        let last_inst = g.order[last];
        for &t in nexts {
            let n = g.order[t];
            let value = m.operands(n)[1];
            let w = m.new_inst(Opcode::COALESCE, ty, vec![value], Payload::None)?;
            // Move the passive dependencies (and any other decorations but the name).
            let decos: Vec<Inst> = m.decorations(n).to_vec();
            for d in decos {
                if matches!(m.opcode(d), Opcode::WHEN | Opcode::UNLESS) {
                    m.detach(d)?;
                    m.attach_decoration(w, d)?;
                }
            }
            insert_before(m, p, last_inst, w)?;
            ws.push(w);
        }
        ws.reverse();
        let merged = m.new_inst(Opcode::COALESCE, ty, ws, Payload::None)?;
        insert_before(m, p, last_inst, merged)?;
        let next = m.new_inst(Opcode::NEXT, None, vec![var, merged], Payload::None)?;
        insert_before(m, p, last_inst, next)?;
        for &t in nexts {
            m.remove(g.order[t])?;
        }
    }
    Ok(by_var.len())
}

fn insert_before(m: &mut Module, p: Inst, at: Inst, new: Inst) -> Result<(), CoreError> {
    let k = m.children(p).iter().position(|&c| c == at).unwrap_or(0);
    m.insert_child(p, k, new)
}

/// Why [`merge_nexts`] refused a proc.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// The proc's dependencies form a cycle.
    #[error("{}", .0.message)]
    Cycle(ProcGraphError),
    /// An edit failed (the proc was not well formed).
    #[error(transparent)]
    Core(#[from] CoreError),
}

#[cfg(test)]
mod tests;
