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
    /// Whether part of the current stream went to `hasher`.
    spilled: bool,
    /// In capturing mode ([`Feed::capturing`]): the streams finished so far.
    captured: Option<Captured>,
}

/// Streams a capturing [`Feed`] finished: their bytes, to be hashed together
/// ([`Feed::captured_digests`]), or the digest of one too long to keep.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    streams: Vec<Result<std::ops::Range<usize>, [u8; 32]>>,
}

impl Feed {
    /// An empty stream.
    pub fn new() -> Feed {
        Feed {
            hasher: blake3::Hasher::new(),
            buf: [0; BUF],
            len: 0,
            spilled: false,
            captured: None,
        }
    }

    /// An empty stream whose [`Feed::finish`] keeps each stream and gives zeros for now: the
    /// digests of the streams finished come all at once, from
    /// [`Feed::captured_digests`], which hashes many at a time (`crate::batch`).
    pub fn capturing() -> Feed {
        Feed {
            captured: Some(Captured::default()),
            ..Feed::new()
        }
    }

    /// The digest of each stream finished since [`Feed::capturing`] (or the last call), in
    /// order; the digests `finish` gave were placeholders.
    pub fn captured_digests(&mut self) -> Vec<[u8; 32]> {
        let Some(c) = self.captured.as_mut() else {
            return Vec::new();
        };
        let c = std::mem::take(c);
        let msgs: Vec<&[u8]> = c
            .streams
            .iter()
            .filter_map(|s| s.clone().ok().map(|r| &c.bytes[r]))
            .collect();
        let mut hashed = crate::batch::hash_all(&msgs).into_iter();
        c.streams
            .iter()
            .map(|s| match s {
                Ok(_) => hashed.next().unwrap_or([0; 32]),
                Err(done) => *done,
            })
            .collect()
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
        self.spilled = true;
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
        if let Some(c) = self.captured.as_mut()
            && !self.spilled
        {
            let at = c.bytes.len();
            c.bytes.extend_from_slice(&self.buf[..self.len]);
            c.streams.push(Ok(at..c.bytes.len()));
            self.len = 0;
            return [0; 32];
        }
        self.hasher.update(&self.buf[..self.len]);
        self.len = 0;
        self.spilled = false;
        let digest = *self.hasher.finalize().as_bytes();
        self.hasher.reset();
        if let Some(c) = self.captured.as_mut() {
            c.streams.push(Err(digest));
        }
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

    /// A capturing feed gives, all at once, the digests a plain one gives stream by stream,
    /// for streams short enough to keep and for longer ones.
    #[test]
    fn captured_digests_are_the_streams_digests() {
        let data: Vec<u8> = (0..2 * BUF as u32 + 9)
            .map(|k| (k * 7 % 253) as u8)
            .collect();
        let lens = [
            0,
            1,
            1023,
            1024,
            1025,
            1300,
            2048,
            2049,
            BUF - 1,
            BUF,
            BUF + 1,
            2 * BUF + 9,
        ];
        let mut plain = Feed::new();
        let mut capturing = Feed::capturing();
        let mut want = Vec::new();
        for (k, &n) in lens.iter().chain(lens.iter().rev()).enumerate() {
            for piece in data[..n].chunks(1 + k * 37) {
                plain.update(piece);
                capturing.update(piece);
            }
            want.push(plain.finish());
            capturing.finish();
        }
        assert_eq!(capturing.captured_digests(), want);
        assert!(capturing.captured_digests().is_empty());
    }
}
