//! A code cache entry's bytes (spec/backends.md, "The code cache", gives them byte by byte):
//! [`Entry`], what the cache keeps of one function (the code, what its name table denotes
//! ([`crate::names`]) and its trap messages), [`encode`]d under its key behind a header (magic,
//! version, key, payload length, checksum) and [`decode`]d only after every check. An entry
//! with the wrong magic, version or key, a checksum that does not match (it covers the
//! header's fields, the key among them, and the payload), or content that does not decode (an
//! alignment that is not a power of two, a relocation outside the code or naming no name-table
//! entry, an unknown kind or tag, a message that is not UTF-8, line rows out of order or
//! outside the code) decodes to nothing. An entry's
//! frame (magic, version, key, length: [`frame`]) is also read alone, by the pack's scan
//! (`super::pack`) and by the check of a large entry file's header ([`entry_seal`]).

use cranelift_codegen::ir::LibCall;

use crate::code::{Code, CodeReloc, KNOWN_SYMBOLS, RELOC_KINDS, Target};
use crate::debug::LineRow;
use crate::fingerprint::{FORMAT_VERSION, Key};
use crate::names::Name;
use crate::sites::CodeTrap;

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

/// Bytes of one line row in the payload.
const LINE: usize = 4 + 4 + 4;

/// The longest call frame program read.
const MAX_CFA: usize = 1 << 20;

/// The longest trap message read.
const MAX_MESSAGE: usize = 1 << 20;

/// The check `super::read::read_sealed` makes of a large entry file's `head` (its [`HEADER`]
/// bytes), `len` bytes long, looked up under `key`: the magic, this version and `key`, a payload
/// length of at most [`MAX_PAYLOAD`] that is the rest of the file; then a hasher fed with
/// the fields the checksum covers, and the checksum.
pub(crate) fn entry_seal(head: &[u8], len: u64, key: &Key) -> Option<(blake3::Hasher, [u8; 32])> {
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
    payload.extend_from_slice(&u32::try_from(code.lines.len()).ok()?.to_le_bytes());
    for l in &code.lines {
        for v in [l.start, l.end, l.inst] {
            payload.extend_from_slice(&v.to_le_bytes());
        }
    }
    if code.cfa.len() > MAX_CFA {
        return None;
    }
    payload.extend_from_slice(&(code.cfa.len() as u32).to_le_bytes());
    payload.extend_from_slice(&code.cfa);
    payload.extend_from_slice(&u32::try_from(code.traps.len()).ok()?.to_le_bytes());
    for t in &code.traps {
        payload.extend_from_slice(&t.offset.to_le_bytes());
        payload.push(t.code);
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
    /// `super::pack`).
    Covered,
}

/// The key and payload length of the entry `bytes` start with, if they start with the magic
/// and this version (the checksum and payload not looked at): an entry's frame, which the
/// pack's scan reads too (`super::pack`).
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
    let count = usize::try_from(r.u32()?).ok()?;
    if r.0.len() < count.checked_mul(LINE)? {
        return None;
    }
    let mut lines = Vec::with_capacity(count);
    let mut at = 0u32;
    for _ in 0..count {
        let (start, end, inst) = (r.u32()?, r.u32()?, r.u32()?);
        // In code order, each a non-empty range of the code.
        if start < at || end <= start || end as usize > code.len() {
            return None;
        }
        at = end;
        lines.push(LineRow { start, end, inst });
    }
    let len = usize::try_from(r.u32()?).ok()?;
    if len > MAX_CFA {
        return None;
    }
    let cfa = r.take(len)?.to_vec();
    let code_len = code.len();
    let count = usize::try_from(r.u32()?).ok()?;
    if r.0.len() != count.checked_mul(5)? {
        return None;
    }
    let mut traps = Vec::with_capacity(count);
    for _ in 0..count {
        let offset = r.u32()?;
        let code = *r.take(1)?.first()?;
        let t = CodeTrap { offset, code };
        // In code order, inside the code, each a code a site may carry; a site code naming
        // one of the messages.
        if traps.last().is_some_and(|p: &CodeTrap| offset < p.offset)
            || offset as usize >= code_len
            || !crate::sites::reported_code(code)
            || t.message().is_some_and(|k| k as usize >= messages.len())
        {
            return None;
        }
        traps.push(t);
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
            lines,
            cfa,
            traps,
        },
        names,
        messages,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use cranelift_codegen::binemit::Reloc;

    /// Names: `Ref(0)`, `Runtime(0)`, `Message(0)`; one message (the cache's tests store it
    /// too).
    pub(crate) fn sample() -> Entry {
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
            lines: vec![
                LineRow {
                    start: 0,
                    end: 10,
                    inst: 3,
                },
                LineRow {
                    start: 12,
                    end: 64,
                    inst: 1,
                },
            ],
            cfa: vec![0x41, 0x0e, 0x10],
            traps: vec![CodeTrap {
                offset: 12,
                code: crate::sites::FIRST_CODE,
            }],
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
        // After the messages (one of 4 + 14 bytes): the line rows, then the frame program.
        // A row past the code's end; rows out of order; an empty row; a longer program.
        let lines = messages + 4 + 4 + 14;
        let field = |row: usize, f: usize| lines + 4 + row * LINE + f * 4;
        for (at, value) in [(field(1, 1), 65u32), (field(1, 0), 9), (field(0, 1), 0)] {
            let b = resealed(payload.clone(), &key, |p| {
                p[at..at + 4].copy_from_slice(&value.to_le_bytes())
            });
            assert_eq!(decode(&b, &key), None, "line field at {at}");
        }
        let cfa = lines + 4 + 2 * LINE;
        let b = resealed(payload.clone(), &key, |p| {
            p[cfa..cfa + 4].copy_from_slice(&4u32.to_le_bytes())
        });
        assert_eq!(decode(&b, &key), None);
        // The unedited payload resealed is accepted (the edits above are what fail).
        assert_eq!(
            decode(&resealed(payload, &key, |_| ()), &key),
            Some(sample())
        );
    }
}
