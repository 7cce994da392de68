//! The link itself: the driver ([`link`], [`link_files`], [`verify_linked`]: the walk, then
//! specialization, the `-O` passes of `crate::optimize` and verification) and the walk from
//! the roots over the link's [`State`], which is made of parts that each own their data:
//!
//! * the read-only [`Context`] (inputs, options, facts read ahead: `context.rs`);
//! * [`Resolution`]: what names and references stand for (`resolve.rs`; the export index in
//!   `exports.rs`, a definition's linkage in `linkage.rs`, import type checks in
//!   `imports.rs`);
//! * [`Reach`]: the output's definitions, the work list and the pins (`reach.rs`);
//! * [`Pools`]: pool values re-interned in the output (`pool.rs`);
//! * [`Copying`]: the copy of each reached definition, planned during the walk and built on
//!   every core afterwards (`copy.rs`), with validation ahead of it on a spare thread
//!   (`ahead.rs`).
//!
//! The index spaces they use are typed (`index.rs`).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use irkit_core::{Inst, Module, Opcode};

use crate::error::{Chain, LinkError, LinkErrors};
use crate::input::{Input, Opened};
use crate::{LinkOptions, Linked, Stats};

mod ahead;
mod context;
mod copy;
mod exports;
mod imports;
mod index;
mod linkage;
mod pool;
mod reach;
mod resolve;

use context::Context;
use copy::Copying;
use index::SrcDef;
use linkage::FactTable;
use pool::Pools;
use reach::{Reach, Step};
use resolve::{Resolution, Resolved};

/// Opens every binary module of `paths` (sorted first, so errors come in a fixed order), then
/// links them. Every unreadable input is reported, not only the first; an input that is not a
/// binary module is an error (a front end parses it and links with [`link`] and
/// [`Input::from_module`]).
pub fn link_files<P: AsRef<Path>>(paths: &[P], opts: &LinkOptions) -> Result<Linked, LinkErrors> {
    let t = Instant::now();
    let mut sorted: Vec<&Path> = paths.iter().map(|p| p.as_ref()).collect();
    sorted.sort();
    let mut inputs = Vec::with_capacity(sorted.len());
    let mut errors = Vec::new();
    for p in sorted {
        match Input::open(p).and_then(Opened::module) {
            Ok(i) => inputs.push(i),
            Err(e) => errors.extend(e.0),
        }
    }
    if !errors.is_empty() {
        return Err(LinkErrors(errors));
    }
    let open = t.elapsed();
    let mut linked = link(inputs, opts)?;
    linked.stats.open += open;
    Ok(linked)
}

/// Links `inputs` (in any order: they are sorted by name first) into one module.
///
/// Returns every problem found (each one line, see [`LinkError`]) or the linked module, which
/// has passed the verifier when [`LinkOptions::verify`] is on.
pub fn link(mut inputs: Vec<Input>, opts: &LinkOptions) -> Result<Linked, LinkErrors> {
    inputs.sort_by(|a, b| {
        a.name
            .cmp(&b.name)
            .then_with(|| a.view.content_hash().cmp(&b.view.content_hash()))
    });
    let start = Instant::now();
    let mut out = Module::new();
    let prepared = ahead::Ahead::default();
    let facts = FactTable::new(&inputs);
    let mut st = State::new(Context::new(&inputs, opts, &facts, Some(&prepared)));
    ahead::with_validation_ahead(&inputs, &prepared, &facts, || st.run(&mut out));
    // The spare thread has stopped: the bodies are built on every core.
    st.finish(&mut out);
    st.stats.reach_copy = start.elapsed().saturating_sub(st.stats.resolve);
    // An input that shrank while it was read gave zeros for what was cut off: whatever was
    // linked from it is refused, before anything else is reported or returned.
    let changed: Vec<LinkError> = inputs
        .iter()
        .filter_map(|i| i.view.check_unchanged().err())
        .map(LinkError::Read)
        .collect();
    if !changed.is_empty() {
        return Err(LinkErrors(changed));
    }
    if !st.errors.is_empty() {
        return Err(LinkErrors(st.errors));
    }
    let mut stats = st.stats;
    // Everything needed is copied: the inputs (mapped files, or bytes) go before the later
    // phases allocate.
    drop(inputs);
    let t = Instant::now();
    let keep = |m: &Module, d: Inst| {
        m.decoration_strs(d, Opcode::EXPORT)
            .any(|name| opts.library || opts.exports.iter().any(|e| e == name))
    };
    let sharing = (!opts.library).then_some(crate::specialize::Sharing {
        generics: opts.generics,
        gc: opts.gc,
    });
    match crate::specialize::specialize_with(&mut out, opts.max_instantiation_depth, sharing, &keep)
    {
        Ok(r) => {
            stats.instantiations = r.instantiations;
            stats.shared = r.shared;
        }
        Err(e) => return Err(LinkErrors(vec![e])),
    }
    stats.specialize = t.elapsed();
    if !opts.library {
        let t = Instant::now();
        let roots = irkit_opt::Visible {
            library: false,
            names: &opts.exports,
            entry: &opts.entry,
        };
        let objects = crate::objects::lower_objects(
            &mut out,
            &crate::objects::ObjectOptions {
                roots: Some(roots),
                devirtualize: opts.devirtualize,
                gc: opts.gc,
            },
        )
        .map_err(LinkErrors)?;
        stats.classes = objects.classes;
        stats.classes_live = objects.live;
        stats.methods_reached = objects.methods_reached;
        stats.methods_dropped = objects.methods_dropped;
        stats.methods_devirtualized = objects.devirtualized;
        stats.object_insts = objects.lowered;
        stats.objects = t.elapsed();
    }
    let t = Instant::now();
    if (opts.devirtualize || opts.inline)
        && let Err(e) = crate::optimize::optimize(&mut out, opts, &mut stats)
    {
        return Err(LinkErrors(vec![e]));
    }
    stats.optimize = t.elapsed();
    // Inputs are within the nesting limit; only substitution can deepen a value (a copy
    // re-interns each pool value with the same structure).
    let substituted = stats.instantiations > 0 || opts.devirtualize || opts.inline;
    if substituted && irkit_core::check_nesting(&out).is_err() {
        let depth = irkit_core::limits::value_depths(&out);
        let too_deep = |t: Inst| {
            depth
                .get(t.idx())
                .is_some_and(|&d| d > irkit_core::MAX_NESTING)
        };
        // Name the first definition whose type is too deep, if one is.
        let owner = out
            .top_level()
            .iter()
            .copied()
            .find(|&d| out.ty(d).is_some_and(too_deep));
        let at = owner
            .and_then(|d| out.name(d))
            .map(|name| format!(", in @{name}"))
            .unwrap_or_default();
        return Err(LinkErrors(vec![LinkError::TooDeep {
            limit: irkit_core::MAX_NESTING,
            at,
        }]));
    }
    if opts.verify {
        let t = Instant::now();
        verify_linked(&out)?;
        stats.verify = t.elapsed();
    }
    Ok(Linked { module: out, stats })
}

/// Verifies a module [`link`] returned with [`LinkOptions::verify`] off, unchanged: what
/// `link` does last with the option on, for a caller that runs it beside other work
/// (`ir-link` encodes the output meanwhile, and writes it only if this passes). A failure is
/// reported as internal errors, one per verifier error.
pub fn verify_linked(module: &Module) -> Result<(), LinkErrors> {
    // The nesting limit holds: by construction without substitution, checked by `link` after
    // it. The verifier need not check it again (spec/linking.md §5).
    let nesting = irkit_core::verify::Nesting::Established;
    irkit_core::verify::verify_with(module, nesting).map_err(|errs| {
        LinkErrors(
            errs.iter()
                .map(|e| LinkError::Verify(e.to_string()))
                .collect(),
        )
    })
}

/// What a reference to a definition stands for after resolution.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// A definition of an input, copied into the output.
    Def(SrcDef),
    /// An import no input exports (kept as a declaration in a library link).
    Import(Box<str>),
    /// A C function provided by the runtime (an `extern` declaration without body).
    Extern(Box<str>),
}

/// The link's state: its parts, and what it reports.
struct State<'a> {
    cx: Context<'a>,
    res: Resolution<'a>,
    reach: Reach,
    pools: Pools<'a>,
    copy: Copying<'a>,
    errors: Vec<LinkError>,
    stats: Stats,
}

impl<'a> State<'a> {
    /// A link of `cx`'s inputs: each copy is planned during the walk and built afterwards on
    /// every core ([`Copying`]).
    fn new(cx: Context<'a>) -> State<'a> {
        let inputs = cx.srcs.len();
        let stats = Stats {
            inputs,
            defs_available: cx.defs_available,
            ..Stats::default()
        };
        State {
            cx,
            res: Resolution::default(),
            reach: Reach::default(),
            pools: Pools::new(inputs),
            copy: Copying::new(inputs),
            errors: Vec::new(),
            stats,
        }
    }

    fn run(&mut self, out: &mut Module) {
        for (name, role) in self.roots() {
            match self.resolve_name(out, &name) {
                Resolved::Def(src) => {
                    self.reach(out, Key::Def(src), src, None);
                }
                // A re-export of a name no input exports: kept as a declaration in a library
                // link (with the re-exported names attached), an error otherwise.
                Resolved::Unresolved(n, decl) => {
                    if self.cx.opts.library {
                        self.reach(out, Key::Import(n), decl, None);
                    } else if self.res.first_undefined(&n) {
                        let via = self.res.reexport_path(&self.cx, &name);
                        self.errors.push(LinkError::UndefinedReexport {
                            name: n.to_string(),
                            via,
                            chain: Chain::default(),
                        });
                    }
                }
                // Resolving reported why (an export whose definition cannot be read, a
                // re-export cycle): saying that the name is missing too would be a second
                // line for one problem.
                Resolved::Failed => {}
                Resolved::Missing => match role {
                    Root::Entry => self.errors.push(LinkError::MissingEntry { name }),
                    Root::Export => self.errors.push(LinkError::MissingExport { name }),
                    Root::Optional => {}
                },
            }
        }
        while let Some(step) = self.reach.next() {
            match step {
                Step::Pinned { owner, target } => {
                    self.need(out, target, Some(owner), false);
                }
                Step::Copy(n) => self.copy(out, n),
            }
        }
    }

    /// What follows the walk: the planned bodies built, then the pins and re-exported names
    /// attached to what they resolve to.
    fn finish(&mut self, out: &mut Module) {
        self.stats.insts_copied += self.copy.build_planned(&self.cx, out, &mut self.errors);
        self.reach.attach_pin_ifs(&self.res, out, &mut self.errors);
        let targets = self.res.reexport_targets();
        self.reach
            .attach_reexports(&self.cx, &targets, out, &mut self.errors);
        self.stats.defs_reached = self.res.validated() as u64;
        self.stats.defs_copied = self.reach.len() as u64;
    }

    /// The root names, in order: entry, `--export` names (sorted), then (library link) every
    /// exported name (sorted).
    fn roots(&mut self) -> Vec<(String, Root)> {
        let o = self.cx.opts;
        let mut roots = Vec::new();
        roots.push((
            o.entry.clone(),
            if o.library {
                Root::Optional
            } else {
                Root::Entry
            },
        ));
        let exports: BTreeSet<&String> = o.exports.iter().collect();
        roots.extend(exports.into_iter().map(|n| (n.clone(), Root::Export)));
        if o.library && !o.internalize {
            // Every export is a root, once every record is checked against its definition.
            let all = self.res.all_exports(&self.cx, &mut self.errors);
            roots.extend(all.into_iter().map(|n| (n.to_string(), Root::Optional)));
        }
        roots
    }
}

#[derive(Clone, Copy)]
enum Root {
    Entry,
    Export,
    Optional,
}
