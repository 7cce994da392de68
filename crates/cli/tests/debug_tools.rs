//! Debug information checked by the real tools (spec/backends.md, "Debug information"):
//! `gdb` breaks on a line of a `.ir` module and its backtrace names both modules' functions
//! with their files and lines, also in code `ir-run`'s JIT compiled (GDB's JIT interface);
//! `llvm-dwarfdump --verify` finds no error in any example's
//! executable, linked as written and with `-O` (inlined subroutines); `addr2line` maps a function's address to its first line; `-g0` writes none.
//!
//! A tool that is not installed skips its test with a note on stderr, unless
//! `IRKIT_REQUIRE_TOOLS=1` (set by `.ci/run`), which makes it a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod tools;
use tools::{have, repo, run, scratch, text};

/// `ir-link ARGS` in `dir`.
fn ir_link(dir: &Path, args: &[&str]) -> Output {
    run(Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(args)
        .current_dir(dir))
}

/// The two-module example copied into a fresh directory and linked there with `-g`.
fn two_module(tag: &str) -> PathBuf {
    let dir = scratch("debug", tag);
    for f in ["lib.ir", "main.ir"] {
        std::fs::copy(repo().join("examples/two_module").join(f), dir.join(f)).unwrap();
    }
    ir_link(
        &dir,
        &["-g", "main.ir", "lib.ir", "--emit", "exe", "-o", "two"],
    );
    dir
}

/// The 1-based number of the first line of `file` in `dir` containing `needle`.
fn line_of(dir: &Path, file: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    1 + text
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in {file}"))
}

#[test]
fn gdb_breaks_on_a_line_of_a_module_and_the_backtrace_names_both_modules() {
    if !have("gdb") {
        return;
    }
    let dir = two_module("gdb");
    let ret = line_of(&dir, "lib.ir", "ret %s");
    let call = line_of(&dir, "main.ir", "call @add(");
    let o = run(Command::new("gdb")
        .args(["-nx", "-batch", "-ex"])
        .arg(format!("break lib.ir:{ret}"))
        .args(["-ex", "run", "-ex", "bt", "./two"])
        .current_dir(&dir));
    let out = text(&o);
    // A malformed `.eh_frame` is a warning of gdb's ("skipping .eh_frame info of …").
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("eh_frame") && !out.contains("eh_frame"),
        "{err}{out}"
    );
    assert!(
        out.contains(&format!("Breakpoint 1, add () at lib.ir:{ret}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("#0  add () at lib.ir:{ret}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("in main () at main.ir:{call}")),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ir-run` registers its code with GDB's JIT interface: a breakpoint on a line of a `.ir`
/// module, pending until the code is compiled, stops in the JIT's code, and the backtrace
/// names both modules' functions with their files and lines, then the entry wrapper and the
/// Rust code that called it (the unwind information walks the JIT's frames).
#[test]
fn gdb_breaks_on_a_line_of_a_module_run_by_the_jit() {
    if !have("gdb") {
        return;
    }
    let dir = scratch("debug", "gdb-jit");
    for f in ["lib.ir", "main.ir"] {
        std::fs::copy(repo().join("examples/two_module").join(f), dir.join(f)).unwrap();
    }
    let ret = line_of(&dir, "lib.ir", "ret %s");
    let call = line_of(&dir, "main.ir", "call @add(");
    let o = run(Command::new("gdb")
        .args(["-nx", "-batch", "-ex", "set breakpoint pending on", "-ex"])
        .arg(format!("break lib.ir:{ret}"))
        .args(["-ex", "run", "-ex", "bt", "--args"])
        .arg(env!("CARGO_BIN_EXE_ir-run"))
        .args(["-g", "main.ir", "lib.ir"])
        .current_dir(&dir));
    let out = text(&o);
    // A malformed image is a warning of gdb's ("Unable to read JIT …", "DWARF error: …",
    // "… debug_frame …").
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("frame") && !err.contains("DWARF") && !err.contains("JIT"),
        "{err}{out}"
    );
    assert!(
        out.contains(&format!("hit Breakpoint 1, add () at lib.ir:{ret}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("#0  add () at lib.ir:{ret}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("in main () at main.ir:{call}")),
        "{out}"
    );
    // The walk goes on past the JIT's code, into `ir-run`'s own.
    assert!(out.contains("in irkit[entry] ()\n#3 "), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn addr2line_maps_a_functions_address_to_its_first_line() {
    if !have("addr2line") || !have("nm") {
        return;
    }
    let dir = two_module("addr2line");
    let nm = text(&run(Command::new("nm").arg("two").current_dir(&dir)));
    let address = nm
        .lines()
        .find(|l| l.ends_with(".add"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no symbol of @add in\n{nm}"))
        .to_string();
    let o = run(Command::new("addr2line")
        .args(["-e", "two", &address])
        .current_dir(&dir));
    let first = line_of(&dir, "lib.ir", "iadd %a, %b");
    assert!(
        text(&o).trim_end().ends_with(&format!("lib.ir:{first}")),
        "{address}: {}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each example program (a file, or a directory of modules), as `ir-link` inputs.
fn examples() -> Vec<(String, Vec<PathBuf>)> {
    let root = repo().join("examples");
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.extension().is_some_and(|e| e == "ir") {
            out.push((name, vec![p]));
        } else if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&p)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|f| f.extension().is_some_and(|e| e == "ir"))
                .collect();
            files.sort();
            if !files.is_empty() {
                out.push((name, files));
            }
        }
    }
    out
}

#[test]
fn llvm_dwarfdump_verifies_every_examples_executable() {
    if !have("llvm-dwarfdump") {
        return;
    }
    let dir = scratch("debug", "verify");
    let all = examples();
    assert!(all.len() >= 10, "{} examples", all.len());
    // Each example as written, and with `-O` (inlined code: inlined subroutines).
    let mut inlined = 0;
    for ((name, files), opt) in all.iter().flat_map(|e| [(e, None), (e, Some("-O"))]) {
        let name = format!("{name}{}", opt.unwrap_or(""));
        let exe = dir.join(&name);
        let mut args: Vec<String> = vec!["-g".into()];
        args.extend(opt.map(String::from));
        args.extend(files.iter().map(|f| f.display().to_string()));
        args.extend(["--emit", "exe", "-o"].map(String::from));
        args.push(exe.display().to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ir_link(&dir, &args);
        let o = Command::new("llvm-dwarfdump")
            .arg("--verify")
            .arg(&exe)
            .output()
            .expect("llvm-dwarfdump runs");
        let out = text(&o);
        assert!(
            o.status.success() && out.contains("No errors."),
            "{name}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let info = text(&run(Command::new("llvm-dwarfdump")
            .arg("--debug-info")
            .arg(&exe)));
        assert!(
            info.contains("DW_TAG_subprogram"),
            "{name}: no function described"
        );
        inlined += info.matches("DW_TAG_inlined_subroutine").count();
    }
    assert!(inlined > 0, "no example has inlined code with -O");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn g0_and_strip_debug_write_no_debug_information() {
    let dir = two_module("g0");
    let has = |file: &str, what: &[u8]| {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        bytes.windows(what.len()).any(|w| w == what)
    };
    ir_link(
        &dir,
        &["-g", "main.ir", "lib.ir", "--emit", "obj", "-o", "with.o"],
    );
    assert!(has("with.o", b".debug_line") && has("with.o", b".eh_frame"));
    ir_link(
        &dir,
        &[
            "-g", "-g0", "main.ir", "lib.ir", "--emit", "obj", "-o", "g0.o",
        ],
    );
    ir_link(
        &dir,
        &[
            "-g",
            "--strip-debug",
            "main.ir",
            "lib.ir",
            "--emit",
            "obj",
            "-o",
            "s.o",
        ],
    );
    ir_link(
        &dir,
        &["main.ir", "lib.ir", "--emit", "obj", "-o", "plain.o"],
    );
    for f in ["g0.o", "s.o", "plain.o"] {
        assert!(!has(f, b".debug_") && !has(f, b".eh_frame"), "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether `tool` runs (a best-effort tool: its test is skipped without it, whatever
/// `IRKIT_REQUIRE_TOOLS` says).
fn present(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: {tool} is not installed");
    }
    found
}

/// The C program of examples/wasm-c compiled by clang with `-g` to two wasm modules, each
/// translated (its DWARF lines become `loc` decorations) and linked: `gdb` breaks on a line
/// of the C library and the backtrace names the C functions of both modules, files and lines.
#[test]
fn gdb_breaks_on_a_c_line_of_a_program_compiled_to_wasm() {
    if !have("gdb") || !present("clang-19") {
        return;
    }
    let dir = scratch("debug", "wasm-c");
    for f in ["lib.c", "main.c", "wasm.h"] {
        std::fs::copy(repo().join("examples/wasm-c").join(f), dir.join(f)).unwrap();
    }
    // examples/wasm-c/build.sh's flags, with -g.
    let flags =
        "--target=wasm32 -O2 -g -fno-builtin -nostdlib -Wl,--no-entry -Wl,--allow-undefined";
    for m in ["lib", "main"] {
        run(Command::new("clang-19")
            .args(flags.split(' '))
            .args(["-o", &format!("{m}.wasm"), &format!("{m}.c")])
            .current_dir(&dir));
    }
    let wasm = |args: &[&str]| {
        run(Command::new(env!("CARGO_BIN_EXE_ir-wasm"))
            .args(args)
            .current_dir(&dir))
    };
    wasm(&["lib.wasm", "-o", "lib.irm"]);
    wasm(&["main.wasm", "-o", "main.irm", "--main", "run"]);
    ir_link(
        &dir,
        &["lib.irm", "main.irm", "--emit", "exe", "-o", "prog"],
    );
    let count = line_of(&dir, "lib.c", "count++;");
    let o = run(Command::new("gdb")
        .args(["-nx", "-batch", "-ex"])
        .arg(format!("break lib.c:{count}"))
        .args(["-ex", "run", "-ex", "bt", "./prog"])
        .current_dir(&dir));
    let out = text(&o);
    assert!(
        out.contains("Breakpoint 1, primes () at ") && out.contains(&format!("lib.c:{count}\n")),
        "{out}"
    );
    assert!(
        out.contains("in run () at ") && out.contains("main.c:"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
