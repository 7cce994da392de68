//! Unit tests of the 3.0 body layout (`compact/`): written modules read back instruction by
//! instruction; hand-damaged bodies (every hash fixed up) are refused with the place named;
//! no damaged body panics a reader.

use irkit_core::{Builder, Module};

use crate::compact::{self, Compact};
use crate::flat::Flat;
use crate::schema::*;
use crate::{ModuleView, write};
use irkit_hostile as hostile;

/// A module with one function of `n` adds (a wide body when `n` is large) and a second
/// function calling it with constants.
fn module(n: usize) -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let f = b.func("f", sig).unwrap();
    b.export(f, "f").unwrap();
    let (entry, p) = b.block(f, &[i32t]).unwrap();
    b.position_at_end(entry);
    let mut x = p[0];
    for k in 0..n {
        let c = b.module().const_int(i32t, k as u64 % 7).unwrap();
        x = b.binary(irkit_core::Opcode::IADD, x, c).unwrap();
    }
    b.ret(Some(x)).unwrap();
    let g = b.func("g", sig).unwrap();
    b.export(g, "g").unwrap();
    let (entry, p) = b.block(g, &[i32t]).unwrap();
    b.position_at_end(entry);
    let r = b.call(f, &[p[0]]).unwrap();
    b.ret(Some(r)).unwrap();
    m
}

/// The bytes of definition `i` of a written file.
fn body_bytes(file: &[u8], i: u32) -> Vec<u8> {
    let view = ModuleView::from_bytes(file).unwrap();
    let defs = view
        .sections()
        .into_iter()
        .find(|s| s.name == "definitions")
        .unwrap();
    let meta = view.def_meta(i).unwrap();
    let at = (defs.offset + meta.offset) as usize;
    file[at..at + meta.length as usize].to_vec()
}

#[test]
fn bodies_round_trip_at_both_widths() {
    for (n, width) in [(10, 2), (40_000, 4)] {
        let m = module(n);
        let file = write(&m).unwrap();
        let view = ModuleView::from_bytes(&file).unwrap();
        view.validate_all().unwrap();
        let body = body_bytes(&file, 0);
        assert_eq!(body[0], width, "{n} adds");
        // Random access: the last instruction is the `ret`, its operand the last add.
        let c = Compact::parse(&body).unwrap();
        c.check().unwrap();
        let last = c.count() - 1;
        let ret = c.rec(last);
        assert_eq!(ret.opcode, irkit_core::Opcode::RET.0);
        assert_eq!(c.operand(ret.ops_start as usize), (last - 1) as u32);
        // In order: the sequential pass reads what random access reads.
        let seq: Vec<_> = c.recs().collect();
        let random: Vec<_> = (0..c.count()).map(|i| c.rec(i)).collect();
        assert_eq!(seq, random, "{n} adds");
        let again = write(&view.materialize().unwrap()).unwrap();
        assert_eq!(
            again, file,
            "{n} adds: writing what was read gives the same bytes"
        );
    }
}

#[test]
fn external_references_are_numbered_by_first_use() {
    let file = write(&module(3)).unwrap();
    let body = body_bytes(&file, 0);
    let c = Compact::parse(&body).unwrap();
    // The function's type is its first external reference: index n (the first after locals).
    let (n, k) = (c.count(), body_u16(&body, 4));
    assert!(k >= 2, "the signature and the constants: {k}");
    let ty_at = compact::HEADER_NARROW + 4 * k + 2 * n;
    let ty0 = u16::from_le_bytes([body[ty_at], body[ty_at + 1]]) as usize;
    assert_eq!(
        ty0, n,
        "instruction 0's type is the first external reference"
    );
    let ext0 = body_u32(&body, compact::HEADER_NARROW) as u32;
    assert_eq!(c.rec(0).ty, ext0);
    assert_eq!(ext0 >> 30, TAG_POOL);
}

/// A file whose definition 0 has `edit` applied to its bytes, every hash resealed (the body
/// hash in the definition index, the section hashes, the header hash).
fn damaged(edit: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let file = write(&module(70)).unwrap();
    let body = body_bytes(&file, 0);
    let mut new = body.clone();
    edit(&mut new);
    assert_eq!(new.len(), body.len(), "edits keep the length");
    let at = file.windows(body.len()).position(|w| w == body).unwrap();
    let mut out = file.clone();
    out[at..at + body.len()].copy_from_slice(&new);
    hostile::reseal(&mut out);
    out
}

fn def0_error(file: &[u8]) -> String {
    let view = ModuleView::from_bytes(file).unwrap();
    let e = view.def(0).err().expect("refused");
    assert!(view.validate_all().is_err());
    e.to_string()
}

/// An edit of a body's bytes.
type Edit<'a> = Box<dyn Fn(&mut Vec<u8>) + 'a>;

#[test]
fn damaged_bodies_are_refused_naming_the_place() {
    let n = |b: &Vec<u8>| body_u16(b, 2);
    let k = |b: &Vec<u8>| body_u16(b, 4);
    let ty_at = |b: &Vec<u8>| compact::HEADER_NARROW + 4 * k(b) + 2 * n(b);
    let cases: Vec<(&str, Edit<'_>)> = vec![
        ("reference width 3", Box::new(|b| b[0] = 3)),
        ("reserved header bytes", Box::new(|b| b[1] = 1)),
        ("its header lays out", Box::new(|b| b[6] ^= 1)),
        (
            "past the",
            Box::new(move |b| {
                let at = ty_at(b);
                b[at..at + 2].copy_from_slice(&0xFFFEu16.to_le_bytes());
            }),
        ),
        (
            "not a pool entry or a definition",
            Box::new(|b| b[compact::HEADER_NARROW + 3] = 0),
        ),
        (
            "subtree end",
            Box::new(move |b| {
                // The second subtree entry (the entry block's) ends past the body.
                let m = body_u16(b, 6);
                let words = n(b).div_ceil(64);
                let at = ty_at(b) + 4 * n(b) + 2 * m + 8 * words + 4 * (words - 1) + 2;
                let v = (n(b) + 3) as u16;
                b[at..at + 2].copy_from_slice(&v.to_le_bytes());
            }),
        ),
        (
            "decorations but",
            Box::new(move |b| {
                // The function's subtree entry (the first) claims 60 decorations.
                let (m, t) = (body_u16(b, 6), body_u16(b, 10));
                let words = n(b).div_ceil(64);
                let at = ty_at(b) + 4 * n(b) + 2 * m + 8 * words + 4 * (words - 1) + 2 * t;
                b[at..at + 2].copy_from_slice(&60u16.to_le_bytes());
            }),
        ),
        (
            "a payload entry of kind none",
            Box::new(move |b| {
                // The first payload entry's kind byte.
                let (m, t) = (body_u16(b, 6), body_u16(b, 10));
                let words = n(b).div_ceil(64);
                let bitmap = 8 * words + 4 * (words - 1);
                let at = ty_at(b) + 4 * n(b) + 2 * m + bitmap + 4 * t + bitmap;
                b[at] = payload_kind::NONE;
            }),
        ),
        (
            "is used before",
            Box::new(move |b| {
                // Instruction 0's type names the second external reference first.
                let (at, v) = (ty_at(b), (n(b) + 1) as u16);
                b[at..at + 2].copy_from_slice(&v.to_le_bytes());
            }),
        ),
    ];
    for (want, edit) in cases {
        let e = def0_error(&damaged(edit));
        assert!(
            e.contains("definition 0") && e.contains(want),
            "{want}: {e}"
        );
    }
}

#[test]
fn damaged_bitmaps_are_refused() {
    // Flip every bit of the side tables' bitmaps and ranks in turn: each flip is refused (a
    // bitmap bit moves a row, a rank no longer counts), never accepted, never a panic.
    let file = write(&module(70)).unwrap();
    let body = body_bytes(&file, 0);
    let c = Compact::parse(&body).unwrap();
    let (n, k, m) = (c.count(), body_u16(&body, 4), c.operand_len());
    let tree_bits = compact::HEADER_NARROW + 4 * k + 2 * n * 3 + 2 * m;
    let words = n.div_ceil(64);
    for byte in tree_bits..tree_bits + 8 * words + 4 * (words - 1) {
        for bit in 0..8 {
            let e = def0_error(&damaged(|b| b[byte] ^= 1 << bit));
            assert!(e.contains("definition 0"), "{e}");
        }
    }
}

fn body_u16(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes([b[at], b[at + 1]]) as usize
}

fn body_u32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

#[test]
fn every_damaged_byte_is_refused_or_read_without_panic() {
    let file = write(&module(70)).unwrap();
    let len = body_bytes(&file, 0).len();
    for at in 0..len {
        for x in [0x01u8, 0x80, 0xFF] {
            let bad = damaged(|b| b[at] ^= x);
            if let Ok(view) = ModuleView::from_bytes(&bad) {
                let _ = view.materialize();
            }
        }
    }
}

#[test]
fn lenient_parse_of_garbage_is_an_empty_body() {
    for bytes in [&[][..], &[2, 0, 0, 0][..], &[4; 40][..]] {
        let c = Compact::lenient(bytes);
        assert_eq!(c.count(), 0);
        assert_eq!(c.rec(5).end, 0);
        assert_eq!(c.operand(3), REF_NONE);
    }
}

/// `Compact::accepts` against `Compact::check` then `validate::flat` on one body and limits.
fn verdicts_agree(body: &[u8], lim: &crate::flat::Limits) -> bool {
    let Ok(c) = Compact::parse(body) else {
        return false;
    };
    let file: std::sync::Arc<str> = "t".into();
    let cx = crate::validate::Ctx {
        file: &file,
        loc: crate::error::Location::Definition(0),
    };
    let slow = c
        .check()
        .map_err(|m| cx.bad(m))
        .and_then(|()| crate::validate::flat(&c, lim, &cx));
    assert_eq!(c.accepts(lim), slow.is_ok(), "{slow:?}");
    slow.is_ok()
}

#[test]
fn one_pass_verdict_is_check_then_flat() {
    // Every byte of narrow bodies changed in a few ways, and a wide body's first bytes and a
    // sample of the rest, under limits around the file's own: the one-pass check accepts
    // exactly what the two checks accept.
    let (mut accepted, mut tried) = (0u32, 0u32);
    for n in [3, 70, 40_000] {
        let file = write(&module(n)).unwrap();
        let view = ModuleView::from_bytes(&file).unwrap();
        let pool = view.pool().unwrap().len();
        let (defs, strings) = (view.def_count(), view.string_count());
        for d in 0..defs {
            let body = body_bytes(&file, d);
            let step = if body.len() > 4096 { 1999 } else { 1 };
            let positions = (0..body.len().min(256)).chain((256..body.len()).step_by(step));
            let limits = [
                (pool, defs, strings, 1),
                (pool.saturating_sub(1), defs, strings, 1),
                (pool, 1, 0, 1),
                (pool, defs, strings, 0),
                (pool, defs, strings, irkit_core::MAX_NESTING - 2),
                (pool, defs, strings, irkit_core::MAX_NESTING),
                (pool, defs, strings, irkit_core::MAX_NESTING + 3),
            ]
            .map(|(pool_len, def_count, string_count, base_depth)| {
                crate::flat::Limits {
                    pool_len,
                    def_count,
                    string_count,
                    is_pool: false,
                    base_depth,
                }
            });
            for lim in &limits {
                verdicts_agree(&body, lim);
            }
            assert!(verdicts_agree(&body, &limits[0]));
            let lim = &limits[0];
            for at in positions {
                for x in [0x01u8, 0x02, 0x10, 0x80, 0xFF] {
                    let mut b = body.clone();
                    b[at] ^= x;
                    accepted += verdicts_agree(&b, lim) as u32;
                    tried += 1;
                }
                let mut b = body.clone();
                b[at] = 0;
                verdicts_agree(&b, lim);
            }
        }
    }
    // Both verdicts are exercised (a changed opcode, say, is still a valid body).
    assert!(accepted > 0 && accepted < tried, "{accepted} of {tried}");
}
