//! The lazy, zero-copy reader: [`ModuleView`] maps (or holds) the bytes and checks only the
//! header and the section directory when opened (O(number of sections), whatever the module's
//! size). Every section is validated the first time it is used (the result is cached): the
//! strings, the symbols (1.x, 2.x), the definition index, the pool, the root and the debug
//! info in full (section hash, bytecheck or the compact body's check, every index), each
//! definition on its own (body hash, bytecheck in 1.x/2.x or the compact body's check in
//! 3.x, every index). A symbol lookup by name reads the fixed-layout symbol index in place: the
//! first one checks its hash and every record in one linear pass, then each binary search
//! touches O(log n) records; its agreement with the symbol table is checked by
//! `validate_all`, and whoever acts on a record checks it against its definition
//! ([`ModuleView::check_def_symbols`]).

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use byteorder::{ByteOrder, LittleEndian as LE};
use irkit_core::{MAX_NESTING, Opcode};
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor::BoxedError;
use rkyv::util::AlignedVec;

use crate::compact::Compact;
use crate::defview::{DefView, PoolView};
use crate::error::{Location, ReadCause, ReadError};
use crate::flat::FileStrings;
use crate::flat::Flat;
use crate::flat::Limits;
use crate::hash::hex;
use crate::header::{self, DirEntry, Header, SectionKind};
use crate::placed::{ArchivedFlat, DebugBytes, DefEntries, FlatBytes};
use crate::schema::{
    ArchivedBody, ArchivedDebugTable, ArchivedDefIndex, ArchivedPoolTable, ArchivedStringTable,
    DefMeta,
};
use crate::validate::{self, Ctx};
use irkit_io::Mapping;

mod hashes;
mod symbols;

enum Backing {
    Mmap(Mapping),
    Aligned(AlignedVec<16>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mmap(m) => m.bytes(),
            Backing::Aligned(v) => v,
        }
    }

    /// Maps `file`, or reads it into memory when the truncation guard has no slot left.
    fn of_file(file: &std::fs::File) -> std::io::Result<Backing> {
        if let Some(m) = Mapping::new(file)? {
            return Ok(Backing::Mmap(m));
        }
        let mut v = AlignedVec::<16>::new();
        let mut chunk = vec![0u8; 1 << 16];
        let mut r = file;
        loop {
            let n = std::io::Read::read(&mut r, &mut chunk)?;
            if n == 0 {
                return Ok(Backing::Aligned(v));
            }
            v.extend_from_slice(&chunk[..n]);
        }
    }
}

type Cache = OnceLock<Result<(), Box<ReadError>>>;

/// The validated string table: its count and where rkyv put its two arrays in the file.
#[derive(Clone, Debug, Default)]
struct StrState {
    count: u32,
    ends: Range<usize>,
    data: Range<usize>,
}

/// The validated definitions directory: where its entries lie (read in place, 88 bytes per
/// definition), with one validation cache per definition.
struct DefTable {
    /// Where the index's entries lie in the file (read in place, `placed::DefEntries`).
    entries: Range<usize>,
    /// Per definition: its validation on first touch.
    ok: Vec<Cache>,
    /// Per definition: its agreement with the symbol index (`check_def_symbols`).
    symbols_ok: Vec<Cache>,
}

type Lazy<T> = OnceLock<Result<T, Box<ReadError>>>;

/// A symbol-index record by the definition it names: (definition, record number).
type DefRecord = (u32, u32);

/// A module file opened for reading in place.
pub struct ModuleView {
    file: Arc<str>,
    data: Backing,
    header: Header,
    entries: Vec<DirEntry>,
    strings: Range<usize>,
    symbols: Range<usize>,
    pool: Range<usize>,
    def_index: Range<usize>,
    defs: Range<usize>,
    root: Range<usize>,
    debug: Option<Range<usize>>,
    symbol_index: Option<Range<usize>>,
    /// The definition count recorded in the definition index's root (read at open, not
    /// validated; bounded by the section's length).
    def_count: u32,
    strings_st: Lazy<StrState>,
    symbols_ok: Cache,
    defs_st: Lazy<DefTable>,
    pool_ok: Cache,
    root_ok: Cache,
    debug_ok: Cache,
    /// The validated symbol index's records by definition, sorted.
    symbol_index_st: Lazy<Vec<DefRecord>>,
}

/// The role of a symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolRole {
    /// `export("name")`: provided by this module.
    Export,
    /// `import("name")`: provided by another module.
    Import,
    /// `extern("name")`: a C-ABI symbol.
    Extern,
    /// A role code this reader does not know (from a newer minor version).
    Other(u8),
}

impl SymbolRole {
    fn from_code(c: u8) -> SymbolRole {
        match c {
            0 => SymbolRole::Export,
            1 => SymbolRole::Import,
            2 => SymbolRole::Extern,
            c => SymbolRole::Other(c),
        }
    }
}

/// One entry of the symbol table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'v> {
    /// The exported, imported or extern name.
    pub name: &'v str,
    /// Its role.
    pub role: SymbolRole,
    /// The definition's opcode (`func`, `global_var`, `global_const`, ...).
    pub kind: Opcode,
    /// The definition's index.
    pub def: u32,
    /// The pool index of the definition's type (a `fn` type for functions).
    pub signature: Option<u32>,
    /// The definition's content hash.
    pub hash: [u8; 32],
}

/// One section, as `ir-info` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionInfo {
    /// The kind's name (`kind#N` when unknown).
    pub name: String,
    /// The kind code.
    pub kind: SectionKind,
    /// Whether a reader may skip it.
    pub optional: bool,
    /// Whether this reader knows it (unknown optional sections are skipped).
    pub known: bool,
    /// Offset in the file.
    pub offset: u64,
    /// Length in bytes.
    pub size: u64,
    /// blake3 of its bytes, lower-case hex.
    pub hash: String,
}

/// One definition, as `ir-info` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefInfo {
    /// Its index.
    pub index: u32,
    /// Its opcode.
    pub kind: Opcode,
    /// Its name hint from the debug section, if any (validates the debug section).
    pub name: Option<String>,
    /// Number of instructions in its archive.
    pub inst_count: u32,
    /// Size of its archive in bytes.
    pub size: u64,
    /// Its content hash.
    pub content_hash: [u8; 32],
}

/// rkyv's checked access (bytecheck) to an archive: run once per archive, by the validation
/// that the view caches; afterwards the archive is read by hand ([`crate::placed`]).
pub(crate) fn access<'a, T>(bytes: &'a [u8], cx: &Ctx<'_>) -> Result<&'a T, ReadError>
where
    T: rkyv::Portable + for<'b> CheckBytes<rkyv::api::high::HighValidator<'b, BoxedError>>,
{
    rkyv::access::<T, BoxedError>(bytes)
        .map_err(|e| cx.err(ReadCause::Archive(without_addresses(&e.to_string(), bytes))))
}

/// rkyv's validation messages name memory addresses (`ptr 0x00007f3a…`), which differ from run
/// to run: an address inside the archive becomes its offset there (`archive offset 24`), any
/// other one `an address outside the archive`, so that messages are deterministic.
fn without_addresses(message: &str, archive: &[u8]) -> String {
    let base = archive.as_ptr() as usize;
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(k) = rest.find("0x") {
        out.push_str(&rest[..k]);
        let digits = rest[k + 2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(rest.len() - k - 2);
        let hex = &rest[k + 2..k + 2 + digits];
        match usize::from_str_radix(hex, 16) {
            Ok(a) if digits >= 8 && a >= base && a - base <= archive.len() => {
                out.push_str(&format!("archive offset {}", a - base));
            }
            Ok(_) if digits >= 8 => out.push_str("an address outside the archive"),
            _ => out.push_str(&rest[k..k + 2 + digits]),
        }
        rest = &rest[k + 2 + digits..];
    }
    out.push_str(rest);
    out
}

fn cached(cache: &Cache, f: impl FnOnce() -> Result<(), ReadError>) -> Result<(), ReadError> {
    match cache.get_or_init(|| f().map_err(Box::new)) {
        Ok(()) => Ok(()),
        Err(e) => Err((**e).clone()),
    }
}

fn lazy<T>(cell: &Lazy<T>, f: impl FnOnce() -> Result<T, ReadError>) -> Result<&T, ReadError> {
    match cell.get_or_init(|| f().map_err(Box::new)) {
        Ok(v) => Ok(v),
        Err(e) => Err((**e).clone()),
    }
}

/// The bytes definition index entry `entry` names in the definitions section `section`,
/// bounds-checked (`None` when they lie outside it).
fn body_in<'s>(section: &'s [u8], entry: &DefMeta) -> Option<&'s [u8]> {
    let at = usize::try_from(entry.offset).ok()?;
    let len = usize::try_from(entry.length).ok()?;
    section.get(at..at.checked_add(len)?)
}

/// Size of an archived `DefEntry`.
const DEF_ENTRY_SIZE: u64 = 88;

/// The element count of the `Vec` at the start of an rkyv root that is `root_size` bytes
/// long and sits at the end of `section` (unvalidated; `None` when the section is too short).
fn raw_root_vec_len(section: &[u8], root_size: usize) -> Option<u32> {
    let at = section.len().checked_sub(root_size)?;
    let b = section.get(at + 4..at + 8)?;
    Some(LE::read_u32(b))
}

impl ModuleView {
    /// Maps the file at `path` and checks its header and section directory (nothing else:
    /// every section is validated the first time it is used).
    pub fn open(path: impl AsRef<Path>) -> Result<ModuleView, ReadError> {
        let path = path.as_ref();
        let file: Arc<str> = path.display().to_string().into();
        let io = |e: std::io::Error| {
            ReadError::new(&file, Location::Header, ReadCause::Io(e.to_string()))
        };
        let f = std::fs::File::open(path).map_err(io)?;
        let data = Backing::of_file(&f).map_err(io)?;
        ModuleView::new(file, data)
    }

    /// Maps an already opened file (named `name` in errors) and checks its header and section
    /// directory, as [`ModuleView::open`] does. For callers that open a path once and decide
    /// from its first bytes how to read it.
    pub fn from_file(file: &std::fs::File, name: &str) -> Result<ModuleView, ReadError> {
        let file_name: Arc<str> = name.into();
        let data = Backing::of_file(file).map_err(|e| {
            ReadError::new(&file_name, Location::Header, ReadCause::Io(e.to_string()))
        })?;
        ModuleView::new(file_name, data)
    }

    /// Reads a module held in memory (e.g. from stdin); the bytes are copied once into a
    /// 16-byte aligned buffer. Errors name the file `<memory>`.
    pub fn from_bytes(bytes: &[u8]) -> Result<ModuleView, ReadError> {
        ModuleView::from_bytes_named(bytes, "<memory>")
    }

    /// Like [`ModuleView::from_bytes`], naming the source `name` in errors.
    pub fn from_bytes_named(bytes: &[u8], name: &str) -> Result<ModuleView, ReadError> {
        let mut v = AlignedVec::<16>::with_capacity(bytes.len());
        v.extend_from_slice(bytes);
        ModuleView::new(name.into(), Backing::Aligned(v))
    }

    /// Header and directory only: O(number of sections), whatever the module's size.
    fn new(file: Arc<str>, data: Backing) -> Result<ModuleView, ReadError> {
        let bytes = data.bytes();
        let (header, entries) = header::parse(bytes, &file)?;
        let range_of = |kind: SectionKind| {
            entries
                .iter()
                .find(|e| e.kind == kind)
                .map(|e| e.offset as usize..(e.offset + e.length) as usize)
        };
        // `header::parse` guarantees every required known kind is present.
        let req = |kind| range_of(kind).unwrap_or(0..0);
        let def_index = req(SectionKind::DEF_INDEX);
        let def_count = raw_root_vec_len(&bytes[def_index.clone()], 8)
            .filter(|&n| n as u64 * DEF_ENTRY_SIZE <= def_index.len() as u64)
            .unwrap_or(0);
        Ok(ModuleView {
            strings: req(SectionKind::STRINGS),
            symbols: req(SectionKind::SYMBOLS),
            pool: req(SectionKind::POOL),
            def_index,
            defs: req(SectionKind::DEFINITIONS),
            root: req(SectionKind::ROOT),
            debug: range_of(SectionKind::DEBUG),
            symbol_index: range_of(SectionKind::SYMBOL_INDEX),
            def_count,
            file,
            data,
            header,
            entries,
            strings_st: OnceLock::new(),
            symbols_ok: OnceLock::new(),
            defs_st: OnceLock::new(),
            pool_ok: OnceLock::new(),
            root_ok: OnceLock::new(),
            debug_ok: OnceLock::new(),
            symbol_index_st: OnceLock::new(),
        })
    }

    pub(crate) fn cx(&self, kind: SectionKind) -> Ctx<'_> {
        Ctx {
            file: &self.file,
            loc: Location::Section(kind.name()),
        }
    }

    fn entry(&self, kind: SectionKind) -> Option<&DirEntry> {
        self.entries.iter().find(|e| e.kind == kind)
    }

    fn check_section_hash(&self, kind: SectionKind) -> Result<(), ReadError> {
        if let Some(e) = self.entry(kind) {
            let bytes = &self.bytes()[e.offset as usize..(e.offset + e.length) as usize];
            if blake3::hash(bytes).as_bytes() != &e.hash {
                return Err(self.cx(kind).err(ReadCause::HashMismatch));
            }
        }
        Ok(())
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        self.data.bytes()
    }

    /// Fails if the file shrank under its mapping while it was read (only detected under
    /// [`guard_truncation`](crate::guard_truncation)): a reader that read from this view
    /// calls it before it trusts, or hands out, what it read.
    pub fn check_unchanged(&self) -> Result<(), ReadError> {
        match &self.data {
            Backing::Mmap(m) if m.changed() => Err(ReadError::new(
                &self.file,
                Location::Header,
                ReadCause::Changed,
            )),
            _ => Ok(()),
        }
    }

    /// The file's path as given, or `<memory>`.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The file's format version (major, minor).
    pub fn version(&self) -> (u16, u16) {
        (self.header.major, self.header.minor)
    }

    /// The fixed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Every section of the directory, in directory order (unknown ones included).
    pub fn sections(&self) -> Vec<SectionInfo> {
        self.entries
            .iter()
            .map(|e| SectionInfo {
                name: e.kind.name(),
                kind: e.kind,
                optional: e.is_optional(),
                known: e.kind.is_known(),
                offset: e.offset,
                size: e.length,
                hash: hex(&e.hash),
            })
            .collect()
    }

    /// The module content hash: blake3 over the directory hashes of every content section
    /// (all known sections but debug and the derived symbol index), so name hints and
    /// locations do not change it.
    pub fn content_hash(&self) -> [u8; 32] {
        crate::hash::content_hash_of(&self.entries)
    }

    /// Whether the file has a symbol-index section (every file written by this version has
    /// one; lookups in files without it validate the whole symbol table once).
    pub fn has_symbol_index(&self) -> bool {
        self.symbol_index.is_some()
    }

    /// The string table, validated on first use (section hash, bytecheck, ends, UTF-8).
    fn strings_state(&self) -> Result<&StrState, ReadError> {
        lazy(&self.strings_st, || {
            self.check_section_hash(SectionKind::STRINGS)?;
            let cx = self.cx(SectionKind::STRINGS);
            let table: &ArchivedStringTable = access(&self.bytes()[self.strings.clone()], &cx)?;
            let count = validate::strings(table, &cx)?;
            // Where rkyv put the two arrays, as offsets into the file.
            let base = self.bytes().as_ptr() as usize;
            let ends = table.ends.as_slice();
            let ends_at = ends.as_ptr() as usize - base;
            let data_at = table.data.as_ptr() as usize - base;
            Ok(StrState {
                count,
                ends: ends_at..ends_at + ends.len() * 4,
                data: data_at..data_at + table.data.len(),
            })
        })
    }

    /// Number of strings in the string table (validates it on first use; 0 when it is
    /// invalid, see [`ModuleView::try_string_count`]).
    pub fn string_count(&self) -> u32 {
        self.strings_state().map_or(0, |s| s.count)
    }

    /// Number of strings in the string table, or why the table is invalid.
    pub fn try_string_count(&self) -> Result<u32, ReadError> {
        self.strings_state().map(|s| s.count)
    }

    /// String `i` of the string table (validates the table on first use).
    pub fn string(&self, i: u32) -> Option<&str> {
        self.file_strings().str_at(i)
    }

    /// The validated string table (empty when it is invalid: everything that reads strings
    /// validated it first and reports its error).
    pub(crate) fn file_strings(&self) -> FileStrings<'_> {
        let Ok(st) = self.strings_state() else {
            return FileStrings::default();
        };
        let b = self.bytes();
        FileStrings {
            ends: b.get(st.ends.clone()).unwrap_or(&[]),
            data: b.get(st.data.clone()).unwrap_or(&[]),
        }
    }

    /// The definitions directory, validated on first use (section hash, bytecheck, every
    /// archive's bounds within the definitions section).
    fn def_table(&self) -> Result<&DefTable, ReadError> {
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
    fn def_entries(&self) -> Result<DefEntries<'_>, ReadError> {
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
    fn body_limits(&self, pool_len: u32, base_depth: u32) -> Limits {
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
    fn def_hashed(
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
    fn check_body(&self, bytes: &[u8], lim: &Limits, cx: &Ctx<'_>) -> Result<(), ReadError> {
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
    fn check_padding(&self) -> Result<(), ReadError> {
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
    fn check_debug_positions(&self) -> Result<(), ReadError> {
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

/// Refuses an archive whose hand reading ([`crate::placed`]) is not what rkyv checked.
fn placed_as_checked(same: bool, cx: &Ctx<'_>) -> Result<(), ReadError> {
    if same {
        Ok(())
    } else {
        Err(cx.bad("the archive's arrays are not where spec/format.md §2 puts them".into()))
    }
}

/// An opcode's text name, or `#id` for an opaque one.
fn op_name(op: Opcode) -> String {
    op.name()
        .map_or_else(|| format!("#{:#06x}", op.0), str::to_string)
}
