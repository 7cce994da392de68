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
//! Entries are read from the pack when it holds them (`crate::pack`: one file with a build's
//! entries, each checked as a file's), else from their files.
//!
//! A cache that cannot be written (a directory that cannot be created, a full disk) does not
//! fail the build: the first such error is kept as a warning ([`CodeCache::warning`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use cranelift_codegen::ir::LibCall;

use crate::code::{Code, CodeReloc, KNOWN_SYMBOLS, RELOC_KINDS, Target};
use crate::fingerprint::{FORMAT_VERSION, Key};
use crate::names::Name;
use crate::pack::{Gathered, Held, Loading, PACK_NAME};

mod read;

pub(crate) use read::{Unread, WHOLE, read_sealed};

/// The first bytes of every entry.
pub(crate) const MAGIC: &[u8; 8] = b"IRKCODE\0";

/// Bytes before the payload: magic, version, key, payload length, checksum.
pub(crate) const HEADER: usize = 8 + 4 + 32 + 8 + 32;

/// Where the checksum lies in the header: it covers the bytes before it and the payload.
const SUM: usize = HEADER - 32;

/// Bytes of one relocation in the payload.
const RELOC: usize = 4 + 1 + 1 + 4 + 8;

/// The largest payload (64 MiB): a larger entry is refused unread, and a function whose entry
/// would be larger is compiled every time, never stored.
pub(crate) const MAX_PAYLOAD: u64 = 1 << 26;

/// The largest alignment an entry may ask for.
const MAX_ALIGN: u64 = 1 << 16;

/// What the cache keeps of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The compiled code.
    pub(crate) code: Code,
    /// What each entry of its name table denotes (never [`Name::Raw`]).
    pub(crate) names: Vec<Name>,
    /// Its trap messages, in first-use order.
    pub(crate) messages: Vec<String>,
}

/// Bytes of one name in the payload.
const NAME: usize = 1 + 4;

/// The longest trap message read.
const MAX_MESSAGE: usize = 1 << 20;

/// A code cache directory, shared by the threads of one build.
#[derive(Debug)]
pub(crate) struct CodeCache {
    /// `DIR/irkit-code-v<FORMAT_VERSION>`.
    root: PathBuf,
    /// The directory as given (for messages).
    given: PathBuf,
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
    /// The pack, read on a thread of its own from when the cache is opened (`crate::pack`).
    pack: Loading,
    /// The entries this build took or stored, for the next pack.
    gathered: Gathered,
}

impl CodeCache {
    /// The cache in directory `dir` (created if missing; if it cannot be, every lookup misses
    /// and [`CodeCache::warning`] says why).
    pub(crate) fn open(dir: &Path) -> CodeCache {
        let root = dir.join(format!("irkit-code-v{FORMAT_VERSION}"));
        let created = std::fs::create_dir_all(&root);
        let path = root.join(PACK_NAME);
        let cache = CodeCache {
            root,
            given: dir.to_path_buf(),
            warning: Mutex::new(None),
            hits: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            loaded: AtomicU64::new(0),
            pack: Loading::start(path),
            gathered: Gathered::default(),
        };
        if let Err(e) = created {
            cache.warn(&e);
        }
        cache
    }

    /// The first error met writing the cache, as a one-line message.
    pub(crate) fn warning(&self) -> Option<String> {
        self.warning.lock().ok().and_then(|w| w.clone())
    }

    fn warn(&self, e: &dyn std::fmt::Display) {
        if let Ok(mut w) = self.warning.lock()
            && w.is_none()
        {
            *w = Some(format!(
                "code cache {}: cannot write: {e} (building without storing code)",
                self.given.display()
            ));
        }
    }

    /// Where the entry of `key` lives.
    pub(crate) fn path(&self, key: &Key) -> PathBuf {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let hex: String = key
            .iter()
            .flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
            .map(char::from)
            .collect();
        self.root.join(&hex[..2]).join(&hex[2..])
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
        let path = self.path(key);
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
        let path = self.path(key);
        let Some(dir) = path.parent() else {
            return;
        };
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
            tmp.write_all(&bytes)?;
            tmp.persist(&path).map_err(|e| e.error)?;
            Ok(())
        });
        match written {
            Ok(()) => {
                self.stored.fetch_add(1, Ordering::Relaxed);
                self.gathered.keep(order, *key, Held::Own(bytes));
            }
            Err(e) => self.warn(&e),
        }
    }

    /// Ends the build: rewrites the pack with the entries the build took and stored, when it
    /// differs enough from the one read (`crate::pack`). A pack that cannot be written is not
    /// reported: the entries are in their files (or their own writes failed, and said so),
    /// and a cache shared read-only would otherwise warn on every build.
    pub(crate) fn write_pack(&self) {
        let pack = self.pack.get();
        if let Some(entries) = self.gathered.rewrite(pack) {
            let _ = crate::pack::write(&self.root.join(PACK_NAME), pack, &entries);
        }
    }
}

/// The check [`read_sealed`] makes of a large entry file's `head` (its [`HEADER`] bytes),
/// `len` bytes long, looked up under `key`: the magic, this version and `key`, a payload
/// length of at most [`MAX_PAYLOAD`] that is the rest of the file; then a hasher fed with
/// the fields the checksum covers, and the checksum.
fn entry_seal(head: &[u8], len: u64, key: &Key) -> Option<(blake3::Hasher, [u8; 32])> {
    let (found, payload) = frame(head)?;
    if found != *key || payload > MAX_PAYLOAD || len.checked_sub(HEADER as u64) != Some(payload) {
        return None;
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update(head.get(..SUM)?);
    Some((hasher, head.get(SUM..HEADER)?.try_into().ok()?))
}

/// The checksum of an entry whose header starts with `fields` (its first [`SUM`] bytes:
/// magic, version, key, payload length) and whose payload is `payload`: the BLAKE3 hash of
/// those fields, then the payload.
fn checksum(fields: &[u8], payload: &[u8]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(fields);
    hasher.update(payload);
    *hasher.finalize().as_bytes()
}

/// The bytes of `entry` under `key`; `None` if a relocation kind, library routine or name
/// has no number in the format.
pub(crate) fn encode(key: &Key, entry: &Entry) -> Option<Vec<u8>> {
    let code = &entry.code;
    let mut payload = Vec::with_capacity(16 + code.bytes.len() + RELOC * code.relocs.len());
    payload.extend_from_slice(&code.alignment.to_le_bytes());
    payload.extend_from_slice(&u32::try_from(code.bytes.len()).ok()?.to_le_bytes());
    payload.extend_from_slice(&code.bytes);
    payload.extend_from_slice(&u32::try_from(code.relocs.len()).ok()?.to_le_bytes());
    for r in &code.relocs {
        let kind = RELOC_KINDS.iter().position(|&k| k == r.kind)?;
        let (tag, value) = match r.target {
            Target::Name(n) => (0u8, n),
            Target::LibCall(l) => (
                1,
                LibCall::all_libcalls().iter().position(|&x| x == l)? as u32,
            ),
            Target::Known(k) => (2, KNOWN_SYMBOLS.iter().position(|&x| x == k)? as u32),
            Target::SelfOffset(off) => (3, off),
        };
        payload.extend_from_slice(&r.offset.to_le_bytes());
        payload.push(u8::try_from(kind).ok()?);
        payload.push(tag);
        payload.extend_from_slice(&value.to_le_bytes());
        payload.extend_from_slice(&r.addend.to_le_bytes());
    }
    payload.extend_from_slice(&u32::try_from(entry.names.len()).ok()?.to_le_bytes());
    for n in &entry.names {
        let (tag, value) = match *n {
            Name::Ref(i) => (0u8, i),
            Name::Runtime(k) => (1, k),
            Name::Message(j) => (2, j),
            Name::Raw(_) => return None,
        };
        payload.push(tag);
        payload.extend_from_slice(&value.to_le_bytes());
    }
    payload.extend_from_slice(&u32::try_from(entry.messages.len()).ok()?.to_le_bytes());
    for t in &entry.messages {
        if t.len() > MAX_MESSAGE {
            return None;
        }
        payload.extend_from_slice(&(t.len() as u32).to_le_bytes());
        payload.extend_from_slice(t.as_bytes());
    }
    if payload.len() as u64 > MAX_PAYLOAD {
        return None;
    }
    Some(framed(key, &payload))
}

/// An entry: the header (magic, version, `key`, length, the [`checksum`] of those fields and
/// `payload`), then `payload`.
fn framed(key: &Key, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let sum = checksum(&out, payload);
    out.extend_from_slice(&sum);
    out.extend_from_slice(payload);
    out
}

/// Reads little-endian fields, failing at the end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
}

/// The entry in `bytes` if it is a valid entry for `key`.
pub(crate) fn decode(bytes: &[u8], key: &Key) -> Option<Entry> {
    decode_with(bytes, key, Sum::Check)
}

/// Whether [`decode_with`] checks the entry's checksum.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sum {
    /// Checked.
    Check,
    /// Not checked: the bytes are covered by a hash checked already (a pack's, see
    /// `crate::pack`).
    Covered,
}

/// The key and payload length of the entry `bytes` start with, if they start with the magic
/// and this version (the checksum and payload not looked at): an entry's frame, which the
/// pack's scan reads too (`crate::pack`).
pub(crate) fn frame(bytes: &[u8]) -> Option<(Key, u64)> {
    let mut r = Reader(bytes);
    if r.take(8)? != MAGIC || r.u32()? != FORMAT_VERSION {
        return None;
    }
    Some((r.array()?, r.u64()?))
}

/// [`decode`], the checksum checked or not as `sum` says; every other check is made.
pub(crate) fn decode_with(bytes: &[u8], key: &Key, sum: Sum) -> Option<Entry> {
    let (found, len) = frame(bytes)?;
    let sealed = bytes.get(SUM..HEADER)?;
    let mut r = Reader(&bytes[HEADER..]);
    if found != *key
        || len > MAX_PAYLOAD
        || r.0.len() as u64 != len
        || (sum == Sum::Check && checksum(&bytes[..SUM], r.0)[..] != *sealed)
    {
        return None;
    }
    let alignment = r.u64()?;
    if !alignment.is_power_of_two() || alignment > MAX_ALIGN {
        return None;
    }
    let n = usize::try_from(r.u32()?).ok()?;
    let code = r.take(n)?.to_vec();
    let count = usize::try_from(r.u32()?).ok()?;
    if r.0.len() < count.checked_mul(RELOC)? {
        return None;
    }
    let mut relocs = Vec::with_capacity(count);
    for _ in 0..count {
        let offset = r.u32()?;
        let kind = *RELOC_KINDS.get(usize::from(r.u8()?))?;
        let tag = r.u8()?;
        let value = r.u32()?;
        let addend = i64::from_le_bytes(r.array()?);
        let target = match tag {
            0 => Target::Name(value),
            1 => Target::LibCall(*LibCall::all_libcalls().get(usize::try_from(value).ok()?)?),
            2 => Target::Known(*KNOWN_SYMBOLS.get(usize::try_from(value).ok()?)?),
            3 if (value as usize) <= code.len() => Target::SelfOffset(value),
            _ => return None,
        };
        // Every relocation patches at least 4 bytes of the code.
        if u64::from(offset) + 4 > code.len() as u64 {
            return None;
        }
        relocs.push(CodeReloc {
            offset,
            kind,
            target,
            addend,
        });
    }
    let count = usize::try_from(r.u32()?).ok()?;
    if r.0.len() < count.checked_mul(NAME)? {
        return None;
    }
    let mut names = Vec::with_capacity(count);
    for _ in 0..count {
        let tag = r.u8()?;
        let value = r.u32()?;
        names.push(match tag {
            0 => Name::Ref(value),
            1 => Name::Runtime(value),
            2 => Name::Message(value),
            _ => return None,
        });
    }
    let count = usize::try_from(r.u32()?).ok()?;
    // Every message takes at least its 4-byte length.
    if r.0.len() < count.checked_mul(4)? {
        return None;
    }
    let mut messages = Vec::with_capacity(count);
    for _ in 0..count {
        let len = usize::try_from(r.u32()?).ok()?;
        if len > MAX_MESSAGE {
            return None;
        }
        messages.push(String::from_utf8(r.take(len)?.to_vec()).ok()?);
    }
    if !r.0.is_empty() {
        return None;
    }
    let named = |n: u32| (n as usize) < names.len();
    let tables = crate::names::message_tables(&messages);
    let messaged = |n: &Name| !matches!(*n, Name::Message(j) if j as usize >= tables);
    if relocs
        .iter()
        .any(|r| matches!(r.target, Target::Name(n) if !named(n)))
        || !names.iter().all(messaged)
    {
        return None;
    }
    Some(Entry {
        code: Code {
            alignment,
            bytes: code,
            relocs,
        },
        names,
        messages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::binemit::Reloc;

    /// Names: `Ref(0)`, `Runtime(0)`, `Message(0)`; one message.
    fn sample() -> Entry {
        Entry {
            code: sample_code(),
            names: vec![Name::Ref(0), Name::Runtime(0), Name::Message(0)],
            messages: vec!["trap: x in @f\n".into()],
        }
    }

    fn sample_code() -> Code {
        Code {
            alignment: 16,
            bytes: (0u8..64).collect(),
            relocs: vec![
                CodeReloc {
                    offset: 4,
                    kind: Reloc::X86CallPCRel4,
                    target: Target::Name(2),
                    addend: -4,
                },
                CodeReloc {
                    offset: 20,
                    kind: Reloc::X86PCRel4,
                    target: Target::SelfOffset(40),
                    addend: -4,
                },
                CodeReloc {
                    offset: 30,
                    kind: Reloc::X86CallPLTRel4,
                    target: Target::LibCall(LibCall::FloorF64),
                    addend: -4,
                },
            ],
        }
    }

    #[test]
    fn an_entry_decodes_to_what_was_encoded() {
        let key = [7u8; 32];
        let bytes = encode(&key, &sample()).unwrap();
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(decode(&bytes, &key), Some(sample()));
    }

    #[test]
    fn a_damaged_or_foreign_entry_is_rejected() {
        let key = [7u8; 32];
        let good = encode(&key, &sample()).unwrap();
        // Another key.
        assert_eq!(decode(&good, &[8u8; 32]), None);
        // Every truncation.
        for n in 0..good.len() {
            assert_eq!(decode(&good[..n], &key), None, "truncated to {n}");
        }
        // A byte too many.
        let mut long = good.clone();
        long.push(0);
        assert_eq!(decode(&long, &key), None);
        // Every single flipped bit.
        for i in 0..good.len() * 8 {
            let mut bad = good.clone();
            bad[i / 8] ^= 1 << (i % 8);
            assert_eq!(decode(&bad, &key), None, "bit {i} flipped");
        }
        // A huge length field.
        let mut huge = good.clone();
        huge[44..52].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode(&huge, &key), None);
    }

    #[test]
    fn the_checksum_covers_the_key_and_the_header() {
        // Another function's entry (another key, another payload) with its key field
        // rewritten: only a hash computed again makes it an entry of the key.
        let (key, other) = ([7u8; 32], [8u8; 32]);
        let mut entry = sample();
        entry.code.bytes[0] ^= 0xff;
        let mut rekeyed = encode(&other, &entry).unwrap();
        rekeyed[12..44].copy_from_slice(&key);
        assert_eq!(decode(&rekeyed, &key), None);
        assert_eq!(decode(&rekeyed, &other), None);
        // The checksum is the hash of the header's fields before it, then the payload.
        let good = encode(&key, &sample()).unwrap();
        assert_eq!(good[SUM..HEADER], checksum(&good[..SUM], &good[HEADER..]));
        assert_ne!(
            good[SUM..HEADER],
            blake3::hash(&good[HEADER..]).as_bytes()[..]
        );
    }

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
            planted(&cache.path(key), &head, len);
            assert!(cache.get(key).is_none());
        }
        assert_eq!(cache.rejected.load(Ordering::Relaxed), 5);
        assert_eq!(cache.loaded.load(Ordering::Relaxed), 0);
        // Small files are read whole, their header checked from memory.
        planted(&cache.path(&[5; 32]), &[], 100);
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
        let len = std::fs::metadata(cache.path(&key)).unwrap().len();
        assert!(len > WHOLE);
        assert_eq!(cache.get(&key).map(|(e, _)| e), Some(big.clone()));
        assert_eq!(cache.loaded.load(Ordering::Relaxed), len);
        // A flipped bit deep in it: refused while hashed.
        let mut bytes = std::fs::read(cache.path(&key)).unwrap();
        bytes[2 * WHOLE as usize] ^= 1;
        std::fs::write(cache.path(&key), &bytes).unwrap();
        assert!(cache.get(&key).is_none());
        assert_eq!(cache.loaded.load(Ordering::Relaxed), len);
        assert_eq!(cache.rejected.load(Ordering::Relaxed), 1);
        // An entry beyond the bound is never stored.
        big.code.bytes = vec![0; MAX_PAYLOAD as usize];
        assert_eq!(encode(&key, &big), None);
    }

    /// An entry whose checksum is right but whose content is not code for any function.
    fn resealed(mut payload: Vec<u8>, key: &Key, edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        edit(&mut payload);
        framed(key, &payload)
    }

    #[test]
    fn well_sealed_nonsense_is_rejected() {
        let key = [1u8; 32];
        let good = encode(&key, &sample()).unwrap();
        let payload = good[HEADER..].to_vec();
        // Alignment 3.
        let b = resealed(payload.clone(), &key, |p| {
            p[..8].copy_from_slice(&3u64.to_le_bytes())
        });
        assert_eq!(decode(&b, &key), None);
        // A code length beyond the payload.
        let b = resealed(payload.clone(), &key, |p| {
            p[8..12].copy_from_slice(&u32::MAX.to_le_bytes())
        });
        assert_eq!(decode(&b, &key), None);
        // A relocation count beyond the payload.
        let at = 12 + 64;
        let b = resealed(payload.clone(), &key, |p| {
            p[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes())
        });
        assert_eq!(decode(&b, &key), None);
        // A relocation past the code's end.
        let b = resealed(payload.clone(), &key, |p| {
            p[at + 4..at + 8].copy_from_slice(&62u32.to_le_bytes())
        });
        assert_eq!(decode(&b, &key), None);
        // An unknown relocation kind, target tag, library routine.
        // (The first relocation names entry 0 of the name table, the third a library routine.)
        for (field, value) in [(4, 200u8), (5, 9), (2 * RELOC + 6, 255)] {
            let b = resealed(payload.clone(), &key, |p| p[at + 4 + field] = value);
            assert_eq!(decode(&b, &key), None, "field {field}");
        }
        // After the relocations: the names, then the messages.
        let names = at + 4 + 3 * RELOC;
        let messages = names + 4 + 3 * NAME;
        // A name with an unknown tag; a relocation naming an entry past the table (three
        // names left out); a name of a message past the list; a message that is not UTF-8.
        let b = resealed(payload.clone(), &key, |p| p[names + 4] = 3);
        assert_eq!(decode(&b, &key), None);
        let b = resealed(payload.clone(), &key, |p| {
            p[names..names + 4].copy_from_slice(&0u32.to_le_bytes());
            p.drain(names + 4..messages);
        });
        assert_eq!(decode(&b, &key), None);
        let b = resealed(payload.clone(), &key, |p| {
            p[names + 4 + 2 * NAME + 1..names + 4 + 3 * NAME].copy_from_slice(&1u32.to_le_bytes())
        });
        assert_eq!(decode(&b, &key), None);
        let b = resealed(payload.clone(), &key, |p| p[messages + 8] = 0xff);
        assert_eq!(decode(&b, &key), None);
        // The unedited payload resealed is accepted (the edits above are what fail).
        assert_eq!(
            decode(&resealed(payload, &key, |_| ()), &key),
            Some(sample())
        );
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
        let path = cache.path(&key);
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
