//! NOIR procs (spec/ir.md, "NOIR: procs without blocks"): random procs that the verifier
//! accepts, that end after a bounded number of iterations, and whose results (a value or a
//! trap) are deterministic.
//!
//! ## What a generated proc holds
//!
//! Integer parameters and an integer result; body instructions drawn from the NOIR opcodes
//! (`event`, `cue`, `var`, `next`, `case` with 1–3 values, `phi` and `coalesce` over 1–3
//! operands) and pure core operations (integer arithmetic, rarely a division that may trap,
//! `icmp`, `select`, integer conversions, and `f64` arithmetic reached through `sitofp` and
//! left through `fcmp` or a saturating `fptosi`/`fptoui`); passive dependencies (`when`,
//! `unless`, 1–2 operands each) on any body instruction, `event`, `var`, `next` and `cue`
//! included; zero, one or two loops (two in sequence or nested), each on its own event;
//! accumulator `var`s whose `next`s compute anything, conditionally or not; a `result` naming
//! any value of the return type (undefined at the end sometimes: the call then traps with
//! `unreachable executed`, as the spec says). The body is created in a topological order (an
//! instruction only names instructions created before it) and attached in that order or,
//! sometimes, shuffled.
//!
//! Every loop is a counter loop whose counter decreases to 0: [`loops`] builds them and
//! says why every generated proc ends.

use std::collections::HashMap;

use irkit_core::{Inst, Opcode, Payload};

use super::{Func, Gen, Iface, Sig};
use crate::ty::Ty;

mod loops;

/// Integer operations that never trap.
const SAFE_BINOPS: [Opcode; 11] = [
    Opcode::IADD,
    Opcode::ISUB,
    Opcode::IMUL,
    Opcode::SHL,
    Opcode::LSHR,
    Opcode::ASHR,
    Opcode::AND,
    Opcode::OR,
    Opcode::XOR,
    Opcode::ROTL,
    Opcode::ROTR,
];

const DIVS: [Opcode; 4] = [Opcode::SDIV, Opcode::UDIV, Opcode::SREM, Opcode::UREM];

/// Integer condition codes (Ark numbering).
const INT_CCS: [u64; 10] = [1, 2, 3, 4, 5, 6, 10, 11, 12, 13];

/// A parameter or body instruction of the proc being built: a candidate operand or passive
/// dependency.
#[derive(Clone)]
struct Node {
    inst: Inst,
    /// Its value type; `None` for `event`, `cue`, `next` and `case`.
    ty: Option<Ty>,
}

/// Passive dependencies of one instruction.
#[derive(Default)]
struct Deps {
    when: Vec<Inst>,
    unless: Vec<Inst>,
}

impl Deps {
    /// Only `when(k)`.
    fn only(k: Inst) -> Deps {
        Deps {
            when: vec![k],
            unless: Vec::new(),
        }
    }

    /// Makes `k` the first `when` operand (keeping at most two).
    fn require(&mut self, k: Inst) {
        self.when.retain(|&v| v != k);
        self.when.insert(0, k);
        self.when.truncate(2);
    }
}

/// The proc being built.
struct Build {
    nodes: Vec<Node>,
    /// Per instruction, the events (bit k: the k-th event created) it depends on, itself
    /// included; parameters and constants depend on none.
    events: HashMap<Inst, u32>,
    /// Body instructions in creation order (a topological order).
    body: Vec<Inst>,
    params: Vec<Inst>,
    /// Accumulator vars and whether a `next` writes them yet.
    accs: Vec<(Inst, Ty, bool)>,
    n_events: u32,
}

impl Build {
    fn events_of(&self, i: Inst) -> u32 {
        self.events.get(&i).copied().unwrap_or(0)
    }
}

impl Gen<'_, '_> {
    /// Adds 1–2 procs (with probability about `percent`/100), after the rest of the module:
    /// nothing calls them, some are exported. With [`Config::proc_calls`](crate::Config),
    /// call [`Gen::gen_callable_procs`] before the functions instead.
    pub(crate) fn gen_procs(&mut self, percent: usize) {
        if !self.coin(percent) {
            return;
        }
        for _ in 0..self.e.range(1, 2) {
            let (p, _) = self.new_proc();
            self.decorate_def(p, true);
        }
    }

    /// Adds 1–2 procs (with probability about `percent`/100) as callable functions: later
    /// function bodies may call them (directly, or through their address), and their exports
    /// are importable by the other modules of a set.
    pub(crate) fn gen_callable_procs(&mut self, percent: usize) {
        if !self.coin(percent) {
            return;
        }
        for _ in 0..self.e.range(1, 2) {
            let (p, sig) = self.new_proc();
            self.funcs.push(Func {
                inst: p,
                sig: sig.clone(),
                body: true,
            });
            if let Some(name) = self.decorate_def(p, true) {
                self.exports.push(Iface::Func { name, sig });
            }
        }
    }

    /// A proc of a fresh signature and name, added to the module.
    fn new_proc(&mut self) -> (Inst, Sig) {
        let sig = self.proc_sig();
        let name = self.fresh("proc");
        (self.gen_proc(&sig, &name), sig)
    }

    /// A proc signature: integer parameters, an integer result.
    pub(crate) fn proc_sig(&mut self) -> Sig {
        let n = self.e.range(0, self.cfg.max_params);
        let params = (0..n).map(|_| self.int_ty()).collect();
        Sig {
            ret: Some(self.int_ty()),
            params,
        }
    }

    /// Argument tuples for parameters of these integer types: small values, edge values,
    /// random ones (one empty tuple without parameters).
    pub(crate) fn proc_args(&mut self, params: &[Ty]) -> Vec<Vec<u64>> {
        let n = if params.is_empty() {
            1
        } else {
            self.e.range(2, 6)
        };
        (0..n)
            .map(|_| {
                params
                    .iter()
                    .map(|t| {
                        let w = t.int_width().unwrap_or(64);
                        let v = match self.e.below(6) {
                            0 | 1 => self.e.below(8) as u64,
                            2 => u64::MAX,
                            3 => 1u64 << (w - 1),
                            _ => self.e.u64(),
                        };
                        irkit_core::payload::mask_to_width(v, w)
                    })
                    .collect()
            })
            .collect()
    }

    /// A proc `name` of signature `sig` (integer types only), at the end of the module.
    pub(crate) fn gen_proc(&mut self, sig: &Sig, name: &str) -> Inst {
        let fty = self.fn_ty(sig);
        let p = self.top_level(Opcode::PROC, fty, Vec::new(), name);
        let mut b = Build {
            nodes: Vec::new(),
            events: HashMap::new(),
            body: Vec::new(),
            params: Vec::new(),
            accs: Vec::new(),
            n_events: 0,
        };
        for t in &sig.params {
            let ti = self.ty(t);
            let q = self
                .m
                .new_inst(Opcode::PARAM, Some(ti), Vec::new(), Payload::None)
                .expect("params are created");
            self.m.append_child(p, q).expect("params attach");
            self.maybe_name(q);
            b.params.push(q);
            b.nodes.push(Node {
                inst: q,
                ty: Some(t.clone()),
            });
        }
        let max = self.cfg.max_insts_per_block.max(1);
        for _ in 0..self.e.range(0, max) {
            self.p_op(&mut b, None);
        }
        self.p_loops(&mut b);
        for _ in 0..self.e.range(0, max) {
            self.p_op(&mut b, None);
        }
        for k in 0..b.accs.len() {
            if !b.accs[k].2 && self.e.chance(60) {
                let (var, t, _) = b.accs[k].clone();
                self.p_acc_next(&mut b, var, &t, None);
            }
        }
        let ret = sig.ret.clone().unwrap_or(Ty::I32);
        let r = self.p_result(&mut b, &ret);
        if self.e.chance(30) {
            // Any order is valid: the verifier orders a proc by its dependencies.
            for k in (1..b.body.len()).rev() {
                let j = self.e.below(k + 1);
                b.body.swap(k, j);
            }
        }
        for &i in &b.body {
            self.m.append_child(p, i).expect("instructions attach");
        }
        let res = self
            .m
            .new_inst(Opcode::RESULT, None, vec![r], Payload::None)
            .expect("results are created");
        self.m.append_child(p, res).expect("results attach");
        p
    }

    /// Creates a body instruction (attached at the end) with passive dependencies `deps`.
    fn p_emit(
        &mut self,
        b: &mut Build,
        op: Opcode,
        ty: Option<&Ty>,
        ops: Vec<Inst>,
        payload: Payload,
        deps: Deps,
    ) -> Inst {
        let reads = if op == Opcode::NEXT {
            &ops[1..]
        } else {
            &ops[..]
        };
        let mut events = reads
            .iter()
            .chain(&deps.when)
            .chain(&deps.unless)
            .fold(0, |acc, &v| acc | b.events_of(v));
        if op == Opcode::EVENT {
            events |= 1 << b.n_events;
            b.n_events += 1;
        }
        let ti = ty.map(|t| self.ty(t));
        let i = self
            .m
            .new_inst(op, ti, ops, payload)
            .expect("instructions are created");
        let loc_first = self.e.chance(3);
        if loc_first {
            self.loc(i);
        }
        let split = self.e.chance(10);
        for (deco, vals) in [(Opcode::WHEN, deps.when), (Opcode::UNLESS, deps.unless)] {
            if vals.is_empty() {
                continue;
            }
            if split && vals.len() > 1 {
                for v in vals {
                    self.decorate(i, deco, vec![v], Payload::None);
                }
            } else {
                self.decorate(i, deco, vals, Payload::None);
            }
        }
        if !loc_first && self.e.chance(3) {
            self.loc(i);
        }
        self.maybe_name(i);
        b.body.push(i);
        b.events.insert(i, events);
        b.nodes.push(Node {
            inst: i,
            ty: ty.cloned(),
        });
        i
    }

    /// 1–2 distinct nodes whose events avoid `forbid` (none if there are none).
    fn p_pick_nodes(&mut self, b: &Build, forbid: u32) -> Vec<Inst> {
        let cands: Vec<Inst> = b
            .nodes
            .iter()
            .filter(|n| b.events_of(n.inst) & forbid == 0)
            .map(|n| n.inst)
            .collect();
        let mut out = Vec::new();
        for _ in 0..self.e.range(1, 2) {
            if let Some(&v) = self.e.pick(&cands)
                && !out.contains(&v)
            {
                out.push(v);
            }
        }
        out
    }

    /// Random passive dependencies (often none) on nodes whose events avoid `forbid`.
    fn p_random_deps(&mut self, b: &Build, forbid: u32) -> Deps {
        let mut d = Deps::default();
        if self.e.chance(22) {
            d.when = self.p_pick_nodes(b, forbid);
        }
        if self.e.chance(10) {
            d.unless = self.p_pick_nodes(b, forbid);
        }
        d
    }

    /// An integer type, often one some value of the proc already has.
    fn p_int_ty(&mut self, b: &Build) -> Ty {
        let have: Vec<Ty> = b
            .nodes
            .iter()
            .filter_map(|n| n.ty.clone())
            .filter(Ty::is_int)
            .collect();
        match self.e.pick(&have) {
            Some(t) if self.e.chance(80) => t.clone(),
            _ => self.int_ty(),
        }
    }

    /// A value of type `t` whose events avoid `forbid`: a node, or a constant.
    fn p_value(&mut self, b: &Build, t: &Ty, forbid: u32) -> Inst {
        let cands: Vec<Inst> = b
            .nodes
            .iter()
            .filter(|n| n.ty.as_ref() == Some(t) && b.events_of(n.inst) & forbid == 0)
            .map(|n| n.inst)
            .collect();
        match self.e.pick(&cands) {
            Some(&v) if self.e.chance(85) => v,
            _ => self.constant(t, false),
        }
    }

    fn int_const(&mut self, t: &Ty, v: u64) -> Inst {
        let ti = self.ty(t);
        self.m.const_int(ti, v).expect("int constants intern")
    }

    /// One random body instruction; inside a loop (`guard`), often depending on its case.
    fn p_op(&mut self, b: &mut Build, guard: Option<Inst>) {
        let mut deps = self.p_random_deps(b, 0);
        if let Some(k) = guard
            && self.e.chance(40)
        {
            deps.require(k);
        }
        match self.e.below(14) {
            0..=3 => {
                let t = self.p_int_ty(b);
                let lhs = self.p_value(b, &t, 0);
                let (op, rhs) = if self.e.chance(10) {
                    self.p_division(b, &t)
                } else {
                    let op = SAFE_BINOPS[self.e.below(SAFE_BINOPS.len())];
                    (op, self.p_value(b, &t, 0))
                };
                self.p_emit(b, op, Some(&t), vec![lhs, rhs], Payload::None, deps);
            }
            4 => {
                let t = self.p_int_ty(b);
                let cc = INT_CCS[self.e.below(INT_CCS.len())];
                let ops = vec![self.p_value(b, &t, 0), self.p_value(b, &t, 0)];
                self.p_emit(b, Opcode::ICMP, Some(&Ty::I1), ops, Payload::Int(cc), deps);
            }
            5 => {
                let t = self.p_int_ty(b);
                let ops = vec![
                    self.p_value(b, &Ty::I1, 0),
                    self.p_value(b, &t, 0),
                    self.p_value(b, &t, 0),
                ];
                self.p_emit(b, Opcode::SELECT, Some(&t), ops, Payload::None, deps);
            }
            6 => {
                let (from, to) = (self.p_int_ty(b), self.int_ty());
                let (wf, wt) = (from.int_width().unwrap_or(0), to.int_width().unwrap_or(0));
                let op = if wf == wt {
                    Opcode::BITCAST
                } else if wf > wt {
                    Opcode::TRUNC
                } else if self.e.chance(50) {
                    Opcode::ZEXT
                } else {
                    Opcode::SEXT
                };
                let v = self.p_value(b, &from, 0);
                self.p_emit(b, op, Some(&to), vec![v], Payload::None, deps);
            }
            7 => self.p_float(b, deps),
            8 | 9 => {
                let op = if self.e.chance(50) {
                    Opcode::PHI
                } else {
                    Opcode::COALESCE
                };
                let t = if self.e.chance(10) {
                    Ty::F64
                } else {
                    self.p_int_ty(b)
                };
                let ops = (0..self.e.range(1, 3))
                    .map(|_| self.p_value(b, &t, 0))
                    .collect();
                self.p_emit(b, op, Some(&t), ops, Payload::None, deps);
            }
            10 => {
                let t = self.p_int_ty(b);
                let x = self.p_value(b, &t, 0);
                let mut ops = vec![x];
                let max = if t == Ty::I1 { 2 } else { 3 };
                for _ in 0..self.e.range(1, max) {
                    let v = if self.e.chance(70) {
                        self.e.below(4) as u64
                    } else {
                        self.e.u64()
                    };
                    let c = self.int_const(&t, v);
                    if !ops[1..].contains(&c) {
                        ops.push(c);
                    }
                }
                self.p_emit(b, Opcode::CASE, None, ops, Payload::None, deps);
            }
            11 | 12 => {
                let t = self.p_int_ty(b);
                let init = self.p_value(b, &t, 0);
                let v = self.p_emit(b, Opcode::VAR, Some(&t), vec![init], Payload::None, deps);
                b.accs.push((v, t, false));
            }
            _ => {
                let open: Vec<usize> = (0..b.accs.len()).filter(|&k| !b.accs[k].2).collect();
                if let Some(&k) = self.e.pick(&open) {
                    let (var, t, _) = b.accs[k].clone();
                    self.p_acc_next(b, var, &t, guard);
                }
            }
        }
    }

    /// A division and its divisor: usually a constant that cannot trap, rarely any value.
    fn p_division(&mut self, b: &Build, t: &Ty) -> (Opcode, Inst) {
        if self.e.chance(15) {
            let op = DIVS[self.e.below(DIVS.len())];
            return (op, self.p_value(b, t, 0));
        }
        if *t == Ty::I1 {
            // `sdiv i1 1, 1` traps (1 is both MIN and -1).
            let op = if self.e.chance(50) {
                Opcode::UDIV
            } else {
                Opcode::UREM
            };
            return (op, self.int_const(t, 1));
        }
        let op = DIVS[self.e.below(DIVS.len())];
        let d = self.e.range(2, 9) as u64;
        (op, self.int_const(t, d))
    }

    /// A step of `f64` arithmetic: into it (`sitofp`/`uitofp`), within it, or out of it
    /// (`fcmp`, saturating `fptosi`/`fptoui`).
    fn p_float(&mut self, b: &mut Build, deps: Deps) {
        let have = b.nodes.iter().any(|n| n.ty == Some(Ty::F64));
        let f = Ty::F64;
        match if have { self.e.below(4) } else { 0 } {
            0 => {
                let from = self.p_int_ty(b);
                let op = if self.e.chance(50) {
                    Opcode::SITOFP
                } else {
                    Opcode::UITOFP
                };
                let v = self.p_value(b, &from, 0);
                self.p_emit(b, op, Some(&f), vec![v], Payload::None, deps);
            }
            1 => {
                let op = [Opcode::FADD, Opcode::FSUB, Opcode::FMUL, Opcode::FDIV][self.e.below(4)];
                let ops = vec![self.p_value(b, &f, 0), self.p_value(b, &f, 0)];
                self.p_emit(b, op, Some(&f), ops, Payload::None, deps);
            }
            2 => {
                let cc = self.e.below(16) as u64;
                let ops = vec![self.p_value(b, &f, 0), self.p_value(b, &f, 0)];
                self.p_emit(b, Opcode::FCMP, Some(&Ty::I1), ops, Payload::Int(cc), deps);
            }
            _ => {
                let to = self.int_ty();
                let op = if self.e.chance(50) {
                    Opcode::FPTOSI
                } else {
                    Opcode::FPTOUI
                };
                let v = self.p_value(b, &f, 0);
                self.p_emit(b, op, Some(&to), vec![v], Payload::None, deps);
            }
        }
    }

    /// The `next` of accumulator `var`: an update computed from it (inside a loop, under the
    /// loop's case) or any value, with random passive dependencies.
    fn p_acc_next(&mut self, b: &mut Build, var: Inst, t: &Ty, guard: Option<Inst>) {
        let mut deps = self.p_random_deps(b, 0);
        let value = match guard {
            Some(k) => {
                let op = SAFE_BINOPS[self.e.below(SAFE_BINOPS.len())];
                let x = self.p_value(b, t, 0);
                let ops = if self.e.chance(50) {
                    vec![var, x]
                } else {
                    vec![x, var]
                };
                let v = self.p_emit(b, op, Some(t), ops, Payload::None, Deps::only(k));
                if self.e.chance(70) {
                    deps.require(k);
                }
                v
            }
            None => self.p_value(b, t, 0),
        };
        self.p_emit(b, Opcode::NEXT, None, vec![var, value], Payload::None, deps);
        if let Some(acc) = b.accs.iter_mut().find(|a| a.0 == var) {
            acc.2 = true;
        }
    }

    /// The value `result` names, of type `t`: often a `coalesce` ending in a value that is
    /// always defined, so most procs return a value; otherwise any value of the type.
    fn p_result(&mut self, b: &mut Build, t: &Ty) -> Inst {
        let of_type: Vec<Inst> = b
            .nodes
            .iter()
            .filter(|n| n.ty.as_ref() == Some(t))
            .map(|n| n.inst)
            .collect();
        if self.e.chance(55) {
            let params: Vec<Inst> = of_type
                .iter()
                .copied()
                .filter(|v| b.params.contains(v))
                .collect();
            let fallback = match self.e.pick(&params) {
                Some(&p) if self.e.chance(70) => p,
                _ => {
                    // A var of a constant, without a `next`: always defined.
                    let c = self.constant(t, false);
                    self.p_emit(
                        b,
                        Opcode::VAR,
                        Some(t),
                        vec![c],
                        Payload::None,
                        Deps::default(),
                    )
                }
            };
            let mut ops: Vec<Inst> = (0..self.e.range(0, 2))
                .filter_map(|_| self.e.pick(&of_type).copied())
                .collect();
            ops.push(fallback);
            return self.p_emit(
                b,
                Opcode::COALESCE,
                Some(t),
                ops,
                Payload::None,
                Deps::default(),
            );
        }
        if let Some(&v) = self.e.pick(&of_type) {
            return v;
        }
        // Nothing of the type yet: convert some integer value.
        let from = self.p_int_ty(b);
        let (wf, wt) = (from.int_width().unwrap_or(0), t.int_width().unwrap_or(0));
        let op = if wf == wt {
            Opcode::BITCAST
        } else if wf > wt {
            Opcode::TRUNC
        } else {
            Opcode::ZEXT
        };
        let v = self.p_value(b, &from, 0);
        let deps = self.p_random_deps(b, 0);
        self.p_emit(b, op, Some(t), vec![v], Payload::None, deps)
    }
}

impl Gen<'_, '_> {
    /// An exported proc `name` with integer parameters and result, and arguments for it.
    pub(crate) fn proc_case(&mut self, name: &str) -> crate::ProcCase {
        let sig = self.proc_sig();
        let p = self.gen_proc(&sig, name);
        self.export(p, name);
        let width = |t: &Ty| t.int_width().unwrap_or(64);
        crate::ProcCase {
            name: name.to_string(),
            params: sig.params.iter().map(width).collect(),
            result: sig.ret.as_ref().map_or(32, width),
            args: self.proc_args(&sig.params),
        }
    }
}
