//! Round trips of hand-written texts: every canonical text prints back unchanged, and the
//! module it describes survives print → parse.

use irkit_core::equiv::modules_equal;
use irkit_text::{parse, print};

/// `text` is canonical: it parses, prints back identically, and reparses to an equal module.
#[track_caller]
fn canonical(text: &str) {
    let m = match parse(text, "t.ir") {
        Ok(m) => m,
        Err(e) => panic!("parse failed:\n{}", e.render()),
    };
    let printed = print(&m);
    assert_eq!(printed, text, "not a fixed point");
    let m2 = parse(&printed, "t.ir").unwrap_or_else(|e| panic!("{}", e.render()));
    modules_equal(&m, &m2).unwrap();
}

/// `text` parses, and its printout is canonical and describes an equal module.
#[track_caller]
fn normalizes(text: &str, expected: &str) {
    let m = parse(text, "t.ir").unwrap_or_else(|e| panic!("parse failed:\n{}", e.render()));
    let printed = print(&m);
    assert_eq!(printed, expected);
    let m2 = parse(&printed, "t.ir").unwrap_or_else(|e| panic!("{}", e.render()));
    modules_equal(&m, &m2).unwrap();
    canonical(expected);
}

#[test]
fn fib() {
    canonical(
        r#"#[export("fib")]
@fib: fn(i32) -> i32 = func {
^entry(%n: i32):
  %small: i1 = icmp slt %n, i32 2
  br %small, ^base, ^rec
^base:
  ret %n
^rec:
  %a: i32 = isub %n, i32 1
  %fa: i32 = call @fib(%a)
  %b: i32 = isub %n, i32 2
  %fb: i32 = call @fib(%b)
  %s: i32 = iadd %fa, %fb
  ret %s
}
"#,
    );
}

#[test]
fn globals_and_declarations() {
    canonical(
        r#"#[import("counter")]
@counter: i32 = global_var
@table: [3 x i32] = global_const [3 x i32] [i32 1, i32 2, i32 3]
#[extern("putchar")]
@putchar: fn(i32) -> i32 = func
"#,
    );
}

#[test]
fn spec_snippets() {
    canonical(
        r#"@double: fn(i32) -> i32 = func {
^entry(%x: i32):
  %y: i32 = iadd %x, %x
  ret %y
}

@square: fn(i32) -> i32 = func {
^entry(%x: i32):
  %y: i32 = imul %x, %x
  ret %y
}

@f: fn(i32, i1, i32) -> i32 = func {
^entry(%x: i32, %c: i1, %y: i32):
  switch %x, i32 1, i32 2, ^other(%x), ^one, ^two(%y)
^other(%o: i32):
  br %c, ^one, ^two(%o)
^one:
  %p: ptr = stackalloc [4 x i32]
  %q: ptr = elem [4 x i32], %p, i32 0, %x
  store %q, %x
  %w: i32 = load %q
  %pair: struct {i32, i32} = load %p
  %f: i32 = extract 1 %pair
  %pair2: struct {i32, i32} = insert 0 %pair, %w
  %fp: ptr = select %c, @double, @square
  %r: i32 = call_indirect fn(i32) -> i32, %fp(%x)
  %g: f64 = fadd f64 1.5, f64 -0.0
  %h: i1 = fcmp une %g, f64 nan
  jump ^two(%r)
^two(%t: i32):
  ret %t
}
"#,
    );
}

#[test]
fn constants_of_every_kind() {
    canonical(
        r#"@Point = named_struct "Point" i32, f64

@a: i1 = global_const i1 true
@b: i8 = global_const i8 -1
@c: i64 = global_const i64 9223372036854775807
@d: f64 = global_const f64 nan:0x7ff8000000000001
@e: f32 = global_const f32 -inf
@f: f32 = global_const f32 0.1
@g: ptr = global_const ptr null
@h: @Point = global_const @Point [i32 1, f64 2.5]
@i: [3 x i8] = global_const [3 x i8] b"a\"\0"
@j: struct {} = global_const struct {} zero
@k: fn() -> void = global_var
@l: [2 x ptr] = global_const [2 x ptr] [@a, ptr null]
@m: f64 = global_const f64 1e300
"#,
    );
}

#[test]
fn readable_forms_normalize() {
    // Hex, unsigned spellings, aliases, generic blocks, ungrouped calls, decimal float payloads.
    normalizes(
        r#"%t = [2 x i8]
@g: %t = global_const %t [i8 0xff, i8 255]
@h: f32 = global_const f32 1
@k: f64 = global_const
@f: fn() -> void = func {
  ^e = block {
    call @f
    ret
  }
}
"#,
        r#"@g: [2 x i8] = global_const [2 x i8] [i8 -1, i8 -1]
@h: f32 = global_const f32 1.0
@k: f64 = global_const

@f: fn() -> void = func {
^e:
  call @f()
  ret
}
"#,
    );
}

#[test]
fn names_quoting_and_anonymous_values() {
    canonical(
        r#"@"my func": fn(i32) -> i32 = func {
^0(%0: i32):
  %"3": i32 = iadd %0, %0
  %1: i32 = iadd %"3", %"3"
  %"a b": i32 = iadd %1, %1
  %"\u{1}\n": i32 = iadd %"a b", %1
  jump ^"x y"(%"\u{1}\n")
^"x y"(%2: i32):
  ret %2
}
"#,
    );
    // Anonymous names are renumbered in order.
    normalizes(
        "@7: fn() -> void = func {\n^9:\n  %5: ptr = stackalloc i8\n  store %5, %5\n  ret\n}\n",
        "@0: fn() -> void = func {\n^0:\n  %0: ptr = stackalloc i8\n  store %0, %0\n  ret\n}\n",
    );
}

#[test]
fn decorations_everywhere() {
    canonical(
        r#"#![#600("module"), loc("m.c", i32 1, i32 1)]

#[export("f"), pin(@g), pin_if(@g, @f)]
@f: fn() -> void = func {
#[#601]
^entry:
  #[loc("a.c", i32 3, i32 4)] %p: ptr = stackalloc i32
  #[#604, name_hint("second")] store %p, i32 1
  #[#[#602] #603(7)] ret
}

@g: i32 = global_var
"#,
    );
}

#[test]
fn generic_and_opaque_forms() {
    canonical(
        r#"@0 = #20 5
@1: i8 = const_int 300
@2: f32 = const_float fbits:0x100000000
@3 = fn

@x: i32 = #4660 7 @x, @0 {
  %y = #4661 "s" {
    %z: i64 = #4662 b"\xff" %y, @1, @2, @3
  }
  #[%d = #700(@x)] #4663 fbits:0x3ff8000000000000 %d
}

@f: fn() -> void = func {
  ^0 = block {
    ret
  }
  #4664
}

@e: i32 = extract @x
@c: i1 = #288 99 @x, @x
"#
        .replace("@e: i32 = extract @x", "@e: i32 = #340 @x")
        .as_str(),
    );
}

#[test]
fn local_hoisted_statements() {
    // A generic-only value whose operand is a local lives in the function's scope.
    canonical(
        r#"@f: fn() -> void = func {
  %0: i8 = const_int 300 ^0
^0:
  %1: ptr = #4096 %0, struct {^0}
  ret
}
"#,
    );
}

#[test]
fn duplicate_names_get_suffixes() {
    let m = parse(
        "@f: fn() -> void = func {\n^a:\n  #[name_hint(\"x\")] %0: ptr = stackalloc i8\n  %x.1: ptr = stackalloc i8\n  #[name_hint(\"x\")] %1: ptr = stackalloc i8\n  ret\n}\n",
        "t.ir",
    )
    .unwrap();
    // Explicit name hints in first position become names, and duplicates are suffixed.
    assert_eq!(
        print(&m),
        "@f: fn() -> void = func {\n^a:\n  %x: ptr = stackalloc i8\n  %x.1: ptr = stackalloc i8\n  %x.2: ptr = stackalloc i8\n  ret\n}\n"
    );
}

#[test]
fn deep_type_nesting_prints_as_statements() {
    // As deep as the nesting limit allows: `i8` is 1 deep, each array one more.
    let mut m = irkit_core::Module::new();
    let mut t = m.ty_i8();
    for _ in 1..irkit_core::MAX_NESTING {
        t = m.ty_array(t, 1).unwrap();
    }
    let root = m.root();
    let g = m
        .new_inst(
            irkit_core::Opcode::GLOBAL_VAR,
            Some(t),
            vec![],
            Default::default(),
        )
        .unwrap();
    m.append_child(root, g).unwrap();
    let text = print(&m);
    let m2 = parse(&text, "deep.ir").unwrap_or_else(|e| panic!("{}", e.render()));
    modules_equal(&m, &m2).unwrap();
    assert_eq!(print(&m2), text);
}
