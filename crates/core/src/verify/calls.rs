//! Calls and terminators: arguments against the callee's signature, results, `ret` against
//! the function's type, branch targets and the arguments each edge passes to its block.

use std::collections::HashMap;

use crate::edges::Edge;
use crate::{Inst, Opcode};

use super::{Cx, Kind, VTy, plural};

impl<'m> Cx<'m> {
    /// `(ret, params)` of a well-formed fn type.
    pub(super) fn sig(&self, t: Inst) -> Option<(Inst, &'m [Inst])> {
        if self.kind(t) != Kind::Fn {
            return None;
        }
        let d = self.live(t)?;
        Some((*d.operands.first()?, &d.operands[1..]))
    }

    /// Arguments `first..` of `i` against `params`; `callee` is the called `func` (named in
    /// messages), or `None` for a call through a signature.
    pub(super) fn check_args(
        &mut self,
        i: Inst,
        first: usize,
        params: &[Inst],
        callee: Option<Inst>,
    ) {
        let n = self.live(i).map_or(0, |d| d.operands.len());
        let nargs = n.saturating_sub(first);
        if nargs != params.len() {
            let callee = match callee {
                Some(c) => self.vname(c),
                None => "the signature".to_owned(),
            };
            self.err(
                i,
                format!(
                    "call passes {}, {callee} takes {}",
                    plural(nargs, "argument"),
                    params.len()
                ),
            );
            return;
        }
        for (a, &p) in params.iter().enumerate() {
            let Some(got) = self.val(i, first + a) else {
                continue;
            };
            let Some(want) = self.as_value_type(p) else {
                continue;
            };
            if got != want {
                let msg = format!(
                    "argument {a} has type {}, expected {}",
                    self.vty_str(got),
                    self.vty_str(want)
                );
                self.err(i, msg);
            }
        }
    }

    /// The result of a call against the callee's return type.
    pub(super) fn check_call_result(&mut self, i: Inst, ret: Inst, r: Option<VTy>) {
        let Some(ty) = self.live(i).map(|d| d.ty) else {
            return;
        };
        match self.kind(ret) {
            Kind::Void if ty.is_some() => {
                self.err(i, "call of a function returning void has a result type");
            }
            Kind::Value => match (ty, r) {
                (None, _) => {
                    let msg = format!("call has no result type, expected {}", self.ty_str(ret));
                    self.err(i, msg);
                }
                (Some(_), Some(r)) => {
                    self.need_res_eq(i, r, VTy(Some(ret)));
                }
                _ => {}
            },
            _ => {}
        }
    }

    pub(super) fn check_call(&mut self, i: Inst, r: Option<VTy>) {
        let Some(&callee) = self.live(i).and_then(|d| d.operands.first()) else {
            return;
        };
        let Some(cd) = self.live(callee) else { return };
        // A specialized generic function and a witness lookup are called directly too: their
        // type is the signature (already checked against the generic or the requirement).
        let direct = match cd.opcode {
            Opcode::FUNC | Opcode::PROC => true,
            Opcode::SPECIALIZE | Opcode::LOOKUP_WITNESS => {
                cd.ty.is_some_and(|t| self.kind(t) == Kind::Fn)
            }
            _ => false,
        };
        if !direct {
            let msg = format!(
                "operand 0 (the callee) must be a `func`, a `proc`, a specialized generic function or a `lookup_witness`, found {} ({})",
                self.vname(callee),
                self.opname(callee)
            );
            self.err(i, msg);
            return;
        }
        let Some((ret, params)) = cd.ty.and_then(|t| self.sig(t)) else {
            return;
        };
        self.check_args(i, 1, params, Some(callee));
        self.check_call_result(i, ret, r);
    }

    pub(super) fn check_call_indirect(&mut self, i: Inst, r: Option<VTy>) {
        if let Some(ret) = self.check_indirect_callee(i) {
            self.check_call_result(i, ret, r);
        }
    }

    /// What `call_indirect` and `tail_call_indirect` (`i`) share: operand 0 is a `fn` type,
    /// operand 1 a pointer, the arguments after them match the signature. The signature's
    /// return type, when it is one.
    pub(super) fn check_indirect_callee(&mut self, i: Inst) -> Option<Inst> {
        let &s = self.live(i).and_then(|d| d.operands.first())?;
        let sig = match self.kind(s) {
            Kind::Fn => self.sig(s),
            Kind::Bad => None,
            _ => {
                let msg = format!(
                    "operand 0 (the signature) must be a fn type, found {}",
                    if self.opc(s).is_some_and(|o| o.is_type()) {
                        self.ty_str(s)
                    } else {
                        format!("{} ({})", self.vname(s), self.opname(s))
                    }
                );
                self.err(i, msg);
                None
            }
        };
        self.ptr_operand(i, 1);
        let (ret, params) = sig?;
        self.check_args(i, 2, params, None);
        Some(ret)
    }

    pub(super) fn check_ret(&mut self, i: Inst) {
        let Some(f) = self.func_of.get(i.idx()).copied().flatten() else {
            return;
        };
        let Some((ret, _)) = self.live(f).and_then(|d| d.ty).and_then(|t| self.sig(t)) else {
            return;
        };
        let n = self.live(i).map_or(0, |d| d.operands.len());
        match self.kind(ret) {
            Kind::Void if n != 0 => {
                self.err(i, "`ret` with a value in a function returning void");
            }
            Kind::Value => {
                if n == 0 {
                    let msg = format!(
                        "`ret` without a value in a function returning {}",
                        self.ty_str(ret)
                    );
                    self.err(i, msg);
                } else if let Some(v) = self.val(i, 0)
                    && v != VTy(Some(ret))
                {
                    let msg = format!(
                        "`ret` value has type {}, expected {}",
                        self.vty_str(v),
                        self.ty_str(ret)
                    );
                    self.err(i, msg);
                }
            }
            _ => {}
        }
    }

    /// `jump`, `br` and `switch`: targets, edge arguments, condition and case values. The
    /// edges are where the registry's operand roles put them ([`crate::edges::branch`]).
    pub(super) fn check_branch(&mut self, i: Inst, op: Opcode) {
        let ops: &[Inst] = self.live(i).map_or(&[], |d| &d.operands);
        let Some(branch) = crate::edges::branch(op, ops, |o| self.opc(o) == Some(Opcode::BLOCK))
        else {
            return;
        };
        let cases = ops.get(branch.run).unwrap_or(&[]);
        let edges: Vec<Edge> = branch.edges.collect();
        match op {
            Opcode::JUMP => {
                let Some(e) = edges.first() else { return };
                // I4: one edge (a first operand that is no block is check_edge's to report).
                if edges.len() > 1 && self.opc(e.target) == Some(Opcode::BLOCK) {
                    let msg = format!("`jump` needs one target block, found {}", edges.len());
                    self.err(i, msg);
                    return;
                }
                self.check_edge(i, e.at, e.args.clone());
            }
            Opcode::BR => {
                if let Some(c) = self.val(i, 0) {
                    let ok = self.is_i1(c);
                    self.need(i, 0, c, ok, "i1");
                }
                let then = edges.first().map(|e| e.target);
                if then.is_none_or(|t| self.opc(t) != Some(Opcode::BLOCK)) {
                    let found = then.map_or_else(|| "nothing".to_owned(), |t| self.opname(t));
                    let msg =
                        format!("operand 1 (the `then` target) must be a block, found {found}");
                    self.err(i, msg);
                    return;
                }
                if edges.len() != 2 {
                    self.err(
                        i,
                        format!("`br` needs two target blocks, found {}", edges.len()),
                    );
                    return;
                }
                for e in edges {
                    self.check_edge(i, e.at, e.args);
                }
            }
            _ => {
                // switch
                let scrut = self.val(i, 0);
                let scrut = scrut.filter(|&v| {
                    let ok = self.int_w(v).is_some();
                    self.need(i, 0, v, ok, "an integer type")
                });
                if edges.is_empty() {
                    self.err(i, "`switch` needs a default target block");
                    return;
                }
                let ncases = cases.len();
                if edges.len() - 1 != ncases {
                    self.err(
                        i,
                        format!(
                            "`switch` has {} but {}",
                            plural(ncases, "case value"),
                            plural(edges.len() - 1, "case target")
                        ),
                    );
                }
                // The first case of each value, by value: one look-up per case (I3).
                let mut first: HashMap<u64, usize> = HashMap::with_capacity(ncases);
                for (c, &cv) in cases.iter().enumerate() {
                    let Some(cd) = self.live(cv) else { continue };
                    if cd.opcode != Opcode::CONST_INT {
                        let msg = format!(
                            "case value {c} must be a const_int, found {} ({})",
                            self.vname(cv),
                            self.opname(cv)
                        );
                        self.err(i, msg);
                        continue;
                    }
                    let ct = cd.ty.and_then(|t| self.as_value_type(t));
                    if let (Some(ct), Some(s)) = (ct, scrut)
                        && ct != s
                    {
                        let msg = format!(
                            "case value {c} has type {}, expected {}",
                            self.vty_str(ct),
                            self.vty_str(s)
                        );
                        self.err(i, msg);
                        continue;
                    }
                    let v = cd.payload.as_int().unwrap_or(0);
                    if let Some(&prev) = first.get(&v) {
                        let shown = match ct {
                            Some(t) => crate::payload::sign_extend(v, self.int_w(t).unwrap_or(64))
                                .to_string(),
                            None => v.to_string(),
                        };
                        self.err(
                            i,
                            format!("case value {c} duplicates case value {prev} ({shown})"),
                        );
                    } else {
                        first.insert(v, c);
                    }
                }
                for e in edges {
                    self.check_edge(i, e.at, e.args);
                }
            }
        }
    }

    /// One edge: operand `t` is the target, operands `args` its arguments.
    pub(super) fn check_edge(&mut self, i: Inst, t: usize, args: std::ops::Range<usize>) {
        let Some(&target) = self.live(i).and_then(|d| d.operands.get(t)) else {
            return;
        };
        let f = self.func_of.get(i.idx()).copied().flatten();
        let td = self.live(target);
        let is_block = td.is_some_and(|d| d.opcode == Opcode::BLOCK);
        if !is_block {
            let msg = format!(
                "operand {t} (a branch target) must be a block, found {} ({})",
                self.vname(target),
                self.opname(target)
            );
            self.err(i, msg);
            return;
        }
        if f.is_none() || self.tparent.get(target.idx()).copied().flatten() != f {
            let msg = format!(
                "branch target {} is not a block of this function",
                self.vname(target)
            );
            self.err(i, msg);
            return;
        }
        if f.and_then(|f| self.entry_of(f)) == Some(target) {
            let msg = format!("branch to the entry block {}", self.vname(target));
            self.err(i, msg);
        }
        let params = self.params_of(target);
        if args.len() != params.len() {
            let name = self.vname(target);
            let msg = format!(
                "branch to {name} passes {}, the block takes {}",
                plural(args.len(), "argument"),
                params.len()
            );
            self.err(i, msg);
            return;
        }
        for (a, (k, &p)) in args.zip(params.iter()).enumerate() {
            let Some(got) = self.val(i, k) else { continue };
            let Some(want) = self
                .live(p)
                .and_then(|d| d.ty)
                .and_then(|t| self.as_value_type(t))
            else {
                continue;
            };
            if got != want {
                let msg = format!(
                    "argument {a} to {} has type {}, expected {}",
                    self.vname(target),
                    self.vty_str(got),
                    self.vty_str(want)
                );
                self.err(i, msg);
            }
        }
    }
}
