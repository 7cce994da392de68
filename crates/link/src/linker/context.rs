//! What the whole link reads and never changes: its inputs (sorted by name), its options, the
//! facts read of their definitions (shared with the spare thread, `ahead.rs`) and what that
//! thread prepares, and the names of definitions for messages.

use std::collections::HashSet;

use irkit_format::ModuleView;

use super::ahead::Ahead;
use super::index::{InputId, SrcDef};
use super::linkage::{FactTable, linkage_of};
use crate::LinkOptions;
use crate::input::Input;

/// The link's read-only context, shared by its parts.
pub(super) struct Context<'a> {
    pub(super) srcs: &'a [Input],
    pub(super) opts: &'a LinkOptions,
    /// What the walk reads of each definition it acts on, shared with the spare thread.
    pub(super) facts: &'a FactTable,
    /// What the spare thread prepares meanwhile (the export index, arena slots), when there
    /// is one.
    pub(super) ahead: Option<&'a Ahead<'a>>,
    /// The export names `--internalize` keeps: the entry point's and the `--export` ones.
    pub(super) keep_exports: HashSet<&'a str>,
    /// Definitions in all inputs together.
    pub(super) defs_available: u64,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        srcs: &'a [Input],
        opts: &'a LinkOptions,
        facts: &'a FactTable,
        ahead: Option<&'a Ahead<'a>>,
    ) -> Context<'a> {
        let mut keep_exports: HashSet<&str> = opts.exports.iter().map(String::as_str).collect();
        keep_exports.insert(opts.entry.as_str());
        Context {
            srcs,
            opts,
            facts,
            ahead,
            keep_exports,
            defs_available: srcs.iter().map(|i| u64::from(i.view.def_count())).sum(),
        }
    }

    /// Input `m`'s file name (`?` for an index out of range).
    pub(super) fn file(&self, m: InputId) -> &'a str {
        self.srcs
            .get(m.idx())
            .map(|s| s.name.as_str())
            .unwrap_or("?")
    }

    pub(super) fn view(&self, m: InputId) -> &'a ModuleView {
        &self.srcs[m.idx()].view
    }

    /// A definition's name for messages: export, import or extern name, else its name hint,
    /// else `#index`.
    pub(super) fn display_name(&self, src: SrcDef) -> String {
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
