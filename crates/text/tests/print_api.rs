//! `print_inst`, `print_annotated` and `Names`.

use irkit_core::{Inst, Module, Opcode};
use irkit_text::{Names, parse, print_annotated, print_inst};

const SRC: &str = r#"#[export("f")]
@f: fn(i32) -> i32 = func {
^entry(%n: i32):
  #[loc("a.c", i32 1, i32 2)] %s: i32 = iadd %n, i32 1
  br i1 true, ^next(%s), ^next(%n)
^next(%v: i32):
  ret %v
}
"#;

fn find(m: &Module, op: Opcode) -> Inst {
    m.walk().into_iter().find(|&i| m.opcode(i) == op).unwrap()
}

#[test]
fn single_instructions() {
    let m = parse(SRC, "t.ir").unwrap();
    let f = find(&m, Opcode::FUNC);
    assert_eq!(
        print_inst(&m, f),
        "#[export(\"f\")] @f: fn(i32) -> i32 = func { … }"
    );
    let add = find(&m, Opcode::IADD);
    assert_eq!(
        print_inst(&m, add),
        "#[loc(\"a.c\", i32 1, i32 2)] %s: i32 = iadd %n, i32 1"
    );
    assert_eq!(
        print_inst(&m, find(&m, Opcode::BR)),
        "br i1 true, ^next(%s), ^next(%n)"
    );
    let entry = m.entry_block(f).unwrap();
    assert_eq!(print_inst(&m, entry), "^entry(%n: i32):");
    assert_eq!(print_inst(&m, find(&m, Opcode::EXPORT)), "#[export(\"f\")]");
    let one = m.operands(add)[1];
    assert_eq!(print_inst(&m, one), "i32 1");
    let names = Names::new(&m);
    assert_eq!(names.get(add), Some("%s"));
    assert_eq!(names.get(entry), Some("^entry"));
    assert_eq!(names.get(f), Some("@f"));
}

#[test]
fn annotations_follow_their_lines() {
    let m = parse(SRC, "t.ir").unwrap();
    let add = find(&m, Opcode::IADD);
    let ret = find(&m, Opcode::RET);
    let export = find(&m, Opcode::EXPORT);
    let f = find(&m, Opcode::FUNC);
    let one = m.operands(add)[1];
    let out = print_annotated(
        &m,
        &[
            (ret, "bad return".into()),
            (add, "bad add".into()),
            (export, "bad export".into()),
            (f, "bad function".into()),
            (m.root(), "bad module".into()),
            (one, "bad constant".into()),
        ],
    );
    assert_eq!(
        out,
        r#"; error: bad module
#[export("f")]
; error: bad export
@f: fn(i32) -> i32 = func {
; error: bad function
^entry(%n: i32):
  #[loc("a.c", i32 1, i32 2)] %s: i32 = iadd %n, i32 1
  ; error: bad add
  ; error: bad constant
  br i1 true, ^next(%s), ^next(%n)
^next(%v: i32):
  ret %v
  ; error: bad return
}
"#
    );
    // Annotated text still parses to the same module.
    let m2 = parse(&out, "t.ir").unwrap();
    irkit_core::equiv::modules_equal(&m, &m2).unwrap();
}

/// A named struct in a single printed instruction (as verifier messages quote them) is named,
/// never `<named_struct>`, whether or not the module gives it a statement of its own.
#[test]
fn named_structs_print_by_name_in_single_instructions() {
    let mut m = Module::new();
    let i32t = m.ty_int(32).unwrap();
    let p = m
        .intern(
            Opcode::NAMED_STRUCT,
            None,
            &[i32t, i32t],
            irkit_core::Payload::Str("Point".into()),
        )
        .unwrap();
    let z = m
        .intern(Opcode::CONST_ZERO, Some(p), &[], irkit_core::Payload::None)
        .unwrap();
    let g = m
        .new_inst(
            Opcode::GLOBAL_VAR,
            Some(p),
            vec![z],
            irkit_core::Payload::None,
        )
        .unwrap();
    // Not attached: nothing in the module's tree reaches the struct, so no statement names it.
    let printed = print_inst(&m, g);
    assert!(!printed.contains("<named_struct>"), "{printed}");
    assert!(printed.contains("Point"), "{printed}");
}

/// A module built in memory far deeper than the nesting limit (no reader accepts one) prints
/// without recursing per level: past the limit, bodies and decorations print as `…`.
#[test]
fn printing_beyond_the_nesting_limit_does_not_recurse() {
    use irkit_core::{MAX_NESTING, Module, Opcode, Payload};
    let mut m = Module::new();
    let op = Opcode(0x7F00);
    let mut top = m.new_inst(op, None, Vec::new(), Payload::None).unwrap();
    let mut deco = m
        .new_inst(Opcode::EXPORT, None, Vec::new(), Payload::Str("x".into()))
        .unwrap();
    for _ in 0..100_000 {
        let p = m.new_inst(op, None, Vec::new(), Payload::None).unwrap();
        m.append_child(p, top).unwrap();
        top = p;
        let d = m
            .new_inst(Opcode::EXPORT, None, Vec::new(), Payload::Str("x".into()))
            .unwrap();
        m.attach_decoration(d, deco).unwrap();
        deco = d;
    }
    m.attach_decoration(top, deco).unwrap();
    let root = m.root();
    m.append_child(root, top).unwrap();
    let text = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || irkit_text::print(&m))
        .unwrap()
        .join()
        .expect("prints");
    assert!(text.contains("{ … }") && text.contains("#[…]"));
    assert!(text.lines().count() < 2 * MAX_NESTING as usize + 10);
}
