//! Copying instructions between modules (or within one), keeping the destination's invariants.
//!
//! A [`Cloner`] remembers what it copied (source handle -> destination handle), like walrus'
//! id maps. Hoistable values are never copied as such: they are re-interned in the destination,
//! so equal types and constants from different modules merge by structure. Non-hoistable
//! subtrees are copied in two phases (create every instruction, then fill operands) so that
//! forward references (a block branching to a later block) resolve. A reference to a
//! non-hoistable outside what is being copied must be mapped beforehand with [`Cloner::map`] or
//! answered by the fallback given to [`Cloner::clone_forest`].

use std::collections::HashMap;

use crate::{CoreError, Inst, Module};

/// Why a copy failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloneError {
    /// A reference to an instruction outside the copied subtrees that nothing mapped.
    #[error("{user} refers to {target}, which is outside what is being copied and was not mapped")]
    Unmapped {
        /// The source instruction holding the reference.
        user: Inst,
        /// What it refers to.
        target: Inst,
    },
    /// The destination refused an edit.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Copies instructions from `src` into a destination module.
pub struct Cloner<'a> {
    src: &'a Module,
    map: HashMap<Inst, Inst>,
}

impl<'a> Cloner<'a> {
    /// A cloner reading from `src`.
    pub fn new(src: &'a Module) -> Cloner<'a> {
        Cloner {
            src,
            map: HashMap::new(),
        }
    }

    /// Declares that source instruction `from` is `to` in the destination.
    pub fn map(&mut self, from: Inst, to: Inst) {
        self.map.insert(from, to);
    }

    /// What `from` became in the destination, if it was copied or mapped.
    pub fn get(&self, from: Inst) -> Option<Inst> {
        self.map.get(&from).copied()
    }

    /// The whole source -> destination map.
    pub fn mapping(&self) -> &HashMap<Inst, Inst> {
        &self.map
    }

    /// Re-interns hoistable value `h` (and, first, its type and operands) in `dst`.
    pub fn clone_hoistable(&mut self, dst: &mut Module, h: Inst) -> Result<Inst, CloneError> {
        self.clone_hoistable_with(dst, h, &mut |_, _| None)
    }

    fn clone_hoistable_with(
        &mut self,
        dst: &mut Module,
        h: Inst,
        external: &mut dyn FnMut(&mut Module, Inst) -> Option<Inst>,
    ) -> Result<Inst, CloneError> {
        if let Some(&d) = self.map.get(&h) {
            return Ok(d);
        }
        // Iterative post-order: deep type nests cannot overflow the stack.
        let mut stack = vec![(h, false)];
        while let Some((x, ready)) = stack.pop() {
            if self.map.contains_key(&x) {
                continue;
            }
            let d = self.src.data(x);
            if !ready {
                stack.push((x, true));
                for &o in d.ty().iter().chain(d.operands()) {
                    if !self.map.contains_key(&o) && self.src.opcode(o).is_hoistable() {
                        stack.push((o, false));
                    }
                }
                continue;
            }
            let ty = match d.ty() {
                Some(t) => Some(self.translate(dst, x, t, external)?),
                None => None,
            };
            let mut ops = Vec::with_capacity(d.operands().len());
            for &o in d.operands() {
                ops.push(self.translate(dst, x, o, external)?);
            }
            let new = dst.intern(d.opcode(), ty, &ops, d.payload().clone())?;
            self.map.insert(x, new);
        }
        Ok(self.map[&h])
    }

    fn translate(
        &mut self,
        dst: &mut Module,
        user: Inst,
        target: Inst,
        external: &mut dyn FnMut(&mut Module, Inst) -> Option<Inst>,
    ) -> Result<Inst, CloneError> {
        if let Some(&d) = self.map.get(&target) {
            return Ok(d);
        }
        if self.src.opcode(target).is_hoistable() {
            return self.clone_hoistable_with(dst, target, external);
        }
        match external(dst, target) {
            Some(d) => {
                self.map.insert(target, d);
                Ok(d)
            }
            None => Err(CloneError::Unmapped { user, target }),
        }
    }

    /// Copies a subtree (an instruction with its decorations and children) under `dst_parent`
    /// (or detached with `None`), returning the copy of `root`.
    pub fn clone_subtree(
        &mut self,
        dst: &mut Module,
        root: Inst,
        dst_parent: Option<Inst>,
    ) -> Result<Inst, CloneError> {
        let out = self.clone_forest(dst, &[(root, dst_parent)], &mut |_, _| None)?;
        Ok(out[0])
    }

    /// Copies several subtrees at once, so they may refer to each other; `external` is asked
    /// for any other non-hoistable reference (return `None` to make it an error).
    pub fn clone_forest(
        &mut self,
        dst: &mut Module,
        roots: &[(Inst, Option<Inst>)],
        external: &mut dyn FnMut(&mut Module, Inst) -> Option<Inst>,
    ) -> Result<Vec<Inst>, CloneError> {
        // Phase 1: create every instruction with its parent links, no operands yet.
        let mut copied: Vec<(Inst, Inst)> = Vec::new();
        let mut out = Vec::with_capacity(roots.len());
        for &(root, dst_parent) in roots {
            let root_is_deco = self.src.opcode(root).is_decoration();
            let mut stack = vec![(root, dst_parent, root_is_deco)];
            while let Some((s, parent, is_deco)) = stack.pop() {
                let d = self.src.data(s);
                let new = dst.new_inst(d.opcode(), None, Vec::new(), d.payload().clone())?;
                if let Some(p) = parent {
                    if is_deco {
                        dst.attach_decoration(p, new)?;
                    } else {
                        dst.append_child(p, new)?;
                    }
                }
                self.map.insert(s, new);
                copied.push((s, new));
                if s == root {
                    out.push(new);
                }
                // Reverse so that children are appended in order.
                for &c in d.children().iter().rev() {
                    stack.push((c, Some(new), false));
                }
                for &c in d.decorations().iter().rev() {
                    stack.push((c, Some(new), true));
                }
            }
        }
        // Phase 2: types and operands.
        for (s, new) in copied {
            let d = self.src.data(s);
            let ty = match d.ty() {
                Some(t) => Some(self.translate(dst, s, t, external)?),
                None => None,
            };
            let mut ops = Vec::with_capacity(d.operands().len());
            for &o in d.operands() {
                ops.push(self.translate(dst, s, o, external)?);
            }
            dst.set_type(new, ty)?;
            dst.set_operands(new, ops)?;
        }
        Ok(out)
    }
}

impl Module {
    /// A copy of this module without dead slots and with the pool holding only values that are
    /// still live, in a fresh dependency order. Handles change; the tree is equal
    /// ([`crate::equiv::modules_equal`]).
    pub fn compact(&self) -> Result<Module, CloneError> {
        let mut dst = Module::new();
        let mut cloner = Cloner::new(self);
        cloner.map(self.root(), dst.root());
        let root = dst.root();
        let roots: Vec<(Inst, Option<Inst>)> = self
            .decorations(self.root())
            .iter()
            .chain(self.top_level())
            .map(|&c| (c, Some(root)))
            .collect();
        cloner.clone_forest(&mut dst, &roots, &mut |_, _| None)?;
        Ok(dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Opcode, Payload};

    #[test]
    fn hoistables_merge_into_the_destination_pool() {
        let mut a = Module::new();
        let mut b = Module::new();
        let ta = a.ty_i32();
        let arr_a = a.ty_array(ta, 3).unwrap();
        let tb = b.ty_i32();
        let arr_b = b.ty_array(tb, 3).unwrap();
        let mut cloner = Cloner::new(&a);
        assert_eq!(cloner.clone_hoistable(&mut b, arr_a).unwrap(), arr_b);
    }

    #[test]
    fn forward_references_between_blocks_resolve() {
        let mut m = Module::new();
        let root = m.root();
        let void = m.ty_void();
        let sig = m.ty_fn(void, &[]).unwrap();
        let f = m
            .new_inst(Opcode::FUNC, Some(sig), vec![], Payload::None)
            .unwrap();
        m.append_child(root, f).unwrap();
        let b0 = m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
            .unwrap();
        let b1 = m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
            .unwrap();
        m.append_child(f, b0).unwrap();
        m.append_child(f, b1).unwrap();
        let j = m
            .new_inst(Opcode::JUMP, None, vec![b1], Payload::None)
            .unwrap();
        m.append_child(b0, j).unwrap();
        let r = m
            .new_inst(Opcode::RET, None, vec![], Payload::None)
            .unwrap();
        m.append_child(b1, r).unwrap();
        m.set_name(f, "f").unwrap();

        let mut dst = Module::new();
        let mut cloner = Cloner::new(&m);
        let droot = dst.root();
        let f2 = cloner.clone_subtree(&mut dst, f, Some(droot)).unwrap();
        assert_eq!(dst.name(f2), Some("f"));
        let blocks: Vec<_> = dst.blocks(f2).collect();
        assert_eq!(dst.operands(dst.children(blocks[0])[0]), &[blocks[1]]);
        crate::equiv::modules_equal(&m, &dst).unwrap();
    }

    #[test]
    fn unmapped_references_are_errors() {
        let mut m = Module::new();
        let root = m.root();
        let g = m
            .new_inst(Opcode::GLOBAL_VAR, None, vec![], Payload::None)
            .unwrap();
        m.append_child(root, g).unwrap();
        let p = m
            .new_inst(Opcode::PIN, None, vec![g], Payload::None)
            .unwrap();
        let h = m
            .new_inst(Opcode::GLOBAL_VAR, None, vec![], Payload::None)
            .unwrap();
        m.append_child(root, h).unwrap();
        m.attach_decoration(h, p).unwrap();
        let mut dst = Module::new();
        let mut cloner = Cloner::new(&m);
        let err = cloner.clone_subtree(&mut dst, h, None).unwrap_err();
        assert_eq!(err, CloneError::Unmapped { user: p, target: g });
    }
}
