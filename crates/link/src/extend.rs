//! Linking onto a live program (`spec/linking.md`, "Linking onto a live program"): the
//! result *extends* a base module, which a session (`irkit_backend::Session::load`) has
//! already instantiated.
//!
//! Two steps:
//!
//! 1. The new inputs are linked together as a library ([`LinkOptions::library`]): every
//!    export is a root and stays exported, their imports of each other resolve with every
//!    check of a normal link, and what none of them defines stays an import declaration.
//! 2. That library is appended to a clone of `base` (whose definitions therefore keep their
//!    instructions, `Inst` ids, and their content): each remaining import declaration resolves
//!    by name to `base`'s exported definition of that name (kind and type checked, as a normal
//!    link checks them); an export of a name `base` already exports is a duplicate, except a
//!    `linkonce` copy equal (by linking hash) to `base`'s `linkonce` definition, which
//!    resolves to `base`'s copy, and a `weak` definition, which yields to `base`'s (kind and
//!    type checked as an import's); a body-less `extern` declaration resolves to `base`'s
//!    declaration of the same C symbol. Everything else is copied after `base`'s definitions
//!    (types and constants re-interned, so they merge with `base`'s).

use std::collections::HashMap;
use std::time::Instant;

use irkit_core::{Cloner, Inst, Module, Opcode, Payload};
use irkit_format::SymbolRole;

use crate::error::{Chain, ChainLink, LinkError, LinkErrors};
use crate::input::Input;
use crate::{LinkOptions, Linked};

/// The name `base` has in messages.
pub const LIVE_PROGRAM: &str = "the live program";

/// Links `inputs` onto `base`: a module that holds every definition of `base` unchanged at the
/// same instruction, then the definitions of `inputs` (linked as a library: all their exports
/// are roots and stay exported), their imports resolved against each other and against
/// `base`'s exports. An import neither defines is an error ([`LinkError::Undefined`]), as are
/// the other problems of a normal link; so is an export of a name `base` already exports
/// ([`LinkError::Duplicate`]), unless both are `linkonce` and equal, when `base`'s copy is
/// used ([`LinkError::LinkonceMismatch`] if they differ), or the new one is `weak`, when it
/// yields to `base`'s (a strong one cannot replace a live `weak` definition: duplicate). [`LinkOptions::library`] and
/// [`LinkOptions::internalize`] are ignored (the link is a library link, keeping every
/// export). When [`LinkOptions::verify`] is on, the inputs' library is verified before it is
/// appended (the result then needs no verification of its own: what is appended is that
/// library, each declaration resolved to a live definition of its kind and type), and the
/// whole result only when a generic, interface or witness table resolved to `base` (checked by
/// kind here, their uses by the verifier): a link costs what the inputs cost, not `base`.
pub fn extend(base: &Module, inputs: Vec<Input>, opts: &LinkOptions) -> Result<Linked, LinkErrors> {
    let mut out = base.clone();
    let stats = extend_live(&mut out, &mut LiveNames::new(), inputs, opts)?;
    Ok(Linked { module: out, stats })
}

/// [`extend`] in place: appends the definitions of `inputs` to `live` itself, without a copy of
/// it, `names` indexing its exports (kept up to date from one call to the next, so that a
/// link reads only what it appends). On success `live` is what [`extend`] returns; on an error
/// its live instructions are unchanged, and what the link had appended before the error was
/// found is removed (dead slots, and unused types and constants left in the pool).
pub fn extend_live(
    live: &mut Module,
    names: &mut LiveNames,
    inputs: Vec<Input>,
    opts: &LinkOptions,
) -> Result<crate::Stats, LinkErrors> {
    // Which input exports / imports each name, for messages.
    let mut exporter: HashMap<String, String> = HashMap::new();
    let mut importer: HashMap<String, String> = HashMap::new();
    for i in &inputs {
        let Ok(syms) = i.view.try_symbols() else {
            continue; // the link reports it
        };
        for s in syms {
            let map = match s.role {
                SymbolRole::Export => &mut exporter,
                SymbolRole::Import => &mut importer,
                _ => continue,
            };
            map.entry(s.name.to_string())
                .or_insert_with(|| i.name.clone());
        }
    }
    // The library is verified on its own (the new definitions, their imports declarations):
    // what is appended is that, its declarations resolved to live definitions of their kind
    // and type, so the result is verified without reading `base` again (spec/linking.md).
    let lib_opts = LinkOptions {
        library: true,
        internalize: false,
        ..opts.clone()
    };
    let Linked {
        module: lib,
        mut stats,
    } = crate::link(inputs, &lib_opts)?;
    let t = Instant::now();
    names.update(live);
    let exports = &names.exports;
    let externs = &names.externs;
    let base: &Module = live;
    let file_of = |map: &HashMap<String, String>, n: &str| {
        map.get(n).cloned().unwrap_or_else(|| "?".to_string())
    };
    let mut cloner = Cloner::new(&lib);
    let mut errors = Vec::new();
    let mut copy = Vec::new();
    // Semantic hashes need binary views: both modules are encoded on the first comparison.
    let mut views: Option<(irkit_format::ModuleView, irkit_format::ModuleView)> = None;
    // Pass 1: what each definition of the library becomes (by name only).
    let mut checks: Vec<(Inst, Inst, Check)> = Vec::new();
    // Names a new input gives a live definition (a re-export of it, or another name of a
    // definition that resolves to it), added to it as `export`s after the copy.
    let mut new_names: Vec<(Inst, String)> = Vec::new();
    for &d in lib.top_level() {
        let bodyless = lib.children(d).is_empty();
        if let Some(n) = lib.decoration_str(d, Opcode::IMPORT).filter(|_| bodyless) {
            let Some(&b) = exports.get(n) else {
                errors.push(LinkError::Undefined {
                    name: n.to_string(),
                    chain: user_chain(&lib, d, &file_of(&importer, n)),
                });
                continue;
            };
            if !same_kind(lib.opcode(d), base.opcode(b)) {
                errors.push(LinkError::KindMismatch {
                    name: n.to_string(),
                    import_file: file_of(&importer, n),
                    import_kind: lib.opcode(d).to_string(),
                    export_file: LIVE_PROGRAM.to_string(),
                    export_kind: base.opcode(b).to_string(),
                });
            }
            cloner.map(d, b);
            checks.push((d, b, Check::Import(n.to_string(), file_of(&importer, n))));
            // A re-export of a live definition: its names go to that definition.
            for r in lib.decoration_strs(d, Opcode::EXPORT) {
                if exports.contains_key(r) {
                    errors.push(LinkError::Duplicate {
                        name: r.to_string(),
                        first: LIVE_PROGRAM.to_string(),
                        second: file_of(&exporter, r),
                    });
                } else {
                    new_names.push((b, r.to_string()));
                }
            }
            continue;
        }
        if let Some(n) = lib
            .decoration_strs(d, Opcode::EXPORT)
            .find(|n| exports.contains_key(*n))
            && let Some(&b) = exports.get(n)
        {
            for r in lib.decoration_strs(d, Opcode::EXPORT) {
                if !exports.contains_key(r) {
                    new_names.push((b, r.to_string()));
                }
            }
            let once = |m: &Module, x: Inst| m.find_decoration(x, Opcode::LINKONCE).is_some();
            let second = file_of(&exporter, n);
            if lib.find_decoration(d, Opcode::WEAK).is_some() {
                // A weak definition yields to the live one, checked as an import of it.
                if !same_kind(lib.opcode(d), base.opcode(b)) {
                    errors.push(LinkError::KindMismatch {
                        name: n.to_string(),
                        import_file: second.clone(),
                        import_kind: lib.opcode(d).to_string(),
                        export_file: LIVE_PROGRAM.to_string(),
                        export_kind: base.opcode(b).to_string(),
                    });
                }
                checks.push((d, b, Check::Import(n.to_string(), second)));
            } else if once(base, b) && once(&lib, d) {
                if views.is_none() {
                    match (encode(base), encode(&lib)) {
                        (Ok(a), Ok(l)) => views = Some((a, l)),
                        (Err(e), _) | (_, Err(e)) => {
                            errors.push(e);
                            continue;
                        }
                    }
                }
                let (bv, lv) = views.as_ref().expect("encoded above");
                let hb = def_index(base, b).and_then(|i| bv.linking_hash(i).ok());
                let hl = def_index(&lib, d).and_then(|i| lv.linking_hash(i).ok());
                if hb.is_none() || hb != hl {
                    errors.push(LinkError::LinkonceMismatch {
                        name: n.to_string(),
                        first: LIVE_PROGRAM.to_string(),
                        second,
                    });
                }
            } else {
                errors.push(LinkError::Duplicate {
                    name: n.to_string(),
                    first: LIVE_PROGRAM.to_string(),
                    second,
                });
            }
            cloner.map(d, b);
            continue;
        }
        if let Some(n) = lib.decoration_str(d, Opcode::EXTERN).filter(|_| bodyless)
            && let Some(&b) = externs.get(n)
        {
            cloner.map(d, b);
            checks.push((d, b, Check::Extern(n.to_string())));
            continue;
        }
        copy.push((d, Some(base.root())));
    }
    if !errors.is_empty() {
        return Err(LinkErrors(errors));
    }
    // Pass 2: the copy (types may name definitions: every one is mapped or copied now).
    let kinds: Vec<(Inst, Opcode)> = checks
        .iter()
        .map(|&(_, b, _)| (b, base.opcode(b)))
        .collect();
    let defs_before = base.top_level().len();
    let out = live;
    if let Err(e) = cloner.clone_forest(out, &copy, &mut |_, _| None) {
        undo(out, defs_before);
        return Err(LinkErrors(vec![LinkError::Internal(e.to_string())]));
    }
    // Pass 3: the declarations resolved to `base` have the type of what they resolve to. A
    // generic's signature names its own parameters, which are not copied: generics, interfaces
    // and witness tables are checked by kind only (the verifier checks their uses).
    let type_text = |m: &Module, t: Option<Inst>| match t {
        Some(t) => irkit_core::message::value_text(m, t),
        None => "(no type)".to_string(),
    };
    // Whether a declaration resolved by kind only: its uses are checked by verifying the
    // whole result.
    let mut by_kind_only = false;
    for ((d, b, check), (_, b_kind)) in checks.into_iter().zip(kinds) {
        if matches!(
            lib.opcode(d),
            Opcode::GENERIC | Opcode::INTERFACE | Opcode::WITNESS_TABLE
        ) {
            by_kind_only = true;
            continue;
        }
        let ty = match lib.ty(d).map(|t| cloner.clone_hoistable(out, t)) {
            Some(Ok(t)) => Some(t),
            Some(Err(e)) => {
                errors.push(LinkError::Internal(e.to_string()));
                continue;
            }
            None => None,
        };
        if out.ty(b) == ty && same_kind(lib.opcode(d), b_kind) {
            continue;
        }
        match check {
            Check::Import(n, file) => {
                if same_kind(lib.opcode(d), b_kind) {
                    errors.push(LinkError::TypeMismatch {
                        import_file: file,
                        name: n,
                        import_ty: type_text(out, ty),
                        export_file: LIVE_PROGRAM.to_string(),
                        export_ty: type_text(out, out.ty(b)),
                    });
                }
            }
            Check::Extern(n) => errors.push(LinkError::DeclarationMismatch {
                first_ty: type_text(out, out.ty(b)),
                first_file: LIVE_PROGRAM.to_string(),
                second_ty: type_text(out, ty),
                second_file: file_of(&importer, &n),
                name: n,
            }),
        }
    }
    if !errors.is_empty() {
        undo(out, defs_before);
        return Err(LinkErrors(errors));
    }
    // The live definitions' new names: appended `export`s, the one change `Module::extends`
    // allows to a live definition.
    new_names.sort();
    new_names.dedup();
    let mut added = Vec::new();
    for (b, name) in new_names {
        match out.add_decoration(b, Opcode::EXPORT, Vec::new(), Payload::Str(name.into())) {
            Ok(x) => added.push(x),
            Err(e) => {
                added.extend_from_slice(&out.top_level()[defs_before..]);
                let _ = out.remove_all(&added);
                return Err(LinkErrors(vec![LinkError::Internal(e.to_string())]));
            }
        }
    }
    stats.resolve += t.elapsed();
    if opts.verify && by_kind_only {
        let t = Instant::now();
        if let Err(errs) = irkit_core::verify::verify(out) {
            added.extend_from_slice(&out.top_level()[defs_before..]);
            let _ = out.remove_all(&added);
            return Err(LinkErrors(
                errs.iter()
                    .map(|e| LinkError::Verify(e.to_string()))
                    .collect(),
            ));
        }
        stats.verify += t.elapsed();
    }
    names.update(out);
    Ok(stats)
}

/// Removes the definitions appended to `m` after its first `defs` (a link that failed).
fn undo(m: &mut Module, defs: usize) {
    let added = m.top_level()[defs.min(m.top_level().len())..].to_vec();
    // Only live, top-level instructions: the removal cannot fail.
    let _ = m.remove_all(&added);
}

/// The names of a live program that a link onto it resolves against: the definitions it
/// exports, and its body-less `extern` declarations by C symbol. Kept up to date by
/// [`extend_live`], which reads only the instructions added since its last call.
#[derive(Debug, Default)]
pub struct LiveNames {
    exports: HashMap<String, Inst>,
    externs: HashMap<String, Inst>,
    /// The arena slots read so far.
    seen: usize,
}

impl LiveNames {
    /// An empty index (for a module none of whose names were read yet).
    pub fn new() -> LiveNames {
        LiveNames::default()
    }

    /// Reads the names the instructions of `m` after the slots seen so far give top-level
    /// definitions (a smaller module than was read is read anew).
    fn update(&mut self, m: &Module) {
        if m.arena_len() < self.seen {
            *self = LiveNames::default();
        }
        let root = m.root();
        for i in self.seen..m.arena_len() {
            let Ok(i) = u32::try_from(i) else { break };
            let x = Inst::from_index(i);
            let Some(d) = m.get(x).filter(|d| !d.is_dead()) else {
                continue;
            };
            let op = d.opcode();
            if op != Opcode::EXPORT && op != Opcode::EXTERN {
                continue;
            }
            let Some(def) = d
                .parent()
                .filter(|&p| m.parent(p) == Some(root) && m.is_live(p))
            else {
                continue;
            };
            let Payload::Str(n) = d.payload() else {
                continue;
            };
            if op == Opcode::EXPORT {
                self.exports.entry(n.to_string()).or_insert(def);
            } else if m.decoration_str(def, Opcode::EXTERN) == Some(n) && m.children(def).is_empty()
            {
                self.externs.entry(n.to_string()).or_insert(def);
            }
        }
        self.seen = m.arena_len();
    }
}

/// Whether an import of kind `import` may resolve to an export of kind `export`: the same
/// opcode, or a `func` import of a NOIR `proc` (as in a normal link).
fn same_kind(import: Opcode, export: Opcode) -> bool {
    import == export || (import == Opcode::FUNC && export == Opcode::PROC)
}

/// What a declaration resolved to `base` is checked for.
enum Check {
    /// An import (or a `weak` definition) of this name, in this input.
    Import(String, String),
    /// A body-less `extern` declaration of this C symbol.
    Extern(String),
}

/// The chain naming who needs import declaration `d` of the library `lib`: the first
/// top-level definition referring to it.
fn user_chain(lib: &Module, d: Inst, file: &str) -> Chain {
    let uses = |x: Inst| lib.operands(x).contains(&d) || lib.ty(x) == Some(d);
    for &t in lib.top_level() {
        if t == d {
            continue;
        }
        let mut stack = vec![t];
        while let Some(x) = stack.pop() {
            if uses(x) {
                let name = lib
                    .decoration_str(t, Opcode::EXPORT)
                    .or_else(|| lib.name(t))
                    .unwrap_or("?")
                    .to_string();
                return Chain(vec![ChainLink {
                    name,
                    file: file.to_string(),
                }]);
            }
            stack.extend(lib.children(x).iter().copied());
            stack.extend(lib.decorations(x).iter().copied());
        }
    }
    Chain(Vec::new())
}

/// The index of top-level definition `d` in `m`'s binary encoding (its position).
fn def_index(m: &Module, d: Inst) -> Option<u32> {
    m.top_level().iter().position(|&x| x == d).map(|i| i as u32)
}

fn encode(m: &Module) -> Result<irkit_format::ModuleView, LinkError> {
    let bytes = irkit_format::write(m).map_err(|e| LinkError::Encode {
        file: LIVE_PROGRAM.to_string(),
        message: e.to_string(),
    })?;
    Ok(irkit_format::ModuleView::from_bytes(&bytes)?)
}
