//! A remote code cache's records (spec/backends.md, "A remote code cache"): the functions of
//! a build are split into groups ([`groups`]: boundaries drawn from the functions' names, so
//! that editing a body changes no group and adding a function changes one or two), and each
//! group has one record in the store's `ac` namespace, named by the group ([`group_name`]).
//! A record names one blob in the `cas` namespace, the group's sealed entries one after the
//! other, and lists each entry's key and length ([`Record`]); it ends with a tag, keyed
//! BLAKE3 over the record's name and bytes with the user's key (`--cache-key`), else with 32
//! zero bytes. A record is used only if everything checks ([`Record::parse`]): magic, this
//! format's version, a count within [`MAX_GROUP`], lengths that sum to the blob's and that an
//! entry may have, and the tag.

use crate::fingerprint::{FORMAT_VERSION, Key};

use super::entry::{HEADER, MAX_PAYLOAD};

/// The first bytes of a record.
const RECORD_MAGIC: &[u8; 8] = b"IRKREC\0\0";

/// Bytes before a record's entries: magic, version, count, the blob's SHA-256 and length.
const RECORD_HEAD: usize = 8 + 4 + 4 + 32 + 8;

/// Bytes of one entry of a record: key, length.
const RECORD_ENTRY: usize = 32 + 8;

/// Bytes of the tag ending a record.
const TAG: usize = 32;

/// The most functions in one group.
pub(crate) const MAX_GROUP: usize = 1024;

/// The fewest functions a group has before a name may end it.
const MIN_GROUP: usize = 16;

/// A name ends a group when the first byte of its hash is below this (1 in 128).
const BOUNDARY: u8 = 2;

/// The largest record read.
pub(crate) const MAX_RECORD: u64 = (RECORD_HEAD + RECORD_ENTRY * MAX_GROUP + TAG) as u64;

/// The largest blob read (a record naming a larger one is not used).
pub(crate) const MAX_BLOB: u64 = 1 << 28;

/// What a record says of its group: the blob's SHA-256 and length, and each entry's key and
/// length, in the blob's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) blob: [u8; 32],
    pub(crate) len: u64,
    pub(crate) entries: Vec<(Key, u64)>,
}

impl Record {
    /// The record of the sealed entries `entries` (key and bytes, in order): their blob is
    /// their concatenation ([`Record::blob_of`]).
    pub(crate) fn of(entries: &[(Key, &[u8])]) -> (Record, Vec<u8>) {
        let blob = Record::blob_of(entries);
        let record = Record {
            blob: sha256(&blob),
            len: blob.len() as u64,
            entries: entries.iter().map(|(k, b)| (*k, b.len() as u64)).collect(),
        };
        (record, blob)
    }

    fn blob_of(entries: &[(Key, &[u8])]) -> Vec<u8> {
        let mut blob = Vec::with_capacity(entries.iter().map(|(_, b)| b.len()).sum());
        entries.iter().for_each(|(_, b)| blob.extend_from_slice(b));
        blob
    }

    /// The record's bytes under `name`, tagged with `key`.
    pub(crate) fn bytes(&self, name: &str, key: &[u8; 32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(RECORD_HEAD + RECORD_ENTRY * self.entries.len() + TAG);
        out.extend_from_slice(RECORD_MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.blob);
        out.extend_from_slice(&self.len.to_le_bytes());
        for (k, len) in &self.entries {
            out.extend_from_slice(k);
            out.extend_from_slice(&len.to_le_bytes());
        }
        let tag = tag(name, &out, key);
        out.extend_from_slice(&tag);
        out
    }

    /// The record in `bytes` fetched under `name`, if it checks (see the module doc) with
    /// the tag of `key`.
    pub(crate) fn parse(bytes: &[u8], name: &str, key: &[u8; 32]) -> Option<Record> {
        let body = bytes.get(..bytes.len().checked_sub(TAG)?)?;
        let found = bytes.get(body.len()..)?;
        if found != tag(name, body, key) {
            return None;
        }
        let head = body.get(..RECORD_HEAD)?;
        let u32_at = |at: usize| Some(u32::from_le_bytes(head.get(at..at + 4)?.try_into().ok()?));
        if &head[..8] != RECORD_MAGIC || u32_at(8)? != FORMAT_VERSION {
            return None;
        }
        let count = usize::try_from(u32_at(12)?).ok()?;
        if count > MAX_GROUP || body.len() != RECORD_HEAD + RECORD_ENTRY * count {
            return None;
        }
        let blob: [u8; 32] = head.get(16..48)?.try_into().ok()?;
        let len = u64::from_le_bytes(head.get(48..56)?.try_into().ok()?);
        let mut entries = Vec::with_capacity(count);
        let mut sum = 0u64;
        for e in body[RECORD_HEAD..].chunks_exact(RECORD_ENTRY) {
            let k: Key = e.get(..32)?.try_into().ok()?;
            let n = u64::from_le_bytes(e.get(32..40)?.try_into().ok()?);
            if n < HEADER as u64 || n > HEADER as u64 + MAX_PAYLOAD {
                return None;
            }
            sum = sum.checked_add(n)?;
            entries.push((k, n));
        }
        (sum == len && len <= MAX_BLOB).then_some(Record { blob, len, entries })
    }

    /// The entries of `blob` (fetched as this record's), if it is the blob the record names
    /// (its length and SHA-256): each key with its bytes.
    pub(crate) fn split<'b>(&self, blob: &'b [u8]) -> Option<Vec<(Key, &'b [u8])>> {
        if blob.len() as u64 != self.len || sha256(blob) != self.blob {
            return None;
        }
        let mut at = 0usize;
        let mut out = Vec::with_capacity(self.entries.len());
        for (k, n) in &self.entries {
            let end = at.checked_add(usize::try_from(*n).ok()?)?;
            out.push((*k, blob.get(at..end)?));
            at = end;
        }
        Some(out)
    }

    /// The keys the record lists, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &Key> {
        self.entries.iter().map(|(k, _)| k)
    }
}

/// The tag of a record's bytes `body` under `name`: BLAKE3 keyed with `key`.
fn tag(name: &str, body: &[u8], key: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(&(name.len() as u64).to_le_bytes());
    h.update(name.as_bytes());
    h.update(body);
    *h.finalize().as_bytes()
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

/// The key records are tagged with, from the bytes of the user's key file.
pub(crate) fn tag_key(file: &[u8]) -> [u8; 32] {
    blake3::derive_key("irkit code cache record tag v1", file)
}

/// The groups of a build's functions, given their names in module order: the ranges of
/// positions each group covers. A group ends after a function whose name's BLAKE3 hash
/// starts with a byte below [`BOUNDARY`], once it has [`MIN_GROUP`] functions, or when it
/// has [`MAX_GROUP`].
pub(crate) fn groups(names: &[String]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, n) in names.iter().enumerate() {
        let len = i + 1 - start;
        let ends = blake3::hash(n.as_bytes()).as_bytes()[0] < BOUNDARY && len >= MIN_GROUP;
        if ends || len == MAX_GROUP {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < names.len() {
        out.push(start..names.len());
    }
    out
}

/// The name of the record of a group whose functions have `names`, for the target and
/// versions `prefix` hashes (`crate::fingerprint::KeyPrefix`): 64 hex digits of BLAKE3 keyed
/// with the records' `key` (so that builds with different keys neither read nor overwrite
/// each other's records, and one without the key cannot tell which name a record has).
pub(crate) fn group_name(prefix: &[u8; 32], names: &[String], key: &[u8; 32]) -> String {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(b"irkit code cache group");
    h.update(&FORMAT_VERSION.to_le_bytes());
    h.update(prefix);
    for n in names {
        h.update(&(n.len() as u64).to_le_bytes());
        h.update(n.as_bytes());
    }
    irkit_store::hex(h.finalize().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(k: u8, n: usize) -> (Key, Vec<u8>) {
        ([k; 32], vec![k; HEADER + n])
    }

    #[test]
    fn a_record_round_trips_and_names_its_blob() {
        let es = [entry(1, 3), entry(2, 0), entry(3, 10)];
        let refs: Vec<(Key, &[u8])> = es.iter().map(|(k, b)| (*k, &b[..])).collect();
        let (r, blob) = Record::of(&refs);
        let key = tag_key(b"secret");
        let bytes = r.bytes("name", &key);
        assert_eq!(Record::parse(&bytes, "name", &key), Some(r.clone()));
        assert_eq!(r.split(&blob), Some(refs));
        // Another name, another key, no key: not this record.
        assert_eq!(Record::parse(&bytes, "other", &key), None);
        assert_eq!(Record::parse(&bytes, "name", &tag_key(b"other")), None);
        assert_eq!(Record::parse(&bytes, "name", &[0; 32]), None);
        // Any flipped bit, a cut: refused.
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0x10;
            assert_eq!(Record::parse(&b, "name", &key), None, "bit at {at}");
        }
        assert_eq!(Record::parse(&bytes[..bytes.len() - 1], "name", &key), None);
        // A blob altered, cut or longer: not the record's.
        let mut b = blob.clone();
        b[5] ^= 1;
        assert_eq!(r.split(&b), None);
        assert_eq!(r.split(&blob[..blob.len() - 1]), None);
        assert_eq!(r.split(&[&blob[..], b"x"].concat()), None);
    }

    #[test]
    fn a_record_whose_lengths_do_not_add_up_is_refused() {
        // Sealed with the right tag by a writer who knows the key: still refused.
        let key = [0; 32];
        let mut r = Record::of(&[([1; 32], &[0u8; HEADER][..])]).0;
        r.len += 1;
        assert_eq!(Record::parse(&r.bytes("n", &key), "n", &key), None);
        let mut r = Record::of(&[([1; 32], &[0u8; HEADER][..])]).0;
        r.entries[0].1 = 3;
        r.len = 3;
        assert_eq!(Record::parse(&r.bytes("n", &key), "n", &key), None);
    }

    #[test]
    fn groups_are_drawn_from_names_and_survive_an_insertion() {
        let names: Vec<String> = (0..5000).map(|i| format!("@f{i}")).collect();
        let gs = groups(&names);
        assert!(gs.len() > 10 && gs.len() < 200, "{} groups", gs.len());
        assert!(gs.iter().all(|g| g.len() <= MAX_GROUP));
        assert_eq!(gs.iter().map(|g| g.len()).sum::<usize>(), 5000);
        let named = |names: &[String], gs: &[std::ops::Range<usize>]| -> Vec<String> {
            gs.iter()
                .map(|g| group_name(&[0; 32], &names[g.clone()], &[0; 32]))
                .collect()
        };
        let before = named(&names, &gs);
        // A function added in the middle: at most two groups are new.
        let mut more = names.clone();
        more.insert(2500, "@added".into());
        let after = named(&more, &groups(&more));
        let new = after.iter().filter(|n| !before.contains(n)).count();
        assert!(new <= 2, "{new} new groups");
        assert!(groups(&[]).is_empty());
        // Another key, another name.
        let g = &names[gs[0].clone()];
        assert_ne!(
            group_name(&[0; 32], g, &[0; 32]),
            group_name(&[0; 32], g, &[1; 32])
        );
    }
}
