//! Reading validated archives in place: a definition's instructions ([`DefView`],
//! [`InstView`]) and the pool ([`PoolView`]), without allocating per instruction.

use irkit_core::Opcode;

use crate::flat::{FileStrings, Flat, Rec};
use crate::placed::{FlatBytes, Records};
use crate::schema::{REF_MAX_INDEX, REF_NONE, TAG_DEF, TAG_LOCAL, TAG_POOL, payload_kind};

irkit_core::entity_index! {
    /// A top-level definition of a file: its index in the definitions directory (printed as
    /// the bare number).
    pub struct DefIndex = "";
}

irkit_core::entity_index! {
    /// An entry (a type or a constant) of a file's pool: its index there (printed as the bare
    /// number).
    pub struct PoolIndex = "";
}

/// A reference held by an operand or a type slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ref {
    /// An instruction of the same archive (definition or root), by local index.
    Local(u32),
    /// A pool value, by pool index.
    Pool(PoolIndex),
    /// A top-level definition (its address, as an operand), by definition index.
    Def(DefIndex),
}

impl Ref {
    /// Decodes a stored reference; `None` for the absent marker or a reserved encoding.
    /// (Validation has refused reserved encodings before any view hands one out.)
    pub fn decode(raw: u32) -> Option<Ref> {
        if raw == REF_NONE {
            return None;
        }
        let index = raw & REF_MAX_INDEX;
        match raw >> 30 {
            TAG_LOCAL => Some(Ref::Local(index)),
            TAG_POOL => Some(Ref::Pool(PoolIndex::new(index))),
            TAG_DEF => Some(Ref::Def(DefIndex::new(index))),
            _ => None,
        }
    }
}

/// A payload read in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadView<'v> {
    /// No payload.
    None,
    /// An integer.
    Int(u64),
    /// Float bits.
    Float(u64),
    /// A string (from the string table).
    Str(&'v str),
    /// Bytes (from the archive's blob).
    Bytes(&'v [u8]),
}

impl PayloadView<'_> {
    /// Whether there is no payload.
    pub fn is_none(&self) -> bool {
        matches!(self, PayloadView::None)
    }

    /// An owned core payload.
    #[inline]
    pub fn to_payload(&self) -> irkit_core::Payload {
        use irkit_core::Payload;
        match *self {
            PayloadView::None => Payload::None,
            PayloadView::Int(v) => Payload::Int(v),
            PayloadView::Float(v) => Payload::Float(v),
            PayloadView::Str(s) => Payload::Str(s.into()),
            PayloadView::Bytes(b) => Payload::Bytes(b.into()),
        }
    }
}

#[inline]
fn payload<'v>(r: &Rec, strings: FileStrings<'v>, blob: &'v [u8]) -> PayloadView<'v> {
    let word = (r.lo as u64) | ((r.hi as u64) << 32);
    match r.payload_kind {
        payload_kind::INT => PayloadView::Int(word),
        payload_kind::FLOAT => PayloadView::Float(word),
        payload_kind::STR => PayloadView::Str(strings.str_at(r.lo).unwrap_or("")),
        payload_kind::BYTES => {
            let start = r.lo as usize;
            PayloadView::Bytes(blob.get(start..start + r.hi as usize).unwrap_or(&[]))
        }
        _ => PayloadView::None,
    }
}

/// One validated definition archive (or the root's), read in place (by hand, see
/// `placed.rs`: its length is fixed when the view is made).
#[derive(Clone, Copy)]
pub struct DefView<'v> {
    strings: FileStrings<'v>,
    body: FlatBytes<'v>,
    index: Option<u32>,
    hash: [u8; 32],
}

impl<'v> DefView<'v> {
    pub(crate) fn new(
        strings: FileStrings<'v>,
        index: Option<u32>,
        body: FlatBytes<'v>,
        hash: [u8; 32],
    ) -> DefView<'v> {
        DefView {
            strings,
            body,
            index,
            hash,
        }
    }

    /// The archive itself (for hashing).
    pub(crate) fn archived(&self) -> FlatBytes<'v> {
        self.body
    }

    /// The definition's index (`None` for the root archive).
    pub fn index(&self) -> Option<u32> {
        self.index
    }

    /// Number of instructions (local indices are `0..len`).
    pub fn len(&self) -> u32 {
        self.body.count() as u32
    }

    /// Whether the archive has no instructions (never true for a validated one).
    pub fn is_empty(&self) -> bool {
        self.body.count() == 0
    }

    /// The recorded content hash (zero for the root archive).
    pub fn content_hash(&self) -> [u8; 32] {
        self.hash
    }

    /// The definition's own instruction (local 0).
    pub fn root(&self) -> InstView<'_> {
        InstView::new(self, 0)
    }

    /// Instruction `local`, if in range.
    pub fn inst(&self, local: u32) -> Option<InstView<'_>> {
        (local < self.len()).then(|| InstView::new(self, local))
    }

    /// Every instruction in pre-order (an instruction, its decorations, its children), its
    /// record read in one sequential pass over the body (no lookup per instruction).
    pub fn insts(&self) -> impl ExactSizeIterator<Item = InstView<'_>> + '_ {
        (0..self.len())
            .zip(self.records())
            .map(move |(local, rec)| InstView {
                def: self,
                local,
                rec,
            })
    }

    /// Every record in pre-order, read in one sequential pass (for the copy, which keeps
    /// only what it needs of each).
    pub(crate) fn records(&self) -> Records<'v> {
        self.body.records()
    }

    /// The body in the 3.0 layout, if it is one.
    #[inline]
    pub(crate) fn compact(&self) -> Option<crate::compact::Compact<'v>> {
        match self.body {
            FlatBytes::Compact(c) => Some(c),
            FlatBytes::Archived(_) => None,
        }
    }

    /// The payload of a record of this archive.
    #[inline]
    pub(crate) fn payload_of(&self, rec: &Rec) -> PayloadView<'v> {
        payload(rec, self.strings, self.body.bytes())
    }

    /// Operand `j` of the archive's operand array (absent marker out of range).
    #[inline]
    pub(crate) fn operand(&self, j: u32) -> Option<Ref> {
        Ref::decode(self.body.operand(j as usize))
    }

    /// Each local's number of ancestors within the archive (local 0 has none), in one pass over
    /// the validated subtree ends.
    pub(crate) fn local_depths(&self) -> Vec<u32> {
        let mut open: Vec<u32> = Vec::new();
        let mut depths = Vec::with_capacity(self.len() as usize);
        for iv in self.insts() {
            while open.last().is_some_and(|&end| end <= iv.local()) {
                open.pop();
            }
            depths.push(open.len() as u32);
            open.push(iv.subtree_end());
        }
        depths
    }
}

/// One instruction of a [`DefView`], borrowing it (small: moved per instruction by every walk).
/// Its record is read once, when the view is made (every field of it in O(1),
/// `spec/format.md` §2.4, or in order by [`DefView::insts`]), so its accessors read nothing
/// again.
#[derive(Clone, Copy)]
pub struct InstView<'v> {
    def: &'v DefView<'v>,
    local: u32,
    rec: Rec,
}

impl<'v> InstView<'v> {
    fn new(def: &'v DefView<'v>, local: u32) -> InstView<'v> {
        InstView {
            def,
            local,
            rec: def.body.rec(local as usize),
        }
    }

    fn rec(&self) -> Rec {
        self.rec
    }

    /// Its local index.
    pub fn local(&self) -> u32 {
        self.local
    }

    /// Its opcode (unknown ids are opaque and print as `#id`).
    pub fn opcode(&self) -> Opcode {
        Opcode(self.rec.opcode)
    }

    /// Its type, if any.
    pub fn ty(&self) -> Option<Ref> {
        Ref::decode(self.rec().ty)
    }

    /// Number of operands.
    pub fn operand_count(&self) -> usize {
        self.operands().len()
    }

    /// Its operands.
    pub fn operands(&self) -> impl ExactSizeIterator<Item = Ref> + 'v {
        self.def
            .body
            .operands_of(self.rec())
            .map(|o| Ref::decode(o).unwrap_or(Ref::Local(0)))
    }

    /// Its payload.
    pub fn payload(&self) -> PayloadView<'v> {
        payload(&self.rec(), self.def.strings, self.def.body.bytes())
    }

    /// Number of decorations (name hints and locations live in the debug section instead).
    pub fn decoration_count(&self) -> u32 {
        self.rec().n_decos
    }

    /// Its decorations, then its children, each with a flag telling whether it is a
    /// decoration.
    pub fn subs(&self) -> Subs<'v> {
        let r = self.rec();
        Subs {
            def: self.def,
            next: self.local + 1,
            end: r.end,
            decos_left: r.n_decos,
        }
    }

    /// Its decorations (the first of its sub-instructions: the walk stops at the first
    /// child, whose record it does not read).
    pub fn decorations(&self) -> impl Iterator<Item = InstView<'v>> + 'v {
        let mut subs = self.subs();
        std::iter::from_fn(move || {
            if subs.decos_left == 0 {
                return None;
            }
            subs.next().map(|(_, i)| i)
        })
    }

    /// Whether it has children (what `children().next().is_some()` says, reading only the
    /// subtree ends of its decorations).
    pub fn has_children(&self) -> bool {
        let mut next = self.local + 1;
        for _ in 0..self.rec.n_decos {
            if next >= self.rec.end {
                return false;
            }
            // Validation guarantees progress; guard anyway so a bad archive cannot loop.
            next = self.def.body.end(next as usize).max(next + 1);
        }
        next < self.rec.end
    }

    /// Its children.
    pub fn children(&self) -> impl Iterator<Item = InstView<'v>> + 'v {
        self.subs().filter(|(d, _)| !*d).map(|(_, i)| i)
    }

    /// One past the last local index of its subtree.
    pub fn subtree_end(&self) -> u32 {
        self.rec.end
    }
}

/// Iterator over an instruction's direct sub-instructions: `(is_decoration, inst)`.
pub struct Subs<'v> {
    def: &'v DefView<'v>,
    next: u32,
    end: u32,
    decos_left: u32,
}

impl<'v> Iterator for Subs<'v> {
    type Item = (bool, InstView<'v>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let inst = InstView::new(self.def, self.next);
        let next_end = inst.rec.end;
        // Validation guarantees progress; guard anyway so a bad archive cannot loop.
        self.next = next_end.max(self.next + 1);
        let is_deco = self.decos_left > 0;
        self.decos_left = self.decos_left.saturating_sub(1);
        Some((is_deco, inst))
    }
}

/// The validated pool, read in place (by hand, see `placed.rs`).
#[derive(Clone, Copy)]
pub struct PoolView<'v> {
    strings: FileStrings<'v>,
    pool: FlatBytes<'v>,
}

/// One pool value.
#[derive(Clone, Copy)]
pub struct PoolEntryView<'v> {
    pool: PoolView<'v>,
    index: u32,
}

impl<'v> PoolView<'v> {
    pub(crate) fn new(strings: FileStrings<'v>, pool: FlatBytes<'v>) -> PoolView<'v> {
        PoolView { strings, pool }
    }

    /// Number of pool values.
    pub fn len(&self) -> u32 {
        self.pool.count() as u32
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.pool.count() == 0
    }

    /// Pool value `i`.
    pub fn get(&self, i: u32) -> Option<PoolEntryView<'v>> {
        (i < self.len()).then_some(PoolEntryView {
            pool: *self,
            index: i,
        })
    }

    pub(crate) fn archived(&self) -> FlatBytes<'v> {
        self.pool
    }
}

impl<'v> PoolEntryView<'v> {
    fn rec(&self) -> Rec {
        self.pool.pool.rec(self.index as usize)
    }
    /// Its pool index.
    pub fn index(&self) -> u32 {
        self.index
    }
    /// Its opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode(self.rec().opcode)
    }
    /// Its type (constants), if any.
    pub fn ty(&self) -> Option<Ref> {
        Ref::decode(self.rec().ty)
    }
    /// Its operands (earlier pool values or definitions).
    pub fn operands(&self) -> impl ExactSizeIterator<Item = Ref> + 'v {
        self.pool
            .pool
            .operands_of(self.rec())
            .map(|o| Ref::decode(o).unwrap_or(Ref::Pool(PoolIndex::new(0))))
    }
    /// Its payload.
    pub fn payload(&self) -> PayloadView<'v> {
        payload(&self.rec(), self.pool.strings, self.pool.pool.bytes())
    }
}
