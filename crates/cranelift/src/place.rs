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
    let block = verified_block_label(m, entry, 0);
    let Some(&inst) = m.children(entry).get(m.block_params(entry).len()) else {
        return format!("{name} {block}");
    };
    Place::new(name, block, 0, inst).render(m)
}

/// Where an instruction is, spelled as the interpreter spells a trap location. The names are
/// shared (one per function and block, not one per instruction).
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) func: Rc<str>,
    pub(crate) block: Rc<str>,
    pub(crate) index: usize,
    pub(crate) inst: Inst,
}

impl Place {
    /// Instruction `inst`, the `index`th of block `block` (`^name`) of function `func`
    /// (`@name`).
    pub(crate) fn new(func: String, block: String, index: usize, inst: Inst) -> Place {
        Place {
            func: func.into(),
            block: block.into(),
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
            self.block,
            verified_instruction_label(m, self.inst, self.index)
        );
        if let Some(source) = verified_source(m, self.inst) {
            text.push_str(" at ");
            text.push_str(&source);
        }
        text
    }
}
