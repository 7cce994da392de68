//! Where code is, spelled as the interpreter spells it in a trap line: `@f` for a definition,
//! `@f ^b, instruction N (op %name)` for an instruction, ending with ` at FILE:LINE:COL` when
//! it has a source location. The labels themselves are
//! `irkit_core::place`'s (`verified_def_label`, `verified_block_label`,
//! `verified_instruction_label`); this module only keeps the names shared per function and
//! block.

use std::rc::Rc;

use irkit_core::place::{
    verified_block_label, verified_def_label, verified_instruction_label, verified_source,
};
use irkit_core::{Inst, Module};

/// `@f ^b, instruction 0 (op …)`: the first instruction of function `f`'s entry block, as a
/// trap there is located (`@f` alone if it has none).
pub(crate) fn first_place(m: &Module, f: Inst) -> String {
    let name = verified_def_label(m, f);
    let Some(entry) = m.entry_block(f) else {
        return name;
    };
    let Some(&inst) = m.children(entry).get(m.block_params(entry).len()) else {
        return format!("{name} {}", verified_block_label(m, entry, 0));
    };
    Place::new(name, (entry, 0), 0, inst).render(m)
}

/// Where an instruction is, spelled as the interpreter spells a trap location. The function's
/// name is shared (one per function, not one per instruction); the block's label is only
/// spelled when the place is rendered (most places never are).
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) func: Rc<str>,
    /// The block and its position among the function's blocks.
    pub(crate) block: (Inst, usize),
    pub(crate) index: usize,
    pub(crate) inst: Inst,
}

impl Place {
    /// Instruction `inst`, the `index`th of `block` (the block and its position) of function
    /// `func` (`@name`).
    pub(crate) fn new(func: String, block: (Inst, usize), index: usize, inst: Inst) -> Place {
        Place {
            func: func.into(),
            block,
            index,
            inst,
        }
    }

    /// `@f ^b, instruction N (op %name)`, then ` at FILE:LINE:COL` when the instruction has a
    /// source location.
    pub(crate) fn render(&self, m: &Module) -> String {
        let mut text = format!(
            "{} {}, {}",
            self.func,
            verified_block_label(m, self.block.0, self.block.1),
            verified_instruction_label(m, self.inst, self.index)
        );
        if let Some(source) = verified_source(m, self.inst) {
            text.push_str(" at ");
            text.push_str(&source);
        }
        text
    }
}
