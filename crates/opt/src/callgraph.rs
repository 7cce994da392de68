//! The call graph of a linked program (spec/linking.md, "Optimization passes"): for every
//! direct call its callee, for every `call_indirect` the functions it may reach.
//!
//! A function address is a *set* of possible functions (the design document *Simple, chapter
//! 18*: each call site is linked to the functions it may call). An indirect call may reach any
//! function whose address is taken (used as a value anywhere in the module, or visible to
//! other programs, which may hand its address back) and whose type is the call's signature.
//! That set is narrowed by what the callee operand is built from, within its function:
//!
//! * a `func` definition used as a value: that function;
//! * `select %c, %a, %b`: the sets of `%a` and `%b` together;
//! * a `load` of a `ptr` from a constant global table (a `global_const`, through `elem`): the
//!   functions the initial value holds at every offset the load may read without trapping,
//!   when all of them are functions (`tables.rs`);
//! * a block parameter (not the entry block's: those are the function's arguments): the sets
//!   of the arguments every edge into the block passes for it, together;
//! * anything else (an argument, another load, a call's result, `null`, an integer turned into
//!   a pointer, …): unknown, and the call may reach every address-taken function of its
//!   signature.
//!
//! * on the false edge of `br (icmp eq %fp, @g)`, when that is the only way into the call's
//!   block: not `g`.
//!
//! Loops make the parameters' sets depend on each other: they are solved together, growing
//! from empty until nothing changes (a set only grows, and one larger than [`MAX_TARGETS`] is
//! unknown, so this ends).

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{Inst, IntCC, Module, Opcode};

use crate::inline::Visible;
use crate::tables::Tables;

/// The most functions a set holds before it counts as unknown.
pub const MAX_TARGETS: usize = 16;

/// The most values one call's set may be computed from before it counts as unknown.
const MAX_NODES: usize = 4096;

/// One call site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// The function the call is in.
    pub caller: Inst,
    /// The `call` or `call_indirect`.
    pub call: Inst,
    /// What it may call.
    pub callees: Callees,
}

/// What a call site may call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Callees {
    /// A direct call of this function.
    Direct(Inst),
    /// An indirect call.
    Indirect {
        /// The functions of the call's signature it may call, in module order.
        targets: Vec<Inst>,
        /// Whether the callee operand can only be one of `targets`: no `null`, no function
        /// of another signature, nothing from outside the analysis. When it is not, the call
        /// may also trap (or, in native code, reach what the semantics leave undefined).
        only: bool,
    },
}

/// The call sites of every function of a module, in module order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallGraph {
    /// Every `call` and `call_indirect` in a function's blocks.
    pub sites: Vec<CallSite>,
}

impl CallGraph {
    /// The call graph of `m` (which must verify), whose output keeps `visible` visible.
    pub fn of(m: &Module, visible: &Visible<'_>) -> CallGraph {
        let funcs = crate::rewrite::functions(m);
        let order: HashMap<Inst, usize> = funcs.iter().enumerate().map(|(k, &f)| (f, k)).collect();
        // Needed only for a callee the analysis cannot follow.
        let taken = std::cell::OnceCell::new();
        let tables = Tables::new(m);
        let mut sites = Vec::new();
        for &f in &funcs {
            let calls: Vec<Inst> = m
                .blocks(f)
                .flat_map(|b| m.children(b).iter().copied())
                .filter(|&i| matches!(m.opcode(i), Opcode::CALL | Opcode::CALL_INDIRECT))
                .collect();
            if calls.is_empty() {
                continue;
            }
            let mut edges = None;
            for call in calls {
                let ops = m.operands(call);
                if m.opcode(call) == Opcode::CALL {
                    if let Some(&g) = ops.first() {
                        sites.push(CallSite {
                            caller: f,
                            call,
                            callees: Callees::Direct(g),
                        });
                    }
                    continue;
                }
                let (Some(&sig), Some(&callee)) = (ops.first(), ops.get(1)) else {
                    continue;
                };
                let sig = m.resolve(sig);
                let fits = |g: &Inst| m.ty(*g).map(|t| m.resolve(t)) == Some(sig);
                let edges = edges.get_or_insert_with(|| Incoming::of(m, f));
                let (mut targets, only): (Vec<Inst>, bool) =
                    match targets(m, &tables, edges, callee) {
                        Targets::Known(set) => {
                            let all = set.len();
                            let fit: Vec<Inst> = set.into_iter().filter(fits).collect();
                            let only = fit.len() == all;
                            (fit, only)
                        }
                        Targets::Unknown => {
                            let taken = taken.get_or_init(|| address_taken(m, &funcs, visible));
                            (taken.iter().copied().filter(fits).collect(), false)
                        }
                    };
                if let Some(g) = edges.ruled_out(m, call, callee) {
                    targets.retain(|&t| t != g);
                }
                targets.sort_by_key(|g| order.get(g).copied().unwrap_or(usize::MAX));
                sites.push(CallSite {
                    caller: f,
                    call,
                    callees: Callees::Indirect { targets, only },
                });
            }
        }
        CallGraph { sites }
    }
}

/// The functions whose address is taken: used as a value anywhere in the module (not as a
/// direct call's callee), or visible to other programs.
fn address_taken(m: &Module, funcs: &[Inst], visible: &Visible<'_>) -> Vec<Inst> {
    let is_func: HashSet<Inst> = funcs.iter().copied().collect();
    let mut taken: HashSet<Inst> = HashSet::default();
    for i in m.walk().into_iter().chain(m.pool().iter().copied()) {
        let skip_callee = m.opcode(i) == Opcode::CALL;
        for (k, o) in m.operands(i).iter().enumerate() {
            if !(skip_callee && k == 0) && is_func.contains(o) {
                taken.insert(*o);
            }
        }
    }
    funcs
        .iter()
        .copied()
        .filter(|f| taken.contains(f) || visible.sees(m, *f))
        .collect()
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

/// For each block parameter of a function, the values its incoming edges pass.
struct Incoming {
    args: HashMap<Inst, Vec<Inst>>,
    /// For each block, the edges into it: (terminator, index of the edge in it).
    preds: HashMap<Inst, Vec<(Inst, usize)>>,
    entry: Option<Inst>,
}

impl Incoming {
    fn of(m: &Module, f: Inst) -> Incoming {
        let mut args: HashMap<Inst, Vec<Inst>> = HashMap::default();
        let mut preds: HashMap<Inst, Vec<(Inst, usize)>> = HashMap::default();
        for b in m.blocks(f) {
            let Some(&term) = m.children(b).last() else {
                continue;
            };
            if !m.opcode(term).is_terminator() {
                continue;
            }
            let ops = m.operands(term);
            let (_, edges) = irkit_core::edges::edges_of(m, term);
            for (k, e) in edges.into_iter().enumerate() {
                preds.entry(e.target).or_default().push((term, k));
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
            preds,
            entry: m.entry_block(f),
        }
    }

    /// The function `callee` cannot be at `call`: where the call's block is entered only by
    /// the false edge of `br (icmp eq %callee, @g)` (a guard [`crate::devirtualize()`] made, or
    /// the same test written by hand), `@g`.
    fn ruled_out(&self, m: &Module, call: Inst, callee: Inst) -> Option<Inst> {
        let block = m.parent(call)?;
        let [(term, 1)] = self.preds.get(&block)?.as_slice() else {
            return None;
        };
        if m.opcode(*term) != Opcode::BR {
            return None;
        }
        let cond = *m.operands(*term).first()?;
        if m.opcode(cond) != Opcode::ICMP || m.payload(cond).as_int() != Some(IntCC::Eq.code()) {
            return None;
        }
        let g = match m.operands(cond) {
            [a, b] if *a == callee => *b,
            [a, b] if *b == callee => *a,
            _ => return None,
        };
        (m.opcode(g) == Opcode::FUNC && m.parent(g) == Some(m.root())).then_some(g)
    }
}

/// The possible values of function address `v`.
fn targets(m: &Module, tables: &Tables<'_>, inc: &Incoming, v: Inst) -> Targets {
    // The values `v` is built from, through selects and block parameters: solved together.
    let mut nodes: Vec<Inst> = vec![v];
    let mut index: HashMap<Inst, usize> = [(v, 0)].into_iter().collect();
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
