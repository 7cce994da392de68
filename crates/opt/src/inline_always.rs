//! Inlining a copy of an `inline_always` function at each of its call sites (spec/linking.md,
//! "Optimization passes"; NIR's `alwaysinline`).
//!
//! A function `f` is copied into its direct call sites when:
//!
//! * it is a `func` with a body, decorated `inline_always` and not `inline_never` (or decorated
//!   `inline_hint`, which encourages inlining, and small: at most [`HINT_SIZE`] instructions,
//!   decorations and parameters included);
//! * it has no `stackalloc` (each object would live until the caller returns);
//! * it is not recursive: no chain of direct calls leads from `f` back to `f` (a copy of a
//!   recursive body would hold the call again, and copying would not end);
//! * at a call site in a `relaxed_nan` function, it is `relaxed_nan` too or makes no NaN
//!   (`crate::inline::keeps_nans`).
//!
//! Each call `call @f(args)` in another function gets its own copy of `f`'s blocks, inlined as
//! [`crate::inline`] inlines a function into its only call site. Functions are visited callees
//! first (post-order of the direct call graph), so a copy already holds the copies of what `f`
//! calls. `f` itself stays; if nothing uses it any more and the output does not keep it visible,
//! the removal of unreferenced definitions drops it.
//!
//! Copies grow the program, so the instructions they add are bounded: at most
//! [`growth_budget`] over the whole pass; call sites past the budget keep their call (the hint
//! is obeyed "where possible", as the IR says). The order of call sites is the module's, so
//! which ones are inlined does not depend on anything else.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{CoreError, Inst, Module, Opcode};

/// The most instructions (its own included) an `inline_hint` function may have to be copied.
pub const HINT_SIZE: usize = 32;

/// What [`inline_always`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InlinedCopies {
    /// Call sites that received a copy of their callee.
    pub calls: u64,
    /// Instructions the copies added.
    pub instructions: u64,
}

/// The most instructions the copies of one pass may add: as many as the module's functions
/// hold, and at least 2^16.
pub fn growth_budget(m: &Module) -> u64 {
    let held: u64 = crate::rewrite::functions(m)
        .into_iter()
        .map(|f| m.walk_from(f).len() as u64)
        .sum();
    held.max(1 << 16)
}

/// Inlines a copy of every `inline_always` function that can be (see the module
/// documentation) at each of its direct call sites, adding at most `budget` instructions.
/// `m` must verify; it still does afterwards.
pub fn inline_always(m: &mut Module, budget: u64) -> Result<InlinedCopies, CoreError> {
    let funcs = crate::rewrite::functions(m);
    let hinted = |f: &Inst| {
        m.find_decoration(*f, Opcode::INLINE_ALWAYS).is_some()
            || m.find_decoration(*f, Opcode::INLINE_HINT).is_some()
    };
    if !funcs.iter().any(hinted) {
        return Ok(InlinedCopies::default());
    }
    let calls = direct_calls(m, &funcs);
    let recursive = recursive(&funcs, &calls);
    let candidate = |m: &Module, f: Inst| {
        let always = m.find_decoration(f, Opcode::INLINE_ALWAYS).is_some();
        let hinted = m.find_decoration(f, Opcode::INLINE_HINT).is_some();
        if !(always || hinted)
            || m.find_decoration(f, Opcode::INLINE_NEVER).is_some()
            || m.entry_block(f).is_none()
            || recursive.contains(&f)
        {
            return false;
        }
        let body = m.walk_from(f);
        (always || body.len() <= HINT_SIZE)
            && !body.into_iter().any(|i| m.opcode(i) == Opcode::STACKALLOC)
    };
    let candidates: HashSet<Inst> = funcs.iter().copied().filter(|&f| candidate(m, f)).collect();
    let mut done = InlinedCopies::default();
    if candidates.is_empty() {
        return Ok(done);
    }
    let mut sizes: HashMap<Inst, u64> = HashMap::default();
    for g in post_order(&funcs, &calls) {
        let sites: Vec<Inst> = calls[&g]
            .iter()
            .map(|&(site, _)| site)
            .filter(|&site| {
                m.operands(site).first().is_some_and(|&f| {
                    f != g && candidates.contains(&f) && crate::inline::keeps_nans(m, f, g)
                })
            })
            .collect();
        if sites.is_empty() || m.opcode(g) != Opcode::FUNC {
            continue;
        }
        let mut subst: HashMap<Inst, Inst> = HashMap::default();
        let mut dead: Vec<Inst> = Vec::new();
        for site in sites {
            let f = m.operands(site)[0];
            let size = *sizes
                .entry(f)
                .or_insert_with(|| m.walk_from(f).len() as u64);
            if done.instructions + size > budget {
                continue;
            }
            let copy = crate::rewrite::clone_body(m, f)?;
            crate::inline::inline_call(m, site, copy, &mut subst)?;
            dead.push(copy);
            done.calls += 1;
            done.instructions += size;
        }
        crate::rewrite::replace_local_uses(m, g, &subst)?;
        let from: Vec<Inst> = subst.keys().copied().filter(|&i| m.is_live(i)).collect();
        m.remove_all(&from)?;
        m.remove_all(&dead)?;
    }
    Ok(done)
}

/// For each function, its direct calls of top-level functions, in body order: (call, callee).
fn direct_calls(m: &Module, funcs: &[Inst]) -> HashMap<Inst, Vec<(Inst, Inst)>> {
    let root = m.root();
    funcs
        .iter()
        .map(|&g| {
            let sites = m
                .blocks(g)
                .flat_map(|b| m.children(b).iter().copied())
                .filter(|&i| m.opcode(i) == Opcode::CALL)
                .filter_map(|i| {
                    let &f = m.operands(i).first()?;
                    (m.opcode(f) == Opcode::FUNC && m.parent(f) == Some(root)).then_some((i, f))
                })
                .collect();
            (g, sites)
        })
        .collect()
}

/// The functions on a cycle of direct calls (a strongly connected component of more than one
/// function, or one calling itself), by Tarjan's algorithm without recursion.
fn recursive(funcs: &[Inst], calls: &HashMap<Inst, Vec<(Inst, Inst)>>) -> HashSet<Inst> {
    let succ = |f: Inst| -> Vec<Inst> {
        calls
            .get(&f)
            .map(|c| {
                c.iter()
                    .map(|&(_, t)| t)
                    .filter(|t| calls.contains_key(t))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut index: HashMap<Inst, (usize, usize)> = HashMap::default(); // (index, lowlink)
    let mut on_stack: HashSet<Inst> = HashSet::default();
    let mut stack: Vec<Inst> = Vec::new();
    let mut out: HashSet<Inst> = HashSet::default();
    let mut next = 0;
    for &start in funcs {
        if index.contains_key(&start) {
            continue;
        }
        // Frames: (function, its successors, how many were visited).
        let mut frames: Vec<(Inst, Vec<Inst>, usize)> = Vec::new();
        index.insert(start, (next, next));
        next += 1;
        stack.push(start);
        on_stack.insert(start);
        frames.push((start, succ(start), 0));
        while let Some((v, succs, k)) = frames.last_mut() {
            let v = *v;
            if let Some(&w) = succs.get(*k) {
                *k += 1;
                if w == v {
                    out.insert(v);
                }
                match index.get(&w) {
                    None => {
                        index.insert(w, (next, next));
                        next += 1;
                        stack.push(w);
                        on_stack.insert(w);
                        frames.push((w, succ(w), 0));
                    }
                    Some(&(wi, _)) if on_stack.contains(&w) => {
                        let e = index.get_mut(&v).expect("visited");
                        e.1 = e.1.min(wi);
                    }
                    Some(_) => {}
                }
                continue;
            }
            frames.pop();
            let (vi, vl) = index[&v];
            if let Some((parent, _, _)) = frames.last() {
                let e = index.get_mut(parent).expect("visited");
                e.1 = e.1.min(vl);
            }
            if vi == vl {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(&w);
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    out.extend(component);
                }
            }
        }
    }
    out
}

/// The functions in post-order of the direct call graph (callees before callers, as far as
/// cycles allow), starting from each function in module order.
fn post_order(funcs: &[Inst], calls: &HashMap<Inst, Vec<(Inst, Inst)>>) -> Vec<Inst> {
    let mut seen: HashSet<Inst> = HashSet::default();
    let mut out = Vec::with_capacity(funcs.len());
    for &start in funcs {
        if !seen.insert(start) {
            continue;
        }
        let mut frames: Vec<(Inst, usize)> = vec![(start, 0)];
        while let Some((v, k)) = frames.last_mut() {
            let v = *v;
            let next = calls.get(&v).and_then(|c| c.get(*k)).map(|&(_, t)| t);
            match next {
                Some(w) => {
                    *k += 1;
                    if calls.contains_key(&w) && seen.insert(w) {
                        frames.push((w, 0));
                    }
                }
                None => {
                    frames.pop();
                    out.push(v);
                }
            }
        }
    }
    out
}
