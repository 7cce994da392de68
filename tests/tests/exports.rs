//! One definition under several export names, and re-exports (an import declaration with
//! `export`s, spec/ir.md rule A7) through every stage: verifier, printer and parser, binary
//! writer and reader (symbol records, `check_def_symbols`, `find_export`), semantic hashes.

use irkit_core::Opcode;
use irkit_format::{ModuleView, SymbolRole};

const TEXT: &str = r#"#[export("count"), export("total")]
@counter: i32 = global_var i32 40
#[import("lib.g"), export("g"), export("g2")]
@g: i64 = global_var

#[export("inc"), export("bump")]
@inc: fn() -> i32 = func {
^entry:
  %v: i32 = load @counter
  %w: i32 = iadd %v, i32 1
  store @counter, %w
  ret %w
}
"#;

#[test]
fn several_exports_round_trip_through_text_and_binary() {
    let m = irkit_text::parse(TEXT, "t.ir").unwrap_or_else(|e| panic!("{e}"));
    irkit_core::verify::verify(&m).expect("verifies");
    assert_eq!(irkit_text::print(&m), TEXT, "prints as parsed");
    let counter = m.find_export("count").expect("count");
    assert_eq!(m.find_export("total"), Some(counter));
    let inc = m.find_export("inc").expect("inc");
    assert_eq!(m.find_export("bump"), Some(inc));
    let g = m.find_export("g").expect("g");
    assert_eq!(m.find_export("g2"), Some(g));
    assert_eq!(m.decoration_str(g, Opcode::IMPORT), Some("lib.g"));
    assert_eq!(
        m.decoration_strs(counter, Opcode::EXPORT)
            .collect::<Vec<_>>(),
        ["count", "total"]
    );

    let bytes = irkit_format::write(&m).expect("encodes");
    let view = ModuleView::from_bytes(&bytes).expect("opens");
    view.validate_all().expect("validates");
    for d in 0..view.def_count() {
        view.check_def_symbols(d)
            .expect("records agree with decorations");
    }
    let def_of = |name: &str| view.find_export(name).map(|s| s.def);
    assert_eq!(def_of("count"), def_of("total"));
    assert_eq!(def_of("inc"), def_of("bump"));
    assert_eq!(def_of("g"), def_of("g2"));
    assert!(def_of("count").is_some() && def_of("g").is_some() && def_of("inc").is_some());
    // The re-export declaration has one import record and one export record per name.
    let gd = def_of("g").expect("g");
    let mut roles: Vec<(SymbolRole, String)> = view
        .symbols_of_def(gd)
        .expect("records")
        .into_iter()
        .map(|s| (s.role, s.name.to_string()))
        .collect();
    roles.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        roles,
        [
            (SymbolRole::Export, "g".to_string()),
            (SymbolRole::Export, "g2".to_string()),
            (SymbolRole::Import, "lib.g".to_string()),
        ]
    );
    let back = view.materialize().expect("materializes");
    assert_eq!(irkit_text::print(&back), TEXT, "reads back as written");
}

/// Export names are part of a definition's own code for semantic hashes (spec/format.md
/// §3.2): copies that differ only in an extra export name are not the same code.
#[test]
fn extra_export_names_count_in_semantic_hashes() {
    let hash = |text: &str| {
        let m = irkit_text::parse(text, "t.ir").unwrap_or_else(|e| panic!("{e}"));
        let bytes = irkit_format::write(&m).expect("encodes");
        let view = ModuleView::from_bytes(&bytes).expect("opens");
        let d = view.find_export("sq").expect("sq").def;
        view.semantic_hash(d).expect("hashes")
    };
    let one = "#[export(\"sq\"), linkonce]\n@sq: fn(i32) -> i32 = func {\n^entry(%x: i32):\n  %r: i32 = imul %x, %x\n  ret %r\n}\n";
    let two = one.replace("export(\"sq\")", "export(\"sq\"), export(\"square\")");
    let renamed = one.replace("@sq:", "@other:");
    assert_eq!(hash(one), hash(&renamed), "name hints do not count");
    assert_ne!(hash(one), hash(&two), "export names do");
}

/// A module re-exporting `n0` as `n1`, … `n{len-1}` as `n{len}`, `n{len}` defined; `main`
/// imports `n0` (the far end of the chain).
fn chain_module(len: usize) -> String {
    let mut t = String::new();
    for i in 0..len {
        t.push_str(&format!(
            "#[import(\"n{}\"), export(\"n{i}\")]\n@r{i}: i32 = global_var\n",
            i + 1
        ));
    }
    t.push_str(&format!(
        "#[export(\"n{len}\")]\n@end: i32 = global_var i32 9\n"
    ));
    t.push_str(
        "#[import(\"n0\")]\n@x: i32 = global_var\n\n#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %v: i32 = load @x\n  ret %v\n}\n",
    );
    t
}

fn link_text(text: &str) -> Result<irkit_core::Module, String> {
    // The chain and its user in two inputs, so that resolution crosses modules.
    let (chain, user) = text.split_at(text.find("#[import(\"n0\")]").expect("user"));
    let parse = |t: &str| irkit_text::parse(t, "t.ir").unwrap_or_else(|e| panic!("{e}"));
    let inputs = vec![
        irkit_link::Input::from_module("chain.ir", &parse(chain)).map_err(|e| e.to_string())?,
        irkit_link::Input::from_module("main.ir", &parse(user)).map_err(|e| e.to_string())?,
    ];
    irkit_link::link(inputs, &irkit_link::LinkOptions::default())
        .map(|l| l.module)
        .map_err(|e| e.to_string())
}

/// Re-export chains are followed iteratively up to 256 names; a longer one is an error, not
/// a stack overflow.
#[test]
fn long_reexport_chains_are_bounded() {
    let m = link_text(&chain_module(255)).expect("a chain of 256 names links");
    let g = m
        .find_export("n255")
        .expect("the definition keeps its name");
    assert_eq!(
        m.find_export("n0"),
        Some(g),
        "the first name is attached to it"
    );
    let e = link_text(&chain_module(300)).expect_err("too long");
    assert_eq!(
        e,
        "error: re-export chain longer than 256 names: @n0 (chain.ir) -> @n1 (chain.ir) -> \
         @n2 (chain.ir) -> @n3 (chain.ir) -> … (252 more)"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}
