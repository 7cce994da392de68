//! Whether one module *extends* another: every instruction of the old module is still there,
//! unchanged, at the same handle, and only new instructions were added (the new definitions
//! appended after the old ones). This is what linking onto a live program produces
//! (`irkit_link::extend`) and what a back end's session accepts as a later load
//! (`spec/backends.md`, "Sessions").

use crate::{Inst, Module};

impl Module {
    /// Checks that `self` extends `base`: `self`'s arena holds `base`'s slots unchanged (same
    /// opcode, type, parent, operands, decorations, children, payload and liveness), except the
    /// root, whose children start with `base`'s (new definitions are appended after them), and
    /// a live definition's decorations, which may end with new `export`s (a later module
    /// re-exporting it gives it another name).
    /// Costs one pass over `base`'s arena. The error names the first difference.
    pub fn extends(&self, base: &Module) -> Result<(), String> {
        if self.arena_len() < base.arena_len() {
            return Err(format!(
                "it has {} instructions, fewer than the live program's {}",
                self.arena_len(),
                base.arena_len()
            ));
        }
        if self.root() != base.root() {
            return Err("its root differs".into());
        }
        for (i, (a, b)) in base.insts.iter().zip(&self.insts).enumerate() {
            let inst = Inst::from_index(i as u32);
            let same = a.opcode == b.opcode
                && a.ty == b.ty
                && a.parent == b.parent
                && a.operands == b.operands
                && self.same_or_more_exports(base, a.decorations(), b.decorations())
                && a.payload == b.payload
                && a.dead == b.dead
                && if inst == base.root() {
                    b.children().starts_with(a.children())
                } else {
                    a.children() == b.children()
                };
            if !same {
                return Err(format!(
                    "instruction {i} ({}) of the live program differs",
                    a.opcode
                ));
            }
        }
        Ok(())
    }

    /// Whether `new` is `old`, or `old` followed by `export` decorations added after `base`
    /// (new names of a live definition: the one change a live definition may get).
    fn same_or_more_exports(&self, base: &Module, old: &[Inst], new: &[Inst]) -> bool {
        new.starts_with(old)
            && new[old.len()..]
                .iter()
                .all(|&x| x.idx() >= base.arena_len() && self.opcode(x) == crate::Opcode::EXPORT)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Module, Opcode, Payload};

    fn global(m: &mut Module, v: i64) -> crate::Inst {
        let i32t = m.ty_i32();
        let c = m.const_i32(v as i32);
        let g = m
            .new_inst(Opcode::GLOBAL_VAR, Some(i32t), vec![c], Payload::None)
            .unwrap();
        let root = m.root();
        m.append_child(root, g).unwrap();
        g
    }

    #[test]
    fn appending_extends_and_editing_does_not() {
        let mut base = Module::new();
        global(&mut base, 1);
        assert!(base.extends(&base).is_ok());
        assert!(base.extends(&Module::new()).is_ok());
        let mut more = base.clone();
        global(&mut more, 2);
        assert!(more.extends(&base).is_ok());
        assert!(base.extends(&more).is_err(), "fewer instructions");
        // Changing a live definition's initializer is not an extension.
        let mut edited = more.clone();
        let g = edited.top_level()[0];
        let c = edited.const_i32(7);
        edited.set_operands(g, vec![c]).unwrap();
        assert!(edited.extends(&base).is_err());
        // A live definition may get another name (an appended `export`), nothing else.
        let mut named = more.clone();
        let g = named.top_level()[0];
        named
            .add_decoration(g, Opcode::EXPORT, Vec::new(), Payload::Str("alias".into()))
            .unwrap();
        assert!(named.extends(&more).is_ok());
        let mut decorated = more.clone();
        decorated
            .add_decoration(g, Opcode::LINKONCE, Vec::new(), Payload::None)
            .unwrap();
        assert!(decorated.extends(&more).is_err());
        // Nor is moving the live definitions.
        let mut moved = base.clone();
        let g = moved.top_level()[0];
        moved.detach(g).unwrap();
        let root = moved.root();
        global(&mut moved, 3);
        moved.append_child(root, g).unwrap();
        assert!(moved.extends(&base).is_err());
    }
}
