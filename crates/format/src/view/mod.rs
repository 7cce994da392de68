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

mod checks;
mod defs;
mod hashes;
mod symbols;

use defs::*;

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
    /// [`guard_truncation`](irkit_io::guard_truncation)): a reader that read from this view
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
}
