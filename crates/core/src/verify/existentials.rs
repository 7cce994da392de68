//! Existentials (spec/ir.md, "Existentials"): `pack` makes a value of `exists @I` from a value
//! and a witness table of its type for `@I`; `exists_call` calls a requirement of `@I` on one,
//! the existential standing for the requirement's `Self` parameter (its first, and only
//! `Self`); `exists_open` calls a generic function at the type inside one. The type
//! `exists @I` itself is a value type (types.rs).

use crate::{Inst, Op, Opcode};

use super::{Cx, VTy};

impl Cx<'_> {
    /// The interface of existential type `t` (`exists @I` -> `@I`).
    fn exists_interface(&self, t: Option<Inst>) -> Option<Inst> {
        let t = t?;
        let d = self.live(t)?;
        (d.opcode == Opcode::EXISTS).then(|| d.operands.first().copied())?
    }

    /// E1–E3 of spec/ir.md.
    pub(super) fn check_existential(&mut self, i: Inst, op: Op, r: Option<VTy>) {
        let Some(d) = self.live(i) else { return };
        if self.block_of.get(i.idx()).copied().flatten().is_none() {
            let msg = format!("{} belongs in a function's block", self.opname(i));
            self.err(i, msg);
        }
        match op {
            Op::Pack => {
                let Some(&w) = d.operands.get(1) else { return };
                if !self.is_top(w, Opcode::WITNESS_TABLE) {
                    let msg = format!(
                        "`pack` names {}, which is not a `witness_table`",
                        self.gname(w)
                    );
                    self.err(i, msg);
                    return;
                }
                let Some(wd) = self.live(w) else { return };
                let (iface, conforming) = (wd.ty, wd.operands.first().copied());
                if let (Some(got), Some(c)) = (self.val(i, 0), conforming)
                    && let Some(want) = self.as_value_type(c)
                    && got != want
                {
                    let msg = format!(
                        "`pack` of a value of type {} with a witness table of {}",
                        self.vty_str(got),
                        self.vty_str(want)
                    );
                    self.err(i, msg);
                }
                let result_iface = self.exists_interface(r.and_then(|v| v.0));
                if result_iface.is_none() || result_iface != iface {
                    self.err(
                        i,
                        "the result of `pack` must be `exists` of the witness table's interface",
                    );
                }
            }
            Op::ExistsCall => {
                let Some(e) = self.val(i, 0) else { return };
                let Some(iface) = self.exists_interface(e.0) else {
                    let msg = format!(
                        "`exists_call` on a value of type {}, not `exists`",
                        self.vty_str(e)
                    );
                    self.err(i, msg);
                    return;
                };
                let Some(&req) = d.operands.get(1) else {
                    return;
                };
                let listed = self.live(iface).is_some_and(|x| x.operands.contains(&req));
                if !listed {
                    let msg = format!(
                        "`exists_call` names {}, which is not a requirement of {}",
                        self.gname(req),
                        self.gname(iface)
                    );
                    self.err(i, msg);
                    return;
                }
                let Some((ret, params)) =
                    self.live(req).and_then(|x| x.ty).and_then(|t| self.sig(t))
                else {
                    return;
                };
                let self_first = params.first() == Some(&iface);
                let self_elsewhere = ret == iface || params.iter().skip(1).any(|&p| p == iface);
                if !self_first || self_elsewhere {
                    let msg = format!(
                        "requirement {} cannot be called on an existential: `Self` must be its first parameter and nowhere else",
                        self.gname(req)
                    );
                    self.err(i, msg);
                    return;
                }
                self.check_args(i, 2, &params[1..], Some(req));
                self.check_call_result(i, ret, r);
            }
            Op::ExistsOpen => self.check_open(i, r),
            _ => {}
        }
    }

    /// E4: `exists_open @g, %e, args…` calls generic function `@g` (parameters: a type `T`
    /// and a witness that `T` conforms to `%e`'s interface) at the type inside `%e`, with the
    /// value inside as its first argument; no other parameter nor the result mentions `T`.
    fn check_open(&mut self, i: Inst, r: Option<VTy>) {
        let Some(d) = self.live(i) else { return };
        let Some(&g) = d.operands.first() else { return };
        let Some(e) = self.val(i, 1) else { return };
        let Some(iface) = self.exists_interface(e.0) else {
            let msg = format!(
                "`exists_open` of a value of type {}, not `exists`",
                self.vty_str(e)
            );
            self.err(i, msg);
            return;
        };
        let shape = self
            .is_top(g, Opcode::GENERIC)
            .then(|| self.live(g))
            .flatten()
            .and_then(|gd| {
                let [t, w] = gd.operands[..] else { return None };
                let wd = self.live(w)?;
                let ok = self.opc(t) == Some(Opcode::TYPE_PARAM)
                    && wd.opcode == Opcode::WITNESS_PARAM
                    && wd.ty == Some(iface);
                let f = *gd.children().first()?;
                let fty = self.live(f).filter(|fd| fd.opcode == Opcode::FUNC)?.ty?;
                ok.then_some((t, fty))
            });
        let Some((t, fty)) = shape else {
            let msg = format!(
                "`exists_open` names {}, which is not a generic function of a type and its conformance to {}",
                self.gname(g),
                self.gname(iface)
            );
            self.err(i, msg);
            return;
        };
        let Some((ret, params)) = self.sig(fty) else {
            return;
        };
        let mentions = |x: Inst| x == t || self.live(x).is_some_and(|xd| xd.parent == Some(g));
        if params.first() != Some(&t)
            || mentions(ret)
            || params.iter().skip(1).any(|&p| mentions(p))
        {
            let msg = format!(
                "`exists_open` calls {}, whose first parameter must be its type parameter, and nothing else of its type built from it",
                self.gname(g)
            );
            self.err(i, msg);
            return;
        }
        self.check_args(i, 2, &params[1..], Some(g));
        self.check_call_result(i, ret, r);
    }
}
