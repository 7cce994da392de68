//! Comment and blank-line preservation: `parse_with_trivia` / `print_with_trivia`.

use std::path::{Path, PathBuf};

use irkit_core::equiv::modules_equal;
use irkit_text::{Trivia, parse, parse_with_trivia, print, print_with_trivia};

/// Formats `src` (parse with trivia, print with trivia).
fn fmt(src: &str) -> String {
    let (m, t) = match parse_with_trivia(src, "t.ir") {
        Ok(x) => x,
        Err(e) => panic!("{}\n--- source:\n{src}", e.render()),
    };
    print_with_trivia(&m, &t)
}

/// The comment texts of a source, in order (via the lexer's rule: `;` outside strings).
fn comments(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let mut in_str = false;
        let mut esc = false;
        for (k, c) in line.char_indices() {
            if in_str {
                match c {
                    _ if esc => esc = false,
                    '\\' => esc = true,
                    '"' => in_str = false,
                    _ => {}
                }
            } else if c == '"' {
                in_str = true;
            } else if c == ';' {
                out.push(line[k + 1..].trim_end().to_string());
                break;
            }
        }
    }
    out
}

/// Whether every comment of `src` appears in `out`'s comments, in order (several trailing
/// comments may be joined into one).
fn comments_kept(src: &str, out: &str) -> Result<(), String> {
    let want = comments(src);
    let have = comments(out).join("\n");
    let mut at = 0;
    for c in &want {
        match have[at..].find(c.as_str()) {
            Some(k) => at += k + c.len(),
            None => return Err(format!("comment `;{c}` lost or out of order")),
        }
    }
    Ok(())
}

/// The formatter's contract on one source: formatting keeps the module and every comment,
/// in order, and the result is a fixed point.
fn check(src: &str) -> String {
    let out = fmt(src);
    let m1 = parse(src, "a.ir").unwrap();
    let m2 = match parse(&out, "b.ir") {
        Ok(m) => m,
        Err(e) => panic!("{}\n--- formatted:\n{out}", e.render()),
    };
    if let Err(e) = modules_equal(&m1, &m2) {
        panic!("{e}\n--- formatted:\n{out}");
    }
    if let Err(e) = comments_kept(src, &out) {
        panic!("{e}\n--- source:\n{src}\n--- formatted:\n{out}");
    }
    let again = fmt(&out);
    assert_eq!(again, out, "not a fixed point\n--- source:\n{src}");
    out
}

#[test]
fn no_trivia_is_print() {
    let src = "; c\n@g: i32 = global_var\n\n\n@h: i32 = global_var  ; t\n";
    let (m, _) = parse_with_trivia(src, "t.ir").unwrap();
    assert_eq!(print_with_trivia(&m, &Trivia::default()), print(&m));
    assert!(Trivia::default().is_empty());
    let (_, t) = parse_with_trivia(src, "t.ir").unwrap();
    assert_eq!(t.comment_count(), 2);
}

#[test]
fn header_comment_stays_first() {
    let src =
        "\n\n; header\n;   indented text  \n\n@P = named_struct \"P\" i32\n@g: @P = global_var\n";
    assert_eq!(
        check(src),
        "; header\n;   indented text\n\n@P = named_struct \"P\" i32\n\n@g: @P = global_var\n"
    );
    // Also when the printer puts a value statement first.
    let src = "; header\n@g: @P = global_var\n@P = named_struct \"P\" i32\n";
    assert_eq!(
        check(src),
        "; header\n@P = named_struct \"P\" i32\n\n@g: @P = global_var\n"
    );
}

#[test]
fn comment_before_decorated_definition() {
    let src = "@a: i32 = global_var\n; about f\n;more\n#[export(\"f\")]\n@f: fn() -> void = func {\n^e:\n  ret\n}\n";
    assert_eq!(
        check(src),
        "@a: i32 = global_var\n\n; about f\n;more\n#[export(\"f\")]\n@f: fn() -> void = func {\n^e:\n  ret\n}\n"
    );
}

#[test]
fn comments_before_labels_and_statements() {
    let src = "@f: fn() -> void = func {\n; entry block\n^e:\n    ; first\n  jump ^x\n\n; the exit\n  ^x:\n  ret\n}\n";
    assert_eq!(
        check(src),
        "@f: fn() -> void = func {\n; entry block\n^e:\n  ; first\n  jump ^x\n\n; the exit\n^x:\n  ret\n}\n"
    );
}

#[test]
fn comments_before_closing_brace() {
    let src = "@f: fn() -> void = func {\n^e:\n  ret\n\n  ; done\n    ; really\n\n}\n";
    assert_eq!(
        check(src),
        "@f: fn() -> void = func {\n^e:\n  ret\n\n  ; done\n  ; really\n}\n"
    );
    // In a generic body.
    let src = "@f: fn() -> void = func {\n  %b = block {\n    ret\n  ; end of b\n  }\n}\n";
    assert_eq!(
        check(src),
        "@f: fn() -> void = func {\n^b:\n  ret\n  ; end of b\n}\n"
    );
    // A body printed in generic form, and a block that closes before a label.
    let src = "@f: fn() -> void = func {\n  %x: i32 = param\n  ^b = block {\n    ret\n  ; end of b\n  } ; after b\n  ; before close\n}\n";
    assert_eq!(
        check(src),
        "@f: fn() -> void = func {\n  %x: i32 = param\n  ^b = block {\n    ret\n    ; end of b\n  }  ; after b\n  ; before close\n}\n"
    );
    let src = "@f: fn() -> void = func {\n  ^a = block {\n    jump ^b\n    ; end of a\n  } ; after a\n  ^b = block {\n    ret\n    ; end of b\n  }\n}\n";
    assert_eq!(
        check(src),
        "@f: fn() -> void = func {\n^a:\n  jump ^b\n; end of a\n; after a\n^b:\n  ret\n  ; end of b\n}\n"
    );
}

#[test]
fn trailing_comments() {
    let src = "@f: fn(i32) -> i32 = func {   ; the function\n^e(%x: i32):   ;entry  \n  %y: i32 = iadd %x,   ; continued\n    %x ; on the next line\n  ret %y\n}  ; end of f\n";
    assert_eq!(
        check(src),
        "@f: fn(i32) -> i32 = func {  ; the function\n^e(%x: i32):  ;entry\n  %y: i32 = iadd %x, %x  ; continued ; on the next line\n  ret %y\n}  ; end of f\n"
    );
    // On a decorated definition: the first printed line is the decoration line.
    let src = "#[export(\"g\")] @g: i32 = global_var ; g\n";
    assert_eq!(check(src), "#[export(\"g\")]  ; g\n@g: i32 = global_var\n");
    // In a body that prints nothing.
    let src = "@f: fn() -> void = func { ; a\n  ; b\n} ; c\n";
    assert_eq!(check(src), "@f: fn() -> void = func  ; a ; b ; c\n");
}

#[test]
fn blank_lines_collapse_to_one() {
    let src = "\n\n@a: i32 = global_var\n\n\n\n@b: i32 = global_var\n@c: fn() -> void = func {\n\n\n^e:\n\n\n  ret\n\n\n}\n\n\n";
    assert_eq!(
        check(src),
        "@a: i32 = global_var\n\n@b: i32 = global_var\n\n@c: fn() -> void = func {\n^e:\n\n  ret\n}\n"
    );
}

#[test]
fn end_of_file_comments() {
    let src = "@a: i32 = global_var\n; the end\n\n;   really\n\n";
    assert_eq!(
        check(src),
        "@a: i32 = global_var\n; the end\n\n;   really\n"
    );
    assert_eq!(check("; only comments\n\n;x"), "; only comments\n\n;x\n");
    assert_eq!(check(""), "");
    assert_eq!(check("\n\n"), "");
    assert_eq!(check("; a\n\n%t = i32\n\n"), "; a\n");
}

#[test]
fn comments_of_values_and_root_decorations_move_on() {
    let src = "; h\n%t = i32 ; the type\n#![pure] ; root\n; g\n@g: %t = global_var\n; a last type\n%u = i64\n";
    assert_eq!(
        check(src),
        "; h\n#![pure]\n\n; the type\n; root\n; g\n@g: i32 = global_var\n; a last type\n"
    );
}

#[test]
fn comments_inside_a_statement() {
    let src = "#[export(\"f\")]\n; between\n#[pure]\n@f: fn() -> void = func {\n^e:\n  ret\n}\n";
    assert_eq!(
        check(src),
        "#[export(\"f\"), pure]  ; between\n@f: fn() -> void = func {\n^e:\n  ret\n}\n"
    );
    let src =
        "@f: fn(i32) -> void = func {\n^e(%a: i32, ; first\n  %b: i32 ; second\n):\n  ret\n}\n";
    assert_eq!(
        check(src),
        "@f: fn(i32) -> void = func {\n^e(%a: i32, %b: i32):  ; first ; second\n  ret\n}\n"
    );
    // A `param` statement the printer moves into the label keeps its comments there.
    let src = "@f: fn() -> void = func {\n^e:\n  ; the param\n  %p: i32 = param ; p\n  ret\n}\n";
    assert_eq!(
        check(src),
        "@f: fn() -> void = func {\n^e(%p: i32):  ; the param ; p\n  ret\n}\n"
    );
}

#[test]
fn semicolons_in_strings_are_not_comments() {
    let src = "#[export(\"a;b\")] ; real\n@g: i32 = global_var\n";
    assert_eq!(
        check(src),
        "#[export(\"a;b\")]  ; real\n@g: i32 = global_var\n"
    );
}

#[test]
fn crlf_sources() {
    let src = "; h\r\n\r\n@a: i32 = global_var ; t\r\n";
    assert_eq!(check(src), "; h\n\n@a: i32 = global_var  ; t\n");
}

#[test]
fn odd_layouts() {
    for src in [
        "@f: fn() -> void = func { ^e: ; x\n  ret } ; y\n; z\n",
        "@f: fn() -> void = func { ^e:\n  %x = #300 { %y = #301 { #302 } ; a\n  ; b\n  } ; c\n  ret }\n",
        "#[#500 { ; inner\n  %a = #501 ; a\n  ; own\n}] ; after\n@g: i32 = global_var\n",
        "#![pure, ; in root\n  #501] ; r\n\n; g\n@g: i32 = global_var\n",
        "@f: fn() -> void = func {\n  ; only a comment\n}\n",
        "@f: fn() -> void = func {\n  %t = i32 ; local type\n  ; c\n  ^e = block {\n    ret\n  }\n}\n",
        "; a\n\n\n; b\n#[export(\"x\")]\n\n; c\n@g: i32 = global_var ; d\n\n; e",
        "@f: fn(i32) -> void = func {\n^e(#[loc(\"a\", i32 1, i32 2)] %a: i32 ; p\n):\n  ret\n}\n",
    ] {
        check(src);
    }
}

fn ir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            ir_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
}

#[test]
fn examples_format_to_fixed_points() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files = Vec::new();
    ir_files(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no examples under {}", dir.display());
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let n = comments(&src).len();
        let out = check(&src);
        assert_eq!(comments(&out).len(), n, "{}", f.display());
        if std::env::var_os("SHOW_FORMATTED").is_some() {
            println!("=== {}\n{out}", f.display());
        }
    }
}

/// The formatter keeps the numbers the source wrote for anonymous values and blocks (`%2`
/// stayed `%2`; it used to become `%0`), while the canonical printer still numbers from 0.
#[test]
fn numeric_names_are_kept_by_the_formatter() {
    let src = "@f: fn(i32) -> i32 = func {\n^7(%2: i32):\n  %5: i32 = iadd %2, i32 1\n  %x: i32 = iadd %5, %5\n  jump ^3\n^3:\n  ret %2\n}\n";
    assert_eq!(fmt(src), src);
    let canonical = print(&parse(src, "t.ir").unwrap());
    assert!(canonical.contains("^0(%0: i32):"), "{canonical}");
}
