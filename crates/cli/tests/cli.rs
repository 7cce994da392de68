//! The tools' contract where a file case (`cmd.rs`, `tests/cmd/`) cannot say it: exit codes
//! on hostile input and environments (never a panic), temporary files, pipes and devices,
//! atomic outputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Held while a child process is spawned. A child forked by another test's thread inherits
/// every descriptor open at that moment until it execs: had it inherited the read end of the
/// closed-reader pipe below, the tool's write would succeed and the test would flake. With
/// every spawn of this file under this lock, the read end is closed before anyone else forks.
static SPAWN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn spawn_lock() -> std::sync::MutexGuard<'static, ()> {
    SPAWN.lock().unwrap_or_else(|p| p.into_inner())
}

fn run(bin: &str, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let exe = match bin {
        "ir-verify" => env!("CARGO_BIN_EXE_ir-verify"),
        "ir-fmt" => env!("CARGO_BIN_EXE_ir-fmt"),
        "ir-as" => env!("CARGO_BIN_EXE_ir-as"),
        "ir-dis" => env!("CARGO_BIN_EXE_ir-dis"),
        "ir-info" => env!("CARGO_BIN_EXE_ir-info"),
        "ir-link" => env!("CARGO_BIN_EXE_ir-link"),
        "ir-run" => env!("CARGO_BIN_EXE_ir-run"),
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
    let spawned = spawn_lock();
    let mut child = cmd.spawn().expect("spawn tool");
    drop(spawned);
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
}

#[test]
fn fmt_checks_and_rewrites_files() {
    let messy =
        "#[export(\"main\")]   @main:   fn() -> i32 =   func {\n^entry:\n      ret   i32 7\n}";
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

#[test]
fn as_dis_round_trip_through_files_and_pipes() {
    let dir = temp_dir("as-dis");
    let irm = dir.join("fib.irm");
    let out = run(
        "ir-as",
        &["examples/fib_recursive.ir", "-o", irm.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bytes = std::fs::read(&irm).unwrap();
    assert!(bytes.starts_with(b"IRKMOD\0\x1a"));

    // ir-dis prints the same canonical text ir-fmt prints for the source.
    let dis = run("ir-dis", &[irm.to_str().unwrap()], None);
    assert_eq!(dis.status.code(), Some(0), "{}", stderr(&dis));
    let fmt = run("ir-fmt", &["examples/fib_recursive.ir"], None);
    let canonical_no_comments = {
        let src = std::fs::read_to_string(repo().join("examples/fib_recursive.ir")).unwrap();
        let m = irkit_text::parse(&src, "x").unwrap();
        irkit_text::print(&m)
    };
    assert_eq!(String::from_utf8_lossy(&dis.stdout), canonical_no_comments);
    assert_eq!(fmt.status.code(), Some(0));

    // Binary inputs are accepted by ir-verify and ir-fmt; `-` is stdin and stdout.
    assert_eq!(
        run("ir-verify", &[irm.to_str().unwrap()], None)
            .status
            .code(),
        Some(0)
    );
    let piped = run("ir-as", &["-"], Some(&canonical_no_comments));
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    assert_eq!(
        piped.stdout, bytes,
        "writing is deterministic, whatever the path"
    );
    let check = run("ir-fmt", &["--check", irm.to_str().unwrap()], None);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn as_refuses_invalid_modules_unless_told() {
    let dir = temp_dir("as-invalid");
    let out_path = dir.join("bad.irm");
    let bad = "@f: fn() -> i32 = func {\n^entry:\n  ret i64 1\n}\n";
    let out = run("ir-as", &["-", "-o", out_path.to_str().unwrap()], Some(bad));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("in @f"), "{}", stderr(&out));
    assert!(
        !out_path.exists(),
        "nothing is written for an invalid module"
    );
    let out = run(
        "ir-as",
        &["--no-verify", "-", "-o", out_path.to_str().unwrap()],
        Some(bad),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out_path.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn info_reports_sections_symbols_and_definitions() {
    let golden = "tests/golden/v1.0/two_module_lib.irm";
    let out = run("ir-info", &[golden], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "format: 1.0",
        "sections:",
        "strings",
        "definitions",
        "symbols:",
        "export",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let out = run("ir-info", &["--json", "--validate", golden], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(doc["format"]["major"], 1);
    assert!(doc["sections"].as_array().unwrap().len() >= 6);
    assert!(!doc["symbols"].as_array().unwrap().is_empty());
    for d in doc["definitions"].as_array().unwrap() {
        assert_eq!(d["hash"].as_str().unwrap().len(), 64);
    }
}

#[test]
fn corrupt_binaries_exit_1_naming_file_and_section() {
    let dir = temp_dir("corrupt");
    let golden = std::fs::read(repo().join("tests/golden/v1.0/fib_recursive.irm")).unwrap();
    // A flipped bit in the last section, and a truncated file.
    let mut flipped = golden.clone();
    let n = flipped.len();
    flipped[n - 20] ^= 0x10;
    let f = dir.join("flipped.irm");
    std::fs::write(&f, &flipped).unwrap();
    let t = dir.join("truncated.irm");
    std::fs::write(&t, &golden[..golden.len() / 2]).unwrap();
    for (path, want) in [(&f, "hash"), (&t, "")] {
        for tool in ["ir-verify", "ir-dis", "ir-fmt"] {
            let out = run(tool, &[path.to_str().unwrap()], None);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{tool} {}: {}",
                path.display(),
                stderr(&out)
            );
            let err = stderr(&out);
            assert!(err.contains(path.to_str().unwrap()), "{tool}: {err}");
            assert!(err.contains(want), "{tool}: {err}");
            assert_eq!(err.lines().count(), 1, "one line per problem: {err}");
        }
    }
    let out = run("ir-info", &["--validate", f.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    std::fs::remove_dir_all(dir).unwrap();
}

/// `-o /dev/null` (or any device or FIFO) is written, never replaced by a regular file; a
/// regular output keeps its permission bits; no temporary file is left behind.
#[cfg(unix)]
#[test]
fn outputs_that_are_not_regular_files_are_written_not_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let null = Path::new("/dev/null");
    for (bin, args) in [
        (
            "ir-as",
            vec!["examples/fib_recursive.ir", "-o", "/dev/null"],
        ),
        (
            "ir-fmt",
            vec!["examples/fib_recursive.ir", "-o", "/dev/null"],
        ),
    ] {
        let o = run(bin, &args, None);
        assert!(o.status.success(), "{bin}: {}", stderr(&o));
        assert!(
            !std::fs::metadata(null).unwrap().is_file(),
            "{bin} replaced /dev/null by a regular file"
        );
    }
    let d = temp_dir("mode");
    let out = d.join("fib.irm");
    let out_s = out.to_str().unwrap();
    let o = run("ir-as", &["examples/fib_recursive.ir", "-o", out_s], None);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = run("ir-as", &["examples/fib_recursive.ir", "-o", out_s], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let names: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("fib.irm")]);
    let _ = std::fs::remove_dir_all(&d);
}

/// A reader that goes away (`| head`) or a full device ends a tool with exit 1, never a
/// panic (101): closed pipe quietly, anything else with a message.
#[cfg(unix)]
#[test]
fn stdout_closed_or_full_is_exit_1_not_a_panic() {
    let d = temp_dir("pipe");
    let irm = d.join("fib.irm");
    let o = run(
        "ir-as",
        &["examples/fib_recursive.ir", "-o", irm.to_str().unwrap()],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (bin, args) in [
        ("ir-info", vec![irm.to_str().unwrap().to_string()]),
        ("ir-verify", vec!["examples/fib_recursive.ir".to_string()]),
    ] {
        let exe = match bin {
            "ir-info" => env!("CARGO_BIN_EXE_ir-info"),
            _ => env!("CARGO_BIN_EXE_ir-verify"),
        };
        // A pipe whose reader is gone before the tool starts (and before any other test
        // forks: see `SPAWN`).
        let spawning = spawn_lock();
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let child = Command::new(exe)
            .args(&args)
            .current_dir(repo())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(spawning);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{bin}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("panicked"),
            "{bin}: {}",
            stderr(&out)
        );
        // A full device.
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
        if let Ok(full) = full {
            let spawning = spawn_lock();
            let child = Command::new(exe)
                .args(&args)
                .current_dir(repo())
                .stdout(full)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            drop(spawning);
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{bin}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("cannot write"),
                "{bin}: {}",
                stderr(&out)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// An endless input of zeros is refused at its first byte by every tool, never read until
/// memory runs out.
#[cfg(unix)]
#[test]
fn dev_zero_is_refused_at_once_by_every_tool() {
    for bin in ["ir-verify", "ir-fmt", "ir-as", "ir-dis", "ir-info"] {
        let o = run(bin, &["/dev/zero"], None);
        assert_eq!(o.status.code(), Some(1), "{bin}: {}", stderr(&o));
        // `ir-info` takes only binary modules: it stops at the magic.
        let why = if bin == "ir-info" {
            "no IRKMOD magic"
        } else {
            "byte 0 is NUL"
        };
        assert!(stderr(&o).contains(why), "{bin}: {}", stderr(&o));
    }
}

/// `ir-info` takes only binary modules: an endless stream of text (`yes |`) is refused at its
/// first eight bytes, not read on until the input limit.
#[cfg(unix)]
#[test]
fn info_stops_at_a_bad_magic_on_an_endless_stream() {
    use std::io::Write;
    let spawning = spawn_lock();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ir-info"))
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(spawning);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let line = b"y\n".repeat(4096);
        // Until ir-info closes the pipe (then the write fails); bounded for safety.
        for _ in 0..1_000_000 {
            if stdin.write_all(&line).is_err() {
                return true;
            }
        }
        false
    });
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no IRKMOD magic"), "{}", stderr(&o));
    assert!(writer.join().unwrap(), "ir-info read on past the magic");
}

/// Counts in messages agree with their nouns ("1 parameters" was printed).
#[test]
fn messages_say_1_parameter_not_1_parameters() {
    let dir = temp_dir("plural");
    let p = dir.join("p1.ir");
    std::fs::write(
        &p,
        "#[export(\"main\")]\n@main: fn(i32) -> i32 = func {\n^e(%x: i32):\n  ret %x\n}\n",
    )
    .unwrap();
    let p = p.to_str().unwrap();
    let jit = stderr(&run("ir-run", &[p], None));
    assert!(
        jit.contains("main takes 1 parameter; an entry takes none"),
        "{jit}"
    );
    let interp = stderr(&run("ir-run", &["--interp", p], None));
    assert!(interp.contains("expected 1 argument, got 0"), "{interp}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-g` (spec/text.md, "Source positions"): the tools record where each instruction of a
/// `.ir` input was written, that survives assembling and linking, a trap names the line on
/// every back end, and `--strip-debug` drops it.
#[test]
fn g_records_ir_positions_that_traps_name_on_every_back_end() {
    let input = "tests/run/div_by_zero.ir";
    let at = format!(
        "trap: integer division by zero in @div ^entry, instruction 0 (sdiv %q) at {input}:11:3\n"
    );
    let dir = temp_dir("g");
    let irm = dir.join("div.irm");
    let exe = dir.join("div");
    let (irm_s, exe_s) = (irm.to_str().unwrap(), exe.to_str().unwrap());
    let linked = run(
        "ir-link",
        &["-g", input, "--emit", "exe", "-o", exe_s],
        None,
    );
    assert!(linked.status.success(), "{}", stderr(&linked));
    let native = Command::new(&exe).output().unwrap();
    let assembled = run("ir-as", &["-g", input, "-o", irm_s], None);
    assert!(assembled.status.success(), "{}", stderr(&assembled));
    let runs = [
        run("ir-run", &["-g", "--interp", input], None),
        run("ir-run", &["-g", input], None),
        native,
        run("ir-run", &[irm_s], None),
    ];
    for r in &runs {
        assert_eq!(r.status.code(), Some(70));
        assert_eq!(stderr(r), at);
    }
    let stripped = run("ir-link", &["--strip-debug", irm_s, "-o", irm_s], None);
    assert!(stripped.status.success(), "{}", stderr(&stripped));
    let without = stderr(&run("ir-run", &[irm_s], None));
    assert!(
        without.ends_with("(sdiv %q)\n") || without.ends_with("(sdiv)\n"),
        "{without}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ir-run --perf-map` (spec/backends.md, "Profiling JIT code"): the JIT appends a line
/// `START SIZE NAME` (hexadecimal) per compiled function to `/tmp/perf-PID.map`, where
/// profilers look for it, before the program runs.
#[test]
fn perf_map_names_every_jit_compiled_function() {
    let _spawning = spawn_lock();
    let child = Command::new(env!("CARGO_BIN_EXE_ir-run"))
        .args(["--perf-map", "tests/run/div_by_zero.ir"])
        .current_dir(repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    drop(_spawning);
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(70));
    let path = format!("/tmp/perf-{pid}.map");
    let map = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let _ = std::fs::remove_file(&path);
    let mut named = Vec::new();
    for line in map.lines() {
        let mut parts = line.splitn(3, ' ');
        let start = u64::from_str_radix(parts.next().unwrap(), 16).unwrap();
        let size = u64::from_str_radix(parts.next().unwrap(), 16).unwrap();
        assert!(start > 0 && size > 0, "{line}");
        named.push(parts.next().unwrap().to_string());
    }
    named.sort();
    assert_eq!(named, ["@div", "@main"], "{map}");
}
