//! The nesting limit at the tools (`spec/ir.md`, Nesting limit): one level over it, in a
//! binary file (a definition's tree, or the pool) or in text (values chained through names),
//! every tool exits 1 with one line naming the place; never 101, never a signal. At the limit,
//! `ir-dis` output assembles back to the same bytes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use irkit_core::MAX_NESTING;
use irkit_hostile::{deep_tree_file, deep_types_file};

fn tool(name: &str) -> &'static str {
    match name {
        "ir-as" => env!("CARGO_BIN_EXE_ir-as"),
        "ir-dis" => env!("CARGO_BIN_EXE_ir-dis"),
        "ir-verify" => env!("CARGO_BIN_EXE_ir-verify"),
        "ir-fmt" => env!("CARGO_BIN_EXE_ir-fmt"),
        "ir-info" => env!("CARGO_BIN_EXE_ir-info"),
        "ir-link" => env!("CARGO_BIN_EXE_ir-link"),
        "ir-run" => env!("CARGO_BIN_EXE_ir-run"),
        other => panic!("unknown tool {other}"),
    }
}

fn run(name: &str, args: &[&str]) -> Output {
    Command::new(tool(name))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the tool runs")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-cli-nesting-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `@t1 = struct {i32}` … `@t(n-1)` chained through names, used by `main`.
fn named_chain(n: u32) -> String {
    let mut s = String::from("@t1 = struct {i32}\n");
    for k in 2..n {
        s += &format!("@t{k} = struct {{@t{}}}\n", k - 1);
    }
    s += &format!(
        "\n#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^e:\n  %p: ptr = stackalloc @t{}\n  ret i32 0\n}}\n",
        n - 1
    );
    s
}

/// Exit 1, one error on stderr mentioning the limit (text errors add the source line and a
/// caret under it), nothing on stdout.
fn assert_refused(name: &str, args: &[&str], o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{name} {args:?}: {err}");
    let problems = err
        .lines()
        .filter(|l| l.contains("nested deeper than 256"))
        .count();
    assert_eq!(problems, 1, "{name} {args:?}: {err}");
    if args
        .iter()
        .any(|a| a.ends_with(".irm") && !a.ends_with("out.irm"))
    {
        assert_eq!(err.lines().count(), 1, "{name} {args:?}: {err}");
    }
    assert!(o.stdout.is_empty(), "{name} {args:?}");
}

#[test]
fn every_tool_refuses_input_over_the_limit_with_one_line() {
    let d = temp_dir("over");
    let tree = d.join("tree.irm");
    let types = d.join("types.irm");
    let text = d.join("names.ir");
    std::fs::write(&tree, deep_tree_file(MAX_NESTING + 1).unwrap()).unwrap();
    std::fs::write(&types, deep_types_file(MAX_NESTING + 1).unwrap()).unwrap();
    std::fs::write(&text, named_chain(MAX_NESTING + 1)).unwrap();
    let out = d.join("out.irm");
    for (input, entry) in [(&tree, "deep"), (&types, "main"), (&text, "main")] {
        let input = s(input);
        let mut cases: Vec<(&str, Vec<&str>)> = vec![
            ("ir-as", vec![input, "-o", s(&out)]),
            ("ir-dis", vec![input]),
            ("ir-verify", vec![input]),
            ("ir-fmt", vec!["--check", input]),
            ("ir-link", vec!["--entry", entry, "-o", s(&out), input]),
            ("ir-run", vec!["--interp", "--entry", entry, input]),
            ("ir-run", vec!["--entry", entry, input]),
        ];
        if input.ends_with(".irm") {
            cases.push(("ir-info", vec!["--validate", input]));
        }
        for (name, args) in cases {
            assert_refused(name, &args, &run(name, &args));
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn at_the_limit_the_tools_work_and_ir_dis_output_assembles_back() {
    let d = temp_dir("at");
    let types = d.join("types.irm");
    let bytes = deep_types_file(MAX_NESTING).unwrap();
    std::fs::write(&types, &bytes).unwrap();
    let o = run("ir-verify", &[s(&types)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run("ir-run", &["--interp", s(&types)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ir = d.join("types.ir");
    let back = d.join("back.irm");
    let o = run("ir-dis", &[s(&types), "-o", s(&ir)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run("ir-as", &[s(&ir), "-o", s(&back)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&back).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&d);
}
