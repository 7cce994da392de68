//! Filling a module top-down, as readers and copiers do: every instruction of a body created
//! and appended to its parent in pre-order, then its type and operands set once every
//! instruction they may name exists.
//!
//! The general constructors ([`Module::new_inst`], [`Module::append_child`],
//! [`Module::set_type`], [`Module::set_operands_from`]) check what an edit anywhere in a tree
//! needs checking (the child has no parent yet, attaching it makes no cycle, …). An instruction
//! created here has no parent, children or decorations yet, so those checks hold by
//! construction and are skipped; every other check is the same, with the same errors, so a
//! reader filling a module through these calls refuses exactly what it refused through the
//! general ones.

use smallvec::SmallVec;

use crate::module::{InstData, Operands};
use crate::{CoreError, Inst, Module, Opcode, Payload};

impl Module {
    /// Creates a non-hoistable instruction without type or operands and appends it as the
    /// last child of `parent`: [`Module::new_inst`] then [`Module::append_child`], with their
    /// errors (the instruction stays created, detached, when appending it is refused).
    pub fn append_new_child(
        &mut self,
        parent: Inst,
        opcode: Opcode,
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        Module::check_creatable(opcode)?;
        let child = self.alloc(InstData::new(opcode, None, Operands::new(), payload))?;
        self.check_live(parent)?;
        if opcode.is_decoration() {
            return Err(CoreError::BadAttach {
                parent,
                child,
                why: "decorations go in the decoration list",
            });
        }
        // A fresh instruction is neither the root, nor `parent`, nor an ancestor of it.
        self.insts[parent.idx()].push_child(child);
        self.insts[child.idx()].parent = Some(parent);
        Ok(child)
    }

    /// Sets the type and the operands of a non-hoistable instruction at once:
    /// [`Module::set_type`] then [`Module::set_operands_from`], with their checks and errors.
    pub fn set_type_and_operands(
        &mut self,
        inst: Inst,
        ty: Option<Inst>,
        operands: &[Inst],
    ) -> Result<(), CoreError> {
        self.check_mutable(inst)?;
        if let Some(t) = ty {
            self.check_slot(t)?;
        }
        for &o in operands {
            self.check_slot(o)?;
        }
        let ty = ty.map(|t| self.resolve(t));
        let operands: Operands = if self.forward.is_empty() {
            SmallVec::from_slice(operands)
        } else {
            operands.iter().map(|&o| self.resolve(o)).collect()
        };
        let d = &mut self.insts[inst.idx()];
        d.ty = ty;
        d.operands = operands;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// The fast paths build what the general constructors build, and refuse what they refuse
    /// with the same errors.
    #[test]
    fn filling_matches_the_general_constructors() {
        let mut a = Module::new();
        let mut b = Module::new();
        for m in [&mut a, &mut b] {
            let i32t = m.ty_i32();
            let _ = m.const_int(i32t, 7).unwrap();
        }
        let (ra, rb) = (a.root(), b.root());
        let fa = a.append_new_child(ra, Opcode::FUNC, Payload::None).unwrap();
        let fb = b
            .new_inst(Opcode::FUNC, None, vec![], Payload::None)
            .unwrap();
        b.append_child(rb, fb).unwrap();
        assert_eq!(fa, fb);
        assert_eq!(a.parent(fa), Some(ra));
        assert_eq!(a.children(ra), b.children(rb));
        let i32t = a.ty_i32();
        let c = a.const_int(i32t, 7).unwrap();
        a.set_type_and_operands(fa, Some(i32t), &[c, fa]).unwrap();
        b.set_type(fb, Some(i32t)).unwrap();
        b.set_operands_from(fb, &[c, fb]).unwrap();
        assert_eq!(a.ty(fa), b.ty(fb));
        assert_eq!(a.operands(fa), b.operands(fb));

        // Refused alike: hoistable, the root, a decoration as a child, a dead parent, a
        // hoistable target, a handle outside the arena.
        for (opcode, parent) in [
            (Opcode::CONST_INT, ra),
            (Opcode::MODULE, ra),
            (Opcode::NAME_HINT, fa),
        ] {
            let fast = a
                .append_new_child(parent, opcode, Payload::None)
                .unwrap_err();
            let slow = b
                .new_inst(opcode, None, vec![], Payload::None)
                .and_then(|i| b.append_child(parent, i))
                .unwrap_err();
            assert_eq!(fast.to_string(), slow.to_string(), "{opcode}");
        }
        let outside = Inst::from_index(1_000_000);
        let fast = a.set_type_and_operands(fa, None, &[outside]).unwrap_err();
        let slow = b.set_operands_from(fb, &[outside]).unwrap_err();
        assert_eq!(fast.to_string(), slow.to_string());
        let fast = a.set_type_and_operands(c, Some(i32t), &[]).unwrap_err();
        let slow = b.set_type(c, Some(i32t)).unwrap_err();
        assert_eq!(fast.to_string(), slow.to_string());
    }

    /// Operands naming a merged-away value forward to the survivor, as everywhere.
    #[test]
    fn operands_are_resolved() {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let i64t = m.ty_i64();
        let a = m.ty_array(i32t, 4).unwrap();
        let a64 = m.ty_array(i64t, 4).unwrap();
        let root = m.root();
        let g = m
            .append_new_child(root, Opcode::GLOBAL_VAR, Payload::None)
            .unwrap();
        m.replace_all_uses(&HashMap::from([(i32t, i64t)])).unwrap();
        m.set_type_and_operands(g, Some(a), &[a]).unwrap();
        assert_eq!(m.resolve(a), a64);
        assert_eq!(m.ty(g), Some(a64));
        assert_eq!(m.operands(g), &[a64]);
    }
}
