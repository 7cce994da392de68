//! One proc rewritten into the block form: a `func` with an entry block, one loop block and
//! the exit (spec/ir.md, "NOIR", "Lowering to the block form").

use std::collections::HashMap;

use irkit_core::noir::{self, ProcGraph};
use irkit_core::{Inst, IntCC, Module, Opcode, Payload};

use crate::LowerError;
use crate::emit::Emit;
use crate::flags::Bit;
use crate::replace::replace;

/// The state of a body instruction: its value (none for the void-valued ones) and whether it
/// is defined.
#[derive(Clone, Copy, Debug)]
struct St {
    val: Option<Inst>,
    def: Bit,
}

/// What one iteration produced besides the states: the events it cued, the assignments its
/// `next`s made.
struct Effects {
    cued: HashMap<usize, Bit>,
    pend: HashMap<usize, (Bit, Inst)>,
}

impl Emit<'_> {
    /// The current state of operand `v`: a body instruction's, a parameter (always defined),
    /// or a module-level value (always defined).
    fn operand(&self, cur: &[St], v: Inst) -> St {
        if let Some(p) = self.g.pos(v) {
            return cur[p];
        }
        St {
            val: Some(self.params.get(&v).copied().unwrap_or(v)),
            def: Bit::Known(true),
        }
    }

    /// Executes body instruction `t` (its passive condition, then its operation), giving its
    /// new state; cues and pending assignments go to `fx` when `upd` holds.
    fn exec(&mut self, t: usize, cur: &[St], upd: Bit, fx: &mut Effects) -> Result<St, LowerError> {
        let x = self.g.order[t];
        let op = self.m.opcode(x);
        let ty = self.m.ty(x);
        let (when, unless) = noir::passive_deps(self.m, x);
        let mut pass = Bit::Known(true);
        for w in when {
            let d = self.operand(cur, w).def;
            pass = self.and(pass, d)?;
        }
        for u in unless {
            let d = self.operand(cur, u).def;
            let nd = self.not(d)?;
            pass = self.and(pass, nd)?;
        }
        let ops: Vec<Inst> = self.m.operands(x).to_vec();
        let st = match op {
            Opcode::EVENT => St {
                val: None,
                def: pass,
            },
            Opcode::CUE => {
                let event = self.nth(x, &ops, 0)?;
                let e = self.operand(cur, event).def;
                let def = self.and(pass, e)?;
                if let Some(ep) = self.g.pos(event) {
                    let effect = self.and(upd, def)?;
                    let prev = fx.cued.get(&ep).copied().unwrap_or(Bit::Known(false));
                    let now = self.or(prev, effect)?;
                    fx.cued.insert(ep, now);
                }
                St { val: None, def }
            }
            Opcode::NEXT => {
                let v = self.operand(cur, self.nth(x, &ops, 1)?);
                let def = self.and(pass, v.def)?;
                if let Some(vp) = self.g.pos(self.nth(x, &ops, 0)?) {
                    let effect = self.and(upd, def)?;
                    let val = v
                        .val
                        .ok_or_else(|| self.malformed(x, "a `next` of no value"))?;
                    fx.pend.insert(vp, (effect, val));
                }
                St { val: None, def }
            }
            Opcode::VAR => {
                let v = self.operand(cur, self.nth(x, &ops, 0)?);
                St {
                    val: v.val,
                    def: self.and(pass, v.def)?,
                }
            }
            Opcode::CASE => {
                let v = self.operand(cur, self.nth(x, &ops, 0)?);
                let val = v
                    .val
                    .ok_or_else(|| self.malformed(x, "a `case` of no value"))?;
                let is_i1 = self.m.value_type(val) == Some(self.i1);
                let mut hit = Bit::Known(false);
                for &c in ops.get(1..).unwrap_or_default() {
                    // On `i1`, `x == true` is `x` and `x == false` is `NOT x`.
                    let eq = match (is_i1, self.const_bits(c)) {
                        (true, Some(b)) if b & 1 == 1 => Bit::Dynamic(val),
                        (true, Some(_)) => self.not(Bit::Dynamic(val))?,
                        _ => {
                            let i1 = self.i1;
                            Bit::Dynamic(self.emit(
                                Opcode::ICMP,
                                Some(i1),
                                vec![val, c],
                                Payload::Int(IntCC::Eq as u64),
                            )?)
                        }
                    };
                    hit = self.or(hit, eq)?;
                }
                let d = self.and(pass, v.def)?;
                St {
                    val: None,
                    def: self.and(d, hit)?,
                }
            }
            Opcode::PHI | Opcode::COALESCE => {
                let sts: Vec<St> = ops.iter().map(|&o| self.operand(cur, o)).collect();
                let vals: Vec<Inst> = sts
                    .iter()
                    .map(|s| {
                        s.val
                            .ok_or_else(|| self.malformed(x, "an operand of no value"))
                    })
                    .collect::<Result<_, _>>()?;
                let (Some(&first), Some(&last)) = (vals.first(), vals.last()) else {
                    return Err(self.malformed(x, "a merge of no operand"));
                };
                let (val, def) = if op == Opcode::COALESCE {
                    // The first defined operand: a select chain from the last one back.
                    let mut val = last;
                    let mut any = Bit::Known(false);
                    for (s, &v) in sts.iter().zip(&vals).rev() {
                        val = self.sel_val(s.def, v, val, ty)?;
                        any = self.or(s.def, any)?;
                    }
                    (val, any)
                } else {
                    // Exactly one defined operand: at least one and not two.
                    let mut val = first;
                    let mut one = Bit::Known(false);
                    let mut two = Bit::Known(false);
                    for (s, &v) in sts.iter().zip(&vals) {
                        val = self.sel_val(s.def, v, val, ty)?;
                        let both = self.and(one, s.def)?;
                        two = self.or(two, both)?;
                        one = self.or(one, s.def)?;
                    }
                    let not_two = self.not(two)?;
                    (val, self.and(one, not_two)?)
                };
                St {
                    val: Some(val),
                    def: self.and(pass, def)?,
                }
            }
            _ if noir::is_pure_core(op) => {
                let reads = noir::read_operands(self.m, x).len();
                let first_read = ops.len().saturating_sub(reads);
                let mut def = pass;
                let mut new_ops = Vec::with_capacity(ops.len());
                for (k, &o) in ops.iter().enumerate() {
                    if k < first_read {
                        new_ops.push(o);
                        continue;
                    }
                    let s = self.operand(cur, o);
                    def = self.and(def, s.def)?;
                    new_ops.push(
                        s.val
                            .ok_or_else(|| self.malformed(x, "an operand of no value"))?,
                    );
                }
                if matches!(
                    op,
                    Opcode::SDIV | Opcode::UDIV | Opcode::SREM | Opcode::UREM
                ) {
                    // A division the proc would not execute computes 0 / 1 instead, which
                    // never traps (not even as i1, where 1 is -1 and 1 / 1 is MIN / -1).
                    let cond = self.and(upd, def)?;
                    if cond != Bit::Known(true) {
                        let [lhs, rhs] = new_ops[..] else {
                            return Err(self.malformed(x, "a division without two operands"));
                        };
                        let dty = self.m.value_type(rhs);
                        let Some(t) = dty else {
                            return Err(self.malformed(x, "a division without a type"));
                        };
                        let zero = self.m.const_int(t, 0)?;
                        let one = self.m.const_int(t, 1)?;
                        new_ops = vec![
                            self.sel_val(cond, lhs, zero, dty)?,
                            self.sel_val(cond, rhs, one, dty)?,
                        ];
                    }
                }
                let payload = self.m.payload(x).clone();
                let v = self.emit(op, ty, new_ops, payload)?;
                St { val: Some(v), def }
            }
            _ => return Err(self.malformed(x, "not a NOIR or pure instruction")),
        };
        Ok(st)
    }

    /// The bits of an integer constant (`const_int`, `const_zero`), if `c` is one.
    fn const_bits(&self, c: Inst) -> Option<u64> {
        let d = self.m.get(c)?;
        match (d.opcode(), d.payload()) {
            (Opcode::CONST_INT, &Payload::Int(b)) => Some(b),
            (Opcode::CONST_ZERO, _) => Some(0),
            _ => None,
        }
    }

    /// Operand `k` of `x` (`ops`), or an error naming `x`.
    fn nth(&self, x: Inst, ops: &[Inst], k: usize) -> Result<Inst, LowerError> {
        ops.get(k)
            .copied()
            .ok_or_else(|| self.malformed(x, "an instruction with too few operands"))
    }

    /// An error about instruction `x` of the proc.
    fn malformed(&self, x: Inst, what: &str) -> LowerError {
        LowerError::Malformed {
            proc_: noir::describe(self.m, self.g.proc_),
            inst: noir::describe(self.m, x),
            what: what.to_owned(),
        }
    }
}

/// What lowering one proc produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcLowering {
    /// The proc's name (or `inst N`).
    pub name: String,
    /// The function that replaced it.
    pub func: Inst,
    /// Body instructions of the proc (parameters and `result` excluded).
    pub proc_insts: usize,
    /// Instructions of the function's blocks (parameters excluded, terminators included).
    pub func_insts: usize,
}

/// Lowers proc `p` of `m`, a module that verifies ([`crate::check`]), to a `func` with the same
/// type, decorations and uses.
pub(crate) fn lower_verified(m: &mut Module, p: Inst) -> Result<ProcLowering, LowerError> {
    let g = ProcGraph::new(m, p).map_err(|e| LowerError::Proc {
        proc_: noir::describe(m, p),
        message: e.message,
    })?;
    let name = noir::describe(m, p);
    let sig = m.ty(p).ok_or_else(|| LowerError::Proc {
        proc_: name.clone(),
        message: "a proc without a type".into(),
    })?;
    let sig_ops = m.operands(sig).to_vec();
    let (ret, param_tys) = sig_ops.split_first().ok_or_else(|| LowerError::Proc {
        proc_: name.clone(),
        message: "a proc whose type is not a fn type".into(),
    })?;
    let ret_void = m.opcode(*ret) == Opcode::VOID;
    let i1 = m.ty_i1();
    let f = m.new_inst(Opcode::FUNC, Some(sig), vec![], Payload::None)?;
    let proc_insts = g.order.len();
    let result_operand = g.result.and_then(|r| m.operands(r).first().copied());
    let old_params = g.params.clone();
    let mut e = Emit {
        m,
        g,
        f,
        block: f,
        i1,
        params: HashMap::new(),
    };
    let (entry, fparams) = e.new_block(param_tys)?;
    for (&old, &new) in old_params.iter().zip(&fparams) {
        e.params.insert(old, new);
    }
    e.block = entry;
    let n = e.g.order.len();
    let events: Vec<usize> = (0..n)
        .filter(|&t| e.m.opcode(e.g.order[t]) == Opcode::EVENT)
        .collect();
    let has_cue = e.g.order.iter().any(|&i| e.m.opcode(i) == Opcode::CUE);
    // Iteration 0: everything runs.
    let mut cur: Vec<St> = vec![
        St {
            val: None,
            def: Bit::Known(false)
        };
        n
    ];
    let mut fx = Effects {
        cued: HashMap::new(),
        pend: HashMap::new(),
    };
    for t in 0..n {
        cur[t] = e.exec(t, &cur, Bit::Known(true), &mut fx)?;
    }
    let single_event = events.len() == 1;
    // With a single event, every iteration after the first is that event's: what depends on
    // it runs in every one of them, so its previous state is never read.
    let mut always = vec![false; n];
    for t in 0..n {
        always[t] = single_event
            && e.g.dynamic[t]
            && (e.m.opcode(e.g.order[t]) == Opcode::EVENT
                || e.g.deps[t].iter().any(|&d| always[d]));
    }
    // Carried through the loop: dynamic instructions and vars written by a `next`, unless
    // their previous state is never read.
    let carried: Vec<usize> = (0..n)
        .filter(|&t| (e.g.dynamic[t] || e.g.next_of.contains_key(&t)) && !always[t])
        .collect();
    let entry_any = any_cued(&mut e, &fx, &events)?;
    let entry_next = next_states(&mut e, &cur, &fx, &carried)?;
    let entry_cur = cur.clone();
    let entry_fx = fx;
    // The loop, if any event can be cued. A carried flag that is true on entry and stays true
    // around the loop is not a parameter: assume so for every flag true on entry, emit the
    // loop, and emit it again without the assumptions the back edge contradicts.
    let mut known: Vec<bool> = entry_next
        .iter()
        .map(|s| s.def == Bit::Known(true))
        .collect();
    let mut lp: Option<LoopEnd> = None;
    while has_cue && entry_any != Bit::Known(false) {
        let mut tys = Vec::new();
        for (j, &t) in carried.iter().enumerate() {
            if entry_next[j].val.is_some() {
                let x = e.g.order[t];
                tys.push(e.m.ty(x).ok_or_else(|| e.malformed(x, "no type"))?);
            }
            if !known[j] {
                tys.push(i1);
            }
        }
        if !single_event {
            tys.extend(events.iter().map(|_| i1));
        }
        let (lb, lparams) = e.new_block(&tys)?;
        e.block = lb;
        let mut params = lparams.iter().copied();
        let mut param = |e: &Emit<'_>, x: Inst| {
            params
                .next()
                .ok_or_else(|| e.malformed(x, "a loop block parameter missing"))
        };
        for (j, &t) in carried.iter().enumerate() {
            let x = e.g.order[t];
            let val = match entry_next[j].val {
                Some(_) => Some(param(&e, x)?),
                None => None,
            };
            let def = if known[j] {
                Bit::Known(true)
            } else {
                Bit::Dynamic(param(&e, x)?)
            };
            cur[t] = St { val, def };
        }
        let mut cued_in: HashMap<usize, Bit> = HashMap::new();
        for &ev in &events {
            let c = if single_event {
                Bit::Known(true)
            } else {
                Bit::Dynamic(param(&e, e.g.order[ev])?)
            };
            cued_in.insert(ev, c);
        }
        let mut fx = Effects {
            cued: HashMap::new(),
            pend: HashMap::new(),
        };
        let mut upd = vec![Bit::Known(false); n];
        for t in 0..n {
            if !e.g.dynamic[t] {
                continue;
            }
            let mut u = cued_in.get(&t).copied().unwrap_or(Bit::Known(false));
            for d in e.g.deps[t].clone() {
                u = e.or(u, upd[d])?;
            }
            upd[t] = u;
            let new = e.exec(t, &cur, u, &mut fx)?;
            let old = cur[t];
            let val = match (new.val, old.val) {
                (Some(a), Some(b)) => Some(e.sel_val(u, a, b, e.m.ty(e.g.order[t]))?),
                (a, _) => a,
            };
            let def = e.sel_bit(u, new.def, old.def)?;
            cur[t] = St { val, def };
        }
        let any = any_cued(&mut e, &fx, &events)?;
        let next = next_states(&mut e, &cur, &fx, &carried)?;
        let mut contradicted = false;
        for (j, s) in next.iter().enumerate() {
            if known[j] && s.def != Bit::Known(true) {
                known[j] = false;
                contradicted = true;
            }
        }
        if contradicted {
            e.m.remove(lb)?;
            continue;
        }
        lp = Some(LoopEnd {
            block: lb,
            cur: cur.clone(),
            fx,
            next,
            any,
        });
        break;
    }
    // The exit, if an iteration can end without a cue: its shape follows from the result's
    // flag on the edges that reach it (known true: return it; known false: trap).
    let mut exit_defs = Vec::new();
    if lp.is_none() || entry_any != Bit::Known(true) {
        exit_defs.push(result_def(&e, &entry_cur, result_operand));
    }
    if let Some(l) = &lp
        && l.any != Bit::Known(true)
    {
        exit_defs.push(result_def(&e, &l.cur, result_operand));
    }
    let shape = if ret_void {
        ExitShape::Void
    } else if exit_defs.iter().all(|&d| d == Bit::Known(true)) {
        ExitShape::Value
    } else if exit_defs.iter().all(|&d| d == Bit::Known(false)) {
        ExitShape::Undefined
    } else {
        ExitShape::Checked
    };
    match &lp {
        // No loop: the entry ends the call itself.
        None => {
            e.block = entry;
            let args = exit_args(&mut e, shape, result_operand, &entry_cur)?;
            end_call(&mut e, shape, &args)?;
        }
        Some(l) => {
            let exit = if exit_defs.is_empty() {
                None
            } else {
                let tys = match shape {
                    ExitShape::Void | ExitShape::Undefined => vec![],
                    ExitShape::Value => vec![*ret],
                    ExitShape::Checked => vec![*ret, i1],
                };
                let (block, params) = e.new_block(&tys)?;
                Some(Exit {
                    block,
                    shape,
                    params,
                    result: result_operand,
                })
            };
            e.block = l.block;
            branch(
                &mut e,
                &l.cur,
                &l.fx,
                &l.next,
                &known,
                &events,
                l.block,
                l.any,
                exit.as_ref(),
            )?;
            e.block = entry;
            branch(
                &mut e,
                &entry_cur,
                &entry_fx,
                &entry_next,
                &known,
                &events,
                l.block,
                entry_any,
                exit.as_ref(),
            )?;
            if let Some(x) = &exit {
                e.block = x.block;
                end_call(&mut e, x.shape, &x.params)?;
            }
        }
    }
    let m = e.m;
    let func_insts = m
        .children(f)
        .iter()
        .flat_map(|&b| m.children(b).iter())
        .filter(|&&i| m.opcode(i) != Opcode::PARAM)
        .count();
    replace(m, p, f)?;
    Ok(ProcLowering {
        name,
        func: f,
        proc_insts,
        func_insts,
    })
}

/// Whether any event was cued during an iteration.
fn any_cued(e: &mut Emit<'_>, fx: &Effects, events: &[usize]) -> Result<Bit, LowerError> {
    let mut any = Bit::Known(false);
    for ev in events {
        let c = fx.cued.get(ev).copied().unwrap_or(Bit::Known(false));
        any = e.or(any, c)?;
    }
    Ok(any)
}

/// The states of the carried instructions the next iteration starts from: pending
/// assignments applied (emitted in the current block).
fn next_states(
    e: &mut Emit<'_>,
    cur: &[St],
    fx: &Effects,
    carried: &[usize],
) -> Result<Vec<St>, LowerError> {
    let mut out = Vec::with_capacity(carried.len());
    for &t in carried {
        let mut s = cur[t];
        if let Some(&(pend, pv)) = fx.pend.get(&t) {
            let ty = e.m.ty(e.g.order[t]);
            s.val = match s.val {
                Some(old) => Some(e.sel_val(pend, pv, old, ty)?),
                None => None,
            };
            s.def = e.or(pend, s.def)?;
        }
        out.push(s);
    }
    Ok(out)
}

/// The loop block as emitted, and the end of its iteration (before its terminator).
struct LoopEnd {
    block: Inst,
    cur: Vec<St>,
    fx: Effects,
    next: Vec<St>,
    any: Bit,
}

/// What the exit block receives and does, from the result's flag on the edges reaching it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExitShape {
    /// A `void` proc: no parameter, `ret`.
    Void,
    /// The result is defined on every edge: its value, `ret` it.
    Value,
    /// The result is undefined on every edge: no parameter, `unreachable`.
    Undefined,
    /// Value and flag: `ret` the value if the flag holds, else `unreachable`.
    Checked,
}

/// The exit block.
struct Exit {
    block: Inst,
    shape: ExitShape,
    params: Vec<Inst>,
    /// The operand of the proc's `result`.
    result: Option<Inst>,
}

/// The result's flag in state `cur` (true for a `void` proc).
fn result_def(e: &Emit<'_>, cur: &[St], result: Option<Inst>) -> Bit {
    result.map_or(Bit::Known(true), |r| e.operand(cur, r).def)
}

/// The values the exit needs, in state `cur`: the result's value if it is returned, and its
/// flag if that is checked at run time.
fn exit_args(
    e: &mut Emit<'_>,
    shape: ExitShape,
    result: Option<Inst>,
    cur: &[St],
) -> Result<Vec<Inst>, LowerError> {
    match (shape, result) {
        (ExitShape::Void | ExitShape::Undefined, _) => Ok(vec![]),
        (ExitShape::Value | ExitShape::Checked, Some(r)) => {
            let s = e.operand(cur, r);
            let v = s
                .val
                .ok_or_else(|| e.malformed(r, "a result of no value"))?;
            if shape == ExitShape::Checked {
                Ok(vec![v, e.bit_inst(s.def)?])
            } else {
                Ok(vec![v])
            }
        }
        (_, None) => Err(e.malformed(e.g.proc_, "a result without operand")),
    }
}

/// Ends the call (in the current block), given [`exit_args`]: `ret` the result if it is
/// defined, else `unreachable`.
fn end_call(e: &mut Emit<'_>, shape: ExitShape, args: &[Inst]) -> Result<(), LowerError> {
    match (shape, args) {
        (ExitShape::Void, _) => {
            e.emit(Opcode::RET, None, vec![], Payload::None)?;
        }
        (ExitShape::Undefined, _) => {
            e.emit(Opcode::UNREACHABLE, None, vec![], Payload::None)?;
        }
        (ExitShape::Value, &[v]) => {
            e.emit(Opcode::RET, None, vec![v], Payload::None)?;
        }
        (ExitShape::Checked, &[v, d]) => {
            let here = e.block;
            let (ok, _) = e.new_block(&[])?;
            let (bad, _) = e.new_block(&[])?;
            e.block = here;
            e.emit(Opcode::BR, None, vec![d, ok, bad], Payload::None)?;
            e.block = ok;
            e.emit(Opcode::RET, None, vec![v], Payload::None)?;
            e.block = bad;
            e.emit(Opcode::UNREACHABLE, None, vec![], Payload::None)?;
        }
        _ => return Err(e.malformed(e.g.proc_, "an exit of the wrong shape")),
    }
    Ok(())
}

/// The end of an iteration (in the current block) when there is a loop: to the loop with the
/// next states when an event was cued (`any`), else to the exit with the result. Flags marked
/// `known` are not passed (they are true in the loop).
#[allow(clippy::too_many_arguments)]
fn branch(
    e: &mut Emit<'_>,
    cur: &[St],
    fx: &Effects,
    next: &[St],
    known: &[bool],
    events: &[usize],
    lp: Inst,
    any: Bit,
    exit: Option<&Exit>,
) -> Result<(), LowerError> {
    let exit = match exit {
        Some(x) if any != Bit::Known(true) => {
            Some((x.block, exit_args(e, x.shape, x.result, cur)?))
        }
        None if any != Bit::Known(true) => {
            return Err(e.malformed(e.g.proc_, "an exit edge without exit"));
        }
        _ => None,
    };
    if any == Bit::Known(false) {
        let Some((block, args)) = exit else {
            return Err(e.malformed(e.g.proc_, "an iteration that neither loops nor exits"));
        };
        let mut ops = vec![block];
        ops.extend(args);
        e.emit(Opcode::JUMP, None, ops, Payload::None)?;
        return Ok(());
    }
    let mut loop_args = Vec::new();
    for (j, s) in next.iter().enumerate() {
        if let Some(v) = s.val {
            loop_args.push(v);
        }
        if !known.get(j).copied().unwrap_or(false) {
            loop_args.push(e.bit_inst(s.def)?);
        }
    }
    if events.len() != 1 {
        for ev in events {
            let c = fx.cued.get(ev).copied().unwrap_or(Bit::Known(false));
            loop_args.push(e.bit_inst(c)?);
        }
    }
    let mut ops = Vec::with_capacity(loop_args.len() + 4);
    match exit {
        None => ops.push(lp),
        Some(_) => ops.extend([e.bit_inst(any)?, lp]),
    }
    ops.extend(loop_args);
    let op = match exit {
        None => Opcode::JUMP,
        Some((block, args)) => {
            ops.push(block);
            ops.extend(args);
            Opcode::BR
        }
    };
    e.emit(op, None, ops, Payload::None)?;
    Ok(())
}
