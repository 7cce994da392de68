//! The pool of hoistable values: each live hoistable in it once, unique for its key, agreeing
//! with the intern map, at the outermost scope its operands allow, and in dependency order
//! (operands before users), which also proves the pool acyclic for the later passes.

use std::collections::HashMap;

use crate::module::HoistKey;
use crate::{Inst, Opcode};

use super::Cx;

impl Cx<'_> {
    /// Checks the pool. Entries whose operands do not come first are marked unusable.
    pub(super) fn check_pool(&mut self) {
        let m = self.m;
        let root = m.root();
        let mut seen: HashMap<HoistKey, Inst> = HashMap::new();
        let pool: Vec<Inst> = m.pool.to_vec();
        for h in pool {
            if !self.ok(h) {
                continue;
            }
            let Some(pos) = self.pool_pos[h.idx()] else {
                continue;
            };
            let d = &m.insts[h.idx()];
            if !d.opcode.is_hoistable() {
                let msg = format!("{} is in the pool but is not hoistable", self.opname(h));
                self.err(h, msg);
                self.ok.to_mut()[h.idx()] = false;
                continue;
            }
            // Dependency order.
            let mut ordered = true;
            // (operand index, or `None` for the type; spelled only for a message)
            for (k, o) in
                d.ty.iter()
                    .map(|&t| (None, t))
                    .chain(d.operands.iter().enumerate().map(|(k, &o)| (Some(k), o)))
            {
                if let Some(p) = self.pool_pos[o.idx()]
                    && p >= pos
                {
                    let what = match k {
                        None => "its type".to_owned(),
                        Some(k) => format!("operand {k}"),
                    };
                    self.err(
                        h,
                        format!(
                            "{what} (inst {}) does not precede it in the pool (a cycle or a misordered pool)",
                            o.index()
                        ),
                    );
                    ordered = false;
                }
            }
            if !ordered {
                self.ok.to_mut()[h.idx()] = false;
                continue;
            }
            // Uniqueness, and the intern map.
            let key = HoistKey {
                opcode: d.opcode,
                ty: d.ty,
                operands: d.operands.as_slice().into(),
                payload: (*d.payload).clone(),
            };
            match m.intern.get(&key) {
                Some(&x) if x == h => {}
                Some(&x) => {
                    let msg = format!(
                        "the intern map gives inst {} for this hoistable's key, not this one",
                        x.index()
                    );
                    self.err(h, msg);
                }
                None => self.err(h, "the intern map has no entry for this hoistable"),
            }
            if let Some(&first) = seen.get(&key) {
                let msg = format!(
                    "hoistable {} is not unique (also inst {})",
                    self.hoist_str(h),
                    first.index()
                );
                self.err(h, msg);
            } else {
                seen.insert(key, h);
            }
            // Scope: the innermost of its type's and operands' scopes.
            let mut best = root;
            let mut conflict = false;
            let first_op = usize::from(d.ty.is_some());
            for (k, &o) in d.ty.iter().chain(&d.operands).enumerate() {
                let s = if k == first_op
                    && crate::intern::is_param(d.opcode)
                    && !m.insts[o.idx()].opcode.is_hoistable()
                {
                    o
                } else {
                    m.insts[o.idx()].parent.unwrap_or(root)
                };
                if s == best || s == root {
                    continue;
                }
                if best == root || m.is_ancestor(best, s) {
                    best = s;
                } else if !m.is_ancestor(s, best) {
                    conflict = true;
                }
            }
            if conflict {
                self.err(h, "hoistable has operands from unrelated scopes");
            } else if d.parent != Some(best) {
                let now = match d.parent {
                    Some(p) if p == root => "the module".to_owned(),
                    Some(p) => format!("inst {}", p.index()),
                    None => "no scope".to_owned(),
                };
                let want = if best == root {
                    "the module".to_owned()
                } else {
                    format!("inst {}", best.index())
                };
                self.err(
                    h,
                    format!("hoistable is in {now}, expected the outermost scope {want}"),
                );
            }
        }
        // Intern map entries naming something outside the pool.
        let mut stray: Vec<Inst> = m
            .intern
            .values()
            .copied()
            .filter(|&v| self.pool_pos.get(v.idx()).copied().flatten().is_none())
            .collect();
        stray.sort();
        stray.dedup();
        for v in stray {
            self.err(
                root,
                format!(
                    "the intern map names inst {}, which is not in the pool",
                    v.index()
                ),
            );
        }
    }

    /// A hoistable as text: a type's spelling, or a constant's opcode and type.
    fn hoist_str(&self, h: Inst) -> String {
        match self.live(h) {
            Some(d) if d.opcode.is_type() => self.ty_str(h),
            Some(d) => {
                let ty = d.ty.map(|t| self.ty_str(t)).unwrap_or_default();
                let payload = match &*d.payload {
                    crate::Payload::None => String::new(),
                    p => format!(" {p:?}"),
                };
                let sep = if ty.is_empty() { "" } else { " " };
                if d.opcode == Opcode::CONST_INT || d.opcode == Opcode::CONST_FLOAT {
                    format!("`{}`{sep}{ty}{payload}", d.opcode)
                } else {
                    format!("`{}`{sep}{ty}", d.opcode)
                }
            }
            None => format!("inst {}", h.index()),
        }
    }
}
