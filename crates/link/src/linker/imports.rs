//! Type checks of an import against the export it resolves to, and of declarations of one
//! unresolved symbol against each other: definition types by structure, and for generics
//! (format 1.1) an imported generic's signature, an imported witness table's conforming type
//! and an imported interface's requirements.

use irkit_core::{Inst, Module, Opcode};
use irkit_format::Ref;

use super::index::SrcDef;
use super::{Key, State};
use crate::error::LinkError;

/// An operand of a declaration, as compared between an import and its export.
#[derive(PartialEq, Eq)]
pub(super) enum DeclOperand {
    Value(Inst),
    Def(Key),
    Local,
}

/// What a generic looks like from outside (see [`State::generic_sig`]).
#[derive(PartialEq, Eq)]
pub(super) struct GenericSig {
    params: Vec<Option<Inst>>,
    ty: Option<Inst>,
    child: Option<(Opcode, Option<Inst>)>,
}

impl State<'_> {
    /// The output type of definition `src` (its root instruction's type).
    fn def_type(&mut self, out: &mut Module, src: SrcDef) -> Result<Option<Inst>, LinkError> {
        let m = src.input;
        let ty = match self.cx.facts.known(src) {
            Some(f) => f.ty,
            None => self.cx.view(m).def(src.def.index())?.root().ty(),
        };
        match ty {
            None => Ok(None),
            Some(Ref::Pool(p)) => self.pool_value(out, m, p, None).map(Some),
            // A witness table or requirement typed by its interface (a definition).
            Some(Ref::Def(i))
                if self.cx.view(m).def_opcode(i.index()) == Some(Opcode::INTERFACE) =>
            {
                Ok(self.need(out, SrcDef::new(m, i), None, false))
            }
            Some(other) => Err(LinkError::Read(irkit_format::ReadError {
                file: self.cx.file(m).into(),
                location: irkit_format::Location::Definition(src.def.index()),
                cause: irkit_format::ReadCause::Malformed(format!(
                    "the definition's type is not a pool value ({other:?})"
                )),
            })),
        }
    }

    /// A generic's signature in the output: its parameters, its own type, and what it
    /// defines (the child's opcode and type). An import's parameters name the generic it
    /// resolved to, so equal signatures are equal instructions.
    fn generic_sig(&mut self, out: &mut Module, src: SrcDef) -> Result<GenericSig, LinkError> {
        let m = src.input;
        let def = self.cx.view(m).def(src.def.index())?;
        let root = def.root();
        let pool_ref = |r: Ref, st: &mut Self, out: &mut Module| match r {
            Ref::Pool(p) => st.pool_value(out, m, p, None).map(Some),
            _ => Ok(None),
        };
        let mut params = Vec::new();
        for r in root.operands() {
            params.push(pool_ref(r, self, out)?);
        }
        let ty = match root.ty() {
            Some(r) => pool_ref(r, self, out)?,
            None => None,
        };
        let child = match root.children().next() {
            Some(c) => {
                let t = match c.ty() {
                    Some(r) => pool_ref(r, self, out)?,
                    None => None,
                };
                Some((c.opcode(), t))
            }
            None => None,
        };
        Ok(GenericSig { params, ty, child })
    }

    /// The operands of definition `src`: pool values in the output, definitions as what they
    /// resolve to.
    fn decl_operands(
        &mut self,
        out: &mut Module,
        src: SrcDef,
    ) -> Result<Vec<DeclOperand>, LinkError> {
        let m = src.input;
        let def = self.cx.view(m).def(src.def.index())?;
        let refs: Vec<Ref> = def.root().operands().collect();
        let mut ops = Vec::with_capacity(refs.len());
        for r in refs {
            ops.push(match r {
                Ref::Pool(p) => DeclOperand::Value(self.pool_value(out, m, p, None)?),
                Ref::Def(x) => DeclOperand::Def(self.resolve_ref(out, SrcDef::new(m, x))),
                Ref::Local(_) => DeclOperand::Local,
            });
        }
        Ok(ops)
    }

    fn operands_text(out: &Module, op: Option<Opcode>, ops: &[DeclOperand]) -> String {
        let parts: Vec<String> = ops
            .iter()
            .map(|o| match o {
                DeclOperand::Value(v) => irkit_core::message::value_text(out, *v),
                DeclOperand::Def(Key::Def(w)) => format!("definition {}", w.def.index()),
                DeclOperand::Def(Key::Import(n) | Key::Extern(n)) => format!("@{n}"),
                DeclOperand::Local => "a local value".to_string(),
            })
            .collect();
        let op = op.map(|o| o.to_string()).unwrap_or_default();
        format!("{op} {}", parts.join(", "))
    }

    fn sig_text(out: &Module, s: &GenericSig) -> String {
        let what = match (&s.child, s.ty) {
            (Some((op, t)), _) => format!("{op} {}", Self::type_text(out, *t)),
            (None, t) => format!("type {}", Self::type_text(out, t)),
        };
        format!(
            "generic of {} defining {what}",
            irkit_core::message::count(s.params.len(), "parameter")
        )
    }

    fn type_text(out: &Module, ty: Option<Inst>) -> String {
        match ty {
            Some(t) => irkit_core::message::value_text(out, t),
            None => "(no type)".to_string(),
        }
    }

    pub(super) fn check_import(&mut self, out: &mut Module, name: &str, imp: SrcDef, exp: SrcDef) {
        // A re-export declaration may be checked both as an import and as a link of a
        // re-export chain: once is enough.
        if !self.res.first_import_check(imp) {
            return;
        }
        let ik = self.cx.view(imp.input).def_opcode(imp.def.index());
        let ek = self.cx.view(exp.input).def_opcode(exp.def.index());
        // A function is imported as a bodyless `func` whether it is exported as a `func` or,
        // written in NOIR's blockless form, as a `proc`.
        let same_kind = ik == ek || (ik == Some(Opcode::FUNC) && ek == Some(Opcode::PROC));
        if !same_kind {
            self.errors.push(LinkError::KindMismatch {
                name: name.to_string(),
                import_file: self.cx.file(imp.input).to_string(),
                import_kind: ik.map(|k| k.to_string()).unwrap_or_default(),
                export_file: self.cx.file(exp.input).to_string(),
                export_kind: ek.map(|k| k.to_string()).unwrap_or_default(),
            });
            return;
        }
        self.res.mark_validated(exp);
        if matches!(ik, Some(Opcode::WITNESS_TABLE | Opcode::INTERFACE)) {
            // A witness table's conforming type, an interface's requirements.
            let ops = self
                .decl_operands(out, imp)
                .and_then(|a| Ok((a, self.decl_operands(out, exp)?)));
            match ops {
                Err(e) => self.errors.push(e),
                Ok((a, b)) if a != b => self.errors.push(LinkError::TypeMismatch {
                    name: name.to_string(),
                    import_file: self.cx.file(imp.input).to_string(),
                    import_ty: Self::operands_text(out, ik, &a),
                    export_file: self.cx.file(exp.input).to_string(),
                    export_ty: Self::operands_text(out, ek, &b),
                }),
                Ok(_) => {}
            }
        }
        if ik == Some(Opcode::GENERIC) {
            let sigs = self
                .generic_sig(out, imp)
                .and_then(|a| Ok((a, self.generic_sig(out, exp)?)));
            match sigs {
                Err(e) => self.errors.push(e),
                Ok((a, b)) if a != b => self.errors.push(LinkError::TypeMismatch {
                    name: name.to_string(),
                    import_file: self.cx.file(imp.input).to_string(),
                    import_ty: Self::sig_text(out, &a),
                    export_file: self.cx.file(exp.input).to_string(),
                    export_ty: Self::sig_text(out, &b),
                }),
                Ok(_) => {}
            }
            return;
        }
        let types = self
            .def_type(out, imp)
            .and_then(|a| Ok((a, self.def_type(out, exp)?)));
        match types {
            Err(e) => self.errors.push(e),
            Ok((a, b)) if a != b => self.errors.push(LinkError::TypeMismatch {
                name: name.to_string(),
                import_file: self.cx.file(imp.input).to_string(),
                import_ty: Self::type_text(out, a),
                export_file: self.cx.file(exp.input).to_string(),
                export_ty: Self::type_text(out, b),
            }),
            Ok(_) => {}
        }
    }

    /// Checks a declaration of an unresolved import or C symbol against the first one seen.
    pub(super) fn check_decl(&mut self, out: &mut Module, key: &Key, src: SrcDef) {
        let ty = match self.def_type(out, src) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(e);
                return;
            }
        };
        let Some((first, t0)) = self.res.first_decl(key, src, ty) else {
            return;
        };
        if t0 != ty {
            let name = match key {
                Key::Import(n) | Key::Extern(n) => n.to_string(),
                Key::Def(..) => String::new(),
            };
            self.errors.push(LinkError::DeclarationMismatch {
                name,
                first_file: self.cx.file(first.input).to_string(),
                first_ty: Self::type_text(out, t0),
                second_file: self.cx.file(src.input).to_string(),
                second_ty: Self::type_text(out, ty),
            });
        }
    }
}
