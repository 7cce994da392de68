//! The fixed header and the section directory (plain little-endian fields, `byteorder`).
//!
//! ```text
//! offset size field
//!      0    8 magic b"IRKMOD\0\x1a"
//!      8    2 format major (u16)
//!     10    2 format minor (u16)
//!     12    4 flags (u32, none defined: writers write 0, readers ignore)
//!     16    4 section count (u32)
//!     20    4 directory entry size (u32, >= 56; 56 in 1.0 and 2.0)
//!     24    8 file length in bytes (u64)
//!     32   32 (2.x) header hash: blake3 of bytes 0..32 then the directory's bytes
//! 32 / 64   . directory (1.x / 2.x): section count entries of `entry size` bytes each
//! entry: kind u32, flags u32 (bit 0 = optional), offset u64, length u64, blake3 [u8; 32]
//! ```
//!
//! In 2.x every byte of the header and the directory is covered by the header hash, checked
//! at open: no flip there can go unnoticed (e.g. a section kind turning into an unknown
//! optional one, which a reader would skip). 1.x files, which lack it, are still read.

use std::sync::Arc;

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::error::{Location, ReadCause, ReadError};

/// The eight bytes every module file starts with.
pub const MAGIC: [u8; 8] = *b"IRKMOD\0\x1a";
/// The format major version this crate writes (it reads 1.x too).
pub const FORMAT_MAJOR: u16 = 6;
/// The format minor version this crate writes.
pub const FORMAT_MINOR: u16 = 5;
/// The oldest major version this crate reads.
pub const OLDEST_MAJOR: u16 = 1;
/// Size of the fixed header in 2.x (with the header hash).
pub const HEADER_SIZE: usize = 64;
/// Size of the fixed header in 1.x (without the header hash).
pub const HEADER_SIZE_V1: usize = 32;

/// The header size of a file of major version `major`.
pub fn header_size(major: u16) -> usize {
    if major == 1 {
        HEADER_SIZE_V1
    } else {
        HEADER_SIZE
    }
}
/// Size of a directory entry as written by 1.0.
pub const DIR_ENTRY_SIZE: usize = 56;
/// Alignment of every section (and every definition archive) in the file.
pub const SECTION_ALIGN: u64 = 16;
/// Directory entry flag: a reader that does not know the section kind may skip it.
pub const SECTION_OPTIONAL: u32 = 1;
/// Most sections a directory may list (far more than any version defines).
pub const MAX_SECTIONS: u32 = 1024;
/// Largest directory entry size accepted (room for later minors to extend entries).
pub const MAX_DIR_ENTRY_SIZE: u32 = 4096;

/// A section kind (the `kind` field of a directory entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SectionKind(pub u32);

impl SectionKind {
    /// The deduplicated string table.
    pub const STRINGS: SectionKind = SectionKind(1);
    /// Exports, imports and externs.
    pub const SYMBOLS: SectionKind = SectionKind(2);
    /// Hoistable values (types, constants) in dependency order.
    pub const POOL: SectionKind = SectionKind(3);
    /// The definitions directory: one entry per top-level definition.
    pub const DEF_INDEX: SectionKind = SectionKind(4);
    /// The definitions' archives, one independent archive each.
    pub const DEFINITIONS: SectionKind = SectionKind(5);
    /// The root `module` instruction and its decorations.
    pub const ROOT: SectionKind = SectionKind(6);
    /// Name hints and source locations (optional).
    pub const DEBUG: SectionKind = SectionKind(7);
    /// A fixed-layout name index of the symbols, for binary-search lookups without validating the
    /// symbol table (derived data; written by every writer, not required of a file).
    pub const SYMBOL_INDEX: SectionKind = SectionKind(8);

    /// Every kind this version knows, in the order the writer emits them.
    pub const KNOWN: [SectionKind; 8] = [
        SectionKind::STRINGS,
        SectionKind::SYMBOLS,
        SectionKind::SYMBOL_INDEX,
        SectionKind::POOL,
        SectionKind::DEF_INDEX,
        SectionKind::DEFINITIONS,
        SectionKind::ROOT,
        SectionKind::DEBUG,
    ];

    /// The kind's name (`strings`, `symbols`, ...), or `kind#N` for an unknown one.
    pub fn name(self) -> String {
        match self.known_name() {
            Some(n) => n.to_string(),
            None => format!("kind#{}", self.0),
        }
    }

    /// The name of a known kind.
    pub fn known_name(self) -> Option<&'static str> {
        Some(match self {
            SectionKind::STRINGS => "strings",
            SectionKind::SYMBOLS => "symbols",
            SectionKind::POOL => "pool",
            SectionKind::DEF_INDEX => "definition-index",
            SectionKind::DEFINITIONS => "definitions",
            SectionKind::ROOT => "root",
            SectionKind::DEBUG => "debug",
            SectionKind::SYMBOL_INDEX => "symbol-index",
            _ => return None,
        })
    }

    /// Whether this reader knows the kind.
    pub fn is_known(self) -> bool {
        self.known_name().is_some()
    }

    /// Whether the section is part of the module's content (everything but debug info and
    /// the symbol index, which is derived from the symbol table).
    pub fn is_content(self) -> bool {
        self.is_known() && self != SectionKind::DEBUG && self != SectionKind::SYMBOL_INDEX
    }

    /// Whether a file of major version `major` must have the section (a 1.x reader falls
    /// back to the symbol table without the symbol index; 2.x requires it; 3.x has the index
    /// only, see [`SectionKind::is_part_of`]).
    pub fn is_mandatory(self, major: u16) -> bool {
        self.is_part_of(major)
            && self != SectionKind::DEBUG
            && (self != SectionKind::SYMBOL_INDEX || major >= 2)
    }

    /// Whether a file of major version `major` may have the section: every known kind, but the
    /// `symbols` section only before 3.0 (3.x keeps only the symbol index, so a reader refuses
    /// a 3.x file listing it rather than leave a section unread).
    pub fn is_part_of(self, major: u16) -> bool {
        self.is_known() && (self != SectionKind::SYMBOLS || major < 3)
    }
}

/// The fixed header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format major version.
    pub major: u16,
    /// Format minor version.
    pub minor: u16,
    /// Header flags.
    pub flags: u32,
    /// Number of directory entries.
    pub section_count: u32,
    /// Size of one directory entry.
    pub entry_size: u32,
    /// Total file length.
    pub file_length: u64,
}

/// One section directory entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The section kind.
    pub kind: SectionKind,
    /// Flags ([`SECTION_OPTIONAL`]).
    pub flags: u32,
    /// Byte offset from the start of the file (a multiple of 16).
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// blake3 of the section's bytes.
    pub hash: [u8; 32],
}

impl DirEntry {
    /// Whether a reader that does not know the kind may skip the section.
    pub fn is_optional(&self) -> bool {
        self.flags & SECTION_OPTIONAL != 0
    }
}

/// Encodes the header (sealed in 2.x) and directory (the writer computes offsets beforehand).
pub(crate) fn encode(header: &Header, entries: &[DirEntry]) -> Vec<u8> {
    let header_size = header_size(header.major);
    let mut out = vec![0u8; header_size + entries.len() * DIR_ENTRY_SIZE];
    out[0..8].copy_from_slice(&MAGIC);
    LE::write_u16(&mut out[8..10], header.major);
    LE::write_u16(&mut out[10..12], header.minor);
    LE::write_u32(&mut out[12..16], header.flags);
    LE::write_u32(&mut out[16..20], header.section_count);
    LE::write_u32(&mut out[20..24], header.entry_size);
    LE::write_u64(&mut out[24..32], header.file_length);
    for (i, e) in entries.iter().enumerate() {
        let b = &mut out[header_size + i * DIR_ENTRY_SIZE..][..DIR_ENTRY_SIZE];
        LE::write_u32(&mut b[0..4], e.kind.0);
        LE::write_u32(&mut b[4..8], e.flags);
        LE::write_u64(&mut b[8..16], e.offset);
        LE::write_u64(&mut b[16..24], e.length);
        b[24..56].copy_from_slice(&e.hash);
    }
    seal(&mut out);
    out
}

/// The header hash of a 2.x file: blake3 of its first 32 bytes, then of its directory (as
/// far as the file holds it). `None` for a file too short to have one.
fn header_hash(bytes: &[u8]) -> Option<[u8; 32]> {
    let head = bytes.get(..HEADER_SIZE)?;
    let count = LE::read_u32(&head[16..20]) as u64;
    let entry = LE::read_u32(&head[20..24]) as u64;
    let dir_end = (HEADER_SIZE as u64 + count * entry).min(bytes.len() as u64) as usize;
    let mut h = blake3::Hasher::new();
    h.update(&head[..32]);
    h.update(&bytes[HEADER_SIZE..dir_end]);
    Some(*h.finalize().as_bytes())
}

/// Recomputes the header hash of a 2.x file in place (after its header or directory was
/// edited); leaves other files alone. For writers and for tests that build hostile files.
pub fn seal(bytes: &mut [u8]) {
    if bytes.len() < HEADER_SIZE || bytes[..8] != MAGIC || LE::read_u16(&bytes[8..10]) < 2 {
        return;
    }
    if let Some(h) = header_hash(bytes) {
        bytes[32..64].copy_from_slice(&h);
    }
}

/// Parses and checks the header and the directory: magic, version, lengths, every entry's
/// bounds, alignment and non-overlap, duplicate kinds and unknown required kinds. Section
/// contents (and their hashes) are not looked at here.
pub(crate) fn parse(bytes: &[u8], file: &Arc<str>) -> Result<(Header, Vec<DirEntry>), ReadError> {
    let herr = |cause| ReadError::new(file, Location::Header, cause);
    if bytes.len() < MAGIC.len() || bytes[..8] != MAGIC {
        if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
            return Err(herr(ReadCause::Truncated(format!(
                "{} bytes, shorter than the magic",
                bytes.len()
            ))));
        }
        return Err(herr(ReadCause::BadMagic(
            bytes[..bytes.len().min(8)].to_vec(),
        )));
    }
    if bytes.len() < HEADER_SIZE_V1 {
        return Err(herr(ReadCause::Truncated(format!(
            "{} bytes, shorter than the {HEADER_SIZE_V1}-byte header",
            bytes.len()
        ))));
    }
    let header = Header {
        major: LE::read_u16(&bytes[8..10]),
        minor: LE::read_u16(&bytes[10..12]),
        flags: LE::read_u32(&bytes[12..16]),
        section_count: LE::read_u32(&bytes[16..20]),
        entry_size: LE::read_u32(&bytes[20..24]),
        file_length: LE::read_u64(&bytes[24..32]),
    };
    if !(OLDEST_MAJOR..=FORMAT_MAJOR).contains(&header.major) {
        return Err(herr(ReadCause::Version {
            found_major: header.major,
            found_minor: header.minor,
            reader_major: FORMAT_MAJOR,
            reader_minor: FORMAT_MINOR,
        }));
    }
    let header_size = header_size(header.major);
    if bytes.len() < header_size {
        return Err(herr(ReadCause::Truncated(format!(
            "{} bytes, shorter than the {header_size}-byte header of {}.x",
            bytes.len(),
            header.major
        ))));
    }
    if header.file_length != bytes.len() as u64 {
        let cause = if header.file_length > bytes.len() as u64 {
            ReadCause::Truncated(format!(
                "the header announces {} bytes, the file has {}",
                header.file_length,
                bytes.len()
            ))
        } else {
            ReadCause::Malformed(format!(
                "the header announces {} bytes, the file has {}",
                header.file_length,
                bytes.len()
            ))
        };
        return Err(herr(cause));
    }
    if header.section_count > MAX_SECTIONS {
        return Err(herr(ReadCause::Malformed(format!(
            "{} sections (at most {MAX_SECTIONS})",
            header.section_count
        ))));
    }
    if !(DIR_ENTRY_SIZE as u32..=MAX_DIR_ENTRY_SIZE).contains(&header.entry_size) {
        return Err(herr(ReadCause::Malformed(format!(
            "directory entry size {} (expected {DIR_ENTRY_SIZE}..={MAX_DIR_ENTRY_SIZE})",
            header.entry_size
        ))));
    }
    // Both factors are capped above, so this cannot overflow.
    let dir_end = header_size as u64 + header.section_count as u64 * header.entry_size as u64;
    let derr = |cause| ReadError::new(file, Location::Directory, cause);
    if dir_end > bytes.len() as u64 {
        return Err(derr(ReadCause::Truncated(format!(
            "{} entries of {} bytes end at {dir_end}, past the end of the file ({})",
            header.section_count,
            header.entry_size,
            bytes.len()
        ))));
    }
    if header.major >= 2 && header_hash(bytes).is_none_or(|h| h[..] != bytes[32..64]) {
        return Err(herr(ReadCause::HashMismatch));
    }
    let mut entries = Vec::with_capacity(header.section_count as usize);
    for i in 0..header.section_count as usize {
        let at = header_size + i * header.entry_size as usize;
        let b = &bytes[at..at + DIR_ENTRY_SIZE];
        let mut hash = [0u8; 32];
        hash.copy_from_slice(&b[24..56]);
        entries.push(DirEntry {
            kind: SectionKind(LE::read_u32(&b[0..4])),
            flags: LE::read_u32(&b[4..8]),
            offset: LE::read_u64(&b[8..16]),
            length: LE::read_u64(&b[16..24]),
            hash,
        });
    }
    check_entries(&entries, header.major, dir_end, bytes.len() as u64, file)?;
    Ok((header, entries))
}

fn check_entries(
    entries: &[DirEntry],
    major: u16,
    dir_end: u64,
    file_len: u64,
    file: &Arc<str>,
) -> Result<(), ReadError> {
    let derr = |cause| ReadError::new(file, Location::Directory, cause);
    for (i, e) in entries.iter().enumerate() {
        let what = format!("entry {i} ({})", e.kind.name());
        if e.offset % SECTION_ALIGN != 0 {
            return Err(derr(ReadCause::Malformed(format!(
                "{what}: offset {} is not {SECTION_ALIGN}-byte aligned",
                e.offset
            ))));
        }
        let end = e.offset.checked_add(e.length);
        if e.offset < dir_end || end.is_none_or(|end| end > file_len) {
            return Err(derr(ReadCause::Truncated(format!(
                "{what}: bytes {}..+{} lie outside the section area {dir_end}..{file_len}",
                e.offset, e.length
            ))));
        }
        if !e.kind.is_known() && !e.is_optional() {
            return Err(derr(ReadCause::Malformed(format!(
                "{what}: unknown section kind {} is marked required: written by a newer \
                 minor version this reader cannot understand",
                e.kind.0
            ))));
        }
        if e.kind.is_known() && !e.kind.is_part_of(major) {
            return Err(derr(ReadCause::Malformed(format!(
                "{what}: a {major}.x file has no {} section",
                e.kind.name()
            ))));
        }
        if e.kind.is_known() && entries[..i].iter().any(|p| p.kind == e.kind) {
            return Err(derr(ReadCause::Malformed(format!(
                "{what}: duplicate section"
            ))));
        }
    }
    let mut spans: Vec<(u64, u64, usize)> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.offset, e.offset + e.length, i))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(derr(ReadCause::Malformed(format!(
                "sections {} and {} overlap",
                entries[w[0].2].kind.name(),
                entries[w[1].2].kind.name()
            ))));
        }
    }
    for kind in SectionKind::KNOWN {
        if kind.is_mandatory(major) && !entries.iter().any(|e| e.kind == kind) {
            return Err(derr(ReadCause::Malformed(format!(
                "required section {} is missing",
                kind.name()
            ))));
        }
    }
    Ok(())
}
