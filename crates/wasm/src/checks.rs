//! One bounds check for a run of memory accesses from one base address.
//!
//! Each access checks its own bounds (spec/wasm.md, "Linear memory"): `zext(a) + o + n > size`
//! branches to the function's "out of bounds memory access" trap block, and the access goes on
//! in a new block. Compiled C addresses arrays as `b + c` in i32 arithmetic with constant `c`,
//! so an unrolled loop body checks `b + 0`, `b + 8`, `b + 16`… one after the other: three
//! instructions and a branch each, for accesses whose bounds one comparison decides.
//!
//! A **run** is a chain of checks where each check's continuation holds nothing that can be
//! observed or trap (arithmetic without division, comparisons, conversions, `select`, `elem`,
//! loads) and ends with the next check of the same memory. Between the first check and the
//! last access of a run nothing is observable, so trapping at its start, or at any of its
//! checks, is the same to the program as trapping at the first access out of bounds: the same
//! message, no store done in between. The accesses of a run whose address is `b + c` (or `b`)
//! for one `b` defined before the run, `c` ≥ 0, form a **family**; a family of two or more gets
//! one check at the start of the run:
//!
//! ```text
//! zext(b) + max(c + o + n) > size      // (no access wraps around 2^32 if this is false)
//! ```
//!
//! and its members lose theirs. When the family check fails (an access is out of bounds, or an
//! address wraps around in i32 and lands inside), a cold block makes every member's own check,
//! exactly as before, and traps if one fails; otherwise the run goes on. So the trap happens
//! exactly when the original program's would, and the common path checks each family once.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{Builder, Conversion, CoreError, Inst, IntBinary, IntCC, Module, Op, Opcode};

use crate::cfg::{Cfg, Edge, Term};

/// At most this many checks make one run (the cold block repeats each).
const MAX_RUN: usize = 64;

/// A bounds check at the end of `block`: `zext(a) + k > size` (with `k = o + n`), branching
/// to `trap`, else to `cont`.
#[derive(Clone, Copy, Debug)]
struct Check {
    block: Inst,
    cond: Inst,
    end: Inst,
    /// The access's i32 address and the family it belongs to: `a = base + c`.
    base: Inst,
    c: u64,
    k: u64,
    size: Inst,
    trap: Inst,
    cont: Inst,
}

/// Merges the bounds checks of each run of `func` (whose blocks ending in a memory bounds
/// check are `checks`), before `cfg`'s terminators are written.
pub(crate) fn merge(
    b: &mut Builder<'_>,
    cfg: &mut Cfg,
    func: Inst,
    checks: &[Inst],
) -> Result<(), CoreError> {
    let parsed: HashMap<Inst, Check> = checks
        .iter()
        .filter_map(|&blk| parse(b.module(), cfg, blk).map(|c| (blk, c)))
        .collect();
    let mut claimed: HashSet<Inst> = HashSet::default();
    for &head in checks {
        if claimed.contains(&head) {
            continue;
        }
        let Some(&first) = parsed.get(&head) else {
            continue;
        };
        let run = run_from(b.module(), cfg, &parsed, first);
        claimed.extend(run.iter().map(|c| c.block));
        rewrite(b, cfg, func, &run)?;
    }
    Ok(())
}

/// The check ending `block`, if its terminator is one as `address` writes it.
fn parse(m: &Module, cfg: &Cfg, block: Inst) -> Option<Check> {
    let Some(Term::Br(cond, trap, cont)) = cfg.term(block) else {
        return None;
    };
    if !trap.args.is_empty() || !cont.args.is_empty() || m.opcode(*cond) != Opcode::ICMP {
        return None;
    }
    if IntCC::from_code(m.payload(*cond).as_int()?) != Some(IntCC::Ugt) {
        return None;
    }
    let &[end, size] = m.operands(*cond) else {
        return None;
    };
    let (ea, n) = plus_const(m, end)?;
    let (z, o) = match plus_const(m, ea) {
        Some((z, o)) => (z, o),
        None => (ea, 0),
    };
    if m.opcode(z).known()?.conversion() != Some(Conversion::Zext) {
        return None;
    }
    let a = *m.operands(z).first()?;
    let (base, c) = match plus_const(m, a) {
        // An i32 constant below 2^31: a negative one wraps, and starts a family of its own.
        Some((base, c)) if c < 1 << 31 => (base, c),
        _ => (a, 0),
    };
    Some(Check {
        block,
        cond: *cond,
        end,
        base,
        c,
        k: o.checked_add(n)?,
        size,
        trap: trap.target,
        cont: cont.target,
    })
}

/// `(x, c)` if `v` is `iadd x, c` (either order) with an integer constant `c`.
fn plus_const(m: &Module, v: Inst) -> Option<(Inst, u64)> {
    if m.opcode(v).known()?.int_binary() != Some(IntBinary::Iadd) {
        return None;
    }
    let &[x, y] = m.operands(v) else {
        return None;
    };
    let konst = |i: Inst| {
        (m.opcode(i) == Opcode::CONST_INT)
            .then(|| m.payload(i).as_int())
            .flatten()
    };
    match (konst(x), konst(y)) {
        (_, Some(c)) => Some((x, c)),
        (Some(c), None) => Some((y, c)),
        _ => None,
    }
}

/// The run starting with check `first`: each next check ends the previous one's continuation,
/// which has no other predecessor and holds nothing observable.
fn run_from(m: &Module, cfg: &Cfg, parsed: &HashMap<Inst, Check>, first: Check) -> Vec<Check> {
    let mut run = vec![first];
    let mut cur = first.cont;
    while run.len() < MAX_RUN {
        let Some(&next) = parsed.get(&cur) else {
            break;
        };
        if next.size != first.size
            || next.trap != first.trap
            || cfg.preds(cur).len() != 1
            || !m.children(cur).iter().all(|&i| unobservable(m, i))
        {
            break;
        }
        run.push(next);
        cur = next.cont;
    }
    run
}

/// Whether instruction `i` can neither trap nor be observed.
fn unobservable(m: &Module, i: Inst) -> bool {
    let Some(op) = m.opcode(i).known() else {
        return false;
    };
    if let Some(bin) = op.int_binary() {
        return !matches!(
            bin,
            IntBinary::Sdiv | IntBinary::Udiv | IntBinary::Srem | IntBinary::Urem
        );
    }
    op.float_binary().is_some()
        || op.int_unary().is_some()
        || op.float_unary().is_some()
        || op.conversion().is_some()
        || matches!(
            op,
            Op::Icmp | Op::Fcmp | Op::Select | Op::Elem | Op::Load | Op::Extract | Op::Insert
        )
}

/// Gives each family of two or more checks of `run` one check at the run's start, with the
/// cold block that makes the members' own checks when it fails.
fn rewrite(b: &mut Builder<'_>, cfg: &mut Cfg, func: Inst, run: &[Check]) -> Result<(), CoreError> {
    let Some(&head) = run.first() else {
        return Ok(());
    };
    // A base defined inside the run (a loaded index) is not known at its start.
    let inside: HashSet<Inst> = run.iter().skip(1).map(|c| c.block).collect();
    let mut families: Vec<(Inst, Vec<Check>)> = Vec::new();
    for &c in run {
        if b.module()
            .parent(c.base)
            .is_some_and(|p| inside.contains(&p))
        {
            continue;
        }
        match families.iter_mut().find(|(base, _)| *base == c.base) {
            Some((_, members)) => members.push(c),
            None => families.push((c.base, vec![c])),
        }
    }
    families.retain(|(_, members)| members.len() > 1);
    if families.is_empty() {
        return Ok(());
    }
    let i32t = b.module().ty_i32();
    let (go_on, _) = b.block(func, &[])?;
    let (cold, _) = b.block(func, &[])?;
    cfg.add_block(go_on);
    cfg.add_block(cold);

    // The family checks, one branch each, from the end of the run's first block.
    let head_term = cfg.take(head.block);
    let mut at = head.block;
    for (i, (base, members)) in families.iter().enumerate() {
        b.position_at_end(at);
        let reach = members.iter().map(|c| c.c + c.k).max().unwrap_or(0);
        let out = beyond(b, *base, reach, head.size);
        let next = if i + 1 == families.len() {
            go_on
        } else {
            let (blk, _) = b.block(func, &[])?;
            cfg.add_block(blk);
            blk
        };
        cfg.terminate(
            at,
            Term::Br(out, Edge::new(cold, &[]), Edge::new(next, &[])),
        );
        at = next;
    }

    // The cold block: each member's own check, in order.
    b.position_at_end(cold);
    let mut any = None;
    for (_, members) in &families {
        for c in members {
            let a = if c.c == 0 {
                c.base
            } else {
                let k = b.module().const_int(i32t, c.c)?;
                b.ins().iadd(c.base, k)
            };
            let out = beyond(b, a, c.k, head.size);
            any = Some(any.map_or(out, |a| b.ins().or(a, out)));
        }
    }
    let fails = any.unwrap_or_else(|| b.module().const_bool(false));
    cfg.terminate(
        cold,
        Term::Br(fails, Edge::new(head.trap, &[]), Edge::new(go_on, &[])),
    );

    // The members' own checks go. `go_on` goes on from the first block: to its check, or past
    // it if it is a member.
    let covered: HashSet<Inst> = families
        .iter()
        .flat_map(|(_, ms)| ms.iter().map(|c| c.block))
        .collect();
    let mut dead = Vec::new();
    for c in run.iter().filter(|c| covered.contains(&c.block)) {
        dead.extend([c.cond, c.end]);
        if c.block != head.block {
            cfg.take(c.block);
            cfg.terminate(c.block, Term::Jump(Edge::new(c.cont, &[])));
        }
    }
    let next = if covered.contains(&head.block) {
        Some(Term::Jump(Edge::new(head.cont, &[])))
    } else {
        head_term
    };
    if let Some(t) = next {
        cfg.terminate(go_on, t);
    }
    b.module().remove_all(&dead)
}

/// `zext(a) + k > size`, the `i1` that an access `k` bytes past `i32` address `a` is out of
/// bounds, written where `b` is.
fn beyond(b: &mut Builder<'_>, a: Inst, k: u64, size: Inst) -> Inst {
    let i64t = b.module().ty_i64();
    let z = b.ins().zext(i64t, a);
    let k = b.module().const_i64(k as i64);
    let end = b.ins().iadd(z, k);
    b.ins().icmp(IntCC::Ugt, end, size)
}
