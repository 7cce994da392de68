//! The output stream: the header and section directory reserved up front, each section
//! appended aligned and hashed as it is written (on every core for a large one), the
//! directory and header written last.

use super::*;

/// Bytes of a section, or of one archive of the definitions section: rkyv's own buffer, or
/// bytes built by hand (the symbol index).
pub(crate) enum Bytes {
    Archive(AlignedVec),
    Plain(Vec<u8>),
}

impl Bytes {
    pub(super) fn as_slice(&self) -> &[u8] {
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
pub(super) struct Archived {
    pub(super) bytes: Bytes,
    pub(super) hash: [u8; 32],
}

/// Sections hashed on every core past this size (smaller ones are not worth the split).
pub(super) const PARALLEL_HASH: usize = 1 << 20;

pub(super) fn io(source: std::io::Error) -> WriteError {
    WriteError::Io {
        path: String::new(),
        source,
    }
}

/// A file being written front to back: the header and directory as zeros first (written last,
/// [`Stream::finish`]), then each section at the next 16-byte boundary, hashed as it goes.
pub(super) struct Stream<W: Write + Seek> {
    pub(super) sink: W,
    /// Bytes written so far (the position in the file).
    pub(super) len: u64,
    pub(super) entries: Vec<DirEntry>,
    /// The section being written ([`Stream::begin`]): its hash so far.
    pub(super) open: Option<blake3::Hasher>,
}

impl<W: Write + Seek> Stream<W> {
    pub(super) fn new(mut sink: W, sections: usize, major: u16) -> Result<Stream<W>, WriteError> {
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
    pub(super) fn aligned_len(&self, pending: u64) -> u64 {
        let at = self.len + pending;
        let base = self.entries.last().filter(|_| self.open.is_some());
        match base {
            Some(e) => e.offset + (at - e.offset).div_ceil(SECTION_ALIGN) * SECTION_ALIGN,
            None => at.div_ceil(SECTION_ALIGN) * SECTION_ALIGN,
        }
    }

    /// Starts a section at the next 16-byte boundary.
    pub(super) fn begin(&mut self, kind: SectionKind, flags: u32) -> Result<(), WriteError> {
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
    pub(super) fn extend(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
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
    pub(super) fn end(&mut self) -> Result<(), WriteError> {
        if let (Some(h), Some(e)) = (self.open.take(), self.entries.last_mut()) {
            e.length = self.len - e.offset;
            e.hash = *h.finalize().as_bytes();
        }
        Ok(())
    }

    /// A whole section.
    pub(super) fn section(
        &mut self,
        kind: SectionKind,
        flags: u32,
        bytes: &[u8],
    ) -> Result<(), WriteError> {
        self.begin(kind, flags)?;
        self.extend(bytes)?;
        self.end()
    }

    /// Writes section `k` again, with new bytes of the same length.
    pub(super) fn rewrite(&mut self, k: usize, bytes: &[u8]) -> Result<(), WriteError> {
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
    pub(super) fn finish(mut self, major: u16, minor: u16) -> Result<W, WriteError> {
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

pub(super) fn archive<T>(value: &T) -> Result<Bytes, WriteError>
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
