//! Function bodies: blocks with parameters, structured regions (if/else, loops, switches)
//! that keep every use dominated, calls, straight-line arithmetic, conversions, memory and
//! aggregates.

use irkit_core::{Inst, IntBinary, Opcode, Payload};

use super::{
    CC_SLT, FLOAT_BINOPS, FLOAT_UNOPS, Gen, INT_BINOPS, INT_CCS, INT_UNOPS, LOCAL_NAMES, Scope, Sig,
};
use crate::ty::{SCALARS, Ty};

impl Gen<'_, '_> {
    // ---- bodies --------------------------------------------------------------------------

    pub(super) fn raw_block(&mut self, f: Inst, tys: &[Inst]) -> (Inst, Vec<Inst>) {
        let b = self
            .m
            .new_inst(Opcode::BLOCK, None, Vec::new(), Payload::None)
            .expect("blocks are created");
        self.m.append_child(f, b).expect("blocks attach");
        let params = tys
            .iter()
            .map(|&t| {
                let p = self
                    .m
                    .new_inst(Opcode::PARAM, Some(t), Vec::new(), Payload::None)
                    .expect("params are created");
                self.m.append_child(b, p).expect("params attach");
                p
            })
            .collect();
        (b, params)
    }

    pub(super) fn emit_raw(
        &mut self,
        b: Inst,
        op: Opcode,
        ty: Option<Inst>,
        ops: Vec<Inst>,
    ) -> Inst {
        self.emit_payload(b, op, ty, ops, Payload::None)
    }

    pub(super) fn emit_payload(
        &mut self,
        b: Inst,
        op: Opcode,
        ty: Option<Inst>,
        ops: Vec<Inst>,
        payload: Payload,
    ) -> Inst {
        let i = self
            .m
            .new_inst(op, ty, ops, payload)
            .expect("instructions are created");
        self.m.append_child(b, i).expect("instructions attach");
        i
    }

    /// A block of the current function with parameters of types `tys`, maybe named.
    pub(super) fn block(&mut self, tys: &[Ty]) -> (Inst, Vec<Inst>) {
        self.blocks_left = self.blocks_left.saturating_sub(1);
        let f = self.funcs[self.cur_func].inst;
        let tis: Vec<Inst> = tys.iter().map(|t| self.ty(t)).collect();
        let (b, params) = self.raw_block(f, &tis);
        if self.e.chance(50) {
            let name = self.local_name();
            self.m.set_name(b, &name).expect("blocks take names");
        }
        for &p in &params {
            self.maybe_name(p);
        }
        (b, params)
    }

    pub(super) fn local_name(&mut self) -> String {
        let base = LOCAL_NAMES[self.e.below(LOCAL_NAMES.len())];
        self.counter += 1;
        format!("{base}{}", self.counter)
    }

    pub(super) fn maybe_name(&mut self, i: Inst) {
        if self.e.chance(40) {
            let name = self.local_name();
            self.m.set_name(i, &name).expect("values take names");
        }
    }

    /// Appends an instruction with a result of type `ty` (or none), maybe decorated.
    pub(super) fn emit(
        &mut self,
        b: Inst,
        op: Opcode,
        ty: Option<&Ty>,
        ops: Vec<Inst>,
        p: Payload,
    ) -> Inst {
        let t = ty.map(|t| self.ty(t));
        let i = self.emit_payload(b, op, t, ops, p);
        if ty.is_some() {
            self.maybe_name(i);
        }
        if self.e.chance(5) {
            self.loc(i);
        }
        i
    }

    pub(super) fn block_tys(&mut self, max: usize) -> Vec<Ty> {
        let n = self.e.range(0, max);
        (0..n).map(|_| self.value_ty()).collect()
    }

    /// A value of type `t` available in `scope`: an existing one or a constant.
    pub(super) fn value(&mut self, t: &Ty, scope: &Scope) -> Inst {
        let mut cands: Vec<Inst> = scope
            .vals
            .iter()
            .filter(|(_, vt)| vt == t)
            .map(|&(v, _)| v)
            .collect();
        if *t == Ty::Ptr {
            cands.extend(self.def_addresses());
        }
        if !cands.is_empty() && self.e.chance(65) {
            cands[self.e.below(cands.len())]
        } else {
            self.constant(t, true)
        }
    }

    pub(super) fn values(&mut self, tys: &[Ty], scope: &Scope) -> Vec<Inst> {
        tys.iter().map(|t| self.value(t, scope)).collect()
    }

    pub(super) fn gen_body(&mut self, fi: usize, calls: &[usize]) {
        self.cur_func = fi;
        self.blocks_left = self.cfg.max_blocks;
        let f = self.funcs[fi].inst;
        let sig = self.funcs[fi].sig.clone();
        let tis: Vec<Inst> = sig.params.iter().map(|t| self.ty(t)).collect();
        let (entry, params) = self.raw_block(f, &tis);
        for &p in &params {
            self.maybe_name(p);
        }
        let mut scope = Scope {
            vals: params
                .iter()
                .copied()
                .zip(sig.params.iter().cloned())
                .collect(),
            mems: self
                .globals
                .iter()
                .map(|g| (g.inst, g.ty.clone(), g.writable))
                .collect(),
        };
        for &c in calls {
            self.call(entry, &mut scope, c);
        }
        if let Some((b, s)) = self.region(entry, scope, 0) {
            self.exit(b, &s);
        }
    }

    /// Ends a path of the current function: `ret`, or (about one time in three, when a
    /// function it may call returns what it returns) a tail call of that function, direct or
    /// through its address.
    pub(super) fn exit(&mut self, b: Inst, scope: &Scope) {
        let want = self.funcs[self.cur_func].sig.ret.clone();
        let same: Vec<usize> = self
            .callable()
            .into_iter()
            .filter(|&i| {
                self.funcs[i].sig.ret == want && self.m.opcode(self.funcs[i].inst) == Opcode::FUNC
            })
            .collect();
        let callee = if self.e.chance(35) {
            self.e.pick(&same).copied()
        } else {
            None
        };
        let Some(callee) = callee else {
            self.ret(b, scope);
            return;
        };
        let sig = self.funcs[callee].sig.clone();
        let f = self.funcs[callee].inst;
        let args = self.values(&sig.params, scope);
        let (op, mut ops) = if self.e.chance(50) {
            (Opcode::TAIL_CALL, vec![f])
        } else {
            (Opcode::TAIL_CALL_INDIRECT, vec![self.fn_ty(&sig), f])
        };
        ops.extend(args);
        self.emit(b, op, None, ops, Payload::None);
    }

    pub(super) fn ret(&mut self, b: Inst, scope: &Scope) {
        let ops = match self.funcs[self.cur_func].sig.ret.clone() {
            Some(t) => vec![self.value(&t, scope)],
            None => Vec::new(),
        };
        self.emit(b, Opcode::RET, None, ops, Payload::None);
    }

    /// Fills `b` and whatever control flow follows it; returns the block where control
    /// continues and what is available there, or `None` if the region ended in a terminator.
    pub(super) fn region(&mut self, b: Inst, scope: Scope, depth: usize) -> Option<(Inst, Scope)> {
        let (mut b, mut scope) = (b, scope);
        let nested = depth < self.cfg.max_depth && self.blocks_left >= 4;
        for _ in 0..self.e.range(1, 4) {
            match self.e.below(12) {
                0..=6 => {
                    for _ in 0..self.e.range(1, self.cfg.max_insts_per_block) {
                        self.straight(b, &mut scope);
                    }
                }
                7 | 8 if nested => (b, scope) = self.if_else(b, scope, depth),
                9 if nested => (b, scope) = self.looping(b, scope, depth),
                10 if nested => (b, scope) = self.switch(b, scope, depth),
                11 if depth > 0 && self.e.chance(50) => {
                    match self.e.below(4) {
                        0 => self.emit(b, Opcode::UNREACHABLE, None, vec![], Payload::None),
                        1 if self.e.chance(50) => {
                            self.emit(b, Opcode::TRAP, None, vec![], Payload::None)
                        }
                        1 => {
                            // `trap_msg` with a kind of the shortest, a long and an odd text.
                            let kinds = ["x", "out of bounds memory access", "~!@# $%^&*()_+\"'"];
                            let kind = kinds[self.e.below(kinds.len())];
                            self.emit(b, Opcode::TRAP_MSG, None, vec![], Payload::Str(kind.into()))
                        }
                        _ => {
                            self.exit(b, &scope);
                            b
                        }
                    };
                    return None;
                }
                _ => self.straight(b, &mut scope),
            }
        }
        Some((b, scope))
    }

    /// Runs `region` in each arm; every arm that falls through jumps to `join` with arguments.
    pub(super) fn arms(
        &mut self,
        arms: Vec<(Inst, Vec<Inst>, Vec<Ty>)>,
        scope: &Scope,
        depth: usize,
        join: (Inst, &[Ty]),
    ) {
        for (blk, params, tys) in arms {
            let mut s = scope.clone();
            s.vals.extend(params.into_iter().zip(tys));
            if let Some((end, s2)) = self.region(blk, s, depth + 1) {
                let mut ops = vec![join.0];
                ops.extend(self.values(join.1, &s2));
                self.emit(end, Opcode::JUMP, None, ops, Payload::None);
            }
        }
    }

    pub(super) fn joined(scope: Scope, params: Vec<Inst>, tys: Vec<Ty>) -> Scope {
        let mut s = scope;
        s.vals.extend(params.into_iter().zip(tys));
        s
    }

    pub(super) fn if_else(&mut self, b: Inst, scope: Scope, depth: usize) -> (Inst, Scope) {
        let then_tys = self.block_tys(2);
        let else_tys = self.block_tys(2);
        let join_tys = self.block_tys(2);
        let (tb, tp) = self.block(&then_tys);
        let (eb, ep) = self.block(&else_tys);
        let (jb, jp) = self.block(&join_tys);
        let mut ops = vec![self.value(&Ty::I1, &scope), tb];
        ops.extend(self.values(&then_tys, &scope));
        ops.push(eb);
        ops.extend(self.values(&else_tys, &scope));
        self.emit(b, Opcode::BR, None, ops, Payload::None);
        let arms = vec![(tb, tp, then_tys), (eb, ep, else_tys)];
        self.arms(arms, &scope, depth, (jb, &join_tys));
        (jb, Self::joined(scope, jp, join_tys))
    }

    /// A counted loop: `header(i, state…)` runs its body while `i < bound`, the body jumps
    /// back with `i + 1` and the new state, the exit gets the state.
    pub(super) fn looping(&mut self, b: Inst, scope: Scope, depth: usize) -> (Inst, Scope) {
        let state_tys = self.block_tys(2);
        let mut header_tys = vec![Ty::I32];
        header_tys.extend(state_tys.iter().cloned());
        let (hb, hp) = self.block(&header_tys);
        let i32t = self.ty(&Ty::I32);
        let zero = self.m.const_int(i32t, 0).expect("int constants intern");
        let mut ops = vec![hb, zero];
        ops.extend(self.values(&state_tys, &scope));
        self.emit(b, Opcode::JUMP, None, ops, Payload::None);

        let hscope = Self::joined(scope, hp.clone(), header_tys);
        let bound = self.e.range(0, self.cfg.max_loop_trips) as u64;
        let bound = self.m.const_int(i32t, bound).expect("int constants intern");
        let cond = self.emit(
            hb,
            Opcode::ICMP,
            Some(&Ty::I1),
            vec![hp[0], bound],
            Payload::Int(CC_SLT),
        );
        let body_tys = self.block_tys(1);
        let (bb, bp) = self.block(&body_tys);
        let (xb, xp) = self.block(&state_tys);
        let mut ops = vec![cond, bb];
        ops.extend(self.values(&body_tys, &hscope));
        ops.push(xb);
        ops.extend(hp[1..].iter().copied());
        self.emit(hb, Opcode::BR, None, ops, Payload::None);

        let bscope = Self::joined(hscope.clone(), bp, body_tys);
        if let Some((end, s)) = self.region(bb, bscope, depth + 1) {
            let one = self.m.const_int(i32t, 1).expect("int constants intern");
            let next = self.emit(
                end,
                Opcode::IADD,
                Some(&Ty::I32),
                vec![hp[0], one],
                Payload::None,
            );
            let mut ops = vec![hb, next];
            ops.extend(self.values(&state_tys, &s));
            self.emit(end, Opcode::JUMP, None, ops, Payload::None);
        }
        (xb, Self::joined(hscope, xp, state_tys))
    }

    pub(super) fn switch(&mut self, b: Inst, scope: Scope, depth: usize) -> (Inst, Scope) {
        let t = self.int_ty();
        let w = t.int_width().unwrap_or(64);
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let v = self.value(&t, &scope);
        let max_cases = if w == 1 { 2 } else { 3 };
        let mut case_vals: Vec<u64> = Vec::new();
        for _ in 0..self.e.range(0, max_cases) {
            let c = if self.e.chance(70) {
                self.e.below(8) as u64
            } else {
                self.e.u64()
            } & mask;
            if !case_vals.contains(&c) {
                case_vals.push(c);
            }
        }
        let ti = self.ty(&t);
        let mut ops = vec![v];
        for &c in &case_vals {
            ops.push(self.m.const_int(ti, c).expect("int constants intern"));
        }
        let join_tys = self.block_tys(2);
        let mut arms = Vec::new();
        for _ in 0..=case_vals.len() {
            let tys = self.block_tys(2);
            let (blk, params) = self.block(&tys);
            ops.push(blk);
            ops.extend(self.values(&tys, &scope));
            arms.push((blk, params, tys));
        }
        let (jb, jp) = self.block(&join_tys);
        self.emit(b, Opcode::SWITCH, None, ops, Payload::None);
        self.arms(arms, &scope, depth, (jb, &join_tys));
        (jb, Self::joined(scope, jp, join_tys))
    }

    /// Functions the current one may call: declarations and functions defined before it, so
    /// the call graph is acyclic and every generated program terminates.
    pub(super) fn callable(&self) -> Vec<usize> {
        (0..self.funcs.len())
            .filter(|&i| !self.funcs[i].body || i < self.cur_func)
            .collect()
    }

    pub(super) fn call(&mut self, b: Inst, scope: &mut Scope, callee: usize) {
        let sig = self.funcs[callee].sig.clone();
        let mut ops = vec![self.funcs[callee].inst];
        ops.extend(self.values(&sig.params, scope));
        let r = self.emit(b, Opcode::CALL, sig.ret.as_ref(), ops, Payload::None);
        if let Some(t) = sig.ret {
            scope.vals.push((r, t));
        }
    }

    pub(super) fn call_indirect(&mut self, b: Inst, scope: &mut Scope, sig: &Sig, callee: Inst) {
        let fty = self.fn_ty(sig);
        let mut ops = vec![fty, callee];
        ops.extend(self.values(&sig.params, scope));
        let r = self.emit(
            b,
            Opcode::CALL_INDIRECT,
            sig.ret.as_ref(),
            ops,
            Payload::None,
        );
        if let Some(t) = sig.ret.clone() {
            scope.vals.push((r, t));
        }
    }

    /// One straight-line instruction (sometimes a short sequence: an address then an access).
    pub(super) fn straight(&mut self, b: Inst, scope: &mut Scope) {
        match self.e.below(13) {
            0 => {
                let t = self.int_ty();
                let k = self.e.below(INT_BINOPS.len() + INT_UNOPS.len());
                let Some(&op) = INT_BINOPS.get(k) else {
                    let op = INT_UNOPS[k - INT_BINOPS.len()].op().opcode();
                    let x = self.value(&t, scope);
                    let r = self.emit(b, op, Some(&t), vec![x], Payload::None);
                    scope.vals.push((r, t));
                    return;
                };
                let lhs = self.value(&t, scope);
                let rhs = if matches!(
                    op,
                    IntBinary::Sdiv | IntBinary::Udiv | IntBinary::Srem | IntBinary::Urem
                ) {
                    // A divisor that is neither 0 nor -1: no trap.
                    let ti = self.ty(&t);
                    let d = if t == Ty::I1 {
                        1
                    } else {
                        self.e.range(2, 100) as u64
                    };
                    self.m.const_int(ti, d).expect("int constants intern")
                } else {
                    self.value(&t, scope)
                };
                let r = self.emit(b, op.op().opcode(), Some(&t), vec![lhs, rhs], Payload::None);
                scope.vals.push((r, t));
            }
            1 => {
                let t = self.float_ty();
                let k = self.e.below(FLOAT_BINOPS.len() + FLOAT_UNOPS.len());
                let Some(&op) = FLOAT_BINOPS.get(k) else {
                    let op = FLOAT_UNOPS[k - FLOAT_BINOPS.len()].op().opcode();
                    let x = self.value(&t, scope);
                    let r = self.emit(b, op, Some(&t), vec![x], Payload::None);
                    scope.vals.push((r, t));
                    return;
                };
                let ops = vec![self.value(&t, scope), self.value(&t, scope)];
                let r = self.emit(b, op.op().opcode(), Some(&t), ops, Payload::None);
                scope.vals.push((r, t));
            }
            2 => {
                let t = if self.e.chance(20) {
                    Ty::Ptr
                } else {
                    self.int_ty()
                };
                let cc = INT_CCS[self.e.below(INT_CCS.len())];
                let ops = vec![self.value(&t, scope), self.value(&t, scope)];
                let r = self.emit(b, Opcode::ICMP, Some(&Ty::I1), ops, Payload::Int(cc));
                scope.vals.push((r, Ty::I1));
            }
            3 => {
                let t = self.float_ty();
                let cc = self.e.below(16) as u64;
                let ops = vec![self.value(&t, scope), self.value(&t, scope)];
                let r = self.emit(b, Opcode::FCMP, Some(&Ty::I1), ops, Payload::Int(cc));
                scope.vals.push((r, Ty::I1));
            }
            4 => self.conversion(b, scope),
            5 => {
                let t = self.value_ty();
                let ops = vec![
                    self.value(&Ty::I1, scope),
                    self.value(&t, scope),
                    self.value(&t, scope),
                ];
                let r = self.emit(b, Opcode::SELECT, Some(&t), ops, Payload::None);
                scope.vals.push((r, t));
            }
            6 => {
                self.stackalloc(b, scope);
            }
            7 | 8 => self.memory(b, scope),
            9 => self.aggregate(b, scope),
            10 => {
                let c = self.callable();
                if let Some(&callee) = self.e.pick(&c) {
                    self.call(b, scope, callee);
                }
            }
            11 => {
                // An indirect call through `select` of two function addresses of one signature.
                let c = self.callable();
                let Some(&f1) = self.e.pick(&c) else { return };
                let sig = self.funcs[f1].sig.clone();
                let same: Vec<usize> = c
                    .into_iter()
                    .filter(|&i| self.funcs[i].sig == sig)
                    .collect();
                let f2 = *self.e.pick(&same).unwrap_or(&f1);
                let ops = vec![
                    self.value(&Ty::I1, scope),
                    self.funcs[f1].inst,
                    self.funcs[f2].inst,
                ];
                let sel = self.emit(b, Opcode::SELECT, Some(&Ty::Ptr), ops, Payload::None);
                scope.vals.push((sel, Ty::Ptr));
                self.call_indirect(b, scope, &sig, sel);
            }
            _ if self.e.chance(50) => {
                // An indirect call through an array of function addresses, at an index the
                // program computes (kept in bounds by `urem`).
                let cur = self.cur_func;
                let tables: Vec<(Inst, Vec<usize>)> = self
                    .globals
                    .iter()
                    .filter(|g| !g.fn_table.is_empty())
                    .filter(|g| g.fn_table.iter().all(|&f| !self.funcs[f].body || f < cur))
                    .map(|g| (g.inst, g.fn_table.clone()))
                    .collect();
                let Some((g, entries)) = self.e.pick(&tables).cloned() else {
                    return;
                };
                let i64t = self.ty(&Ty::I64);
                let len = self
                    .m
                    .const_int(i64t, entries.len() as u64)
                    .expect("int constants intern");
                let v = self.value(&Ty::I64, scope);
                let k = self.emit(b, Opcode::UREM, Some(&Ty::I64), vec![v, len], Payload::None);
                let ptr = self.ty(&Ty::Ptr);
                let p = self.emit(
                    b,
                    Opcode::ELEM,
                    Some(&Ty::Ptr),
                    vec![ptr, g, k],
                    Payload::None,
                );
                let fp = self.emit(b, Opcode::LOAD, Some(&Ty::Ptr), vec![p], Payload::None);
                let sig = self.funcs[entries[0]].sig.clone();
                self.call_indirect(b, scope, &sig, fp);
            }
            _ => {
                // An indirect call through a function pointer loaded from a constant table.
                let cur = self.cur_func;
                let tables: Vec<(Inst, usize)> = self
                    .globals
                    .iter()
                    .filter_map(|g| g.fn_target.map(|f| (g.inst, f)))
                    .filter(|&(_, f)| !self.funcs[f].body || f < cur)
                    .collect();
                let Some(&(g, f)) = self.e.pick(&tables) else {
                    return;
                };
                let p = self.emit(b, Opcode::LOAD, Some(&Ty::Ptr), vec![g], Payload::None);
                let sig = self.funcs[f].sig.clone();
                self.call_indirect(b, scope, &sig, p);
            }
        }
    }

    pub(super) fn conversion(&mut self, b: Inst, scope: &mut Scope) {
        let (op, from, to) = match self.e.below(8) {
            0 => {
                let (a, c) = (self.int_ty(), self.int_ty());
                let (wa, wc) = (a.int_width().unwrap_or(0), c.int_width().unwrap_or(0));
                if wa == wc {
                    (Opcode::BITCAST, a, c)
                } else if wa > wc {
                    (Opcode::TRUNC, a, c)
                } else if self.e.chance(50) {
                    (Opcode::ZEXT, a, c)
                } else {
                    (Opcode::SEXT, a, c)
                }
            }
            1 => {
                if self.e.chance(50) {
                    (Opcode::FPTRUNC, Ty::F64, Ty::F32)
                } else {
                    (Opcode::FPEXT, Ty::F32, Ty::F64)
                }
            }
            2 => {
                let op = if self.e.chance(50) {
                    Opcode::FPTOUI
                } else {
                    Opcode::FPTOSI
                };
                (op, self.float_ty(), self.int_ty())
            }
            3 => {
                let op = if self.e.chance(50) {
                    Opcode::UITOFP
                } else {
                    Opcode::SITOFP
                };
                (op, self.int_ty(), self.float_ty())
            }
            4 => (Opcode::PTRTOINT, Ty::Ptr, self.int_ty()),
            5 => (Opcode::INTTOPTR, self.int_ty(), Ty::Ptr),
            6 => match self.e.below(4) {
                0 => (Opcode::BITCAST, Ty::I32, Ty::F32),
                1 => (Opcode::BITCAST, Ty::F32, Ty::I32),
                2 => (Opcode::BITCAST, Ty::I64, Ty::F64),
                _ => (Opcode::BITCAST, Ty::F64, Ty::I64),
            },
            _ => {
                let t = SCALARS[self.e.below(SCALARS.len())].clone();
                (Opcode::BITCAST, t.clone(), t)
            }
        };
        let v = self.value(&from, scope);
        let r = self.emit(b, op, Some(&to), vec![v], Payload::None);
        scope.vals.push((r, to));
    }

    pub(super) fn stackalloc(&mut self, b: Inst, scope: &mut Scope) -> (Inst, Ty) {
        let t = self.value_ty();
        let ti = self.ty(&t);
        let p = self.emit(
            b,
            Opcode::STACKALLOC,
            Some(&Ty::Ptr),
            vec![ti],
            Payload::None,
        );
        scope.vals.push((p, Ty::Ptr));
        scope.mems.push((p, t.clone(), true));
        (p, t)
    }

    /// A load or store, through `elem` when the pointee is an aggregate; every address stays
    /// inside the object it points into.
    pub(super) fn memory(&mut self, b: Inst, scope: &mut Scope) {
        let (p, t, writable) = match self.e.pick(&scope.mems) {
            Some(m) => m.clone(),
            None => {
                let (p, t) = self.stackalloc(b, scope);
                (p, t, true)
            }
        };
        let (addr, pointee) = if t.is_scalar() && self.e.chance(50) {
            (p, t)
        } else {
            let it = self.int_ty();
            let iti = self.ty(&it);
            let zero = self.m.const_int(iti, 0).expect("int constants intern");
            let ti = self.ty(&t);
            let mut ops = vec![ti, p, zero];
            let mut cur = t;
            while cur.field_count() > 0 && (ops.len() == 3 || self.e.chance(60)) {
                let k = self.e.below(cur.field_count());
                let idx_ty = if self.e.chance(50) { Ty::I32 } else { Ty::I64 };
                let idx_ti = self.ty(&idx_ty);
                ops.push(
                    self.m
                        .const_int(idx_ti, k as u64)
                        .expect("int constants intern"),
                );
                cur = cur.field(k).expect("index in range");
            }
            let q = self.emit(b, Opcode::ELEM, Some(&Ty::Ptr), ops, Payload::None);
            scope.vals.push((q, Ty::Ptr));
            (q, cur)
        };
        if !pointee.is_scalar() {
            scope.mems.push((addr, pointee, writable));
        } else if writable && self.e.chance(50) {
            let v = self.value(&pointee, scope);
            self.emit(b, Opcode::STORE, None, vec![addr, v], Payload::None);
        } else {
            let r = self.emit(b, Opcode::LOAD, Some(&pointee), vec![addr], Payload::None);
            scope.vals.push((r, pointee));
        }
    }

    pub(super) fn aggregate(&mut self, b: Inst, scope: &mut Scope) {
        let cands: Vec<Ty> = self
            .aggs
            .iter()
            .filter(|t| t.field_count() > 0)
            .cloned()
            .collect();
        let Some(t) = self.e.pick(&cands).cloned() else {
            return;
        };
        let agg = self.value(&t, scope);
        let k = self.e.below(t.field_count());
        let field = t.field(k).expect("index in range");
        let r = if self.e.chance(50) {
            let r = self.emit(
                b,
                Opcode::EXTRACT,
                Some(&field),
                vec![agg],
                Payload::Int(k as u64),
            );
            scope.vals.push((r, field));
            return;
        } else {
            let v = self.value(&field, scope);
            self.emit(
                b,
                Opcode::INSERT,
                Some(&t),
                vec![agg, v],
                Payload::Int(k as u64),
            )
        };
        scope.vals.push((r, t));
    }
}
