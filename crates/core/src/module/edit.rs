//! Editing a module's tree in place: attaching children and decorations (each instruction
//! keeps exactly one parent), moving a tail of children, detaching and removing subtrees, and
//! setting operands, types, payloads and names, each checked against the arena's invariants
//! (module.rs) before anything changes.

use super::*;
use crate::module::checks;

impl Module {
    pub(super) fn check_attachable(&self, parent: Inst, child: Inst) -> Result<(), CoreError> {
        self.check_live(parent)?;
        self.check_live(child)?;
        checks::check_attach(parent, child, self.data(child), child == self.root, || {
            self.is_ancestor(child, parent)
        })
    }

    /// Whether `a` is `b` or one of its ancestors.
    pub fn is_ancestor(&self, a: Inst, b: Inst) -> bool {
        let mut cur = Some(b);
        // Bounded by the arena size: a corrupted parent chain cannot loop forever.
        for _ in 0..=self.insts.len() {
            match cur {
                Some(c) if c == a => return true,
                Some(c) => cur = self.get(c).and_then(|d| d.parent),
                None => return false,
            }
        }
        false
    }

    /// Appends a detached instruction as the last child of `parent`.
    pub fn append_child(&mut self, parent: Inst, child: Inst) -> Result<(), CoreError> {
        let len = self.children(parent).len();
        self.insert_child(parent, len, child)
    }

    /// Moves children `at..` of `from`, in order, into `to`'s children at position `index` (in
    /// one step: splitting a block, or moving a function's blocks into another, does not detach
    /// and insert instructions one by one).
    pub fn move_children(
        &mut self,
        from: Inst,
        at: usize,
        to: Inst,
        index: usize,
    ) -> Result<(), CoreError> {
        self.check_live(from)?;
        self.check_live(to)?;
        if self.opcode(to).is_hoistable() {
            return Err(CoreError::WrongKind {
                opcode: self.opcode(to),
                what: "is hoistable and has no children",
            });
        }
        let len = self.children(from).len();
        if at > len {
            return Err(CoreError::IndexOutOfRange {
                inst: from,
                index: at,
                len,
            });
        }
        let to_len = self.children(to).len() - if from == to { len - at } else { 0 };
        if index > to_len {
            return Err(CoreError::IndexOutOfRange {
                inst: to,
                index,
                len: to_len,
            });
        }
        if let Some(&c) = self.children(from)[at..]
            .iter()
            .find(|&&c| self.is_ancestor(c, to))
        {
            return Err(CoreError::BadAttach {
                parent: to,
                child: c,
                why: "it would become its own ancestor",
            });
        }
        let moved: Vec<Inst> = self.insts[from.idx()].take_children_from(at);
        for &c in &moved {
            self.insts[c.idx()].parent = Some(to);
        }
        self.insts[to.idx()].insert_children(index, moved);
        Ok(())
    }

    /// Inserts a detached instruction as child number `index` of `parent`.
    pub fn insert_child(
        &mut self,
        parent: Inst,
        index: usize,
        child: Inst,
    ) -> Result<(), CoreError> {
        self.check_attachable(parent, child)?;
        checks::check_child_kind(parent, child, self.opcode(child))?;
        let len = self.children(parent).len();
        if index > len {
            return Err(CoreError::IndexOutOfRange {
                inst: parent,
                index,
                len,
            });
        }
        self.insts[parent.idx()].insert_child(index, child);
        self.insts[child.idx()].parent = Some(parent);
        Ok(())
    }

    /// Attaches a detached decoration instruction to `owner`, last.
    pub fn attach_decoration(&mut self, owner: Inst, deco: Inst) -> Result<(), CoreError> {
        let len = self.decorations(owner).len();
        self.insert_decoration(owner, len, deco)
    }

    /// Attaches a detached decoration instruction to `owner` at position `index`.
    pub fn insert_decoration(
        &mut self,
        owner: Inst,
        index: usize,
        deco: Inst,
    ) -> Result<(), CoreError> {
        self.check_attachable(owner, deco)?;
        checks::check_decoration_kind(owner, self.opcode(owner), deco, self.opcode(deco))?;
        let len = self.decorations(owner).len();
        if index > len {
            return Err(CoreError::IndexOutOfRange {
                inst: owner,
                index,
                len,
            });
        }
        self.insts[owner.idx()].insert_decoration(index, deco);
        self.insts[deco.idx()].parent = Some(owner);
        Ok(())
    }

    /// Creates a decoration and attaches it to `owner`.
    pub fn add_decoration(
        &mut self,
        owner: Inst,
        opcode: Opcode,
        operands: Vec<Inst>,
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        let deco = self.new_inst(opcode, None, operands, payload)?;
        self.attach_decoration(owner, deco)?;
        Ok(deco)
    }

    /// Detaches `inst` from its parent's child or decoration list (it stays live, parentless).
    pub fn detach(&mut self, inst: Inst) -> Result<(), CoreError> {
        self.check_live(inst)?;
        if self.opcode(inst).is_hoistable() {
            return Err(CoreError::WrongKind {
                opcode: self.opcode(inst),
                what: "is hoistable and cannot be detached",
            });
        }
        if let Some(p) = self.insts[inst.idx()].parent.take() {
            // An instruction is in its parent's lists once; searched from the end, where
            // rewrites detach most (a terminator, the last block).
            self.insts[p.idx()].remove_sub(inst);
        }
        Ok(())
    }

    /// Removes every instruction of `insts` with its subtree, as [`Module::remove`] does one,
    /// but each parent's lists are rewritten once, not once per removed instruction.
    pub fn remove_all(&mut self, insts: &[Inst]) -> Result<(), CoreError> {
        for &i in insts {
            self.check_live(i)?;
            if self.opcode(i).is_hoistable() {
                return Err(CoreError::WrongKind {
                    opcode: self.opcode(i),
                    what: "is hoistable and cannot be detached",
                });
            }
        }
        let gone: std::collections::HashSet<Inst> = insts.iter().copied().collect();
        let mut parents: Vec<Inst> = Vec::new();
        for &i in insts {
            if let Some(p) = self.insts[i.idx()].parent.take() {
                parents.push(p);
            }
        }
        parents.sort_unstable();
        parents.dedup();
        for p in parents {
            self.insts[p.idx()].retain_subs(|c| !gone.contains(&c));
        }
        let mut stack: Vec<Inst> = insts.to_vec();
        while let Some(i) = stack.pop() {
            let d = &mut self.insts[i.idx()];
            if d.dead {
                continue;
            }
            d.dead = true;
            stack.extend(d.subs.iter().copied());
        }
        Ok(())
    }

    /// Removes `inst` and its whole subtree (children and decorations): detached and marked dead.
    /// Uses of removed instructions elsewhere become dangling, which the verifier reports; replace
    /// them first with [`Module::replace_all_uses`].
    pub fn remove(&mut self, inst: Inst) -> Result<(), CoreError> {
        self.detach(inst)?;
        let mut stack = vec![inst];
        while let Some(i) = stack.pop() {
            let d = &mut self.insts[i.idx()];
            d.dead = true;
            stack.extend(d.subs.iter().copied());
        }
        Ok(())
    }

    /// Replaces operand `index` of a non-hoistable instruction. (Hoistable values are immutable:
    /// change what uses them instead, or use [`Module::replace_all_uses`].)
    pub fn set_operand(&mut self, inst: Inst, index: usize, value: Inst) -> Result<(), CoreError> {
        self.check_mutable(inst)?;
        checks::check_refs(None, &[value], |i| self.contains(i))?;
        let value = self.resolve(value);
        let len = self.operands(inst).len();
        match self.insts[inst.idx()].operands.get_mut(index) {
            Some(slot) => {
                *slot = value;
                Ok(())
            }
            None => Err(CoreError::IndexOutOfRange { inst, index, len }),
        }
    }

    /// Replaces all operands of a non-hoistable instruction.
    pub fn set_operands(&mut self, inst: Inst, operands: Vec<Inst>) -> Result<(), CoreError> {
        self.set_operands_from(inst, &operands)
    }

    /// [`Module::set_operands`] from a slice (a caller filling many instructions can reuse
    /// one buffer).
    pub fn set_operands_from(&mut self, inst: Inst, operands: &[Inst]) -> Result<(), CoreError> {
        self.check_mutable(inst)?;
        checks::check_refs(None, operands, |i| self.contains(i))?;
        self.insts[inst.idx()].operands = checks::followed(&self.forward, operands);
        Ok(())
    }

    /// Sets the result type of a non-hoistable instruction.
    pub fn set_type(&mut self, inst: Inst, ty: Option<Inst>) -> Result<(), CoreError> {
        self.check_mutable(inst)?;
        checks::check_refs(ty, &[], |i| self.contains(i))?;
        self.insts[inst.idx()].ty = ty.map(|t| self.resolve(t));
        Ok(())
    }

    /// Sets the payload of a non-hoistable instruction.
    pub fn set_payload(&mut self, inst: Inst, payload: Payload) -> Result<(), CoreError> {
        self.check_mutable(inst)?;
        self.insts[inst.idx()].payload = payload.into();
        Ok(())
    }

    pub(crate) fn check_mutable(&self, inst: Inst) -> Result<(), CoreError> {
        self.check_live(inst)?;
        let opcode = self.opcode(inst);
        if opcode.is_hoistable() {
            return Err(CoreError::WrongKind {
                opcode,
                what: "is hoistable and immutable",
            });
        }
        Ok(())
    }
}
