//! The writer: a core [`Module`] to the bytes of a module file, deterministically (the same
//! module always gives the same bytes).

use std::collections::HashMap;
use std::io::{BufWriter, Cursor, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use byteorder::{ByteOrder, LittleEndian as LE};
use irkit_core::verify::Nesting;
use irkit_core::{Inst, Module, Opcode, Payload};
use rayon::prelude::*;
use rkyv::util::AlignedVec;

use crate::compact::{self, Compact};
use crate::error::WriteError;
use crate::header::{
    self, DirEntry, FORMAT_MAJOR, FORMAT_MINOR, Header, SECTION_ALIGN, SECTION_OPTIONAL,
    SectionKind,
};
use crate::schema::{
    Body, DEBUG_LOC, DEBUG_NAME, DEBUG_SCOPE_LIMIT, DEBUG_SCOPED_LOC, DebugRec, DebugTable,
    DefEntry, DefIndex, InstRec, PoolRec, PoolTable, REF_MAX_INDEX, REF_NONE, SYMIX_HEADER,
    SYMIX_RECORD, StringTable, SymbolRec, SymbolTable, TAG_DEF, TAG_LOCAL, TAG_POOL, pack_ref,
    payload_kind,
};
use crate::semantic::{self, FlatGraph, Node};

mod encode;
mod prepare;
mod scan;
mod stream;
mod tables;

use stream::*;
#[cfg(test)]
pub(crate) use stream::{assemble, assemble_version};
use tables::*;

/// Serializes `module` to the bytes of a module file. A module nested deeper than
/// [`irkit_core::MAX_NESTING`] is refused ([`WriteError::TooDeep`]): readers refuse such files.
pub fn write(module: &Module) -> Result<Vec<u8>, WriteError> {
    Ok(write_to(module, Cursor::new(Vec::new()))?.into_inner())
}

/// [`write()`] without the nesting limit (`irkit_format::testing`, for tests only).
#[cfg(any(test, feature = "testing"))]
pub fn write_unlimited(module: &Module) -> Result<Vec<u8>, WriteError> {
    let sink = Writer::new(module).run(Cursor::new(Vec::new()), FORMAT_MAJOR)?;
    Ok(sink.into_inner())
}

/// [`write()`] with every definition walked, then encoded, in two passes over the module: what
/// the one-pass walk-and-encode (`Writer::scan_encode_defs`) must give byte for byte, and
/// error for error (`irkit_format::testing`, for tests only).
#[cfg(any(test, feature = "testing"))]
pub fn write_two_pass(module: &Module) -> Result<Vec<u8>, WriteError> {
    irkit_core::check_nesting(module).map_err(|nesting| WriteError::TooDeep { nesting })?;
    let mut w = Writer::new(module);
    w.two_pass = true;
    Ok(w.run(Cursor::new(Vec::new()), FORMAT_MAJOR)?.into_inner())
}

/// [`write()`] in the layout of an older major version the writer keeps for tests of the
/// readers of older files (`irkit_format::testing`, for tests only): 2 writes 2.1's bytes
/// (rkyv bodies at 16-byte offsets), 3 writes 3.0's (compact bodies, the §3.2 content hash), 4
/// writes 4.0's (the §3.4 content hash).
#[cfg(any(test, feature = "testing"))]
pub fn write_version(module: &Module, major: u16) -> Result<Vec<u8>, WriteError> {
    irkit_core::check_nesting(module).map_err(|nesting| WriteError::TooDeep { nesting })?;
    let sink = Writer::new(module).run(Cursor::new(Vec::new()), major)?;
    Ok(sink.into_inner())
}

/// A module encoded by [`prepare()`], not written yet: everything the file holds, computed (the
/// walks, encodings and hashes, on every core), waiting to be streamed out by
/// [`Prepared::write_to`] or [`Prepared::write_to_path`]. A caller can prepare the bytes while
/// it checks the module, and write them only if the check passes (`ir-link` verifies the
/// linked module meanwhile).
pub struct Prepared {
    major: u16,
    sections: Vec<(SectionKind, u32, Bytes)>,
    bodies: Vec<Flattened>,
    content: Vec<[u8; 32]>,
    opcodes: Vec<u16>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("major", &self.major)
            .field("definitions", &self.bodies.len())
            .finish_non_exhaustive()
    }
}

impl Prepared {
    /// Streams the file into `sink` (positioned at the start of an empty file): the bytes of
    /// [`write()`], as [`write_to`] writes them.
    pub fn write_to<W: Write + Seek>(self, sink: W) -> Result<W, WriteError> {
        let Prepared {
            major,
            sections,
            bodies,
            content,
            opcodes,
        } = self;
        let mut out = Stream::new(sink, sections.len() + 1, major)?;
        let mut index_at = None;
        for (kind, flags, bytes) in sections {
            if kind == SectionKind::DEF_INDEX {
                index_at = Some(out.entries.len());
            }
            out.section(kind, flags, bytes.as_slice())?;
        }
        let mut index = DefIndex::default();
        out.begin(SectionKind::DEFINITIONS, 0)?;
        let start = out.len;
        let mut rest = bodies.into_iter();
        loop {
            let chunk: Vec<Flattened> = rest.by_ref().take(CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            // Each body is freed once encoded; the encodings once written. The body hashes
            // are computed many at a time (`batch`), on every core.
            let laid: Vec<(Bytes, u32)> = chunk
                .into_par_iter()
                .map(|b| {
                    let bytes = match b.laid {
                        Laid::Compact(bytes) => Bytes::Plain(bytes),
                        Laid::Records(body) => body_bytes(&body, major)?,
                    };
                    Ok((bytes, b.count))
                })
                .collect::<Result<_, WriteError>>()?;
            let hashes: Vec<[u8; 32]> = laid
                .par_chunks(crate::batch::LANES)
                .flat_map_iter(|group| {
                    let msgs: Vec<&[u8]> = group.iter().map(|(b, _)| b.as_slice()).collect();
                    crate::batch::hash_all(&msgs)
                })
                .collect();
            let archived = laid
                .into_iter()
                .zip(hashes)
                .map(|((bytes, count), hash)| (Archived { bytes, hash }, count));
            let mut buf = Vec::new();
            for (a, inst_count) in archived {
                let d = index.defs.len();
                // 3.x packs bodies end to end; 2.x put each at a 16-byte offset.
                let at = if major < 3 {
                    out.aligned_len(buf.len() as u64)
                } else {
                    out.len + buf.len() as u64
                };
                buf.resize((at - out.len) as usize, 0);
                index.defs.push(DefEntry {
                    offset: at - start,
                    length: a.bytes.as_slice().len() as u64,
                    inst_count,
                    opcode: opcodes[d],
                    reserved: 0,
                    body_hash: a.hash,
                    content_hash: content[d],
                });
                buf.extend_from_slice(a.bytes.as_slice());
            }
            out.extend(&buf)?;
        }
        out.end()?;
        let bytes = archive(&index)?;
        if let Some(k) = index_at {
            out.rewrite(k, bytes.as_slice())?;
        }
        // The last minor of each older layout the writer keeps for tests: 2.1, 3.0, 4.0.
        let minor = match major {
            FORMAT_MAJOR => FORMAT_MINOR,
            2 => 1,
            _ => 0,
        };
        out.finish(major, minor)
    }

    /// Saves the file at `path` with [`write_to_path`]'s rules (atomically, through a
    /// temporary file renamed over it; a device or FIFO directly).
    pub fn write_to_path(self, path: impl AsRef<Path>) -> Result<(), WriteError> {
        let path = path.as_ref();
        self.stage(path)?.commit().map_err(|source| WriteError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Streams the file for `path` without putting it there yet: into a temporary file beside
    /// it (for a device or FIFO, into memory), which [`Staged::commit`](irkit_io::Staged::commit)
    /// puts in place with [`write_to_path`]'s rules and dropping removes. `ir-link` writes its
    /// output this way while it verifies the linked module, and commits only a module that
    /// verifies.
    pub fn stage(self, path: impl AsRef<Path>) -> Result<irkit_io::Staged, WriteError> {
        let path = path.as_ref();
        let io = |source: std::io::Error| WriteError::Io {
            path: path.display().to_string(),
            source,
        };
        if irkit_io::is_device(path) {
            let bytes = self.write_to(Cursor::new(Vec::new()))?.into_inner();
            return Ok(irkit_io::stage_bytes(path, bytes));
        }
        let mut failed = None;
        let mut prepared = Some(self);
        let staged = irkit_io::stage_with(path, |file| {
            let Some(p) = prepared.take() else {
                return Err(std::io::Error::other("written already"));
            };
            match p.write_to(BufWriter::new(file)) {
                Ok(mut sink) => sink.flush(),
                Err(WriteError::Io { source, .. }) => Err(source),
                Err(e) => {
                    failed = Some(e);
                    Err(std::io::Error::other("not encoded"))
                }
            }
        });
        match (failed, staged) {
            (Some(e), _) => Err(e),
            (None, r) => r.map_err(io),
        }
    }
}

/// The bytes of one body (a definition's or the root's) in the layout of major `major`.
fn body_bytes(body: &Body, major: u16) -> Result<Bytes, WriteError> {
    if major >= 3 {
        Ok(Bytes::Plain(compact::encode(body)?))
    } else {
        archive(body)
    }
}

/// Serializes `module` into `sink` (positioned at the start of an empty file), the same bytes
/// as [`write()`], streamed: every section in file order, then one seek back each for the
/// definition index and for the header and directory, which depend on what follows them. At
/// most `CHUNK` (1024) definitions' archives are held at a time, never the whole file. Returns
/// the sink; an I/O failure is [`WriteError::Io`] with an empty path (the caller knows it).
pub fn write_to<W: Write + Seek>(module: &Module, sink: W) -> Result<W, WriteError> {
    let mut w = Writer::new(module);
    w.limit_nesting = true;
    w.run(sink, FORMAT_MAJOR)
}

/// Serializes `module` and saves it at `path` with [`write_file`](irkit_io::write_file)'s rules:
/// a regular file (or a new one) atomically, streamed into a temporary file in the same
/// directory ([`write_to`]) that is renamed over `path`; a device or a FIFO directly, never
/// replaced.
pub fn write_to_path(module: &Module, path: impl AsRef<Path>) -> Result<(), WriteError> {
    prepare(module, Nesting::Check)?.write_to_path(path)
}

/// Encodes `module` for [`write()`] without writing it yet (see [`Prepared`]): every check
/// of the module, and every error it can cause, happens here. With
/// [`Nesting::Established`] the caller vouches that the module is within the nesting limit
/// (the linker's output is, `spec/linking.md` §5), and it is not walked again to check it; a
/// module over the limit then gives a file that readers refuse.
pub fn prepare(module: &Module, nesting: Nesting) -> Result<Prepared, WriteError> {
    let mut w = Writer::new(module);
    w.limit_nesting = nesting == Nesting::Check;
    w.prepare(FORMAT_MAJOR)
}

/// The instructions a definition's walk makes room for up front ([`Writer::scan`]).
const SCAN_ROOM: usize = 128;

/// How many definitions are archived (on every core) and written at a time.
pub(crate) const CHUNK: usize = 1024;

/// Slot owner markers (definitions are owners `0..n`).
const UNMAPPED: u32 = u32::MAX;
const OWNER_POOL: u32 = u32::MAX - 1;
const OWNER_ROOT: u32 = u32::MAX - 2;
const OWNER_DEBUG: u32 = u32::MAX - 3;

/// The pool values one walk listed lately ([`Writer::name_pool_values`]): a small
/// direct-mapped table, private to the walk, so that a value named by every instruction (a
/// type such as `i32`) is listed about once per walk. A value it forgot is only listed again,
/// which changes nothing (the pool order skips what it placed); the walks on other cores never
/// touch it (marking the values in the shared slot table made the cores take each hot value's
/// cache line from each other, most of the walks' time).
struct Recent([u32; RECENT]);

/// Entries of [`Recent`].
const RECENT: usize = 256;

impl Recent {
    fn new() -> Recent {
        Recent([u32::MAX; RECENT])
    }

    /// Whether `p` was seen lately; remembers it.
    #[inline]
    fn seen(&mut self, p: Inst) -> bool {
        let i = p.index();
        let at = (i ^ (i >> 8)) as usize % RECENT;
        std::mem::replace(&mut self.0[at], i) == i
    }
}

/// How [`Writer::encode_ref`] writes a reference to a pool value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PoolRefs {
    /// By its position in the pool (numbered).
    Numbered,
    /// By its arena index, before the pool is numbered: a body encoded right after its walk,
    /// while its instructions are in the cache, whose `ext` entries are renumbered once the
    /// pool is ([`Writer::number_pool_refs`]). Only pool values are written so; an `ext` entry
    /// is a reference to its value whatever the number it carries, so the body's other bytes
    /// are those a numbered encoding gives.
    Provisional,
}

#[derive(Default)]
struct StrTab<'m> {
    map: HashMap<&'m str, u32>,
    table: StringTable,
}

impl<'m> StrTab<'m> {
    fn intern(&mut self, s: &'m str) -> Result<u32, WriteError> {
        if let Some(&i) = self.map.get(s) {
            return Ok(i);
        }
        let i = self.table.ends.len() as u32;
        self.table.data.extend_from_slice(s.as_bytes());
        let end = u32::try_from(self.table.data.len()).map_err(|_| WriteError::TooLarge {
            what: "bytes of strings",
            count: self.table.data.len() as u64,
            max: u32::MAX as u64,
        })?;
        self.table.ends.push(end);
        self.map.insert(s, i);
        Ok(i)
    }
}

/// One body in the file's layout (`Records` until archived, for the root and 2.x).
enum Laid {
    /// A 3.x compact body (`spec/format.md` §2.4), final but for its string payloads.
    Compact(Vec<u8>),
    /// The flattened records (§2.3 `Body`).
    Records(Body),
}

struct Flattened {
    /// How many instructions it has.
    count: u32,
    laid: Laid,
}

impl Flattened {
    /// The records (a body flattened for the root or a 2.x file).
    fn records(&self) -> Result<&Body, WriteError> {
        match &self.laid {
            Laid::Records(b) => Ok(b),
            Laid::Compact(_) => Err(WriteError::Archive("a compact body has no records".into())),
        }
    }
}

/// What a walk of one tree (a definition, or the root and its decorations) found, before
/// anything is encoded: its instructions in pre-order, the decorations that move to the debug
/// section, and the pool values it names.
#[derive(Default)]
struct Scan<'m> {
    order: Vec<Inst>,
    /// Records of the decorations moved to the debug section, with their texts (interned
    /// later, in this order), in the order the walk met them.
    debug: Vec<(DebugRec, &'m str)>,
    /// The pool values named by the tree's types and operands (those of moved decorations
    /// included), in first-use order; a value may repeat.
    pool_refs: Vec<Inst>,
}

/// A body encoded on its own: its string payloads still hold their texts, not string indices
/// (strings are numbered in first-use order across the module, serially).
struct Encoded<'m> {
    flat: Flattened,
    /// (local instruction, its payload row, its string payload), in local order.
    strings: Vec<(u32, u32, &'m str)>,
}

/// Per arena slot: (owner, index), packed; written once per instruction by the walks, which
/// run on every core.
struct Slots(Vec<AtomicU64>);

const UNMAPPED_SLOT: u64 = (UNMAPPED as u64) << 32;

impl Slots {
    /// Every slot unmapped, written on every core (the table is the first write to most of
    /// its memory: 8 bytes an instruction, which the kernel zeroes page by page).
    fn new(len: usize) -> Slots {
        Slots(
            (0..len)
                .into_par_iter()
                .map(|_| AtomicU64::new(UNMAPPED_SLOT))
                .collect(),
        )
    }

    fn get(&self, i: Inst) -> (u32, u32) {
        let v = self.0[i.idx()].load(Relaxed);
        ((v >> 32) as u32, v as u32)
    }

    fn set(&self, i: Inst, owner: u32, index: u32) {
        self.0[i.idx()].store(((owner as u64) << 32) | index as u64, Relaxed);
    }

    /// Maps an unmapped slot; false if it was mapped already.
    fn claim(&self, i: Inst, owner: u32, index: u32) -> bool {
        let v = ((owner as u64) << 32) | index as u64;
        self.0[i.idx()]
            .compare_exchange(UNMAPPED_SLOT, v, Relaxed, Relaxed)
            .is_ok()
    }

    fn clear(&self) {
        for s in &self.0 {
            s.store(UNMAPPED_SLOT, Relaxed);
        }
    }
}

struct Writer<'m> {
    m: &'m Module,
    /// Refuse a module over the nesting limit (checked while the trees are walked).
    limit_nesting: bool,
    /// Walk every definition, then encode them, even where one pass would do (for tests).
    two_pass: bool,
    slot: Slots,
    strings: StrTab<'m>,
    debug_strings: StrTab<'m>,
    debug: Vec<DebugRec>,
}

fn too_large(what: &'static str, count: usize) -> WriteError {
    WriteError::TooLarge {
        what,
        count: count as u64,
        max: REF_MAX_INDEX as u64 + 1,
    }
}

impl<'m> Writer<'m> {
    fn new(m: &'m Module) -> Writer<'m> {
        Writer {
            m,
            limit_nesting: false,
            two_pass: false,
            slot: Slots::new(m.arena_len()),
            strings: StrTab::default(),
            debug_strings: StrTab::default(),
            debug: Vec::new(),
        }
    }

    /// Writes the file into `sink` in the layout of major `major`: 5 (this version), or 4,
    /// 3 or 2 (4.0's, 3.0's and 2.1's, for tests).
    fn run<W: Write + Seek>(self, sink: W, major: u16) -> Result<W, WriteError> {
        self.prepare(major)?.write_to(sink)
    }
}
