//! Small rewriting steps the optimization passes share.

use irkit_core::{CoreError, Inst, Module, Opcode};

/// The top-level functions of `m`, in module order.
pub(crate) fn functions(m: &Module) -> Vec<Inst> {
    m.top_level()
        .iter()
        .copied()
        .filter(|&d| m.opcode(d) == Opcode::FUNC)
        .collect()
}

/// Moves every decoration of `from` (its name, its source location, …) to `to`, in order.
pub(crate) fn move_decorations(m: &mut Module, from: Inst, to: Inst) -> Result<(), CoreError> {
    for d in m.decorations(from).to_vec() {
        m.detach(d)?;
        m.attach_decoration(to, d)?;
    }
    Ok(())
}
