//! Resolution: which definition a name stands for. Candidates come from the inputs' symbol
//! records, each checked against its definition before it is trusted; `arbitrate` applies
//! spec/linking.md §3 (strong over weak, `linkonce` copies compared by semantic hash, stubs,
//! duplicates).

use std::time::Instant;

use irkit_format::SymbolRole;

use super::State;
use super::linkage::{Candidate, ExportIndex, Linkage, linkage_of};
use crate::error::LinkError;

impl State<'_> {
    /// The winning export of `name` across all inputs: the single strong one, else the
    /// (collapsed) `linkonce` one, else the first `weak` one in input order. Conflicts are
    /// reported here, once per name.
    pub(super) fn resolve_name(&mut self, name: &str) -> Option<(u32, u32)> {
        if let Some(r) = self.name_memo.get(name) {
            return *r;
        }
        let t = Instant::now();
        // A symbol record is derived data: the definition it names must really export the
        // name (a record pointing elsewhere is refused, never followed).
        let cands: Vec<(u32, u32, Linkage)> = self
            .export_candidates(name)
            .into_iter()
            .filter_map(|(m, d)| self.checked_linkage(m, d).map(|l| (m, d, l)))
            .collect();
        let winner = match cands.as_slice() {
            [] => None,
            [(m, d, _)] => Some((*m, *d)),
            _ => self.arbitrate(name, &cands),
        };
        self.name_memo.insert(name.into(), winner);
        self.stats.resolve += t.elapsed();
        winner
    }

    /// The linkage of definition `d` of input `m`, once its decorations are checked against
    /// its file's symbol index (`ModuleView::check_def_symbols`: the linker acts on both, so
    /// they must agree). `None` when the definition cannot be read or contradicts the index;
    /// the problem is reported once.
    pub(super) fn checked_linkage(&mut self, m: u32, d: u32) -> Option<Linkage> {
        self.validated.insert((m, d));
        let view = self.view(m);
        match view.check_def_symbols(d).and_then(|()| linkage_of(view, d)) {
            Ok(l) => Some(l),
            Err(e) => {
                self.def_error(m, d, e);
                None
            }
        }
    }

    /// Reports a problem with definition `d` of input `m`, once.
    pub(super) fn def_error(&mut self, m: u32, d: u32, e: irkit_format::ReadError) {
        if self.bad_defs.insert((m, d)) {
            self.errors.push(e.into());
        }
    }

    /// The semantic hash of definition `d` of input `m` (`spec/format.md` §3.2), recomputed
    /// from the file, memoized.
    pub(super) fn semantic_hash(&mut self, m: u32, d: u32) -> Option<[u8; 32]> {
        if let Some(h) = self.semantic.get(&(m, d)) {
            return Some(*h);
        }
        match self.view(m).semantic_hash(d) {
            Ok(h) => {
                self.semantic.insert((m, d), h);
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
    pub(super) fn export_candidates(&mut self, name: &str) -> Vec<Candidate> {
        // One binary search in one input's symbol index, counted like reading one symbol.
        // (Reading whole tables also validates them and the pools; this keeps a small link
        // from doing that, and bounds a big one at about twice the cost of the index.)
        const SEARCH_COST: u64 = 1;
        let n = self.srcs.len() as u64;
        let searched = self.lookups.saturating_mul(n).saturating_mul(SEARCH_COST);
        if self.exports.is_none() && searched > self.stats.defs_available {
            self.build_export_index();
        }
        if let Some(ix) = &self.exports {
            return ix.get(name).cloned().unwrap_or_default();
        }
        self.lookups += 1;
        let mut out = Vec::new();
        for (m, s) in self.srcs.iter().enumerate() {
            match s.view.try_find_symbols(name) {
                Ok(syms) => out.extend(
                    syms.iter()
                        .filter(|sym| sym.role == SymbolRole::Export)
                        .map(|sym| (m as u32, sym.def)),
                ),
                Err(e) => {
                    if self.bad_symbols.insert(m as u32) {
                        self.errors.push(e.into());
                    }
                }
            }
        }
        out
    }

    pub(super) fn build_export_index(&mut self) {
        let mut index = ExportIndex::new();
        for (m, s) in self.srcs.iter().enumerate() {
            match s.view.try_symbols() {
                Ok(syms) => {
                    for sym in syms {
                        if sym.role == SymbolRole::Export {
                            index.entry(sym.name).or_default().push((m as u32, sym.def));
                        }
                    }
                }
                Err(e) => {
                    if self.bad_symbols.insert(m as u32) {
                        self.errors.push(e.into());
                    }
                }
            }
        }
        self.exports = Some(index);
    }

    /// Picks the winner among checked candidates (input, definition, linkage).
    pub(super) fn arbitrate(
        &mut self,
        name: &str,
        cands: &[(u32, u32, Linkage)],
    ) -> Option<(u32, u32)> {
        let mut strong = Vec::new();
        let mut once = Vec::new();
        let mut weak = Vec::new();
        for (m, d, l) in cands {
            let list = if l.weak {
                &mut weak
            } else if l.linkonce {
                &mut once
            } else {
                &mut strong
            };
            list.push((*m, *d));
        }
        if let Some(&(m0, d0)) = strong.first() {
            for &(m, _) in &strong[1..] {
                self.errors.push(LinkError::Duplicate {
                    name: name.to_string(),
                    first: self.file(m0).to_string(),
                    second: self.file(m).to_string(),
                });
            }
            return Some((m0, d0));
        }
        if let Some(&(m0, d0)) = once.first() {
            // Copies collapse only when their code, and everything they reach privately, is
            // the same (`spec/linking.md` §3): recomputed here, never taken from the files.
            let h0 = self.semantic_hash(m0, d0);
            for &(m, d) in &once[1..] {
                let h = self.semantic_hash(m, d);
                if h0.is_some() && h.is_some() && h != h0 {
                    self.errors.push(LinkError::LinkonceMismatch {
                        name: name.to_string(),
                        first: self.file(m0).to_string(),
                        second: self.file(m).to_string(),
                    });
                }
            }
            return Some((m0, d0));
        }
        weak.first().copied()
    }
}
