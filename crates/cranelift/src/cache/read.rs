//! Reading a code cache file bounded (spec/backends.md, "Never trusted, never fatal"): an
//! entry file or the pack is read into memory only when it is small, or when its header was
//! checked and its bytes hash to the checksum the header gives. A damaged or planted file, of
//! any size, costs the read of its header or its hashing, never its size in memory.

use std::io::{Read, Seek};
use std::path::Path;

/// The largest file read into memory in one call, its header checked after ([`read_sealed`]).
pub(crate) const WHOLE: u64 = 1 << 20;

/// The piece a larger file is hashed by before it is read.
const PIECE: usize = 1 << 16;

/// Why [`read_sealed`] read no bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unread {
    /// There is no file to open (or it cannot be opened).
    Missing,
    /// The file was opened and refused: not a regular file, larger than the bound, a header
    /// or checksum that is wrong, a short read.
    Refused,
}

/// The bytes of the file at `path`, read bounded: a regular file of at most `max` bytes. One
/// of at most `whole` bytes is read in one call (its header is checked by the caller, from
/// memory). A larger one's first `head` bytes are read first and given to `seal` with the
/// file's length; `seal` checks them and returns a hasher fed with the header bytes the
/// file's checksum covers, and that checksum. The rest of the file is then hashed in pieces
/// of [`PIECE`] bytes, and only if the checksum matches is the file read whole. So a file
/// with a wrong header costs the read of its header, and one with a wrong checksum its
/// hashing, never its size in memory.
///
/// The file is opened without blocking and looked at once open (a FIFO or device put in the
/// cache, even renamed over the file between a look and the open, is never read: it could
/// block or never end). Exactly the size the file had when looked at is read: a file changed
/// in the meantime (entries and packs are replaced by renaming, never rewritten) gives bytes
/// whose lengths or hash the caller refuses, or a short read, which is refused here.
pub(crate) fn read_sealed(
    path: &Path,
    max: u64,
    whole: u64,
    head: usize,
    seal: impl Fn(&[u8], u64) -> Option<(blake3::Hasher, [u8; 32])>,
) -> Result<Vec<u8>, Unread> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let mut file = options.open(path).map_err(|_| Unread::Missing)?;
    read_open(&mut file, max, whole, head, seal).ok_or(Unread::Refused)
}

/// [`read_sealed`] of the open `file`; `None` if it is refused.
fn read_open(
    file: &mut std::fs::File,
    max: u64,
    whole: u64,
    head: usize,
    seal: impl Fn(&[u8], u64) -> Option<(blake3::Hasher, [u8; 32])>,
) -> Option<Vec<u8>> {
    let meta = file.metadata().ok()?;
    let len = meta.len();
    if !meta.is_file() || len > max {
        return None;
    }
    if len > whole {
        let mut header = vec![0; head];
        file.read_exact(&mut header).ok()?;
        let (mut hasher, sum) = seal(&header, len)?;
        let mut piece = vec![0; PIECE];
        let mut left = len.saturating_sub(head as u64);
        while left > 0 {
            let n = usize::try_from(left.min(PIECE as u64)).ok()?;
            file.read_exact(&mut piece[..n]).ok()?;
            hasher.update(&piece[..n]);
            left -= n as u64;
        }
        if hasher.finalize() != sum {
            return None;
        }
        file.rewind().ok()?;
    }
    let mut bytes = vec![0; usize::try_from(len).ok()?];
    file.read_exact(&mut bytes).ok()?;
    Some(bytes)
}
