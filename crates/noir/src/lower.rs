//! The lowering of one proc to a `func` (spec/ir.md, "NOIR", "Lowering to the block form").

use std::collections::HashMap;

use irkit_core::noir::{self, ProcGraph};
use irkit_core::{Inst, IntCC, Module, Opcode, Payload};

use crate::LowerError;

/// An `i1` flag known at lowering time, or computed at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bit {
    K(bool),
    V(Inst),
}

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

struct Emit<'m> {
    m: &'m mut Module,
    g: ProcGraph,
    f: Inst,
    block: Inst,
    i1: Inst,
    /// The function's entry parameter standing for each of the proc's parameters.
    params: HashMap<Inst, Inst>,
}

impl Emit<'_> {
    fn new_block(&mut self, param_tys: &[Inst]) -> Result<(Inst, Vec<Inst>), LowerError> {
        let b = self
            .m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)?;
        self.m.append_child(self.f, b)?;
        let mut ps = Vec::with_capacity(param_tys.len());
        for &t in param_tys {
            let p = self
                .m
                .new_inst(Opcode::PARAM, Some(t), vec![], Payload::None)?;
            self.m.append_child(b, p)?;
            ps.push(p);
        }
        Ok((b, ps))
    }

    fn emit(
        &mut self,
        op: Opcode,
        ty: Option<Inst>,
        ops: Vec<Inst>,
        payload: Payload,
    ) -> Result<Inst, LowerError> {
        let i = self.m.new_inst(op, ty, ops, payload)?;
        self.m.append_child(self.block, i)?;
        Ok(i)
    }

    fn bit_inst(&mut self, b: Bit) -> Result<Inst, LowerError> {
        match b {
            Bit::V(i) => Ok(i),
            Bit::K(k) => Ok(self.m.const_int(self.i1, u64::from(k))?),
        }
    }

    fn and(&mut self, a: Bit, b: Bit) -> Result<Bit, LowerError> {
        Ok(match (a, b) {
            (Bit::K(false), _) | (_, Bit::K(false)) => Bit::K(false),
            (Bit::K(true), x) | (x, Bit::K(true)) => x,
            (Bit::V(x), Bit::V(y)) if x == y => Bit::V(x),
            (Bit::V(x), Bit::V(y)) => {
                Bit::V(self.emit(Opcode::AND, Some(self.i1), vec![x, y], Payload::None)?)
            }
        })
    }

    fn or(&mut self, a: Bit, b: Bit) -> Result<Bit, LowerError> {
        Ok(match (a, b) {
            (Bit::K(true), _) | (_, Bit::K(true)) => Bit::K(true),
            (Bit::K(false), x) | (x, Bit::K(false)) => x,
            (Bit::V(x), Bit::V(y)) if x == y => Bit::V(x),
            (Bit::V(x), Bit::V(y)) => {
                Bit::V(self.emit(Opcode::OR, Some(self.i1), vec![x, y], Payload::None)?)
            }
        })
    }

    fn not(&mut self, a: Bit) -> Result<Bit, LowerError> {
        Ok(match a {
            Bit::K(k) => Bit::K(!k),
            Bit::V(x) => {
                let t = self.m.const_int(self.i1, 1)?;
                Bit::V(self.emit(Opcode::XOR, Some(self.i1), vec![x, t], Payload::None)?)
            }
        })
    }

    /// `c ? a : b` on flags.
    fn sel_bit(&mut self, c: Bit, a: Bit, b: Bit) -> Result<Bit, LowerError> {
        match c {
            Bit::K(true) => Ok(a),
            Bit::K(false) => Ok(b),
            Bit::V(_) if a == b => Ok(a),
            Bit::V(ci) => match (a, b) {
                (Bit::K(true), Bit::K(false)) => Ok(c),
                (Bit::K(false), Bit::K(true)) => self.not(c),
                _ => {
                    let (ai, bi) = (self.bit_inst(a)?, self.bit_inst(b)?);
                    let i1 = self.i1;
                    Ok(Bit::V(self.emit(
                        Opcode::SELECT,
                        Some(i1),
                        vec![ci, ai, bi],
                        Payload::None,
                    )?))
                }
            },
        }
    }

    /// `c ? a : b` on values of type `ty`.
    fn sel_val(&mut self, c: Bit, a: Inst, b: Inst, ty: Option<Inst>) -> Result<Inst, LowerError> {
        match c {
            Bit::K(true) => Ok(a),
            Bit::K(false) => Ok(b),
            Bit::V(_) if a == b => Ok(a),
            Bit::V(ci) => self.emit(Opcode::SELECT, ty, vec![ci, a, b], Payload::None),
        }
    }

    /// The current state of operand `v`: a body instruction's, a parameter (always defined),
    /// or a module-level value (always defined).
    fn operand(&self, cur: &[St], v: Inst) -> St {
        if let Some(p) = self.g.pos(v) {
            return cur[p];
        }
        St {
            val: Some(self.params.get(&v).copied().unwrap_or(v)),
            def: Bit::K(true),
        }
    }

    /// Executes body instruction `t` (its passive condition, then its operation), giving its
    /// new state; cues and pending assignments go to `fx` when `upd` holds.
    fn exec(&mut self, t: usize, cur: &[St], upd: Bit, fx: &mut Effects) -> Result<St, LowerError> {
        let x = self.g.order[t];
        let op = self.m.opcode(x);
        let ty = self.m.ty(x);
        let (when, unless) = noir::passive_deps(self.m, x);
        let mut pass = Bit::K(true);
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
                let e = self.operand(cur, ops[0]).def;
                let def = self.and(pass, e)?;
                if let Some(ep) = self.g.pos(ops[0]) {
                    let effect = self.and(upd, def)?;
                    let prev = fx.cued.get(&ep).copied().unwrap_or(Bit::K(false));
                    let now = self.or(prev, effect)?;
                    fx.cued.insert(ep, now);
                }
                St { val: None, def }
            }
            Opcode::NEXT => {
                let v = self.operand(cur, ops[1]);
                let def = self.and(pass, v.def)?;
                if let Some(vp) = self.g.pos(ops[0]) {
                    let effect = self.and(upd, def)?;
                    let val = v
                        .val
                        .ok_or_else(|| self.malformed(x, "a `next` of no value"))?;
                    fx.pend.insert(vp, (effect, val));
                }
                St { val: None, def }
            }
            Opcode::VAR => {
                let v = self.operand(cur, ops[0]);
                St {
                    val: v.val,
                    def: self.and(pass, v.def)?,
                }
            }
            Opcode::CASE => {
                let v = self.operand(cur, ops[0]);
                let val = v
                    .val
                    .ok_or_else(|| self.malformed(x, "a `case` of no value"))?;
                let mut hit = Bit::K(false);
                for &c in &ops[1..] {
                    let i1 = self.i1;
                    let eq = self.emit(
                        Opcode::ICMP,
                        Some(i1),
                        vec![val, c],
                        Payload::Int(IntCC::Eq as u64),
                    )?;
                    hit = self.or(hit, Bit::V(eq))?;
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
                let (val, def) = if op == Opcode::COALESCE {
                    let mut val = vals[vals.len() - 1];
                    let mut any = sts[sts.len() - 1].def;
                    for k in (0..vals.len() - 1).rev() {
                        val = self.sel_val(sts[k].def, vals[k], val, ty)?;
                        any = self.or(sts[k].def, any)?;
                    }
                    (val, any)
                } else {
                    let mut val = vals[0];
                    let mut one = sts[0].def;
                    let mut two = Bit::K(false);
                    for k in 1..vals.len() {
                        val = self.sel_val(sts[k].def, vals[k], val, ty)?;
                        let both = self.and(one, sts[k].def)?;
                        two = self.or(two, both)?;
                        one = self.or(one, sts[k].def)?;
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
                let first_read = ops.len() - reads;
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
                    if cond != Bit::K(true) {
                        let dty = self.m.value_type(new_ops[1]);
                        let Some(t) = dty else {
                            return Err(self.malformed(x, "a division without a type"));
                        };
                        let zero = self.m.const_int(t, 0)?;
                        let one = self.m.const_int(t, 1)?;
                        new_ops[0] = self.sel_val(cond, new_ops[0], zero, dty)?;
                        new_ops[1] = self.sel_val(cond, new_ops[1], one, dty)?;
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

/// Lowers proc `p` of `m` to a `func` with the same type, decorations and uses.
pub fn lower_proc(m: &mut Module, p: Inst) -> Result<ProcLowering, LowerError> {
    if m.get(p).map(|d| d.opcode()) != Some(Opcode::PROC) {
        return Err(LowerError::NotAProc(p.index()));
    }
    noir::merge_nexts(m, p).map_err(|e| LowerError::Proc {
        proc_: noir::describe(m, p),
        message: e.to_string(),
    })?;
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
            def: Bit::K(false)
        };
        n
    ];
    let mut fx = Effects {
        cued: HashMap::new(),
        pend: HashMap::new(),
    };
    for t in 0..n {
        cur[t] = e.exec(t, &cur, Bit::K(true), &mut fx)?;
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
    // Exit block: the result's value and flag.
    let exit_tys: Vec<Inst> = if ret_void { vec![] } else { vec![*ret, i1] };
    let (exit, exit_params) = e.new_block(&exit_tys)?;
    let entry_any = any_cued(&mut e, &fx, &events)?;
    let entry_next = next_states(&mut e, &cur, &fx, &carried)?;
    let entry_cur = cur.clone();
    let entry_fx = fx;
    // The loop, if any event can be cued. A carried flag that is true on entry and stays true
    // around the loop is not a parameter: assume so for every flag true on entry, emit the
    // loop, and emit it again without the assumptions the back edge contradicts.
    let mut known: Vec<bool> = entry_next.iter().map(|s| s.def == Bit::K(true)).collect();
    let mut lp = None;
    while has_cue && entry_any != Bit::K(false) {
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
        let mut k = 0;
        for (j, &t) in carried.iter().enumerate() {
            let val = entry_next[j].val.map(|_| {
                k += 1;
                lparams[k - 1]
            });
            let def = if known[j] {
                Bit::K(true)
            } else {
                k += 1;
                Bit::V(lparams[k - 1])
            };
            cur[t] = St { val, def };
        }
        let mut cued_in: HashMap<usize, Bit> = HashMap::new();
        for (j, &ev) in events.iter().enumerate() {
            let c = if single_event {
                Bit::K(true)
            } else {
                Bit::V(lparams[k + j])
            };
            cued_in.insert(ev, c);
        }
        let mut fx = Effects {
            cued: HashMap::new(),
            pend: HashMap::new(),
        };
        let mut upd = vec![Bit::K(false); n];
        for t in 0..n {
            if !e.g.dynamic[t] {
                continue;
            }
            let mut u = cued_in.get(&t).copied().unwrap_or(Bit::K(false));
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
            if known[j] && s.def != Bit::K(true) {
                known[j] = false;
                contradicted = true;
            }
        }
        if contradicted {
            e.m.remove(lb)?;
            continue;
        }
        branch(
            &mut e,
            &cur,
            &fx,
            &next,
            &known,
            &events,
            Some(lb),
            any,
            exit,
            result_operand,
        )?;
        lp = Some(lb);
        break;
    }
    e.block = entry;
    branch(
        &mut e,
        &entry_cur,
        &entry_fx,
        &entry_next,
        &known,
        &events,
        lp,
        entry_any,
        exit,
        result_operand,
    )?;
    // Exit: return the result if it is defined, else `unreachable`.
    e.block = exit;
    match exit_params.as_slice() {
        [v, d] => {
            let (ok, _) = e.new_block(&[])?;
            let (bad, _) = e.new_block(&[])?;
            e.block = exit;
            e.emit(Opcode::BR, None, vec![*d, ok, bad], Payload::None)?;
            e.block = ok;
            e.emit(Opcode::RET, None, vec![*v], Payload::None)?;
            e.block = bad;
            e.emit(Opcode::UNREACHABLE, None, vec![], Payload::None)?;
        }
        _ => {
            e.emit(Opcode::RET, None, vec![], Payload::None)?;
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
    let mut any = Bit::K(false);
    for ev in events {
        let c = fx.cued.get(ev).copied().unwrap_or(Bit::K(false));
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

/// The end of an iteration (in the current block): to the loop with the next states when an
/// event was cued (`any`), else to the exit with the result. Flags marked `known` are not
/// passed (they are true in the loop).
#[allow(clippy::too_many_arguments)]
fn branch(
    e: &mut Emit<'_>,
    cur: &[St],
    fx: &Effects,
    next: &[St],
    known: &[bool],
    events: &[usize],
    lp: Option<Inst>,
    any: Bit,
    exit: Inst,
    result: Option<Inst>,
) -> Result<(), LowerError> {
    let exit_args: Vec<Inst> = match result {
        Some(r) => {
            let s = e.operand(cur, r);
            let v = s
                .val
                .ok_or_else(|| e.malformed(r, "a result of no value"))?;
            vec![v, e.bit_inst(s.def)?]
        }
        None => vec![],
    };
    let Some(lp) = lp.filter(|_| any != Bit::K(false)) else {
        let mut ops = vec![exit];
        ops.extend(exit_args);
        e.emit(Opcode::JUMP, None, ops, Payload::None)?;
        return Ok(());
    };
    let mut loop_args = Vec::new();
    for (j, s) in next.iter().enumerate() {
        if let Some(v) = s.val {
            loop_args.push(v);
        }
        if !known[j] {
            loop_args.push(e.bit_inst(s.def)?);
        }
    }
    if events.len() != 1 {
        for ev in events {
            let c = fx.cued.get(ev).copied().unwrap_or(Bit::K(false));
            loop_args.push(e.bit_inst(c)?);
        }
    }
    match any {
        Bit::K(true) => {
            let mut ops = vec![lp];
            ops.extend(loop_args);
            e.emit(Opcode::JUMP, None, ops, Payload::None)?;
        }
        _ => {
            let c = e.bit_inst(any)?;
            let mut ops = vec![c, lp];
            ops.extend(loop_args);
            ops.push(exit);
            ops.extend(exit_args);
            e.emit(Opcode::BR, None, ops, Payload::None)?;
        }
    }
    Ok(())
}

/// Puts `f` where `p` was: same place among the module's children, same decorations, every
/// use of `p` now a use of `f`; `p` removed.
fn replace(m: &mut Module, p: Inst, f: Inst) -> Result<(), LowerError> {
    let root = m.root();
    let at = m.children(root).iter().position(|&c| c == p).unwrap_or(0);
    m.insert_child(root, at, f)?;
    for d in m.decorations(p).to_vec() {
        m.detach(d)?;
        m.attach_decoration(f, d)?;
    }
    let map: HashMap<Inst, Inst> = [(p, f)].into_iter().collect();
    m.replace_all_uses(&map)?;
    m.remove(p)?;
    Ok(())
}
