//! Inlining a function into its one call site (spec/linking.md, "Optimization passes"), as the
//! design document *Simple, chapter 18* does when a call site is a function's only use.
//!
//! A function `f` is inlined when all of these hold:
//!
//! * it is a `func` with a body, without `inline_never`, and no `stackalloc` in it (its
//!   objects would live until the caller returns instead of until `f` returns: a loop around
//!   the call would keep every one of them);
//! * nothing outside the linked program can see it: no `extern`, and no `export` the output
//!   keeps visible ([`Visible`]);
//! * its only use in the whole module is as the callee of one direct `call`, in another
//!   function (so `f` is not recursive, and its address is never taken);
//! * it does not bring a loop into a loop: if `f` has a loop (its own, or one of a function
//!   inlined into it), the call is not on a cycle of its caller's control flow
//!   (`loops_kept_out_of_loops`);
//! * it keeps its NaNs (`keeps_nans`): a caller decorated `relaxed_nan` takes only a
//!   function that is `relaxed_nan` too or makes no NaN (its canonical NaNs would become
//!   relaxed ones), checked on the bodies as they are when `f` is inlined.
//!
//! The call's block is split after the call: the rest (the terminator included) moves to a
//! new *continuation* block, with one parameter for the call's result. The call becomes a jump
//! to `f`'s entry block, every `ret v` of `f` a jump to the continuation passing `v`, and `f`'s
//! blocks move into the caller, after the call's block. `f`'s entry block then has one
//! predecessor, the call's block, which dominates it: its parameters are replaced by the
//! call's arguments everywhere and removed. Then `f`, which nothing uses any more, is removed.
//! The program computes the same: the same instructions run in the same order, with the same
//! values, minus a call and its return. The moved instructions keep their locations, put in
//! a new inlining scope of the caller (`crate::scopes`), so a debugger still shows `f`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{CoreError, Inst, Module, Op, Opcode, Payload};

/// Which exported definitions the output keeps visible to other programs.
pub struct Visible<'a> {
    /// A library link: every export.
    pub library: bool,
    /// The entry point's export name, and the names given with `--export`.
    pub names: &'a [String],
    /// The entry point.
    pub entry: &'a str,
}

impl Visible<'_> {
    /// Whether other programs can see definition `d` of `m` (its `extern` or kept export).
    pub fn sees(&self, m: &Module, d: Inst) -> bool {
        if m.find_decoration(d, Opcode::EXTERN).is_some() {
            return true;
        }
        m.decoration_strs(d, Opcode::EXPORT)
            .any(|name| self.library || name == self.entry || self.names.iter().any(|n| n == name))
    }
}

/// What [`inline_single_calls`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inlined {
    /// Functions inlined into their call site and removed.
    pub functions: u64,
}

/// How a top-level function is used.
#[derive(Default)]
struct Uses {
    /// Its direct call sites.
    calls: Vec<Inst>,
    /// Any other use (its address taken, a pin, an operand of a constant).
    other: bool,
}

/// Inlines every function that can be (see the module documentation) into its one call site.
/// `m` must verify; it still does afterwards.
pub fn inline_single_calls(m: &mut Module, visible: &Visible<'_>) -> Result<Inlined, CoreError> {
    let funcs = crate::rewrite::functions(m);
    // Each function's uses, found through a table indexed by instruction (no hashing per
    // operand: this visits every operand of the module).
    let mut slot: Vec<u32> = vec![u32::MAX; m.arena_len()];
    for (k, &f) in funcs.iter().enumerate() {
        slot[f.idx()] = k as u32;
    }
    let mut uses: Vec<Uses> = funcs.iter().map(|_| Uses::default()).collect();
    let mut note = |i: Inst, k: usize, o: Inst, is_call: bool| {
        let Some(u) = slot.get(o.idx()).and_then(|&s| uses.get_mut(s as usize)) else {
            return;
        };
        if k == 0 && is_call {
            u.calls.push(i);
        } else {
            u.other = true;
        }
    };
    for i in m.walk().into_iter().chain(m.pool().iter().copied()) {
        let is_call = m.opcode(i) == Opcode::CALL;
        for (k, &o) in m.operands(i).iter().enumerate() {
            note(i, k, o, is_call);
        }
    }
    let uses: HashMap<Inst, Uses> = funcs.iter().copied().zip(uses).collect();
    // The function each lone call site is in.
    let mut owner: HashMap<Inst, Inst> = HashMap::default();
    for u in uses.values() {
        if let [c] = u.calls.as_slice()
            && let Some(f) = m.enclosing_func(*c)
        {
            owner.insert(*c, f);
        }
    }
    // The functions that may be inlined, with their call site and the function it is in.
    let mut candidates: HashMap<Inst, (Inst, Inst)> = HashMap::default();
    for &f in &funcs {
        let Some(u) = uses.get(&f) else { continue };
        let [call] = u.calls.as_slice() else { continue };
        let Some(&g) = owner.get(call) else { continue };
        if u.other
            || g == f
            || m.entry_block(f).is_none()
            || m.opcode(g) != Opcode::FUNC
            || m.find_decoration(f, Opcode::INLINE_NEVER).is_some()
            || visible.sees(m, f)
            || has_stackalloc(m, f)
        {
            continue;
        }
        candidates.insert(f, (*call, g));
    }
    let kept_out = loops_kept_out_of_loops(m, &candidates);
    let mut subst: HashMap<Inst, Inst> = HashMap::default();
    let mut removed = Vec::new();
    let mut callers: Vec<Inst> = Vec::new();
    for f in funcs {
        let Some(&(call, _)) = candidates.get(&f) else {
            continue;
        };
        let Some(&g) = owner.get(&call) else { continue };
        if g == f || kept_out.contains(&f) || !keeps_nans(m, f, g) {
            continue;
        }
        // The calls `f` makes are now made by `g`.
        for b in m.blocks(f).collect::<Vec<_>>() {
            for &i in m.children(b) {
                if owner.contains_key(&i) {
                    owner.insert(i, g);
                }
            }
        }
        inline_call(m, call, f, &mut subst)?;
        removed.push(f);
        callers.push(g);
    }
    if !removed.is_empty() {
        // Each substituted value is local to the function it ended up in: a caller that was
        // itself inlined later is now part of its own caller, which is walked instead.
        callers.sort();
        callers.dedup();
        for g in callers {
            if m.is_live(g) && m.parent(g) == Some(m.root()) {
                crate::rewrite::replace_local_uses(m, g, &subst)?;
            }
        }
        // The call instructions, the parameters of the inlined entry blocks, the functions.
        let from: Vec<Inst> = subst.keys().copied().filter(|&i| m.is_live(i)).collect();
        m.remove_all(&from)?;
        m.remove_all(&removed)?;
    }
    Ok(Inlined {
        functions: removed.len() as u64,
    })
}

/// The candidates (function: its call site and the function the call is in) not inlined
/// because they would bring a loop into a loop: a function that has a loop (its own, or one
/// of a function inlined into it) whose call site lies on a cycle of its caller. Such a call
/// costs little next to the loop it starts, and inlining it nests the loop in the caller's:
/// Cranelift then hoists the inner loop's invariants out of the outer loop too, whose values
/// stay live across the inner loop and are spilled there (a bytecode interpreter called in a
/// loop ran 10 % more instructions inlined). Decided on the module as it is, callees before
/// their callers, in time linear in the functions' blocks.
fn loops_kept_out_of_loops(m: &Module, candidates: &HashMap<Inst, (Inst, Inst)>) -> HashSet<Inst> {
    let mut cyclic: HashMap<Inst, HashSet<Inst>> = HashMap::default();
    let mut children: HashMap<Inst, Vec<Inst>> = HashMap::default();
    for (&f, &(_, g)) in candidates {
        children.entry(g).or_default().push(f);
    }
    // Callees before callers: a post-order of the candidates' call tree, from its roots (a
    // candidate whose caller is none) and then any left (a cycle of single calls).
    let mut order: Vec<Inst> = Vec::new();
    let mut seen: HashSet<Inst> = HashSet::default();
    let mut starts: Vec<Inst> = candidates
        .iter()
        .filter(|(_, (_, g))| !candidates.contains_key(g))
        .map(|(&f, _)| f)
        .collect();
    starts.sort();
    let mut rest: Vec<Inst> = candidates.keys().copied().collect();
    rest.sort();
    starts.extend(rest);
    for start in starts {
        if !seen.insert(start) {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        while let Some((f, i)) = stack.last_mut() {
            let kids = children.get(f).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&k) = kids.get(*i) {
                *i += 1;
                if seen.insert(k) {
                    stack.push((k, 0));
                }
            } else {
                order.push(*f);
                stack.pop();
            }
        }
    }
    let mut has_loop: HashMap<Inst, bool> = HashMap::default();
    let mut kept_out = HashSet::default();
    for f in order {
        let own = !cyclic
            .entry(f)
            .or_insert_with(|| crate::loops::cyclic_blocks(m, f))
            .is_empty();
        let inherited = children.get(&f).is_some_and(|kids| {
            kids.iter()
                .any(|k| !kept_out.contains(k) && has_loop.get(k).copied().unwrap_or(false))
        });
        let looped = own || inherited;
        has_loop.insert(f, looped);
        let Some(&(call, g)) = candidates.get(&f) else {
            continue;
        };
        if looped
            && let Some(block) = m.parent(call)
            && cyclic
                .entry(g)
                .or_insert_with(|| crate::loops::cyclic_blocks(m, g))
                .contains(&block)
        {
            kept_out.insert(f);
        }
    }
    kept_out
}

/// Whether function `f`'s body computes the same inlined into function `g`: unless `g` is
/// decorated `relaxed_nan` and `f` is not, while `f` has an instruction that makes a NaN
/// (spec/ir.md, "Canonical NaN"; [`irkit_core::Op::makes_nan`]). A relaxed body inlined into
/// a function that is not stays right: a canonical NaN is one of the NaNs it may make.
pub(crate) fn keeps_nans(m: &Module, f: Inst, g: Inst) -> bool {
    let relaxed = |d| m.find_decoration(d, Opcode::RELAXED_NAN).is_some();
    !relaxed(g)
        || relaxed(f)
        || !m
            .walk_from(f)
            .into_iter()
            .any(|i| m.opcode(i).known().is_some_and(Op::makes_nan))
}

fn has_stackalloc(m: &Module, f: Inst) -> bool {
    m.walk_from(f)
        .into_iter()
        .any(|i| m.opcode(i) == Opcode::STACKALLOC)
}

/// Inlines `f` at `call` (its only call site): see the module documentation. The uses to
/// rewrite afterwards go into `subst` (the call's result to the continuation's parameter,
/// `f`'s entry parameters to the call's arguments); the call and those parameters are left
/// detached, for the caller to remove once the uses are rewritten.
pub(crate) fn inline_call(
    m: &mut Module,
    call: Inst,
    f: Inst,
    subst: &mut HashMap<Inst, Inst>,
) -> Result<(), CoreError> {
    let block = m.parent(call).ok_or(CoreError::BadHandle(call))?;
    let entry = m.entry_block(f).ok_or(CoreError::BadHandle(f))?;
    // The continuation: the call's result as a parameter, then what followed the call.
    let (cont, result) = crate::rewrite::split_after(m, call)?;
    if let Some(p) = result {
        subst.insert(call, p);
    }
    // The call's arguments stand for `f`'s parameters.
    let args: Vec<Inst> = m.operands(call).get(1..).unwrap_or(&[]).to_vec();
    for (p, a) in m.block_params(entry).to_vec().into_iter().zip(args) {
        subst.insert(p, a);
    }
    for p in m.block_params(entry).to_vec() {
        m.detach(p)?;
    }
    let jump = m.new_inst(Opcode::JUMP, None, vec![entry], Payload::None)?;
    m.detach(call)?;
    m.append_child(block, jump)?;
    // `f`'s blocks move into `g` after the call's block, each `ret` becoming a jump to the
    // continuation, which follows them, and each tail call a call and that jump.
    let blocks: Vec<Inst> = m.blocks(f).collect();
    let (g, at) = crate::rewrite::place(m, block)?;
    let mut pos = at + 1;
    // The continuation was placed right after the call's block: `f`'s blocks go before it.
    for &b in &blocks {
        if let Some(&term) = m.children(b).last()
            && m.opcode(term) == Opcode::RET
        {
            let mut ops = vec![cont];
            ops.extend(
                m.operands(term)
                    .iter()
                    .copied()
                    .take(usize::from(result.is_some())),
            );
            let j = m.new_inst(Opcode::JUMP, None, ops, Payload::None)?;
            crate::rewrite::move_decorations(m, term, j)?;
            m.remove(term)?;
            m.append_child(b, j)?;
        } else if let Some(&term) = m.children(b).last()
            && let Some(op) = match m.opcode(term) {
                Opcode::TAIL_CALL => Some(Opcode::CALL),
                Opcode::TAIL_CALL_INDIRECT => Some(Opcode::CALL_INDIRECT),
                _ => None,
            }
        {
            // A tail call ended `f`'s activation, whose result was the call's: inlined, it is
            // a call whose result goes to the continuation (the caller's frame holds the callee
            // as it held `f`, so nothing grows).
            let ty = result.and_then(|p| m.ty(p));
            // A copy: the module is changed while they are read.
            let operands = m.operands(term).to_vec();
            let c = m.new_inst(op, ty, operands, Payload::None)?;
            crate::rewrite::move_decorations(m, term, c)?;
            let mut ops = vec![cont];
            ops.extend(result.map(|_| c));
            let j = m.new_inst(Opcode::JUMP, None, ops, Payload::None)?;
            m.remove(term)?;
            m.append_child(b, c)?;
            m.append_child(b, j)?;
        }
    }
    // The copy's located instructions go in a scope of `g` for it (its `ret`s' locations moved
    // to their jumps above).
    crate::scopes::enter_scope(m, call, g, &blocks)?;
    if m.children(f).len() == blocks.len() {
        m.move_children(f, 0, g, pos)?;
    } else {
        // Not only blocks under `f` (a module that does not verify): one by one.
        for b in blocks {
            m.detach(b)?;
            m.insert_child(g, pos, b)?;
            pos += 1;
        }
    }
    Ok(())
}
