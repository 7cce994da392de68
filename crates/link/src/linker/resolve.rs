//! Resolution: which definition a name stands for, and what a reference to a definition
//! stands for in the output ([`Resolution`] owns those answers). Candidates come from the
//! inputs' symbol records (`exports.rs`), each checked against its definition before it is
//! trusted; `arbitrate` applies spec/linking.md §3 (strong over weak, `linkonce` copies
//! compared by linking hash, stubs, duplicates); re-export chains are followed iteratively.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Instant;

use irkit_core::{Inst, Module};
use rustc_hash::{FxHashMap, FxHashSet};

use super::context::Context;
use super::exports::Exports;
use super::index::{DefIndex, InputId, SrcDef};
use super::linkage::{Linkage, linkage_of};
use super::{Key, State};
use crate::error::LinkError;

/// The longest re-export chain followed (names, the first included): a longer one is an
/// error, so that resolution stays bounded whatever the inputs.
pub(super) const MAX_REEXPORT_CHAIN: usize = 256;

/// How many names of a chain too long its error shows.
const SHOWN: usize = 4;

/// What a name resolves to, re-exports followed (spec/linking.md §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Resolved {
    /// No input exports the name.
    Missing,
    /// A definition.
    Def(SrcDef),
    /// A chain of re-exports ending at a name no input exports: that name, and the last
    /// re-export declaration, which imports it.
    Unresolved(Box<str>, SrcDef),
    /// The name cannot be resolved and why was reported (a re-export cycle, a chain too
    /// long, an unreadable candidate).
    Failed,
}

/// What names and references resolve to, and what was checked on the way. Maps keyed by
/// definitions use FxHash: those keys are bounded by the inputs' definition counts, and
/// hashing them is on the copy's path (every reference to another definition). Maps keyed by
/// names read from the inputs (`name_memo`, `decls` and `undefined_reported`) keep std's
/// DoS-resistant hasher: a hostile file chooses those strings freely.
#[derive(Default)]
pub(super) struct Resolution<'a> {
    /// What each definition referred to stands for in the output.
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
    /// The export candidates of each name.
    exports: Exports<'a>,
    /// Definitions found unreadable or contradicting their file's symbol index (reported
    /// once each).
    bad_defs: FxHashSet<SrcDef>,
    /// Definitions reached (validated).
    validated: FxHashSet<SrcDef>,
    /// Names reported undefined (once each).
    undefined_reported: HashSet<Box<str>>,
}

impl<'a> Resolution<'a> {
    /// What definition `src` stands for, if it was resolved.
    pub(super) fn memo(&self, src: SrcDef) -> Option<&Key> {
        self.ref_memo.get(&src)
    }

    /// Counts definitions reached (validated).
    pub(super) fn validated(&self) -> usize {
        self.validated.len()
    }

    /// Records that definition `src` was reached (validated).
    pub(super) fn mark_validated(&mut self, src: SrcDef) {
        self.validated.insert(src);
    }

    /// Whether import declaration `imp` is checked for the first time (then it counts as
    /// checked).
    pub(super) fn first_import_check(&mut self, imp: SrcDef) -> bool {
        self.imports_checked.insert(imp)
    }

    /// The first declaration of unresolved `key` and its type; `None` (and `src` with `ty`
    /// recorded as the first) if there was none.
    pub(super) fn first_decl(
        &mut self,
        key: &Key,
        src: SrcDef,
        ty: Option<Inst>,
    ) -> Option<(SrcDef, Option<Inst>)> {
        match self.decls.get(key) {
            Some(&first) => Some(first),
            None => {
                self.decls.insert(key.clone(), (src, ty));
                None
            }
        }
    }

    /// Whether undefined `name` is reported for the first time (then it counts as reported).
    pub(super) fn first_undefined(&mut self, name: &str) -> bool {
        !self.undefined_reported.contains(name) && self.undefined_reported.insert(name.into())
    }

    /// Every re-exported name with what it resolved to in the output (a definition, or an
    /// import no input exports), in name order.
    pub(super) fn reexport_targets(&self) -> Vec<(&str, Key)> {
        self.reexports
            .keys()
            .filter_map(|name| {
                let key = match self.name_memo.get(name)? {
                    Resolved::Def(w) => Key::Def(*w),
                    Resolved::Unresolved(a, _) => Key::Import(a.clone()),
                    _ => return None,
                };
                Some((&**name, key))
            })
            .collect()
    }

    /// The re-exports followed from `name`: `@b (n.irm) -> @a (m.irm) -> @x`, each name with
    /// the file re-exporting it, then the name the chain ends at.
    pub(super) fn reexport_path(&self, cx: &Context<'a>, name: &str) -> String {
        let mut parts = Vec::new();
        let mut cur: String = name.to_string();
        for _ in 0..MAX_REEXPORT_CHAIN {
            let Some(&decl) = self.reexports.get(cur.as_str()) else {
                break;
            };
            parts.push(format!("@{cur} ({})", cx.file(decl.input)));
            match linkage_of(cx.view(decl.input), decl.def)
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

    /// Every exported name of every input, in name order, once every definition a symbol
    /// record names is checked against its records (a library link's roots: a record that
    /// hides or moves an export is refused, not obeyed; spec/linking.md §4).
    pub(super) fn all_exports(
        &mut self,
        cx: &Context<'a>,
        errors: &mut Vec<LinkError>,
    ) -> BTreeSet<&'a str> {
        let names = self.exports.all_names(cx.srcs, errors);
        for m in InputId::all(cx.srcs.len()) {
            let Ok(syms) = cx.view(m).try_symbols() else {
                continue; // reported when the index was built
            };
            let defs: BTreeSet<DefIndex> = syms.iter().map(|s| DefIndex::new(s.def)).collect();
            for d in defs {
                self.checked_linkage(cx, errors, SrcDef::new(m, d));
            }
        }
        names
    }

    /// `@b (n.irm) -> @a (m.irm) -> …`, the chain's names with the files re-exporting them,
    /// then `last` if given.
    fn chain_text(cx: &Context<'_>, chain: &[(Box<str>, SrcDef)], last: Option<&str>) -> String {
        let mut parts: Vec<String> = chain
            .iter()
            .map(|(n, decl)| format!("@{n} ({})", cx.file(decl.input)))
            .collect();
        if let Some(l) = last {
            parts.push(format!("@{l}"));
        }
        parts.join(" -> ")
    }

    /// The winning export of `name` across all inputs: the single strong one, else the
    /// (collapsed) `linkonce` one, else the first `weak` one in input order, with its import
    /// name when it is a re-export. Conflicts are reported here, once per name (the caller
    /// memoizes).
    fn direct_winner(
        &mut self,
        cx: &Context<'a>,
        errors: &mut Vec<LinkError>,
        name: &str,
    ) -> Option<(SrcDef, Option<String>)> {
        // A symbol record is derived data: the definition it names must really export the
        // name (a record pointing elsewhere is refused, never followed).
        let cands: Vec<(SrcDef, &Linkage)> = self
            .exports
            .candidates(
                (cx.srcs, cx.defs_available),
                || cx.ahead.and_then(|a| a.take_export_index()),
                errors,
                name,
            )
            .into_iter()
            .filter_map(|c| self.checked_linkage(cx, errors, c).map(|l| (c, l)))
            .collect();
        let w = match cands.as_slice() {
            [] => None,
            [(c, _)] => Some(*c),
            _ => self.arbitrate(cx, errors, name, &cands),
        }?;
        let import = cands
            .into_iter()
            .find(|c| c.0 == w)
            .and_then(|c| c.1.import.clone());
        Some((w, import))
    }

    /// The linkage of definition `src`, once its decorations are checked against its file's
    /// symbol index (`ModuleView::check_def_symbols`: the linker acts on both, so they must
    /// agree). `None` when the definition cannot be read or contradicts the index; the
    /// problem is reported once.
    pub(super) fn checked_linkage(
        &mut self,
        cx: &Context<'a>,
        errors: &mut Vec<LinkError>,
        src: SrcDef,
    ) -> Option<&'a Linkage> {
        self.validated.insert(src);
        let facts = cx.facts;
        match facts.get(cx.view(src.input), src) {
            Ok(f) => Some(&f.linkage),
            Err(e) => {
                self.def_error(errors, src, e);
                None
            }
        }
    }

    /// Reports a problem with definition `src`, once.
    pub(super) fn def_error(
        &mut self,
        errors: &mut Vec<LinkError>,
        src: SrcDef,
        e: irkit_format::ReadError,
    ) {
        if self.bad_defs.insert(src) {
            errors.push(e.into());
        }
    }

    /// The linking hash of definition `src` (`spec/format.md` §3.3), recomputed from the
    /// file, memoized.
    fn linking_hash(
        &mut self,
        cx: &Context<'a>,
        errors: &mut Vec<LinkError>,
        src: SrcDef,
    ) -> Option<[u8; 32]> {
        if let Some(h) = self.linking.get(&src) {
            return Some(*h);
        }
        match cx.view(src.input).linking_hash(src.def.index()) {
            Ok(h) => {
                self.linking.insert(src, h);
                Some(h)
            }
            Err(e) => {
                errors.push(e.into());
                None
            }
        }
    }

    /// Picks the winner among checked candidates (definition, linkage).
    fn arbitrate(
        &mut self,
        cx: &Context<'a>,
        errors: &mut Vec<LinkError>,
        name: &str,
        cands: &[(SrcDef, &Linkage)],
    ) -> Option<SrcDef> {
        let mut strong = Vec::new();
        let mut once = Vec::new();
        let mut weak = Vec::new();
        for (c, l) in cands {
            let list = if l.weak {
                &mut weak
            } else if l.linkonce {
                &mut once
            } else {
                &mut strong
            };
            list.push(*c);
        }
        if let Some(&first) = strong.first() {
            for c in &strong[1..] {
                errors.push(LinkError::Duplicate {
                    name: name.to_string(),
                    first: cx.file(first.input).to_string(),
                    second: cx.file(c.input).to_string(),
                });
            }
            return Some(first);
        }
        if let Some(&first) = once.first() {
            // Copies collapse only when their code, and everything they reach privately, is
            // the same (`spec/linking.md` §3): recomputed here, never taken from the files.
            let h0 = self.linking_hash(cx, errors, first);
            for &c in &once[1..] {
                let h = self.linking_hash(cx, errors, c);
                if h0.is_some() && h.is_some() && h != h0 {
                    errors.push(LinkError::LinkonceMismatch {
                        name: name.to_string(),
                        first: cx.file(first.input).to_string(),
                        second: cx.file(c.input).to_string(),
                    });
                }
            }
            return Some(first);
        }
        weak.first().copied()
    }
}

impl<'a> State<'a> {
    /// The linkage of definition `src`, checked ([`Resolution::checked_linkage`]).
    pub(super) fn checked_linkage(&mut self, src: SrcDef) -> Option<&'a Linkage> {
        self.res.checked_linkage(&self.cx, &mut self.errors, src)
    }

    /// What `name` resolves to: its winning export (`direct_winner`), and when that is a
    /// re-export (an import declaration exporting `name`), what its import resolves to, and
    /// so on, iteratively, at most [`MAX_REEXPORT_CHAIN`] names. Every re-export declaration
    /// of the chain is type-checked against the definition the chain ends at, as an import
    /// is (or, when it ends at a name no input exports, against the other declarations of
    /// that name). Memoized for every name of the chain.
    pub(super) fn resolve_name(&mut self, out: &mut Module, name: &str) -> Resolved {
        if let Some(r) = self.res.name_memo.get(name) {
            return r.clone();
        }
        let (cx, res, errors) = (&self.cx, &mut self.res, &mut self.errors);
        // (name, its re-export declaration), outermost first.
        let mut chain: Vec<(Box<str>, SrcDef)> = Vec::new();
        let mut names: HashSet<Box<str>> = HashSet::new();
        let mut cur: Box<str> = name.into();
        let reported = errors.len();
        let result = loop {
            if !chain.is_empty()
                && let Some(r) = res.name_memo.get(&cur)
            {
                break r.clone();
            }
            if chain.len() >= MAX_REEXPORT_CHAIN {
                // The first names tell where it starts; the rest would be a very long line.
                let text = format!(
                    "{} -> … ({} more)",
                    Resolution::chain_text(cx, &chain[..SHOWN], None),
                    chain.len() - SHOWN
                );
                errors.push(LinkError::ReexportTooLong {
                    limit: MAX_REEXPORT_CHAIN,
                    chain: text,
                });
                break Resolved::Failed;
            }
            let t = Instant::now();
            let winner = res.direct_winner(cx, errors, &cur);
            self.stats.resolve += t.elapsed();
            match winner {
                None if errors.len() > reported => break Resolved::Failed,
                None => match chain.last() {
                    None => break Resolved::Missing,
                    Some(&(_, decl)) => break Resolved::Unresolved(cur, decl),
                },
                Some((w, None)) => break Resolved::Def(w),
                Some((decl, Some(next))) => {
                    let next: Box<str> = next.into();
                    // The names of the chain so far (the one at hand among them).
                    names.insert(cur.clone());
                    chain.push((cur, decl));
                    if names.contains(&next) {
                        let text = Resolution::chain_text(cx, &chain, Some(&next));
                        errors.push(LinkError::ReexportCycle { chain: text });
                        break Resolved::Failed;
                    }
                    cur = next;
                }
            }
        };
        res.name_memo.insert(name.into(), result.clone());
        for (n, decl) in &chain {
            res.name_memo.insert(n.clone(), result.clone());
            res.reexports.insert(n.clone(), *decl);
        }
        // The re-export declarations are imports of the name after theirs: checked as such
        // (timed only when there are some: most names have none, and reading the clock for
        // each of them showed in profiles of large links).
        if chain.is_empty() {
            return result;
        }
        let t = Instant::now();
        for &(_, decl) in &chain {
            match &result {
                Resolved::Def(w) => {
                    if let Some(n) = self.checked_linkage(decl).and_then(|l| l.import.clone()) {
                        self.check_import(out, &n, decl, *w);
                    }
                }
                Resolved::Unresolved(n, _) => self.check_decl(out, &Key::Import(n.clone()), decl),
                _ => {}
            }
        }
        self.stats.resolve += t.elapsed();
        result
    }

    /// What definition `src` stands for in the output (memoized). Validates it.
    pub(super) fn resolve_ref(&mut self, out: &mut Module, src: SrcDef) -> Key {
        if let Some(k) = self.res.ref_memo.get(&src) {
            return k.clone();
        }
        let key = match self.res.checked_linkage(&self.cx, &mut self.errors, src) {
            // Reported; the copy will not report it again.
            None => Key::Def(src),
            Some(l) => {
                if let Some(n) = &l.import {
                    let key = match self.resolve_name(out, n) {
                        Resolved::Def(w) => {
                            // Memoized first: the import's type may name it (a generic's
                            // parameters name their generic).
                            self.res.ref_memo.insert(src, Key::Def(w));
                            let t = Instant::now();
                            self.check_import(out, n, src, w);
                            self.stats.resolve += t.elapsed();
                            Key::Def(w)
                        }
                        Resolved::Missing => {
                            let k = Key::Import(n.as_str().into());
                            self.res.ref_memo.insert(src, k.clone());
                            self.check_decl(out, &k, src);
                            k
                        }
                        // Through re-exports to a name no input exports: a declaration of
                        // that name.
                        Resolved::Unresolved(a, _) => {
                            let k = Key::Import(a);
                            self.res.ref_memo.insert(src, k.clone());
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
        self.res.ref_memo.insert(src, key.clone());
        key
    }
}
