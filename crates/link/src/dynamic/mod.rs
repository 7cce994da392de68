//! Generics without specialization: a generic function compiled **once**, as an ordinary
//! function that receives its type arguments as run-time descriptors and its witnesses as
//! tables of function pointers (*Slang IR*: the IR expresses "transformations from generic to
//! specialized (or dynamic-dispatch) code"). spec/linking.md, "Dynamic generics", is the
//! normative description; in short:
//!
//! * **Who is shared** ([`policy`]): per generic, `specialize_always` / `dynamic_dispatch`
//!   decorations first, then the link option ([`Generics`]): every generic cloned
//!   (`specialize`), every one that can be shared (`dynamic`), or clones up to a number of
//!   distinct instances and one shared version beyond it (`auto`, the default). A generic is
//!   shared only when its body is made of what the lowering knows ([`analysis`]), and the
//!   generics a shared one calls with its own parameters are shared with it.
//! * **The shared version** ([`lower`]): `@g` becomes the function `@g.dyn` taking, before its
//!   own parameters, a descriptor pointer per type parameter (`{size, align}`, both `i64`)
//!   and a witness table pointer per witness parameter; a value of a type parameter is passed
//!   and kept **by pointer** to memory that holds it (a stack slot the size of the largest type
//!   the whole program gives the parameter: the link sees every use), a result of one goes to
//!   memory the caller passes last. `lookup_witness` becomes a load from the table and an
//!   indirect call.
//! * **The glue** ([`glue`]): one descriptor per concrete type, one table per concrete witness
//!   table (one entry per requirement, in the interface's order: a thunk that loads the
//!   by-pointer arguments, calls the implementation and stores its result), one copy routine,
//!   and per instance `specialize @g, A…` a small wrapper of the instance's own type that
//!   stores its arguments, calls `@g.dyn` and loads the result; every use of the instance is
//!   replaced by its wrapper.
//!
//! Everything made is ordinary IR, so the interpreter, the JIT and executables run it alike,
//! and `-O`'s inliner sees the wrappers and thunks.

mod analysis;
mod exists;
mod glue;
mod layout;
mod lower;
pub(crate) mod policy;

use std::collections::HashMap;

use irkit_core::{Inst, Module};

use crate::error::LinkError;

pub(crate) use analysis::Info;

/// Which generic functions an executable link compiles once, with dynamic dispatch, instead
/// of cloning per instance (`--generics`). A `specialize_always` or `dynamic_dispatch`
/// decoration on a generic decides for it whatever this says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generics {
    /// Clone every generic function per distinct instance (`--generics specialize`).
    Specialize,
    /// Share every generic function that can be shared (`--generics dynamic`).
    Dynamic,
    /// Clone a generic function used at up to `max_instances` distinct instances, share it
    /// beyond when its body is not tiny (`--generics auto[:N]`; spec/linking.md).
    Auto {
        /// The most instances a generic is cloned for.
        max_instances: u64,
    },
}

impl Generics {
    /// The default threshold of [`Generics::Auto`]: a clone costs a whole body's code and
    /// compile time, an instance of the shared version a wrapper of a few instructions and an
    /// indirect call per requirement called; at 16 instances the clones of a typical
    /// 50-instruction generic already weigh more than the shared body and its glue, while the
    /// few-instance generics (containers of one or two element types) keep their speed.
    pub const DEFAULT_MAX_INSTANCES: u64 = 16;
}

impl Default for Generics {
    fn default() -> Generics {
        Generics::Auto {
            max_instances: Generics::DEFAULT_MAX_INSTANCES,
        }
    }
}

/// What the lowering did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shared {
    /// Generic functions compiled once, with dynamic dispatch.
    pub generics: u64,
    /// Instances served by a shared version (each one wrapper).
    pub instances: u64,
    /// Call sites in shared versions that call through a witness table.
    pub witness_calls: u64,
    /// `pack` and `exists_call` instructions lowered.
    pub existential_insts: u64,
    /// Generics the option asked to share that had to be cloned, with the reason (one line
    /// each, for `--stats`).
    pub fallbacks: Vec<String>,
}

/// Lowers every generic of `chosen` (with its analysis) to its shared version and replaces
/// every instance of it by a wrapper. Runs after the specialization pass, which left the
/// instances of these generics alone.
pub(crate) fn lower_shared(
    m: &mut Module,
    chosen: &HashMap<Inst, Info>,
    opened: &std::collections::HashSet<Inst>,
    existentials: Option<crate::objects::Gc>,
) -> Result<Shared, LinkError> {
    let has_exists = m
        .pool()
        .iter()
        .any(|&t| m.opcode(t) == irkit_core::Opcode::EXISTS);
    if chosen.is_empty() && !(has_exists && existentials.is_some()) {
        return Ok(Shared::default());
    }
    let mut g = glue::Glue::new(m, chosen, opened)?;
    let mut witness_calls = 0;
    let mut order: Vec<Inst> = chosen.keys().copied().collect();
    order.sort_unstable();
    for &generic in &order {
        witness_calls += lower::lower_body(&mut g, generic)?;
    }
    let instances = g.wrap_instances()?;
    let existential_insts = match existentials {
        Some(gc) => exists::lower_existentials(&mut g, gc)?,
        None => 0,
    };
    Ok(Shared {
        generics: chosen.len() as u64,
        instances,
        witness_calls,
        existential_insts,
        fallbacks: Vec::new(),
    })
}

pub(crate) fn internal(what: &str, e: impl std::fmt::Display) -> LinkError {
    LinkError::Internal(format!("sharing a generic ({what}): {e}"))
}
