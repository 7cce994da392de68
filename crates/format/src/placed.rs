//! Validated archives read in place by hand: rkyv's checked access (bytecheck) runs once per
//! archive, when [`ModuleView`](crate::ModuleView) validates it; after that no rkyv reference
//! is made or followed again. Each archive is read through bounds-checked slices of its own
//! bytes, laid out as `spec/format.md` §2 says (the root in the last `size_of(root)` bytes; a
//! `Vec` an `i32` offset from its own offset field, then a `u32` count; records `repr(C)`, the
//! field offsets taken from the archived types with `offset_of!`), and validation checks that
//! this reading finds exactly the arrays rkyv checked ([`same_array`]).
//!
//! Why not keep rkyv's `&Archived…` root, or re-enter it with `access_unchecked`: the bytes
//! of a mapped file can change after they were validated. When another process truncates the
//! file, the truncation guard ([`guard_truncation`](irkit_io::guard_truncation)) maps zero pages
//! over the missing part and marks the mapping changed; every archive reaching past the new
//! end then reads zeros where it was validated. An unchecked rkyv access would follow
//! relative pointers recomputed from those bytes (pointer arithmetic outside the archive is
//! undefined behavior, even for an empty slice), and so would every later `as_slice` of a
//! reference kept from validation. A slice of the archive cannot leave the archive: what
//! changed bytes can do here is give wrong numbers, which every reader bounds already (each
//! view's length is fixed when the view is made, so every loop over it ends; every index taken
//! from the bytes goes through `get`), and whoever acts on what it read calls
//! `ModuleView::check_unchanged` first (the linker does for every input), so nothing read
//! from a cut file is used. No `unsafe` either: the crate denies it outside the mapping.

use std::mem::{offset_of, size_of};
use std::ops::Range;

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::compact::{Compact, InOrder, MaybeCompact};
use crate::flat::{FileStrings, Flat, Rec};
use crate::schema::{
    ArchivedBody, ArchivedDebugRec, ArchivedDebugTable, ArchivedDefEntry, ArchivedDefIndex,
    ArchivedInstRec, ArchivedPoolRec, ArchivedPoolTable, ArchivedStringTable, ArchivedSymbolRec,
    ArchivedSymbolTable, DefMeta, REF_NONE,
};

/// The little-endian `u32` at `at` of `b` (0 past its end).
fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).map_or(0, LE::read_u32)
}

/// The little-endian `u64` at `at` of `b` (0 past its end).
fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).map_or(0, LE::read_u64)
}

/// The 32-byte hash at `at` of `b` (zeros past its end).
fn hash_at(b: &[u8], at: usize) -> [u8; 32] {
    let mut h = [0u8; 32];
    if let Some(bytes) = b.get(at..at + 32) {
        h.copy_from_slice(bytes);
    }
    h
}

/// The little-endian `u16` at `at` of `b` (0 past its end).
fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2).map_or(0, LE::read_u16)
}

/// The byte at `at` of `b` (0 past its end).
fn u8_at(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

/// Record `k` of `recs`, `size` bytes each.
fn record(recs: &[u8], size: usize, k: usize) -> Option<&[u8]> {
    let start = k.checked_mul(size)?;
    recs.get(start..start.checked_add(size)?)
}

/// Where the root of type `T` starts in `archive` (its last `size_of::<T>()` bytes).
fn root_of<T>(archive: &[u8]) -> usize {
    archive.len().saturating_sub(size_of::<T>())
}

/// The elements of the archived `Vec` whose header is at `at` in `archive`, `elem` bytes each;
/// empty when the header does not point inside the archive.
fn vec_at(archive: &[u8], at: usize, elem: usize) -> &[u8] {
    let offset = archive.get(at..at + 4).map_or(0, LE::read_i32) as i64;
    let count = u32_at(archive, at + 4) as u64;
    let start = at as i64 + offset;
    let Ok(start) = u64::try_from(start) else {
        return &[];
    };
    // `count < 2^32` and `elem` is a record size: no overflow in u64.
    let end = start + count * elem as u64;
    let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
        return &[];
    };
    archive.get(start..end).unwrap_or(&[])
}

/// Whether `bytes` (read by hand) are exactly the elements of `array` (as rkyv checked them):
/// validation refuses an archive where the two readings differ, so everything read by hand
/// afterwards is what was validated.
pub(crate) fn same_array<T>(bytes: &[u8], array: &[T]) -> bool {
    if array.is_empty() {
        // An empty vector may hold any offset (spec/format.md §2).
        return bytes.is_empty();
    }
    std::ptr::eq(bytes.as_ptr(), array.as_ptr().cast()) && bytes.len() == size_of_val(array)
}

/// A string table read in place (the debug section's own).
fn strings_at(archive: &[u8], at: usize) -> FileStrings<'_> {
    FileStrings {
        ends: vec_at(archive, at + offset_of!(ArchivedStringTable, ends), 4),
        data: vec_at(archive, at + offset_of!(ArchivedStringTable, data), 1),
    }
}

/// Where the fields of an archived instruction or pool record are.
struct Fields {
    opcode: usize,
    payload_kind: usize,
    ty: usize,
    ops_end: usize,
    /// `end` and `n_decos` (bodies only).
    tree: Option<(usize, usize)>,
    lo: usize,
    hi: usize,
}

const INST_SIZE: usize = size_of::<ArchivedInstRec>();
const INST: Fields = Fields {
    opcode: offset_of!(ArchivedInstRec, opcode),
    payload_kind: offset_of!(ArchivedInstRec, payload_kind),
    ty: offset_of!(ArchivedInstRec, ty),
    ops_end: offset_of!(ArchivedInstRec, ops_end),
    tree: Some((
        offset_of!(ArchivedInstRec, end),
        offset_of!(ArchivedInstRec, n_decos),
    )),
    lo: offset_of!(ArchivedInstRec, payload_lo),
    hi: offset_of!(ArchivedInstRec, payload_hi),
};

const POOL_SIZE: usize = size_of::<ArchivedPoolRec>();
const POOL: Fields = Fields {
    opcode: offset_of!(ArchivedPoolRec, opcode),
    payload_kind: offset_of!(ArchivedPoolRec, payload_kind),
    ty: offset_of!(ArchivedPoolRec, ty),
    ops_end: offset_of!(ArchivedPoolRec, ops_end),
    tree: None,
    lo: offset_of!(ArchivedPoolRec, payload_lo),
    hi: offset_of!(ArchivedPoolRec, payload_hi),
};

/// The fields of record `i` of `recs` (records of `N` bytes laid out as `f`; `ops_start` left
/// 0), or `None` past the end. Inlined with a constant `N` and `f`, every read is at a
/// constant offset of a fixed-size array: no bounds check, no division.
#[inline(always)]
fn fields_of<const N: usize>(recs: &[u8], i: usize, f: &Fields) -> Option<Rec> {
    let start = i.checked_mul(N)?;
    let r: &[u8; N] = recs.get(start..start.checked_add(N)?)?.try_into().ok()?;
    let (end, n_decos) = match f.tree {
        Some((end, n)) => (LE::read_u32(&r[end..end + 4]), LE::read_u32(&r[n..n + 4])),
        None => (i as u32 + 1, 0),
    };
    Some(Rec {
        opcode: LE::read_u16(&r[f.opcode..f.opcode + 2]),
        payload_kind: r[f.payload_kind],
        ty: LE::read_u32(&r[f.ty..f.ty + 4]),
        ops_start: 0,
        ops_end: LE::read_u32(&r[f.ops_end..f.ops_end + 4]),
        end,
        n_decos,
        lo: LE::read_u32(&r[f.lo..f.lo + 4]),
        hi: LE::read_u32(&r[f.hi..f.hi + 4]),
    })
}

/// Which records an [`ArchivedFlat`] holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Body,
    Pool,
}

/// A flattened instruction list read in place: a body, in the 3.0 layout
/// ([`Compact`]) or as a 1.x/2.x rkyv archive, or the pool (an rkyv archive in every version).
#[derive(Clone, Copy)]
pub(crate) enum FlatBytes<'v> {
    /// An rkyv `Body` (1.x, 2.x) or `PoolTable`.
    Archived(ArchivedFlat<'v>),
    /// A 3.0 body.
    Compact(Compact<'v>),
}

impl<'v> FlatBytes<'v> {
    /// A 1.x/2.x body archive.
    pub(crate) fn body(archive: &'v [u8]) -> FlatBytes<'v> {
        FlatBytes::Archived(ArchivedFlat::body(archive))
    }

    /// A body of a file of major version `major`.
    pub(crate) fn body_of(major: u16, bytes: &'v [u8]) -> FlatBytes<'v> {
        if major >= 3 {
            FlatBytes::Compact(Compact::lenient(bytes))
        } else {
            FlatBytes::body(bytes)
        }
    }

    /// The pool section.
    pub(crate) fn pool(archive: &'v [u8]) -> FlatBytes<'v> {
        FlatBytes::Archived(ArchivedFlat::pool(archive))
    }

    /// The blob of bytes payloads.
    pub(crate) fn bytes(&self) -> &'v [u8] {
        match self {
            FlatBytes::Archived(a) => a.blob,
            FlatBytes::Compact(c) => c.blob_bytes(),
        }
    }

    /// Every record in order (see [`Flat::recs`]), not borrowing this value.
    pub(crate) fn records(&self) -> Records<'v> {
        match *self {
            FlatBytes::Archived(a) => Records::Archived(a, 0),
            FlatBytes::Compact(c) => Records::Compact(InOrder::new(c)),
        }
    }

    /// The operands of record `r` (of this list), bounded by the operand array.
    pub(crate) fn operands_of(&self, r: Rec) -> impl ExactSizeIterator<Item = u32> + 'v {
        let me = *self;
        let end = r.ops_end.min(self.operand_len() as u32);
        (r.ops_start.min(end)..end).map(move |j| me.operand(j as usize))
    }
}

/// The records of a [`FlatBytes`] in order ([`FlatBytes::records`]): the 3.0 layout's in one
/// sequential pass ([`InOrder`]), an rkyv archive's one by one (each is O(1) there).
pub(crate) enum Records<'v> {
    Archived(ArchivedFlat<'v>, u32),
    Compact(InOrder<'v>),
}

impl Iterator for Records<'_> {
    type Item = Rec;

    #[inline]
    fn next(&mut self) -> Option<Rec> {
        match self {
            Records::Archived(a, i) => {
                let r = (*i < a.count).then(|| a.rec(*i as usize));
                *i += r.is_some() as u32;
                r
            }
            Records::Compact(c) => c.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Records::Archived(a, i) => {
                let left = a.count.saturating_sub(*i) as usize;
                (left, Some(left))
            }
            Records::Compact(c) => c.size_hint(),
        }
    }
}

impl ExactSizeIterator for Records<'_> {}

impl MaybeCompact for FlatBytes<'_> {
    fn compact(&self) -> Option<Compact<'_>> {
        match self {
            FlatBytes::Archived(_) => None,
            FlatBytes::Compact(c) => Some(*c),
        }
    }
}

impl Flat for FlatBytes<'_> {
    #[inline]
    fn count(&self) -> usize {
        match self {
            FlatBytes::Archived(a) => a.count(),
            FlatBytes::Compact(c) => c.count(),
        }
    }

    fn recs(&self) -> impl Iterator<Item = Rec> + '_ {
        self.records()
    }

    #[inline]
    fn rec(&self, i: usize) -> Rec {
        match self {
            FlatBytes::Archived(a) => a.rec(i),
            FlatBytes::Compact(c) => c.rec(i),
        }
    }

    #[inline]
    fn operand(&self, j: usize) -> u32 {
        match self {
            FlatBytes::Archived(a) => a.operand(j),
            FlatBytes::Compact(c) => c.operand(j),
        }
    }

    #[inline]
    fn operand_len(&self) -> usize {
        match self {
            FlatBytes::Archived(a) => a.operand_len(),
            FlatBytes::Compact(c) => c.operand_len(),
        }
    }

    #[inline]
    fn end(&self, i: usize) -> u32 {
        match self {
            FlatBytes::Archived(a) => a.rec(i).end,
            FlatBytes::Compact(c) => c.end_of(i),
        }
    }

    fn blob(&self) -> &[u8] {
        self.bytes()
    }
}

/// A flattened instruction list as an rkyv archive read in place: a 1.x/2.x body (a
/// definition's or the root's) or the pool. Its record and operand counts are fixed when it is
/// made.
#[derive(Clone, Copy)]
pub(crate) struct ArchivedFlat<'v> {
    recs: &'v [u8],
    operands: &'v [u8],
    blob: &'v [u8],
    kind: Kind,
    count: u32,
    n_ops: u32,
}

impl<'v> ArchivedFlat<'v> {
    /// A body archive (`Body { insts, operands, bytes }`).
    pub(crate) fn body(archive: &'v [u8]) -> ArchivedFlat<'v> {
        let root = root_of::<ArchivedBody>(archive);
        ArchivedFlat::new(
            vec_at(archive, root + offset_of!(ArchivedBody, insts), INST_SIZE),
            vec_at(archive, root + offset_of!(ArchivedBody, operands), 4),
            vec_at(archive, root + offset_of!(ArchivedBody, bytes), 1),
            Kind::Body,
        )
    }

    /// The pool section (`PoolTable { entries, operands, bytes }`).
    pub(crate) fn pool(archive: &'v [u8]) -> ArchivedFlat<'v> {
        let root = root_of::<ArchivedPoolTable>(archive);
        ArchivedFlat::new(
            vec_at(
                archive,
                root + offset_of!(ArchivedPoolTable, entries),
                POOL_SIZE,
            ),
            vec_at(archive, root + offset_of!(ArchivedPoolTable, operands), 4),
            vec_at(archive, root + offset_of!(ArchivedPoolTable, bytes), 1),
            Kind::Pool,
        )
    }

    fn new(recs: &'v [u8], operands: &'v [u8], blob: &'v [u8], kind: Kind) -> ArchivedFlat<'v> {
        let size = match kind {
            Kind::Body => INST_SIZE,
            Kind::Pool => POOL_SIZE,
        };
        ArchivedFlat {
            recs,
            operands,
            blob,
            kind,
            // Archived counts are `u32`: so are these.
            count: (recs.len() / size) as u32,
            n_ops: (operands.len() / 4) as u32,
        }
    }

    /// Whether this reading is the body rkyv checked.
    pub(crate) fn is_body(&self, body: &ArchivedBody) -> bool {
        same_array(self.recs, body.insts.as_slice())
            && same_array(self.operands, body.operands.as_slice())
            && same_array(self.blob, body.bytes.as_slice())
    }

    /// Whether this reading is the pool rkyv checked.
    pub(crate) fn is_pool(&self, pool: &ArchivedPoolTable) -> bool {
        same_array(self.recs, pool.entries.as_slice())
            && same_array(self.operands, pool.operands.as_slice())
            && same_array(self.blob, pool.bytes.as_slice())
    }

    /// Record `i` as stored (its `ops_start` left 0).
    #[inline]
    fn stored(&self, i: usize) -> Option<Rec> {
        match self.kind {
            Kind::Body => fields_of::<INST_SIZE>(self.recs, i, &INST),
            Kind::Pool => fields_of::<POOL_SIZE>(self.recs, i, &POOL),
        }
    }
}

impl Flat for ArchivedFlat<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.count as usize
    }

    #[inline]
    fn rec(&self, i: usize) -> Rec {
        let Some(mut r) = self.stored(i) else {
            return Rec::default();
        };
        // Clamped to the arrays, so that no reader of bytes changed after validation loops
        // past them (a validated archive is within these bounds already).
        r.ops_start = match i.checked_sub(1).and_then(|p| self.stored(p)) {
            Some(p) => p.ops_end.min(self.n_ops),
            None => 0,
        };
        r.ops_end = r.ops_end.min(self.n_ops);
        if self.kind == Kind::Body {
            r.end = r.end.min(self.count);
        }
        r
    }

    #[inline]
    fn operand(&self, j: usize) -> u32 {
        match j.checked_mul(4) {
            Some(at) if at < self.operands.len() => u32_at(self.operands, at),
            _ => REF_NONE,
        }
    }

    #[inline]
    fn operand_len(&self) -> usize {
        self.n_ops as usize
    }

    fn blob(&self) -> &[u8] {
        self.blob
    }
}

const DEF_ENTRY_SIZE: usize = size_of::<ArchivedDefEntry>();

/// The definition index read in place: each entry is read from the file's bytes when it is
/// asked for (a link that reaches a few definitions of an input reads a few entries; copying
/// every entry out when the index was first used cost the same at any reach).
#[derive(Clone, Copy, Default)]
pub(crate) struct DefEntries<'v> {
    recs: &'v [u8],
}

impl<'v> DefEntries<'v> {
    /// The definition index's archive (`DefIndex { defs }`).
    pub(crate) fn new(archive: &'v [u8]) -> DefEntries<'v> {
        let root = root_of::<ArchivedDefIndex>(archive);
        DefEntries {
            recs: vec_at(
                archive,
                root + offset_of!(ArchivedDefIndex, defs),
                DEF_ENTRY_SIZE,
            ),
        }
    }

    /// The entries at `range` of `bytes` (where [`DefEntries::range_in`] found them).
    pub(crate) fn at(bytes: &'v [u8], range: Range<usize>) -> DefEntries<'v> {
        DefEntries {
            recs: bytes.get(range).unwrap_or(&[]),
        }
    }

    /// Where the entries lie in `outer`, a slice that holds the archive.
    pub(crate) fn range_in(&self, outer: &[u8]) -> Range<usize> {
        let start = (self.recs.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize);
        start..start + self.recs.len()
    }

    /// Whether this reading is the index rkyv checked.
    pub(crate) fn is(&self, t: &ArchivedDefIndex) -> bool {
        same_array(self.recs, t.defs.as_slice())
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.recs.len() / DEF_ENTRY_SIZE
    }

    /// Entry `k`'s opcode alone (what a walk asks of many definitions it does not read).
    pub(crate) fn opcode(&self, k: usize) -> Option<u16> {
        let r = record(self.recs, DEF_ENTRY_SIZE, k)?;
        Some(u16_at(r, offset_of!(ArchivedDefEntry, opcode)))
    }

    /// Entry `k`.
    pub(crate) fn get(&self, k: usize) -> Option<DefMeta> {
        let r = record(self.recs, DEF_ENTRY_SIZE, k)?;
        Some(DefMeta {
            offset: u64_at(r, offset_of!(ArchivedDefEntry, offset)),
            length: u64_at(r, offset_of!(ArchivedDefEntry, length)),
            inst_count: u32_at(r, offset_of!(ArchivedDefEntry, inst_count)),
            opcode: u16_at(r, offset_of!(ArchivedDefEntry, opcode)),
            body_hash: hash_at(r, offset_of!(ArchivedDefEntry, body_hash)),
            content_hash: hash_at(r, offset_of!(ArchivedDefEntry, content_hash)),
        })
    }
}

/// One debug record (`spec/format.md` §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DebugEntry {
    pub def: u32,
    pub local: u32,
    pub position: u32,
    pub kind: u8,
    /// Kind [`crate::schema::DEBUG_SCOPED_LOC`]: the scope's local index (the record's
    /// `reserved` bytes, 24 bits little-endian).
    pub scope: u32,
    pub text: u32,
    pub line: u32,
    pub col: u32,
}

/// Debug records read in place (all of a debug section, or a sorted run of them).
#[derive(Clone, Copy, Default)]
pub(crate) struct DebugRecs<'v> {
    recs: &'v [u8],
}

const DEBUG_SIZE: usize = size_of::<ArchivedDebugRec>();

impl<'v> DebugRecs<'v> {
    /// Number of records.
    pub(crate) fn len(&self) -> usize {
        self.recs.len() / DEBUG_SIZE
    }

    /// Record `k`.
    pub(crate) fn get(&self, k: usize) -> Option<DebugEntry> {
        let r = record(self.recs, DEBUG_SIZE, k)?;
        Some(DebugEntry {
            def: u32_at(r, offset_of!(ArchivedDebugRec, def)),
            local: u32_at(r, offset_of!(ArchivedDebugRec, local)),
            position: u32_at(r, offset_of!(ArchivedDebugRec, position)),
            kind: u8_at(r, offset_of!(ArchivedDebugRec, kind)),
            scope: {
                let at = offset_of!(ArchivedDebugRec, reserved);
                let b = |k: usize| u32::from(u8_at(r, at + k));
                b(0) | b(1) << 8 | b(2) << 16
            },
            text: u32_at(r, offset_of!(ArchivedDebugRec, text)),
            line: u32_at(r, offset_of!(ArchivedDebugRec, line)),
            col: u32_at(r, offset_of!(ArchivedDebugRec, col)),
        })
    }

    /// Every record, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = DebugEntry> + 'v {
        let recs = *self;
        (0..self.len()).filter_map(move |k| recs.get(k))
    }

    /// The first record for which `before` is false (binary search; the records are sorted
    /// by it).
    pub(crate) fn partition_point(&self, before: impl Fn(&DebugEntry) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(|e| before(&e)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Records `range` (empty when out of range).
    pub(crate) fn slice(&self, range: Range<usize>) -> DebugRecs<'v> {
        let bytes = range
            .start
            .checked_mul(DEBUG_SIZE)
            .zip(range.end.checked_mul(DEBUG_SIZE));
        DebugRecs {
            recs: bytes.and_then(|(a, b)| self.recs.get(a..b)).unwrap_or(&[]),
        }
    }

    /// Record `k`'s definition alone (`k` in range).
    fn def_of(&self, k: usize) -> Option<u32> {
        let r = record(self.recs, DEBUG_SIZE, k)?;
        Some(u32_at(r, offset_of!(ArchivedDebugRec, def)))
    }

    /// The records of definition `def`: the first found by a binary search over the records'
    /// definitions alone, the rest (a definition has a few) by reading on.
    pub(crate) fn of_def(&self, def: u32) -> DebugRecs<'v> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.def_of(mid).is_some_and(|d| d < def) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut end = lo;
        while self.def_of(end) == Some(def) {
            end += 1;
        }
        self.slice(lo..end)
    }
}

/// The debug section read in place: its records and its own string table.
#[derive(Clone, Copy, Default)]
pub(crate) struct DebugBytes<'v> {
    pub entries: DebugRecs<'v>,
    pub strings: FileStrings<'v>,
}

impl<'v> DebugBytes<'v> {
    /// The debug section's archive (`DebugTable { strings, entries }`).
    pub(crate) fn new(archive: &'v [u8]) -> DebugBytes<'v> {
        let root = root_of::<ArchivedDebugTable>(archive);
        DebugBytes {
            entries: DebugRecs {
                recs: vec_at(
                    archive,
                    root + offset_of!(ArchivedDebugTable, entries),
                    DEBUG_SIZE,
                ),
            },
            strings: strings_at(archive, root + offset_of!(ArchivedDebugTable, strings)),
        }
    }

    /// Whether this reading is the table rkyv checked.
    pub(crate) fn is(&self, t: &ArchivedDebugTable) -> bool {
        same_array(self.entries.recs, t.entries.as_slice())
            && same_array(self.strings.ends, t.strings.ends.as_slice())
            && same_array(self.strings.data, t.strings.data.as_slice())
    }

    /// The name hint of definition `def` (the first `name_hint` record of its local 0).
    pub(crate) fn def_name(&self, def: u32) -> Option<&'v str> {
        let recs = self.entries;
        let at = recs.partition_point(|e| (e.def, e.local) < (def, 0));
        (at..recs.len())
            .map_while(|k| recs.get(k).filter(|e| e.def == def && e.local == 0))
            .find(|e| e.kind == crate::schema::DEBUG_NAME)
            .and_then(|e| self.strings.str_at(e.text))
    }
}

/// One record of the symbols section.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SymbolEntry {
    pub name: u32,
    pub role: u8,
    pub def_opcode: u16,
    pub def: u32,
    pub signature: u32,
    pub hash: [u8; 32],
}

const SYMBOL_SIZE: usize = size_of::<ArchivedSymbolRec>();

/// The symbols section read in place.
#[derive(Clone, Copy)]
pub(crate) struct SymbolBytes<'v> {
    recs: &'v [u8],
}

impl<'v> SymbolBytes<'v> {
    /// The symbols section's archive (`SymbolTable { symbols }`).
    pub(crate) fn new(archive: &'v [u8]) -> SymbolBytes<'v> {
        let root = root_of::<ArchivedSymbolTable>(archive);
        SymbolBytes {
            recs: vec_at(
                archive,
                root + offset_of!(ArchivedSymbolTable, symbols),
                SYMBOL_SIZE,
            ),
        }
    }

    /// Whether this reading is the table rkyv checked.
    pub(crate) fn is(&self, t: &ArchivedSymbolTable) -> bool {
        same_array(self.recs, t.symbols.as_slice())
    }

    /// Number of symbols.
    pub(crate) fn len(&self) -> usize {
        self.recs.len() / SYMBOL_SIZE
    }

    /// Symbol `k`.
    pub(crate) fn get(&self, k: usize) -> Option<SymbolEntry> {
        let r = record(self.recs, SYMBOL_SIZE, k)?;
        Some(SymbolEntry {
            name: u32_at(r, offset_of!(ArchivedSymbolRec, name)),
            role: u8_at(r, offset_of!(ArchivedSymbolRec, role)),
            def_opcode: u16_at(r, offset_of!(ArchivedSymbolRec, def_opcode)),
            def: u32_at(r, offset_of!(ArchivedSymbolRec, def)),
            signature: u32_at(r, offset_of!(ArchivedSymbolRec, signature)),
            hash: hash_at(r, offset_of!(ArchivedSymbolRec, hash)),
        })
    }

    /// Every symbol, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = SymbolEntry> + 'v {
        let s = *self;
        (0..self.len()).filter_map(move |k| s.get(k))
    }
}
