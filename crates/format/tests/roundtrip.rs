//! Round trips through the bytes: read(write(m)) equals m, writing is deterministic, views
//! read in place, content hashes are local.

mod common;

use irkit_core::equiv::modules_equal;
use irkit_core::{Builder, Module, Opcode};
use irkit_format::{ModuleView, PayloadView, Ref, SymbolRole, read, write, write_to_path};

fn roundtrip(m: &Module) -> Vec<u8> {
    let bytes = write(m).unwrap();
    let view = ModuleView::from_bytes(&bytes).unwrap();
    view.validate_all().unwrap();
    let back = view.materialize().unwrap();
    modules_equal(m, &back).unwrap();
    let again = write(&back).unwrap();
    assert_eq!(
        bytes, again,
        "write(read(write(m))) must give identical bytes"
    );
    bytes
}

#[test]
fn empty_module() {
    roundtrip(&Module::new());
}

#[test]
fn sample_module() {
    let m = common::sample();
    let bytes = roundtrip(&m);
    assert_eq!(write(&m).unwrap(), bytes, "deterministic");
    let view = ModuleView::from_bytes(&bytes).unwrap();
    assert_eq!(
        view.version(),
        (irkit_format::FORMAT_MAJOR, irkit_format::FORMAT_MINOR)
    );
    assert!(view.has_debug());
    let abs = view.find_export("abs").unwrap();
    assert_eq!(abs.kind, Opcode::FUNC);
    let imp = view.find_symbols("lib.ext");
    assert_eq!(imp.len(), 1);
    assert_eq!(imp[0].role, SymbolRole::Import);
    assert!(view.find_export("nope").is_none());
    // Read one definition in place.
    let d = view.def(abs.def).unwrap();
    assert_eq!(d.root().opcode(), Opcode::FUNC);
    assert_eq!(view.def_name(abs.def), Some("abs"));
    let blocks: Vec<_> = d.root().children().collect();
    assert_eq!(blocks.len(), 3);
    let br = blocks[0].children().last().unwrap();
    assert_eq!(br.opcode(), Opcode::BR);
    let ops: Vec<Ref> = br.operands().collect();
    assert_eq!(ops[1], Ref::Local(blocks[1].local()));
    assert_eq!(ops[2], Ref::Local(blocks[2].local()));
    let opaque = d.insts().find(|i| i.opcode() == Opcode(0x7abc)).unwrap();
    assert_eq!(opaque.opcode().to_string(), "#31420");
    assert_eq!(opaque.payload(), PayloadView::Bytes(&[1, 2, 3]));
    assert_eq!(opaque.operands().nth(1), Some(Ref::Local(0)));
    // The export decoration stays in the body; the name hint and loc moved to debug.
    let decos: Vec<_> = d.root().decorations().map(|x| x.opcode()).collect();
    assert_eq!(decos, vec![Opcode::EXPORT]);
    let pool = view.pool().unwrap();
    assert!(pool.len() > 5);
    let sig = pool.get(abs.signature.unwrap()).unwrap();
    assert_eq!(sig.opcode(), Opcode::FN);
    // ir-info material.
    let names: Vec<_> = view.sections().into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"definitions".to_string()));
    let info = view.def_info(abs.def).unwrap();
    assert_eq!(info.content_hash, abs.hash);
    assert!(info.size > 0);
}

#[test]
fn chain_module_and_files() {
    let m = common::chain(20, 10);
    let bytes = roundtrip(&m);
    let dir = std::env::temp_dir().join(format!("irkit-format-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chain.irm");
    write_to_path(&m, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let view = ModuleView::open(&path).unwrap();
    assert_eq!(view.file(), path.display().to_string());
    modules_equal(&m, &view.materialize().unwrap()).unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_debug_info_names_are_absent_but_structure_equal() {
    let mut m = common::chain(3, 2);
    // Strip names: no debug section at all.
    for d in m.top_level().to_vec() {
        if let Some(n) = m.find_decoration(d, Opcode::NAME_HINT) {
            m.remove(n).unwrap();
        }
    }
    let bytes = roundtrip(&m);
    assert!(!ModuleView::from_bytes(&bytes).unwrap().has_debug());
}

#[test]
fn content_hash_is_local_to_a_definition() {
    let a = common::chain(5, 4);
    let mut b = common::chain(5, 4);
    // Change the body of f2 only (f3 calls f2, by name: its hash must not change).
    let f2 = b.find_named("f2").unwrap();
    let entry = b.entry_block(f2).unwrap();
    let first = b.children(entry)[1];
    assert_eq!(b.opcode(first), Opcode::IADD);
    let c = b.const_i64(99);
    b.set_operand(first, 1, c).unwrap();
    let (va, vb) = (
        ModuleView::from_bytes(&write(&a).unwrap()).unwrap(),
        ModuleView::from_bytes(&write(&b).unwrap()).unwrap(),
    );
    for i in 0..5 {
        let (ha, hb) = (
            va.def_info(i).unwrap().content_hash,
            vb.def_info(i).unwrap().content_hash,
        );
        if i == 2 {
            assert_ne!(ha, hb, "the changed definition's hash changes");
        } else {
            assert_eq!(ha, hb, "definition {i} did not change");
        }
    }
    assert_ne!(va.content_hash(), vb.content_hash());
    vb.validate_all().unwrap();
}

#[test]
fn module_hash_ignores_debug_info() {
    let a = common::chain(3, 2);
    let mut b = common::chain(3, 2);
    let f0 = b.find_named("f0").unwrap();
    b.set_name(f0, "renamed_but_exported").unwrap();
    let va = ModuleView::from_bytes(&write(&a).unwrap()).unwrap();
    let vb = ModuleView::from_bytes(&write(&b).unwrap()).unwrap();
    // f0 is exported, so its key is its export name: nothing but debug info changed.
    assert_eq!(va.content_hash(), vb.content_hash());
}

#[test]
fn unusual_trees_round_trip() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let void = b.module().ty_void();
    let sig = b.module().ty_fn(void, &[]).unwrap();
    let f = b.func("", sig).unwrap();
    // A name hint that is not first, a second name hint, a loc with a non-i32 operand (stays in
    // the body), an opaque decoration.
    b.decorate(f, Opcode::INLINE_HINT, vec![], irkit_core::Payload::None)
        .unwrap();
    b.decorate(
        f,
        Opcode::NAME_HINT,
        vec![],
        irkit_core::Payload::Str("late".into()),
    )
    .unwrap();
    let c64 = b.module().const_i64(5);
    let c32 = b.module().const_i32(6);
    b.decorate(
        f,
        Opcode::LOC,
        vec![c64, c32],
        irkit_core::Payload::Str("x".into()),
    )
    .unwrap();
    b.decorate(f, Opcode(0x7001), vec![], irkit_core::Payload::Int(9))
        .unwrap();
    b.decorate(
        f,
        Opcode::NAME_HINT,
        vec![],
        irkit_core::Payload::Str("again".into()),
    )
    .unwrap();
    let (entry, _) = b.block(f, &[]).unwrap();
    b.position_at_end(entry);
    b.ret(None).unwrap();
    let _ = i32t;
    roundtrip(&m);
}

#[test]
fn read_convenience_and_memory_name() {
    let m = common::sample();
    let bytes = write(&m).unwrap();
    modules_equal(&m, &read(&bytes).unwrap()).unwrap();
    let mut bad = bytes.clone();
    bad[0] ^= 1;
    let e = read(&bad).unwrap_err();
    assert!(e.to_string().starts_with("<memory>: header:"), "{e}");
}
