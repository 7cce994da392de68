//! Content hashes: blake3 over a canonical byte stream in which pool values appear by their
//! structural hash (never by pool index) and other definitions by a stable key (export name,
//! else import name, else extern name, else name hint, else index), so a definition's hash
//! changes only when the definition itself (or the interface of what it names) changes.
//! `spec/format.md` gives the stream byte by byte. The functions here work on both the
//! writer's native records and the reader's archived ones, through `flat.rs`'s access traits.

use crate::feed::Feed;
use crate::flat::{Flat, Rec, Strings};
use crate::schema::{REF_NONE, TAG_DEF, TAG_LOCAL, TAG_POOL, payload_kind};

/// The key a definition is referred to by in content hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DefKey {
    Export(String),
    Import(String),
    Extern(String),
    Name(String),
    Index(u32),
}

impl DefKey {
    pub(crate) fn feed(&self, h: &mut Feed) {
        let (tag, s) = match self {
            DefKey::Export(s) => (0u8, s),
            DefKey::Import(s) => (1, s),
            DefKey::Extern(s) => (2, s),
            DefKey::Name(s) => (3, s),
            DefKey::Index(i) => {
                h.update(&[4]);
                h.update(&i.to_le_bytes());
                return;
            }
        };
        h.update(&[tag]);
        feed_bytes(h, s.as_bytes());
    }
}

pub(crate) fn feed_bytes(h: &mut Feed, b: &[u8]) {
    h.update(&(b.len() as u64).to_le_bytes());
    h.update(b);
}

/// Feeds a record's payload: its kind byte, then an integer or float as u64, a string or
/// bytes as u64 length and the bytes, nothing for none (the same in every hash version).
pub(crate) fn feed_payload(
    h: &mut Feed,
    strings: &(impl Strings + ?Sized),
    flat: &(impl Flat + ?Sized),
    r: &Rec,
) {
    h.update(&[r.payload_kind]);
    match r.payload_kind {
        payload_kind::INT | payload_kind::FLOAT => {
            h.update(&((r.lo as u64) | ((r.hi as u64) << 32)).to_le_bytes());
        }
        payload_kind::STR => {
            feed_bytes(h, strings.get_str(r.lo).unwrap_or("").as_bytes());
        }
        payload_kind::BYTES => {
            let start = r.lo as usize;
            let b = flat
                .blob()
                .get(start..start.saturating_add(r.hi as usize))
                .unwrap_or(&[]);
            feed_bytes(h, b);
        }
        _ => {}
    }
}

/// What references resolve to while hashing.
pub(crate) struct HashCtx<'a, S: Strings + ?Sized> {
    pub strings: &'a S,
    pub pool_hashes: &'a [[u8; 32]],
    pub def_keys: &'a [DefKey],
}

impl<S: Strings + ?Sized> HashCtx<'_, S> {
    fn feed_ref(&self, h: &mut Feed, r: u32) {
        if r == REF_NONE {
            h.update(&[0]);
            return;
        }
        let index = r & crate::schema::REF_MAX_INDEX;
        match r >> 30 {
            TAG_LOCAL => {
                h.update(&[1]);
                h.update(&index.to_le_bytes());
            }
            TAG_POOL => {
                h.update(&[2]);
                h.update(self.pool_hashes.get(index as usize).unwrap_or(&[0; 32]));
            }
            TAG_DEF => {
                h.update(&[3]);
                match self.def_keys.get(index as usize) {
                    Some(k) => k.feed(h),
                    None => DefKey::Index(index).feed(h),
                }
            }
            _ => {
                h.update(&[0xff]);
                h.update(&r.to_le_bytes());
            }
        }
    }

    fn feed_payload(&self, h: &mut Feed, flat: &(impl Flat + ?Sized), r: &Rec) {
        feed_payload(h, self.strings, flat, r);
    }

    fn feed_common(&self, h: &mut Feed, flat: &(impl Flat + ?Sized), r: &Rec) {
        h.update(&r.opcode.to_le_bytes());
        self.feed_payload(h, flat, r);
    }

    fn feed_operands(&self, h: &mut Feed, flat: &(impl Flat + ?Sized), r: &Rec) {
        self.feed_ref(h, r.ty);
        let count = r.ops_end.saturating_sub(r.ops_start);
        h.update(&count.to_le_bytes());
        for j in r.ops_start..r.ops_end {
            self.feed_ref(h, flat.operand(j as usize));
        }
    }

    /// The structural hashes of every pool entry, in order (each depends only on earlier
    /// entries and on definition keys).
    pub fn pool_hashes(
        strings: &S,
        pool: &(impl Flat + ?Sized),
        def_keys: &[DefKey],
    ) -> Vec<[u8; 32]> {
        let mut out: Vec<[u8; 32]> = Vec::with_capacity(pool.count());
        let mut h = Feed::new();
        for i in 0..pool.count() {
            let ctx = HashCtx {
                strings,
                pool_hashes: &out,
                def_keys,
            };
            let r = pool.rec(i);
            h.update(b"irkit.pool.v1\0");
            ctx.feed_common(&mut h, pool, &r);
            ctx.feed_operands(&mut h, pool, &r);
            let hash = h.finish();
            out.push(hash);
        }
        out
    }

    /// The content hash of one body.
    pub fn body_hash(&self, body: &(impl Flat + ?Sized)) -> [u8; 32] {
        let mut h = Feed::new();
        h.update(b"irkit.def.v1\0");
        h.update(&(body.count() as u64).to_le_bytes());
        for i in 0..body.count() {
            let r = body.rec(i);
            self.feed_common(&mut h, body, &r);
            h.update(&r.n_decos.to_le_bytes());
            h.update(&r.end.saturating_sub(i as u32).to_le_bytes());
            self.feed_operands(&mut h, body, &r);
        }
        h.finish()
    }
}

/// The module content hash: blake3 over `irkit.module.v1\0`, then for every content section
/// (all known kinds but debug) in kind order: kind (u32 LE) and its directory hash.
pub(crate) fn module_hash(sections: &[(u32, [u8; 32])]) -> [u8; 32] {
    let mut sorted: Vec<&(u32, [u8; 32])> = sections.iter().collect();
    sorted.sort_by_key(|s| s.0);
    let mut h = blake3::Hasher::new();
    h.update(b"irkit.module.v1\0");
    for (kind, hash) in sorted {
        h.update(&kind.to_le_bytes());
        h.update(hash);
    }
    *h.finalize().as_bytes()
}

/// The module content hash of a file's directory (content sections only): what readers
/// report and writers store, one definition for both.
pub(crate) fn content_hash_of(entries: &[crate::header::DirEntry]) -> [u8; 32] {
    let list: Vec<(u32, [u8; 32])> = entries
        .iter()
        .filter(|e| e.kind.is_content())
        .map(|e| (e.kind.0, e.hash))
        .collect();
    module_hash(&list)
}

/// Lower-case hex of a hash.
pub fn hex(hash: &[u8; 32]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(64);
    for b in hash {
        let _ = write!(s, "{b:02x}");
    }
    s
}
