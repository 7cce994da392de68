//! The code cache's pack: the entries of one build in one file, `DIR/irkit-code-v<N>/pack`, so
//! that a warm build reads one file instead of one per function (spec/backends.md, "The
//! pack"). The pack only makes reading faster; it is never trusted more than an entry file:
//!
//! * each entry in it is the bytes an entry file holds, and is taken only after the checks an
//!   entry file passes but its checksum (`super::entry::decode_with`, then the target and
//!   name checks): one hash of the whole pack, checked when it is read, covers the entries'
//!   bytes; an entry the pack lacks, or one it holds that does not decode, is looked up as a
//!   file;
//! * reading it is bounded (a regular file of at most [`MAX_PACK`] bytes; one larger than
//!   `super::read::WHOLE` has its header checked and its bytes hashed piece by piece before
//!   it is read, `super::read::read_sealed`, so a damaged pack never costs its size in
//!   memory; the scan of its entries stops at the first one that does not frame), and
//!   anything wrong with it (missing, foreign, truncated, a flipped bit, garbage, not a
//!   regular file) leaves a pack with fewer entries, or none;
//! * it is replaced by renaming a whole new file over it, as entries are, so a reader sees an
//!   old pack or a new one; two builds sharing the directory each write a whole pack, and the
//!   last rename wins.
//!
//! A build rewrites the pack when what it used differs enough from it ([`Gathered::rewrite`]):
//! after a cold build, or when many functions changed; after a one-function edit the new entry
//! is read from its file and the pack stays as it is.

use std::collections::HashMap;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::entry::{HEADER, frame};
use super::read::{WHOLE, read_sealed};
use crate::fingerprint::{FORMAT_VERSION, Key};

/// The first bytes of a pack.
pub(crate) const PACK_MAGIC: &[u8; 8] = b"IRKPACK\0";

/// Bytes before the first entry: magic, the hash, version, entry count.
const PACK_HEADER: usize = 8 + 32 + 4 + 4;

/// Where the bytes the hash covers start: the version, the count and the entries.
const HASHED: usize = 8 + 32;

/// The largest pack read (a larger one is ignored, and the entries read as files).
pub(crate) const MAX_PACK: u64 = 1 << 30;

/// The pack's file name in the cache's versioned directory.
pub(crate) const PACK_NAME: &str = "pack";

/// A pack as read: its bytes and where the entry of each key lies in them.
#[derive(Debug, Default)]
pub(crate) struct Pack {
    bytes: Vec<u8>,
    index: HashMap<Key, Range<usize>>,
}

impl Pack {
    /// The pack at `path`; empty if there is none or it cannot be read (see the module doc).
    pub(crate) fn read(path: &Path) -> Pack {
        read_sealed(path, MAX_PACK, WHOLE, PACK_HEADER, pack_seal)
            .map(Pack::parse)
            .unwrap_or_default()
    }

    /// The pack in `bytes`, if its header is this version's and the entries' bytes hash to
    /// the header's hash (else an empty pack): the entries that frame (magic, version, key, a
    /// payload length that fits), up to the first that does not or the count in the header.
    /// Nothing in an entry is checked here beyond its frame: a framed entry is checked when
    /// it is taken, but for its own checksum, which the pack's hash covers.
    pub(crate) fn parse(bytes: Vec<u8>) -> Pack {
        let mut index = HashMap::new();
        let count = match header_count(&bytes) {
            Some(n) => n,
            None => return Pack::default(),
        };
        let mut at = PACK_HEADER;
        for _ in 0..count {
            let Some((key, end)) = framed_end(&bytes, at) else {
                break;
            };
            index.entry(key).or_insert(at..end);
            at = end;
        }
        Pack { bytes, index }
    }

    /// The bytes of `key`'s entry in the pack, and where they lie, if it has one.
    pub(crate) fn entry(&self, key: &Key) -> Option<(&[u8], Range<usize>)> {
        let range = self.index.get(key)?.clone();
        Some((&self.bytes[range.clone()], range))
    }

    /// How many keys the pack has entries for.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }
}

/// The entry count of a pack's header, if `bytes` start with the magic and this version and
/// the bytes from [`HASHED`] on hash to the header's hash (checked last: a foreign file is
/// not hashed).
fn header_count(bytes: &[u8]) -> Option<u32> {
    let head = bytes.get(..PACK_HEADER)?;
    let version = u32::from_le_bytes(head[40..44].try_into().ok()?);
    if head[..8] != PACK_MAGIC[..] || version != FORMAT_VERSION {
        return None;
    }
    let whole = blake3::hash(&bytes[HASHED..]);
    (head[8..40] == whole.as_bytes()[..])
        .then(|| u32::from_le_bytes(head[44..48].try_into().unwrap_or_default()))
}

/// The check `super::read::read_sealed` makes of a large pack's header `head` before reading
/// it: the magic and this version; then a hasher fed with the header's bytes the pack's hash
/// covers (the version and the count), and that hash.
fn pack_seal(head: &[u8], _len: u64) -> Option<(blake3::Hasher, [u8; 32])> {
    let version = u32::from_le_bytes(head.get(40..44)?.try_into().ok()?);
    if head.get(..8)? != PACK_MAGIC || version != FORMAT_VERSION {
        return None;
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update(head.get(HASHED..PACK_HEADER)?);
    Some((hasher, head.get(8..HASHED)?.try_into().ok()?))
}

/// The key and the end of the entry framed at `at` in `bytes` (its header's magic, version
/// and payload length read, `super::entry::frame`; the length within the bytes left), if one
/// is.
fn framed_end(bytes: &[u8], at: usize) -> Option<(Key, usize)> {
    let (key, len) = frame(bytes.get(at..)?)?;
    let end = at
        .checked_add(HEADER)?
        .checked_add(usize::try_from(len).ok()?)?;
    (end <= bytes.len()).then_some((key, end))
}

/// The pack, read on a thread of its own from when it is started ([`Pack::read`]), waited for
/// when first asked for (an empty pack if no thread could be started).
#[derive(Debug)]
pub(crate) struct Loading {
    thread: Mutex<Option<std::thread::JoinHandle<Pack>>>,
    pack: std::sync::OnceLock<Pack>,
}

impl Loading {
    /// Starts reading the pack at `path`.
    pub(crate) fn start(path: PathBuf) -> Loading {
        let thread = std::thread::Builder::new()
            .name("irkit-cache-pack".into())
            .spawn(move || Pack::read(&path))
            .ok();
        Loading {
            thread: Mutex::new(thread),
            pack: std::sync::OnceLock::new(),
        }
    }

    /// No pack (a cache without a directory).
    pub(crate) fn empty() -> Loading {
        Loading {
            thread: Mutex::new(None),
            pack: std::sync::OnceLock::new(),
        }
    }

    /// The pack, once read.
    pub(crate) fn get(&self) -> &Pack {
        self.pack.get_or_init(|| {
            let thread = self.thread.lock().ok().and_then(|mut t| t.take());
            thread.and_then(|t| t.join().ok()).unwrap_or_default()
        })
    }
}

/// Where an entry a build took or stored came from, for the next pack.
#[derive(Debug)]
pub(crate) enum Held {
    /// The pack read at the start of the build, at this range.
    Pack(Range<usize>),
    /// These bytes (read from the entry's file, or just encoded).
    Own(Vec<u8>),
}

/// The entries of one build, gathered (from every thread) for the next pack: for each
/// function, its position in the module, its key and its entry's bytes.
#[derive(Debug, Default)]
pub(crate) struct Gathered(Mutex<Vec<(u32, Key, Held)>>);

impl Gathered {
    /// Notes that function `order` of the build has the entry `held` under `key`.
    pub(crate) fn keep(&self, order: u32, key: Key, held: Held) {
        if let Ok(mut all) = self.0.lock() {
            all.push((order, key, held));
        }
    }

    /// The keys gathered so far.
    pub(crate) fn keys(&self) -> std::collections::HashSet<Key> {
        self.0
            .lock()
            .map(|all| all.iter().map(|(_, k, _)| *k).collect())
            .unwrap_or_default()
    }

    /// The bytes of the gathered entries of `wanted` keys (`old`'s for those held there).
    pub(crate) fn bytes_of(
        &self,
        old: &Pack,
        wanted: &std::collections::HashSet<Key>,
    ) -> HashMap<Key, Vec<u8>> {
        let Ok(all) = self.0.lock() else {
            return HashMap::new();
        };
        all.iter()
            .filter(|(_, k, _)| wanted.contains(k))
            .filter_map(|(_, k, held)| {
                let bytes = match held {
                    Held::Pack(range) => old.bytes.get(range.clone())?.to_vec(),
                    Held::Own(bytes) => bytes.clone(),
                };
                Some((*k, bytes))
            })
            .collect()
    }

    /// The gathered entries, one per key, in module order (the first function's, if several
    /// functions have one key), if the pack `old` should be rewritten with them: when the
    /// keys the build used that `old` did not serve, plus the keys `old` holds that the build
    /// did not use, are more than an eighth of the keys the build used (no pack, a cold
    /// build, many edits, another program); never for no entry at all. The gathered entries
    /// are taken.
    pub(crate) fn rewrite(&self, old: &Pack) -> Option<Vec<(Key, Held)>> {
        let mut all = std::mem::take(&mut *self.0.lock().ok()?);
        all.sort_by_key(|&(order, _, _)| order);
        let mut seen = std::collections::HashSet::with_capacity(all.len());
        let mut served = 0usize;
        let mut in_old = 0usize;
        let mut kept = Vec::with_capacity(all.len());
        for (_, key, held) in all {
            if seen.insert(key) {
                served += usize::from(matches!(held, Held::Pack(_)));
                in_old += usize::from(old.index.contains_key(&key));
                kept.push((key, held));
            }
        }
        let differ = (kept.len() - served) + old.len().saturating_sub(in_old);
        (!kept.is_empty() && differ.saturating_mul(8) > kept.len()).then_some(kept)
    }
}

/// Writes the pack of `entries` (`old`'s bytes for those held there) to `path`: a temporary
/// file beside it, renamed over it. Nothing is written if the pack would be larger than a
/// reader reads ([`MAX_PACK`]): entries are then read from their files.
pub(crate) fn write(path: &Path, old: &Pack, entries: &[(Key, Held)]) -> std::io::Result<()> {
    fn bytes<'a>(old: &'a Pack, held: &'a Held) -> &'a [u8] {
        match held {
            Held::Pack(range) => &old.bytes[range.clone()],
            Held::Own(bytes) => bytes,
        }
    }
    let size = entries.iter().fold(PACK_HEADER as u64, |n, (_, h)| {
        n + bytes(old, h).len() as u64
    });
    let Ok(count) = u32::try_from(entries.len()) else {
        return Ok(());
    };
    if size > MAX_PACK {
        return Ok(());
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update(&FORMAT_VERSION.to_le_bytes());
    hasher.update(&count.to_le_bytes());
    for (_, held) in entries {
        hasher.update(bytes(old, held));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-pack-")
        .tempfile_in(dir)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp);
    out.write_all(PACK_MAGIC)?;
    out.write_all(hasher.finalize().as_bytes())?;
    out.write_all(&FORMAT_VERSION.to_le_bytes())?;
    out.write_all(&count.to_le_bytes())?;
    for (_, held) in entries {
        out.write_all(bytes(old, held))?;
    }
    let tmp = out.into_inner().map_err(|e| e.into_error())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::entry::MAGIC;

    fn entry(key: u8, payload: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend_from_slice(MAGIC);
        e.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        e.extend_from_slice(&[key; 32]);
        e.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        e.extend_from_slice(&[0; 32]);
        e.extend_from_slice(payload);
        e
    }

    fn pack(count: u32, entries: &[Vec<u8>]) -> Vec<u8> {
        let mut hashed = FORMAT_VERSION.to_le_bytes().to_vec();
        hashed.extend_from_slice(&count.to_le_bytes());
        entries.iter().for_each(|e| hashed.extend_from_slice(e));
        let mut p = PACK_MAGIC.to_vec();
        p.extend_from_slice(blake3::hash(&hashed).as_bytes());
        p.extend_from_slice(&hashed);
        p
    }

    #[test]
    fn a_pack_indexes_its_framed_entries() {
        let (a, b) = (entry(1, b"abc"), entry(2, b""));
        let p = Pack::parse(pack(2, &[a.clone(), b.clone()]));
        assert_eq!(p.len(), 2);
        assert_eq!(p.entry(&[1; 32]).unwrap().0, &a[..]);
        assert_eq!(p.entry(&[2; 32]).unwrap().0, &b[..]);
        assert!(p.entry(&[3; 32]).is_none());
    }

    #[test]
    fn the_scan_stops_at_the_first_entry_that_does_not_frame() {
        let (a, b) = (entry(1, b"abc"), entry(2, b"de"));
        // A count larger than the entries, a cut entry, a huge length, a foreign version.
        assert_eq!(
            Pack::parse(pack(u32::MAX, std::slice::from_ref(&a))).len(),
            1
        );
        let cut = pack(2, &[a.clone(), b[..b.len() - 1].to_vec()]);
        assert_eq!(Pack::parse(cut).len(), 1);
        let mut huge = b.clone();
        huge[44..52].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Pack::parse(pack(2, &[a.clone(), huge])).len(), 1);
        let mut foreign = a.clone();
        foreign[8] ^= 1;
        assert_eq!(Pack::parse(pack(2, &[foreign, b.clone()])).len(), 0);
        // A damaged header (magic, hash, version, count), a flipped bit in an entry, a cut
        // pack: no entry at all.
        let p = pack(2, &[a, b]);
        for at in [3, 20, 41, 45, 60, p.len() - 1] {
            let mut q = p.clone();
            q[at] ^= 1;
            assert_eq!(Pack::parse(q).len(), 0, "bit flipped at {at}");
        }
        assert_eq!(Pack::parse(p[..p.len() - 1].to_vec()).len(), 0);
        assert_eq!(Pack::parse(p[..10].to_vec()).len(), 0);
        assert_eq!(Pack::parse(Vec::new()).len(), 0);
    }

    #[test]
    fn the_first_entry_of_a_key_is_the_one_taken() {
        let (a, a2) = (entry(1, b"first"), entry(1, b"second"));
        let p = Pack::parse(pack(2, &[a.clone(), a2]));
        assert_eq!(p.len(), 1);
        assert_eq!(p.entry(&[1; 32]).unwrap().0, &a[..]);
    }

    #[test]
    fn a_pack_is_rewritten_only_when_it_differs_enough() {
        let old = Pack::parse(pack(
            16,
            &(0..16).map(|k| entry(k, b"x")).collect::<Vec<_>>(),
        ));
        let from_pack = |g: &Gathered, k: u8| {
            let range = old.entry(&[k; 32]).unwrap().1;
            g.keep(u32::from(k), [k; 32], Held::Pack(range));
        };
        // One function of sixteen edited: the pack stays.
        let g = Gathered::default();
        (0..15).for_each(|k| from_pack(&g, k));
        g.keep(15, [99; 32], Held::Own(entry(99, b"y")));
        assert!(g.rewrite(&old).is_none());
        // Three edited: rewritten, in module order, one entry per key.
        let g = Gathered::default();
        (3..16).rev().for_each(|k| from_pack(&g, k));
        (0..3).for_each(|k| g.keep(k, [100 + k as u8; 32], Held::Own(Vec::new())));
        g.keep(20, [100; 32], Held::Own(Vec::new()));
        let kept = g.rewrite(&old).expect("rewritten");
        assert_eq!(kept.len(), 16);
        assert_eq!(kept[0].0, [100; 32]);
        assert_eq!(kept[3].0, [3; 32]);
        // A key of the pack kept from its file (its pack entry refused): not stale.
        let g = Gathered::default();
        (1..16).for_each(|k| from_pack(&g, k));
        g.keep(0, [0; 32], Held::Own(entry(0, b"x")));
        assert!(g.rewrite(&old).is_none());
        // No pack yet: written; nothing gathered: not.
        let g = Gathered::default();
        g.keep(0, [1; 32], Held::Own(Vec::new()));
        assert!(g.rewrite(&Pack::default()).is_some());
        assert!(Gathered::default().rewrite(&old).is_none());
    }

    #[test]
    fn a_written_pack_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(PACK_NAME);
        let (a, b) = (entry(1, b"abc"), entry(2, b"defg"));
        let old = Pack::parse(pack(1, std::slice::from_ref(&a)));
        let range = old.entry(&[1; 32]).unwrap().1;
        let entries = vec![
            ([2; 32], Held::Own(b.clone())),
            ([1; 32], Held::Pack(range)),
        ];
        write(&path, &old, &entries).unwrap();
        let back = Pack::read(&path);
        assert_eq!(back.len(), 2);
        assert_eq!(back.entry(&[1; 32]).unwrap().0, &a[..]);
        assert_eq!(back.entry(&[2; 32]).unwrap().0, &b[..]);
        // Only the pack is left in the directory (no temporary file).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
