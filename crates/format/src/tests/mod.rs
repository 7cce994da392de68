//! Unit tests on hand-crafted files: valid archives carrying bad indices (with every hash
//! fixed up), so the checks after bytecheck are what must catch them. The crafted files are
//! 2.1 files (rkyv bodies), which every reader still reads; `compact/tests.rs` crafts 3.0
//! bodies.

use crate::header::{SECTION_OPTIONAL, SectionKind};
use crate::schema::*;
use crate::write::{assemble, assemble_version};
use crate::{ModuleView, ReadCause, write};

mod written;

fn ar<T>(v: &T) -> Vec<u8>
where
    T: for<'a> rkyv::Serialize<
            rkyv::api::high::HighSerializer<
                rkyv::util::AlignedVec,
                rkyv::ser::allocator::ArenaHandle<'a>,
                rkyv::rancor::BoxedError,
            >,
        >,
{
    rkyv::to_bytes::<rkyv::rancor::BoxedError>(v)
        .unwrap()
        .to_vec()
}

fn inst(opcode: u16, ty: u32, ops_end: u32, end: u32, n_decos: u32) -> InstRec {
    InstRec {
        opcode,
        payload_kind: payload_kind::NONE,
        reserved: 0,
        ty,
        ops_end,
        end,
        n_decos,
        payload_lo: 0,
        payload_hi: 0,
    }
}

fn root_body() -> Body {
    Body {
        insts: vec![inst(1, REF_NONE, 0, 1, 0)],
        operands: vec![],
        bytes: vec![],
    }
}

/// A file with the given pool and definition bodies (hashes all correct: content hashes
/// too, where the definitions can be hashed).
fn craft(strings: StringTable, pool: PoolTable, bodies: Vec<Body>) -> Vec<u8> {
    let first = craft_with(&strings, &pool, &bodies, &[]);
    let view = ModuleView::from_bytes(&first).unwrap();
    let content: Vec<[u8; 32]> = (0..bodies.len() as u32)
        .map(|i| view.semantic_hash(i).unwrap_or([0; 32]))
        .collect();
    craft_with(&strings, &pool, &bodies, &content)
}

fn craft_with(
    strings: &StringTable,
    pool: &PoolTable,
    bodies: &[Body],
    content: &[[u8; 32]],
) -> Vec<u8> {
    let mut blob = Vec::new();
    let mut index = DefIndex::default();
    for (i, b) in bodies.iter().enumerate() {
        while blob.len() % 16 != 0 {
            blob.push(0);
        }
        let bytes = ar(b);
        index.defs.push(DefEntry {
            offset: blob.len() as u64,
            length: bytes.len() as u64,
            inst_count: b.insts.len() as u32,
            opcode: b.insts.first().map_or(0, |i| i.opcode),
            reserved: 0,
            body_hash: *blake3::hash(&bytes).as_bytes(),
            content_hash: content.get(i).copied().unwrap_or([0; 32]),
        });
        blob.extend_from_slice(&bytes);
    }
    assemble_version(
        vec![
            (SectionKind::STRINGS, 0, ar(strings)),
            (SectionKind::SYMBOLS, 0, ar(&SymbolTable::default())),
            (SectionKind::SYMBOL_INDEX, 0, empty_symbol_index()),
            (SectionKind::POOL, 0, ar(pool)),
            (SectionKind::DEF_INDEX, 0, ar(&index)),
            (SectionKind::ROOT, 0, ar(&root_body())),
            (SectionKind::DEFINITIONS, 0, blob),
        ],
        2,
        1,
    )
}

/// A symbol index without records (spec/format.md §1.4).
fn empty_symbol_index() -> Vec<u8> {
    let mut b = vec![0u8; 16];
    b[4..8].copy_from_slice(&52u32.to_le_bytes());
    b
}

fn func_body(operands: Vec<u32>) -> Body {
    // func (ty = pool 0) { block { ret <operands> } }
    let n = operands.len() as u32;
    Body {
        insts: vec![
            inst(0x50, pack_ref(TAG_POOL, 0), 0, 3, 0),
            inst(0x58, REF_NONE, 0, 3, 0),
            inst(0x180, REF_NONE, n, 3, 0),
        ],
        operands,
        bytes: vec![],
    }
}

fn sig_pool() -> PoolTable {
    // void, fn(void)
    PoolTable {
        entries: vec![
            PoolRec {
                opcode: 0x10,
                payload_kind: 0,
                reserved: 0,
                ty: REF_NONE,
                ops_end: 0,
                payload_lo: 0,
                payload_hi: 0,
            },
            PoolRec {
                opcode: 0x1C,
                payload_kind: 0,
                reserved: 0,
                ty: REF_NONE,
                ops_end: 1,
                payload_lo: 0,
                payload_hi: 0,
            },
        ],
        operands: vec![pack_ref(TAG_POOL, 0)],
        bytes: vec![],
    }
}

fn def_error(bytes: &[u8], i: u32) -> crate::ReadError {
    let view = ModuleView::from_bytes(bytes).expect("header-level sections are fine");
    view.def(i).err().expect("the definition must be refused")
}

#[test]
fn crafted_good_file_materializes() {
    let bytes = craft(StringTable::default(), sig_pool(), vec![func_body(vec![])]);
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let m = view.materialize().unwrap();
    assert_eq!(m.top_level().len(), 1);
}

#[test]
fn out_of_range_local_reference() {
    let bytes = craft(
        StringTable::default(),
        sig_pool(),
        vec![func_body(vec![pack_ref(TAG_LOCAL, 9999)])],
    );
    let e = def_error(&bytes, 0);
    assert!(
        matches!(
            e.cause,
            ReadCause::IndexOutOfRange {
                what: "local reference",
                index: 9999,
                len: 3
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "<memory>: section definitions: definition 0: local reference 9999 out of range (3 entries)"
    );
}

#[test]
fn out_of_range_pool_def_and_string_references() {
    for (op, what) in [
        (pack_ref(TAG_POOL, 2), "pool reference"),
        (pack_ref(TAG_DEF, 1), "definition reference"),
    ] {
        let bytes = craft(
            StringTable::default(),
            sig_pool(),
            vec![func_body(vec![op])],
        );
        let e = def_error(&bytes, 0);
        assert!(
            matches!(e.cause, ReadCause::IndexOutOfRange { what: w, .. } if w == what),
            "{e}"
        );
    }
    let mut body = func_body(vec![]);
    body.insts[2].payload_kind = payload_kind::STR;
    body.insts[2].payload_lo = 3;
    let e = def_error(&craft(StringTable::default(), sig_pool(), vec![body]), 0);
    assert!(
        matches!(
            e.cause,
            ReadCause::IndexOutOfRange {
                what: "string index",
                ..
            }
        ),
        "{e}"
    );
    let mut body = func_body(vec![]);
    body.insts[2].payload_kind = payload_kind::BYTES;
    body.insts[2].payload_lo = u32::MAX;
    body.insts[2].payload_hi = u32::MAX;
    def_error(&craft(StringTable::default(), sig_pool(), vec![body]), 0);
    let mut body = func_body(vec![]);
    body.insts[2].payload_kind = 9;
    def_error(&craft(StringTable::default(), sig_pool(), vec![body]), 0);
    let body = func_body(vec![(3 << 30) | 5]);
    def_error(&craft(StringTable::default(), sig_pool(), vec![body]), 0);
}

#[test]
fn malformed_trees_and_operand_lists() {
    let cases: [fn(&mut Body); 8] = [
        |b| b.insts[1].end = 4,           // escapes the body
        |b| b.insts[0].end = 2,           // root does not cover
        |b| b.insts[1].end = 1,           // empty subtree end
        |b| b.insts[1].n_decos = 2,       // more decorations than subs
        |b| b.insts[2].ops_end = 7,       // operands past the end
        |b| b.operands.push(0),           // trailing operands
        |b| b.insts[0].ty = REF_NONE - 1, // reserved tag
        |b| b.insts.clear(),              // empty body
    ];
    for (k, f) in cases.iter().enumerate() {
        let mut body = func_body(vec![]);
        f(&mut body);
        let bytes = craft(StringTable::default(), sig_pool(), vec![body]);
        let view = ModuleView::from_bytes(&bytes);
        // An emptied body also changes the directory's instruction count: refused at open.
        if let Ok(view) = view {
            assert!(view.def(0).is_err(), "case {k} accepted");
            assert!(view.materialize().is_err(), "case {k} materialized");
        }
    }
}

#[test]
fn pool_forward_reference_and_local_reference_are_refused() {
    let mut pool = sig_pool();
    pool.operands[0] = pack_ref(TAG_POOL, 1); // fn refers to itself
    let bytes = craft(StringTable::default(), pool, vec![func_body(vec![])]);
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let e = view.pool().err().unwrap();
    assert!(e.to_string().contains("section pool"), "{e}");
    assert!(view.def(0).is_err(), "definitions need a valid pool");
    let mut pool = sig_pool();
    pool.operands[0] = pack_ref(TAG_LOCAL, 0);
    let bytes = craft(StringTable::default(), pool, vec![func_body(vec![])]);
    assert!(ModuleView::from_bytes(&bytes).unwrap().pool().is_err());
}

#[test]
fn hoistable_in_body_or_module_opcode_cannot_materialize() {
    let mut body = func_body(vec![]);
    body.insts[2].opcode = 0x14; // i32 as an instruction
    let bytes = craft(StringTable::default(), sig_pool(), vec![body]);
    let view = ModuleView::from_bytes(&bytes).unwrap();
    view.def(0).unwrap(); // structurally fine: readable in place
    let e = view.materialize().unwrap_err();
    assert!(e.to_string().contains("materialize"), "{e}");
}

#[test]
fn bad_strings_are_refused_at_first_use() {
    let strings = StringTable {
        ends: vec![2],
        data: vec![0xff, 0xfe],
    };
    let bytes = craft(strings, sig_pool(), vec![]);
    // Opening checks the header and the directory only.
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let e = view.try_string_count().unwrap_err();
    assert!(
        e.to_string()
            .contains("section strings: string 0 is not UTF-8"),
        "{e}"
    );
    assert_eq!(view.string_count(), 0);
    assert!(view.pool().is_err(), "the pool needs valid strings");
    assert!(view.validate_all().is_err());
    // The data is UTF-8 as a whole (`aé`), but string 1 ends inside `é`.
    let strings = StringTable {
        ends: vec![1, 2, 3],
        data: "a\u{e9}".as_bytes().to_vec(),
    };
    let view = ModuleView::from_bytes(&craft(strings, sig_pool(), vec![])).unwrap();
    let e = view.try_string_count().unwrap_err();
    assert!(e.to_string().contains("string 1 is not UTF-8"), "{e}");
    let strings = StringTable {
        ends: vec![5],
        data: vec![b'a'],
    };
    let view = ModuleView::from_bytes(&craft(strings, sig_pool(), vec![])).unwrap();
    assert!(view.try_string_count().is_err());
}
