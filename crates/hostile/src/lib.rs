//! # irkit-hostile: hostile writing, for tests and fuzzers only
//!
//! This crate writes files the way a hostile writer would, one who can compute blake3 and so
//! makes every hash agree with whatever bytes it chose. It is not part of the library a
//! compiler links: tests and `fuzz/` depend on it, and it reaches what it needs of the writer
//! (older layouts, the two-pass walk, writing past the nesting limit) through
//! `irkit_format::testing`, which only its `testing` feature compiles.
//!
//! A fuzzer that flips bytes without fixing the hashes only ever exercises the hash checks:
//! nearly every input dies there. [`reseal`] recomputes every hash of a damaged file (body
//! hashes, content and symbol hashes of a 2.x file, section hashes, the header hash), so the
//! damage reaches the checks behind the hashes; [`fields`] lists the record-level fields of a
//! file (`spec/format.md` §1–2), so a mutator can target them; [`mutate()`] is such a mutator.
//!
//! Everything here reads raw little-endian offsets as the spec states them (an rkyv root at
//! the end of its section, vectors as a relative `i32` offset and a `u32` length), never
//! through rkyv, and works best effort on any input: no function here panics, whatever the
//! bytes.

use std::ops::Range;

pub use crate::deep::{
    DEEP_OPCODE, deep_tree, deep_tree_file, deep_types, deep_types_file, write_any_depth,
};

use byteorder::{ByteOrder, LittleEndian as LE};

use irkit_format::ModuleView;
use irkit_format::header::{
    DIR_ENTRY_SIZE, HEADER_SIZE, HEADER_SIZE_V1, MAX_DIR_ENTRY_SIZE, MAX_SECTIONS, SectionKind,
    header_size,
};
use irkit_format::testing::{SYMIX_HEADER, SYMIX_RECORD};

mod deep;
mod mutate;

/// Writes `module` as a 2.1 file (rkyv bodies at 16-byte offsets, `spec/format.md` §2.3):
/// the bytes a 2.1 writer wrote, so that tests reach the readers of 2.x files with any module,
/// not only the golden ones.
pub fn write_v2_1(module: &irkit_core::Module) -> Result<Vec<u8>, irkit_format::WriteError> {
    irkit_format::testing::write_version(module, 2)
}

/// Writes `module` as a 3.0 file (compact bodies, the content hash of `spec/format.md` §3.2):
/// the bytes a 3.0 writer wrote, so that tests reach the readers of 3.x files with any module.
pub fn write_v3_0(module: &irkit_core::Module) -> Result<Vec<u8>, irkit_format::WriteError> {
    irkit_format::testing::write_version(module, 3)
}

/// Writes `module` as a 4.0 file (3.0's layout, the content hash of `spec/format.md` §3.4):
/// the bytes a 4.0 writer wrote, so that tests reach the readers of 4.x files with any module.
pub fn write_v4_0(module: &irkit_core::Module) -> Result<Vec<u8>, irkit_format::WriteError> {
    irkit_format::testing::write_version(module, 4)
}

/// Writes `module` in this version's layout as the writer did before it encoded each
/// definition right after its walk: every definition walked, then every one encoded. Tests
/// check that [`irkit_format::write`] gives the same bytes, or the same error.
pub fn write_two_pass(module: &irkit_core::Module) -> Result<Vec<u8>, irkit_format::WriteError> {
    irkit_format::testing::write_two_pass(module)
}

pub use mutate::{mutate, mutate_once};

/// An archived `DefEntry`.
const DEF_ENTRY: usize = 88;
/// An archived `SymbolRec`.
const SYMBOL_REC: usize = 48;
/// An archived `InstRec`.
const INST_REC: usize = 28;
/// An archived `PoolRec`.
const POOL_REC: usize = 20;
/// An archived `DebugRec`.
const DEBUG_REC: usize = 28;

/// One field of a file: `len` bytes at offset `at`, holding a `what`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Offset in the file.
    pub at: usize,
    /// Length in bytes (1, 2, 4, 8 or 32).
    pub len: usize,
    /// What the field holds.
    pub what: FieldKind,
}

/// What a [`Field`] holds (`spec/format.md` §1–2 name each one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldKind {
    /// Header: the magic bytes.
    Magic,
    /// Header: the format major version.
    Major,
    /// Header: the format minor version.
    Minor,
    /// Header: flags.
    HeaderFlags,
    /// Header: the number of directory entries.
    SectionCount,
    /// Header: the size of one directory entry.
    EntrySize,
    /// Header: the file length.
    FileLength,
    /// Header (2.x): the hash over the header and the directory.
    HeaderHash,
    /// Directory entry: the section kind.
    SectionKind,
    /// Directory entry: its flags (bit 0 = optional).
    SectionFlags,
    /// Directory entry: the section's offset.
    SectionOffset,
    /// Directory entry: the section's length.
    SectionLength,
    /// Directory entry: the section's hash.
    SectionHash,
    /// An rkyv vector's relative offset (`i32`).
    VecOffset,
    /// An rkyv vector's element count.
    VecLen,
    /// An opcode id (instruction, pool entry, definition entry, symbol, symbol-index record).
    Opcode,
    /// A payload kind byte.
    PayloadKind,
    /// A reserved field (zero when written).
    Reserved,
    /// A type reference (tagged, or absent).
    TypeRef,
    /// An operand word (a tagged reference).
    Operand,
    /// The end of an operand list (`ops_end`).
    OpsEnd,
    /// One past the last local of a subtree (`end`).
    SubtreeEnd,
    /// A decoration count (`n_decos`).
    DecoCount,
    /// The low payload word.
    PayloadLo,
    /// The high payload word.
    PayloadHi,
    /// A string table's end offset of one string.
    StringEnd,
    /// Definition entry: the archive's offset in the definitions section.
    DefOffset,
    /// Definition entry: the archive's length.
    DefLength,
    /// Definition entry: its instruction count.
    InstCount,
    /// Definition entry: the blake3 of its archive.
    BodyHash,
    /// Definition entry: its content hash.
    ContentHash,
    /// Symbol: the name's string index.
    SymbolName,
    /// Symbol or symbol-index record: the role byte.
    SymbolRole,
    /// Symbol or symbol-index record: the definition index.
    SymbolDef,
    /// Symbol or symbol-index record: the signature's pool index.
    SymbolSignature,
    /// 3.x body header: the reference width (2 or 4).
    RefWidth,
    /// 3.x body header: one of its counts.
    BodyCount,
    /// 3.x body: an external reference (a tagged pool or definition reference).
    ExternalRef,
    /// 3.x body: a word of a side table's bitmap.
    Bitmap,
    /// 3.x body: an entry of a side table's rank directory.
    Rank,
    /// Symbol or symbol-index record: the definition's hash.
    SymbolHash,
    /// Symbol index: the record count.
    IndexCount,
    /// Symbol index: the record size.
    IndexRecordSize,
    /// Symbol-index record: the name's offset in the name blob.
    NameOffset,
    /// Symbol-index record: the name's length.
    NameLength,
    /// Debug record: the definition index.
    DebugDef,
    /// Debug record: the local index.
    DebugLocal,
    /// Debug record: the decoration position.
    DebugPosition,
    /// Debug record: its kind.
    DebugKind,
    /// Debug record: its string index.
    DebugText,
    /// Debug record: the line.
    DebugLine,
    /// Debug record: the column.
    DebugCol,
    /// Debug record (kind 2, format 6.2): the local index of its inlining scope (24 bits).
    DebugScope,
}

/// One directory entry, read raw.
#[derive(Clone, Debug)]
struct RawEntry {
    /// Offset of the entry in the file.
    at: usize,
    kind: u32,
    /// The section's bytes, when they lie inside the file.
    range: Option<Range<usize>>,
}

/// The header and directory, read raw (nothing checked but bounds).
struct Layout {
    major: u16,
    header: usize,
    entries: Vec<RawEntry>,
}

impl Layout {
    fn read(bytes: &[u8]) -> Option<Layout> {
        if bytes.len() < HEADER_SIZE_V1 {
            return None;
        }
        let major = LE::read_u16(&bytes[8..10]);
        let header = header_size(major);
        let entry_size = LE::read_u32(&bytes[20..24]);
        let entry_size = if (DIR_ENTRY_SIZE as u32..=MAX_DIR_ENTRY_SIZE).contains(&entry_size) {
            entry_size as usize
        } else {
            DIR_ENTRY_SIZE
        };
        let count = LE::read_u32(&bytes[16..20]).min(MAX_SECTIONS) as usize;
        let mut entries = Vec::new();
        for i in 0..count {
            let at = header + i * entry_size;
            let Some(e) = bytes.get(at..at + DIR_ENTRY_SIZE) else {
                break;
            };
            let (off, len) = (LE::read_u64(&e[8..16]), LE::read_u64(&e[16..24]));
            let range = off
                .checked_add(len)
                .filter(|&end| end <= bytes.len() as u64)
                .map(|end| off as usize..end as usize);
            entries.push(RawEntry {
                at,
                kind: LE::read_u32(&e[0..4]),
                range,
            });
        }
        Some(Layout {
            major,
            header,
            entries,
        })
    }

    /// The bytes of the first section of `kind` (as the reader picks it), if inside the file.
    fn section(&self, kind: SectionKind) -> Option<Range<usize>> {
        self.entries
            .iter()
            .find(|e| e.kind == kind.0)?
            .range
            .clone()
    }
}

/// The elements of the rkyv vector whose 8 bytes start at `field`: `len × elem` bytes at the
/// relative offset, when they lie inside `within`.
fn vec_at(bytes: &[u8], field: usize, elem: usize, within: &Range<usize>) -> Option<Range<usize>> {
    let b = bytes.get(field..field.checked_add(8)?)?;
    let rel = LE::read_i32(&b[0..4]) as i64;
    let len = LE::read_u32(&b[4..8]) as u64;
    let start = field as i64 + rel;
    let end = start as i128 + len as i128 * elem as i128;
    if start < within.start as i64 || end > within.end as i128 {
        return None;
    }
    Some(start as usize..end as usize)
}

/// Where the rkyv root of `size` bytes sits: the last `size` bytes of `range`.
fn root_of(range: &Range<usize>, size: usize) -> Option<usize> {
    (range.len() >= size).then(|| range.end - size)
}

/// The definition-index entries (88 bytes each), when the vector lies inside the section.
fn def_entries(bytes: &[u8], lay: &Layout) -> Option<Range<usize>> {
    let idx = lay.section(SectionKind::DEF_INDEX)?;
    vec_at(bytes, root_of(&idx, 8)?, DEF_ENTRY, &idx)
}

/// Definition `entry`'s archive inside the definitions section, if it lies there.
fn def_archive(bytes: &[u8], entry: usize, defs: &Range<usize>) -> Option<Range<usize>> {
    let e = bytes.get(entry..entry + 16)?;
    let (off, len) = (LE::read_u64(&e[0..8]), LE::read_u64(&e[8..16]));
    let end = off.checked_add(len)?;
    if end > defs.len() as u64 {
        return None;
    }
    Some(defs.start + off as usize..defs.start + end as usize)
}

fn write_hash(bytes: &mut [u8], at: usize, hash: &[u8; 32]) {
    if let Some(dst) = bytes.get_mut(at..at.saturating_add(32)) {
        dst.copy_from_slice(hash);
    }
}

/// Makes every hash in the file agree with its bytes, best effort, never panicking:
///
/// 1. each definition's body hash in the definition index (for entries whose archive lies
///    inside the definitions section);
/// 2. every directory entry's section hash, then the header hash (2.x);
/// 3. for a 2.x file that opens: each definition's content hash (definition index) and each
///    symbol's hash (the `symbols` section and the symbol-index records) set to the
///    definition's semantic hash where it can be computed, then the section hashes and the
///    header hash again.
///
/// In a 1.x file the content and symbol hashes are the older v1 hash, left as they are.
pub fn reseal(bytes: &mut [u8]) {
    let Some(lay) = Layout::read(bytes) else {
        return;
    };
    seal_bodies(bytes, &lay);
    seal_sections(bytes, &lay);
    seal_header(bytes);
    if lay.major != 1 && seal_semantic(bytes, &lay) {
        seal_sections(bytes, &lay);
        seal_header(bytes);
    }
}

fn seal_bodies(bytes: &mut [u8], lay: &Layout) {
    let (Some(defs), Some(entries)) = (
        lay.section(SectionKind::DEFINITIONS),
        def_entries(bytes, lay),
    ) else {
        return;
    };
    for e in entries.step_by(DEF_ENTRY) {
        if let Some(body) = def_archive(bytes, e, &defs) {
            let h = *blake3::hash(&bytes[body]).as_bytes();
            write_hash(bytes, e + 24, &h);
        }
    }
}

fn seal_sections(bytes: &mut [u8], lay: &Layout) {
    for e in &lay.entries {
        if let Some(r) = e.range.clone() {
            let h = *blake3::hash(&bytes[r]).as_bytes();
            write_hash(bytes, e.at + 24, &h);
        }
    }
}

/// Sets the content hashes and symbol hashes of a 2.x file to the semantic hashes; whether
/// anything was computed.
fn seal_semantic(bytes: &mut [u8], lay: &Layout) -> bool {
    let hashes: Vec<Option<[u8; 32]>> = {
        let Ok(view) = ModuleView::from_bytes(bytes) else {
            return false;
        };
        (0..view.def_count())
            .map(|i| view.semantic_hash(i).ok())
            .collect()
    };
    let of = |def: u32| hashes.get(def as usize).copied().flatten();
    if let Some(entries) = def_entries(bytes, lay) {
        for (i, e) in entries.step_by(DEF_ENTRY).enumerate() {
            if let Some(h) = of(i as u32) {
                write_hash(bytes, e + 56, &h);
            }
        }
    }
    if let Some(sym) = lay.section(SectionKind::SYMBOLS)
        && let Some(recs) = root_of(&sym, 8).and_then(|r| vec_at(bytes, r, SYMBOL_REC, &sym))
    {
        for s in recs.step_by(SYMBOL_REC) {
            if let Some(h) = of(LE::read_u32(&bytes[s + 8..s + 12])) {
                write_hash(bytes, s + 16, &h);
            }
        }
    }
    if let Some(ix) = lay.section(SectionKind::SYMBOL_INDEX) {
        for r in symix_records(bytes, &ix) {
            if let Some(h) = of(LE::read_u32(&bytes[r + 8..r + 12])) {
                write_hash(bytes, r + 20, &h);
            }
        }
    }
    true
}

/// The file offsets of the symbol-index records that lie inside the section.
fn symix_records(bytes: &[u8], ix: &Range<usize>) -> Vec<usize> {
    let Some(head) = bytes
        .get(ix.start..ix.start + SYMIX_HEADER)
        .filter(|_| ix.len() >= SYMIX_HEADER)
    else {
        return Vec::new();
    };
    let count = LE::read_u32(&head[0..4]) as usize;
    let size = LE::read_u32(&head[4..8]) as usize;
    if !(SYMIX_RECORD..=MAX_DIR_ENTRY_SIZE as usize).contains(&size) {
        return Vec::new();
    }
    let fit = (ix.len() - SYMIX_HEADER) / size;
    (0..count.min(fit))
        .map(|k| ix.start + SYMIX_HEADER + k * size)
        .collect()
}

/// Recomputes the header hash of a 2.x file (bytes 32..64: blake3 over the first 32 header
/// bytes and the directory); a 1.x file has none.
fn seal_header(bytes: &mut [u8]) {
    irkit_format::header::seal(bytes);
}

/// Most fields [`fields`] lists for a file of `n` bytes (hostile vectors may overlap).
fn field_budget(n: usize) -> usize {
    n.saturating_mul(2).saturating_add(1024)
}

struct Fields<'b> {
    bytes: &'b [u8],
    out: Vec<Field>,
    budget: usize,
}

impl Fields<'_> {
    fn push(&mut self, at: usize, len: usize, what: FieldKind) {
        if self.out.len() < self.budget
            && at.checked_add(len).is_some_and(|e| e <= self.bytes.len())
        {
            self.out.push(Field { at, len, what });
        }
    }

    fn full(&self) -> bool {
        self.out.len() >= self.budget
    }

    /// A vector's two words; its elements when they lie inside `within`.
    fn vec(&mut self, field: usize, elem: usize, within: &Range<usize>) -> Option<Range<usize>> {
        self.push(field, 4, FieldKind::VecOffset);
        self.push(field + 4, 4, FieldKind::VecLen);
        vec_at(self.bytes, field, elem, within)
    }

    /// A flattened list of records (a body, or the pool) whose 24-byte root is at `root`.
    fn flat(&mut self, root: usize, within: &Range<usize>, pool: bool) {
        let rec = if pool { POOL_REC } else { INST_REC };
        let recs = self.vec(root, rec, within);
        let ops = self.vec(root + 8, 4, within);
        self.vec(root + 16, 1, within);
        for r in recs.into_iter().flat_map(|r| r.step_by(rec)) {
            if self.full() {
                return;
            }
            use FieldKind::*;
            self.push(r, 2, Opcode);
            self.push(r + 2, 1, PayloadKind);
            self.push(r + 3, 1, Reserved);
            self.push(r + 4, 4, TypeRef);
            self.push(r + 8, 4, OpsEnd);
            if pool {
                self.push(r + 12, 4, PayloadLo);
                self.push(r + 16, 4, PayloadHi);
            } else {
                self.push(r + 12, 4, SubtreeEnd);
                self.push(r + 16, 4, DecoCount);
                self.push(r + 20, 4, PayloadLo);
                self.push(r + 24, 4, PayloadHi);
            }
        }
        for o in ops.into_iter().flat_map(|r| r.step_by(4)) {
            self.push(o, 4, FieldKind::Operand);
        }
    }

    /// A 3.x body (`spec/format.md` §2.4) at `body`: its header, and when the header lays
    /// out the body's bytes, every element of its arrays.
    fn compact(&mut self, body: &Range<usize>) {
        use FieldKind::*;
        use irkit_format::testing::BodyArray as Array;
        let s = body.start;
        // The width byte, `w - 1` reserved bytes, six counts of `w` bytes (§2.4).
        let w = if self.bytes.get(s) == Some(&4) { 4 } else { 2 };
        self.push(s, 1, RefWidth);
        self.push(s + 1, w - 1, Reserved);
        for k in 0..6 {
            self.push(s + w + w * k, w, BodyCount);
        }
        let Some(arrays) = self
            .bytes
            .get(body.clone())
            .and_then(irkit_format::testing::body_arrays)
        else {
            return;
        };
        for (array, start, size, count) in arrays {
            let what = match array {
                Array::Ext => ExternalRef,
                Array::Opcode => Opcode,
                Array::Ty => TypeRef,
                Array::OpsEnd => OpsEnd,
                Array::Operand => Operand,
                Array::TreeBits | Array::PayBits => Bitmap,
                Array::TreeRanks | Array::PayRanks => Rank,
                Array::TreeEnd => SubtreeEnd,
                Array::TreeDecos => DecoCount,
                Array::PayKind => PayloadKind,
                Array::PayLo => PayloadLo,
                Array::PayHi => PayloadHi,
            };
            for k in 0..count {
                if self.full() {
                    return;
                }
                self.push(s + start + k * size, size, what);
            }
        }
    }

    /// A string table whose 16-byte root is at `root`.
    fn strings(&mut self, root: usize, within: &Range<usize>) {
        let ends = self.vec(root, 4, within);
        self.vec(root + 8, 1, within);
        for e in ends.into_iter().flat_map(|r| r.step_by(4)) {
            self.push(e, 4, FieldKind::StringEnd);
        }
    }
}

/// The byte spans of the record-level fields a mutator should target: the header's fields,
/// every directory entry's, and inside the sections every rkyv vector's offset and length
/// words, every instruction and pool record field, every operand word, the string tables'
/// ends, the definition-index entries, the symbol records, the symbol index's header and
/// record fields, and the debug records. Best effort on damaged input (a vector whose
/// elements leave its section is listed without its elements), never panicking; the list is
/// bounded by a small multiple of the file's length.
pub fn fields(bytes: &[u8]) -> Vec<Field> {
    use FieldKind::*;
    let mut f = Fields {
        bytes,
        out: Vec::new(),
        budget: field_budget(bytes.len()),
    };
    for (at, len, what) in [
        (0, 8, Magic),
        (8, 2, Major),
        (10, 2, Minor),
        (12, 4, HeaderFlags),
        (16, 4, SectionCount),
        (20, 4, EntrySize),
        (24, 8, FileLength),
    ] {
        f.push(at, len, what);
    }
    let Some(lay) = Layout::read(bytes) else {
        return f.out;
    };
    if lay.header == HEADER_SIZE {
        f.push(32, 32, HeaderHash);
    }
    for e in &lay.entries {
        f.push(e.at, 4, SectionKind);
        f.push(e.at + 4, 4, SectionFlags);
        f.push(e.at + 8, 8, SectionOffset);
        f.push(e.at + 16, 8, SectionLength);
        f.push(e.at + 24, 32, SectionHash);
    }
    let sec = |k| lay.section(k);
    if let Some(s) = sec(irkit_format::SectionKind::STRINGS)
        && let Some(root) = root_of(&s, 16)
    {
        f.strings(root, &s);
    }
    if let Some(s) = sec(irkit_format::SectionKind::SYMBOLS)
        && let Some(root) = root_of(&s, 8)
    {
        for r in f
            .vec(root, SYMBOL_REC, &s)
            .into_iter()
            .flat_map(|r| r.step_by(SYMBOL_REC))
        {
            f.push(r, 4, SymbolName);
            f.push(r + 4, 1, SymbolRole);
            f.push(r + 5, 1, Reserved);
            f.push(r + 6, 2, Opcode);
            f.push(r + 8, 4, SymbolDef);
            f.push(r + 12, 4, SymbolSignature);
            f.push(r + 16, 32, SymbolHash);
        }
    }
    if let Some(s) = sec(irkit_format::SectionKind::SYMBOL_INDEX) {
        f.push(s.start, 4, IndexCount);
        f.push(s.start + 4, 4, IndexRecordSize);
        f.push(s.start + 8, 8, Reserved);
        for r in symix_records(bytes, &s) {
            if f.full() {
                break;
            }
            f.push(r, 4, NameOffset);
            f.push(r + 4, 4, NameLength);
            f.push(r + 8, 4, SymbolDef);
            f.push(r + 12, 4, SymbolSignature);
            f.push(r + 16, 2, Opcode);
            f.push(r + 18, 1, SymbolRole);
            f.push(r + 19, 1, Reserved);
            f.push(r + 20, 32, SymbolHash);
        }
    }
    if let Some(s) = sec(irkit_format::SectionKind::POOL)
        && let Some(root) = root_of(&s, 24)
    {
        f.flat(root, &s, true);
    }
    let defs = sec(irkit_format::SectionKind::DEFINITIONS);
    if let Some(s) = sec(irkit_format::SectionKind::DEF_INDEX)
        && let Some(root) = root_of(&s, 8)
    {
        for e in f
            .vec(root, DEF_ENTRY, &s)
            .into_iter()
            .flat_map(|r| r.step_by(DEF_ENTRY))
        {
            if f.full() {
                break;
            }
            f.push(e, 8, DefOffset);
            f.push(e + 8, 8, DefLength);
            f.push(e + 16, 4, InstCount);
            f.push(e + 20, 2, Opcode);
            f.push(e + 22, 2, Reserved);
            f.push(e + 24, 32, BodyHash);
            f.push(e + 56, 32, ContentHash);
            if let Some(defs) = &defs
                && let Some(body) = def_archive(bytes, e, defs)
            {
                if lay.major >= 3 {
                    f.compact(&body);
                } else if let Some(root) = root_of(&body, 24) {
                    f.flat(root, &body, false);
                }
            }
        }
    }
    if let Some(s) = sec(irkit_format::SectionKind::ROOT) {
        if lay.major >= 3 {
            f.compact(&s);
        } else if let Some(root) = root_of(&s, 24) {
            f.flat(root, &s, false);
        }
    }
    if let Some(s) = sec(irkit_format::SectionKind::DEBUG)
        && let Some(root) = root_of(&s, 24)
    {
        f.strings(root, &s);
        for r in f
            .vec(root + 16, DEBUG_REC, &s)
            .into_iter()
            .flat_map(|r| r.step_by(DEBUG_REC))
        {
            f.push(r, 4, DebugDef);
            f.push(r + 4, 4, DebugLocal);
            f.push(r + 8, 4, DebugPosition);
            f.push(r + 12, 1, DebugKind);
            // Kind 2 (6.2): the scope's local index; otherwise reserved.
            let scoped = bytes.get(r + 12) == Some(&2);
            f.push(r + 13, 3, if scoped { DebugScope } else { Reserved });
            f.push(r + 16, 4, DebugText);
            f.push(r + 20, 4, DebugLine);
            f.push(r + 24, 4, DebugCol);
        }
    }
    f.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use irkit_format::{ReadCause, write};

    /// Two exported functions, `main` calling `helper` with the constant 41.
    fn sample() -> Vec<u8> {
        use irkit_core::{Builder, Module, Opcode};
        let mut m = Module::new();
        let mut b = Builder::new(&mut m);
        let i32t = b.module().ty_i32();
        let unary = b.module().ty_fn(i32t, &[i32t]).unwrap();
        let nullary = b.module().ty_fn(i32t, &[]).unwrap();
        let helper = b.func("helper", unary).unwrap();
        b.export(helper, "helper").unwrap();
        let (entry, p) = b.block(helper, &[i32t]).unwrap();
        b.position_at_end(entry);
        let one = b.module().const_i32(1);
        let y = b.binary(Opcode::IADD, p[0], one).unwrap();
        b.ret(Some(y)).unwrap();
        let main = b.func("main", nullary).unwrap();
        b.export(main, "main").unwrap();
        let (entry, _) = b.block(main, &[]).unwrap();
        b.position_at_end(entry);
        let c = b.module().const_i32(41);
        let r = b.call(helper, &[c]).unwrap();
        b.ret(Some(r)).unwrap();
        write(&m).expect("writes")
    }

    #[test]
    fn reseal_of_a_written_module_is_the_identity() {
        let bytes = sample();
        let mut again = bytes.clone();
        reseal(&mut again);
        assert_eq!(again, bytes);
    }

    #[test]
    fn reseal_after_a_body_flip_passes_the_body_hash() {
        let bytes = sample();
        let view = ModuleView::from_bytes(&bytes).unwrap();
        view.validate_all().unwrap();
        let defs = view
            .sections()
            .into_iter()
            .find(|s| s.kind == SectionKind::DEFINITIONS)
            .unwrap();
        drop(view);
        let mut stale_seen = 0;
        for at in defs.offset as usize..(defs.offset + defs.size) as usize {
            for bit in [0, 2, 7] {
                let mut m = bytes.clone();
                m[at] ^= 1 << bit;
                let stale = ModuleView::from_bytes(&m).unwrap();
                let before = (0..stale.def_count()).find_map(|i| stale.def(i).err());
                if before.is_some_and(|e| matches!(e.cause, ReadCause::HashMismatch)) {
                    stale_seen += 1;
                }
                drop(stale);
                reseal(&mut m);
                let view = ModuleView::from_bytes(&m).expect("a resealed body flip opens");
                for i in 0..view.def_count() {
                    if let Err(e) = view.def(i) {
                        assert!(
                            !matches!(e.cause, ReadCause::HashMismatch),
                            "byte {at}: {e}"
                        );
                    }
                }
                // Nor any other hash: a 2.x file's content hashes were recomputed too.
                if let Err(e) = view.validate_all() {
                    assert!(
                        !matches!(e.cause, ReadCause::HashMismatch),
                        "byte {at}: {e}"
                    );
                    assert!(!e.to_string().contains("hash"), "byte {at}: {e}");
                }
            }
        }
        assert!(
            stale_seen > 0,
            "without reseal, body flips are hash mismatches"
        );
    }

    #[test]
    fn fields_cover_the_records_and_nothing_panics() {
        let bytes = sample();
        let fs = fields(&bytes);
        for k in [
            FieldKind::Magic,
            FieldKind::SectionHash,
            FieldKind::Opcode,
            FieldKind::Operand,
            FieldKind::SubtreeEnd,
            FieldKind::DefOffset,
            FieldKind::SymbolDef,
            FieldKind::NameOffset,
            FieldKind::StringEnd,
            FieldKind::VecLen,
        ] {
            assert!(fs.iter().any(|f| f.what == k), "no {k:?} field");
        }
        assert!(fs.iter().all(|f| f.at + f.len <= bytes.len()));
        // Every prefix, and mutated files, are handled without panicking.
        for n in (0..bytes.len()).step_by(7) {
            let mut b = bytes[..n].to_vec();
            let _ = fields(&b);
            reseal(&mut b);
        }
        for seed in 0..200u32 {
            let mut b = bytes.clone();
            let choices: Vec<u8> = (0..64)
                .map(|i| (seed.wrapping_mul(2654435761) >> (i % 24)) as u8 ^ i as u8)
                .collect();
            mutate(&mut b, &choices);
            let _ = fields(&b);
            reseal(&mut b);
            if let Ok(v) = ModuleView::from_bytes(&b) {
                let _ = v.validate_all();
            }
        }
    }
}
