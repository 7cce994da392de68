//! The lazy, zero-copy reader: [`ModuleView`] maps (or holds) the bytes, checks the header,
//! the directory, the strings, the symbols and the definitions directory when opened, and
//! validates the pool, each definition, the root and the debug info the first time they are
//! used (the result is cached).

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use irkit_core::Opcode;
use rkyv::bytecheck::CheckBytes;
use rkyv::rancor::BoxedError;
use rkyv::util::AlignedVec;

use crate::defview::{DefView, PoolView};
use crate::error::{Location, ReadCause, ReadError};
use crate::hash::{FileStrings, Strings, hex};
use crate::header::{self, DirEntry, Header, SectionKind};
use crate::schema::{
    ArchivedBody, ArchivedDebugTable, ArchivedDefIndex, ArchivedPoolTable, ArchivedStringTable,
    ArchivedSymbolRec, ArchivedSymbolTable, DEBUG_NAME, REF_NONE,
};
use crate::validate::{self, Ctx, Limits};

enum Backing {
    Mmap(memmap2::Mmap),
    Aligned(AlignedVec<16>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mmap(m) => m,
            Backing::Aligned(v) => v,
        }
    }
}

type Cache = OnceLock<Result<(), Box<ReadError>>>;

/// A definitions-directory entry, copied out at open (88 bytes per definition).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DefMeta {
    pub offset: u64,
    pub length: u64,
    pub inst_count: u32,
    pub opcode: u16,
    pub body_hash: [u8; 32],
    pub content_hash: [u8; 32],
}

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
    string_count: u32,
    def_count: u32,
    /// File byte ranges of the validated string table's ends and data.
    string_ends: Range<usize>,
    string_data: Range<usize>,
    defs_meta: Vec<DefMeta>,
    pool_ok: Cache,
    root_ok: Cache,
    debug_ok: Cache,
    def_ok: Vec<Cache>,
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

pub(crate) fn access<'a, T>(bytes: &'a [u8], cx: &Ctx<'_>) -> Result<&'a T, ReadError>
where
    T: rkyv::Portable + for<'b> CheckBytes<rkyv::api::high::HighValidator<'b, BoxedError>>,
{
    rkyv::access::<T, BoxedError>(bytes).map_err(|e| cx.err(ReadCause::Archive(e.to_string())))
}

fn cached(cache: &Cache, f: impl FnOnce() -> Result<(), ReadError>) -> Result<(), ReadError> {
    match cache.get_or_init(|| f().map_err(Box::new)) {
        Ok(()) => Ok(()),
        Err(e) => Err((**e).clone()),
    }
}

impl ModuleView {
    /// Maps the file at `path` and checks its header, directory, strings, symbols and
    /// definitions directory.
    pub fn open(path: impl AsRef<Path>) -> Result<ModuleView, ReadError> {
        let path = path.as_ref();
        let file: Arc<str> = path.display().to_string().into();
        let io = |e: std::io::Error| {
            ReadError::new(&file, Location::Header, ReadCause::Io(e.to_string()))
        };
        let f = std::fs::File::open(path).map_err(io)?;
        let map = map_file(&f).map_err(io)?;
        ModuleView::new(file, Backing::Mmap(map))
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
        let mut view = ModuleView {
            strings: req(SectionKind::STRINGS),
            symbols: req(SectionKind::SYMBOLS),
            pool: req(SectionKind::POOL),
            def_index: req(SectionKind::DEF_INDEX),
            defs: req(SectionKind::DEFINITIONS),
            root: req(SectionKind::ROOT),
            debug: range_of(SectionKind::DEBUG),
            file,
            data,
            header,
            entries,
            string_count: 0,
            def_count: 0,
            string_ends: 0..0,
            string_data: 0..0,
            defs_meta: Vec::new(),
            pool_ok: OnceLock::new(),
            root_ok: OnceLock::new(),
            debug_ok: OnceLock::new(),
            def_ok: Vec::new(),
        };
        view.check_section_hash(SectionKind::STRINGS)?;
        view.check_section_hash(SectionKind::SYMBOLS)?;
        view.check_section_hash(SectionKind::DEF_INDEX)?;
        let cx = view.cx(SectionKind::STRINGS);
        let (count, ends, data) = {
            let table = view.strings_archive()?;
            let count = validate::strings(table, &cx)?;
            // Where rkyv put the two arrays, as offsets into the file.
            let base = view.bytes().as_ptr() as usize;
            let ends = table.ends.as_slice();
            let ends_at = ends.as_ptr() as usize - base;
            let data_at = table.data.as_ptr() as usize - base;
            (
                count,
                ends_at..ends_at + ends.len() * 4,
                data_at..data_at + table.data.len(),
            )
        };
        view.string_count = count;
        view.string_ends = ends;
        view.string_data = data;
        let cx = view.cx(SectionKind::DEF_INDEX);
        let index = view.def_index_archive()?;
        let def_count = validate::def_index(index, view.defs.len() as u64, &cx)?;
        let defs_meta = index
            .defs
            .iter()
            .map(|d| DefMeta {
                offset: d.offset.to_native(),
                length: d.length.to_native(),
                inst_count: d.inst_count.to_native(),
                opcode: d.opcode.to_native(),
                body_hash: d.body_hash,
                content_hash: d.content_hash,
            })
            .collect();
        view.def_count = def_count;
        view.defs_meta = defs_meta;
        let cx = view.cx(SectionKind::SYMBOLS);
        validate::symbols(
            view.symbols_archive()?,
            &view.file_strings(),
            view.string_count,
            view.def_count,
            &cx,
        )?;
        view.def_ok = (0..view.def_count).map(|_| OnceLock::new()).collect();
        Ok(view)
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
    /// (all known sections but debug), so name hints and locations do not change it.
    pub fn content_hash(&self) -> [u8; 32] {
        crate::write::content_hash_of(&self.entries)
    }

    pub(crate) fn strings_archive(&self) -> Result<&ArchivedStringTable, ReadError> {
        access(
            &self.bytes()[self.strings.clone()],
            &self.cx(SectionKind::STRINGS),
        )
    }

    fn symbols_archive(&self) -> Result<&ArchivedSymbolTable, ReadError> {
        access(
            &self.bytes()[self.symbols.clone()],
            &self.cx(SectionKind::SYMBOLS),
        )
    }

    pub(crate) fn def_index_archive(&self) -> Result<&ArchivedDefIndex, ReadError> {
        access(
            &self.bytes()[self.def_index.clone()],
            &self.cx(SectionKind::DEF_INDEX),
        )
    }

    /// Number of strings in the string table.
    pub fn string_count(&self) -> u32 {
        self.string_count
    }

    /// String `i` of the string table.
    pub fn string(&self, i: u32) -> Option<&str> {
        self.file_strings().str_at(i)
    }

    pub(crate) fn file_strings(&self) -> FileStrings<'_> {
        let b = self.bytes();
        FileStrings {
            ends: b.get(self.string_ends.clone()).unwrap_or(&[]),
            data: b.get(self.string_data.clone()).unwrap_or(&[]),
        }
    }

    pub(crate) fn def_meta(&self, i: u32) -> Option<&DefMeta> {
        self.defs_meta.get(i as usize)
    }

    /// Number of top-level definitions.
    pub fn def_count(&self) -> u32 {
        self.def_count
    }

    fn symbol_of<'v>(&'v self, strings: FileStrings<'v>, s: &ArchivedSymbolRec) -> Symbol<'v> {
        let sig = s.signature.to_native();
        Symbol {
            name: strings.str_at(s.name.to_native()).unwrap_or(""),
            role: SymbolRole::from_code(s.role),
            kind: Opcode(s.def_opcode.to_native()),
            def: s.def.to_native(),
            signature: (sig != REF_NONE).then_some(sig),
            hash: s.hash,
        }
    }

    /// The symbol table, sorted by name.
    pub fn symbols(&self) -> Vec<Symbol<'_>> {
        let strings = self.file_strings();
        let Ok(t) = self.symbols_archive() else {
            return Vec::new();
        };
        t.symbols
            .iter()
            .map(|s| self.symbol_of(strings, s))
            .collect()
    }

    /// Every symbol named `name` (binary search; usually one).
    pub fn find_symbols(&self, name: &str) -> Vec<Symbol<'_>> {
        let strings = self.file_strings();
        let Ok(t) = self.symbols_archive() else {
            return Vec::new();
        };
        let syms = t.symbols.as_slice();
        let name_of = |s: &ArchivedSymbolRec| strings.str_at(s.name.to_native()).unwrap_or("");
        let start = syms.partition_point(|s| name_of(s).as_bytes() < name.as_bytes());
        syms[start..]
            .iter()
            .take_while(|s| name_of(s) == name)
            .map(|s| self.symbol_of(strings, s))
            .collect()
    }

    /// The definition exported as `name`, if any.
    pub fn find_export(&self, name: &str) -> Option<Symbol<'_>> {
        self.find_symbols(name)
            .into_iter()
            .find(|s| s.role == SymbolRole::Export)
    }

    /// Size, hash and kind of definition `i` (no validation of its archive).
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

    /// The name hint of definition `i` from the debug section (`None` without debug info,
    /// or when the debug section is invalid).
    pub fn def_name(&self, i: u32) -> Option<&str> {
        let dbg = self.debug_archive().ok()??;
        let entries = dbg.entries.as_slice();
        let at = entries.partition_point(|e| (e.def.to_native(), e.local.to_native()) < (i, 0));
        entries[at..]
            .iter()
            .take_while(|e| e.def.to_native() == i && e.local.to_native() == 0)
            .find(|e| e.kind == DEBUG_NAME)
            .and_then(|e| dbg.strings.get_str(e.text.to_native()))
    }

    /// The pool, validated on first use (hash, structure, every index, symbol signatures).
    pub fn pool(&self) -> Result<PoolView<'_>, ReadError> {
        let cx = self.cx(SectionKind::POOL);
        cached(&self.pool_ok, || {
            self.check_section_hash(SectionKind::POOL)?;
            let pool: &ArchivedPoolTable = access(&self.bytes()[self.pool.clone()], &cx)?;
            let lim = Limits {
                pool_len: pool.entries.len() as u32,
                def_count: self.def_count,
                string_count: self.string_count,
                is_pool: true,
            };
            validate::flat(pool, &lim, &cx)?;
            let scx = self.cx(SectionKind::SYMBOLS);
            for s in self.symbols_archive()?.symbols.iter() {
                let sig = s.signature.to_native();
                if sig != REF_NONE && sig as usize >= pool.entries.len() {
                    return Err(scx.err(ReadCause::IndexOutOfRange {
                        what: "signature pool index",
                        index: sig as u64,
                        len: pool.entries.len() as u64,
                    }));
                }
            }
            Ok(())
        })?;
        let pool = access(&self.bytes()[self.pool.clone()], &cx)?;
        Ok(PoolView::new(self, pool))
    }

    fn body_limits(&self, pool_len: u32) -> Limits {
        Limits {
            pool_len,
            def_count: self.def_count,
            string_count: self.string_count,
            is_pool: false,
        }
    }

    /// Definition `i`, validated the first time it is touched (its archive's hash, rkyv's
    /// check, then every index in it), then read in place.
    pub fn def(&self, i: u32) -> Result<DefView<'_>, ReadError> {
        let cx = Ctx {
            file: &self.file,
            loc: Location::Definition(i),
        };
        let Some(cache) = self.def_ok.get(i as usize) else {
            return Err(cx.err(ReadCause::IndexOutOfRange {
                what: "definition index",
                index: i as u64,
                len: self.def_count as u64,
            }));
        };
        let entry = self.defs_meta[i as usize];
        let start = self.defs.start + entry.offset as usize;
        let bytes = &self.bytes()[start..start + entry.length as usize];
        cached(cache, || {
            if blake3::hash(bytes).as_bytes() != &entry.body_hash {
                return Err(cx.err(ReadCause::HashMismatch));
            }
            let pool_len = self.pool()?.len();
            let body: &ArchivedBody = access(bytes, &cx)?;
            if body.insts.len() != entry.inst_count as usize {
                return Err(cx.bad(format!(
                    "{} instructions, the directory says {}",
                    body.insts.len(),
                    entry.inst_count
                )));
            }
            validate::flat(body, &self.body_limits(pool_len), &cx)
        })?;
        let body = access(bytes, &cx)?;
        Ok(DefView::new(self, Some(i), body, entry.content_hash))
    }

    /// The root `module` instruction with its decorations, validated on first use.
    pub fn root(&self) -> Result<DefView<'_>, ReadError> {
        let cx = self.cx(SectionKind::ROOT);
        let bytes = &self.bytes()[self.root.clone()];
        cached(&self.root_ok, || {
            self.check_section_hash(SectionKind::ROOT)?;
            let pool_len = self.pool()?.len();
            let body: &ArchivedBody = access(bytes, &cx)?;
            validate::flat(body, &self.body_limits(pool_len), &cx)
        })?;
        Ok(DefView::new(self, None, access(bytes, &cx)?, [0; 32]))
    }

    /// The debug section, validated on first use; `None` when the file has none.
    pub(crate) fn debug_archive(&self) -> Result<Option<&ArchivedDebugTable>, ReadError> {
        let Some(range) = self.debug.clone() else {
            return Ok(None);
        };
        let cx = self.cx(SectionKind::DEBUG);
        let bytes = &self.bytes()[range];
        cached(&self.debug_ok, || {
            self.check_section_hash(SectionKind::DEBUG)?;
            let t: &ArchivedDebugTable = access(bytes, &cx)?;
            validate::debug(t, &self.defs_meta, &cx)
        })?;
        access(bytes, &cx).map(Some)
    }

    /// Whether the file has a debug section.
    pub fn has_debug(&self) -> bool {
        self.debug.is_some()
    }

    /// Validates everything: every section hash (unknown optional sections included), the
    /// pool, the root, the debug info, every definition, and recomputes every definition's
    /// content hash and every symbol's hash against the recorded ones.
    pub fn validate_all(&self) -> Result<(), ReadError> {
        for e in &self.entries {
            self.check_section_hash(e.kind)?;
        }
        self.pool()?;
        self.root()?;
        self.debug_archive()?;
        for i in 0..self.def_count {
            self.def(i)?;
        }
        crate::defview::check_content_hashes(self)
    }
}

/// Maps `file` read-only.
#[allow(unsafe_code)]
fn map_file(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: the mapping is read-only and every byte of it is treated as untrusted input:
    // nothing is assumed about its contents, which are checked (bounds, hashes, bytecheck,
    // index ranges) before use. Another process truncating or rewriting the file while it is
    // mapped can still fault or change the bytes under us; writers in this crate never
    // modify a file in place (they write a temporary file and rename it).
    unsafe { memmap2::Mmap::map(file) }
}
