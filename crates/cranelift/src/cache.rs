//! The code cache: compiled functions stored in a directory by key ([`crate::fingerprint`]),
//! so that a build neither lowers nor compiles the functions whose code cannot differ from a
//! previous build's (spec/backends.md, "The code cache", describes the layout and the entry
//! format byte by byte). An [`Entry`] holds what defining the function needs without lowering
//! it: the code, what its name table denotes ([`crate::names`]) and its trap messages.
//!
//! An entry is never trusted: one that cannot be read, is too large, has the wrong magic,
//! version or key, a checksum that does not match (it covers the header's fields, the key
//! among them, and the payload), or content that does not decode (an alignment that is not a
//! power of two, a relocation outside the code or naming no name-table entry, an unknown kind
//! or tag, a message that is not UTF-8) is a miss; the function is compiled again and the
//! entry rewritten. Reading is bounded ([`read_sealed`]): a file larger than [`WHOLE`] has its
//! header checked against the key and its own length, and its bytes hashed piece by piece,
//! before it is read into memory, so a damaged cache costs a build no more memory than a clean
//! one. Entries are written to a temporary file in the entry's own directory and renamed over
//! the final name, so a reader (in this process or another sharing the directory) sees a whole
//! entry or none; two writers of one key write the same bytes, and the last rename wins.
//!
//! Entries are read from the pack when it holds them ([`pack`]: one file with a build's
//! entries, each checked as a file's), else from their files.
//!
//! This file owns the directory ([`CodeCache`]: where an entry lives, getting, storing,
//! counting, the warning); an entry's bytes are [`entry`]'s, the bounded read [`read`]'s, and
//! the pack [`pack`]'s, each using only those before it.
//!
//! A cache that cannot be written (a directory that cannot be created, a full disk) does not
//! fail the build: the first such error is kept as a warning ([`CodeCache::warning`]).
//!
//! A remote store may sit behind the directory, or replace it ([`remote`]: spec/backends.md,
//! "A remote code cache"): what the directory lacks is fetched for the whole build before any
//! function is compiled ([`CodeCache::prefetch`]), each entry taken as an entry file is, after
//! the same checks; what the store lacks is sent once the build is done
//! ([`CodeCache::finish`]). Records are [`record`]'s.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::fingerprint::{FORMAT_VERSION, Key};

mod entry;
mod pack;
mod read;
mod record;
mod remote;

pub(crate) use entry::Entry;
use entry::{HEADER, MAX_PAYLOAD, Sum, decode, decode_with, encode, entry_seal};
use pack::{Gathered, Held, Loading, PACK_NAME};
use read::{Unread, WHOLE, read_sealed};
pub(crate) use remote::RemoteLayer;
pub use remote::{RemoteOptions, RemoteStats};

/// A code cache (a directory, a remote store, or both), shared by the threads of one build.
#[derive(Debug)]
pub(crate) struct CodeCache {
    /// `DIR/irkit-code-v<FORMAT_VERSION>`, if there is a directory.
    root: Option<PathBuf>,
    /// The directory as given (for messages).
    given: PathBuf,
    /// The remote store, if there is one.
    remote: Option<RemoteLayer>,
    /// The first write error.
    warning: Mutex<Option<String>>,
    /// Entries found and used.
    pub(crate) hits: AtomicUsize,
    /// Entries present but rejected.
    pub(crate) rejected: AtomicUsize,
    /// Entries written.
    pub(crate) stored: AtomicUsize,
    /// Bytes of entry files read into memory (a file refused by its header, or by its
    /// checksum while hashed piece by piece, is not: see [`read_sealed`]).
    pub(crate) loaded: AtomicU64,
    /// The pack, read on a thread of its own from when the cache is opened ([`pack`]).
    pack: Loading,
    /// The entries this build took or stored, for the next pack.
    gathered: Gathered,
}

impl CodeCache {
    /// The cache in directory `dir` (created if missing; if it cannot be, every lookup misses
    /// and [`CodeCache::warning`] says why).
    #[cfg(test)]
    pub(crate) fn open(dir: &Path) -> CodeCache {
        CodeCache::with(Some(dir), None)
    }

    /// The cache in directory `dir`, if given, in front of the store `remote`, if given.
    pub(crate) fn with(dir: Option<&Path>, remote: Option<RemoteLayer>) -> CodeCache {
        let root = dir.map(|d| d.join(format!("irkit-code-v{FORMAT_VERSION}")));
        let created = root.as_deref().map(std::fs::create_dir_all);
        let pack = match &root {
            Some(root) => Loading::start(root.join(PACK_NAME)),
            None => Loading::empty(),
        };
        let cache = CodeCache {
            root,
            given: dir.map(Path::to_path_buf).unwrap_or_default(),
            remote,
            warning: Mutex::new(None),
            hits: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            loaded: AtomicU64::new(0),
            pack,
            gathered: Gathered::default(),
        };
        if let Some(Err(e)) = created {
            cache.warn(&e);
        }
        cache
    }

    /// The first error met writing the cache, as a one-line message.
    pub(crate) fn warning(&self) -> Option<String> {
        self.warning.lock().ok().and_then(|w| w.clone())
    }

    fn warn(&self, e: &dyn std::fmt::Display) {
        self.note(&format!(
            "code cache {}: cannot write: {e} (building without storing code)",
            self.given.display()
        ));
    }

    /// Keeps `message` as the warning, if there is none yet.
    pub(crate) fn note(&self, message: &str) {
        if let Ok(mut w) = self.warning.lock()
            && w.is_none()
        {
            *w = Some(message.to_string());
        }
    }

    /// Where the entry of `key` lives (`None` without a directory).
    pub(crate) fn path(&self, key: &Key) -> Option<PathBuf> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let hex: String = key
            .iter()
            .flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
            .map(char::from)
            .collect();
        Some(self.root.as_ref()?.join(&hex[..2]).join(&hex[2..]))
    }

    /// Whether a remote store is behind the cache.
    pub(crate) fn has_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// Fetches from the remote store, if there is one, what the build of `functions` (each
    /// function's name and key, in module order; keys under target `prefix`) may take from
    /// it and the directory lacks (neither in the pack nor as a file).
    pub(crate) fn prefetch(&self, prefix: &[u8; 32], functions: &[(String, Key)]) {
        if let Some(remote) = &self.remote {
            let pack = self.pack.get();
            let local =
                |k: &Key| pack.entry(k).is_some() || self.path(k).is_some_and(|p| p.is_file());
            remote.prefetch(prefix, functions, local);
        }
    }

    /// What the build did with the remote store, if there is one.
    pub(crate) fn remote_stats(&self) -> Option<RemoteStats> {
        self.remote.as_ref().map(RemoteLayer::stats)
    }

    /// The entry stored under `key`, if a valid one is there (in the pack, else in its file),
    /// with where it was found (for [`CodeCache::keep`]).
    pub(crate) fn get(&self, key: &Key) -> Option<(Entry, Held)> {
        let in_pack = self.pack.get().entry(key);
        if let Some((bytes, range)) = &in_pack
            && let Some(entry) = decode_with(bytes, key, Sum::Covered)
        {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Some((entry, Held::Pack(range.clone())));
        }
        if let Some(remote) = &self.remote
            && let Some(bytes) = remote.fetched(key)
        {
            if let Some(entry) = decode(bytes, key) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                remote.took(key);
                return Some((entry, Held::Own(bytes.to_vec())));
            }
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
        let path = self.path(key)?;
        let read = read_sealed(
            &path,
            HEADER as u64 + MAX_PAYLOAD,
            WHOLE,
            HEADER,
            |head, len| entry_seal(head, len, key),
        );
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(unread) => {
                if in_pack.is_some() || unread == Unread::Refused {
                    self.rejected.fetch_add(1, Ordering::Relaxed);
                }
                return None;
            }
        };
        self.loaded.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        match decode(&bytes, key) {
            Some(entry) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some((entry, Held::Own(bytes)))
            }
            None => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Notes that function `order` of the build (its position in the module) took the entry
    /// of `key` found at `held`, for the next pack.
    pub(crate) fn keep(&self, order: u32, key: &Key, held: Held) {
        self.gathered.keep(order, *key, held);
    }

    /// Counts an entry found but unusable for the function at hand (its names do not resolve
    /// in this build, see `crate::names::resolve`).
    pub(crate) fn reject(&self) {
        self.hits.fetch_sub(1, Ordering::Relaxed);
        self.rejected.fetch_add(1, Ordering::Relaxed);
    }

    /// Stores `entry` under `key` (atomically; errors become the warning), the entry of
    /// function `order` of the build. An entry the format cannot express is not stored.
    pub(crate) fn put(&self, order: u32, key: &Key, entry: &Entry) {
        let Some(bytes) = encode(key, entry) else {
            return;
        };
        match self.write_file(key, &bytes) {
            Ok(()) => {
                self.stored.fetch_add(1, Ordering::Relaxed);
                self.gathered.keep(order, *key, Held::Own(bytes));
            }
            Err(e) => self.warn(&e),
        }
    }

    /// Writes the entry file of `key` (atomically); nothing without a directory.
    fn write_file(&self, key: &Key, bytes: &[u8]) -> std::io::Result<()> {
        let Some(path) = self.path(key) else {
            return Ok(());
        };
        let Some(dir) = path.parent() else {
            return Ok(());
        };
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
        tmp.write_all(bytes)?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Ends the build: sends the remote store, if there is one, the groups whose records do
    /// not list the build's entries ([`remote`]); then rewrites the pack with the entries the
    /// build took and stored, when it differs enough from the one read ([`pack`]), else
    /// writes the entries taken from the remote store as files. A pack that cannot be written
    /// is not reported: the entries are in their files (or their own writes failed, and said
    /// so), and a cache shared read-only would otherwise warn on every build.
    pub(crate) fn finish(&self) {
        let pack = self.pack.get();
        if let Some(remote) = &self.remote {
            let have = self.gathered.keys();
            let stale = remote.stale_keys(|k| have.contains(k));
            if !stale.is_empty() {
                remote.upload(|k| have.contains(k), &self.gathered.bytes_of(pack, &stale));
            }
        }
        let Some(root) = &self.root else {
            return;
        };
        if let Some(entries) = self.gathered.rewrite(pack) {
            let _ = pack::write(&root.join(PACK_NAME), pack, &entries);
        } else if let Some(remote) = &self.remote {
            for (key, bytes) in remote.taken() {
                if let Err(e) = self.write_file(&key, bytes) {
                    self.warn(&e);
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::entry::MAGIC;
    use super::entry::tests::sample;
    use super::*;

    /// A sparse file of `len` bytes at `path` starting with `head`.
    fn planted(path: &Path, head: &[u8], len: u64) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut file = std::fs::File::create(path).unwrap();
        file.write_all(head).unwrap();
        file.set_len(len).unwrap();
    }

    /// The first bytes of an entry of `key` whose payload is `len` bytes (its checksum wrong).
    fn header_of(key: &Key, len: u64) -> Vec<u8> {
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        head.extend_from_slice(key);
        head.extend_from_slice(&len.to_le_bytes());
        head.extend_from_slice(&[0x5a; 32]);
        head
    }

    #[test]
    fn planted_large_entries_are_refused_before_they_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CodeCache::open(dir.path());
        let gib = 1u64 << 30;
        let keys: Vec<Key> = (0..5u8).map(|k| [k; 32]).collect();
        // Zeros; a header claiming the whole file, beyond the bound; a header of another
        // key; one whose length is not the rest of the file; a sealed-looking header within
        // the bound whose checksum is wrong (hashed piece by piece, never held).
        let within = MAX_PAYLOAD - 1;
        let plants = [
            (Vec::new(), gib),
            (header_of(&keys[1], gib - HEADER as u64), gib),
            (header_of(&[9; 32], within), HEADER as u64 + within),
            (header_of(&keys[3], within), HEADER as u64 + within + 1),
            (header_of(&keys[4], within), HEADER as u64 + within),
        ];
        for (key, (head, len)) in keys.iter().zip(plants) {
            planted(&cache.path(key).unwrap(), &head, len);
            assert!(cache.get(key).is_none());
        }
        assert_eq!(cache.rejected.load(Ordering::Relaxed), 5);
        assert_eq!(cache.loaded.load(Ordering::Relaxed), 0);
        // Small files are read whole, their header checked from memory.
        planted(&cache.path(&[5; 32]).unwrap(), &[], 100);
        assert!(cache.get(&[5; 32]).is_none());
        assert_eq!(cache.loaded.load(Ordering::Relaxed), 100);
    }

    #[test]
    fn a_large_entry_is_hashed_then_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CodeCache::open(dir.path());
        let key = [4u8; 32];
        let mut big = sample();
        big.code.bytes = (0..3 * WHOLE).map(|i| (i % 251) as u8).collect();
        cache.put(0, &key, &big);
        let len = std::fs::metadata(cache.path(&key).unwrap()).unwrap().len();
        assert!(len > WHOLE);
        assert_eq!(cache.get(&key).map(|(e, _)| e), Some(big.clone()));
        assert_eq!(cache.loaded.load(Ordering::Relaxed), len);
        // A flipped bit deep in it: refused while hashed.
        let mut bytes = std::fs::read(cache.path(&key).unwrap()).unwrap();
        bytes[2 * WHOLE as usize] ^= 1;
        std::fs::write(cache.path(&key).unwrap(), &bytes).unwrap();
        assert!(cache.get(&key).is_none());
        assert_eq!(cache.loaded.load(Ordering::Relaxed), len);
        assert_eq!(cache.rejected.load(Ordering::Relaxed), 1);
        // An entry beyond the bound is never stored.
        big.code.bytes = vec![0; MAX_PAYLOAD as usize];
        assert_eq!(encode(&key, &big), None);
    }
    #[test]
    fn entries_round_trip_through_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CodeCache::open(dir.path());
        let key = [3u8; 32];
        let entry = |c: &CodeCache| c.get(&key).map(|(e, _)| e);
        assert_eq!(entry(&cache), None);
        cache.put(0, &key, &sample());
        assert_eq!(entry(&cache), Some(sample()));
        assert_eq!(cache.stored.load(Ordering::Relaxed), 1);
        // Damaged on disk: a miss, counted as rejected.
        let path = cache.path(&key).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(entry(&cache), None);
        assert_eq!(cache.rejected.load(Ordering::Relaxed), 1);
        assert_eq!(cache.warning(), None);
    }

    #[test]
    fn a_cache_that_cannot_be_created_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, b"not a directory").unwrap();
        let cache = CodeCache::open(&file);
        assert!(cache.warning().unwrap().contains("cannot write"));
        cache.put(0, &[0u8; 32], &sample());
        assert!(cache.get(&[0u8; 32]).is_none());
    }
}
