//! Labels ([`Labeler`]): each node's own byte stream, with its references to other nodes left
//! as numbered slots, from a flattened body or pool entry, in the scheme of the file's version.

use super::*;

/// Builds labels from flattened records. `key(j)` answers whether definition `j` is named by
/// a key (`Some`) or is a node (`None`).
pub(crate) struct Labeler<'a, S: Strings + ?Sized> {
    pub strings: &'a S,
    pub scheme: Scheme,
}

impl<S: Strings + ?Sized> Labeler<'_, S> {
    fn feed_ref<E>(
        &self,
        h: &mut Feed,
        succ: &mut Slots,
        r: u32,
        key: &mut impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<(), E> {
        if r == REF_NONE {
            h.update(&[0]);
            return Ok(());
        }
        let index = r & REF_MAX_INDEX;
        match r >> 30 {
            TAG_LOCAL => {
                h.update(&[1]);
                h.update(&index.to_le_bytes());
            }
            TAG_POOL => succ.add(h, 2, Node::Pool(index)),
            TAG_DEF => {
                if !key(index, h)? {
                    succ.add(h, 4, Node::Def(index));
                }
            }
            _ => {
                h.update(&[0xff]);
                h.update(&r.to_le_bytes());
            }
        }
        Ok(())
    }

    fn feed_payload(&self, h: &mut Feed, flat: &(impl Flat + ?Sized), r: &Rec) {
        crate::hash::feed_payload(h, self.strings, flat, r);
    }

    fn feed_operands<E>(
        &self,
        h: &mut Feed,
        succ: &mut Slots,
        flat: &(impl Flat + ?Sized),
        r: &Rec,
        key: &mut impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<(), E> {
        self.feed_ref(h, succ, r.ty, key)?;
        h.update(&r.ops_end.saturating_sub(r.ops_start).to_le_bytes());
        for j in r.ops_start..r.ops_end {
            self.feed_ref(h, succ, flat.operand(j as usize), key)?;
        }
        Ok(())
    }

    /// The label of a definition's body (`h`: a reusable stream).
    pub fn body<E>(
        &self,
        h: &mut Feed,
        body: &(impl MaybeCompact + ?Sized),
        mut key: impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<Label, E> {
        // Every body of a 5.x file, and every body the writer lays out, is compact. A body
        // without compact bytes (an older layout's, never in a 5.x file) gets the §3.4 label,
        // under §3.4's own domain: the compact label's domain names its grammar alone.
        let scheme = match self.scheme {
            Scheme::V4 => match body.compact() {
                Some(c) => return self.compact_body(h, &c, key),
                None => Scheme::V3,
            },
            s => s,
        };
        let mut succ = Slots::new(scheme);
        h.update(scheme.domains().def);
        h.update(&(body.count() as u64).to_le_bytes());
        for (i, r) in body.recs().enumerate() {
            h.update(&r.opcode.to_le_bytes());
            self.feed_payload(h, body, &r);
            h.update(&r.n_decos.to_le_bytes());
            h.update(&r.end.saturating_sub(i as u32).to_le_bytes());
            self.feed_operands(h, &mut succ, body, &r, &mut key)?;
        }
        Ok(Label {
            hash: h.finish(),
            succ: succ.succ,
        })
    }

    /// The v4 label of a compact body (`spec/format.md` §3.5): its bytes but `ext` (string
    /// indices as zero), then what each `ext` entry names (`02` a pool entry, `03` and the
    /// key of a definition with one, `04` a definition without), then the text of each string
    /// payload. Its slots are the `ext` entries naming pool entries and definitions without a
    /// key, in `ext` order: the body's small references name every target by its place in
    /// `ext`, so the bytes say which reference names which slot.
    fn compact_body<E>(
        &self,
        h: &mut Feed,
        c: &Compact<'_>,
        mut key: impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<Label, E> {
        let mut succ = Vec::with_capacity(16);
        h.update(self.scheme.domains().def);
        c.feed_label_bytes(h);
        for e in c.ext() {
            let index = e & REF_MAX_INDEX;
            match e >> 30 {
                TAG_POOL => {
                    h.update(&[2]);
                    succ.push(Node::Pool(index));
                }
                TAG_DEF => {
                    if !key(index, h)? {
                        h.update(&[4]);
                        succ.push(Node::Def(index));
                    }
                }
                // Refused by the body's check: fed raw, as the other schemes feed it.
                _ => {
                    h.update(&[0xff]);
                    h.update(&e.to_le_bytes());
                }
            }
        }
        for lo in c.string_rows() {
            crate::hash::feed_bytes(h, self.strings.get_str(lo).unwrap_or("").as_bytes());
        }
        Ok(Label {
            hash: h.finish(),
            succ,
        })
    }

    /// The label of pool entry `i` (`h`: a reusable stream).
    pub fn pool_entry<E>(
        &self,
        h: &mut Feed,
        pool: &(impl Flat + ?Sized),
        i: usize,
        mut key: impl FnMut(u32, &mut Feed) -> Result<bool, E>,
    ) -> Result<Label, E> {
        let mut succ = Slots::new(self.scheme);
        let r = pool.rec(i);
        h.update(self.scheme.domains().pool);
        h.update(&r.opcode.to_le_bytes());
        self.feed_payload(h, pool, &r);
        self.feed_operands(h, &mut succ, pool, &r, &mut key)?;
        Ok(Label {
            hash: h.finish(),
            succ: succ.succ,
        })
    }
}
