//! Reading a compact body: record by record through [`Flat`] (O(1) each, by rank) or all
//! records in one sequential pass ([`InOrder`]), and a run of operands as reference indices
//! ([`Indices`]).

use super::*;

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
