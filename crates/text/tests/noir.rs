//! The NOIR sugar (spec/text.md, "Procs"): passive-dependency prefixes and the proc header
//! mean exactly their generic forms, print back as sugar, and round-trip.

use irkit_core::equiv::modules_equal;
use irkit_text::{parse, print};

const SUGAR: &str = r#"@f: fn(i32) -> i32 = proc(%n: i32) -> %r {
  %L = event
  %c = case %n, i32 1, i32 2
  %a: i32 = %c ? iadd %n, %n
  %b: i32 = %c ! isub %n, i32 1
  %r: i32 = %a, %c ? %L ! coalesce %a, %b
  %c ? cue %L
}
"#;

const GENERIC: &str = r#"@f: fn(i32) -> i32 = proc {
  %n: i32 = param
  %L = event
  %c = case %n, i32 1, i32 2
  #[when(%c)] %a: i32 = iadd %n, %n
  #[unless(%c)] %b: i32 = isub %n, i32 1
  #[when(%a, %c), unless(%L)] %r: i32 = coalesce %a, %b
  #[when(%c)] cue %L
  result %r
}
"#;

fn parsed(src: &str) -> irkit_core::Module {
    parse(src, "t.ir").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn sugar_and_generic_forms_are_the_same_module() {
    let a = parsed(SUGAR);
    let b = parsed(GENERIC);
    modules_equal(&a, &b).unwrap();
    irkit_core::verify::verify(&a).unwrap();
}

#[test]
fn procs_print_with_the_sugar_and_reparse_equal() {
    let m = parsed(GENERIC);
    let text = print(&m);
    assert_eq!(text, SUGAR);
    modules_equal(&parsed(&text), &m).unwrap();
}

#[test]
fn passive_decorations_before_other_decorations_print_generically() {
    // `when` first, then `loc`: the prefix would reorder them, so `#[…]` keeps the order.
    let src = r#"@f: fn(i32) -> i32 = proc(%n: i32) -> %a {
  %c = case %n, i32 1
  #[when(%c), loc("x", i32 1, i32 2)] %a: i32 = iadd %n, %n
}
"#;
    let m = parsed(src);
    assert_eq!(print(&m), src);
}

#[test]
fn a_void_proc_has_no_arrow() {
    let src = "@v: fn() -> void = proc() {\n  %e = event\n}\n";
    let m = parsed(src);
    assert_eq!(print(&m), src);
    irkit_core::verify::verify(&m).unwrap();
}

#[test]
fn malformed_sugar_is_reported_at_its_place() {
    for (src, want) in [
        ("@f: fn() -> i32 = proc( -> %x {\n}\n", "1:25"),
        ("@f: fn() -> i32 = proc() -> %x\n", "2:1"),
        ("@f: fn() -> i32 = proc() {\n  %a, ? cue %a\n}\n", "2:"),
    ] {
        let e = parse(src, "t.ir").unwrap_err().to_string();
        assert!(e.contains(want), "{src:?}: {e}");
    }
}
