//! A buffered blake3 hasher for the content-hash streams.
//!
//! The content hash (see `hash.rs`) is fed a few bytes at a time (an opcode, a reference, a
//! length), and `blake3::Hasher::update` has a fixed cost per call that dwarfs hashing four
//! bytes. [`Feed`] gathers the small pieces in a stack buffer and hands blake3 whole buffers.
//! blake3 is a stream hash, so the digest is the same however the input is split.

/// Bytes gathered before they are handed to blake3 (a multiple of blake3's 1 KiB chunk).
const BUF: usize = 8 * 1024;

/// A blake3 hasher that buffers small updates.
pub(crate) struct Feed {
    hasher: blake3::Hasher,
    buf: [u8; BUF],
    len: usize,
}

impl Feed {
    /// An empty stream.
    pub fn new() -> Feed {
        Feed {
            hasher: blake3::Hasher::new(),
            buf: [0; BUF],
            len: 0,
        }
    }

    /// Appends `bytes` to the stream.
    #[inline]
    pub fn update(&mut self, bytes: &[u8]) {
        if let Some(room) = self.buf.get_mut(self.len..self.len + bytes.len()) {
            room.copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            self.spill(bytes);
        }
    }

    /// Flushes the buffer and hands blake3 `bytes` too (or buffers them if they now fit).
    #[cold]
    fn spill(&mut self, bytes: &[u8]) {
        self.hasher.update(&self.buf[..self.len]);
        self.len = 0;
        if bytes.len() < BUF {
            self.buf[..bytes.len()].copy_from_slice(bytes);
            self.len = bytes.len();
        } else {
            self.hasher.update(bytes);
        }
    }

    /// The digest of everything appended since the stream began (or since the last `finish`),
    /// and a fresh empty stream, so one `Feed` can hash many short streams.
    pub fn finish(&mut self) -> [u8; 32] {
        self.hasher.update(&self.buf[..self.len]);
        self.len = 0;
        let digest = *self.hasher.finalize().as_bytes();
        self.hasher.reset();
        digest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However the stream is split, and across `finish`, the digest is blake3's of the whole.
    #[test]
    fn digest_matches_blake3_for_any_split() {
        let data: Vec<u8> = (0..3 * BUF as u32 + 77)
            .map(|k| (k * 31 % 251) as u8)
            .collect();
        let mut feed = Feed::new();
        for piece in [1, 3, 7, 100, BUF - 1, BUF, BUF + 5, 3 * BUF] {
            for chunk in data.chunks(piece) {
                feed.update(chunk);
            }
            assert_eq!(
                feed.finish(),
                *blake3::hash(&data).as_bytes(),
                "pieces of {piece}"
            );
        }
        assert_eq!(feed.finish(), *blake3::hash(b"").as_bytes());
    }
}
