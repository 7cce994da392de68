//! Semantic checks run after rkyv's structural check (bytecheck): every index inside an
//! archive is checked in range (naga's `valid/handles.rs` idea), every tree well nested, every
//! list consistent, so that nothing reading a validated archive can index out of bounds.

use std::sync::Arc;

use irkit_core::MAX_NESTING;

use crate::error::{Location, ReadCause, ReadError};
use crate::flat::{Flat, Limits, Strings};
use crate::placed::DefEntries;
use crate::schema::{
    ArchivedDebugTable, ArchivedDefIndex, ArchivedStringTable, ArchivedSymbolTable, REF_MAX_INDEX,
    REF_NONE, TAG_DEF, TAG_LOCAL, TAG_POOL, payload_kind,
};

/// Shorthand for building errors at one location.
pub(crate) struct Ctx<'a> {
    pub file: &'a Arc<str>,
    pub loc: Location,
}

impl Ctx<'_> {
    pub fn err(&self, cause: ReadCause) -> ReadError {
        ReadError::new(self.file, self.loc.clone(), cause)
    }
    pub fn bad(&self, msg: String) -> ReadError {
        self.err(ReadCause::Malformed(msg))
    }
    fn range(&self, what: &'static str, index: u64, len: u64) -> Result<(), ReadError> {
        if index < len {
            Ok(())
        } else {
            Err(self.err(ReadCause::IndexOutOfRange { what, index, len }))
        }
    }
}

/// Checks a string table: ends non-decreasing, within the data, every string UTF-8.
pub(crate) fn strings(t: &ArchivedStringTable, cx: &Ctx<'_>) -> Result<u32, ReadError> {
    // When the data is UTF-8 as a whole (checked once), a string of it is UTF-8 exactly when
    // both its ends are character boundaries, which `str::get` tells in O(1).
    let whole = std::str::from_utf8(&t.data).ok();
    let mut prev = 0u32;
    for (i, e) in t.ends.iter().enumerate() {
        let e = e.to_native();
        if e < prev || e as usize > t.data.len() {
            return Err(cx.bad(format!(
                "string {i} ends at {e}, outside {prev}..={}",
                t.data.len()
            )));
        }
        let utf8 = match whole {
            Some(d) => d.get(prev as usize..e as usize).is_some(),
            None => std::str::from_utf8(&t.data[prev as usize..e as usize]).is_ok(),
        };
        if !utf8 {
            return Err(cx.bad(format!("string {i} is not UTF-8")));
        }
        prev = e;
    }
    u32::try_from(t.ends.len()).map_err(|_| cx.bad("too many strings".into()))
}

/// Checks the symbol table: names and definitions in range, sorted by (name, role, def).
pub(crate) fn symbols(
    t: &ArchivedSymbolTable,
    strings: &impl Strings,
    string_count: u32,
    def_count: u32,
    cx: &Ctx<'_>,
) -> Result<(), ReadError> {
    let string_count = string_count as u64;
    let mut prev: Option<(&str, u8, u32)> = None;
    for s in t.symbols.iter() {
        cx.range("string index", s.name.to_native() as u64, string_count)?;
        cx.range(
            "definition index",
            s.def.to_native() as u64,
            def_count as u64,
        )?;
        let name = strings.get_str(s.name.to_native()).unwrap_or("");
        let key = (name, s.role, s.def.to_native());
        if let Some(p) = prev
            && (p.0.as_bytes(), p.1, p.2) > (key.0.as_bytes(), key.1, key.2)
        {
            return Err(cx.bad(format!("symbols are not sorted by name at `{name}`")));
        }
        prev = Some(key);
    }
    Ok(())
}

/// Checks the definitions directory against the `definitions` section's length. In 1.x and
/// 2.x (`packed` false) bodies start at 16-byte offsets, in order; in 3.x (`packed`) each
/// starts where the previous one ends, the first at 0, and the last ends the section.
pub(crate) fn def_index(
    t: &ArchivedDefIndex,
    section_len: u64,
    packed: bool,
    cx: &Ctx<'_>,
) -> Result<u32, ReadError> {
    if t.defs.len() > REF_MAX_INDEX as usize + 1 {
        return Err(cx.bad(format!("{} definitions", t.defs.len())));
    }
    let mut prev_end = 0u64;
    for (i, d) in t.defs.iter().enumerate() {
        let (off, len) = (d.offset.to_native(), d.length.to_native());
        let end = off.checked_add(len);
        if packed && off != prev_end {
            return Err(cx.bad(format!(
                "definition {i}: offset {off}, the previous one ends at {prev_end}"
            )));
        }
        if off % crate::header::SECTION_ALIGN != 0 && !packed || off < prev_end {
            return Err(cx.bad(format!(
                "definition {i}: offset {off} is unaligned or overlaps the previous one"
            )));
        }
        match end {
            Some(end) if end <= section_len => prev_end = end,
            _ => {
                return Err(cx.err(ReadCause::Truncated(format!(
                    "definition {i}: bytes {off}..+{len} exceed the definitions section \
                     ({section_len} bytes)"
                ))));
            }
        }
        if d.inst_count.to_native() == 0 {
            return Err(cx.bad(format!("definition {i} has no instructions")));
        }
    }
    if packed && prev_end != section_len {
        return Err(cx.bad(format!(
            "the definitions end at {prev_end}, the definitions section at {section_len}"
        )));
    }
    Ok(t.defs.len() as u32)
}

#[inline(always)]
fn check_ref(r: u32, i: u32, n: u32, lim: &Limits, cx: &Ctx<'_>) -> Result<(), ReadError> {
    let index = (r & REF_MAX_INDEX) as u64;
    match r >> 30 {
        TAG_LOCAL if !lim.is_pool => cx.range("local reference", index, n as u64),
        TAG_LOCAL => Err(cx.bad(format!("pool entry {i} refers to a local instruction"))),
        TAG_POOL if lim.is_pool => {
            cx.range("pool reference (to an earlier entry)", index, i as u64)
        }
        TAG_POOL => cx.range("pool reference", index, lim.pool_len as u64),
        TAG_DEF => cx.range("definition reference", index, lim.def_count as u64),
        _ => Err(cx.bad(format!(
            "instruction {i}: reserved reference encoding {r:#010x}"
        ))),
    }
}

/// Checks a body or the pool: operand lists, references, payloads and (bodies) the tree.
pub(crate) fn flat(f: &(impl Flat + ?Sized), lim: &Limits, cx: &Ctx<'_>) -> Result<(), ReadError> {
    let n = f.count();
    if n > REF_MAX_INDEX as usize + 1 {
        return Err(cx.bad(format!("{n} instructions")));
    }
    let n32 = n as u32;
    if !lim.is_pool && n == 0 {
        return Err(cx.bad("empty body".into()));
    }
    let n_operands = operand_count(f);
    let blob_len = f.blob().len() as u64;
    let mut prev_ops = 0u32;
    // The local and its ancestors within the body, each with its count of direct
    // sub-instructions so far.
    let mut open: Vec<Open> = Vec::new();
    // The first instruction with more decorations than sub-instructions (reported once the
    // rest is known to be well formed).
    let mut too_many_decos: Option<(u32, u32, u32)> = None;
    let mut close = |o: Open| {
        if o.decos > o.kids && too_many_decos.is_none_or(|(i, _, _)| o.local < i) {
            too_many_decos = Some((o.local, o.decos, o.kids));
        }
    };
    // Pool entries' value depths (every pool reference points to an earlier entry).
    let mut value_depth: Vec<u32> = Vec::new();
    // In one pass over the records (a 3.0 body reads them sequentially: its rank directories
    // were checked first, by `Compact::check`).
    for (i, r) in (0..n32).zip(f.recs()) {
        if !lim.is_pool {
            while let Some(o) = open.pop_if(|o| o.end <= i) {
                close(o);
            }
            if i > 0 && open.is_empty() {
                return Err(cx.bad(format!("instruction {i} is outside the root's subtree")));
            }
            if r.end <= i || r.end > n32 || open.last().is_some_and(|o| r.end > o.end) {
                return Err(cx.bad(format!(
                    "instruction {i}: subtree end {} is not nested in its parent's",
                    r.end
                )));
            }
            if let Some(parent) = open.last_mut() {
                parent.kids += 1;
            }
            open.push(Open {
                end: r.end,
                local: i,
                decos: r.n_decos,
                kids: 0,
            });
            // `open` holds the local and its ancestors within the body: a linear check.
            if open.len() as u64 - 1 + lim.base_depth as u64 > MAX_NESTING as u64 {
                return Err(too_deep("instruction", i, cx));
            }
        }
        if r.ops_end < prev_ops || r.ops_end as usize > n_operands {
            return Err(cx.bad(format!(
                "instruction {i}: operand list end {} outside {prev_ops}..={n_operands}",
                r.ops_end
            )));
        }
        prev_ops = r.ops_end;
        if r.ty != REF_NONE {
            check_ref(r.ty, i, n32, lim, cx)?;
        }
        for j in r.ops_start..r.ops_end {
            let o = f.operand(j as usize);
            if o == REF_NONE {
                return Err(cx.bad(format!("instruction {i}: absent operand")));
            }
            check_ref(o, i, n32, lim, cx)?;
        }
        if lim.is_pool {
            let mut deepest = 0u32;
            let refs = std::iter::once(r.ty)
                .chain((r.ops_start..r.ops_end).map(|j| f.operand(j as usize)));
            for x in refs {
                if x != REF_NONE && x >> 30 == TAG_POOL {
                    // In range: checked above, and earlier than `i`.
                    deepest = deepest.max(value_depth[(x & REF_MAX_INDEX) as usize]);
                }
            }
            if deepest >= MAX_NESTING {
                return Err(too_deep("pool entry", i, cx));
            }
            value_depth.push(deepest + 1);
        }
        match r.payload_kind {
            payload_kind::NONE | payload_kind::INT | payload_kind::FLOAT => {}
            payload_kind::STR => cx.range("string index", r.lo as u64, lim.string_count as u64)?,
            payload_kind::BYTES => {
                if r.lo as u64 + r.hi as u64 > blob_len {
                    return Err(cx.bad(format!(
                        "instruction {i}: bytes {}..+{} outside the {blob_len}-byte blob",
                        r.lo, r.hi
                    )));
                }
            }
            k => return Err(cx.bad(format!("instruction {i}: unknown payload kind {k}"))),
        }
    }
    if prev_ops as usize != n_operands {
        return Err(cx.bad(format!("{} operands stored, {prev_ops} used", n_operands)));
    }
    if !lim.is_pool {
        if f.end(0) != n32 {
            return Err(cx.bad("the root's subtree does not cover the body".into()));
        }
        // Decoration counts: at most the number of direct sub-instructions (counted in the
        // walk above).
        while let Some(o) = open.pop() {
            close(o);
        }
        if let Some((i, decos, kids)) = too_many_decos {
            return Err(cx.bad(format!(
                "instruction {i}: {decos} decorations but {kids} sub-instructions"
            )));
        }
    }
    Ok(())
}

/// An open subtree of [`flat`]'s walk: where it ends, its root, that root's decoration count
/// and its direct sub-instructions seen so far.
struct Open {
    end: u32,
    local: u32,
    decos: u32,
    kids: u32,
}

/// A debug record of `local` of definition `def` whose decoration, once re-inserted, would be
/// nested deeper than [`MAX_NESTING`] (its instruction is at the limit).
pub(crate) fn debug_too_deep(file: &Arc<str>, def: u32, local: u32) -> ReadError {
    ReadError::new(
        file,
        Location::Definition(def),
        ReadCause::TooDeep {
            what: "debug decoration of instruction",
            index: local as u64,
            limit: MAX_NESTING,
        },
    )
}

fn too_deep(what: &'static str, index: u32, cx: &Ctx<'_>) -> ReadError {
    cx.err(ReadCause::TooDeep {
        what,
        index: index as u64,
        limit: MAX_NESTING,
    })
}

fn operand_count(f: &(impl Flat + ?Sized)) -> usize {
    f.operand_len()
}

/// Checks the debug section against the definitions directory.
pub(crate) fn debug(
    t: &ArchivedDebugTable,
    index: DefEntries<'_>,
    cx: &Ctx<'_>,
) -> Result<(), ReadError> {
    let string_count = strings(&t.strings, cx)? as u64;
    let mut prev: Option<(u32, u32, u32)> = None;
    for (k, e) in t.entries.iter().enumerate() {
        let key = (
            e.def.to_native(),
            e.local.to_native(),
            e.position.to_native(),
        );
        if prev.is_some_and(|p| p >= key) {
            return Err(cx.bad(format!("entry {k} is out of order")));
        }
        prev = Some(key);
        let Some(def) = index.get(key.0 as usize) else {
            return Err(cx.err(ReadCause::IndexOutOfRange {
                what: "definition index",
                index: key.0 as u64,
                len: index.len() as u64,
            }));
        };
        cx.range("local index", key.1 as u64, def.inst_count as u64)?;
        if e.kind == crate::schema::DEBUG_SCOPED_LOC {
            let [a, b, c] = e.reserved;
            let scope = u32::from_le_bytes([a, b, c, 0]);
            cx.range("scope local index", scope as u64, def.inst_count as u64)?;
        }
        cx.range(
            "debug string index",
            e.text.to_native() as u64,
            string_count,
        )?;
    }
    Ok(())
}
