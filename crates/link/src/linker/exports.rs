//! The export index: every definition exporting a name (a candidate), as the inputs' symbol
//! records give it, in input order. [`Exports`] answers a link's lookups by binary search in
//! each input's symbol index at first, and from the whole index once those searches have cost
//! about as much as building it (or once the spare thread has built it: `ahead.rs`).

use std::collections::HashMap;

use irkit_format::SymbolRole;
use rustc_hash::FxHashSet;

use super::index::{DefIndex, InputId, SrcDef};
use crate::error::LinkError;
use crate::input::Input;

/// Export name -> every definition exporting that name (as a symbol record gives it), in
/// input order.
pub(super) type ExportIndex<'a> = HashMap<&'a str, Vec<SrcDef>>;

/// The link's lookups of export names: by search first, then by the whole index.
#[derive(Default)]
pub(super) struct Exports<'a> {
    /// Every export of every input, by name, in input order: built from the whole symbol
    /// tables only once lookups in each input's symbol index have cost about as much (see
    /// [`Exports::candidates`]).
    index: Option<ExportIndex<'a>>,
    /// Names looked up one input at a time so far.
    lookups: u64,
    /// Inputs whose symbol table could not be read (reported once).
    bad_symbols: FxHashSet<InputId>,
}

impl<'a> Exports<'a> {
    /// Every export of `name`, in input order. The first lookups binary-search each input's
    /// symbol index (touching O(log n) records of it); once they have cost about as much as
    /// reading every symbol table would, the whole index is built and used instead, so a link
    /// that reaches little reads little, and one that reaches much pays at most twice.
    /// `srcs` are the link's inputs, which have `defs_available` definitions together;
    /// `ready` gives the index if the spare thread has built it (asked only while this has
    /// none): built from inputs whose symbols all read, it gives the same candidates, in the
    /// same order, as the searches, and no error they would report (spec/linking.md §4,
    /// "Validation ahead").
    pub(super) fn candidates(
        &mut self,
        (srcs, defs_available): (&'a [Input], u64),
        ready: impl FnOnce() -> Option<ExportIndex<'a>>,
        errors: &mut Vec<LinkError>,
        name: &str,
    ) -> Vec<SrcDef> {
        // One binary search in one input's symbol index, counted like reading one symbol.
        // (Reading whole tables also validates them and the pools; this keeps a small link
        // from doing that, and bounds a big one at about twice the cost of the index.)
        const SEARCH_COST: u64 = 1;
        let n = srcs.len() as u64;
        let searched = self.lookups.saturating_mul(n).saturating_mul(SEARCH_COST);
        if self.index.is_none() {
            self.index = ready();
        }
        if self.index.is_none() && searched > defs_available {
            self.build(srcs, errors);
        }
        if let Some(ix) = &self.index {
            return ix.get(name).cloned().unwrap_or_default();
        }
        self.lookups += 1;
        let mut out = Vec::new();
        for (m, s) in InputId::all(srcs.len()).zip(srcs) {
            match s.view.try_find_symbols(name) {
                Ok(syms) => out.extend(
                    syms.iter()
                        .filter(|sym| sym.role == SymbolRole::Export)
                        .map(|sym| SrcDef::new(m, DefIndex::new(sym.def))),
                ),
                Err(e) => {
                    if self.bad_symbols.insert(m) {
                        errors.push(e.into());
                    }
                }
            }
        }
        out
    }

    /// Builds the whole index (reporting each input whose symbols do not read, once).
    fn build(&mut self, srcs: &'a [Input], errors: &mut Vec<LinkError>) {
        let (index, refused) = export_index(srcs, false, || false).unwrap_or_default();
        for (m, e) in refused {
            if self.bad_symbols.insert(m) {
                errors.push(e.into());
            }
        }
        self.index = Some(index);
    }

    /// Every exported name of every input, in name order (the index is built first).
    pub(super) fn all_names(
        &mut self,
        srcs: &'a [Input],
        errors: &mut Vec<LinkError>,
    ) -> std::collections::BTreeSet<&'a str> {
        if self.index.is_none() {
            self.build(srcs, errors);
        }
        self.index
            .iter()
            .flat_map(|ix| ix.keys().copied())
            .collect()
    }
}

/// Every export of every input, by name, in input order, and the inputs whose symbols could
/// not be read (with why, in input order); `None` if `stop` says so between two inputs. With
/// `backwards`, the inputs are read last first (the spare thread does, while the walk's first
/// lookup reads them first first: they meet halfway), with the same result.
pub(super) fn export_index(
    srcs: &[Input],
    backwards: bool,
    stop: impl Fn() -> bool,
) -> Option<(ExportIndex<'_>, Vec<(InputId, irkit_format::ReadError)>)> {
    let mut index = ExportIndex::new();
    let mut refused = Vec::new();
    let all = InputId::all(srcs.len()).zip(srcs);
    let order: Box<dyn Iterator<Item = (InputId, &Input)>> = match backwards {
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
                        .push(SrcDef::new(m, DefIndex::new(def)));
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
            .map(|m| SrcDef::new(m, DefIndex::new(0)))
            .collect();
        assert_eq!(forward["f"], each_first);
        assert_eq!(forward.len(), 2 + 5);
        assert!(export_index(&inputs, true, || true).is_none());
    }
}
