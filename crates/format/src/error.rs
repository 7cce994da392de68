//! The errors of reading and writing: every failure names the file, the place in it and the
//! cause.

use std::fmt;
use std::sync::Arc;

/// Where in a file a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The fixed header (magic, version, counts).
    Header,
    /// The section directory.
    Directory,
    /// A whole section, by kind name (`strings`, `symbols`, `pool`, ...).
    Section(String),
    /// One definition's archive inside the `definitions` section.
    Definition(u32),
    /// Rebuilding a core module from the file.
    Materialize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Header => f.write_str("header"),
            Location::Directory => f.write_str("section directory"),
            Location::Section(name) => write!(f, "section {name}"),
            Location::Definition(i) => write!(f, "section definitions: definition {i}"),
            Location::Materialize => f.write_str("materialize"),
        }
    }
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadCause {
    /// The file could not be opened or mapped.
    #[error("cannot read: {0}")]
    Io(String),
    /// The file shrank while it was mapped and read: what was read from it cannot be trusted
    /// (see [`guard_truncation`](irkit_io::guard_truncation)).
    #[error("the file changed (it was truncated) while it was being read")]
    Changed,
    /// The first eight bytes are not the irkit module magic.
    #[error("not an irkit module (bad magic {0:02x?})")]
    BadMagic(Vec<u8>),
    /// A format major version this reader does not read.
    #[error(
        "format version {found_major}.{found_minor} is not supported: this reader reads \
         1.x to {reader_major}.x (it writes {reader_major}.{reader_minor})"
    )]
    Version {
        /// The file's major version.
        found_major: u16,
        /// The file's minor version.
        found_minor: u16,
        /// The reader's major version.
        reader_major: u16,
        /// The reader's minor version.
        reader_minor: u16,
    },
    /// The bytes end before something they announce.
    #[error("truncated: {0}")]
    Truncated(String),
    /// The blake3 hash of the bytes differs from the one recorded for them.
    #[error("hash mismatch")]
    HashMismatch,
    /// The rkyv archive failed its structural check (bytecheck).
    #[error("invalid archive: {0}")]
    Archive(String),
    /// An index inside the archive points outside what it indexes.
    #[error("{what} {index} out of range ({len} entries)")]
    IndexOutOfRange {
        /// What kind of index (`pool reference`, `string index`, ...).
        what: &'static str,
        /// The index found.
        index: u64,
        /// The number of entries it indexes.
        len: u64,
    },
    /// Nesting deeper than [`irkit_core::MAX_NESTING`] (`spec/format.md` §4): an instruction
    /// of a definition's tree (or of the root's decorations) with more ancestors, or a pool
    /// entry deeper as a value.
    #[error("{what} {index}: nested deeper than {limit} levels (the nesting limit)")]
    TooDeep {
        /// `instruction` (a local index) or `pool entry`.
        what: &'static str,
        /// Its index.
        index: u64,
        /// The limit, [`irkit_core::MAX_NESTING`].
        limit: u32,
    },
    /// Any other inconsistency.
    #[error("{0}")]
    Malformed(String),
}

/// A failure to read a module file: the file (or `<memory>`), where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {location}: {cause}")]
pub struct ReadError {
    /// The file's path as given, or `<memory>`.
    pub file: Arc<str>,
    /// Where in the file.
    pub location: Location,
    /// What is wrong.
    pub cause: ReadCause,
}

impl ReadError {
    pub(crate) fn new(file: &Arc<str>, location: Location, cause: ReadCause) -> ReadError {
        ReadError {
            file: file.clone(),
            location,
            cause,
        }
    }
}

/// A module the writer cannot represent, or an I/O failure while saving it.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// More entries than the format's fields can count.
    #[error("too many {what}: {count} (the format allows at most {max})")]
    TooLarge {
        /// What overflowed.
        what: &'static str,
        /// How many there are.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A reference the format has no encoding for (into another definition's body, to the
    /// module root, to a removed or detached instruction, a pool cycle, ...).
    #[error("cannot encode {0}")]
    Unrepresentable(String),
    /// The module nests deeper than [`irkit_core::MAX_NESTING`]: readers would refuse the file.
    #[error("instruction {}: {nesting}", nesting.inst().index())]
    TooDeep {
        /// Which depth, and the first instruction over the limit.
        nesting: irkit_core::Nesting,
    },
    /// rkyv refused to serialize (should not happen: the schema is plain data).
    #[error("archive serialization failed: {0}")]
    Archive(String),
    /// Writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The destination path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// A front end propagates a write failure with `?` into the one error of its whole path
/// ([`irkit_core::Error`]), next to build and verification errors.
impl From<WriteError> for irkit_core::Error {
    fn from(e: WriteError) -> irkit_core::Error {
        irkit_core::Error::Write(Box::new(e))
    }
}
