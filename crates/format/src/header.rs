//! The fixed header and the section directory (plain little-endian fields, `byteorder`).
//!
//! ```text
//! offset size field
//!      0    8 magic b"IRKMOD\0\x1a"
//!      8    2 format major (u16)
//!     10    2 format minor (u16)
//!     12    4 flags (u32, none defined: writers write 0, readers ignore)
//!     16    4 section count (u32)
//!     20    4 directory entry size (u32, >= 56; 56 in 1.0)
//!     24    8 file length in bytes (u64)
//!     32    . directory: section count entries of `entry size` bytes each
//! entry: kind u32, flags u32 (bit 0 = optional), offset u64, length u64, blake3 [u8; 32]
//! ```

use std::sync::Arc;

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::error::{Location, ReadCause, ReadError};

/// The eight bytes every module file starts with.
pub const MAGIC: [u8; 8] = *b"IRKMOD\0\x1a";
/// The format major version this crate reads and writes.
pub const FORMAT_MAJOR: u16 = 1;
/// The format minor version this crate writes.
pub const FORMAT_MINOR: u16 = 2;
/// Size of the fixed header.
pub const HEADER_SIZE: usize = 32;
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

    /// Whether a file must have the section (a reader falls back without the symbol index).
    pub fn is_mandatory(self) -> bool {
        self.is_known() && self != SectionKind::DEBUG && self != SectionKind::SYMBOL_INDEX
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

/// Encodes the header and directory (the writer computes offsets beforehand).
pub(crate) fn encode(header: &Header, entries: &[DirEntry]) -> Vec<u8> {
    let mut out = vec![0u8; HEADER_SIZE + entries.len() * DIR_ENTRY_SIZE];
    out[0..8].copy_from_slice(&MAGIC);
    LE::write_u16(&mut out[8..10], header.major);
    LE::write_u16(&mut out[10..12], header.minor);
    LE::write_u32(&mut out[12..16], header.flags);
    LE::write_u32(&mut out[16..20], header.section_count);
    LE::write_u32(&mut out[20..24], header.entry_size);
    LE::write_u64(&mut out[24..32], header.file_length);
    for (i, e) in entries.iter().enumerate() {
        let b = &mut out[HEADER_SIZE + i * DIR_ENTRY_SIZE..][..DIR_ENTRY_SIZE];
        LE::write_u32(&mut b[0..4], e.kind.0);
        LE::write_u32(&mut b[4..8], e.flags);
        LE::write_u64(&mut b[8..16], e.offset);
        LE::write_u64(&mut b[16..24], e.length);
        b[24..56].copy_from_slice(&e.hash);
    }
    out
}

/// Size of the header plus a directory of `n` 1.0 entries.
pub(crate) fn directory_end(n: usize) -> usize {
    HEADER_SIZE + n * DIR_ENTRY_SIZE
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
    if bytes.len() < HEADER_SIZE {
        return Err(herr(ReadCause::Truncated(format!(
            "{} bytes, shorter than the {HEADER_SIZE}-byte header",
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
    if header.major != FORMAT_MAJOR {
        return Err(herr(ReadCause::Version {
            found_major: header.major,
            found_minor: header.minor,
            reader_major: FORMAT_MAJOR,
            reader_minor: FORMAT_MINOR,
        }));
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
    let dir_end = HEADER_SIZE as u64 + header.section_count as u64 * header.entry_size as u64;
    let derr = |cause| ReadError::new(file, Location::Directory, cause);
    if dir_end > bytes.len() as u64 {
        return Err(derr(ReadCause::Truncated(format!(
            "{} entries of {} bytes end at {dir_end}, past the end of the file ({})",
            header.section_count,
            header.entry_size,
            bytes.len()
        ))));
    }
    let mut entries = Vec::with_capacity(header.section_count as usize);
    for i in 0..header.section_count as usize {
        let at = HEADER_SIZE + i * header.entry_size as usize;
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
    check_entries(&entries, dir_end, bytes.len() as u64, file)?;
    Ok((header, entries))
}

fn check_entries(
    entries: &[DirEntry],
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
        if kind.is_mandatory() && !entries.iter().any(|e| e.kind == kind) {
            return Err(derr(ReadCause::Malformed(format!(
                "required section {} is missing",
                kind.name()
            ))));
        }
    }
    Ok(())
}
