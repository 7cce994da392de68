//! Named types and constants (`%t = …`, `@t = …`): interned in dependency order, in the scope
//! they are written in.

use irkit_core::{Inst, Opcode, Payload, PayloadKind};

use super::{Binding, Build, Local, collect_refs};
use crate::ast::{ConstValue, PayloadLit, Stmt, StmtKind};
use crate::error::Pos;

impl Build {
    /// Pass 2: interns the module-scope types and constants `stmts` (in declaration order).
    pub(super) fn intern_module_hoists(&mut self, stmts: &[&Stmt]) {
        for (idx, cyclic) in self.hoist_order(stmts, None) {
            let v = self.intern_named(stmts[idx], cyclic, None);
            if let Some(slot) = self.module_hoists.get_mut(idx) {
                *slot = v;
            }
        }
    }

    /// Interns the types and constants of the item of `local`.
    pub(super) fn intern_local_hoists(&mut self, local: &mut Local) {
        let hoists = std::mem::take(&mut local.hoists);
        let stmts: Vec<&Stmt> = hoists.iter().collect();
        for (idx, cyclic) in self.hoist_order(&stmts, Some(local)) {
            let v = self.intern_named(stmts[idx], cyclic, Some(local));
            local.hoist_values[idx] = v;
        }
    }

    /// The value of named type or constant `stmt` (`None` after an error).
    pub(super) fn intern_named(
        &mut self,
        stmt: &Stmt,
        cyclic: bool,
        local: Option<&Local>,
    ) -> Option<Inst> {
        let v = if cyclic {
            let name = stmt
                .result
                .as_ref()
                .map_or_else(String::new, |r| format!("`{}` ", r.name.display()));
            self.error(stmt.pos, format!("{name}is defined in terms of itself"));
            None
        } else {
            self.intern_hoist(stmt, local)
                .filter(|&v| self.lives_where_written(stmt, v, local.map(|l| l.owner)))
        };
        self.hoist_pos.push((v, stmt.pos));
        v
    }

    /// The indices of `stmts`, each after the ones it names (a dependency order), and whether
    /// each is part of a cycle. An explicit-stack depth-first search.
    pub(super) fn hoist_order(&self, stmts: &[&Stmt], local: Option<&Local>) -> Vec<(usize, bool)> {
        let n = stmts.len();
        let deps = |idx: usize| self.hoist_deps(stmts[idx], local);
        let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
        let mut cyclic = vec![false; n];
        let mut order = Vec::with_capacity(n);
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            state[start] = 1;
            let mut stack = vec![(start, deps(start), 0usize)];
            while let Some((node, ds, k)) = stack.last_mut() {
                if let Some(&d) = ds.get(*k) {
                    *k += 1;
                    match state.get(d) {
                        Some(0) => {
                            state[d] = 1;
                            stack.push((d, deps(d), 0));
                        }
                        Some(1) => cyclic[d] = true,
                        _ => {}
                    }
                } else {
                    state[*node] = 2;
                    order.push(*node);
                    stack.pop();
                }
            }
        }
        order.into_iter().map(|i| (i, cyclic[i])).collect()
    }

    /// The types and constants of the same scope that `stmt`'s operands and type name.
    pub(super) fn hoist_deps(&self, stmt: &Stmt, local: Option<&Local>) -> Vec<usize> {
        let mut refs = Vec::new();
        match &stmt.kind {
            StmtKind::Alias(o) => collect_refs(o, &mut refs),
            StmtKind::Inst { operands, .. } => {
                if let Some(t) = stmt.result.as_ref().and_then(|r| r.ty.as_ref()) {
                    collect_refs(t, &mut refs);
                }
                for o in operands {
                    collect_refs(o, &mut refs);
                }
            }
        }
        refs.into_iter()
            .filter_map(|n| match (self.lookup(local, n), local.is_some()) {
                (Some(Binding::Hoist(j)), false) | (Some(Binding::LocalHoist(j)), true) => {
                    Some(j as usize)
                }
                _ => None,
            })
            .collect()
    }

    /// Whether hoisted value `v` of `stmt` lives in the scope the statement is written in (the
    /// item of `owner`), or in the module scope (which every scope sees). A value whose operands
    /// place it in another definition's scope (`type_param 0 @g` written in the body of
    /// `@h`) could not be printed where it was written, so the text is refused.
    pub(super) fn lives_where_written(
        &mut self,
        stmt: &Stmt,
        v: Inst,
        owner: Option<Inst>,
    ) -> bool {
        let root = self.m.root();
        let Some(home) = self.m.parent(v).filter(|&p| p != root) else {
            return true;
        };
        // The top-level instruction `home` is in (the tree is at most the parser's nesting
        // bound deep, and the walk is bounded anyway).
        let mut top = home;
        for _ in 0..=crate::MAX_DEPTH {
            match self.m.parent(top) {
                Some(p) if p != root => top = p,
                _ => break,
            }
        }
        if owner == Some(top) {
            return true;
        }
        let owner = irkit_core::place::def_label(&self.m, top);
        let name = stmt
            .result
            .as_ref()
            .map_or_else(String::new, |r| format!("`{}` ", r.name.display()));
        self.error(
            stmt.pos,
            format!(
                "{name}belongs to the scope of {owner}, where its operands place it: write it \
                 there, not here"
            ),
        );
        false
    }

    pub(super) fn intern_hoist(&mut self, stmt: &Stmt, local: Option<&Local>) -> Option<Inst> {
        let StmtKind::Inst {
            op,
            by_name,
            op_pos,
            payload,
            operands,
            ..
        } = &stmt.kind
        else {
            let StmtKind::Alias(o) = &stmt.kind else {
                return None;
            };
            return self.operand(o, local);
        };
        let ty = match stmt.result.as_ref().and_then(|r| r.ty.as_ref()) {
            Some(t) => Some(self.operand(t, local)?),
            None => None,
        };
        let mut ops = Vec::with_capacity(operands.len());
        let mut ok = true;
        for o in operands {
            match self.operand(o, local) {
                Some(i) => ops.push(i),
                None => ok = false,
            }
        }
        let payload = match payload.as_deref() {
            Some((lit, pos)) => {
                let float_kind = *by_name && op.payload_kind() == Some(PayloadKind::Float);
                match lit {
                    PayloadLit::Int(_) | PayloadLit::Float(_) | PayloadLit::Nan(_)
                        if float_kind =>
                    {
                        self.float_payload(lit, *pos, *op, ty)?
                    }
                    _ => self.plain_payload(lit, *pos),
                }
            }
            None => Payload::None,
        };
        if !ok {
            return None;
        }
        match self.m.intern(*op, ty, &ops, payload) {
            Ok(i) => Some(i),
            Err(e) => {
                self.error(*op_pos, format!("cannot build `{op}`: {e}"));
                None
            }
        }
    }

    /// A decimal float payload of `const_float`, read in the format of the result type.
    pub(super) fn float_payload(
        &mut self,
        lit: &PayloadLit,
        pos: Pos,
        op: Opcode,
        ty: Option<Inst>,
    ) -> Option<Payload> {
        let width = ty.and_then(|t| self.m.float_width(t));
        let Some(width) = width else {
            self.error(
                pos,
                format!("a decimal payload of `{op}` needs an `f32` or `f64` result type"),
            );
            return None;
        };
        let value = match lit {
            PayloadLit::Int(v) => ConstValue::Int(*v),
            PayloadLit::Float(s) => ConstValue::Float(s.clone()),
            PayloadLit::Nan(b) => ConstValue::Nan(*b),
            _ => return None,
        };
        self.float_bits(&value, width, pos).map(Payload::Float)
    }
}
