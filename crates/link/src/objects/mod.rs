//! Objects: the classes, traits and objects of an executable link laid out, their dispatch
//! tables built and every object instruction lowered to ordinary instructions over them
//! (spec/linking.md, "Objects"; spec/ir.md, "Objects").
//!
//! * `hierarchy`: the definitions, their supertypes and members, checked; linear traits,
//!   visible fields and methods, implementations, vtable slots, type ids and layouts;
//! * `rta`: which classes are instantiated and which implementations calls can select
//!   (rapid type analysis); the rest is dropped;
//! * `tables`: the descriptors, the trait dispatch table, membership tables, instance
//!   variables and the run-time routines, as ordinary definitions;
//! * `lower`: the object instructions rewritten over them.
//!
//! The pass works on any linked module (it needs no linker state); the linker runs it after
//! specialization, unless the link is a library link.

mod hierarchy;
mod lower;
mod rta;
mod tables;

pub(crate) use tables::alloc;

use irkit_core::layout::Layouts;
use std::collections::HashSet;

use irkit_core::{Inst, Module, Opcode};
use irkit_opt::Visible;

use crate::error::LinkError;
use hierarchy::{Hierarchy, Kind};
use tables::{Needs, Types};

/// Which allocation routine `classalloc` and objects' instances call (spec/linking.md,
/// "Objects", "Allocation"): one choice for the whole program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gc {
    /// The C allocator (`calloc`): no collection, an object lives until the process ends.
    #[default]
    None,
    /// The Boehm-Demers-Weiser conservative collector (`GC_malloc`, after `GC_init` once):
    /// the program is linked with it (`-lgc`); for executables only.
    Boehm,
}

/// What [`lower_objects`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectStats {
    /// Classes and objects laid out.
    pub classes: u64,
    /// Traits.
    pub traits: u64,
    /// Object instructions lowered.
    pub lowered: u64,
    /// Classes and objects instantiated (a `classalloc` or `instance` reached).
    pub live: u64,
    /// Method implementations (and constructors) kept: a reached call may select them, or
    /// something else names them.
    pub methods_reached: u64,
    /// Method implementations (and constructors) dropped.
    pub methods_dropped: u64,
    /// `method` instructions lowered to the one implementation their receiver can have.
    pub devirtualized: u64,
}

/// How [`lower_objects`] treats a module.
#[derive(Default)]
pub struct ObjectOptions<'a> {
    /// The definitions other programs see (an executable link's entry point and exports),
    /// from which the analysis starts; `None`: every definition outside the hierarchy, for a
    /// module whose functions are called by name.
    pub roots: Option<Visible<'a>>,
    /// `method` with one possible implementation becomes that function's address (`-O`).
    pub devirtualize: bool,
    /// The allocator of `classalloc` and of objects' instances.
    pub gc: Gc,
}

/// Lays out the classes, traits and objects of `m`, drops what no reached code can use
/// (classes never instantiated get no tables; implementations no reached call can select are
/// removed, with what only they used), and lowers its object instructions, then removes the
/// class, trait and object definitions. A module without them is left as it is.
pub fn lower_objects(
    m: &mut Module,
    opts: &ObjectOptions<'_>,
) -> Result<ObjectStats, Vec<LinkError>> {
    let layouts = Layouts::new(m);
    let Some(mut h) = Hierarchy::build(m, &layouts)? else {
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
    let reached = rta::analyze(m, &h, opts.roots.as_ref());
    // Every implementation and constructor the hierarchy names, each once.
    let named: HashSet<Inst> = h
        .defs
        .iter()
        .flat_map(|d| d.methods.iter().filter_map(|x| x.body).chain(d.ctor))
        .collect();
    h.dropped = named
        .iter()
        .copied()
        .filter(|f| !reached.reached[f.idx()])
        .collect();
    let methods_dropped = h.dropped.len() as u64;
    m.remove_all(&reached.dead(m, &h)).map_err(internal)?;
    h.live = reached.live;
    let needs = needs(m, &h);
    let ty = Types::new(m);
    let t = tables::build(m, &h, &needs, ty, opts.gc).map_err(internal)?;
    let lowered = lower::lower(m, &h, &t, ty, opts.devirtualize).map_err(internal)?;
    errors.extend(lowered.errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let defs: Vec<Inst> = h.defs.iter().map(|d| d.inst).collect();
    m.remove_all(&defs).map_err(internal)?;
    Ok(ObjectStats {
        classes: h.by_id.len() as u64,
        traits: h.defs.iter().filter(|d| d.kind == Kind::Trait).count() as u64,
        lowered: needs.instructions,
        live: h.by_id.iter().filter(|&&k| h.live[k]).count() as u64,
        methods_reached: named.len() as u64 - methods_dropped,
        methods_dropped,
        devirtualized: lowered.devirtualized,
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
            needs.dynmethod |= m.opcode(i) == Opcode::DYNMETHOD;
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
