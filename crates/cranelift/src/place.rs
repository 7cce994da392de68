//! Where code is, spelled as the interpreter spells it in a trap line: `@f` for a definition,
//! `@f ^b, instruction N (op %name)` for an instruction.

use std::rc::Rc;

use irkit_core::{Inst, Module, Opcode};

/// `@name` of a definition as the interpreter spells it: its name hint or export name, else
/// `@#<index>`.
pub(crate) fn def_name(m: &Module, d: Inst) -> String {
    m.name(d)
        .or_else(|| m.decoration_str(d, Opcode::EXPORT))
        .map_or_else(|| format!("@#{}", d.index()), |n| format!("@{n}"))
}

/// `@f ^b, instruction 0 (op …)`: the first instruction of function `f`'s entry block, as a
/// trap there is located (`@f` alone if it has none).
pub(crate) fn first_place(m: &Module, f: Inst) -> String {
    let name = def_name(m, f);
    let Some(entry) = m.entry_block(f) else {
        return name;
    };
    let block = m
        .name(entry)
        .map_or_else(|| "^bb0".to_string(), |n| format!("^{n}"));
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

    /// `@f ^b, instruction N (op %name)`.
    pub(crate) fn render(&self, m: &Module) -> String {
        let mut s = format!(
            "{} {}, instruction {} ({}",
            self.func,
            self.block,
            self.index,
            m.opcode(self.inst)
        );
        if let Some(n) = m.name(self.inst) {
            s.push_str(" %");
            s.push_str(n);
        }
        s.push(')');
        s
    }
}
