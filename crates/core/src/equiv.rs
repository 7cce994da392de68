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

    /// Whether hoistables `x` and `y` are the same value: equal shallow parts and, pairwise,
    /// the same type and operands. An explicit stack (post-order), so a nest of any depth costs
    /// no recursion; each pair found equal is remembered, so shared values are compared once.
    fn same_hoistable(&mut self, x: Inst, y: Inst) -> bool {
        // (x, y, whether its type and operands are already pushed).
        let mut stack = vec![(x, y, false)];
        // Pairs whose comparison is under way (a cycle, which only a corrupt module has,
        // counts as equal instead of looping).
        let mut open: HashSet<(Inst, Inst)> = HashSet::new();
        while let Some((x, y, expanded)) = stack.pop() {
            if expanded {
                open.remove(&(x, y));
                self.hoist_ok.insert((x, y));
                continue;
            }
            if self.hoist_ok.contains(&(x, y)) || open.contains(&(x, y)) {
                continue;
            }
            let (dx, dy) = (self.a.data(x), self.b.data(y));
            let shallow = dx.opcode() == dy.opcode()
                && dx.payload() == dy.payload()
                && dx.operands().len() == dy.operands().len()
                && dx.ty().is_some() == dy.ty().is_some();
            if !shallow {
                return false;
            }
            open.insert((x, y));
            stack.push((x, y, true));
            let pairs = dx.ty().zip(dy.ty()).into_iter().chain(
                dx.operands()
                    .iter()
                    .copied()
                    .zip(dy.operands().iter().copied()),
            );
            for (ox, oy) in pairs {
                match (
                    self.a.opcode(ox).is_hoistable(),
                    self.b.opcode(oy).is_hoistable(),
                ) {
                    (true, true) => stack.push((ox, oy, false)),
                    (false, false) if self.pairs.get(&ox) == Some(&oy) => {}
                    _ => return false,
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two type nests far deeper than the nesting limit compare without recursing (on a small
    /// stack), equal and unequal.
    #[test]
    fn deep_values_compare_without_recursion() {
        let build = |leaf_len: u64| {
            let mut m = Module::new();
            let i8t = m.ty_i8();
            let mut t = m.ty_array(i8t, leaf_len).unwrap();
            for _ in 0..100_000 {
                t = m.ty_struct(&[t, t]).unwrap();
            }
            let g = m
                .new_inst(
                    crate::Opcode::GLOBAL_VAR,
                    Some(t),
                    Vec::new(),
                    Default::default(),
                )
                .unwrap();
            let root = m.root();
            m.append_child(root, g).unwrap();
            m
        };
        let r = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let (a, b, c) = (build(1), build(1), build(2));
                (modules_equal(&a, &b).is_ok(), modules_equal(&a, &c).is_ok())
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert_eq!(r, (true, false));
    }
}
