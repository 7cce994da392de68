//! Objects: the classes, traits and objects of an executable link laid out, their dispatch
//! tables built and every object instruction lowered to ordinary instructions over them
//! (spec/linking.md, "Objects"; spec/ir.md, "Objects").
//!
//! * [`hierarchy`]: the definitions, their supertypes and members, checked; linear traits,
//!   visible fields and methods, implementations, vtable slots, type ids and layouts;
//! * [`tables`]: the descriptors, the trait dispatch table, membership tables, instance
//!   variables and the run-time routines, as ordinary definitions;
//! * [`lower`]: the object instructions rewritten over them.
//!
//! The pass works on any linked module (it needs no linker state); the linker runs it after
//! specialization, unless the link is a library link.

mod hierarchy;
mod lower;
mod tables;

use irkit_core::layout::Layouts;
use irkit_core::{Inst, Module, Opcode};

use crate::error::LinkError;
use hierarchy::{Hierarchy, Kind};
use tables::{Needs, Types};

/// What [`lower_objects`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectStats {
    /// Classes and objects laid out.
    pub classes: u64,
    /// Traits.
    pub traits: u64,
    /// Object instructions lowered.
    pub lowered: u64,
}

/// Lays out the classes, traits and objects of `m` and lowers its object instructions, then
/// removes the class, trait and object definitions. A module without them is left as it is.
pub fn lower_objects(m: &mut Module) -> Result<ObjectStats, Vec<LinkError>> {
    let layouts = Layouts::new(m);
    let Some(h) = Hierarchy::build(m, &layouts)? else {
        return Ok(ObjectStats::default());
    };
    let internal = |e: irkit_core::CoreError| vec![LinkError::Internal(format!("objects: {e}"))];
    let mut errors = Vec::new();
    for d in &h.defs {
        if d.kind == Kind::Object
            && let Some(s) = d.unimplemented()
        {
            errors.push(LinkError::Objects(format!(
                "object @{} has no implementation of method \"{s}\"",
                d.name
            )));
        }
    }
    let needs = needs(m, &h);
    let ty = Types::new(m);
    let t = tables::build(m, &h, &needs, ty).map_err(internal)?;
    errors.extend(lower::lower(m, &h, &t, ty).map_err(internal)?);
    if !errors.is_empty() {
        return Err(errors);
    }
    let defs: Vec<Inst> = h.defs.iter().map(|d| d.inst).collect();
    m.remove_all(&defs).map_err(internal)?;
    Ok(ObjectStats {
        classes: h.by_id.len() as u64,
        traits: h.defs.iter().filter(|d| d.kind == Kind::Trait).count() as u64,
        lowered: needs.instructions,
    })
}

/// Which selectors the code calls through traits and which traits it tests.
fn needs(m: &Module, h: &Hierarchy) -> Needs {
    let mut needs = Needs::default();
    for i in m.walk() {
        if m.opcode(i)
            .known()
            .is_some_and(|op| matches!(op, irkit_core::op_objects!()))
        {
            needs.instructions += 1;
        }
        let (k, name) = match m.opcode(i) {
            Opcode::METHOD => (m.operands(i).get(1), m.payload(i).as_str()),
            Opcode::IS | Opcode::AS => (m.operands(i).first(), None),
            _ => continue,
        };
        let Some(k) = k.and_then(|&d| h.get(m.resolve(d))) else {
            continue;
        };
        if h.defs[k].kind != Kind::Trait {
            continue;
        }
        match name {
            Some(s) => {
                needs.trait_selectors.insert(s.to_owned());
            }
            None => {
                needs.tested_traits.insert(k);
            }
        }
    }
    needs
}
