//! The tools' contract: exit codes (0 ok, 1 problems, 2 usage, never a panic), one line per
//! problem naming the file and place, canonical formatting, atomic outputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(bin: &str, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let exe = match bin {
        "ir-verify" => env!("CARGO_BIN_EXE_ir-verify"),
        "ir-fmt" => env!("CARGO_BIN_EXE_ir-fmt"),
        other => panic!("unknown tool {other}"),
    };
    let mut cmd = Command::new(exe);
    cmd.args(args).current_dir(repo());
    cmd.stdin(if stdin.is_some() {
        std::process::Stdio::piped()
    } else {
        std::process::Stdio::null()
    });
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn tool");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    child.wait_with_output().expect("tool runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const VALID: &str = "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  ret i32 7\n}\n";

#[test]
fn every_example_verifies() {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(repo().join("examples")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "ir") {
            files.push(p.display().to_string());
        }
    }
    assert!(!files.is_empty());
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = run("ir-verify", &args, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn invalid_ir_exits_1_with_one_located_line_per_problem() {
    let text = "@f: fn(i32) -> i32 = func {\n^entry(%x: i32):\n  %y: i32 = iadd %x, f64 1.0\n  %z: i64 = iadd %x, %x\n  ret %y\n}\n";
    let out = run("ir-verify", &["-"], Some(text));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    for l in &lines {
        assert!(l.starts_with("<stdin>: in @f"), "{l}");
    }
}

#[test]
fn malformed_text_exits_1_with_line_and_column() {
    let out = run(
        "ir-verify",
        &["-"],
        Some("@f: fn() -> void = func {\n^entry:\n  ret %nope\n}\n"),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("<stdin>:3:"), "{err}");
    assert!(err.contains('^'), "caret under the column: {err}");
}

#[test]
fn garbage_never_panics() {
    for input in [
        "\u{0}\u{1}\u{2}",
        "@@@@",
        "#[#[#[",
        "@f: [99999999999999999999 x i32] = global_var",
        "}}}}{{{{",
    ] {
        let out = run("ir-verify", &["-"], Some(input));
        assert_eq!(
            out.status.code(),
            Some(1),
            "input {input:?}: {}",
            stderr(&out)
        );
    }
    let out = run("ir-verify", &["/no/such/file.ir"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("/no/such/file.ir"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run("ir-verify", &[], None).status.code(), Some(2));
    assert_eq!(run("ir-fmt", &["--bogus"], None).status.code(), Some(2));
}

#[test]
fn fmt_prints_canonical_text_and_checks() {
    let messy =
        "#[export(\"main\")]   @main:   fn() -> i32 =   func {\n^entry:\n      ret   i32 7\n}";
    let out = run("ir-fmt", &["-"], Some(messy));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), VALID);

    let dir = temp_dir("fmt");
    let messy_path = dir.join("messy.ir");
    std::fs::write(&messy_path, messy).unwrap();
    let out = run("ir-fmt", &["--check", messy_path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not in canonical form"));

    let out = run(
        "ir-fmt",
        &[
            messy_path.to_str().unwrap(),
            "-o",
            messy_path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&messy_path).unwrap(), VALID);
    let out = run("ir-fmt", &["--check", messy_path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn failed_fmt_leaves_existing_output_untouched() {
    let dir = temp_dir("fmt-fail");
    let out_path = dir.join("out.ir");
    std::fs::write(&out_path, "precious").unwrap();
    let out = run(
        "ir-fmt",
        &["-", "-o", out_path.to_str().unwrap()],
        Some("this is not ir"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), "precious");
    std::fs::remove_dir_all(dir).unwrap();
}
