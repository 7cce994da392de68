//! Symbols of a [`ModuleView`]: the full symbol table (validated on first use), the
//! fixed-layout symbol index read in place (checked whole on its first lookup, then
//! binary-searched), their agreement record by record, and the agreement of each definition's
//! `export`/`import`/`extern` decorations with the records that name it.

use std::ops::Range;

use byteorder::{ByteOrder, LittleEndian as LE};
use irkit_core::Opcode;

use super::{DefRecord, ModuleView, Symbol, SymbolRole, cached, lazy, op_name};
use crate::defview::PayloadView;
use crate::error::{ReadCause, ReadError};
use crate::flat::FileStrings;
use crate::header::{MAX_DIR_ENTRY_SIZE, SectionKind};
use crate::placed::{SymbolBytes, SymbolEntry};
use crate::schema::{ArchivedSymbolTable, REF_NONE, SYMIX_HEADER, SYMIX_RECORD};
use crate::validate::{self, Ctx};

/// The symbol-index section (kind 8), read in place with bounds-checked little-endian reads.
#[derive(Clone, Copy)]
struct SymIndex<'v> {
    records: &'v [u8],
    record_size: usize,
    count: usize,
    blob: &'v [u8],
}

/// One symbol-index record, its name not yet checked as UTF-8.
struct IxRec<'v> {
    name: &'v [u8],
    def: u32,
    signature: u32,
    opcode: u16,
    role: u8,
    hash: [u8; 32],
}

impl<'v> IxRec<'v> {
    /// The record as a symbol (its name checked as UTF-8).
    fn symbol(self, k: usize, cx: &Ctx<'_>) -> Result<Symbol<'v>, ReadError> {
        Ok(Symbol {
            name: std::str::from_utf8(self.name)
                .map_err(|_| cx.bad(format!("record {k}: name is not UTF-8")))?,
            role: SymbolRole::from_code(self.role),
            kind: Opcode(self.opcode),
            def: self.def,
            signature: (self.signature != REF_NONE).then_some(self.signature),
            hash: self.hash,
        })
    }
}

impl<'v> SymIndex<'v> {
    /// Checks the section's 16-byte header and splits it (O(1)).
    fn parse(bytes: &'v [u8], cx: &Ctx<'_>) -> Result<SymIndex<'v>, ReadError> {
        let head = bytes.get(..SYMIX_HEADER).ok_or_else(|| {
            cx.err(ReadCause::Truncated(format!(
                "{} bytes, shorter than the {SYMIX_HEADER}-byte header",
                bytes.len()
            )))
        })?;
        let count = LE::read_u32(&head[0..4]) as u64;
        let record_size = LE::read_u32(&head[4..8]) as u64;
        if record_size < SYMIX_RECORD as u64 || record_size > MAX_DIR_ENTRY_SIZE as u64 {
            return Err(cx.bad(format!(
                "record size {record_size} (expected {SYMIX_RECORD}..={MAX_DIR_ENTRY_SIZE})"
            )));
        }
        // Both factors fit in 32 bits: no overflow in u64.
        let records_end = SYMIX_HEADER as u64 + count * record_size;
        if records_end > bytes.len() as u64 {
            return Err(cx.err(ReadCause::Truncated(format!(
                "{count} records of {record_size} bytes end at {records_end}, past the \
                 section's {} bytes",
                bytes.len()
            ))));
        }
        let records_end = records_end as usize;
        Ok(SymIndex {
            records: &bytes[SYMIX_HEADER..records_end],
            record_size: record_size as usize,
            count: count as usize,
            blob: &bytes[records_end..],
        })
    }

    /// The name bytes of record `k` (`k < count`).
    fn name(&self, k: usize, cx: &Ctx<'_>) -> Result<&'v [u8], ReadError> {
        let (off, len) = self.name_span(k);
        let end = off as u64 + len as u64;
        if end > self.blob.len() as u64 {
            return Err(cx.bad(format!(
                "record {k}: name bytes {off}..+{len} outside the {}-byte name blob",
                self.blob.len()
            )));
        }
        Ok(&self.blob[off as usize..end as usize])
    }

    /// The bytes of record `k` this reader knows (`k < count`): the one place the record's
    /// layout (`spec/format.md` §1.4) is spelled, by the accessors below.
    fn raw(&self, k: usize) -> &'v [u8] {
        &self.records[k * self.record_size..][..SYMIX_RECORD]
    }

    /// The (offset, length) of record `k`'s name in the blob, unchecked (`k < count`).
    fn name_span(&self, k: usize) -> (u32, u32) {
        let r = self.raw(k);
        (LE::read_u32(&r[0..4]), LE::read_u32(&r[4..8]))
    }

    /// Record `k`'s definition (`k < count`).
    fn def(&self, k: usize) -> u32 {
        LE::read_u32(&self.raw(k)[8..12])
    }

    /// Record `k`'s signature (`REF_NONE` or a pool index; `k < count`).
    fn signature(&self, k: usize) -> u32 {
        LE::read_u32(&self.raw(k)[12..16])
    }

    /// Record `k`'s role byte (`k < count`).
    fn role(&self, k: usize) -> u8 {
        self.raw(k)[18]
    }

    /// Record `k`'s reserved byte (`k < count`).
    fn reserved(&self, k: usize) -> u8 {
        self.raw(k)[19]
    }

    /// Record `k` (`k < count`).
    fn rec(&self, k: usize, cx: &Ctx<'_>) -> Result<IxRec<'v>, ReadError> {
        let name = self.name(k, cx)?;
        let r = self.raw(k);
        let mut hash = [0u8; 32];
        hash.copy_from_slice(&r[20..52]);
        Ok(IxRec {
            name,
            def: self.def(k),
            signature: self.signature(k),
            opcode: LE::read_u16(&r[16..18]),
            role: self.role(k),
            hash,
        })
    }

    /// The first record whose name is not less than `name` (binary search, O(log n) records
    /// touched).
    fn lower_bound(&self, name: &[u8], cx: &Ctx<'_>) -> Result<usize, ReadError> {
        let (mut lo, mut hi) = (0usize, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.name(mid, cx)? < name {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }
}

impl ModuleView {
    /// The symbol table, validated on first use (section hash, bytecheck, name, definition
    /// and signature indices in range, order). Validates the strings and the pool.
    pub(super) fn checked_symbols(&self) -> Result<SymbolBytes<'_>, ReadError> {
        let bytes = &self.bytes()[self.symbols.clone()];
        cached(&self.symbols_ok, || {
            self.check_section_hash(SectionKind::SYMBOLS)?;
            let strings = self.strings_state()?.count;
            let cx = self.cx(SectionKind::SYMBOLS);
            let t: &ArchivedSymbolTable = super::access(bytes, &cx)?;
            validate::symbols(t, &self.file_strings(), strings, self.def_count, &cx)?;
            let pool_len = self.pool()?.len();
            for s in t.symbols.iter() {
                let sig = s.signature.to_native();
                if sig != REF_NONE && sig >= pool_len {
                    return Err(cx.err(ReadCause::IndexOutOfRange {
                        what: "signature pool index",
                        index: sig as u64,
                        len: pool_len as u64,
                    }));
                }
            }
            super::placed_as_checked(SymbolBytes::new(bytes).is(t), &cx)
        })?;
        Ok(SymbolBytes::new(bytes))
    }

    fn symbol_of<'v>(&'v self, strings: FileStrings<'v>, s: &SymbolEntry) -> Symbol<'v> {
        let sig = s.signature;
        Symbol {
            name: strings.str_at(s.name).unwrap_or(""),
            role: SymbolRole::from_code(s.role),
            kind: Opcode(s.def_opcode),
            def: s.def,
            signature: (sig != REF_NONE).then_some(sig),
            hash: s.hash,
        }
    }

    /// The symbol table, sorted by name (validated on first use; empty when it is invalid,
    /// see [`ModuleView::try_symbols`]).
    pub fn symbols(&self) -> Vec<Symbol<'_>> {
        self.try_symbols().unwrap_or_default()
    }

    /// The symbol table, sorted by name, or why it cannot be read. Read from the symbol
    /// index when the file has one (validated in full on first use; the `symbols` section is
    /// then read only by [`ModuleView::validate_all`], which checks that both agree), else
    /// from the `symbols` section.
    pub fn try_symbols(&self) -> Result<Vec<Symbol<'_>>, ReadError> {
        if let Some(range) = self.symbol_index.clone() {
            let cx = self.cx(SectionKind::SYMBOL_INDEX);
            let ix = self.symbol_index(range)?;
            return (0..ix.count)
                .map(|k| ix.rec(k, &cx)?.symbol(k, &cx))
                .collect();
        }
        let t = self.checked_symbols()?;
        let strings = self.file_strings();
        Ok(t.iter().map(|s| self.symbol_of(strings, &s)).collect())
    }

    /// Every export record as (name, definition), sorted by name: what
    /// [`ModuleView::try_symbols`] gives with the export role, read without building a
    /// [`Symbol`] per record (a linker indexes the exports of every input).
    pub fn try_exports(&self) -> Result<Vec<(&str, u32)>, ReadError> {
        let Some(range) = self.symbol_index.clone() else {
            return Ok(self
                .try_symbols()?
                .into_iter()
                .filter(|s| s.role == SymbolRole::Export)
                .map(|s| (s.name, s.def))
                .collect());
        };
        let cx = self.cx(SectionKind::SYMBOL_INDEX);
        let ix = self.symbol_index(range)?;
        // Validated: the names tile the blob and each is UTF-8, so the blob is too.
        let blob =
            std::str::from_utf8(ix.blob).map_err(|_| cx.bad("name blob is not UTF-8".into()))?;
        let mut out = Vec::new();
        for k in 0..ix.count {
            if ix.role(k) != role_code(SymbolRole::Export) {
                continue;
            }
            let (off, len) = ix.name_span(k);
            let name = blob
                .get(off as usize..off as usize + len as usize)
                .ok_or_else(|| cx.bad(format!("record {k}: name is not UTF-8")))?;
            out.push((name, ix.def(k)));
        }
        Ok(out)
    }

    /// Every symbol named `name` (binary search; usually one). Empty when the lookup meets
    /// corrupt bytes, see [`ModuleView::try_find_symbols`].
    pub fn find_symbols(&self, name: &str) -> Vec<Symbol<'_>> {
        self.try_find_symbols(name).unwrap_or_default()
    }

    /// Every symbol named `name`, or why the lookup failed. With a symbol index (every file
    /// written by this version) the first lookup validates the index (hash, every record),
    /// and each lookup touches O(log n) records of it; without one, the symbol table is
    /// validated in full on first use. The records are not checked against the definitions
    /// they name: see [`ModuleView::check_def_symbols`].
    pub fn try_find_symbols(&self, name: &str) -> Result<Vec<Symbol<'_>>, ReadError> {
        let Some(range) = self.symbol_index.clone() else {
            let t = self.checked_symbols()?;
            let strings = self.file_strings();
            let name_of = |k: usize| t.get(k).and_then(|s| strings.str_at(s.name)).unwrap_or("");
            let (mut lo, mut hi) = (0, t.len());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if name_of(mid).as_bytes() < name.as_bytes() {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return Ok((lo..t.len())
                .map_while(|k| t.get(k).filter(|_| name_of(k) == name))
                .map(|s| self.symbol_of(strings, &s))
                .collect());
        };
        let cx = self.cx(SectionKind::SYMBOL_INDEX);
        let ix = self.symbol_index(range)?;
        let mut out = Vec::new();
        let mut k = ix.lower_bound(name.as_bytes(), &cx)?;
        while k < ix.count {
            let r = ix.rec(k, &cx)?;
            if r.name != name.as_bytes() {
                break;
            }
            out.push(r.symbol(k, &cx)?);
            k += 1;
        }
        Ok(out)
    }

    /// The symbol index, validated in full on first use: its section hash, then every
    /// record (name bytes within the blob and UTF-8, definition below the definition count,
    /// records sorted by (name, role, definition)). One linear pass over a compact table, no
    /// rkyv; a lookup then trusts what it reads.
    fn symbol_index(&self, range: Range<usize>) -> Result<SymIndex<'_>, ReadError> {
        Ok(self.symbol_index_checked(range)?.0)
    }

    /// The validated symbol index and its records by definition.
    fn symbol_index_checked(
        &self,
        range: Range<usize>,
    ) -> Result<(SymIndex<'_>, &[DefRecord]), ReadError> {
        let cx = self.cx(SectionKind::SYMBOL_INDEX);
        let ix = SymIndex::parse(&self.bytes()[range.clone()], &cx)?;
        let by_def = lazy(&self.symbol_index_st, || {
            self.check_section_hash(SectionKind::SYMBOL_INDEX)?;
            let section = &self.bytes()[range];
            if section[8..16].iter().any(|&b| b != 0) {
                return Err(cx.bad("reserved header bytes are not zero".into()));
            }
            // Names are laid out once each, in record order, without gaps (§1.4). When the
            // whole name blob is UTF-8 (checked once), a name is UTF-8 exactly when both its
            // ends are character boundaries, which `str::get` tells in O(1).
            let blob_str = std::str::from_utf8(ix.blob).ok();
            let mut prev: Option<(&[u8], u8, u32)> = None;
            let mut next_name = 0u64;
            let mut prev_span = (u32::MAX, 0u32);
            let mut by_def = Vec::with_capacity(ix.count);
            // (3.x) The distinct names, in record order (so sorted), with the first record
            // holding each: what `index_names_in_strings` looks for in the strings section.
            let mut names: Vec<(&[u8], usize)> = Vec::new();
            for k in 0..ix.count {
                let span = ix.name_span(k);
                let same_name = prev.is_some_and(|_| span == prev_span);
                let name = if same_name {
                    prev.map_or(&[][..], |p| p.0)
                } else {
                    let name = ix.name(k, &cx)?;
                    if prev.is_some_and(|p| p.0 == name) {
                        return Err(cx.bad(format!("record {k}: its name is stored twice")));
                    }
                    if span.0 as u64 != next_name {
                        return Err(cx.bad(format!(
                            "record {k}: name at {}, the name blob continues at {next_name}",
                            span.0
                        )));
                    }
                    next_name += span.1 as u64;
                    names.push((name, k));
                    name
                };
                prev_span = span;
                let role = ix.role(k);
                if role > 2 {
                    return Err(cx.bad(format!("record {k}: unknown role {role}")));
                }
                if ix.reserved(k) != 0 {
                    return Err(cx.bad(format!("record {k}: reserved byte is not zero")));
                }
                let utf8 = same_name
                    || match blob_str {
                        Some(b) => b
                            .get(span.0 as usize..span.0 as usize + span.1 as usize)
                            .is_some(),
                        None => std::str::from_utf8(name).is_ok(),
                    };
                if !utf8 {
                    return Err(cx.bad(format!("record {k}: name is not UTF-8")));
                }
                let def = ix.def(k);
                if def >= self.def_count {
                    return Err(cx.err(ReadCause::IndexOutOfRange {
                        what: "definition index",
                        index: def as u64,
                        len: self.def_count as u64,
                    }));
                }
                let key = (name, role, def);
                if prev.is_some_and(|p| p > key) {
                    return Err(cx.bad(format!(
                        "record {k}: records are not sorted by (name, role, definition)"
                    )));
                }
                prev = Some(key);
                by_def.push((def, k as u32));
            }
            if next_name != ix.blob.len() as u64 {
                return Err(cx.bad(format!(
                    "the name blob has {} bytes, the names {next_name}",
                    ix.blob.len()
                )));
            }
            if self.header.major >= 3 {
                // 3.x has no symbol table: the index's signatures and names are checked here.
                self.index_signatures(&ix)?;
                self.index_names_in_strings(&names, &cx)?;
            } else {
                // The symbol table says the same thing again: whoever reads the index has it
                // checked too, so that no reader acts on one while another refuses the other.
                self.index_matches_table(&ix)?;
            }
            Ok(by_definition(&by_def, self.def_count))
        })?;
        Ok((ix, by_def))
    }

    /// The symbols naming definition `d`, from the symbol index (validated on first use);
    /// from the `symbols` section in a 1.x file without an index.
    pub fn symbols_of_def(&self, d: u32) -> Result<Vec<Symbol<'_>>, ReadError> {
        let Some(range) = self.symbol_index.clone() else {
            return Ok(self
                .try_symbols()?
                .into_iter()
                .filter(|s| s.def == d)
                .collect());
        };
        let cx = self.cx(SectionKind::SYMBOL_INDEX);
        let (ix, by_def) = self.symbol_index_checked(range)?;
        let start = by_def.partition_point(|&(def, _)| def < d);
        by_def[start..]
            .iter()
            .take_while(|&&(def, _)| def == d)
            .map(|&(_, k)| ix.rec(k as usize, &cx)?.symbol(k as usize, &cx))
            .collect()
    }

    /// Checks that the `export`, `import` and `extern` decorations (with a string payload) of
    /// definition `d` are exactly what the symbol index lists for it (validating `d`): the
    /// linker acts on both, so they must say the same. The verdict is cached, like `d`'s
    /// validation.
    pub fn check_def_symbols(&self, d: u32) -> Result<(), ReadError> {
        match self.def_table()?.symbols_ok.get(d as usize) {
            Some(cache) => super::cached(cache, || self.check_def_symbols_uncached(d)),
            // Out of range: `def` says so.
            None => self.check_def_symbols_uncached(d),
        }
    }

    fn check_def_symbols_uncached(&self, d: u32) -> Result<(), ReadError> {
        let def = self.def(d)?;
        let mut declared: Vec<(u8, &str)> = Vec::new();
        let root = def.root();
        for deco in root.decorations() {
            let role = match deco.opcode() {
                Opcode::EXPORT => 0,
                Opcode::IMPORT => 1,
                Opcode::EXTERN => 2,
                _ => continue,
            };
            if let PayloadView::Str(name) = deco.payload() {
                declared.push((role, name));
            }
        }
        let records = self.symbols_of_def(d)?;
        let mut listed: Vec<(u8, &str)> = records
            .iter()
            .map(|s| (role_code(s.role), s.name))
            .collect();
        declared.sort_unstable();
        listed.sort_unstable();
        if declared != listed {
            return Err(self.cx(SectionKind::SYMBOL_INDEX).bad(format!(
                "definition {d} declares {}, the symbol index lists {}",
                describe(&declared),
                describe(&listed)
            )));
        }
        if let Some(s) = records.iter().find(|s| s.kind != root.opcode()) {
            return Err(self.cx(SectionKind::SYMBOL_INDEX).bad(format!(
                "symbol `{}` names definition {d} as a `{}`, it is a `{}`",
                s.name,
                op_name(s.kind),
                op_name(root.opcode())
            )));
        }
        Ok(())
    }

    /// The definition exported as `name`, if any (see [`ModuleView::find_symbols`]).
    pub fn find_export(&self, name: &str) -> Option<Symbol<'_>> {
        self.find_symbols(name)
            .into_iter()
            .find(|s| s.role == SymbolRole::Export)
    }

    /// The definition exported as `name`, if any, or why the lookup failed.
    pub fn try_find_export(&self, name: &str) -> Result<Option<Symbol<'_>>, ReadError> {
        Ok(self
            .try_find_symbols(name)?
            .into_iter()
            .find(|s| s.role == SymbolRole::Export))
    }

    /// Checks the symbol index record by record against the (validated) symbol table: same
    /// count, names, roles, kinds, definitions, signatures and hashes, in the same order.
    pub(super) fn check_symbol_index(&self) -> Result<(), ReadError> {
        match self.symbol_index.clone() {
            // Validating the index compares it with the symbol table.
            Some(range) => self.symbol_index(range).map(drop),
            None => Ok(()),
        }
    }

    /// (3.x) Every record's name is one of the strings of the strings section: writers put
    /// every `export`, `import` and `extern` name there (the decorations' payloads are string
    /// indices). So a strings section changed where such a name lives (a definition's
    /// decoration now reading another name than its records) is refused by the first lookup,
    /// whether or not that definition is ever read: otherwise a lazy link could read the
    /// change in the definitions it reaches and never see the contradiction.
    ///
    /// Called once the records are known readable and sorted by name. The distinct names are
    /// sorted by their first eight bytes read as a number, then by their bytes; the strings
    /// (of a length some name has) are sorted the same way and merged with them, until every
    /// name was found: comparisons of numbers, mostly, and no hashing, so nothing a file holds
    /// makes the check cost more than a sort. The error names the first record, in
    /// index order, whose name is missing.
    fn index_names_in_strings(
        &self,
        names: &[(&[u8], usize)],
        cx: &Ctx<'_>,
    ) -> Result<(), ReadError> {
        /// The first eight bytes of `s` as a big-endian number (zero-padded).
        fn prefix(s: &[u8]) -> u64 {
            let mut b = [0u8; 8];
            let n = s.len().min(8);
            b[..n].copy_from_slice(&s[..n]);
            u64::from_be_bytes(b)
        }
        let count = self.strings_state()?.count as usize;
        // Sorted by bytes, so by (prefix, bytes) too: the zero-padded big-endian prefix
        // orders as the bytes it holds, and a tie leaves the order to the bytes.
        debug_assert!(names.windows(2).all(|w| w[0].0 < w[1].0));
        let prefixes: Vec<u64> = names.iter().map(|n| prefix(n.0)).collect();
        let shortest = names.iter().map(|n| n.0.len()).min().unwrap_or(usize::MAX);
        let longest = names.iter().map(|n| n.0.len()).max().unwrap_or(0);
        let mut found = vec![false; names.len()];
        if !names.is_empty() {
            // The strings of a length some name has, sorted by prefix, then merged with the
            // names (sorted by prefix too): a sort and a linear pass, not a search per string.
            let mut strings: Vec<(u64, &[u8])> = self
                .file_strings()
                .all_bytes(count)
                .filter(|s| s.len() >= shortest && s.len() <= longest)
                .map(|s| (prefix(s), s))
                .collect();
            strings.sort_unstable_by_key(|&(p, _)| p);
            let (mut lo, mut missing) = (0, names.len());
            for (key, s) in strings {
                // The first name with this prefix, at or after the last one's.
                while prefixes.get(lo).is_some_and(|&p| p < key) {
                    lo += 1;
                }
                if prefixes.get(lo) != Some(&key) {
                    continue;
                }
                // Only when several names share it, the one with these bytes among them.
                let at = if prefixes.get(lo + 1) != Some(&key) {
                    (names[lo].0 == s).then_some(lo)
                } else {
                    let hi = lo + prefixes[lo..].partition_point(|&p| p == key);
                    names[lo..hi]
                        .binary_search_by(|n| n.0.cmp(s))
                        .ok()
                        .map(|i| lo + i)
                };
                if let Some(i) = at
                    && !found[i]
                {
                    found[i] = true;
                    missing -= 1;
                    if missing == 0 {
                        break;
                    }
                }
            }
        }
        let first_missing = names
            .iter()
            .zip(&found)
            .filter(|(_, hit)| !**hit)
            .map(|(n, _)| (n.1, n.0))
            .min();
        match first_missing {
            Some((k, name)) => Err(cx.bad(format!(
                "record {k}: its name `{}` is not a string of the strings section",
                String::from_utf8_lossy(name)
            ))),
            None => Ok(()),
        }
    }

    /// Checks every record's signature: absent, or a pool index (validates the pool). What
    /// the comparison with the symbol table checks in 2.x.
    fn index_signatures(&self, ix: &SymIndex<'_>) -> Result<(), ReadError> {
        let cx = self.cx(SectionKind::SYMBOL_INDEX);
        let pool_len = self.pool()?.len();
        for k in 0..ix.count {
            let sig = ix.signature(k);
            if sig != REF_NONE && sig >= pool_len {
                return Err(cx.err(ReadCause::IndexOutOfRange {
                    what: "signature pool index",
                    index: sig as u64,
                    len: pool_len as u64,
                }));
            }
        }
        Ok(())
    }

    /// Compares the symbol index record by record with the (validated) symbol table: same
    /// count, names, roles, kinds, definitions, signatures and hashes, in the same order.
    fn index_matches_table(&self, ix: &SymIndex<'_>) -> Result<(), ReadError> {
        let cx = self.cx(SectionKind::SYMBOL_INDEX);
        let t = self.checked_symbols()?;
        let strings = self.file_strings();
        if ix.count != t.len() {
            return Err(cx.bad(format!(
                "{} records, the symbol table has {} symbols",
                ix.count,
                t.len()
            )));
        }
        for (k, s) in t.iter().enumerate() {
            let r = ix.rec(k, &cx)?;
            let sym = self.symbol_of(strings, &s);
            let same = r.name == sym.name.as_bytes()
                && r.def == sym.def
                && r.opcode == sym.kind.0
                && r.role == s.role
                && r.signature == s.signature
                && r.hash == sym.hash;
            if !same {
                return Err(cx.bad(format!(
                    "record {k} differs from symbol `{}` of the symbol table",
                    sym.name
                )));
            }
        }
        Ok(())
    }
}

/// The role byte of a symbol role.
fn role_code(r: SymbolRole) -> u8 {
    match r {
        SymbolRole::Export => 0,
        SymbolRole::Import => 1,
        SymbolRole::Extern => 2,
        SymbolRole::Other(c) => c,
    }
}

/// `export("a"), import("b")`, or `nothing`.
fn describe(list: &[(u8, &str)]) -> String {
    if list.is_empty() {
        return "nothing".to_string();
    }
    list.iter()
        .map(|(r, n)| {
            let op = ["export", "import", "extern"]
                .get(*r as usize)
                .unwrap_or(&"?");
            format!("{op}(\"{n}\")")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(definition, record)` pairs ordered by definition, then by record: a counting sort, as
/// every definition is below `defs` (checked) and `pairs` come in record order.
fn by_definition(pairs: &[(u32, u32)], defs: u32) -> Vec<(u32, u32)> {
    let mut start = vec![0u32; defs as usize + 1];
    for &(d, _) in pairs {
        if let Some(c) = start.get_mut(d as usize + 1) {
            *c += 1;
        }
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut out = vec![(0, 0); pairs.len()];
    for &(d, k) in pairs {
        if let Some(at) = start.get_mut(d as usize)
            && let Some(slot) = out.get_mut(*at as usize)
        {
            *slot = (d, k);
            *at += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// The counting sort orders as sorting the pairs does.
    #[test]
    fn by_definition_is_the_sorted_order() {
        for defs in [1u32, 2, 7, 100] {
            let pairs: Vec<(u32, u32)> = (0..300u32)
                .map(|k| ((k.wrapping_mul(2_654_435_761) >> 7) % defs, k))
                .collect();
            let mut sorted = pairs.clone();
            sorted.sort_unstable();
            assert_eq!(super::by_definition(&pairs, defs), sorted);
        }
        assert_eq!(super::by_definition(&[], 0), Vec::new());
    }
}
