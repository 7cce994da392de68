//! Flattened instruction lists, whatever their layout: a body's or the pool's records as
//! native integers ([`Rec`]), read through one trait ([`Flat`]) by the validator, the content
//! hashes and the copy, whether the list is the writer's native records, a 1.x/2.x rkyv
//! archive or a 3.0 compact body; string tables through [`Strings`] ([`FileStrings`] reads one
//! straight from the file's bytes); and what references in such a list may point to
//! ([`Limits`]). The layouts themselves are `schema.rs` (records) and `compact/`.

use crate::schema::{
    ArchivedBody, ArchivedPoolTable, ArchivedStringTable, Body, PoolTable, REF_NONE, StringTable,
};

/// A record's fields as native integers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rec {
    pub opcode: u16,
    pub payload_kind: u8,
    pub ty: u32,
    pub ops_start: u32,
    pub ops_end: u32,
    pub end: u32,
    pub n_decos: u32,
    pub lo: u32,
    pub hi: u32,
}

/// Read access to a flattened instruction list (a body or the pool).
pub(crate) trait Flat {
    fn count(&self) -> usize;
    /// Record `i` (callers only pass `i < count()`; out of range gives a default record).
    fn rec(&self, i: usize) -> Rec;
    /// Every record in order, `rec(0)` to `rec(count() - 1)`, for readers that walk them all
    /// (a layout may read them in one sequential pass instead of one lookup each; the 3.0
    /// layout does so for a body that passed its check).
    fn recs(&self) -> impl Iterator<Item = Rec> + '_ {
        (0..self.count()).map(|i| self.rec(i))
    }
    fn operand(&self, j: usize) -> u32;
    fn operand_len(&self) -> usize;
    fn blob(&self) -> &[u8];
    /// `rec(i).end`, for readers that need only the subtree end (a layout may read it
    /// alone).
    fn end(&self, i: usize) -> u32 {
        self.rec(i).end
    }
}

/// Read access to a string table.
pub(crate) trait Strings {
    fn get_str(&self, i: u32) -> Option<&str>;
}

macro_rules! impl_flat {
    ($ty:ty, $field:ident, |$r:ident, $i:ident| $tree:expr, $get:ident) => {
        impl Flat for $ty {
            fn count(&self) -> usize {
                self.$field.len()
            }
            fn rec(&self, $i: usize) -> Rec {
                let Some($r) = self.$field.get($i) else {
                    return Rec::default();
                };
                let ops_start = match $i.checked_sub(1).and_then(|p| self.$field.get(p)) {
                    Some(p) => $get!(p.ops_end),
                    None => 0,
                };
                let (end, n_decos): (u32, u32) = $tree;
                Rec {
                    opcode: $get!($r.opcode),
                    payload_kind: $r.payload_kind,
                    ty: $get!($r.ty),
                    ops_start,
                    ops_end: $get!($r.ops_end),
                    end,
                    n_decos,
                    lo: $get!($r.payload_lo),
                    hi: $get!($r.payload_hi),
                }
            }
            fn operand(&self, j: usize) -> u32 {
                self.operands.get(j).map_or(REF_NONE, |o| $get!(*o))
            }
            fn operand_len(&self) -> usize {
                self.operands.len()
            }
            fn blob(&self) -> &[u8] {
                &self.bytes
            }
        }
    };
}

macro_rules! native {
    ($e:expr) => {
        $e
    };
}
macro_rules! archived {
    ($e:expr) => {
        $e.to_native()
    };
}

impl_flat!(Body, insts, |r, i| (r.end, r.n_decos), native);
impl_flat!(PoolTable, entries, |r, i| (i as u32 + 1, 0), native);
impl_flat!(
    ArchivedBody,
    insts,
    |r, i| (r.end.to_native(), r.n_decos.to_native()),
    archived
);
impl_flat!(
    ArchivedPoolTable,
    entries,
    |r, i| (i as u32 + 1, 0),
    archived
);

/// The string at `i` of a table: `None` when out of range or not UTF-8.
fn table_str(ends: impl Fn(usize) -> Option<u32>, data: &[u8], i: u32) -> Option<&str> {
    let i = i as usize;
    let end = ends(i)? as usize;
    let start = match i.checked_sub(1) {
        Some(p) => ends(p)? as usize,
        None => 0,
    };
    std::str::from_utf8(data.get(start..end)?).ok()
}

impl Strings for StringTable {
    fn get_str(&self, i: u32) -> Option<&str> {
        table_str(|k| self.ends.get(k).copied(), &self.data, i)
    }
}

impl Strings for ArchivedStringTable {
    fn get_str(&self, i: u32) -> Option<&str> {
        table_str(|k| self.ends.get(k).map(|v| v.to_native()), &self.data, i)
    }
}

/// A validated string table read straight from the file bytes: the little-endian `u32`
/// ends and the UTF-8 data (no rkyv access per lookup).
#[derive(Clone, Copy, Default)]
pub(crate) struct FileStrings<'v> {
    pub ends: &'v [u8],
    pub data: &'v [u8],
}

impl<'v> FileStrings<'v> {
    /// String `i`, borrowing the file.
    pub fn str_at(&self, i: u32) -> Option<&'v str> {
        let end_at = |k: usize| -> Option<u32> {
            let b = self.ends.get(k.checked_mul(4)?..k.checked_mul(4)? + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        table_str(end_at, self.data, i)
    }

    /// The bytes of strings `0..count`, in one pass over the ends (no UTF-8 check: the table
    /// was validated); a string whose range is not in the data is left out.
    pub fn all_bytes(&self, count: usize) -> impl Iterator<Item = &'v [u8]> + 'v {
        let data = self.data;
        let mut start = 0usize;
        self.ends.chunks_exact(4).take(count).filter_map(move |e| {
            let end = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
            let s = data.get(start..end);
            start = end;
            s
        })
    }
}

impl Strings for FileStrings<'_> {
    fn get_str(&self, i: u32) -> Option<&str> {
        self.str_at(i)
    }
}

/// What references in a flattened list may point to.
pub(crate) struct Limits {
    pub pool_len: u32,
    pub def_count: u32,
    pub string_count: u32,
    /// Pool entries: references to the pool must point to earlier entries, locals are refused.
    pub is_pool: bool,
    /// The module-tree depth of local 0 (1 for a definition, 0 for the root); no local may be
    /// deeper than [`MAX_NESTING`](irkit_core::MAX_NESTING). Ignored for the pool, whose
    /// entries' value depth is checked.
    pub base_depth: u32,
}
