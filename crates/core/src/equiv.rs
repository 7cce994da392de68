//! Structural equality of modules: the meaning of "parse(print(m)) equals m" and "read(write(m))
//! equals m".
//!
//! Two modules are equal when their trees have the same shape (same opcodes, payloads, numbers
//! of decorations and children, in the same order), non-hoistable references correspond
//! position by position, and hoistable values are equal by structure (handles and pool order do
//! not matter, since hoistables are deduplicated).

use std::collections::{HashMap, HashSet};

use crate::{Inst, Module};

/// The first difference found between two modules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("modules differ at {path}: {what}")]
pub struct Mismatch {
    /// Where, as a path of child indices from the root (e.g. `root/3/0/2`).
    pub path: String,
    /// What differs.
    pub what: String,
}

/// Checks that `a` and `b` are structurally equal; the error names the first difference.
pub fn modules_equal(a: &Module, b: &Module) -> Result<(), Mismatch> {
    let mut eq = Equiv {
        a,
        b,
        pairs: HashMap::new(),
        paths: HashMap::new(),
        hoist_ok: HashSet::new(),
    };
    eq.pair_trees()?;
    eq.compare_edges()
}

struct Equiv<'m> {
    a: &'m Module,
    b: &'m Module,
    pairs: HashMap<Inst, Inst>,
    paths: HashMap<Inst, String>,
    hoist_ok: HashSet<(Inst, Inst)>,
}

impl Equiv<'_> {
    fn pair_trees(&mut self) -> Result<(), Mismatch> {
        let mut stack = vec![(self.a.root(), self.b.root(), "root".to_string())];
        while let Some((x, y, path)) = stack.pop() {
            let (dx, dy) = (self.a.data(x), self.b.data(y));
            let fail = |what: String| {
                Err(Mismatch {
                    path: path.clone(),
                    what,
                })
            };
            if dx.opcode() != dy.opcode() {
                return fail(format!("opcode `{}` vs `{}`", dx.opcode(), dy.opcode()));
            }
            if dx.payload() != dy.payload() {
                return fail(format!("payload {:?} vs {:?}", dx.payload(), dy.payload()));
            }
            if dx.operands().len() != dy.operands().len() {
                return fail(format!(
                    "{} operands vs {}",
                    dx.operands().len(),
                    dy.operands().len()
                ));
            }
            if dx.ty().is_some() != dy.ty().is_some() {
                return fail("one has a type, the other not".into());
            }
            if dx.decorations().len() != dy.decorations().len() {
                return fail(format!(
                    "{} decorations vs {}",
                    dx.decorations().len(),
                    dy.decorations().len()
                ));
            }
            if dx.children().len() != dy.children().len() {
                return fail(format!(
                    "{} children vs {}",
                    dx.children().len(),
                    dy.children().len()
                ));
            }
            self.pairs.insert(x, y);
            for (i, (&cx, &cy)) in dx.decorations().iter().zip(dy.decorations()).enumerate() {
                stack.push((cx, cy, format!("{path}/deco{i}")));
            }
            for (i, (&cx, &cy)) in dx.children().iter().zip(dy.children()).enumerate() {
                stack.push((cx, cy, format!("{path}/{i}")));
            }
            self.paths.insert(x, path);
        }
        Ok(())
    }

    fn compare_edges(&mut self) -> Result<(), Mismatch> {
        let mut pairs: Vec<(Inst, Inst)> = self.pairs.iter().map(|(&x, &y)| (x, y)).collect();
        pairs.sort();
        for (x, y) in pairs {
            let path = self.paths[&x].clone();
            let (dx, dy) = (self.a.data(x), self.b.data(y));
            if let (Some(tx), Some(ty)) = (dx.ty(), dy.ty())
                && !self.same_ref(tx, ty)
            {
                return Err(Mismatch {
                    path,
                    what: "types differ".into(),
                });
            }
            for (i, (&ox, &oy)) in dx.operands().iter().zip(dy.operands()).enumerate() {
                if !self.same_ref(ox, oy) {
                    return Err(Mismatch {
                        path,
                        what: format!("operand {i} differs"),
                    });
                }
            }
        }
        Ok(())
    }

    fn same_ref(&mut self, x: Inst, y: Inst) -> bool {
        let (hx, hy) = (
            self.a.opcode(x).is_hoistable(),
            self.b.opcode(y).is_hoistable(),
        );
        match (hx, hy) {
            (true, true) => self.same_hoistable(x, y),
            (false, false) => self.pairs.get(&x) == Some(&y),
            _ => false,
        }
    }

    fn same_hoistable(&mut self, x: Inst, y: Inst) -> bool {
        if self.hoist_ok.contains(&(x, y)) {
            return true;
        }
        let (dx, dy) = (self.a.data(x), self.b.data(y));
        let shallow = dx.opcode() == dy.opcode()
            && dx.payload() == dy.payload()
            && dx.operands().len() == dy.operands().len()
            && dx.ty().is_some() == dy.ty().is_some();
        if !shallow {
            return false;
        }
        // Hoistables form a DAG (no cycles), so this recursion terminates; its depth is the
        // nesting depth of the type or constant.
        if let (Some(tx), Some(ty)) = (dx.ty(), dy.ty())
            && !self.same_ref(tx, ty)
        {
            return false;
        }
        let ops: Vec<(Inst, Inst)> = dx
            .operands()
            .iter()
            .copied()
            .zip(dy.operands().iter().copied())
            .collect();
        for (ox, oy) in ops {
            if !self.same_ref(ox, oy) {
                return false;
            }
        }
        self.hoist_ok.insert((x, y));
        true
    }
}
