//! Error reporting: exact messages and positions, recovery, rendering, and robustness.

use irkit_text::{MAX_ERRORS, parse};

/// The errors of `src` as `line:col: message`.
fn errors(src: &str) -> Vec<String> {
    match parse(src, "e.ir") {
        Ok(_) => vec![],
        Err(e) => e
            .errors()
            .iter()
            .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
            .collect(),
    }
}

#[track_caller]
fn one(src: &str, expected: &str) {
    assert_eq!(errors(src), vec![expected.to_string()], "for {src:?}");
}

#[test]
fn syntax_errors() {
    one(
        "@f: fn() -> void = func {\n^e:\n  %x: i32 = iadd %a, %b %c\n}\n",
        "3:25: expected `,` or end of line, found `%c`",
    );
    one("@g = frobnicate\n", "1:6: unknown opcode `frobnicate`");
    one(
        "@g: i32 global_var\n",
        "1:9: expected `=`, found `global_var`",
    );
    one(
        "@g = global_var )\n",
        "1:17: expected an operand or end of line, found `)`",
    );
    one(
        "@g: [4 i32] = global_var\n",
        "1:8: expected `x` in `[N x T]`, found `i32`",
    );
    one(
        "@g = global_var i32 1 2\n",
        "1:23: expected `,` or end of line, found `2`",
    );
    one(
        "@f: fn() -> void = func {\n^e:\n  ret\n",
        "4:1: expected `}` closing the `{` at 1:25, found end of file",
    );
    one(
        "@f = func {\n^e: ret\n}\n",
        "2:5: expected end of line after the block label, found `ret`",
    );
    one("}\n", "1:1: expected a statement, found `}`");
    one(
        "#[export(\"a\") @f = func\n",
        "1:15: expected `,` or `]`, found `@f`",
    );
}

#[test]
fn payload_errors() {
    one(
        "@h = global_var\n#[export] @g = global_var\n",
        "2:3: `export` needs a string payload (or write it `#512`)",
    );
    one(
        "@g = global_var 5\n",
        "1:17: `global_var` takes no payload, found `5`",
    );
    one(
        "#[export(5)] @g = global_var\n",
        "1:10: expected a string payload for `export`, found `5`",
    );
    one(
        "@f = func {\n^e:\n  %c: i1 = icmp foo %c, %c\n  ret\n}\n",
        "3:17: unknown condition code `foo` for `icmp`",
    );
    one(
        "@g = #4096 1.5\n",
        "1:12: a float payload of `#4096` must be written `fbits:0x…`",
    );
    one(
        "@g = #4096 -9223372036854775809\n",
        "1:12: integer payload `-9223372036854775809` does not fit in 64 bits",
    );
    one(
        "%c = const_float 1.5\n",
        "1:18: a decimal payload of `const_float` needs an `f32` or `f64` result type",
    );
}

#[test]
fn literal_errors() {
    one(
        "@g: i8 = global_const i8 256\n",
        "1:23: integer `256` is out of range for `i8`",
    );
    one(
        "@g: i8 = global_const i8 -129\n",
        "1:23: integer `-129` is out of range for `i8`",
    );
    one(
        "@g: i1 = global_const i1 2\n",
        "1:23: integer `2` is out of range for `i1`",
    );
    one(
        "@g: ptr = global_const ptr 1\n",
        "1:24: an integer constant needs an integer or float type, found `ptr`",
    );
    one(
        "@g: i32 = global_const i32 true\n",
        "1:24: `true` is a constant of type `i1`, not `i32`",
    );
    one(
        "@g: f64 = global_const f64 1e400\n",
        "1:24: float `1e400` is out of range for `f64`",
    );
    one(
        "@g: f32 = global_const f32 nan:0x7ff8000000000000\n",
        "1:24: `nan:0x7ff8000000000000` is not a NaN of `f32`",
    );
    one(
        "@g: i32 = global_const i32 99999999999999999999\n",
        "1:28: integer literal `99999999999999999999` does not fit in 64 bits",
    );
    one(
        "@g = global_var \"abc\n",
        "1:17: unterminated string literal",
    );
    one(
        "@g = #4096 \"a\\qb\"\n",
        "1:14: unknown escape `\\q` (expected one of \\n \\t \\r \\\\ \\\" \\0 \\u{…})",
    );
    one(
        "@g: [-1 x i8] = global_var\n",
        "1:6: array length must not be negative",
    );
}

#[test]
fn name_errors() {
    one(
        "@g: i32 = global_const %nope\n",
        "1:24: undefined name `%nope`",
    );
    one(
        "@g = global_var\n@g = global_var\n",
        "2:1: `@g` is already defined at 1:1",
    );
    one(
        "@f = func {\n^e:\n  %x: ptr = stackalloc i8\n  %x: ptr = stackalloc i8\n  ret\n}\n",
        "4:3: `%x` is already defined at 3:3",
    );
    // Locals of one function are not visible in another.
    one(
        "@f = func {\n^e:\n  %x: ptr = stackalloc i8\n  ret\n}\n@g = func {\n^e:\n  ret %x\n}\n",
        "8:7: undefined name `%x`",
    );
    // `%3` (anonymous) and `%"3"` (named) are different names.
    one(
        "@g: i32 = global_const %\"3\"\n%3 = i32\n",
        "1:24: undefined name `%\"3\"`",
    );
    one(
        "%a = struct {%b}\n%b = struct {%a}\n",
        "1:1: `%a` is defined in terms of itself",
    );
}

#[test]
fn structure_errors() {
    one(
        "#[iadd] @g = global_var\n",
        "1:3: `iadd` is not a decoration",
    );
    one(
        "#[i32] @g = global_var\n",
        "1:3: a type or constant cannot be a decoration",
    );
    one(
        "#[export(\"x\")] %t = i32\n",
        "1:1: types and constants carry no decorations",
    );
    one(
        "@m = module\n",
        "1:6: cannot build `module`: opcode `module` is the root: there is only one",
    );
    one(
        "%t: i32 = [2 x i8]\n",
        "1:1: an inline type or constant takes no type annotation",
    );
}

#[test]
fn recovery_reports_every_error() {
    let src = "@a = bogus\n@b = global_var )\n@c: i32 = global_var\n@d = alsobogus\n";
    assert_eq!(
        errors(src),
        vec![
            "1:6: unknown opcode `bogus`",
            "2:17: expected an operand or end of line, found `)`",
            "4:6: unknown opcode `alsobogus`",
        ]
    );
    // Inside a body, recovery stops at the closing brace.
    let src = "@f = func {\n^e:\n  %x = nope\n  ret )\n}\n@g = bad\n";
    assert_eq!(
        errors(src),
        vec![
            "3:8: unknown opcode `nope`",
            "4:7: expected an operand or end of line, found `)`",
            "6:6: unknown opcode `bad`",
        ]
    );
}

#[test]
fn error_cap() {
    let src: String = (0..100).map(|k| format!("@g{k} = nope\n")).collect();
    let errs = parse(&src, "e.ir").unwrap_err();
    assert_eq!(errs.errors().len(), MAX_ERRORS + 1);
    assert_eq!(
        errs.errors()[MAX_ERRORS].message,
        "too many errors; stopping"
    );
}

#[test]
fn rendering() {
    let errs = parse("@f = func {\n^e:\n  %x: i32 = iadd %a, %b %c\n}\n", "a.ir").unwrap_err();
    assert_eq!(
        errs.to_string(),
        "a.ir:3:25: error: expected `,` or end of line, found `%c`"
    );
    assert_eq!(
        errs.errors()[0].render(),
        "a.ir:3:25: error: expected `,` or end of line, found `%c`\n  %x: i32 = iadd %a, %b %c\n                        ^"
    );
    // Columns count chars, not bytes.
    let errs = parse("%\"é\" = nope\n", "u.ir").unwrap_err();
    assert_eq!(errs.errors()[0].column, 8);
}

#[test]
fn pathological_inputs_do_not_panic() {
    let deep_types = "@g: ".to_string()
        + &"[1 x ".repeat(100_000)
        + "i8"
        + &"]".repeat(100_000)
        + " = global_var\n";
    let e = errors(&deep_types);
    assert_eq!(
        e,
        vec!["1:1285: types, constants or groups nested deeper than 256 levels".to_string()]
    );
    let deep_bodies = "@f = #4096 {\n".repeat(50_000);
    assert!(!errors(&deep_bodies).is_empty());
    let deep_decos = "#[".repeat(100_000);
    assert!(!errors(&deep_decos).is_empty());
    let deep_groups = "@f = func {\n^e:\n  call @f(".to_string() + &"^e(".repeat(100_000);
    assert!(!errors(&deep_groups).is_empty());
    let huge = "@g: i64 = global_const i64 ".to_string() + &"9".repeat(10_000);
    assert!(!errors(&huge).is_empty());
    for s in [
        "\"",
        "b\"\\x",
        "%\"",
        "#",
        "#!",
        "nan:",
        "fbits:0x",
        "-",
        "\\u{",
        "\"\\u{110000}\"",
        "^e(",
        "@f = func {",
        "#[",
        "\u{0}",
        "%x: ",
        "[",
        "struct {",
        "fn(",
        "@x = i32 [",
        "}}}}",
    ] {
        let _ = parse(s, "p.ir");
    }
}

/// Both nesting bounds reached at once (256 bodies, then a type 256 levels deep inside) parse
/// and lower on a 2 MiB stack; one level more of either is an error.
#[test]
fn nesting_at_both_limits_fits_a_small_stack() {
    let n = irkit_core::MAX_NESTING as usize;
    // `#4096 {` opens a body for the next level; the innermost statement is at tree
    // depth 256 (the first #4096 is at 1) and its type operand is 256 values deep.
    let ty = |k: usize| "[1 x ".repeat(k - 1) + "i8" + &"]".repeat(k - 1);
    let text = |bodies: usize, depth: usize| {
        "#4096 {\n".repeat(bodies) + &format!("%0: {} = #4097\n", ty(depth)) + &"}\n".repeat(bodies)
    };
    let run = |src: String| {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || parse(&src, "n.ir").map(|_| ()).map_err(|e| e.to_string()))
            .unwrap()
            .join()
            .expect("no stack overflow")
    };
    assert_eq!(run(text(n - 1, n)), Ok(()));
    let e = run(text(n, n)).unwrap_err();
    assert_eq!(
        e,
        format!(
            "n.ir:{}:1: error: instruction nested deeper than 256 levels",
            n + 1
        )
    );
    let e = run(text(n - 1, n + 1)).unwrap_err();
    assert!(e.contains("deeper than 256 levels"), "{e}");
}
