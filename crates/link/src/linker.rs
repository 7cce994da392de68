//! The link itself: the driver ([`link`], [`link_files`], [`verify_linked`]: the walk, then
//! specialization, the `-O` passes of `crate::optimize` and verification) and the walk it runs
//! over the link's [`State`]: the roots, what a reference stands for, the reachability work
//! list, and at the end the pins and re-exported names attached to what they resolve to. The
//! walk's parts live beside it: resolution by name (`resolve.rs`, a definition's linkage in
//! `linkage.rs`, import type checks in `imports.rs`), pool values re-interned (`pool.rs`), the
//! lazy copy of each reached definition into the output module (`copy.rs`), and validation
//! ahead of the copy on a spare thread (`ahead.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use rustc_hash::{FxHashMap, FxHashSet};
use std::path::Path;
use std::time::Instant;

use irkit_core::{Inst, Module, Opcode, Payload};
use irkit_format::{CopyPlan, DefCopier, ModuleView, PoolView};

use crate::error::{Chain, ChainLink, LinkError, LinkErrors};
use crate::input::{Input, Opened};
use crate::{LinkOptions, Linked, Stats};

mod ahead;
mod copy;
mod imports;
mod index;
mod linkage;
mod pool;
mod resolve;

use index::{DefId, InputId, NodeId, SrcDef};
use linkage::{ExportIndex, FactTable, linkage_of};
use resolve::{MAX_REEXPORT_CHAIN, Resolved};

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
    let mut st = State::new(&inputs, opts, &facts, true);
    st.ahead = Some(&prepared);
    ahead::with_validation_ahead(&inputs, &prepared, &facts, || st.run(&mut out));
    // The spare thread has stopped: the bodies are built on every core.
    st.finish(&mut out);
    if st.split_failed {
        // A planned copy or its build was refused: the copy of that definition (the one
        // decoder) says why, at the point of the walk where it does, as if nothing had been
        // planned (spec/linking.md §5, "Copying on every core").
        out = Module::new();
        st = State::new(&inputs, opts, &facts, false);
        st.run(&mut out);
        st.finish(&mut out);
    }
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
    match crate::specialize::specialize(&mut out, opts.max_instantiation_depth, &keep) {
        Ok(r) => stats.instantiations = r.instantiations,
        Err(e) => return Err(LinkErrors(vec![e])),
    }
    stats.specialize = t.elapsed();
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
    /// A definition with a body (or an initial value), by (input, definition).
    Def(SrcDef),
    /// An import no input exports (kept as a declaration in a library link).
    Import(Box<str>),
    /// A C function provided by the runtime (an `extern` declaration without body).
    Extern(Box<str>),
}

/// A definition of the output: what it stands for, what is copied into it, who reached it.
struct Node {
    /// The definition copied: the definition itself, or the first declaration reached.
    src: SrcDef,
    /// Its instruction in the output.
    out: Inst,
    /// The node whose copy reached it first (`None` for roots).
    parent: Option<NodeId>,
    /// It stands for an unresolved import or a C symbol (a declaration of the output).
    decl: bool,
}

/// A `pin_if(@d, @c)` decoration of a copied definition, re-attached at the end when `c` was
/// reached.
struct PinIf {
    owner: NodeId,
    module: InputId,
    def: DefId,
    cond: DefId,
}

/// The link's state. Maps keyed by (input, definition) indices use FxHash: those keys are
/// bounded by the inputs' definition counts, and hashing them is on the copy's path (every
/// reference to another definition). Maps keyed by names read from the inputs (`node_of`,
/// `pending` and `decls` by [`Key`], `name_memo`, `undefined_reported`) keep std's
/// DoS-resistant hasher: a hostile file chooses those strings freely.
struct State<'a> {
    srcs: &'a [Input],
    opts: &'a LinkOptions,
    nodes: Vec<Node>,
    node_of: HashMap<Key, NodeId>,
    queue: VecDeque<NodeId>,
    /// `pin_if` targets whose owner and condition are both reached: (owner, target).
    triggered: VecDeque<(NodeId, SrcDef)>,
    /// `pin_if` targets waiting for their condition (by the condition's key).
    pending: HashMap<Key, Vec<(NodeId, SrcDef)>>,
    pin_ifs: Vec<PinIf>,
    ref_memo: FxHashMap<SrcDef, Key>,
    /// What each name looked up resolves to (re-exports followed).
    name_memo: HashMap<Box<str>, Resolved>,
    /// Every name found to be a re-export: its winning (re-export) declaration. Those that
    /// resolve to a definition or declaration of the output are attached to it at the end.
    reexports: BTreeMap<Box<str>, SrcDef>,
    /// Import declarations already checked against their export.
    imports_checked: FxHashSet<SrcDef>,
    /// Linking hashes of the `linkonce` candidates compared so far.
    linking: FxHashMap<SrcDef, [u8; 32]>,
    /// The first declaration of each unresolved import / C symbol, and its type.
    decls: HashMap<Key, (SrcDef, Option<Inst>)>,
    /// Per input, per pool entry: its value in the output, once re-interned.
    pool_memo: Vec<Vec<Option<Inst>>>,
    /// Per input: its validated pool (fetched on first use).
    pools: Vec<Option<PoolView<'a>>>,
    /// Per input: its definition copier (fetched on first use).
    copiers: Vec<Option<DefCopier<'a>>>,
    /// Every export of every input, by name, in input order: (input, definition, content
    /// hash). Built from the whole symbol tables only once lookups in each input's symbol
    /// index have cost about as much (see [`State::export_candidates`]).
    exports: Option<ExportIndex<'a>>,
    /// What the spare thread prepares meanwhile (the export index), when there is one.
    ahead: Option<&'a ahead::Ahead<'a>>,
    /// What the walk reads of each definition it acts on, shared with the spare thread.
    facts: &'a FactTable,
    /// Names looked up one input at a time so far.
    lookups: u64,
    /// Inputs whose symbol table could not be read (reported once).
    bad_symbols: FxHashSet<InputId>,
    /// Definitions found unreadable or contradicting their file's symbol index (reported
    /// once each).
    bad_defs: FxHashSet<SrcDef>,
    validated: FxHashSet<SrcDef>,
    undefined_reported: HashSet<Box<str>>,
    keep_exports: HashSet<&'a str>,
    /// Plan each copy during the walk and build the copies afterwards, on every core
    /// ([`State::build_planned`]); off for the walk redone after a plan or build failed.
    split: bool,
    /// Copies planned, in walk order: (input, plan).
    plans: Vec<(InputId, CopyPlan<'a>)>,
    /// A plan or a build failed: the walk must be redone without splitting.
    split_failed: bool,
    errors: Vec<LinkError>,
    stats: Stats,
}

impl<'a> State<'a> {
    fn new(
        srcs: &'a [Input],
        opts: &'a LinkOptions,
        facts: &'a FactTable,
        split: bool,
    ) -> State<'a> {
        let mut keep_exports: HashSet<&str> = opts.exports.iter().map(String::as_str).collect();
        keep_exports.insert(opts.entry.as_str());
        State {
            srcs,
            opts,
            nodes: Vec::new(),
            node_of: HashMap::new(),
            queue: VecDeque::new(),
            triggered: VecDeque::new(),
            pending: HashMap::new(),
            pin_ifs: Vec::new(),
            ref_memo: FxHashMap::default(),
            name_memo: HashMap::new(),
            reexports: BTreeMap::new(),
            imports_checked: FxHashSet::default(),
            linking: FxHashMap::default(),
            decls: HashMap::new(),
            pool_memo: vec![Vec::new(); srcs.len()],
            pools: vec![None; srcs.len()],
            copiers: vec![None; srcs.len()],
            exports: None,
            ahead: None,
            facts,
            lookups: 0,
            bad_symbols: FxHashSet::default(),
            bad_defs: FxHashSet::default(),
            validated: FxHashSet::default(),
            undefined_reported: HashSet::new(),
            keep_exports,
            split,
            plans: Vec::new(),
            split_failed: false,
            errors: Vec::new(),
            stats: Stats {
                inputs: srcs.len(),
                defs_available: srcs.iter().map(|i| u64::from(i.view.def_count())).sum(),
                ..Stats::default()
            },
        }
    }

    fn file(&self, m: InputId) -> &'a str {
        self.srcs
            .get(m.idx())
            .map(|s| s.name.as_str())
            .unwrap_or("?")
    }

    fn view(&self, m: InputId) -> &'a ModuleView {
        &self.srcs[m.idx()].view
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
                    if self.opts.library {
                        self.reach(out, Key::Import(n), decl, None);
                    } else if self.undefined_reported.insert(n.clone()) {
                        let via = self.reexport_path(&name);
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
        loop {
            if let Some((owner, target)) = self.triggered.pop_front() {
                self.need(out, target, Some(owner), false);
            } else if let Some(n) = self.queue.pop_front() {
                self.copy(out, n);
            } else {
                break;
            }
        }
    }

    /// What follows the walk: the planned bodies built, then the pins and re-exported names
    /// attached to what they resolve to.
    fn finish(&mut self, out: &mut Module) {
        self.build_planned(out);
        self.attach_pin_ifs(out);
        self.attach_reexports(out);
        self.stats.defs_reached = self.validated.len() as u64;
        self.stats.defs_copied = self.nodes.len() as u64;
    }

    /// The root names, in order: entry, `--export` names (sorted), then (library link) every
    /// exported name (sorted).
    fn roots(&mut self) -> Vec<(String, Root)> {
        let o = self.opts;
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
            if self.exports.is_none() {
                self.build_export_index();
            }
            // Every export is a root: check every record against its definition first, so
            // that a record that hides or moves an export is refused, not obeyed
            // (spec/linking.md §4).
            self.check_all_records();
            let all: BTreeSet<&str> = self
                .exports
                .iter()
                .flat_map(|ix| ix.keys().copied())
                .collect();
            roots.extend(all.into_iter().map(|n| (n.to_string(), Root::Optional)));
        }
        roots
    }

    /// Checks every definition named by a symbol record of every input against its records
    /// (`ModuleView::check_def_symbols`).
    fn check_all_records(&mut self) {
        for m in InputId::all(self.srcs.len()) {
            let Ok(syms) = self.view(m).try_symbols() else {
                continue; // reported by build_export_index
            };
            let defs: BTreeSet<DefId> = syms.iter().map(|s| DefId::new(s.def)).collect();
            for d in defs {
                self.checked_linkage(SrcDef::new(m, d));
            }
        }
    }

    /// What definition `src` stands for in the output (memoized). Validates it.
    fn resolve_ref(&mut self, out: &mut Module, src: SrcDef) -> Key {
        if let Some(k) = self.ref_memo.get(&src) {
            return k.clone();
        }
        let key = match self.checked_linkage(src) {
            // Reported; the copy will not report it again.
            None => Key::Def(src),
            Some(l) => {
                if let Some(n) = &l.import {
                    let key = match self.resolve_name(out, n) {
                        Resolved::Def(w) => {
                            // Memoized first: the import's type may name it (a generic's
                            // parameters name their generic).
                            self.ref_memo.insert(src, Key::Def(w));
                            let t = Instant::now();
                            self.check_import(out, n, src, w);
                            self.stats.resolve += t.elapsed();
                            Key::Def(w)
                        }
                        Resolved::Missing => {
                            let k = Key::Import(n.as_str().into());
                            self.ref_memo.insert(src, k.clone());
                            self.check_decl(out, &k, src);
                            k
                        }
                        // Through re-exports to a name no input exports: a declaration of
                        // that name.
                        Resolved::Unresolved(a, _) => {
                            let k = Key::Import(a);
                            self.ref_memo.insert(src, k.clone());
                            self.check_decl(out, &k, src);
                            k
                        }
                        // Reported; the copy will not report it again.
                        Resolved::Failed => Key::Def(src),
                    };
                    // A re-export declaration: its names compete (and are attached to what
                    // they resolve to) like those of any reached definition.
                    for e in &l.export {
                        self.resolve_name(out, e);
                    }
                    key
                } else if let Some(n) = l.export.first() {
                    // A definition exported under several names resolves by its first.
                    match self.resolve_name(out, n) {
                        Resolved::Def(w) => Key::Def(w),
                        _ => Key::Def(src),
                    }
                } else if let Some(s) = l.external.as_deref().filter(|_| l.bodyless) {
                    let k = Key::Extern(s.into());
                    self.check_decl(out, &k, src);
                    k
                } else {
                    Key::Def(src)
                }
            }
        };
        self.ref_memo.insert(src, key.clone());
        key
    }

    /// The output instruction for a reference to definition `src` (from its own input),
    /// needed by node `needer`: resolves it, reports an undefined import (executable link),
    /// and reaches the result. With `optional` (a `pin_weak`), an unresolved import gives
    /// `None` silently.
    fn need(
        &mut self,
        out: &mut Module,
        src: SrcDef,
        needer: Option<NodeId>,
        optional: bool,
    ) -> Option<Inst> {
        let key = self.resolve_ref(out, src);
        if let Key::Import(name) = &key
            && !self.opts.library
        {
            if optional {
                return None;
            }
            if self.undefined_reported.insert(name.clone()) {
                let chain = self.chain(needer);
                // The name imported, when it is not the one left undefined: re-exports led
                // from one to the other.
                let imported = linkage_of(self.view(src.input), src.def)
                    .ok()
                    .and_then(|l| l.import);
                match imported.filter(|i| **i != **name) {
                    Some(i) => {
                        let via = self.reexport_path(&i);
                        self.errors.push(LinkError::UndefinedReexport {
                            name: name.to_string(),
                            via,
                            chain,
                        });
                    }
                    None => self.errors.push(LinkError::Undefined {
                        name: name.to_string(),
                        chain,
                    }),
                }
            }
        }
        let copied = match key {
            Key::Def(w) => w,
            _ => src,
        };
        Some(self.reach(out, key, copied, needer))
    }

    /// The output instruction of `key`, created (and queued for copying) on first reach.
    fn reach(&mut self, out: &mut Module, key: Key, src: SrcDef, parent: Option<NodeId>) -> Inst {
        if let Some(&n) = self.node_of.get(&key) {
            return self.nodes[n.idx()].out;
        }
        let opcode = self
            .view(src.input)
            .def_opcode(src.def.index())
            .unwrap_or(Opcode::FUNC);
        let root = out.root();
        let inst = match out.new_inst(opcode, None, Vec::new(), Payload::None) {
            Ok(i) => i,
            Err(_) => out
                .new_inst(Opcode::FUNC, None, Vec::new(), Payload::None)
                .unwrap_or(root),
        };
        if let Err(e) = out.append_child(root, inst) {
            self.errors.push(LinkError::Internal(e.to_string()));
        }
        let id = NodeId::new(self.nodes.len() as u32);
        self.nodes.push(Node {
            src,
            out: inst,
            parent,
            decl: !matches!(key, Key::Def(..)),
        });
        if let Some(waiting) = self.pending.remove(&key) {
            self.triggered.extend(waiting);
        }
        self.node_of.insert(key, id);
        self.queue.push_back(id);
        inst
    }

    /// Re-attaches the `pin_if` decorations whose condition was reached.
    fn attach_pin_ifs(&mut self, out: &mut Module) {
        for p in std::mem::take(&mut self.pin_ifs) {
            let (Some(ck), Some(dk)) = (
                self.ref_memo.get(&SrcDef::new(p.module, p.cond)),
                self.ref_memo.get(&SrcDef::new(p.module, p.def)),
            ) else {
                continue;
            };
            let (Some(&c), Some(&d)) = (self.node_of.get(ck), self.node_of.get(dk)) else {
                continue;
            };
            let owner = self.nodes[p.owner.idx()].out;
            let ops = vec![self.nodes[d.idx()].out, self.nodes[c.idx()].out];
            if let Err(e) = out.add_decoration(owner, Opcode::PIN_IF, ops, Payload::None) {
                self.errors.push(LinkError::Internal(e.to_string()));
            }
        }
    }

    /// Attaches every re-exported name that resolved to a definition or declaration of the
    /// output to it, as an extra `export` (in name order, after its own decorations), unless
    /// `--internalize` drops the name.
    fn attach_reexports(&mut self, out: &mut Module) {
        let names: Vec<Box<str>> = self.reexports.keys().cloned().collect();
        for name in names {
            if self.opts.internalize && !self.keep_exports.contains(&*name) {
                continue;
            }
            let key = match self.name_memo.get(&name) {
                Some(Resolved::Def(w)) => Key::Def(*w),
                Some(Resolved::Unresolved(a, _)) => Key::Import(a.clone()),
                _ => continue,
            };
            let Some(&n) = self.node_of.get(&key) else {
                continue;
            };
            let target = self.nodes[n.idx()].out;
            if out
                .decoration_strs(target, Opcode::EXPORT)
                .any(|e| e == &*name)
            {
                continue;
            }
            if let Err(e) = out.add_decoration(
                target,
                Opcode::EXPORT,
                Vec::new(),
                Payload::Str(name.into()),
            ) {
                self.errors.push(LinkError::Internal(e.to_string()));
            }
        }
    }

    /// The re-exports followed from `name`: `@b (n.irm) -> @a (m.irm) -> @x`, each name with
    /// the file re-exporting it, then the name the chain ends at.
    fn reexport_path(&self, name: &str) -> String {
        let mut parts = Vec::new();
        let mut cur: String = name.to_string();
        for _ in 0..MAX_REEXPORT_CHAIN {
            let Some(&decl) = self.reexports.get(cur.as_str()) else {
                break;
            };
            parts.push(format!("@{cur} ({})", self.file(decl.input)));
            match linkage_of(self.view(decl.input), decl.def)
                .ok()
                .and_then(|l| l.import)
            {
                Some(next) => cur = next,
                None => break,
            }
        }
        parts.push(format!("@{cur}"));
        parts.join(" -> ")
    }

    /// The chain of nodes from `from` up to its root.
    fn chain(&self, from: Option<NodeId>) -> Chain {
        let mut links = Vec::new();
        let mut cur = from;
        while let Some(n) = cur {
            let Some(node) = self.nodes.get(n.idx()) else {
                break;
            };
            links.push(ChainLink {
                name: self.display_name(node.src),
                file: self.file(node.src.input).to_string(),
            });
            // Parents are created before their children: the walk ends.
            cur = node.parent.filter(|&p| p < n);
        }
        Chain(links)
    }

    /// A definition's name for messages: export, import or extern name, else its name hint,
    /// else `#index`.
    fn display_name(&self, src: SrcDef) -> String {
        let view = self.view(src.input);
        if let Ok(l) = linkage_of(view, src.def)
            && let Some(n) = l.export.into_iter().next().or(l.import).or(l.external)
        {
            return n;
        }
        let d = src.def.index();
        view.def_name(d)
            .map(str::to_string)
            .unwrap_or_else(|| format!("#{d}"))
    }
}

#[derive(Clone, Copy)]
enum Root {
    Entry,
    Export,
    Optional,
}
