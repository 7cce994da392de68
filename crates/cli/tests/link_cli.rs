//! `ir-link`'s contract: exit codes (0 linked, 1 link problems, 2 usage), one `error:` line
//! per problem, atomic output (a failed link writes nothing and leaves an existing file
//! untouched), the same bytes whatever the order of the inputs, `--stats` on stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ir_link(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ir-link runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-link-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const MAIN: &str = "#[import(\"f\")]\n@f: fn() -> i32 = func\n\n#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i32 = call @f()\n  ret %r\n}\n";
const LIB: &str = "#[export(\"f\")]\n@f: fn() -> i32 = func {\n^entry:\n  ret i32 7\n}\n";

fn setup(tag: &str) -> PathBuf {
    let d = temp_dir(tag);
    std::fs::write(d.join("main.ir"), MAIN).unwrap();
    std::fs::write(d.join("lib.ir"), LIB).unwrap();
    d
}

/// [`setup`], with `bad.ir`: an `@f` that resolves `main.ir`'s import but does not verify.
fn setup_unverified(tag: &str) -> PathBuf {
    let d = setup(tag);
    std::fs::write(
        d.join("bad.ir"),
        "#[export(\"f\")]\n@f: fn() -> i32 = func {\n^entry:\n  ret i64 7\n}\n",
    )
    .unwrap();
    d
}

/// No temporary file is left in `d`.
fn assert_no_temporary(d: &Path) {
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn links_text_and_binary_inputs_and_exits_0() {
    let d = setup("ok");
    // Assemble lib.ir to lib.irm through the linker itself (library link), then mix formats.
    let o = ir_link(&["--library", "lib.ir", "-o", "lib.irm"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = ir_link(&["main.ir", "lib.irm", "-o", "out.irm"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = irkit_format::read(&std::fs::read(d.join("out.irm")).unwrap()).unwrap();
    irkit_core::verify::verify(&m).unwrap();
    assert!(m.find_export("main").is_some());
    let o = ir_link(&["lib.irm", "main.ir", "-o", "out.ir", "--emit", "ir"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(d.join("out.ir")).unwrap();
    assert!(text.contains("ret i32 7"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn output_is_independent_of_input_order() {
    let d = setup("order");
    std::fs::write(
        d.join("extra.ir"),
        "#[export(\"g\")]\n@g: fn() -> void = func {\n^entry:\n  ret\n}\n",
    )
    .unwrap();
    let orders: [[&str; 3]; 3] = [
        ["main.ir", "lib.ir", "extra.ir"],
        ["extra.ir", "main.ir", "lib.ir"],
        ["lib.ir", "extra.ir", "main.ir"],
    ];
    let mut outputs = Vec::new();
    for (i, order) in orders.iter().enumerate() {
        let out = format!("o{i}.irm");
        let mut args: Vec<&str> = order.to_vec();
        args.extend(["-o", &out, "--export", "g"]);
        let o = ir_link(&args, &d);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        outputs.push(std::fs::read(d.join(&out)).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn link_errors_exit_1_and_leave_the_output_untouched() {
    let d = setup("fail");
    std::fs::write(d.join("out.irm"), b"previous contents").unwrap();
    // lib.ir missing: @f is undefined.
    let o = ir_link(&["main.ir", "-o", "out.irm"], &d);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(
        err.trim_end(),
        "error: undefined symbol @f, needed by @main (main.ir)"
    );
    assert_eq!(
        std::fs::read(d.join("out.irm")).unwrap(),
        b"previous contents"
    );
    // A failed link with a fresh output path creates nothing (no temporary file either).
    let o = ir_link(&["main.ir", "-o", "new.irm"], &d);
    assert_eq!(o.status.code(), Some(1));
    assert!(!d.join("new.irm").exists());
    assert_no_temporary(&d);
    let _ = std::fs::remove_dir_all(&d);
}

/// The output is written while the linked program is verified (into a temporary file beside
/// it) and put in place only once it verifies: a link that resolves but does not verify
/// leaves an existing output as it was, creates no new one, and leaves no temporary file.
#[test]
fn a_linked_program_that_does_not_verify_leaves_the_output_untouched() {
    let d = setup_unverified("unverified");
    std::fs::write(d.join("out.irm"), b"previous contents").unwrap();
    for out in ["out.irm", "new.irm"] {
        let o = ir_link(&["main.ir", "bad.ir", "-o", out], &d);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("`ret` value has type i64, expected i32"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(
        std::fs::read(d.join("out.irm")).unwrap(),
        b"previous contents"
    );
    assert!(!d.join("new.irm").exists());
    assert_no_temporary(&d);
    let _ = std::fs::remove_dir_all(&d);
}

/// A FIFO output gets nothing from a link that does not verify: the output is staged until
/// the linked program verifies, and a device or FIFO gets its bytes only then.
#[cfg(unix)]
#[test]
fn a_fifo_output_gets_nothing_from_a_link_that_does_not_verify() {
    use std::io::Read;
    let d = setup_unverified("unverified-fifo");
    let fifo = d.join("out.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    // The reader opens the FIFO (blocking until a writer does) and reads what comes.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            got
        })
    };
    let o = ir_link(&["main.ir", "bad.ir", "-o", "out.fifo"], &d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The link never opened the FIFO: open it here, so the reader sees its end.
    if !reader.is_finished() {
        drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    }
    assert!(reader.join().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn every_problem_is_reported_one_line_each() {
    let d = setup("many");
    std::fs::write(d.join("dup.ir"), LIB).unwrap();
    std::fs::write(d.join("bad.irm"), b"IRKMOD\0\x1a\x09\0").unwrap();
    std::fs::write(d.join("broken.ir"), "@x: i32 = global_var i32 1 2\n").unwrap();
    let o = ir_link(
        &[
            "main.ir",
            "lib.ir",
            "dup.ir",
            "bad.irm",
            "broken.ir",
            "-o",
            "o.irm",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    // One `error:` per problem: `error: file: …`, or for a parse error `file:line:col: error:
    // …` followed by its source line and a caret.
    assert_eq!(err.matches("error:").count(), 2, "{err}");
    assert!(
        lines.iter().any(|l| l.starts_with("error: bad.irm: ")),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("broken.ir:1:") && l.contains(": error: ")),
        "{err}"
    );
    // The inputs that open are linked only once every input opens.
    let o = ir_link(&["main.ir", "lib.ir", "dup.ir", "-o", "o.irm"], &d);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim_end(),
        "error: duplicate definition of @f: in dup.ir and in lib.ir"
    );
    assert!(!d.join("o.irm").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn usage_errors_exit_2() {
    let d = setup("usage");
    for args in [
        &["main.ir"][..],
        &["-o", "x.irm"][..],
        &["main.ir", "-o", "x", "--emit", "wasm"][..],
        &["main.ir", "-o", "x", "--bogus"][..],
    ] {
        let o = ir_link(args, &d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn missing_input_file_is_a_link_error() {
    let d = setup("missing");
    let o = ir_link(&["main.ir", "nope.irm", "-o", "x.irm"], &d);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: nope.irm: cannot read: "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn stats_go_to_stderr() {
    let d = setup("stats");
    let o = ir_link(
        &["main.ir", "lib.ir", "-o", "-", "--emit", "ir", "--stats"],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    for key in [
        "definitions:",
        "instructions copied:",
        "time open:",
        "time resolve:",
        "time reach+copy:",
        "time verify:",
        "time write:",
    ] {
        assert!(err.contains(key), "{key} missing from\n{err}");
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("@main"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_code_cache_and_the_thread_count_do_not_change_the_object() {
    let d = setup("cache");
    let build = |extra: &[&str], out: &str| {
        let mut args = vec!["main.ir", "lib.ir", "--emit", "obj", "--stats", "-o", out];
        args.extend_from_slice(extra);
        let o = ir_link(&args, &d);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (std::fs::read(d.join(out)).unwrap(), stderr(&o))
    };
    let (plain, _) = build(&["--jobs", "1"], "plain.o");
    let (cold, err_cold) = build(&["--cache", "cc", "--jobs", "3"], "cold.o");
    let (warm, err_warm) = build(&["--cache", "cc"], "warm.o");
    assert!(plain == cold && plain == warm, "the object changed");
    assert!(
        err_cold.contains("functions compiled:  2 of 2 (0 from the code cache, 0 cache entries rejected, 2 stored)"),
        "{err_cold}"
    );
    assert!(
        err_warm.contains("functions compiled:  0 of 2 (2 from the code cache, 0 cache entries rejected, 0 stored)"),
        "{err_warm}"
    );
    assert!(!err_warm.contains("warning"), "{err_warm}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unwritable_code_cache_is_one_warning_and_the_build_succeeds() {
    let d = setup("cache-unwritable");
    std::fs::write(d.join("cc"), b"a file, not a directory").unwrap();
    let o = ir_link(
        &[
            "main.ir", "lib.ir", "--emit", "exe", "--cache", "cc", "-o", "prog",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("warning: code cache cc: cannot write: "),
        "{err}"
    );
    let run = Command::new(d.join("prog")).output().unwrap();
    assert_eq!(run.status.code(), Some(7));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn two_module_example_links() {
    let o = ir_link(
        &[
            "examples/two_module/main.ir",
            "examples/two_module/lib.ir",
            "-o",
            "-",
            "--emit",
            "ir",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn generics_example_links_and_counts_instantiations() {
    let o = ir_link(
        &[
            "examples/generics/main.ir",
            "examples/generics/ord.ir",
            "examples/generics/algo.ir",
            "examples/generics/lib.ir",
            "-o",
            "-",
            "--emit",
            "ir",
            "--stats",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("instantiations:      11"), "{err}");
    assert!(err.contains("time specialize:"), "{err}");
    assert!(!err.contains("generics shared:"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    for gone in ["generic", "specialize", "witness", "interface"] {
        assert!(!out.contains(gone), "{gone} left in\n{out}");
    }
}

#[test]
fn generics_example_shared_says_so_in_stats() {
    let o = ir_link(
        &[
            "examples/generics/main.ir",
            "examples/generics/ord.ir",
            "examples/generics/algo.ir",
            "examples/generics/lib.ir",
            "--generics",
            "dynamic",
            "-o",
            "-",
            "--emit",
            "ir",
            "--stats",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("generics shared:     4 (9 instances, 8 calls through witness tables)"),
        "{err}"
    );
    // Pair<T> is a generic type: cloned, and said nowhere else.
    assert!(err.contains("instantiations:      1"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    for gone in [
        "= generic",
        "specialize @",
        "witness_table",
        "lookup_witness",
    ] {
        assert!(!out.contains(gone), "{gone} left in\n{out}");
    }
}

#[test]
fn a_bad_generics_mode_is_a_usage_error() {
    let o = ir_link(
        &[
            "examples/generics/lib.ir",
            "--generics",
            "sometimes",
            "-o",
            "-",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not specialize, dynamic, auto or auto:N"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn polymorphic_recursion_stops_at_the_limit_naming_the_chain() {
    let o = ir_link(
        &[
            "tests/link/polymorphic_recursion/main.ir",
            "-o",
            "-",
            "--max-instantiation-depth",
            "5",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("specialization deeper than 5 instantiations")
            && err.contains("<- @f<Pair<i32>> <- @f<i32>"),
        "{err}"
    );
}

#[test]
fn lower_procs_rewrites_every_proc_into_a_func() {
    let d = temp_dir("lower-procs");
    let example = repo().join("examples/noir_fib.ir");
    let example = example.to_str().unwrap();
    let kept = ir_link(&[example, "--emit", "ir", "-o", "kept.ir"], &d);
    assert!(kept.status.success(), "{}", stderr(&kept));
    let kept = std::fs::read_to_string(d.join("kept.ir")).unwrap();
    assert!(kept.contains("= proc(%n: i64) -> %x0 {"), "{kept}");
    let o = ir_link(
        &[
            example,
            "--lower-procs",
            "--stats",
            "--emit",
            "ir",
            "-o",
            "lowered.ir",
        ],
        &d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("lowered proc:        @fib (12 instructions -> "),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(d.join("lowered.ir")).unwrap();
    assert!(!text.contains("proc"), "{text}");
    assert!(text.contains("@fib: fn(i64) -> i64 = func {"), "{text}");
    let m = irkit_text::parse(&text, "lowered.ir").unwrap();
    irkit_core::verify::verify(&m).unwrap();
}

/// `-o /dev/null` is written, never replaced, for every `--emit`; an executable replacing an
/// existing file keeps that file's mode, and nothing temporary (object file, work directory)
/// is left beside it.
#[cfg(unix)]
#[test]
fn emit_to_a_device_and_over_an_existing_executable() {
    use std::os::unix::fs::PermissionsExt;
    let d = setup("devnull");
    for emit in ["irm", "ir", "obj", "exe"] {
        let o = ir_link(
            &["main.ir", "lib.ir", "--emit", emit, "-o", "/dev/null"],
            &d,
        );
        assert_eq!(o.status.code(), Some(0), "--emit {emit}: {}", stderr(&o));
        assert!(
            !std::fs::metadata("/dev/null").unwrap().is_file(),
            "--emit {emit} replaced /dev/null by a regular file"
        );
    }
    let o = ir_link(&["main.ir", "lib.ir", "--emit", "exe", "-o", "prog"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::set_permissions(d.join("prog"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let o = ir_link(&["main.ir", "lib.ir", "--emit", "exe", "-o", "prog"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mode = std::fs::metadata(d.join("prog"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);
    let status = Command::new(d.join("prog")).status().unwrap();
    assert_eq!(status.code(), Some(7));
    let mut names: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["lib.ir", "main.ir", "prog"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Every input is read once: from stdin (`-`) or a pipe, text and binary modules alike keep
/// their first bytes (a `#[weak]` at the very start of the text was once lost).
#[cfg(unix)]
#[test]
fn inputs_from_stdin_and_pipes_are_read_once() {
    use std::io::Write;
    let d = setup("stdin");
    let text = "#[weak, export(\"f\")]\n@f: fn() -> i32 = func {\n^entry:\n  ret i32 9\n}\n";
    let o = ir_link(&["--library", "lib.ir", "-o", "lib.irm"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let binary = std::fs::read(d.join("lib.irm")).unwrap();
    for (what, bytes) in [("text", text.as_bytes().to_vec()), ("binary", binary)] {
        for arg in ["-", "/dev/stdin"] {
            let mut child = Command::new(env!("CARGO_BIN_EXE_ir-link"))
                .args(["--library", arg, "--emit", "ir", "-o", "-"])
                .current_dir(&d)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(&bytes).unwrap();
            let o = child.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{what} via {arg}: {}", stderr(&o));
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(out.contains("export(\"f\")"), "{what} via {arg}: {out}");
            if what == "text" {
                assert!(
                    out.contains("weak"),
                    "{what} via {arg}: the first bytes were lost: {out}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `/dev/zero` as an input: refused at its first byte, never read without bound.
#[cfg(unix)]
#[test]
fn dev_zero_input_is_refused_at_once() {
    let d = setup("zero");
    let o = ir_link(&["/dev/zero", "--library", "-o", "out.irm"], &d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("byte 0 is NUL"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// `--entry NAME` names what the executable's C `main` runs (it was ignored by `--emit exe`,
/// and the system linker failed on an undefined `main`).
#[cfg(unix)]
#[test]
fn emit_exe_runs_the_entry_given() {
    let d = temp_dir("entry");
    std::fs::write(
        d.join("start.ir"),
        "#[export(\"start\")]\n@start: fn() -> i32 = func {\n^entry:\n  ret i32 5\n}\n",
    )
    .unwrap();
    let o = ir_link(
        &[
            "start.ir", "--entry", "start", "--emit", "exe", "-o", "prog",
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let status = Command::new(d.join("prog")).status().unwrap();
    assert_eq!(status.code(), Some(5));
    let _ = std::fs::remove_dir_all(&d);
}

/// With `mold` and `ld.lld` on the `PATH`, the C compiler is asked to link with mold, then
/// with lld; a compiler that refuses both (here, a stand-in that fails on `-fuse-ld=…`) gets
/// the plain command last, and the executable is built.
#[cfg(unix)]
#[test]
fn emit_exe_falls_back_through_the_fast_linkers() {
    use std::os::unix::fs::PermissionsExt;
    let d = temp_dir("linker-fallback");
    std::fs::write(
        d.join("start.ir"),
        "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  ret i32 7\n}\n",
    )
    .unwrap();
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // Only their presence is looked at.
    std::fs::write(bin.join("mold"), "").unwrap();
    std::fs::write(bin.join("ld.lld"), "").unwrap();
    let cc = d.join("picky-cc");
    std::fs::write(
        &cc,
        "#!/bin/sh\necho \"$*\" >> \"$(dirname \"$0\")/cc.log\"\n\
         for a in \"$@\"; do case \"$a\" in -fuse-ld=*) exit 1;; esac; done\nexec cc \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(["start.ir", "--emit", "exe", "-o", "prog"])
        .current_dir(&d)
        .env("CC", &cc)
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let status = Command::new(d.join("prog")).status().unwrap();
    assert_eq!(status.code(), Some(7));
    let log = std::fs::read_to_string(d.join("cc.log")).unwrap();
    let calls: Vec<&str> = log.lines().collect();
    assert_eq!(calls.len(), 3, "{log}");
    assert!(calls[0].starts_with("-fuse-ld=mold "), "{log}");
    assert!(calls[1].starts_with("-fuse-ld=lld "), "{log}");
    assert!(!calls[2].contains("-fuse-ld"), "{log}");
    let _ = std::fs::remove_dir_all(&d);
}

/// SIGTERM, SIGINT or SIGHUP while `--emit exe` waits for the system linker: the tool ends by
/// that signal, its work directory (object file included) is gone, the linker child does not
/// outlive it, and the output path was never created.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_during_emit_exe_leaves_nothing_behind() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::ExitStatusExt;
    for (sig, name) in [(15, "TERM"), (2, "INT"), (1, "HUP")] {
        let d = setup(&format!("signal-{name}"));
        // A stand-in for cc that says where it is, then hangs.
        let cc = d.join("slow-cc");
        std::fs::write(
            &cc,
            "#!/bin/sh\necho $$ > \"$(dirname \"$0\")/cc.pid\"\nexec sleep 60\n",
        )
        .unwrap();
        std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ir-link"))
            .args(["main.ir", "lib.ir", "--emit", "exe", "-o", "prog"])
            .current_dir(&d)
            .env("CC", &cc)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid_file = d.join("cc.pid");
        let start = std::time::Instant::now();
        while !pid_file.exists()
            || std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .is_empty()
        {
            assert!(start.elapsed().as_secs() < 60, "the stand-in cc never ran");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let cc_pid: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The shell's own `kill` (a builtin: no procps needed).
        let kill = Command::new("sh")
            .args(["-c", &format!("kill -{sig} {}", child.id())])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(sig), "SIG{name}: {status:?}");
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["cc.pid", "lib.ir", "main.ir", "slow-cc"],
            "SIG{name}"
        );
        // The stand-in cc was told to stop when its parent died.
        let proc = PathBuf::from(format!("/proc/{cc_pid}"));
        let start = std::time::Instant::now();
        while proc.exists()
            && !std::fs::read_to_string(proc.join("stat"))
                .unwrap_or_default()
                .contains(") Z")
        {
            assert!(
                start.elapsed().as_secs() < 10,
                "SIG{name}: cc outlived ir-link"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// A failing system link is reported the same way on every run: the temporary object file's
/// random name is not in the message.
#[cfg(unix)]
#[test]
fn a_failed_system_link_names_no_temporary() {
    let d = temp_dir("ccfail");
    std::fs::write(
        d.join("m.ir"),
        "#[extern(\"irkit_no_such_function\")]\n@f: fn() -> i32 = func\n\n#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i32 = call @f()\n  ret %r\n}\n",
    )
    .unwrap();
    let one = ir_link(&["m.ir", "--emit", "exe", "-o", "prog"], &d);
    let two = ir_link(&["m.ir", "--emit", "exe", "-o", "prog"], &d);
    assert_eq!(one.status.code(), Some(1), "{}", stderr(&one));
    assert!(
        stderr(&one).contains("irkit_no_such_function"),
        "{}",
        stderr(&one)
    );
    assert!(!stderr(&one).contains(".irkit-exe."), "{}", stderr(&one));
    assert_eq!(stderr(&one), stderr(&two));
    let _ = std::fs::remove_dir_all(&d);
}

/// `--codegen fast` compiles the same program: the bundled examples give the same exit code
/// and output as with the default level.
#[test]
fn the_fast_code_generation_level_runs_the_same_programs() {
    let d = temp_dir("fast");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for name in [
        "fib_iterative.ir",
        "fib_recursive.ir",
        "switch.ir",
        "memory.ir",
    ] {
        std::fs::copy(examples.join(name), d.join(name)).unwrap();
        let mut runs = Vec::new();
        for level in ["optimized", "fast"] {
            let exe = format!("{name}.{level}");
            let o = ir_link(&[name, "--emit", "exe", "--codegen", level, "-o", &exe], &d);
            assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
            let run = Command::new(d.join(&exe)).output().unwrap();
            runs.push((run.status.code(), run.stdout));
        }
        assert_eq!(runs[0], runs[1], "{name}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
