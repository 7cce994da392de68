//! A view's whole-file checks: the debug section, the padding between sections, and
//! [`ModuleView::validate_all`] (every table and definition, what a reader that touches
//! everything would check).

use super::*;

impl ModuleView {
    /// The debug section, validated on first use; `None` when the file has none.
    pub(crate) fn debug(&self) -> Result<Option<DebugBytes<'_>>, ReadError> {
        let Some(range) = self.debug.clone() else {
            return Ok(None);
        };
        let bytes = &self.bytes()[range];
        cached(&self.debug_ok, || {
            let cx = self.cx(SectionKind::DEBUG);
            let defs = self.def_entries()?;
            self.check_section_hash(SectionKind::DEBUG)?;
            let t: &ArchivedDebugTable = access(bytes, &cx)?;
            validate::debug(t, defs, &cx)?;
            placed_as_checked(DebugBytes::new(bytes).is(t), &cx)
        })?;
        Ok(Some(DebugBytes::new(bytes)))
    }

    /// Checks that every byte between the directory and the sections, and between sections,
    /// is zero (`spec/format.md` §1): no byte of a valid file is left unchecked.
    pub(super) fn check_padding(&self) -> Result<(), ReadError> {
        let mut spans: Vec<(u64, u64)> = self
            .entries
            .iter()
            .map(|e| (e.offset, e.offset + e.length))
            .collect();
        spans.sort_unstable();
        let dir_end = header::header_size(self.header.major) as u64
            + self.header.section_count as u64 * self.header.entry_size as u64;
        let mut at = dir_end;
        let bytes = self.bytes();
        for (start, end) in spans.into_iter().chain([(bytes.len() as u64, 0)]) {
            if let Some(gap) = bytes.get(at as usize..start as usize)
                && let Some(k) = gap.iter().position(|&b| b != 0)
            {
                return Err(ReadError::new(
                    &self.file,
                    Location::Directory,
                    ReadCause::Malformed(format!(
                        "byte {} between sections is not zero padding",
                        at as usize + k
                    )),
                ));
            }
            at = at.max(end);
        }
        Ok(())
    }

    /// Checks every debug record's position against its instruction's decoration list: the
    /// `m` records of one instruction with `n` body decorations take `m` distinct positions
    /// (they are sorted strictly) below `m + n`, so that the merged list has no gap
    /// (`spec/format.md` §2.3). Materializing and copying merge by the same rule.
    pub(super) fn check_debug_positions(&self) -> Result<(), ReadError> {
        let Some(dbg) = self.debug()? else {
            return Ok(());
        };
        let entries = dbg.entries;
        // Local depths of the definition whose records are being checked (records are
        // sorted by definition: each is computed once).
        let mut depths: Option<(u32, Vec<u32>)> = None;
        let mut k = 0;
        while let Some(e) = entries.get(k) {
            let (def, local) = (e.def, e.local);
            let same = (k..entries.len())
                .map_while(|j| entries.get(j).filter(|r| r.def == def && r.local == local))
                .count();
            let last = (k + same)
                .checked_sub(1)
                .and_then(|j| entries.get(j))
                .map_or(0, |r| r.position as u64);
            let view = self.def(def)?;
            if depths.as_ref().is_none_or(|(d, _)| *d != def) {
                depths = Some((def, view.local_depths()));
            }
            if let Some((_, ds)) = &depths
                && let Some(&d) = ds.get(local as usize)
            {
                // The definition is at depth 1, its decoration one below the instruction.
                if d + 2 > MAX_NESTING {
                    return Err(validate::debug_too_deep(&self.file, def, local));
                }
            }
            let n_decos = view.inst(local).map_or(0, |r| r.decoration_count() as u64);
            if last >= same as u64 + n_decos {
                return Err(self.cx(SectionKind::DEBUG).bad(format!(
                    "entry {}: definition {def}, instruction {local}: decoration position \
                     {last}, but the list has {} decorations",
                    k + same - 1,
                    same as u64 + n_decos
                )));
            }
            k += same.max(1);
        }
        Ok(())
    }

    /// Whether the file has a debug section.
    pub fn has_debug(&self) -> bool {
        self.debug.is_some()
    }

    /// Validates the debug section (hash and every record), once: the verdict is cached, as
    /// for every section. `Ok` without one.
    pub fn check_debug(&self) -> Result<(), ReadError> {
        self.debug().map(drop)
    }

    /// Validates everything: every section hash (unknown optional sections included), the
    /// strings, the definition index, the symbols and the symbol index (record by record
    /// against the symbol table), the pool, the root, the debug info, every definition,
    /// recomputes every definition's content hash and every symbol's hash against the
    /// recorded ones, and then builds the module as [`ModuleView::materialize`] does (so the
    /// structural rules of the core module, e.g. hoistable opcodes only in the pool,
    /// decorations only in decoration lists, are part of the one definition of a valid file)
    /// and drops it.
    pub fn validate_all(&self) -> Result<(), ReadError> {
        self.materialize().map(drop)
    }

    /// Every check of [`ModuleView::validate_all`] before the module is built.
    pub(crate) fn check_all(&self) -> Result<(), ReadError> {
        for e in &self.entries {
            self.check_section_hash(e.kind)?;
        }
        self.check_padding()?;
        self.strings_state()?;
        self.def_table()?;
        self.pool()?;
        if self.header.major < 3 {
            self.checked_symbols()?;
        }
        self.check_symbol_index()?;
        self.root()?;
        self.debug()?;
        for i in 0..self.def_count {
            self.def(i)?;
        }
        self.check_debug_positions()?;
        self.check_content_hashes()
    }
}
