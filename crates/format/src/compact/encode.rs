//! Writing a compact body: a flattened body (2.x tagged references) encoded in the 3.0
//! layout ([`encode()`]), and the two fix-ups the writer makes to encoded bodies (string and
//! pool numbers assigned after encoding).

use byteorder::{ByteOrder, LittleEndian as LE};

use super::*;

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
