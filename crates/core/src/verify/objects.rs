//! Objects (spec/ir.md, "Objects", rules O1–O6): the `class`, `trait` and `object`
//! definitions with their supertypes and members, and the typing of the object instructions.
//! Whether a named field or method exists is the linker's to check: it may be inherited from a
//! class of another module.

use std::collections::HashSet;

use crate::{Inst, Op, Opcode};

use super::{Cx, Kind, VTy};

impl Cx<'_> {
    /// Whether `d` is a top-level definition with opcode `op`.
    pub(super) fn is_top(&self, d: Inst, op: Opcode) -> bool {
        self.opc(d) == Some(op) && self.is_top_def(d)
    }

    /// O1, O2: a `class`, `trait` or `object` at module level, its supertypes and its members.
    pub(super) fn check_object_def(&mut self, c: Inst, op: Opcode) {
        let Some(d) = self.live(c) else { return };
        let what = format!("{} {}", self.opname(c), self.vname(c));
        if !self.is_top_def(c) {
            self.err(c, format!("{what} must be a child of the module"));
        }
        let mut seen = HashSet::new();
        for (k, &s) in d.operands.iter().enumerate() {
            let class = self.is_top(s, Opcode::CLASS);
            let ok = if op == Opcode::TRAIT {
                self.is_top(s, Opcode::TRAIT)
            } else {
                self.is_top(s, Opcode::TRAIT) || (class && k == 0)
            };
            if !ok {
                let want = match op {
                    _ if op == Opcode::TRAIT => "a top-level `trait`",
                    _ if k == 0 => "a top-level `class` (the parent) or `trait`",
                    _ => "a top-level `trait` (only operand 0 may be the parent class)",
                };
                let msg = format!(
                    "supertype {k} of {what} must be {want}, found {} ({})",
                    self.vname(s),
                    self.opname(s)
                );
                self.err(c, msg);
            } else if !seen.insert(s) {
                let msg = format!("supertype {} is listed twice", self.vname(s));
                self.err(c, msg);
            }
        }
        let imported = self.is_imported(c);
        let mut names = HashSet::new();
        let mut selectors = HashSet::new();
        let mut ctors = 0;
        for m in self.tree_children(c) {
            let Some(md) = self.live(m) else { continue };
            let name = md.payload.as_str().unwrap_or("");
            let fresh = match md.opcode {
                Opcode::FIELD_DEF if op != Opcode::TRAIT => names.insert(name),
                Opcode::METHOD_DEF => selectors.insert(name),
                Opcode::CTOR_DEF if op == Opcode::OBJECT => {
                    ctors += 1;
                    ctors == 1
                }
                _ => {
                    let allowed = match op {
                        _ if op == Opcode::TRAIT => "`method_def`s",
                        _ if op == Opcode::OBJECT => "`field_def`s, `method_def`s and a `ctor_def`",
                        _ => "`field_def`s and `method_def`s",
                    };
                    let msg = format!(
                        "the members of {what} are {allowed}, found {}",
                        self.opname(m)
                    );
                    self.err(m, msg);
                    continue;
                }
            };
            if !fresh {
                let msg = match md.opcode {
                    Opcode::FIELD_DEF => format!("field \"{name}\" is declared twice"),
                    Opcode::METHOD_DEF => format!("method \"{name}\" is declared twice"),
                    _ => "an `object` has at most one `ctor_def`".to_owned(),
                };
                self.err(m, msg);
            }
            if imported {
                let msg = format!(
                    "{what} is imported: it declares no members (its definition, in the module that exports it, does)"
                );
                self.err(m, msg);
            }
        }
    }

    /// O2–O5: a member, under a `class`, `trait` or `object`.
    pub(super) fn check_member(&mut self, m: Inst, op: Op) {
        let Some(d) = self.live(m) else { return };
        let parent = self.tparent.get(m.idx()).copied().flatten();
        let owner = parent.and_then(|p| self.opc(p));
        if !matches!(owner, Some(Opcode::CLASS | Opcode::TRAIT | Opcode::OBJECT)) {
            let msg = format!(
                "{} is a member of a `class`, `trait` or `object`, not of {}",
                self.opname(m),
                parent.map_or_else(|| "nothing".to_owned(), |p| self.opname(p))
            );
            self.err(m, msg);
        }
        let named = d.payload.as_str().is_some_and(|s| !s.is_empty());
        match op {
            Op::FieldDef => {
                if !named {
                    self.err(m, "a `field_def` needs a non-empty name");
                }
                let t = d.operands[0];
                if self.kind(t) != Kind::Value || self.is_interface(t) {
                    let msg = format!(
                        "a field's type must be a value type, found {}",
                        self.gname(t)
                    );
                    self.err(m, msg);
                }
            }
            Op::MethodDef => {
                if !named {
                    self.err(m, "a `method_def` needs a non-empty selector");
                }
                let sig = d.operands[0];
                let receiver = self
                    .sig(sig)
                    .and_then(|(_, params)| params.first().copied());
                if receiver.is_none_or(|p| self.opc(p) != Some(Opcode::PTR)) {
                    let msg = format!(
                        "a method's signature must be a fn type whose first parameter is `ptr` (the receiver), found {}",
                        self.gname(sig)
                    );
                    self.err(m, msg);
                }
                if let Some(&f) = d.operands.get(1) {
                    self.need_func_of(m, f, sig, "implementation");
                }
            }
            Op::CtorDef => {
                let f = d.operands[0];
                let ok = self.is_top(f, Opcode::FUNC)
                    && self
                        .live(f)
                        .and_then(|fd| fd.ty)
                        .and_then(|t| self.sig(t))
                        .is_some_and(|(ret, params)| {
                            self.kind(ret) == Kind::Void
                                && params.len() == 1
                                && self.opc(params[0]) == Some(Opcode::PTR)
                        });
                if !ok {
                    let msg = format!(
                        "a constructor must be a top-level `func` of type fn(ptr) -> void, found {}",
                        self.gname(f)
                    );
                    self.err(m, msg);
                }
            }
            _ => {}
        }
    }

    /// `f` must be a top-level `func` of type `sig`.
    fn need_func_of(&mut self, m: Inst, f: Inst, sig: Inst, what: &str) {
        let ty = self.live(f).and_then(|fd| fd.ty);
        if !self.is_top(f, Opcode::FUNC) {
            let msg = format!(
                "the {what} must be a top-level `func`, found {}",
                self.gname(f)
            );
            self.err(m, msg);
        } else if ty != Some(sig) {
            let msg = format!(
                "the {what} {} has type {}, not the method's signature {}",
                self.vname(f),
                ty.map_or_else(|| "none".to_owned(), |t| self.ty_str(t)),
                self.ty_str(sig)
            );
            self.err(m, msg);
        }
    }

    /// O6: an object instruction in a body.
    pub(super) fn check_object_inst(&mut self, i: Inst, op: Op, r: Option<VTy>) {
        let Some(d) = self.live(i) else { return };
        if self.block_of.get(i.idx()).copied().flatten().is_none() {
            let msg = format!("{} belongs in a function's block", self.opname(i));
            self.err(i, msg);
        }
        let def = |k: usize| d.operands.get(k).copied();
        let (target, allowed): (Option<Inst>, &[Opcode]) = match op {
            Op::Classalloc => (def(0), &[Opcode::CLASS]),
            Op::Field => (def(0), &[Opcode::CLASS, Opcode::OBJECT]),
            Op::Method => (def(1), &[Opcode::CLASS, Opcode::OBJECT, Opcode::TRAIT]),
            Op::Is | Op::As => (def(0), &[Opcode::CLASS, Opcode::OBJECT, Opcode::TRAIT]),
            Op::Instance => (def(0), &[Opcode::OBJECT]),
            _ => (None, &[]),
        };
        if let Some(t) = target
            && !allowed.iter().any(|&a| self.is_top(t, a))
        {
            let names: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
            let msg = format!(
                "{} names {}, which is not a top-level {}",
                self.opname(i),
                self.gname(t),
                names.join(" or ")
            );
            self.err(i, msg);
        }
        let object = match op {
            Op::Field | Op::Is | Op::As => Some(1),
            Op::Method | Op::Dynmethod => Some(0),
            _ => None,
        };
        if let Some(k) = object {
            self.ptr_operand(i, k);
        }
        if matches!(op, Op::Field | Op::Method | Op::Dynmethod)
            && d.payload.as_str().is_none_or(str::is_empty)
        {
            let what = if op == Op::Field { "name" } else { "selector" };
            let msg = format!("{} needs a non-empty {what}", self.opname(i));
            self.err(i, msg);
        }
        if op == Op::Is {
            self.res_i1(i, r);
        } else {
            self.res_ptr(i, r);
        }
    }
}
