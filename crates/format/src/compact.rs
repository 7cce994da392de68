//! The 3.0 body layout (`spec/format.md` §2.4): one definition's instruction tree, or the
//! root's decorations, as fixed-width little-endian arrays read in place by hand. This file
//! owns the layout and nothing else: it writes it ([`encode`]), checks it once per body
//! ([`Compact::parse`], then [`Compact::check`]) and reads it ([`Flat`], O(1) per
//! instruction, operand or side-table entry; [`InOrder`], every record in one pass).
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

/// A flattened list that may be held in the compact layout: the body itself when it is (what
/// a definition's v4 content label hashes, `spec/format.md` §3.5), `None` for the record
/// layouts.
pub(crate) trait MaybeCompact: Flat {
    /// The body in the compact layout of `spec/format.md` §2.4, when that is how it is held.
    fn compact(&self) -> Option<Compact<'_>> {
        None
    }
}

impl MaybeCompact for Compact<'_> {
    fn compact(&self) -> Option<Compact<'_>> {
        Some(*self)
    }
}

impl MaybeCompact for Body {}
impl MaybeCompact for crate::schema::ArchivedBody {}
impl MaybeCompact for crate::schema::PoolTable {}
impl MaybeCompact for crate::schema::ArchivedPoolTable {}

impl Flat for Compact<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.c.n as usize
    }

    fn recs(&self) -> impl Iterator<Item = Rec> + '_ {
        InOrder::new(*self)
    }

    fn rec(&self, i: usize) -> Rec {
        if i >= self.c.n as usize {
            return Rec::default();
        }
        // Clamped to the arrays, so that no reader of bytes changed after validation loops
        // past them (a validated body is within these bounds already).
        let ops_end = self.small(self.l.ops_end, i).min(self.c.m);
        let ops_start = match i.checked_sub(1) {
            Some(p) => self.small(self.l.ops_end, p).min(ops_end),
            None => 0,
        };
        let (end, n_decos) = match self.tree_row(i) {
            Some(row) => (
                self.small(self.l.tree_end, row as usize).min(self.c.n),
                self.small(self.l.tree_decos, row as usize),
            ),
            None => (i as u32 + 1, 0),
        };
        let (payload_kind, lo, hi) = match self.pay_row(i) {
            Some(row) => (
                self.b
                    .get(self.l.pay_kind + row as usize)
                    .copied()
                    .unwrap_or(0),
                self.u32_at(self.l.pay_lo, row as usize),
                self.u32_at(self.l.pay_hi, row as usize),
            ),
            None => (payload_kind::NONE, 0, 0),
        };
        Rec {
            opcode: self.opcode(i),
            payload_kind,
            ty: self.widen(self.small(self.l.ty, i)),
            ops_start,
            ops_end,
            end,
            n_decos,
            lo,
            hi,
        }
    }

    #[inline(always)]
    fn operand(&self, j: usize) -> u32 {
        if j >= self.c.m as usize {
            return REF_NONE;
        }
        self.widen(self.small(self.l.operands, j))
    }

    #[inline]
    fn operand_len(&self) -> usize {
        self.c.m as usize
    }

    fn blob(&self) -> &[u8] {
        self.blob_bytes()
    }

    #[inline]
    fn end(&self, i: usize) -> u32 {
        self.end_of(i)
    }
}

/// A body's records in order, read in one sequential pass: each side-table row is the running
/// count of the bitmap's set bits so far (one bit test per instruction, the bitmap word read
/// once per 64 instructions), not a rank, and each operand list starts where the previous one
/// ended. For a body that passed [`Compact::check`] (whose rank directories count its bits)
/// this gives exactly what [`Flat::rec`] gives for `0..count()`, at a fraction of the reads;
/// on any other bytes it gives wrong numbers, never an out-of-bounds read.
pub(crate) struct InOrder<'v> {
    /// The number of instructions, operands and external references.
    n: u32,
    m: u32,
    /// The absent marker at the body's width.
    none: u32,
    /// The arrays, each sliced once (an entry past one reads as its default: 0, or the
    /// absent marker for a `W`-wide entry).
    opcode: &'v [[u8; 2]],
    ty: Cells<'v>,
    ops_end: Cells<'v>,
    ext: &'v [[u8; 4]],
    tree_bits: &'v [[u8; 8]],
    tree_end: Cells<'v>,
    tree_decos: Cells<'v>,
    pay_bits: &'v [[u8; 8]],
    pay_kind: &'v [u8],
    pay_lo: &'v [[u8; 4]],
    pay_hi: &'v [[u8; 4]],
    /// The next instruction.
    i: u32,
    /// Where the next operand list starts (the previous one's end, clamped).
    ops_start: u32,
    /// The next subtree and payload rows.
    tree_row: u32,
    pay_row: u32,
    /// The bitmap words holding bit `i` (zero when the table is empty).
    tree_word: u64,
    pay_word: u64,
}

/// An array of `W`-wide entries of a body, sliced once.
#[derive(Clone, Copy)]
enum Cells<'v> {
    Narrow(&'v [[u8; 2]]),
    Wide(&'v [[u8; 4]]),
}

impl<'v> Cells<'v> {
    /// The `count` entries at `base` of `c` (none when they are not inside the body).
    fn of(c: &Compact<'v>, base: usize, count: u32) -> Cells<'v> {
        if c.w == 2 {
            Cells::Narrow(c.array::<2>(base, count).unwrap_or(&[]))
        } else {
            Cells::Wide(c.array::<4>(base, count).unwrap_or(&[]))
        }
    }

    /// Entry `i`, if in the array.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<u32> {
        match self {
            Cells::Narrow(a) => a.get(i).map(|x| u16::from_le_bytes(*x) as u32),
            Cells::Wide(a) => a.get(i).map(|x| u32::from_le_bytes(*x)),
        }
    }
}

impl<'v> InOrder<'v> {
    /// Reads `c` from its first instruction.
    pub(crate) fn new(c: Compact<'v>) -> InOrder<'v> {
        let Counts { n, k, m, p, t, .. } = c.c;
        let l = &c.l;
        let bits = |base: usize, count: u32| {
            c.array::<8>(base, words(n as u64, count as u64) as u32)
                .unwrap_or(&[])
        };
        InOrder {
            n,
            m,
            none: none_of(c.w),
            opcode: c.array::<2>(l.opcode, n).unwrap_or(&[]),
            ty: Cells::of(&c, l.ty, n),
            ops_end: Cells::of(&c, l.ops_end, n),
            ext: c.array::<4>(l.ext, k).unwrap_or(&[]),
            tree_bits: bits(l.tree_bits, t),
            tree_end: Cells::of(&c, l.tree_end, t),
            tree_decos: Cells::of(&c, l.tree_decos, t),
            pay_bits: bits(l.pay_bits, p),
            pay_kind: c.array::<1>(l.pay_kind, p).unwrap_or(&[]).as_flattened(),
            pay_lo: c.array::<4>(l.pay_lo, p).unwrap_or(&[]),
            pay_hi: c.array::<4>(l.pay_hi, p).unwrap_or(&[]),
            i: 0,
            ops_start: 0,
            tree_row: 0,
            pay_row: 0,
            tree_word: 0,
            pay_word: 0,
        }
    }

    /// A `W`-wide reference as a 2.x tagged reference (see [`Compact::widen`]).
    #[inline(always)]
    fn widen(&self, v: u32) -> u32 {
        tagged(v, self.none, self.n, |x| {
            self.ext.get(x).map(|e| u32::from_le_bytes(*e))
        })
    }
}

impl Iterator for InOrder<'_> {
    type Item = Rec;

    #[inline]
    fn next(&mut self) -> Option<Rec> {
        let i = self.i as usize;
        if self.i >= self.n {
            return None;
        }
        self.i += 1;
        if i.is_multiple_of(64) {
            let word = |bits: &[[u8; 8]]| bits.get(i / 64).map_or(0, |w| u64::from_le_bytes(*w));
            self.tree_word = word(self.tree_bits);
            self.pay_word = word(self.pay_bits);
        }
        let bit = 1u64 << (i % 64);
        let ops_end = self.ops_end.get(i).unwrap_or(self.none).min(self.m);
        let ops_start = self.ops_start.min(ops_end);
        self.ops_start = ops_end;
        let (end, n_decos) = if self.tree_word & bit != 0 {
            let row = self.tree_row as usize;
            self.tree_row = self.tree_row.wrapping_add(1);
            (
                self.tree_end.get(row).unwrap_or(self.none).min(self.n),
                self.tree_decos.get(row).unwrap_or(self.none),
            )
        } else {
            (i as u32 + 1, 0)
        };
        let (payload_kind, lo, hi) = if self.pay_word & bit != 0 {
            let row = self.pay_row as usize;
            self.pay_row = self.pay_row.wrapping_add(1);
            let word = |a: &[[u8; 4]]| a.get(row).map_or(0, |x| u32::from_le_bytes(*x));
            (
                self.pay_kind.get(row).copied().unwrap_or(0),
                word(self.pay_lo),
                word(self.pay_hi),
            )
        } else {
            (payload_kind::NONE, 0, 0)
        };
        Some(Rec {
            opcode: self.opcode.get(i).map_or(0, |x| u16::from_le_bytes(*x)),
            payload_kind,
            ty: self.widen(self.ty.get(i).unwrap_or(self.none)),
            ops_start,
            ops_end,
            end,
            n_decos,
            lo,
            hi,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.n.saturating_sub(self.i) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for InOrder<'_> {}

/// A run of a body's operands as reference indices ([`Compact::operand_indices`]).
pub(crate) enum Indices<'v> {
    Narrow(std::slice::Iter<'v, [u8; 2]>),
    Wide(std::slice::Iter<'v, [u8; 4]>),
}

impl Iterator for Indices<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Indices::Narrow(it) => it.next().map(|x| match u16::from_le_bytes(*x) {
                0xFFFF => u32::MAX,
                v => v as u32,
            }),
            Indices::Wide(it) => it.next().map(|x| u32::from_le_bytes(*x)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match self {
            Indices::Narrow(it) => it.len(),
            Indices::Wide(it) => it.len(),
        };
        (left, Some(left))
    }
}

/// One array of a body (`spec/format.md` §2.4), for [`arrays`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Array {
    Ext,
    Opcode,
    Ty,
    OpsEnd,
    Operand,
    TreeBits,
    TreeRanks,
    TreeEnd,
    TreeDecos,
    PayBits,
    PayRanks,
    PayKind,
    PayLo,
    PayHi,
}

/// Where the arrays of a body lie, as (array, start, element size, element count), when its
/// header parses (for the hostile writer's field list, `hostile::fields`).
pub(crate) fn arrays(bytes: &[u8]) -> Option<Vec<(Array, usize, usize, usize)>> {
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

fn count(what: &'static str, n: usize) -> Result<u32, WriteError> {
    u32::try_from(n).map_err(|_| WriteError::TooLarge {
        what,
        count: n as u64,
        max: u32::MAX as u64,
    })
}

/// Encodes a flattened body (2.x tagged references) in the 3.0 layout. Deterministic: the
/// external references are numbered in first-use order, the width is the narrowest that fits.
pub(crate) fn encode(body: &Body) -> Result<Vec<u8>, WriteError> {
    let n = body.insts.len();
    if n > REF_MAX_INDEX as usize + 1 {
        return Err(WriteError::TooLarge {
            what: "instructions in one definition",
            count: n as u64,
            max: REF_MAX_INDEX as u64 + 1,
        });
    }
    let refs = EXT_SLOTS.with_borrow_mut(|slots| small_refs(body, slots));
    let (mut p, mut t) = (0usize, 0usize);
    for (i, r) in body.insts.iter().enumerate() {
        p += usize::from(r.payload_kind != payload_kind::NONE);
        t += usize::from(r.end as usize > i + 1);
    }
    let c = Counts {
        n: n as u32,
        k: count("external references in one definition", refs.ext.len())?,
        m: count("operands in one definition", refs.ops.len())?,
        p: count("payloads in one definition", p)?,
        t: count("instructions with sub-instructions", t)?,
        b: count("payload bytes in one definition", body.bytes.len())?,
    };
    let w = if fits_narrow(&c) { 2 } else { 4 };
    let l = c.layout(w).ok_or(WriteError::TooLarge {
        what: "bytes of one definition",
        count: u64::MAX,
        max: usize::MAX as u64,
    })?;
    let mut out = vec![0u8; l.end];
    out[0] = w as u8;
    for (k, v) in [c.n, c.k, c.m, c.p, c.t, c.b].into_iter().enumerate() {
        if w == 2 {
            // Fits: `fits_narrow` bounds every count.
            LE::write_u16(&mut out[2 + 2 * k..], v as u16);
        } else {
            LE::write_u32(&mut out[4 + 4 * k..], v);
        }
    }
    if w == 2 {
        fill::<2>(&mut out, &l, &c, body, &refs);
    } else {
        fill::<4>(&mut out, &l, &c, body, &refs);
    }
    write_ranks(
        &mut out,
        l.tree_bits,
        l.tree_ranks,
        words(n as u64, c.t as u64),
    );
    write_ranks(
        &mut out,
        l.pay_bits,
        l.pay_ranks,
        words(n as u64, c.p as u64),
    );
    out[l.blob..l.end].copy_from_slice(&body.bytes);
    Ok(out)
}

/// Sets the `lo` field of payload row `row` of an encoded body (the writer numbers a body's
/// strings after encoding it); false if the body has no such row.
pub(crate) fn set_payload_lo(body: &mut [u8], row: usize, lo: u32) -> bool {
    let at = match Compact::parse(body) {
        Ok(c) if row < c.c.p as usize => c.l.pay_lo + 4 * row,
        _ => return false,
    };
    match body.get_mut(at..at + 4) {
        Some(field) => {
            field.copy_from_slice(&lo.to_le_bytes());
            true
        }
        None => false,
    }
}

/// Rewrites every `ext` entry of an encoded body through `f` (the writer numbers pool
/// references after encoding some bodies); false if the body does not parse or `f` refuses an
/// entry.
pub(crate) fn rewrite_ext(body: &mut [u8], mut f: impl FnMut(u32) -> Option<u32>) -> bool {
    let (at, k) = match Compact::parse(body) {
        Ok(c) => (c.l.ext, c.c.k as usize),
        Err(_) => return false,
    };
    let Some(ext) = body.get_mut(at..at + 4 * k) else {
        return false;
    };
    for entry in ext.chunks_exact_mut(4) {
        match f(LE::read_u32(entry)) {
            Some(v) => LE::write_u32(entry, v),
            None => return false,
        }
    }
    true
}

std::thread_local! {
    /// Per thread: each external reference (a tagged `u32`) of the body being encoded, with
    /// its position in the body's table; emptied after each body, its room kept.
    static EXT_SLOTS: std::cell::RefCell<rustc_hash::FxHashMap<u32, u32>> =
        std::cell::RefCell::new(rustc_hash::FxHashMap::default());
}

/// A body's references as indices into its index space (locals, then external ones);
/// `u32::MAX` for absent types until the width is known.
struct SmallRefs {
    tys: Vec<u32>,
    ops: Vec<u32>,
    /// The external references, each once, in first-use order.
    ext: Vec<u32>,
}

fn small_refs(body: &Body, slots: &mut rustc_hash::FxHashMap<u32, u32>) -> SmallRefs {
    let n = body.insts.len() as u32;
    let mut ext: Vec<u32> = Vec::new();
    let mut index = |r: u32| -> u32 {
        if r == REF_NONE {
            return u32::MAX;
        }
        if r >> 30 == TAG_LOCAL {
            return r & REF_MAX_INDEX;
        }
        let at = *slots.entry(r).or_insert_with(|| {
            ext.push(r);
            ext.len() as u32 - 1
        });
        n + at
    };
    let mut tys = Vec::with_capacity(body.insts.len());
    let mut ops = Vec::with_capacity(body.operands.len());
    let mut start = 0usize;
    for r in &body.insts {
        tys.push(index(r.ty));
        let end = (r.ops_end as usize).min(body.operands.len()).max(start);
        ops.extend(body.operands[start..end].iter().map(|&o| index(o)));
        start = end;
    }
    slots.clear();
    SmallRefs { tys, ops, ext }
}

/// Writes a `W`-byte little-endian value (`W` = 2: the value fits, by `fits_narrow`; the
/// absent marker `u32::MAX` becomes `0xFFFF`).
fn put<const W: usize>(dst: &mut [u8], v: u32) {
    if W == 2 {
        dst.copy_from_slice(&(v.min(0xFFFF) as u16).to_le_bytes());
    } else {
        dst.copy_from_slice(&v.to_le_bytes());
    }
}

/// Fills the arrays of a body of width `W` (the header, ranks and blob are the caller's).
fn fill<const W: usize>(out: &mut [u8], l: &Layout, c: &Counts, body: &Body, refs: &SmallRefs) {
    let n = body.insts.len();
    for (dst, &e) in out[l.ext..l.opcode].chunks_exact_mut(4).zip(&refs.ext) {
        dst.copy_from_slice(&e.to_le_bytes());
    }
    for (dst, r) in out[l.opcode..l.ty].chunks_exact_mut(2).zip(&body.insts) {
        dst.copy_from_slice(&r.opcode.to_le_bytes());
    }
    for (dst, &t) in out[l.ty..l.ops_end].chunks_exact_mut(W).zip(&refs.tys) {
        put::<W>(dst, t);
    }
    for (dst, r) in out[l.ops_end..l.operands]
        .chunks_exact_mut(W)
        .zip(&body.insts)
    {
        put::<W>(dst, r.ops_end.min(c.m));
    }
    for (dst, &o) in out[l.operands..l.tree_bits]
        .chunks_exact_mut(W)
        .zip(&refs.ops)
    {
        put::<W>(dst, o);
    }
    let (mut tr, mut pr) = (0usize, 0usize);
    for (i, r) in body.insts.iter().enumerate().take(n) {
        if r.end as usize > i + 1 {
            out[l.tree_bits + 8 * (i / 64) + (i % 64) / 8] |= 1 << (i % 8);
            put::<W>(&mut out[l.tree_end + W * tr..][..W], r.end);
            put::<W>(&mut out[l.tree_decos + W * tr..][..W], r.n_decos);
            tr += 1;
        }
        if r.payload_kind != payload_kind::NONE {
            out[l.pay_bits + 8 * (i / 64) + (i % 64) / 8] |= 1 << (i % 8);
            out[l.pay_kind + pr] = r.payload_kind;
            out[l.pay_lo + 4 * pr..][..4].copy_from_slice(&r.payload_lo.to_le_bytes());
            out[l.pay_hi + 4 * pr..][..4].copy_from_slice(&r.payload_hi.to_le_bytes());
            pr += 1;
        }
    }
}

/// Fills the rank directory of the bitmap at `bits` (`nw` words): entry `r` is the number of
/// set bits in words `0..=r`.
fn write_ranks(out: &mut [u8], bits: usize, ranks: usize, nw: u64) {
    let mut total = 0u32;
    for wi in 0..nw as usize {
        total += LE::read_u64(&out[bits + 8 * wi..]).count_ones();
        if wi + 1 < nw as usize {
            LE::write_u32(&mut out[ranks + 4 * wi..], total);
        }
    }
}
