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
    Body, DEBUG_LOC, DEBUG_NAME, DebugRec, DebugTable, DefEntry, DefIndex, InstRec, PoolRec,
    PoolTable, REF_MAX_INDEX, REF_NONE, SYMIX_HEADER, SYMIX_RECORD, StringTable, SymbolRec,
    SymbolTable, TAG_DEF, TAG_LOCAL, TAG_POOL, pack_ref, payload_kind,
};
use crate::semantic::{self, FlatGraph, Node};

/// Serializes `module` to the bytes of a module file. A module nested deeper than
/// [`irkit_core::MAX_NESTING`] is refused ([`WriteError::TooDeep`]): readers refuse such files.
pub fn write(module: &Module) -> Result<Vec<u8>, WriteError> {
    Ok(write_to(module, Cursor::new(Vec::new()))?.into_inner())
}

/// [`write`] without the nesting limit: for [`hostile`](crate::hostile) only.
pub(crate) fn write_unlimited(module: &Module) -> Result<Vec<u8>, WriteError> {
    let sink = Writer::new(module).run(Cursor::new(Vec::new()), FORMAT_MAJOR)?;
    Ok(sink.into_inner())
}

/// [`write()`] in the layout of an older major version the writer keeps for tests of the
/// readers of older files ([`hostile`](crate::hostile) only): 2 writes 2.1's bytes (rkyv
/// bodies at 16-byte offsets), 3 writes 3.0's (compact bodies, the §3.2 content hash), 4
/// writes 4.0's (the §3.4 content hash).
/// [`write`] with every definition walked, then encoded, in two passes over the module: what
/// the one-pass walk-and-encode ([`Writer::scan_encode_defs`]) must give byte for byte, and
/// error for error (`hostile::write_two_pass`, for tests).
pub(crate) fn write_two_pass(module: &Module) -> Result<Vec<u8>, WriteError> {
    irkit_core::check_nesting(module).map_err(|nesting| WriteError::TooDeep { nesting })?;
    let mut w = Writer::new(module);
    w.two_pass = true;
    Ok(w.run(Cursor::new(Vec::new()), FORMAT_MAJOR)?.into_inner())
}

pub(crate) fn write_older(module: &Module, major: u16) -> Result<Vec<u8>, WriteError> {
    irkit_core::check_nesting(module).map_err(|nesting| WriteError::TooDeep { nesting })?;
    let sink = Writer::new(module).run(Cursor::new(Vec::new()), major)?;
    Ok(sink.into_inner())
}

/// A module encoded by [`prepare`], not written yet: everything the file holds, computed (the
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

/// Serializes `module` and saves it at `path` with [`write_file`](crate::write_file)'s rules:
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

    /// Everything but the output itself: the walks, encodings, hashes and sections of
    /// [`Writer::run`], held in memory.
    fn prepare(mut self, major: u16) -> Result<Prepared, WriteError> {
        let m = self.m;
        let defs = m.top_level().to_vec();
        if defs.len() > REF_MAX_INDEX as usize + 1 {
            return Err(too_large("top-level definitions", defs.len()));
        }
        // 1. Walk every definition on every core (numbering its instructions, finding its
        // debug decorations and the pool values it names), then the root; order the pool.
        // In a 3.x layout each definition is encoded right after its walk, its pool
        // references numbered later (`PoolRefs::Provisional`); a module the walks or the
        // encodings refuse is walked and encoded again in two passes, which report the first
        // problem in module order.
        let fused = major >= 3 && !self.two_pass && m.arena_len() <= REF_MAX_INDEX as usize + 1;
        let (nesting, walked) = rayon::join(
            || match self.limit_nesting {
                true => irkit_core::check_nesting(m),
                false => Ok(()),
            },
            || {
                if fused {
                    match self.scan_encode_defs(&defs, major) {
                        Ok(done) => {
                            return Ok(done.into_iter().map(|(s, e)| (s, Some(e))).collect());
                        }
                        // The two passes start from unnumbered slots.
                        Err(_) => self.slot.clear(),
                    }
                }
                self.scan_defs(&defs)
                    .map(|scans| scans.into_iter().map(|s| (s, None)).collect::<Vec<_>>())
            },
        );
        nesting.map_err(|nesting| WriteError::TooDeep { nesting })?;
        let (scans, early): (Vec<Scan<'m>>, Vec<Option<Encoded<'m>>>) = walked?.into_iter().unzip();
        let root_scan = self.scan(m.root(), OWNER_ROOT, true)?;
        let pool = self.pool_order(scans.iter().chain(std::iter::once(&root_scan)))?;
        for (i, &p) in pool.iter().enumerate() {
            self.slot.set(p, OWNER_POOL, i as u32);
        }
        // 2. Encode: the bodies on every core, then their strings numbered in the
        // deterministic first-use order (pool, root, definitions in order).
        let pool_table = self.encode_pool(&pool)?;
        let root_body = self.encode_body(root_scan.order, OWNER_ROOT, PoolRefs::Numbered)?;
        let root_body = self.adopt_strings(root_body)?;
        let mut orders = Vec::with_capacity(scans.len());
        for scan in scans {
            for (mut rec, text) in scan.debug {
                rec.text = self.debug_strings.intern(text)?;
                self.debug.push(rec);
            }
            orders.push(scan.order);
        }
        // A 3.x body is laid out as soon as it is flattened (its records freed at once).
        let encoded: Vec<Result<Encoded<'m>, WriteError>> = orders
            .into_par_iter()
            .zip(early)
            .enumerate()
            .map(|(d, (order, early))| match early {
                Some(mut e) => {
                    self.number_pool_refs(&mut e.flat, d as u32)?;
                    Ok(e)
                }
                None => self.encode_laid(order, d as u32, major, PoolRefs::Numbered),
            })
            .collect();
        let bodies = encoded
            .into_iter()
            .map(|e| self.adopt_strings(e?))
            .collect::<Result<Vec<Flattened>, WriteError>>()?;
        self.debug
            .sort_unstable_by_key(|r| (r.def, r.local, r.position));
        // Everything numbered is encoded: the slot table (8 bytes an instruction) goes before
        // the hashes, once each definition's signature is read from it.
        let signatures: Vec<u32> = defs.iter().map(|&d| self.signature(d)).collect();
        self.slot = Slots(Vec::new());
        // 3. Keys, hashes, symbols.
        let content = match major {
            3.. => {
                let views = bodies
                    .iter()
                    .map(|b| match &b.laid {
                        Laid::Compact(bytes) => Compact::parse(bytes).map_err(WriteError::Archive),
                        Laid::Records(_) => Err(WriteError::Archive("a body not laid out".into())),
                    })
                    .collect::<Result<Vec<Compact<'_>>, WriteError>>()?;
                content_hashes(
                    &self.strings.table,
                    views.iter().collect(),
                    &pool_table,
                    major,
                )
            }
            _ => {
                let records = bodies
                    .iter()
                    .map(Flattened::records)
                    .collect::<Result<Vec<&Body>, WriteError>>()?;
                content_hashes(&self.strings.table, records, &pool_table, major)
            }
        };
        let symbols = self.symbols(&defs, &signatures, &content)?;
        // 4. The sections before the definitions, the definition index as a placeholder of
        // its final size (its entries are fixed-size), then the definitions streamed.
        let symbol_index = symbol_index(&symbols, &self.strings.table)?;
        let placeholder = DefIndex {
            defs: vec![DefEntry::default(); bodies.len()],
        };
        let mut sections: Vec<(SectionKind, u32, Bytes)> =
            vec![(SectionKind::STRINGS, 0, archive(&self.strings.table)?)];
        // 3.x keeps only the symbol index (spec/format.md §1.4); 2.x had both.
        if major < 3 {
            sections.push((SectionKind::SYMBOLS, 0, archive(&symbols)?));
        }
        sections.extend([
            (SectionKind::SYMBOL_INDEX, 0, symbol_index.into()),
            (SectionKind::POOL, 0, archive(&pool_table)?),
            (SectionKind::DEF_INDEX, 0, archive(&placeholder)?),
            (
                SectionKind::ROOT,
                0,
                body_bytes(root_body.records()?, major)?,
            ),
        ]);
        if !self.debug.is_empty() {
            let table = DebugTable {
                strings: std::mem::take(&mut self.debug_strings.table),
                entries: std::mem::take(&mut self.debug),
            };
            sections.push((SectionKind::DEBUG, SECTION_OPTIONAL, archive(&table)?));
        }
        let opcodes: Vec<u16> = defs.iter().map(|&d| m.opcode(d).0).collect();
        Ok(Prepared {
            major,
            sections,
            bodies,
            content,
            opcodes,
        })
    }

    /// The pool values the tree uses, in a canonical dependency order: the order in which a
    /// walk of the tree (each top-level definition in order, then the root; each instruction
    /// before its decorations and children; its type before its operands) first reaches them,
    /// every value after its type and operands. The order is therefore a function of the
    /// module's structure alone, not of how its pool happened to be built: equal modules
    /// (`irkit_core::equiv::modules_equal`) write equal bytes. Values nothing uses are not
    /// written. `scans` are the walks in that order, each listing the values it names in its
    /// own first-use order.
    fn pool_order<'s>(
        &self,
        scans: impl Iterator<Item = &'s Scan<'m>>,
    ) -> Result<Vec<Inst>, WriteError>
    where
        'm: 's,
    {
        let mut state = vec![0u8; self.m.arena_len()];
        let mut out = Vec::new();
        for scan in scans {
            for &p in &scan.pool_refs {
                if state[p.idx()] != 2 {
                    self.visit_pool_value(p, &mut state, &mut out)?;
                }
            }
        }
        if out.len() > REF_MAX_INDEX as usize + 1 {
            return Err(too_large("pool values", out.len()));
        }
        Ok(out)
    }

    /// Lists the pool values `i`'s type and operands name (about once per walk: `recent`).
    fn name_pool_values(
        &self,
        i: Inst,
        recent: &mut Recent,
        refs: &mut Vec<Inst>,
    ) -> Result<(), WriteError> {
        let m = self.m;
        let d = m.data(i);
        for &p in d.ty().iter().chain(d.operands()) {
            let p = m.resolve(p);
            if !m.contains(p) || !m.opcode(p).is_hoistable() {
                continue;
            }
            if !m.is_live(p) {
                return Err(WriteError::Unrepresentable(format!(
                    "{i} (`{}`) refers to removed value {p}",
                    m.opcode(i)
                )));
            }
            if !recent.seen(p) {
                refs.push(p);
            }
        }
        Ok(())
    }

    /// Appends `p` and, first, every pool value it depends on, in post-order.
    fn visit_pool_value(
        &self,
        p: Inst,
        state: &mut [u8],
        out: &mut Vec<Inst>,
    ) -> Result<(), WriteError> {
        let m = self.m;
        let mut stack = vec![(p, false)];
        while let Some((x, ready)) = stack.pop() {
            if ready {
                state[x.idx()] = 2;
                out.push(x);
                continue;
            }
            match state[x.idx()] {
                2 => continue,
                1 => {
                    return Err(WriteError::Unrepresentable(format!(
                        "pool value {x} (`{}`): it depends on itself",
                        m.opcode(x)
                    )));
                }
                _ => {}
            }
            state[x.idx()] = 1;
            stack.push((x, true));
            let d = m.data(x);
            for &o in d.operands().iter().rev().chain(d.ty().iter()) {
                let o = m.resolve(o);
                if m.contains(o) && m.opcode(o).is_hoistable() && state[o.idx()] != 2 {
                    if !m.is_live(o) {
                        return Err(WriteError::Unrepresentable(format!(
                            "pool value {x} refers to removed value {o}"
                        )));
                    }
                    stack.push((o, false));
                }
            }
        }
        Ok(())
    }

    /// The debug record of decoration `d` if it moves to the debug section (its text not yet
    /// interned).
    fn debug_record(
        &self,
        d: Inst,
        owner: u32,
        local: u32,
        position: usize,
    ) -> Option<(DebugRec, &'m str)> {
        let m = self.m;
        let data = m.data(d);
        if data.ty().is_some() || !data.decorations().is_empty() || !data.children().is_empty() {
            return None;
        }
        let Payload::Str(text) = data.payload() else {
            return None;
        };
        let (kind, line, col) = match data.opcode() {
            Opcode::NAME_HINT if data.operands().is_empty() => (DEBUG_NAME, 0, 0),
            Opcode::LOC => match data.operands() {
                [l, c] => (DEBUG_LOC, self.i32_value(*l)?, self.i32_value(*c)?),
                _ => return None,
            },
            _ => return None,
        };
        let rec = DebugRec {
            def: owner,
            local,
            position: position as u32,
            kind,
            reserved: [0; 3],
            text: 0,
            line,
            col,
        };
        Some((rec, &**text))
    }

    /// The value of a live `const_int` of type `i32` that fits 32 bits.
    fn i32_value(&self, c: Inst) -> Option<u32> {
        let m = self.m;
        let c = m.resolve(c);
        let d = m.get(c)?;
        if d.is_dead() || d.opcode() != Opcode::CONST_INT {
            return None;
        }
        let t = d.ty()?;
        if m.get(t)?.opcode() != Opcode::I32 {
            return None;
        }
        u32::try_from(d.payload().as_int()?).ok()
    }

    /// [`Writer::scan`] of every definition, on every core. A module the walks refuse
    /// (a removed instruction, one reachable twice) is walked again serially, so that the
    /// error reported is the first in module order, whatever the threads did.
    fn scan_defs(&self, defs: &[Inst]) -> Result<Vec<Scan<'m>>, WriteError> {
        let scans: Vec<Result<Scan<'m>, WriteError>> = defs
            .par_iter()
            .enumerate()
            .map(|(d, &def)| self.scan(def, d as u32, false))
            .collect();
        if scans.iter().all(Result::is_ok) {
            return scans.into_iter().collect();
        }
        self.slot.clear();
        defs.iter()
            .enumerate()
            .map(|(d, &def)| self.scan(def, d as u32, false))
            .collect()
    }

    /// [`Writer::scan`] of every definition on every core, each encoded right after its walk
    /// with its pool references by arena index (`PoolRefs::Provisional`). Every definition's
    /// own instruction is numbered first, so that a walk may meet references to definitions
    /// not walked yet. Any problem fails the whole (the caller redoes it in two passes, which
    /// report the first problem in module order).
    fn scan_encode_defs(
        &self,
        defs: &[Inst],
        major: u16,
    ) -> Result<Vec<(Scan<'m>, Encoded<'m>)>, WriteError> {
        for (d, &def) in defs.iter().enumerate() {
            if !self.slot.claim(def, d as u32, 0) {
                return Err(WriteError::Unrepresentable(format!(
                    "{def}: a definition listed twice"
                )));
            }
        }
        defs.par_iter()
            .enumerate()
            .map(|(d, &def)| {
                let owner = d as u32;
                let mut scan = self.scan(def, owner, false)?;
                let order = std::mem::take(&mut scan.order);
                let e = self.encode_laid(order, owner, major, PoolRefs::Provisional)?;
                Ok((scan, e))
            })
            .collect()
    }

    /// [`Writer::encode_body`], laid out in the layout of major `major` (compact from 3.x on).
    fn encode_laid(
        &self,
        order: Vec<Inst>,
        owner: u32,
        major: u16,
        pool: PoolRefs,
    ) -> Result<Encoded<'m>, WriteError> {
        let mut e = self.encode_body(order, owner, pool)?;
        if major >= 3
            && let Laid::Records(body) = &e.flat.laid
        {
            e.flat.laid = Laid::Compact(compact::encode(body)?);
        }
        Ok(e)
    }

    /// Renumbers the pool references of definition `d`'s body encoded with
    /// `PoolRefs::Provisional` (its `ext` entries naming pool values by arena index) by the
    /// pool's numbering.
    fn number_pool_refs(&self, flat: &mut Flattened, d: u32) -> Result<(), WriteError> {
        let Laid::Compact(bytes) = &mut flat.laid else {
            return Err(WriteError::Archive(format!(
                "definition {d}: a body not laid out"
            )));
        };
        let renumbered = compact::rewrite_ext(bytes, |r| {
            if r >> 30 != TAG_POOL {
                return Some(r);
            }
            match self.slot.get(Inst::from_index(r & REF_MAX_INDEX)) {
                (OWNER_POOL, p) => Some(pack_ref(TAG_POOL, p)),
                _ => None,
            }
        });
        if renumbered {
            Ok(())
        } else {
            Err(WriteError::Archive(format!(
                "definition {d}: a pool reference to a value not in the pool"
            )))
        }
    }

    /// Walks a tree in pre-order (an instruction, its decorations, its children), numbering
    /// its instructions (slot `(owner, local)`), taking out the decorations that move to the
    /// debug section, and listing the pool values it names. For the root only its decorations
    /// are walked (its children are the definitions).
    fn scan(&self, top: Inst, owner: u32, is_root: bool) -> Result<Scan<'m>, WriteError> {
        let m = self.m;
        // Room for a typical function's instructions, the values it names and the siblings
        // waiting on the stack, so that most walks grow nothing (growing from empty copied
        // each list several times, a few percent of a large module's write).
        let mut scan = Scan {
            order: Vec::with_capacity(SCAN_ROOM),
            debug: Vec::new(),
            pool_refs: Vec::with_capacity(SCAN_ROOM / 4),
        };
        let order = &mut scan.order;
        let mut recent = Recent::new();
        // (instruction, whether it moved to the debug section).
        let mut stack = Vec::with_capacity(SCAN_ROOM / 2);
        stack.push((top, false));
        while let Some((i, moved)) = stack.pop() {
            if moved {
                self.name_pool_values(i, &mut recent, &mut scan.pool_refs)?;
                continue;
            }
            let local = order.len() as u32;
            if order.len() > REF_MAX_INDEX as usize {
                return Err(too_large("instructions in one definition", order.len() + 1));
            }
            // A pool value is never a tree instruction (its slot is the pool's).
            // A definition's own instruction may be numbered before its walk
            // ([`Writer::scan_encode_defs`]).
            let numbered = i == top && local == 0 && self.slot.get(i) == (owner, 0);
            if !m.is_live(i)
                || m.opcode(i).is_hoistable()
                || !(numbered || self.slot.claim(i, owner, local))
            {
                return Err(WriteError::Unrepresentable(format!(
                    "{i} (`{}`): removed, a pool value, or reachable twice in the tree",
                    m.opcode(i)
                )));
            }
            order.push(i);
            self.name_pool_values(i, &mut recent, &mut scan.pool_refs)?;
            let data = m.data(i);
            if !(is_root && i == top) {
                stack.extend(data.children().iter().rev().map(|&c| (c, false)));
            }
            for (pos, &d) in data.decorations().iter().enumerate().rev() {
                let debuggable = !is_root && m.is_live(d) && self.slot.get(d).0 == UNMAPPED;
                let record = debuggable
                    .then(|| self.debug_record(d, owner, local, pos))
                    .flatten();
                match record {
                    Some(rec) => {
                        if !self.slot.claim(d, OWNER_DEBUG, 0) {
                            return Err(WriteError::Unrepresentable(format!(
                                "{d} (`{}`): reachable twice in the tree",
                                m.opcode(d)
                            )));
                        }
                        scan.debug.push(rec);
                        stack.push((d, true));
                    }
                    None => stack.push((d, false)),
                }
            }
        }
        Ok(scan)
    }

    /// A payload's kind and fields; a string's index is left 0 and its text returned, for
    /// the caller to number.
    fn encode_payload(
        &self,
        p: &'m Payload,
        blob: &mut Vec<u8>,
    ) -> Result<(u8, u32, u32, Option<&'m str>), WriteError> {
        Ok(match p {
            Payload::None => (payload_kind::NONE, 0, 0, None),
            Payload::Int(v) => (payload_kind::INT, *v as u32, (*v >> 32) as u32, None),
            Payload::Float(v) => (payload_kind::FLOAT, *v as u32, (*v >> 32) as u32, None),
            Payload::Str(s) => (payload_kind::STR, 0, 0, Some(&**s)),
            Payload::Bytes(b) => {
                let off = blob.len();
                let total = off + b.len();
                if total > u32::MAX as usize {
                    return Err(WriteError::TooLarge {
                        what: "payload bytes in one archive",
                        count: total as u64,
                        max: u32::MAX as u64,
                    });
                }
                blob.extend_from_slice(b);
                (payload_kind::BYTES, off as u32, b.len() as u32, None)
            }
        })
    }

    /// Encodes a reference from `user` (in archive `owner`) to `target`.
    fn encode_ref(
        &self,
        owner: u32,
        user: Inst,
        target: Inst,
        pool: PoolRefs,
    ) -> Result<u32, WriteError> {
        let m = self.m;
        let mut t = target;
        if !m.contains(t) {
            return Err(WriteError::Unrepresentable(format!(
                "{user} refers to {t}, which is not an instruction of this module"
            )));
        }
        if self.slot.get(t).0 == UNMAPPED {
            t = m.resolve(t);
        }
        let (o, index) = self.slot.get(t);
        if o == owner && owner != OWNER_POOL {
            return Ok(pack_ref(TAG_LOCAL, index));
        }
        match o {
            OWNER_POOL => Ok(pack_ref(TAG_POOL, index)),
            // A live pool value the walks listed (the walk of `owner` did: it names what
            // `owner` refers to), numbered later.
            UNMAPPED
                if pool == PoolRefs::Provisional && m.opcode(t).is_hoistable() && m.is_live(t) =>
            {
                Ok(pack_ref(TAG_POOL, t.index()))
            }
            d if d < OWNER_DEBUG && index == 0 => Ok(pack_ref(TAG_DEF, d)),
            _ => {
                let why = match o {
                    UNMAPPED => "a removed or detached instruction",
                    OWNER_ROOT => "the module root or one of its decorations",
                    OWNER_DEBUG => "a name_hint or loc decoration",
                    // Unreachable: handled above, or numbered before encoding.
                    OWNER_POOL => "a pool value",
                    _ => "an instruction inside another definition",
                };
                Err(WriteError::Unrepresentable(format!(
                    "the reference from {user} (`{}`) to {t} (`{}`): {why}",
                    m.opcode(user),
                    m.opcode(t)
                )))
            }
        }
    }

    fn encode_pool(&mut self, pool: &[Inst]) -> Result<PoolTable, WriteError> {
        let m = self.m;
        let mut table = PoolTable::default();
        for (i, &p) in pool.iter().enumerate() {
            let d = m.data(p);
            let ty = match d.ty() {
                Some(t) => self.encode_ref(OWNER_POOL, p, t, PoolRefs::Numbered)?,
                None => REF_NONE,
            };
            for &o in d.operands() {
                table
                    .operands
                    .push(self.encode_ref(OWNER_POOL, p, o, PoolRefs::Numbered)?);
            }
            // Pool references must point backwards (guaranteed by `pool_order`).
            debug_assert!(
                table
                    .operands
                    .iter()
                    .all(|&r| r >> 30 != TAG_POOL || (r & REF_MAX_INDEX) < i as u32 + 1)
            );
            let (kind, mut lo, hi, text) = self.encode_payload(d.payload(), &mut table.bytes)?;
            if let Some(text) = text {
                lo = self.strings.intern(text)?;
            }
            table.entries.push(PoolRec {
                opcode: d.opcode().0,
                payload_kind: kind,
                reserved: 0,
                ty,
                ops_end: ops_len(table.operands.len())?,
                payload_lo: lo,
                payload_hi: hi,
            });
        }
        Ok(table)
    }

    /// Flattens one numbered tree ([`Writer::scan`]); its strings are numbered by
    /// [`Writer::adopt_strings`].
    fn encode_body(
        &self,
        order: Vec<Inst>,
        owner: u32,
        pool: PoolRefs,
    ) -> Result<Encoded<'m>, WriteError> {
        let m = self.m;
        let n = order.len();
        let mut body = Body::default();
        // Subtree sizes, from the parents (pre-order: a parent precedes its subtree).
        let mut size = vec![1u32; n];
        let mut n_decos = vec![0u32; n];
        for l in (1..n).rev() {
            let parent = m.parent(order[l]).map(|p| self.slot.get(p));
            if let Some((po, pl)) = parent
                && po == owner
                && (pl as usize) < l
            {
                size[pl as usize] += size[l];
                // Whether it sits in the decoration list is what counts, not its opcode.
                if m.decorations(order[pl as usize]).contains(&order[l]) {
                    n_decos[pl as usize] += 1;
                }
            }
        }
        body.insts.reserve(n);
        // About two operands an instruction.
        body.operands.reserve(2 * n);
        let mut strings = Vec::new();
        let mut rows = 0u32;
        for (l, &i) in order.iter().enumerate() {
            let d = m.data(i);
            let ty = match d.ty() {
                Some(t) => self.encode_ref(owner, i, t, pool)?,
                None => REF_NONE,
            };
            for &o in d.operands() {
                body.operands.push(self.encode_ref(owner, i, o, pool)?);
            }
            let (kind, lo, hi, text) = self.encode_payload(d.payload(), &mut body.bytes)?;
            if let Some(text) = text {
                strings.push((l as u32, rows, text));
            }
            rows += u32::from(kind != payload_kind::NONE);
            body.insts.push(InstRec {
                opcode: d.opcode().0,
                payload_kind: kind,
                reserved: 0,
                ty,
                ops_end: ops_len(body.operands.len())?,
                end: l as u32 + size[l],
                n_decos: n_decos[l],
                payload_lo: lo,
                payload_hi: hi,
            });
        }
        Ok(Encoded {
            flat: Flattened {
                count: n as u32,
                laid: Laid::Records(body),
            },
            strings,
        })
    }

    /// Numbers an encoded body's strings (in its local order) and puts their indices in.
    fn adopt_strings(&mut self, e: Encoded<'m>) -> Result<Flattened, WriteError> {
        let mut flat = e.flat;
        for (l, row, text) in e.strings {
            let index = self.strings.intern(text)?;
            let set = match &mut flat.laid {
                Laid::Records(body) => body
                    .insts
                    .get_mut(l as usize)
                    .map(|rec| rec.payload_lo = index)
                    .is_some(),
                Laid::Compact(bytes) => compact::set_payload_lo(bytes, row as usize, index),
            };
            if !set {
                return Err(WriteError::Archive(format!(
                    "no payload row {row} for the string of instruction {l}"
                )));
            }
        }
        Ok(flat)
    }

    /// Definition `d`'s type as a pool index (`REF_NONE` without one), for its symbols.
    fn signature(&self, d: Inst) -> u32 {
        let m = self.m;
        match m.ty(d) {
            Some(t) => match self.slot.get(m.resolve(t)) {
                (OWNER_POOL, p) => p,
                _ => REF_NONE,
            },
            None => REF_NONE,
        }
    }

    fn symbols(
        &mut self,
        defs: &[Inst],
        signatures: &[u32],
        content: &[[u8; 32]],
    ) -> Result<SymbolTable, WriteError> {
        let m = self.m;
        let mut out = Vec::new();
        for (i, &d) in defs.iter().enumerate() {
            let signature = signatures.get(i).copied().unwrap_or(REF_NONE);
            for &x in m.decorations(d) {
                let role = match m.opcode(x) {
                    Opcode::EXPORT => 0,
                    Opcode::IMPORT => 1,
                    Opcode::EXTERN => 2,
                    _ => continue,
                };
                let Payload::Str(name) = m.payload(x) else {
                    continue;
                };
                out.push((
                    &**name,
                    SymbolRec {
                        name: self.strings.intern(name)?,
                        role,
                        reserved: 0,
                        def_opcode: m.opcode(d).0,
                        def: i as u32,
                        signature,
                        hash: content[i],
                    },
                ));
            }
        }
        out.sort_by(|a, b| {
            (a.0.as_bytes(), a.1.role, a.1.def).cmp(&(b.0.as_bytes(), b.1.role, b.1.def))
        });
        Ok(SymbolTable {
            symbols: out.into_iter().map(|(_, s)| s).collect(),
        })
    }
}

/// Every definition's content hash (the semantic hash of major `major`: `spec/format.md` §3.5
/// in 5.x, §3.4 in 4.x, §3.2 before), from its encoded body: labels on every core, then the
/// components walked.
fn content_hashes<B: crate::compact::MaybeCompact + Sync>(
    strings: &StringTable,
    bodies: Vec<&B>,
    pool: &PoolTable,
    major: u16,
) -> Vec<[u8; 32]> {
    let n = bodies.len() as u32;
    let graph = FlatGraph::new(strings, bodies, pool, semantic::Scheme::of_major(major));
    let labels = graph.def_labels();
    let mut hasher = semantic::Hasher::with_def_labels(graph, labels, pool.entries.len());
    if let Err(never) = hasher.hash_lone_defs(n) {
        match never {}
    }
    (0..n)
        .map(|d| match hasher.hash(Node::Def(d)) {
            Ok(h) => h,
            Err(never) => match never {},
        })
        .collect()
}

/// The symbol-index section (`spec/format.md` §1.4): a 16-byte header, one fixed-size record
/// per symbol in the symbol table's order (sorted by name bytes, role, definition), then the
/// name blob (each distinct name once, in record order).
fn symbol_index(symbols: &SymbolTable, strings: &StringTable) -> Result<Vec<u8>, WriteError> {
    let n = symbols.symbols.len();
    let count = u32::try_from(n).map_err(|_| WriteError::TooLarge {
        what: "symbols",
        count: n as u64,
        max: u32::MAX as u64,
    })?;
    let mut out = vec![0u8; SYMIX_HEADER + n * SYMIX_RECORD];
    LE::write_u32(&mut out[0..4], count);
    LE::write_u32(&mut out[4..8], SYMIX_RECORD as u32);
    let mut blob: Vec<u8> = Vec::new();
    let mut prev: Option<(&str, u32)> = None;
    for (k, s) in symbols.symbols.iter().enumerate() {
        let name = str_of(strings, s.name).unwrap_or("");
        let off = match prev {
            Some((p, off)) if p == name => off,
            _ => {
                let off = blob.len();
                blob.extend_from_slice(name.as_bytes());
                u32::try_from(blob.len()).map_err(|_| WriteError::TooLarge {
                    what: "bytes of symbol names",
                    count: blob.len() as u64,
                    max: u32::MAX as u64,
                })?;
                off as u32
            }
        };
        prev = Some((name, off));
        let r = &mut out[SYMIX_HEADER + k * SYMIX_RECORD..][..SYMIX_RECORD];
        LE::write_u32(&mut r[0..4], off);
        LE::write_u32(&mut r[4..8], name.len() as u32);
        LE::write_u32(&mut r[8..12], s.def);
        LE::write_u32(&mut r[12..16], s.signature);
        LE::write_u16(&mut r[16..18], s.def_opcode);
        r[18] = s.role;
        r[19] = 0;
        r[20..52].copy_from_slice(&s.hash);
    }
    out.extend_from_slice(&blob);
    Ok(out)
}

fn str_of(t: &StringTable, i: u32) -> Option<&str> {
    crate::flat::Strings::get_str(t, i)
}

fn ops_len(n: usize) -> Result<u32, WriteError> {
    u32::try_from(n).map_err(|_| WriteError::TooLarge {
        what: "operands in one archive",
        count: n as u64,
        max: u32::MAX as u64,
    })
}

/// Bytes of a section, or of one archive of the definitions section: rkyv's own buffer, or
/// bytes built by hand (the symbol index).
pub(crate) enum Bytes {
    Archive(AlignedVec),
    Plain(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Archive(a) => a.as_slice(),
            Bytes::Plain(v) => v.as_slice(),
        }
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes::Plain(v)
    }
}

/// One definition's archive and the blake3 of its bytes (its body hash).
struct Archived {
    bytes: Bytes,
    hash: [u8; 32],
}

/// Sections hashed on every core past this size (smaller ones are not worth the split).
const PARALLEL_HASH: usize = 1 << 20;

fn io(source: std::io::Error) -> WriteError {
    WriteError::Io {
        path: String::new(),
        source,
    }
}

/// A file being written front to back: the header and directory as zeros first (written last,
/// [`Stream::finish`]), then each section at the next 16-byte boundary, hashed as it goes.
struct Stream<W: Write + Seek> {
    sink: W,
    /// Bytes written so far (the position in the file).
    len: u64,
    entries: Vec<DirEntry>,
    /// The section being written ([`Stream::begin`]): its hash so far.
    open: Option<blake3::Hasher>,
}

impl<W: Write + Seek> Stream<W> {
    fn new(mut sink: W, sections: usize, major: u16) -> Result<Stream<W>, WriteError> {
        let dir_end = header::header_size(major) + sections * header::DIR_ENTRY_SIZE;
        sink.write_all(&vec![0u8; dir_end]).map_err(io)?;
        Ok(Stream {
            sink,
            len: dir_end as u64,
            entries: Vec::with_capacity(sections),
            open: None,
        })
    }

    /// Where something `pending` bytes from now would start, 16-aligned relative to the open
    /// section (the definitions' archives) or to the file.
    fn aligned_len(&self, pending: u64) -> u64 {
        let at = self.len + pending;
        let base = self.entries.last().filter(|_| self.open.is_some());
        match base {
            Some(e) => e.offset + (at - e.offset).div_ceil(SECTION_ALIGN) * SECTION_ALIGN,
            None => at.div_ceil(SECTION_ALIGN) * SECTION_ALIGN,
        }
    }

    /// Starts a section at the next 16-byte boundary.
    fn begin(&mut self, kind: SectionKind, flags: u32) -> Result<(), WriteError> {
        let at = self.len.div_ceil(SECTION_ALIGN) * SECTION_ALIGN;
        self.sink
            .write_all(&vec![0u8; (at - self.len) as usize])
            .map_err(io)?;
        self.len = at;
        self.entries.push(DirEntry {
            kind,
            flags,
            offset: at,
            length: 0,
            hash: [0; 32],
        });
        self.open = Some(blake3::Hasher::new());
        Ok(())
    }

    /// Appends bytes to the open section.
    fn extend(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        if let Some(h) = &mut self.open {
            if bytes.len() >= PARALLEL_HASH {
                h.update_rayon(bytes);
            } else {
                h.update(bytes);
            }
        }
        self.sink.write_all(bytes).map_err(io)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Closes the open section.
    fn end(&mut self) -> Result<(), WriteError> {
        if let (Some(h), Some(e)) = (self.open.take(), self.entries.last_mut()) {
            e.length = self.len - e.offset;
            e.hash = *h.finalize().as_bytes();
        }
        Ok(())
    }

    /// A whole section.
    fn section(&mut self, kind: SectionKind, flags: u32, bytes: &[u8]) -> Result<(), WriteError> {
        self.begin(kind, flags)?;
        self.extend(bytes)?;
        self.end()
    }

    /// Writes section `k` again, with new bytes of the same length.
    fn rewrite(&mut self, k: usize, bytes: &[u8]) -> Result<(), WriteError> {
        let Some(e) = self.entries.get_mut(k) else {
            return Err(WriteError::Archive(format!("no section {k} to rewrite")));
        };
        if e.length != bytes.len() as u64 {
            return Err(WriteError::Archive(format!(
                "section {} changed size when rewritten ({} bytes, then {})",
                e.kind.0,
                e.length,
                bytes.len()
            )));
        }
        e.hash = *blake3::hash(bytes).as_bytes();
        self.sink.seek(SeekFrom::Start(e.offset)).map_err(io)?;
        self.sink.write_all(bytes).map_err(io)?;
        self.sink.seek(SeekFrom::Start(self.len)).map_err(io)?;
        Ok(())
    }

    /// Writes the header and directory over the zeros at the start; returns the sink,
    /// positioned at the end.
    fn finish(mut self, major: u16, minor: u16) -> Result<W, WriteError> {
        let head = Header {
            major,
            minor,
            flags: 0,
            section_count: self.entries.len() as u32,
            entry_size: header::DIR_ENTRY_SIZE as u32,
            file_length: self.len,
        };
        let encoded = header::encode(&head, &self.entries);
        self.sink.seek(SeekFrom::Start(0)).map_err(io)?;
        self.sink.write_all(&encoded).map_err(io)?;
        self.sink.seek(SeekFrom::Start(self.len)).map_err(io)?;
        Ok(self.sink)
    }
}

fn archive<T>(value: &T) -> Result<Bytes, WriteError>
where
    T: for<'a> rkyv::Serialize<
            rkyv::api::high::HighSerializer<
                AlignedVec,
                rkyv::ser::allocator::ArenaHandle<'a>,
                rkyv::rancor::BoxedError,
            >,
        >,
{
    rkyv::to_bytes::<rkyv::rancor::BoxedError>(value)
        .map(Bytes::Archive)
        .map_err(|e| WriteError::Archive(e.to_string()))
}

/// Lays out header, directory and sections (each 16-byte aligned, zero padding).
#[cfg(test)]
pub(crate) fn assemble(sections: Vec<(SectionKind, u32, Vec<u8>)>) -> Vec<u8> {
    assemble_version(sections, FORMAT_MAJOR, FORMAT_MINOR)
}

/// Lays out sections under a header of version `major.minor` (older majors for tests).
#[cfg(test)]
pub(crate) fn assemble_version(
    sections: Vec<(SectionKind, u32, Vec<u8>)>,
    major: u16,
    minor: u16,
) -> Vec<u8> {
    let lay_out = || -> Result<Vec<u8>, WriteError> {
        let mut out = Stream::new(Cursor::new(Vec::new()), sections.len(), major)?;
        for (kind, flags, bytes) in &sections {
            out.section(*kind, *flags, bytes)?;
        }
        Ok(out.finish(major, minor)?.into_inner())
    };
    lay_out().expect("writing into memory cannot fail")
}
