//! The 3.0 body layout (`spec/format.md` §2.4): one definition's instruction tree, or the root's
//! decorations, as fixed-width little-endian arrays read in place by hand. This file owns the
//! layout and nothing else: it writes it ([`encode()`](encode::encode)), checks it once per body
//! ([`Compact::parse`], then [`Compact::check`]) and reads it ([`Flat`], O(1) per instruction,
//! operand or side-table entry; [`InOrder`], every record in one pass).
//!
//! Why this shape. Most tree instructions have no payload (constants live in the pool), no
//! sub-instructions, and refer to locals, pool entries and definitions with small indices.
//! So every instruction has only an opcode (u16), a type reference and an operand-list end, in
//! three parallel arrays; references are `W` bytes (2 when every reference of the body fits,
//! else 4) into one index space: locals first, then the body's own table of external
//! references (pool entries and definitions, each a 2.x tagged `u32`, in first-use order), so
//! a body that names pool entry 900 000 still uses 2-byte references. Payloads and the
//! subtree ends of instructions with sub-instructions live in side tables, found by rank:
//! a bitmap says which instructions have one, and a rank directory (the number of set bits
//! before each 64-bit word) turns instruction `i` into its side-table row with one popcount.
//! Readers that walk a whole body (validation, the copy) read it in order instead
//! ([`InOrder`]): a row is then the running count of the bits seen so far, no rank at all.
//! Nothing is decoded into a side structure: the reader keeps only the array offsets, fixed
//! when the body is parsed, so bytes that change after validation give wrong numbers, never
//! an out-of-bounds read or an endless loop (see `placed.rs`).

use byteorder::{ByteOrder, LittleEndian as LE};

mod encode;
mod read;
#[cfg(test)]
mod tests;

pub(crate) use encode::{encode, rewrite_ext, set_payload_lo};
pub(crate) use read::{InOrder, Indices, MaybeCompact};

use crate::error::WriteError;
use crate::feed::Feed;
use crate::flat::{Flat, Limits, Rec};
use crate::schema::{Body, REF_MAX_INDEX, REF_NONE, TAG_DEF, TAG_LOCAL, TAG_POOL, payload_kind};

/// Size of a body's header at width 2: width u8, a reserved byte, then six u16 counts.
pub(crate) const HEADER_NARROW: usize = 14;
/// Size of a body's header at width 4: width u8, 3 reserved bytes, then six u32 counts.
pub(crate) const HEADER_WIDE: usize = 28;

/// The header size of a body of width `w`.
fn header_size(w: usize) -> usize {
    if w == 2 { HEADER_NARROW } else { HEADER_WIDE }
}

/// The absent reference at width `w`.
fn none_of(w: usize) -> u32 {
    if w == 2 { 0xFFFF } else { u32::MAX }
}

/// Small reference `v` of a body with `n` instructions as a 2.x tagged reference: the absent
/// marker `none` is [`REF_NONE`], `v < n` a local, and the rest external reference `v - n`
/// (`ext` of its position), or a reserved-tag value past them (refused by the checks).
#[inline(always)]
fn tagged(v: u32, none: u32, n: u32, ext: impl FnOnce(usize) -> Option<u32>) -> u32 {
    if v == none {
        return REF_NONE;
    }
    if v < n {
        return (TAG_LOCAL << 30) | v;
    }
    ext((v - n) as usize).unwrap_or(3 << 30)
}

/// Whether a body with these counts fits width 2: every reference index below `0xFFFF`
/// (`n + k ≤ 0xFFFF`), every count in a `u16` (`m`, `b`; `p` and `t` are at most `n`).
fn fits_narrow(c: &Counts) -> bool {
    c.n as u64 + c.k as u64 <= 0xFFFF && c.m <= 0xFFFF && c.b <= 0xFFFF
}

/// Number of 64-bit words of a bitmap over `n` instructions marking `count` of them (none
/// when `count` is 0).
fn words(n: u64, count: u64) -> u64 {
    if count == 0 { 0 } else { n.div_ceil(64) }
}

/// Where each array of a body starts, and where the body ends.
#[derive(Clone, Copy, Default, Debug)]
struct Layout {
    ext: usize,
    opcode: usize,
    ty: usize,
    ops_end: usize,
    operands: usize,
    tree_bits: usize,
    tree_ranks: usize,
    tree_end: usize,
    tree_decos: usize,
    pay_bits: usize,
    pay_ranks: usize,
    pay_kind: usize,
    pay_lo: usize,
    pay_hi: usize,
    blob: usize,
    end: usize,
}

/// The counts of a body's header.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Counts {
    n: u32,
    k: u32,
    m: u32,
    p: u32,
    t: u32,
    b: u32,
}

impl Counts {
    /// The layout of a body with these counts at width `w` (`None` on overflow).
    fn layout(&self, w: usize) -> Option<Layout> {
        let w = w as u64;
        let (n, k, m, p, t, b) = (
            self.n as u64,
            self.k as u64,
            self.m as u64,
            self.p as u64,
            self.t as u64,
            self.b as u64,
        );
        let mut at = header_size(w as usize) as u64;
        let mut next = |len: u64| -> Option<usize> {
            let start = usize::try_from(at).ok()?;
            at = at.checked_add(len)?;
            Some(start)
        };
        let (wt, wp) = (words(n, t), words(n, p));
        let l = Layout {
            ext: next(4 * k)?,
            opcode: next(2 * n)?,
            ty: next(w * n)?,
            ops_end: next(w * n)?,
            operands: next(w * m)?,
            tree_bits: next(8 * wt)?,
            tree_ranks: next(4 * wt.saturating_sub(1))?,
            tree_end: next(w * t)?,
            tree_decos: next(w * t)?,
            pay_bits: next(8 * wp)?,
            pay_ranks: next(4 * wp.saturating_sub(1))?,
            pay_kind: next(p)?,
            pay_lo: next(4 * p)?,
            pay_hi: next(4 * p)?,
            blob: next(b)?,
            end: 0,
        };
        Some(Layout {
            end: usize::try_from(at).ok()?,
            ..l
        })
    }
}

/// One body in the 3.0 layout, read in place. The default value is an empty body (what a
/// reader sees when bytes changed after validation no longer parse).
#[derive(Clone, Copy, Default)]
pub(crate) struct Compact<'v> {
    b: &'v [u8],
    w: usize,
    c: Counts,
    l: Layout,
}

impl<'v> Compact<'v> {
    /// Reads the header of `bytes` and lays out the arrays: the width is 2 or 4, the reserved
    /// bytes are zero and the arrays end exactly where the bytes do. Nothing else is checked
    /// (see [`Compact::check`]).
    pub(crate) fn parse(bytes: &'v [u8]) -> Result<Compact<'v>, String> {
        let w = bytes.first().copied().unwrap_or(0) as usize;
        if w != 2 && w != 4 {
            return Err(format!("reference width {w} (2 or 4 expected)"));
        }
        let size = header_size(w);
        let Some(h) = bytes.get(..size) else {
            return Err(format!(
                "{} bytes, shorter than a body header ({size})",
                bytes.len()
            ));
        };
        // The width byte, `w - 1` reserved bytes, then six counts of `w` bytes each.
        if h[1..w].iter().any(|&x| x != 0) {
            return Err("reserved header bytes are not zero".into());
        }
        let u = |k: usize| {
            let at = w + k * w;
            if w == 2 {
                LE::read_u16(&h[at..at + 2]) as u32
            } else {
                LE::read_u32(&h[at..at + 4])
            }
        };
        let c = Counts {
            n: u(0),
            k: u(1),
            m: u(2),
            p: u(3),
            t: u(4),
            b: u(5),
        };
        match c.layout(w) {
            Some(l) if l.end == bytes.len() => Ok(Compact { b: bytes, w, c, l }),
            Some(l) => Err(format!(
                "{} bytes, its header lays out {}",
                bytes.len(),
                l.end
            )),
            None => Err("its header lays out more bytes than an address holds".into()),
        }
    }

    /// [`Compact::parse`], or an empty body when the bytes do not parse (only after they
    /// changed under a reader that validated them: a validated body parses).
    pub(crate) fn lenient(bytes: &'v [u8]) -> Compact<'v> {
        Compact::parse(bytes).unwrap_or_default()
    }

    /// The opcode of instruction `i` (0 out of range).
    #[inline]
    pub(crate) fn opcode(&self, i: usize) -> u16 {
        self.u16_at(self.l.opcode, i)
    }

    /// Entry `i` of an array of `N`-byte entries at `base`, if it is inside the body.
    #[inline]
    fn entry<const N: usize>(&self, base: usize, i: usize) -> Option<&'v [u8]> {
        let at = base.saturating_add(i.saturating_mul(N));
        self.b.get(at..at.saturating_add(N))
    }

    #[inline]
    fn u16_at(&self, base: usize, i: usize) -> u16 {
        self.entry::<2>(base, i).map_or(0, LE::read_u16)
    }

    #[inline]
    fn u32_at(&self, base: usize, i: usize) -> u32 {
        self.entry::<4>(base, i).map_or(0, LE::read_u32)
    }

    #[inline]
    fn u64_at(&self, base: usize, i: usize) -> u64 {
        self.entry::<8>(base, i).map_or(0, LE::read_u64)
    }

    /// Entry `i` of a `W`-wide array at `base` (the absent marker out of range).
    #[inline]
    fn small(&self, base: usize, i: usize) -> u32 {
        match self.w {
            2 => self
                .entry::<2>(base, i)
                .map_or(0xFFFF, |s| LE::read_u16(s) as u32),
            _ => self.entry::<4>(base, i).map_or(u32::MAX, LE::read_u32),
        }
    }

    /// A `W`-wide reference as a 2.x tagged reference: a local, the external reference it
    /// names, [`REF_NONE`] for the absent marker, and a reserved-tag value for anything past
    /// the external references (refused by [`Compact::check`]).
    #[inline]
    fn widen(&self, v: u32) -> u32 {
        tagged(v, none_of(self.w), self.c.n, |x| {
            (x < self.c.k as usize).then(|| self.u32_at(self.l.ext, x))
        })
    }

    /// The side-table row of instruction `i` in the bitmap at `bits` (`count` bits set): the
    /// number of set bits before bit `i`, when bit `i` is set.
    #[inline]
    fn row(&self, bits: usize, ranks: usize, count: u32, i: usize) -> Option<u32> {
        if count == 0 {
            return None;
        }
        let word = self.u64_at(bits, i / 64);
        if word >> (i % 64) & 1 == 0 {
            return None;
        }
        let before = match (i / 64).checked_sub(1) {
            Some(r) => self.u32_at(ranks, r),
            None => 0,
        };
        let below = word & ((1u64 << (i % 64)) - 1);
        Some(before.wrapping_add(below.count_ones()))
    }

    /// The side-table row of instruction `i`'s subtree entry, if it has sub-instructions.
    #[inline]
    fn tree_row(&self, i: usize) -> Option<u32> {
        self.row(self.l.tree_bits, self.l.tree_ranks, self.c.t, i)
    }

    /// The side-table row of instruction `i`'s payload, if it has one.
    #[inline]
    fn pay_row(&self, i: usize) -> Option<u32> {
        self.row(self.l.pay_bits, self.l.pay_ranks, self.c.p, i)
    }

    /// One past the last local of instruction `i`'s subtree (clamped to `n`; 0 out of range):
    /// what [`Flat::rec`] gives as `end`, without reading the rest.
    #[inline]
    pub(crate) fn end_of(&self, i: usize) -> u32 {
        if i >= self.c.n as usize {
            return 0;
        }
        match self.tree_row(i) {
            Some(row) => self.small(self.l.tree_end, row as usize).min(self.c.n),
            None => i as u32 + 1,
        }
    }

    /// Feeds the bytes a definition's v4 label (`spec/format.md` §3.5) takes from its body:
    /// every byte but the `ext` array's, with the `pay_lo` of each string payload fed as zero
    /// (a string index names a string of one file's table; the label takes its text
    /// instead, [`Compact::string_rows`]). Large runs go to the hash in one piece each.
    pub(crate) fn feed_label_bytes(&self, h: &mut Feed) {
        let b = self.b;
        let l = &self.l;
        h.update(b.get(..l.ext).unwrap_or(&[]));
        h.update(b.get(l.opcode..l.pay_lo).unwrap_or(&[]));
        for (row, &kind) in self.pay_kinds().iter().enumerate() {
            let lo = match kind {
                payload_kind::STR => 0,
                _ => self.u32_at(l.pay_lo, row),
            };
            h.update(&lo.to_le_bytes());
        }
        h.update(b.get(l.pay_hi..l.end).unwrap_or(&[]));
    }

    /// The `pay_kind` array: one payload kind per payload row.
    fn pay_kinds(&self) -> &'v [u8] {
        let at = self.l.pay_kind;
        self.b
            .get(at..at.saturating_add(self.c.p as usize))
            .unwrap_or(&[])
    }

    /// The `ext` array: the body's external references (tagged `u32`s), in order.
    pub(crate) fn ext(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.c.k as usize).map(|x| self.u32_at(self.l.ext, x))
    }

    /// The string index (`pay_lo`) of each payload row of kind string, in row order.
    pub(crate) fn string_rows(&self) -> impl Iterator<Item = u32> + '_ {
        self.pay_kinds()
            .iter()
            .enumerate()
            .filter(|&(_, &kind)| kind == payload_kind::STR)
            .map(|(row, _)| self.u32_at(self.l.pay_lo, row))
    }

    /// Checks what [`validate::flat`](crate::validate::flat) does not: the width is the
    /// narrowest that fits; every external reference is a pool entry or a definition, listed
    /// once in first-use order (each instruction's type, then its operands); every reference
    /// is absent (types only), a local or an external reference; operand-list ends are
    /// non-decreasing; each bitmap has no bit past the last instruction, its rank directory
    /// counts its bits and its bit count is its table's length; a subtree entry belongs to an
    /// instruction with sub-instructions and ends within the body; a payload entry has a
    /// payload kind. One linear pass, no allocation. (The reader clamps operand-list and
    /// subtree ends to the arrays, so these are checked on the raw values, here.)
    pub(crate) fn check(&self) -> Result<(), String> {
        let (n, k, m) = (self.c.n as u64, self.c.k as u64, self.c.m as u64);
        if self.w == 4 && fits_narrow(&self.c) {
            return Err("4-byte references where 2-byte ones fit".into());
        }
        for x in 0..self.c.k as usize {
            let e = self.u32_at(self.l.ext, x);
            if e == REF_NONE || (e >> 30 != TAG_POOL && e >> 30 != TAG_DEF) {
                return Err(format!(
                    "external reference {x} is {e:#010x}, not a pool entry or a definition"
                ));
            }
        }
        let none = none_of(self.w);
        let mut next_ext = 0u64;
        let mut prev_end = 0u32;
        let mut use_ref = |v: u32, i: usize, what: &str| -> Result<(), String> {
            let v = v as u64;
            if v >= n + k {
                return Err(format!(
                    "instruction {i}: {what} reference {v} is past the {n} locals and {k} \
                     external references"
                ));
            }
            if v >= n {
                match (v - n).cmp(&next_ext) {
                    std::cmp::Ordering::Greater => {
                        return Err(format!(
                            "instruction {i}: external reference {} is used before {next_ext}",
                            v - n
                        ));
                    }
                    std::cmp::Ordering::Equal => next_ext += 1,
                    std::cmp::Ordering::Less => {}
                }
            }
            Ok(())
        };
        for i in 0..self.c.n as usize {
            let ty = self.small(self.l.ty, i);
            if ty != none {
                use_ref(ty, i, "type")?;
            }
            let end = self.small(self.l.ops_end, i);
            if end < prev_end || end as u64 > m {
                return Err(format!(
                    "instruction {i}: operand list end {end} outside {prev_end}..={m}"
                ));
            }
            for j in prev_end..end {
                use_ref(self.small(self.l.operands, j as usize), i, "operand")?;
            }
            prev_end = end;
        }
        if prev_end as u64 != m {
            return Err(format!("{m} operands stored, {prev_end} used"));
        }
        if next_ext != k {
            return Err(format!("external reference {next_ext} is never used"));
        }
        let (tree, pay) = (self.bitmap(true)?, self.bitmap(false)?);
        debug_assert!(tree == self.c.t && pay == self.c.p);
        // Each table's rows in order, instruction by set bit (the bitmaps and ranks are
        // checked above); the first problem in instruction order is reported, a subtree
        // entry's before a payload entry's of the same instruction.
        let tree_err = self
            .marked(self.l.tree_bits, self.c.t)
            .enumerate()
            .find_map(|(row, i)| {
                // Checked here, not only by `validate::flat`: the reader clamps ends to `n`.
                let end = self.small(self.l.tree_end, row) as u64;
                if end <= i as u64 + 1 {
                    Some((i, "a subtree entry, but no sub-instructions".to_string()))
                } else if end > n {
                    Some((i, format!("subtree end {end} is past the {n} instructions")))
                } else {
                    None
                }
            });
        let pay_err = self
            .marked(self.l.pay_bits, self.c.p)
            .enumerate()
            .find(|&(row, _)| self.b.get(self.l.pay_kind + row) == Some(&payload_kind::NONE))
            .map(|(_, i)| (i, "a payload entry of kind none".to_string()));
        let first = match (tree_err, pay_err) {
            (Some(t), Some(p)) => Some(if p.0 < t.0 { p } else { t }),
            (t, p) => t.or(p),
        };
        if let Some((i, msg)) = first {
            return Err(format!("instruction {i}: {msg}"));
        }
        Ok(())
    }

    /// Whether this body passes [`Compact::check`] and then
    /// [`validate::flat`](crate::validate::flat) with `lim` (a definition's or the root's
    /// limits): the same verdict, reached in one sequential pass over the arrays read at their
    /// width, with each external reference checked once (every one is used, and every use
    /// names it) instead of at each use. `false` says only that one of the two checks fails:
    /// the caller runs them, in order, to say which and where (so a body with several defects
    /// reports the same first one). Every read is a bounds-checked slice of the body; the
    /// pass allocates one small stack of open subtrees, at most [`MAX_NESTING`] deep.
    ///
    /// [`MAX_NESTING`]: irkit_core::MAX_NESTING
    pub(crate) fn accepts(&self, lim: &Limits) -> bool {
        if lim.is_pool {
            return false;
        }
        if self.w == 2 {
            self.accepts_at::<2>(lim).is_some()
        } else {
            self.accepts_at::<4>(lim).is_some()
        }
    }

    /// The `count` entries of `N` bytes at `base`, if they are inside the body (a parsed
    /// body's arrays are).
    fn array<const N: usize>(&self, base: usize, count: u32) -> Option<&'v [[u8; N]]> {
        let len = (count as usize).checked_mul(N)?;
        let (entries, rest) = self.b.get(base..base.checked_add(len)?)?.as_chunks::<N>();
        rest.is_empty().then_some(entries)
    }

    /// [`Compact::accepts`] at width `W` (`Some` when the body is accepted).
    fn accepts_at<const W: usize>(&self, lim: &Limits) -> Option<()> {
        /// A `W`-wide little-endian entry.
        #[inline(always)]
        fn rd<const W: usize>(x: &[u8; W]) -> u32 {
            let mut a = [0u8; 4];
            a[..W].copy_from_slice(x);
            u32::from_le_bytes(a)
        }
        let ok = |c: bool| c.then_some(());
        let Counts { n, k, m, p, t, .. } = self.c;
        // `validate::flat`: a non-empty body whose locals fit a reference.
        ok(n != 0 && n <= REF_MAX_INDEX + 1)?;
        // `Compact::check`, in its order where it matters for nothing but the verdict.
        ok(!(W == 4 && fits_narrow(&self.c)))?;
        ok(self.bitmap(true).is_ok() && self.bitmap(false).is_ok())?;
        // Every external reference is a pool entry or a definition in range (what
        // `validate::flat` checks at each use; every one is used, checked below).
        for e in self.array::<4>(self.l.ext, k)? {
            let e = u32::from_le_bytes(*e);
            let index = e & REF_MAX_INDEX;
            ok(match e >> 30 {
                TAG_POOL => index < lim.pool_len,
                TAG_DEF => index < lim.def_count,
                _ => false,
            })?;
        }
        let none = none_of(W);
        let tys = self.array::<W>(self.l.ty, n)?;
        let ends = self.array::<W>(self.l.ops_end, n)?;
        let operands = self.array::<W>(self.l.operands, m)?;
        let tree_bits = self.array::<8>(self.l.tree_bits, words(n as u64, t as u64) as u32)?;
        let tree_end = self.array::<W>(self.l.tree_end, t)?;
        let tree_decos = self.array::<W>(self.l.tree_decos, t)?;
        let pay_bits = self.array::<8>(self.l.pay_bits, words(n as u64, p as u64) as u32)?;
        let pay_kind = self
            .b
            .get(self.l.pay_kind..self.l.pay_kind.checked_add(p as usize)?)?;
        let pay_lo = self.array::<4>(self.l.pay_lo, p)?;
        let pay_hi = self.array::<4>(self.l.pay_hi, p)?;
        let blob_len = self.blob_bytes().len() as u64;
        // A reference used at instruction `i` (not the absent marker): a local, or an
        // external reference already used or the next one in first-use order.
        let mut next_ext = 0u32;
        let mut use_ref = |v: u32| -> Option<()> {
            if v < n {
                return Some(());
            }
            let x = v - n;
            if x < next_ext {
                Some(())
            } else if x == next_ext && x < k {
                next_ext += 1;
                Some(())
            } else {
                None
            }
        };
        // Open subtrees with sub-instructions (a leaf is never pushed: it closes at once,
        // with no decoration and no sub-instruction): (end, decorations, direct
        // sub-instructions so far).
        let mut open: Vec<(u32, u32, u32)> = Vec::with_capacity(16);
        let max_open = (irkit_core::MAX_NESTING as u64 + 1).checked_sub(lim.base_depth as u64);
        let max_open = max_open.map_or(0, |d| d.min(u32::MAX as u64) as usize);
        let mut prev_end = 0usize;
        let (mut tree_row, mut pay_row) = (0usize, 0usize);
        let (mut tree_word, mut pay_word) = (0u64, 0u64);
        let mut root_end = 0u32;
        for (i, (ty, end)) in tys.iter().zip(ends).enumerate() {
            let local = i as u32;
            if i.is_multiple_of(64) {
                tree_word = tree_bits.get(i / 64).map_or(0, |w| u64::from_le_bytes(*w));
                pay_word = pay_bits.get(i / 64).map_or(0, |w| u64::from_le_bytes(*w));
            }
            let bit = 1u64 << (i % 64);
            let ty = rd(ty);
            if ty != none {
                use_ref(ty)?;
            }
            let end = rd(end) as usize;
            ok(end >= prev_end)?;
            for o in operands.get(prev_end..end)? {
                let o = rd(o);
                ok(o != none)?;
                use_ref(o)?;
            }
            prev_end = end;
            // The tree: close what ends here (each with no more decorations than
            // sub-instructions), then nest this one in what is left.
            while let Some(&(e, decos, kids)) = open.last() {
                if e > local {
                    break;
                }
                ok(decos <= kids)?;
                open.pop();
            }
            ok(i == 0 || !open.is_empty())?;
            if let Some(parent) = open.last_mut() {
                parent.2 += 1;
            }
            let sub_end = if tree_word & bit != 0 {
                let e = rd(tree_end.get(tree_row)?);
                let decos = rd(tree_decos.get(tree_row)?);
                tree_row += 1;
                ok(e > local + 1 && e <= n && open.last().is_none_or(|o| e <= o.0))?;
                open.push((e, decos, 0));
                ok(open.len() <= max_open)?;
                e
            } else {
                // The leaf's depth: one more than the open subtrees.
                ok(open.len() < max_open)?;
                local + 1
            };
            if i == 0 {
                root_end = sub_end;
            }
            if pay_word & bit != 0 {
                let kind = *pay_kind.get(pay_row)?;
                let lo = u32::from_le_bytes(*pay_lo.get(pay_row)?);
                let hi = u32::from_le_bytes(*pay_hi.get(pay_row)?);
                pay_row += 1;
                ok(match kind {
                    payload_kind::INT | payload_kind::FLOAT => true,
                    payload_kind::STR => lo < lim.string_count,
                    payload_kind::BYTES => lo as u64 + hi as u64 <= blob_len,
                    _ => false,
                })?;
            }
        }
        ok(prev_end == m as usize && next_ext == k && root_end == n)?;
        ok(open.iter().all(|&(_, decos, kids)| decos <= kids))
    }

    /// The instructions marked in the bitmap at `bits` (`count` bits set), in order: the
    /// instruction of each row of its table, row by row.
    fn marked(&self, bits: usize, count: u32) -> impl Iterator<Item = usize> + '_ {
        let nw = words(self.c.n as u64, count as u64) as usize;
        (0..nw).flat_map(move |wi| {
            let mut word = self.u64_at(bits, wi);
            std::iter::from_fn(move || {
                let bit = (word != 0).then(|| word.trailing_zeros() as usize)?;
                word &= word - 1;
                Some(wi * 64 + bit)
            })
        })
    }

    /// Checks the subtree bitmap (`tree`) or the payload bitmap: no bit past the last
    /// instruction, the rank directory, the bit count equal to its table's length.
    fn bitmap(&self, tree: bool) -> Result<u32, String> {
        let (bits, ranks, count, what) = if tree {
            (self.l.tree_bits, self.l.tree_ranks, self.c.t, "subtree")
        } else {
            (self.l.pay_bits, self.l.pay_ranks, self.c.p, "payload")
        };
        let n = self.c.n as u64;
        let nw = words(n, count as u64);
        let mut total = 0u64;
        for wi in 0..nw {
            if wi > 0 && self.u32_at(ranks, wi as usize - 1) as u64 != total {
                return Err(format!(
                    "{what} rank {} is {}, {total} bits precede it",
                    wi - 1,
                    self.u32_at(ranks, wi as usize - 1)
                ));
            }
            let word = self.u64_at(bits, wi as usize);
            let valid = (n - wi * 64).min(64);
            if valid < 64 && word >> valid != 0 {
                return Err(format!(
                    "{what} bitmap: bits set past instruction {}",
                    n - 1
                ));
            }
            total += word.count_ones() as u64;
        }
        if total != count as u64 {
            return Err(format!(
                "{what} bitmap has {total} bits, its table {count} rows"
            ));
        }
        Ok(count)
    }

    /// The number of locals: a reference index below it is a local, any other one external
    /// reference `index - locals()` (see [`Compact::ty_index`], [`Compact::operand_indices`]).
    #[inline]
    pub(crate) fn locals(&self) -> u32 {
        self.c.n
    }

    /// The number of external references.
    #[inline]
    pub(crate) fn external_count(&self) -> u32 {
        self.c.k
    }

    /// External reference `x` as a 2.x tagged reference (a reserved-tag value out of range).
    #[inline]
    pub(crate) fn external_ref(&self, x: u32) -> u32 {
        if x < self.c.k {
            self.u32_at(self.l.ext, x as usize)
        } else {
            3 << 30
        }
    }

    /// Instruction `i`'s type as a reference index (`None` when absent or out of range).
    #[inline]
    pub(crate) fn ty_index(&self, i: usize) -> Option<u32> {
        if i >= self.c.n as usize {
            return None;
        }
        let v = self.small(self.l.ty, i);
        (v != none_of(self.w)).then_some(v)
    }

    /// Operands `start..end` as reference indices (the absent marker as `u32::MAX`), the
    /// range clamped to the operand array: each read from a slice taken once.
    #[inline]
    pub(crate) fn operand_indices(&self, start: u32, end: u32) -> Indices<'v> {
        let end = end.min(self.c.m);
        let start = start.min(end);
        let base = |size: usize| self.l.operands.saturating_add(start as usize * size);
        if self.w == 2 {
            Indices::Narrow(self.array::<2>(base(2), end - start).unwrap_or(&[]).iter())
        } else {
            Indices::Wide(self.array::<4>(base(4), end - start).unwrap_or(&[]).iter())
        }
    }

    /// The blob of bytes payloads.
    pub(crate) fn blob_bytes(&self) -> &'v [u8] {
        self.b.get(self.l.blob..self.l.end).unwrap_or(&[])
    }
}

/// One array of a body (`spec/format.md` §2.4), for [`arrays`].
#[cfg(any(test, feature = "testing"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Array {
    /// `ext`: the external references (pool entries and definitions), tagged `u32`s.
    Ext,
    /// `opcode`: each instruction's opcode.
    Opcode,
    /// `ty`: each instruction's type reference.
    Ty,
    /// `ops_end`: where each instruction's operand list ends.
    OpsEnd,
    /// `operands`: every operand reference, in instruction order.
    Operand,
    /// `tree_bits`: which instructions have sub-instructions.
    TreeBits,
    /// `tree_ranks`: the rank directory of `tree_bits`.
    TreeRanks,
    /// `tree_end`: the subtree end of each instruction with sub-instructions.
    TreeEnd,
    /// `tree_decos`: the decoration count of each instruction with sub-instructions.
    TreeDecos,
    /// `pay_bits`: which instructions have a payload.
    PayBits,
    /// `pay_ranks`: the rank directory of `pay_bits`.
    PayRanks,
    /// `pay_kind`: each payload's kind.
    PayKind,
    /// `pay_lo`: each payload's low word.
    PayLo,
    /// `pay_hi`: each payload's high word.
    PayHi,
}

/// Where the arrays of a body lie, as (array, start, element size, element count), when its
/// header parses (for the hostile writer's field list, `irkit_hostile::fields`).
#[cfg(any(test, feature = "testing"))]
pub fn arrays(bytes: &[u8]) -> Option<Vec<(Array, usize, usize, usize)>> {
    let c = Compact::parse(bytes).ok()?;
    let (l, w, n) = (c.l, c.w, c.c.n as usize);
    let (wt, wp) = (
        words(n as u64, c.c.t as u64) as usize,
        words(n as u64, c.c.p as u64) as usize,
    );
    let (t, p) = (c.c.t as usize, c.c.p as usize);
    Some(vec![
        (Array::Ext, l.ext, 4, c.c.k as usize),
        (Array::Opcode, l.opcode, 2, n),
        (Array::Ty, l.ty, w, n),
        (Array::OpsEnd, l.ops_end, w, n),
        (Array::Operand, l.operands, w, c.c.m as usize),
        (Array::TreeBits, l.tree_bits, 8, wt),
        (Array::TreeRanks, l.tree_ranks, 4, wt.saturating_sub(1)),
        (Array::TreeEnd, l.tree_end, w, t),
        (Array::TreeDecos, l.tree_decos, w, t),
        (Array::PayBits, l.pay_bits, 8, wp),
        (Array::PayRanks, l.pay_ranks, 4, wp.saturating_sub(1)),
        (Array::PayKind, l.pay_kind, 1, p),
        (Array::PayLo, l.pay_lo, 4, p),
        (Array::PayHi, l.pay_hi, 4, p),
    ])
}
