//! Resolution: which definition a name stands for. Candidates come from the inputs' symbol
//! records, each checked against its definition before it is trusted; `arbitrate` applies
//! spec/linking.md §3 (strong over weak, `linkonce` copies compared by linking hash, stubs,
//! duplicates).

use std::collections::HashSet;
use std::time::Instant;

use irkit_core::Module;
use irkit_format::SymbolRole;

use super::index::{DefId, InputId, SrcDef};
use super::linkage::{ExportIndex, Linkage};
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

impl<'a> State<'a> {
    /// What `name` resolves to: its winning export (`direct_winner`), and when that is a
    /// re-export (an import declaration exporting `name`), what its import resolves to, and
    /// so on, iteratively, at most [`MAX_REEXPORT_CHAIN`] names. Every re-export declaration
    /// of the chain is type-checked against the definition the chain ends at, as an import
    /// is (or, when it ends at a name no input exports, against the other declarations of
    /// that name). Memoized for every name of the chain.
    pub(super) fn resolve_name(&mut self, out: &mut Module, name: &str) -> Resolved {
        if let Some(r) = self.name_memo.get(name) {
            return r.clone();
        }
        // (name, its re-export declaration), outermost first.
        let mut chain: Vec<(Box<str>, SrcDef)> = Vec::new();
        let mut names: HashSet<Box<str>> = HashSet::new();
        let mut cur: Box<str> = name.into();
        let reported = self.errors.len();
        let result = loop {
            if !chain.is_empty()
                && let Some(r) = self.name_memo.get(&cur)
            {
                break r.clone();
            }
            if chain.len() >= MAX_REEXPORT_CHAIN {
                // The first names tell where it starts; the rest would be a very long line.
                let text = format!(
                    "{} -> … ({} more)",
                    self.chain_text(&chain[..SHOWN], None),
                    chain.len() - SHOWN
                );
                self.errors.push(LinkError::ReexportTooLong {
                    limit: MAX_REEXPORT_CHAIN,
                    chain: text,
                });
                break Resolved::Failed;
            }
            match self.direct_winner(&cur) {
                None if self.errors.len() > reported => break Resolved::Failed,
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
                        let text = self.chain_text(&chain, Some(&next));
                        self.errors.push(LinkError::ReexportCycle { chain: text });
                        break Resolved::Failed;
                    }
                    cur = next;
                }
            }
        };
        self.name_memo.insert(name.into(), result.clone());
        for (n, decl) in &chain {
            self.name_memo.insert(n.clone(), result.clone());
            self.reexports.insert(n.clone(), *decl);
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
                    if let Some(n) = self.import_name(decl) {
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

    /// The import name of definition `src`, if it has one.
    fn import_name(&mut self, src: SrcDef) -> Option<String> {
        self.checked_linkage(src).and_then(|l| l.import.clone())
    }

    /// `@b (n.irm) -> @a (m.irm) -> …`, the chain's names with the files re-exporting them,
    /// then `last` if given.
    fn chain_text(&self, chain: &[(Box<str>, SrcDef)], last: Option<&str>) -> String {
        let mut parts: Vec<String> = chain
            .iter()
            .map(|(n, decl)| format!("@{n} ({})", self.file(decl.input)))
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
    fn direct_winner(&mut self, name: &str) -> Option<(SrcDef, Option<String>)> {
        let t = Instant::now();
        // A symbol record is derived data: the definition it names must really export the
        // name (a record pointing elsewhere is refused, never followed).
        let cands: Vec<(SrcDef, &Linkage)> = self
            .export_candidates(name)
            .into_iter()
            .filter_map(|c| self.checked_linkage(c).map(|l| (c, l)))
            .collect();
        let winner = match cands.as_slice() {
            [] => None,
            [(c, _)] => Some(*c),
            _ => self.arbitrate(name, &cands),
        };
        self.stats.resolve += t.elapsed();
        let w = winner?;
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
    pub(super) fn checked_linkage(&mut self, src: SrcDef) -> Option<&'a Linkage> {
        self.validated.insert(src);
        let facts = self.facts;
        match facts.get(self.view(src.input), src) {
            Ok(f) => Some(&f.linkage),
            Err(e) => {
                self.def_error(src, e);
                None
            }
        }
    }

    /// Reports a problem with definition `src`, once.
    pub(super) fn def_error(&mut self, src: SrcDef, e: irkit_format::ReadError) {
        if self.bad_defs.insert(src) {
            self.errors.push(e.into());
        }
    }

    /// The linking hash of definition `src` (`spec/format.md` §3.3), recomputed from the
    /// file, memoized.
    pub(super) fn linking_hash(&mut self, src: SrcDef) -> Option<[u8; 32]> {
        if let Some(h) = self.linking.get(&src) {
            return Some(*h);
        }
        match self.view(src.input).linking_hash(src.def.index()) {
            Ok(h) => {
                self.linking.insert(src, h);
                Some(h)
            }
            Err(e) => {
                self.errors.push(e.into());
                None
            }
        }
    }

    /// Every export of `name`, in input order. The first lookups binary-search each input's
    /// symbol index (touching O(log n) records of it); once they have cost about as much as
    /// reading every symbol table would, the whole index is built and used instead, so a link
    /// that reaches little reads little, and one that reaches much pays at most twice.
    pub(super) fn export_candidates(&mut self, name: &str) -> Vec<SrcDef> {
        // One binary search in one input's symbol index, counted like reading one symbol.
        // (Reading whole tables also validates them and the pools; this keeps a small link
        // from doing that, and bounds a big one at about twice the cost of the index.)
        const SEARCH_COST: u64 = 1;
        let n = self.srcs.len() as u64;
        let searched = self.lookups.saturating_mul(n).saturating_mul(SEARCH_COST);
        if self.exports.is_none()
            && let Some(index) = self.ahead.and_then(|a| a.take_export_index())
        {
            // Built on the spare thread meanwhile, from inputs whose symbols all read: the
            // same candidates, in the same order, as the searches below give, and no error
            // they would report (spec/linking.md §4, "Validation ahead").
            self.exports = Some(index);
        }
        if self.exports.is_none() && searched > self.stats.defs_available {
            self.build_export_index();
        }
        if let Some(ix) = &self.exports {
            return ix.get(name).cloned().unwrap_or_default();
        }
        self.lookups += 1;
        let mut out = Vec::new();
        for (m, s) in InputId::all(self.srcs.len()).zip(self.srcs) {
            match s.view.try_find_symbols(name) {
                Ok(syms) => out.extend(
                    syms.iter()
                        .filter(|sym| sym.role == SymbolRole::Export)
                        .map(|sym| SrcDef::new(m, DefId::new(sym.def))),
                ),
                Err(e) => {
                    if self.bad_symbols.insert(m) {
                        self.errors.push(e.into());
                    }
                }
            }
        }
        out
    }

    pub(super) fn build_export_index(&mut self) {
        let (index, refused) = export_index(self.srcs, false, || false).unwrap_or_default();
        for (m, e) in refused {
            if self.bad_symbols.insert(m) {
                self.errors.push(e.into());
            }
        }
        self.exports = Some(index);
    }

    /// Picks the winner among checked candidates (definition, linkage).
    pub(super) fn arbitrate(&mut self, name: &str, cands: &[(SrcDef, &Linkage)]) -> Option<SrcDef> {
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
                self.errors.push(LinkError::Duplicate {
                    name: name.to_string(),
                    first: self.file(first.input).to_string(),
                    second: self.file(c.input).to_string(),
                });
            }
            return Some(first);
        }
        if let Some(&first) = once.first() {
            // Copies collapse only when their code, and everything they reach privately, is
            // the same (`spec/linking.md` §3): recomputed here, never taken from the files.
            let h0 = self.linking_hash(first);
            for &c in &once[1..] {
                let h = self.linking_hash(c);
                if h0.is_some() && h.is_some() && h != h0 {
                    self.errors.push(LinkError::LinkonceMismatch {
                        name: name.to_string(),
                        first: self.file(first.input).to_string(),
                        second: self.file(c.input).to_string(),
                    });
                }
            }
            return Some(first);
        }
        weak.first().copied()
    }
}

/// Every export of every input, by name, in input order, and the inputs whose symbols could
/// not be read (with why, in input order); `None` if `stop` says so between two inputs. With
/// `backwards`, the inputs are read last first (the spare thread does, while the walk's first
/// lookup reads them first first: they meet halfway), with the same result.
pub(super) fn export_index(
    srcs: &[crate::input::Input],
    backwards: bool,
    stop: impl Fn() -> bool,
) -> Option<(ExportIndex<'_>, Vec<(InputId, irkit_format::ReadError)>)> {
    let mut index = ExportIndex::new();
    let mut refused = Vec::new();
    let all = InputId::all(srcs.len()).zip(srcs);
    let order: Box<dyn Iterator<Item = (InputId, &crate::input::Input)>> = match backwards {
        true => Box::new(all.rev()),
        false => Box::new(all),
    };
    for (m, s) in order {
        if stop() {
            return None;
        }
        match s.view.try_exports() {
            Ok(exports) => {
                for (name, def) in exports {
                    index
                        .entry(name)
                        .or_default()
                        .push(SrcDef::new(m, DefId::new(def)));
                }
            }
            Err(e) => refused.push((m, e)),
        }
    }
    if backwards {
        // Input order: by input (stable, so one input's records keep theirs).
        for candidates in index.values_mut() {
            candidates.sort_by_key(|c| c.input);
        }
        refused.sort_by_key(|&(m, _)| m);
    }
    Some((index, refused))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;

    /// Read last input first (as the spare thread does) or first first, the export index is
    /// the same: every export of a name, in input order, and within an input in record order.
    #[test]
    fn the_export_index_is_the_same_read_backwards() {
        let text = |k: usize| {
            format!(
                "#[export(\"f\"), weak]\n@f{k}: fn() -> i32 = func {{\n^entry:\n  ret i32 {k}\n}}\n\
                 #[export(\"g{k}\")]\n@g: fn() -> i32 = func {{\n^entry:\n  ret i32 0\n}}\n\
                 #[export(\"h\"), linkonce]\n@h{k}: fn() -> i32 = func {{\n^entry:\n  ret i32 1\n}}\n"
            )
        };
        let inputs: Vec<Input> = (0..5)
            .map(|k| {
                let m = irkit_text::parse(&text(k), "m.ir").expect("parses");
                Input::from_module(&format!("m{k}.irm"), &m).expect("encodes")
            })
            .collect();
        let (forward, none) = export_index(&inputs, false, || false).expect("not stopped");
        assert!(none.is_empty());
        let (backward, none) = export_index(&inputs, true, || false).expect("not stopped");
        assert!(none.is_empty());
        assert_eq!(forward, backward);
        let each_first: Vec<SrcDef> = InputId::all(5)
            .map(|m| SrcDef::new(m, DefId::new(0)))
            .collect();
        assert_eq!(forward["f"], each_first);
        assert_eq!(forward.len(), 2 + 5);
        assert!(export_index(&inputs, true, || true).is_none());
    }
}
