//! Inlined code in the debuggers (spec/backends.md, "Debug information"; spec/ir.md,
//! "Inlining scopes"): two `.ir` modules linked with `-O`, where `scale` (lib.ir, called once
//! from main.ir's `main`) and `bump` (called once from `scale`) are inlined into `main`.
//! `gdb` stops on a line of `bump` and its backtrace shows both inlined calls as frames, with
//! their call sites, in an executable and in code `ir-run`'s JIT compiled; `llvm-dwarfdump`
//! verifies the DWARF and shows the `DW_TAG_inlined_subroutine` entries; the code cache gives
//! the same object; `--strip-debug` drops the scopes.
//!
//! A tool that is not installed skips its test with a note on stderr, unless
//! `IRKIT_REQUIRE_TOOLS=1` (set by `.ci/run`), which makes it a failure.

use std::path::Path;
use std::process::{Command, Output};

mod tools;
use tools::{have, run, scratch, text};

const LIB: &str = "\
; lib.ir: `scale`, called once from main.ir, calls `bump` once: -O inlines both into `main`.
#[export(\"seen\")]
@seen: i32 = global_var i32 0

@bump: fn(i32) -> i32 = func {
^entry(%x: i32):
  %y: i32 = imul %x, i32 3
  store @seen, %y
  ret %y
}

#[export(\"scale\")]
@scale: fn(i32) -> i32 = func {
^entry(%x: i32):
  %a: i32 = call @bump(%x)
  %b: i32 = iadd %a, i32 1
  ret %b
}
";

const MAIN: &str = "\
; main.ir: calls lib.ir's `scale` once.
#[import(\"scale\")]
@scale: fn(i32) -> i32 = func

@start: i32 = global_var i32 13

#[export(\"main\")]
@main: fn() -> i32 = func {
^entry:
  %c: i32 = load @start
  %r: i32 = call @scale(%c)
  ret %r
}
";

/// A scratch directory for test `tag` holding `lib.ir` and `main.ir`.
fn with_modules(tag: &str) -> std::path::PathBuf {
    let d = scratch("inlined", tag);
    std::fs::write(d.join("lib.ir"), LIB).unwrap();
    std::fs::write(d.join("main.ir"), MAIN).unwrap();
    d
}

/// `ir-link -g -O main.ir lib.ir ARGS` in `dir`.
fn link(dir: &Path, args: &[&str]) -> Output {
    run(Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(["-g", "-O", "main.ir", "lib.ir"])
        .args(args)
        .current_dir(dir))
}

/// The 1-based number of the first line of `source` containing `needle`.
fn line_of(source: &str, needle: &str) -> usize {
    1 + source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?}"))
}

/// The frames gdb must show stopped at `store @seen`: `bump` there, `scale` at its call of
/// `bump`, `main` at its call of `scale`.
fn frames() -> [String; 3] {
    [
        format!("#0  bump () at lib.ir:{}", line_of(LIB, "store @seen")),
        format!("#1  scale () at lib.ir:{}", line_of(LIB, "call @bump(")),
        format!("#2  main () at main.ir:{}", line_of(MAIN, "call @scale(")),
    ]
}

#[test]
fn gdb_shows_inlined_calls_as_frames_with_their_call_sites() {
    if !have("gdb") {
        return;
    }
    let dir = with_modules("gdb");
    link(&dir, &["--emit", "exe", "-o", "prog"]);
    let store = line_of(LIB, "store @seen");
    let o = run(Command::new("gdb")
        .args(["-nx", "-batch", "-ex"])
        .arg(format!("break lib.ir:{store}"))
        .args(["-ex", "run", "-ex", "bt", "./prog"])
        .current_dir(&dir));
    let out = text(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("DWARF"), "{err}{out}");
    assert!(
        out.contains(&format!("Breakpoint 1, bump () at lib.ir:{store}")),
        "{out}"
    );
    let [bump, scale, main] = frames();
    assert!(out.contains(&format!("{bump}\n{scale}\n{main}\n")), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gdb_shows_inlined_calls_in_code_the_jit_compiled() {
    if !have("gdb") {
        return;
    }
    let dir = with_modules("gdb-jit");
    let store = line_of(LIB, "store @seen");
    let o = run(Command::new("gdb")
        .args(["-nx", "-batch", "-ex", "set breakpoint pending on", "-ex"])
        .arg(format!("break lib.ir:{store}"))
        .args(["-ex", "run", "-ex", "bt", "--args"])
        .arg(env!("CARGO_BIN_EXE_ir-run"))
        .args(["-g", "-O", "main.ir", "lib.ir"])
        .current_dir(&dir));
    let out = text(&o);
    let [bump, scale, main] = frames();
    assert!(out.contains(&format!("{bump}\n{scale}\n{main}\n")), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn llvm_dwarfdump_verifies_and_shows_the_inlined_subroutines() {
    if !have("llvm-dwarfdump") {
        return;
    }
    let dir = with_modules("dwarfdump");
    link(&dir, &["--emit", "exe", "-o", "prog"]);
    let o = Command::new("llvm-dwarfdump")
        .args(["--verify", "prog"])
        .current_dir(&dir)
        .output()
        .expect("llvm-dwarfdump runs");
    assert!(
        o.status.success() && text(&o).contains("No errors."),
        "{}{}",
        text(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    let info = text(&run(Command::new("llvm-dwarfdump")
        .args(["--debug-info", "prog"])
        .current_dir(&dir)));
    // `scale` inlined into `main` at main.ir's call, `bump` into it at lib.ir's, each
    // pointing to an abstract subprogram of its name (the inliner removed both functions).
    let inlined: Vec<&str> = info.split("DW_TAG_inlined_subroutine").skip(1).collect();
    assert_eq!(inlined.len(), 2, "{info}");
    let call =
        |source: &str, needle: &str| format!("DW_AT_call_line\t({})", line_of(source, needle));
    assert!(inlined[0].contains("\"scale\")"), "{info}");
    assert!(inlined[0].contains(&call(MAIN, "call @scale(")), "{info}");
    assert!(inlined[1].contains("\"bump\")"), "{info}");
    assert!(inlined[1].contains(&call(LIB, "call @bump(")), "{info}");
    assert!(info.contains("DW_AT_inline\t(DW_INL_inlined)"), "{info}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The object is the same bytes built twice, and built again from the code cache; it has the
/// inlined subroutines' abstract origins (their names in `.debug_str`).
#[test]
fn objects_with_inlined_subroutines_are_deterministic_and_cached() {
    let dir = with_modules("cache");
    link(&dir, &["--emit", "obj", "-o", "a.o"]);
    link(&dir, &["--emit", "obj", "-o", "b.o", "--cache", "cc"]);
    let cached = link(
        &dir,
        &["--emit", "obj", "-o", "c.o", "--cache", "cc", "--stats"],
    );
    let stats = String::from_utf8_lossy(&cached.stderr).into_owned() + &text(&cached);
    assert!(stats.contains("(1 from the code cache"), "{stats}");
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    assert!(read("a.o") == read("b.o") && read("b.o") == read("c.o"));
    let has = |bytes: &[u8], what: &[u8]| bytes.windows(what.len()).any(|w| w == what);
    assert!(has(&read("a.o"), b"bump\0") && has(&read("a.o"), b"scale\0"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn strip_debug_drops_the_inlining_scopes() {
    let dir = with_modules("strip");
    link(&dir, &["-o", "kept.irm"]);
    link(&dir, &["--strip-debug", "-o", "stripped.irm"]);
    let dis = |f: &str| {
        text(&run(Command::new(env!("CARGO_BIN_EXE_ir-dis"))
            .arg(f)
            .current_dir(&dir)))
    };
    let kept = dis("kept.irm");
    assert_eq!(kept.matches("inline_scope(").count(), 2, "{kept}");
    let stripped = dis("stripped.irm");
    assert!(
        !stripped.contains("inline_scope") && !stripped.contains("loc("),
        "{stripped}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A trap in inlined code names the inlined instruction's own line, on both back ends.
#[test]
fn a_trap_in_inlined_code_names_its_own_line() {
    let dir = with_modules("trap");
    let lib = LIB.replace(
        "  %y: i32 = imul %x, i32 3\n",
        "  %z: i32 = load @seen\n  %y: i32 = sdiv %x, %z\n",
    );
    std::fs::write(dir.join("lib.ir"), &lib).unwrap();
    let div = line_of(&lib, "sdiv");
    for backend in ["jit", "interp"] {
        let o = Command::new(env!("CARGO_BIN_EXE_ir-run"))
            .args(["-g", "-O", "--backend", backend, "main.ir", "lib.ir"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("integer division by zero") && err.contains(&format!(" at lib.ir:{div}:")),
            "{backend}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scope whose code is interleaved with its caller's own has several ranges: a
/// `DW_AT_ranges` list (base address, offset pairs) that `llvm-dwarfdump` verifies and reads
/// as two ranges.
#[test]
fn an_interleaved_inlined_copy_has_a_range_list() {
    if !have("llvm-dwarfdump") {
        return;
    }
    let dir = with_modules("ranges");
    let source = "\
@a: i32 = global_var i32 0
@b: i32 = global_var i32 0

#[export(\"main\"), #[loc(\"m.ir\", i32 9, i32 3)] %s = inline_scope(\"callee\")]
@main: fn() -> i32 = func {
^entry:
  #[loc(\"lib.ir\", i32 2, i32 3, %s)] store @a, i32 1
  #[loc(\"m.ir\", i32 10, i32 3)] store @b, i32 2
  #[loc(\"lib.ir\", i32 3, i32 3, %s)] store @a, i32 3
  #[loc(\"m.ir\", i32 11, i32 3)] ret i32 0
}
";
    std::fs::write(dir.join("m.ir"), source).unwrap();
    run(Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(["m.ir", "--emit", "exe", "-o", "prog"])
        .current_dir(&dir));
    let o = run(Command::new("llvm-dwarfdump")
        .args(["--verify", "prog"])
        .current_dir(&dir));
    assert!(text(&o).contains("No errors."), "{}", text(&o));
    let info = text(&run(Command::new("llvm-dwarfdump")
        .args(["--debug-info", "prog"])
        .current_dir(&dir)));
    let inlined = info
        .split("DW_TAG_inlined_subroutine")
        .nth(1)
        .unwrap_or_else(|| panic!("{info}"));
    let ranges = inlined
        .split("DW_AT_ranges")
        .nth(1)
        .and_then(|r| r.split("DW_AT_call_file").next())
        .unwrap_or_else(|| panic!("{info}"));
    assert_eq!(ranges.matches("[0x").count(), 2, "{info}");
    // The function's declaration is its own code's first line, not the inlined code's.
    assert!(info.contains("DW_AT_decl_line\t(10)"), "{info}");
    let _ = std::fs::remove_dir_all(&dir);
}
