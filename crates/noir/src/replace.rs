//! Putting the lowered function where the proc was: the same place among the module's
//! definitions, the same decorations (export, name, …), every use of the proc (calls,
//! addresses, exports' targets) now a use of the function; the proc (with its body and the
//! `when`/`unless` decorations of its instructions) removed.

use std::collections::HashMap;

use irkit_core::{Inst, Module};

use crate::LowerError;

/// Puts `f` where `p` was and removes `p`.
pub(crate) fn replace(m: &mut Module, p: Inst, f: Inst) -> Result<(), LowerError> {
    let root = m.root();
    let at = m.children(root).iter().position(|&c| c == p).unwrap_or(0);
    m.insert_child(root, at, f)?;
    for d in m.decorations(p).to_vec() {
        m.detach(d)?;
        m.attach_decoration(f, d)?;
    }
    let map: HashMap<Inst, Inst> = [(p, f)].into_iter().collect();
    m.replace_all_uses(&map)?;
    m.remove(p)?;
    Ok(())
}
