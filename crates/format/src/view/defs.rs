//! A view's definitions: the definition index (read once, lazily), each definition's body
//! validated the first time it is used (its hash, its layout, every reference in range) and
//! then read in place ([`ModuleView::def`], [`ModuleView::root`]).

use super::*;

/// The bytes definition index entry `entry` names in the definitions section `section`,
/// bounds-checked (`None` when they lie outside it).
pub(super) fn body_in<'s>(section: &'s [u8], entry: &DefMeta) -> Option<&'s [u8]> {
    let at = usize::try_from(entry.offset).ok()?;
    let len = usize::try_from(entry.length).ok()?;
    section.get(at..at.checked_add(len)?)
}

/// Size of an archived `DefEntry`.
pub(super) const DEF_ENTRY_SIZE: u64 = 88;

/// The element count of the `Vec` at the start of an rkyv root that is `root_size` bytes
/// long and sits at the end of `section` (unvalidated; `None` when the section is too short).
pub(super) fn raw_root_vec_len(section: &[u8], root_size: usize) -> Option<u32> {
    let at = section.len().checked_sub(root_size)?;
    let b = section.get(at + 4..at + 8)?;
    Some(LE::read_u32(b))
}

impl ModuleView {
    /// The definitions directory, validated on first use (section hash, bytecheck, every
    /// archive's bounds within the definitions section).
    pub(super) fn def_table(&self) -> Result<&DefTable, ReadError> {
        lazy(&self.defs_st, || {
            self.check_section_hash(SectionKind::DEF_INDEX)?;
            let cx = self.cx(SectionKind::DEF_INDEX);
            let index: &ArchivedDefIndex = access(&self.bytes()[self.def_index.clone()], &cx)?;
            let n =
                validate::def_index(index, self.defs.len() as u64, self.header.major >= 3, &cx)?;
            if n != self.def_count {
                return Err(cx.bad(format!("{n} definitions, its root says {}", self.def_count)));
            }
            let archive = &self.bytes()[self.def_index.clone()];
            let entries = DefEntries::new(archive);
            placed_as_checked(entries.is(index), &cx)?;
            Ok(DefTable {
                entries: entries.range_in(self.bytes()),
                ok: (0..n).map(|_| OnceLock::new()).collect(),
                symbols_ok: (0..n).map(|_| OnceLock::new()).collect(),
            })
        })
    }

    pub(crate) fn def_meta(&self, i: u32) -> Option<DefMeta> {
        self.def_entries().ok()?.get(i as usize)
    }

    /// Definition `i`'s opcode in the definition index (validates the index on first use;
    /// `None` when out of range or the index is invalid).
    pub(crate) fn def_entry_opcode(&self, i: u32) -> Option<u16> {
        self.def_entries().ok()?.opcode(i as usize)
    }

    /// The definition index's entries (validates it on first use).
    pub(super) fn def_entries(&self) -> Result<DefEntries<'_>, ReadError> {
        let table = self.def_table()?;
        Ok(DefEntries::at(self.bytes(), table.entries.clone()))
    }

    /// Number of top-level definitions, as recorded in the definition index (read at open
    /// without validating the index; [`ModuleView::def`] reports a corrupt index).
    pub fn def_count(&self) -> u32 {
        self.def_count
    }

    /// Size, hash and kind of definition `i` (validates the definition index on first use,
    /// not the definition's archive; `None` when out of range or the index is invalid).
    pub fn def_info(&self, i: u32) -> Option<DefInfo> {
        let d = self.def_meta(i)?;
        Some(DefInfo {
            index: i,
            kind: Opcode(d.opcode),
            name: self.def_name(i).map(str::to_string),
            inst_count: d.inst_count,
            size: d.length,
            content_hash: d.content_hash,
        })
    }

    /// The number of instructions of definition `i`'s archive, as the definition index
    /// records it (validates the index on first use, not the archive; `None` when out of
    /// range or the index is invalid): what a reader may size tables by before reading it.
    pub fn def_inst_count(&self, i: u32) -> Option<u32> {
        Some(self.def_meta(i)?.inst_count)
    }

    /// The name hint of definition `i` from the debug section (`None` without debug info,
    /// or when the debug section is invalid).
    pub fn def_name(&self, i: u32) -> Option<&str> {
        self.debug().ok()??.def_name(i)
    }

    /// The pool, validated on first use (hash, structure, every index). Validates the strings.
    pub fn pool(&self) -> Result<PoolView<'_>, ReadError> {
        let bytes = &self.bytes()[self.pool.clone()];
        cached(&self.pool_ok, || {
            let cx = self.cx(SectionKind::POOL);
            let string_count = self.strings_state()?.count;
            self.check_section_hash(SectionKind::POOL)?;
            let pool: &ArchivedPoolTable = access(bytes, &cx)?;
            let lim = Limits {
                pool_len: pool.entries.len() as u32,
                def_count: self.def_count,
                string_count,
                is_pool: true,
                base_depth: 0,
            };
            validate::flat(pool, &lim, &cx)?;
            placed_as_checked(ArchivedFlat::pool(bytes).is_pool(pool), &cx)
        })?;
        Ok(PoolView::new(self.file_strings(), FlatBytes::pool(bytes)))
    }

    /// The limits of a definition's body (`base_depth` 1) or the root's (0).
    pub(super) fn body_limits(&self, pool_len: u32, base_depth: u32) -> Limits {
        Limits {
            pool_len,
            def_count: self.def_count,
            string_count: self.string_count(),
            is_pool: false,
            base_depth,
        }
    }

    /// Definition `i`, validated the first time it is touched (its archive's hash, rkyv's
    /// check, then every index in it), then read in place. The first touch of any definition
    /// also validates the definition index, the strings and the pool.
    pub fn def(&self, i: u32) -> Result<DefView<'_>, ReadError> {
        self.def_hashed(i, None)
    }

    /// Validates definitions `range` (those not validated yet) as [`ModuleView::def`] would,
    /// their body hashes computed many at a time (`crate::batch`): what a reader that will
    /// touch many definitions does ahead of them. Verdicts are cached as `def` caches them,
    /// errors included; none is returned (`def` reports each).
    pub fn validate_defs(&self, range: std::ops::Range<u32>) {
        let Ok(table) = self.def_table() else {
            return;
        };
        let entries = DefEntries::at(self.bytes(), table.entries.clone());
        let section = self.bytes().get(self.defs.clone()).unwrap_or(&[]);
        let mut todo: Vec<(u32, &[u8])> = Vec::new();
        for i in range {
            let (Some(cache), Some(entry)) = (table.ok.get(i as usize), entries.get(i as usize))
            else {
                break;
            };
            if cache.get().is_some() {
                continue;
            }
            if let Some(bytes) = body_in(section, &entry) {
                todo.push((i, bytes));
            }
        }
        let msgs: Vec<&[u8]> = todo.iter().map(|&(_, b)| b).collect();
        for (&(i, bytes), hash) in todo.iter().zip(crate::batch::hash_all(&msgs)) {
            let _ = self.def_hashed(i, Some((bytes, hash)));
        }
    }

    /// [`ModuleView::def`], with the blake3 of the definition's bytes already computed when
    /// `hashed` gives the bytes and their hash (used only if the definition is not validated
    /// yet, and its index entry still names those bytes).
    pub(super) fn def_hashed(
        &self,
        i: u32,
        hashed: Option<(&[u8], [u8; 32])>,
    ) -> Result<DefView<'_>, ReadError> {
        let cx = Ctx {
            file: &self.file,
            loc: Location::Definition(i),
        };
        let table = self.def_table()?;
        let entries = DefEntries::at(self.bytes(), table.entries.clone());
        let (Some(cache), Some(entry)) = (table.ok.get(i as usize), entries.get(i as usize)) else {
            return Err(cx.err(ReadCause::IndexOutOfRange {
                what: "definition index",
                index: i as u64,
                len: entries.len() as u64,
            }));
        };
        // The entry is read from the file each time: bounds-checked again, so that bytes
        // rewritten since the index was validated give an error, never a read outside the
        // definitions section.
        let section = self.bytes().get(self.defs.clone()).unwrap_or(&[]);
        let Some(bytes) = body_in(section, &entry) else {
            return Err(cx.bad(
                "its definition index entry lies outside the definitions section (the file \
                 changed while it was read)"
                    .into(),
            ));
        };
        let major = self.header.major;
        cached(cache, || {
            let hash = match hashed {
                Some((b, h)) if std::ptr::eq(b, bytes) => h,
                _ => *blake3::hash(bytes).as_bytes(),
            };
            if hash != entry.body_hash {
                return Err(cx.err(ReadCause::HashMismatch));
            }
            let pool_len = self.pool()?.len();
            let (count, opcode) = if major >= 3 {
                let body = Compact::parse(bytes).map_err(|m| cx.bad(m))?;
                (body.count(), body.opcode(0))
            } else {
                let body: &ArchivedBody = access(bytes, &cx)?;
                let first = body.insts.first().map_or(0, |r| r.opcode.to_native());
                (body.insts.len(), first)
            };
            if count != entry.inst_count as usize {
                return Err(cx.bad(format!(
                    "{count} instructions, the directory says {}",
                    entry.inst_count
                )));
            }
            if opcode != entry.opcode {
                return Err(cx.bad(format!(
                    "opcode {opcode:#06x}, the directory says {:#06x}",
                    entry.opcode
                )));
            }
            self.check_body(bytes, &self.body_limits(pool_len, 1), &cx)
        })?;
        Ok(DefView::new(
            self.file_strings(),
            Some(i),
            FlatBytes::body_of(major, bytes),
            entry.content_hash,
        ))
    }

    /// Checks one body (a definition's or the root's) in the layout of the file's version:
    /// its structure (rkyv's bytecheck in 1.x/2.x, [`Compact::check`] in 3.x), then every
    /// index and the tree ([`validate::flat`]). A 3.x body is first checked by
    /// [`Compact::accepts`] (both checks' verdict in one pass); only a body it refuses goes
    /// through the two checks, which say why (so errors and their order are theirs).
    pub(super) fn check_body(
        &self,
        bytes: &[u8],
        lim: &Limits,
        cx: &Ctx<'_>,
    ) -> Result<(), ReadError> {
        if self.header.major >= 3 {
            let body = Compact::parse(bytes).map_err(|m| cx.bad(m))?;
            let fast = body.accepts(lim);
            if fast && !cfg!(debug_assertions) {
                return Ok(());
            }
            let slow = body
                .check()
                .map_err(|m| cx.bad(m))
                .and_then(|()| validate::flat(&body, lim, cx));
            // Debug builds (tests, fuzzing with `-a`) run both and compare the verdicts.
            debug_assert_eq!(
                fast,
                slow.is_ok(),
                "Compact::accepts disagrees with Compact::check + validate::flat: {slow:?}"
            );
            slow
        } else {
            let body: &ArchivedBody = access(bytes, cx)?;
            validate::flat(body, lim, cx)?;
            placed_as_checked(ArchivedFlat::body(bytes).is_body(body), cx)
        }
    }

    /// The root `module` instruction with its decorations, validated on first use.
    pub fn root(&self) -> Result<DefView<'_>, ReadError> {
        let cx = self.cx(SectionKind::ROOT);
        let bytes = &self.bytes()[self.root.clone()];
        cached(&self.root_ok, || {
            self.check_section_hash(SectionKind::ROOT)?;
            let pool_len = self.pool()?.len();
            self.check_body(bytes, &self.body_limits(pool_len, 0), &cx)
        })?;
        Ok(DefView::new(
            self.file_strings(),
            None,
            FlatBytes::body_of(self.header.major, bytes),
            [0; 32],
        ))
    }
}

/// Refuses an archive whose hand reading ([`crate::placed`]) is not what rkyv checked.
pub(super) fn placed_as_checked(same: bool, cx: &Ctx<'_>) -> Result<(), ReadError> {
    if same {
        Ok(())
    } else {
        Err(cx.bad("the archive's arrays are not where spec/format.md §2 puts them".into()))
    }
}

/// An opcode's text name, or `#id` for an opaque one.
pub(super) fn op_name(op: Opcode) -> String {
    op.name()
        .map_or_else(|| format!("#{:#06x}", op.0), str::to_string)
}
