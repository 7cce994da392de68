//! NOIR procs (spec/ir.md, "NOIR", rules N1–N9): a `proc`'s shape (parameters, body
//! instructions, one `result`), what may appear in its body, proc-local operands, acyclic
//! dependencies, one `next` per `var`, the typing of the NOIR opcodes, and the passive
//! dependency decorations `when` and `unless`.

use crate::noir::{self, ProcGraph};
use crate::{Inst, Opcode};

use super::{Cx, Kind, VTy, plural};

impl Cx<'_> {
    /// The proc `i` is directly in, if its walk parent is one.
    fn proc_of(&self, i: Inst) -> Option<Inst> {
        self.tparent
            .get(i.idx())
            .copied()
            .flatten()
            .filter(|&p| self.opc(p) == Some(Opcode::PROC))
    }

    /// N1–N3, N6: the proc's type, shape and dependency graph.
    pub(super) fn check_proc(&mut self, p: Inst) {
        let Some(d) = self.live(p) else { return };
        if self.tparent.get(p.idx()).copied().flatten() != Some(self.m.root()) {
            self.err(p, "`proc` must be a child of the module");
        }
        if self.is_imported(p) {
            self.err(
                p,
                "a `proc` always has a body: declare an imported function as a bodyless `func`",
            );
        }
        let sig = d.ty.and_then(|t| match self.kind(t) {
            Kind::Fn => self.live(t).map(|td| td.operands.to_vec()),
            Kind::Bad => None,
            _ => {
                let msg = format!(
                    "the type of a `proc` must be a fn type, found {}",
                    self.ty_str(t)
                );
                self.err(p, msg);
                None
            }
        });
        let children = self.tree_children(p);
        let nparams = children
            .iter()
            .take_while(|&&c| self.opc(c) == Some(Opcode::PARAM))
            .count();
        let mut results = 0usize;
        for (k, &c) in children.iter().enumerate() {
            let Some(op) = self.opc(c) else { continue };
            if !op.is_known() {
                continue;
            }
            match op {
                Opcode::PARAM if k >= nparams => {
                    self.err(
                        c,
                        "`param` after the first instruction of the proc: parameters come first",
                    );
                }
                Opcode::PARAM => {}
                Opcode::RESULT => {
                    results += 1;
                    if k + 1 != children.len() {
                        self.err(c, "`result` must be the last child of its proc");
                    }
                }
                _ if noir::is_noir_op(op) || noir::is_pure_core(op) => {}
                _ => {
                    let msg = format!(
                        "`{op}` cannot appear in a proc: a proc's body holds the NOIR instructions and the pure core operations"
                    );
                    self.err(c, msg);
                }
            }
        }
        if results != 1 {
            let msg = format!("a proc has exactly one `result`, found {results}");
            self.err(p, msg);
        }
        if let Some(sig) = &sig {
            let want = sig.get(1..).unwrap_or(&[]);
            let params = &children[..nparams];
            if params.len() != want.len() {
                let msg = format!(
                    "the proc takes {}, its type has {}",
                    plural(params.len(), "parameter"),
                    want.len()
                );
                self.err(p, msg);
            } else {
                for (k, (&pp, &w)) in params.iter().zip(want).enumerate() {
                    let got = self
                        .live(pp)
                        .and_then(|d| d.ty)
                        .and_then(|t| self.as_value_type(t));
                    if let (Some(got), Some(w)) = (got, self.as_value_type(w))
                        && got != w
                    {
                        let msg = format!(
                            "parameter {k} has type {}, expected {}",
                            self.vty_str(got),
                            self.vty_str(w)
                        );
                        self.err(pp, msg);
                    }
                }
            }
        }
        // Operands are proc-local (or module-level); active operands are values.
        for &c in &children {
            self.check_proc_operands(p, c);
        }
        match ProcGraph::new(self.m, p) {
            Err(e) => self.err(e.inst, e.message),
            Ok(g) => {
                let mut vars: Vec<(usize, usize)> =
                    g.next_count.iter().map(|(&v, &n)| (v, n)).collect();
                vars.sort_unstable();
                for (v, n) in vars {
                    if n > 1 {
                        let var = g.order[v];
                        let msg = format!(
                            "var {} is written by {n} `next`s: a var has at most one (merge them into one `next` of a `coalesce`, as irkit_core::noir::merge_nexts does)",
                            self.vname(var)
                        );
                        self.err(var, msg);
                    }
                }
            }
        }
    }

    /// Whether `v` is a local value of some function or proc (not module-level).
    fn is_local_value(&self, v: Inst) -> bool {
        let Some(vd) = self.live(v) else { return false };
        let op = vd.opcode;
        !(op.is_hoistable()
            || op.is_definition()
            || op.is_decoration()
            || op == Opcode::MODULE
            || !self.in_tree.get(v.idx()).copied().unwrap_or(false))
    }

    /// N4: every local operand of `c` (a child of proc `p`) is a parameter or body
    /// instruction of `p`, and not its `result`.
    fn check_proc_operands(&mut self, p: Inst, c: Inst) {
        let Some(d) = self.live(c) else { return };
        for (k, &v) in d.operands.iter().enumerate() {
            if !self.is_local_value(v) {
                continue;
            }
            if self.tparent[v.idx()] != Some(p) {
                let msg = format!(
                    "operand {k}: value {} is not an instruction of this proc",
                    self.vname(v)
                );
                self.err(c, msg);
            } else if self.opc(v) == Some(Opcode::RESULT) {
                self.err(c, format!("operand {k}: a `result` is not a value"));
            }
        }
    }

    /// N5, N7, N8: typing of `event`, `cue`, `var`, `next`, `case`, `phi`, `coalesce`,
    /// `result`; each only in a proc.
    pub(super) fn check_noir_inst(&mut self, i: Inst, op: Opcode) {
        let Some(p) = self.proc_of(i) else {
            self.err(i, format!("`{op}` is only allowed in a `proc`"));
            return;
        };
        let r = self.result(i);
        let ops: Vec<Inst> = self.live(i).map_or_else(Vec::new, |d| d.operands.to_vec());
        match op {
            Opcode::EVENT => {}
            Opcode::CUE => {
                if let Some(&e) = ops.first()
                    && self.opc(e) != Some(Opcode::EVENT)
                {
                    let msg = format!(
                        "`cue` needs an `event` of this proc, found {} ({})",
                        self.vname(e),
                        self.opname(e)
                    );
                    self.err(i, msg);
                }
            }
            Opcode::VAR => {
                if let (Some(v), Some(r)) = (self.val(i, 0), r) {
                    self.same_ty(i, 0, v, r);
                }
            }
            Opcode::NEXT => {
                let var = ops.first().copied();
                let var_ty = match var {
                    Some(v) if self.opc(v) == Some(Opcode::VAR) => self
                        .live(v)
                        .and_then(|d| d.ty)
                        .and_then(|t| self.as_value_type(t)),
                    Some(v) => {
                        let msg = format!(
                            "`next` writes a `var` of this proc, found {} ({})",
                            self.vname(v),
                            self.opname(v)
                        );
                        self.err(i, msg);
                        None
                    }
                    None => None,
                };
                if let (Some(v), Some(want)) = (self.val(i, 1), var_ty) {
                    self.same_ty(i, 1, v, want);
                }
            }
            Opcode::CASE => self.check_case(i, &ops),
            Opcode::PHI | Opcode::COALESCE => {
                for k in 0..ops.len() {
                    if let (Some(v), Some(r)) = (self.val(i, k), r) {
                        self.same_ty(i, k, v, r);
                    }
                }
            }
            Opcode::RESULT => self.check_result(i, p, &ops),
            _ => {}
        }
    }

    fn same_ty(&mut self, i: Inst, k: usize, got: VTy, want: VTy) {
        if got != want {
            let msg = format!(
                "operand {k} has type {}, expected {}",
                self.vty_str(got),
                self.vty_str(want)
            );
            self.err(i, msg);
        }
    }

    /// `case %x, C…`: an integer scrutinee, then distinct `const_int`s of its type.
    fn check_case(&mut self, i: Inst, ops: &[Inst]) {
        let Some(t) = self.val(i, 0) else { return };
        if self.int_w(t).is_none() {
            let msg = format!(
                "operand 0 has type {}, expected an integer type",
                self.vty_str(t)
            );
            self.err(i, msg);
            return;
        }
        let mut seen = Vec::new();
        for (k, &c) in ops.iter().enumerate().skip(1) {
            let cd = self.live(c);
            let good = cd.is_some_and(|d| {
                d.opcode == Opcode::CONST_INT && d.ty.and_then(|t| self.as_value_type(t)) == Some(t)
            });
            if !good {
                let msg = format!(
                    "case value {k} must be a `const_int` of type {}",
                    self.vty_str(t)
                );
                self.err(i, msg);
            } else if seen.contains(&c) {
                self.err(i, format!("case value {k} repeats an earlier one"));
            } else {
                seen.push(c);
            }
        }
    }

    /// `result [%v]`: a value of the proc's return type, none for `void`.
    fn check_result(&mut self, i: Inst, p: Inst, ops: &[Inst]) {
        let Some(ret) = self
            .live(p)
            .and_then(|d| d.ty)
            .filter(|&t| self.kind(t) == Kind::Fn)
            .and_then(|t| self.live(t))
            .and_then(|td| td.operands.first().copied())
        else {
            return;
        };
        match self.kind(ret) {
            Kind::Void if !ops.is_empty() => {
                self.err(i, "`result` with a value in a proc returning void");
            }
            Kind::Value if ops.is_empty() => {
                let msg = format!(
                    "`result` without a value in a proc returning {}",
                    self.ty_str(ret)
                );
                self.err(i, msg);
            }
            Kind::Value => {
                if let Some(v) = self.val(i, 0) {
                    self.same_ty(i, 0, v, VTy(Some(ret)));
                }
            }
            _ => {}
        }
    }

    /// N9: `when`/`unless` decorate a body instruction of a proc, and name parameters or body
    /// instructions of the same proc.
    pub(super) fn check_passive(&mut self, dec: Inst, owner: Inst) {
        let op = self.opc(dec).unwrap_or(Opcode::WHEN);
        let Some(p) = self.proc_of(owner) else {
            let msg = format!(
                "`{op}` (a passive dependency) is only allowed on an instruction of a `proc`, not on {}",
                self.opname(owner)
            );
            self.err(dec, msg);
            return;
        };
        if matches!(self.opc(owner), Some(Opcode::PARAM | Opcode::RESULT)) {
            let msg = format!(
                "`{op}` cannot decorate {}: only body instructions have dependencies",
                self.opname(owner)
            );
            self.err(dec, msg);
            return;
        }
        let ops: Vec<Inst> = self
            .live(dec)
            .map_or_else(Vec::new, |d| d.operands.to_vec());
        for (k, &v) in ops.iter().enumerate() {
            let good = self.tparent.get(v.idx()).copied().flatten() == Some(p)
                && self.is_local_value(v)
                && self.opc(v) != Some(Opcode::RESULT);
            if !good {
                let msg = format!(
                    "`{op}` operand {k} must be a parameter or instruction of this proc, found {} ({})",
                    self.vname(v),
                    self.opname(v)
                );
                self.err(dec, msg);
            }
        }
    }
}
