//! Generic functions on the builder: a `generic` with its type parameters in one call, the
//! `func` it defines, and the `specialize` of it for given type arguments, whose signature the
//! builder computes by substituting the arguments (spec/ir.md, "Generics"). Witness parameters
//! and generic types and witness tables are built with the module's primitives
//! ([`Module::intern`], [`Module::new_inst`]).

use std::collections::HashMap;

use crate::{CoreError, Inst, Module, Opcode, Payload};

use super::Builder;

impl Builder<'_> {
    /// A new top-level `generic` named `name` with `type_params` type parameters: returns it and
    /// its parameters (`type_param 0 @g`, `type_param 1 @g`, …), which are types to use in the
    /// signature of what it defines ([`Builder::generic_func`]).
    pub fn generic(
        &mut self,
        name: &str,
        type_params: usize,
    ) -> Result<(Inst, Vec<Inst>), CoreError> {
        let g = self.definition(Opcode::GENERIC, name, None, Vec::new())?;
        let params = (0..type_params as u64)
            .map(|k| {
                self.m
                    .intern(Opcode::TYPE_PARAM, None, &[g], Payload::Int(k))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.m.set_operands(g, params.clone())?;
        Ok((g, params))
    }

    /// The `func` the generic `g` defines, with signature `sig` (in terms of its parameters);
    /// give it a body with [`Builder::entry_block`], or none if the generic is imported.
    pub fn generic_func(&mut self, g: Inst, sig: Inst) -> Result<Inst, CoreError> {
        if self.m.get(g).map(|d| d.opcode()) != Some(Opcode::GENERIC) {
            return Err(CoreError::WrongKind {
                opcode: self.m.get(g).map_or(Opcode::MODULE, |d| d.opcode()),
                what: "is not a generic: only a generic defines a generic function",
            });
        }
        let f = self
            .m
            .new_inst(Opcode::FUNC, Some(sig), Vec::new(), Payload::None)?;
        self.m.append_child(g, f)?;
        Ok(f)
    }

    /// `specialize @g, args…` for a generic function `g` whose parameters are all type
    /// parameters: its type is the function's signature with `args` substituted. The result is
    /// a callee for [`Ins::call`](super::Ins::call).
    pub fn specialize(&mut self, g: Inst, args: &[Inst]) -> Result<Inst, CoreError> {
        let wrong = |what| CoreError::WrongKind {
            opcode: Opcode::GENERIC,
            what,
        };
        if self.m.get(g).map(|d| d.opcode()) != Some(Opcode::GENERIC) {
            return Err(wrong("is not what `specialize` names here: pass a generic"));
        }
        let params = self.m.operands(g).to_vec();
        if params.len() != args.len() {
            return Err(wrong(
                "is given a different number of arguments than parameters",
            ));
        }
        if params
            .iter()
            .any(|&p| self.m.opcode(p) != Opcode::TYPE_PARAM)
        {
            return Err(wrong(
                "has a witness parameter: build its `specialize` with intern",
            ));
        }
        let func = self.m.children(g).first().copied();
        let sig = func
            .filter(|&f| self.m.opcode(f) == Opcode::FUNC)
            .and_then(|f| self.m.ty(f))
            .ok_or(wrong("defines no function"))?;
        let subst: HashMap<Inst, Inst> = params.into_iter().zip(args.iter().copied()).collect();
        let ty = substitute(self.m, sig, &subst)?;
        let mut ops = vec![g];
        ops.extend_from_slice(args);
        self.m
            .intern(Opcode::SPECIALIZE, Some(ty), &ops, Payload::None)
    }
}

/// `ty` with each type of `subst`'s keys replaced by its value, rebuilt bottom-up with an
/// explicit stack (types are acyclic and at most [`MAX_NESTING`](crate::MAX_NESTING) deep;
/// each distinct type is rebuilt once).
fn substitute(m: &mut Module, ty: Inst, subst: &HashMap<Inst, Inst>) -> Result<Inst, CoreError> {
    let mut done: HashMap<Inst, Inst> = subst.clone();
    let mut stack = vec![ty];
    while let Some(&t) = stack.last() {
        if done.contains_key(&t) {
            stack.pop();
            continue;
        }
        if !m.opcode(t).is_type() || m.opcode(t) == Opcode::TYPE_PARAM {
            stack.pop();
            done.insert(t, t);
            continue;
        }
        let ops = m.operands(t).to_vec();
        let pending: Vec<Inst> = ops
            .iter()
            .copied()
            .filter(|o| !done.contains_key(o))
            .collect();
        if !pending.is_empty() {
            stack.extend(pending);
            continue;
        }
        stack.pop();
        let new_ops: Vec<Inst> = ops.iter().map(|o| done[o]).collect();
        let rebuilt = if new_ops == ops {
            t
        } else {
            let payload = m.payload(t).clone();
            m.intern(m.opcode(t), None, &new_ops, payload)?
        };
        done.insert(t, rebuilt);
    }
    Ok(done[&ty])
}
