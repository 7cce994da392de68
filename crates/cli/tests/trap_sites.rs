//! Checks as machine traps (spec/backends.md, "Checks as machine traps"): in executables and
//! `ir-run` a failed check is a trap instruction the fault handler finds by its program counter,
//! and prints the interpreter's exact line; past a function's 249 site codes, checks are
//! branches again and a guarded access is found by its code range; a trap flushes the output
//! and, like C's `abort`, runs no `atexit` function.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory for this test.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("trap-sites-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Links `file` into the executable `exe` with `args`, asserting it links.
fn link_exe(file: &Path, exe: &Path, args: &[&str]) {
    let link = Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(args)
        .arg(file)
        .args(["--emit", "exe", "-o"])
        .arg(exe)
        .output()
        .expect("ir-link runs");
    assert!(
        link.status.success(),
        "ir-link --emit exe: {}",
        String::from_utf8_lossy(&link.stderr)
    );
}

/// `src` run by the interpreter, the JIT and as an executable.
fn three_ways(dir: &Path, src: &str) -> [Output; 3] {
    let file = dir.join("prog.ir");
    std::fs::write(&file, src).expect("write module");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ir-run"))
            .args(args)
            .arg(&file)
            .output()
            .expect("ir-run runs")
    };
    let exe = dir.join("prog");
    link_exe(&file, &exe, &[]);
    [
        run(&["--interp"]),
        run(&[]),
        Command::new(&exe).output().expect("the executable runs"),
    ]
}

/// Each of `outputs` is the trap `line` (exit code 70).
fn assert_all_trap(outputs: [Output; 3], line: &str) {
    for o in outputs {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(70), "{err}");
        assert_eq!(err, line);
    }
}

/// `@many(%m, %a)` computes `n` remainders of `%a` by 7, each with a check of its own (a
/// signed remainder's `MIN % -1` check: a trap line per instruction), grows its memory to one
/// page, then runs `last`, which traps.
fn many_checks(n: usize, last: &str) -> String {
    let mut body = String::new();
    for k in 0..n {
        body.push_str(&format!("  %q{k}: i32 = srem %a, i32 7\n"));
    }
    format!(
        "@mem: struct {{ptr, i64, i32, i64}} = global_var struct {{ptr, i64, i32, i64}} \
         [ptr null, i64 0, i32 1, i64 0]\n\n\
         @many: fn(i32, i32) -> i32 = func {{\n\
         ^entry(%m: i32, %a: i32):\n\
         {body}  %g: i32 = mem_grow @mem, i32 1\n\
         {last}\n\
         }}\n\n\
         #[export(\"main\")]\n\
         @main: fn() -> i32 = func {{\n\
         ^entry:\n  \
         %r: i32 = call @many(i32 -1, i32 -2147483648)\n  \
         ret %r\n\
         }}\n"
    )
}

#[test]
fn checks_past_the_site_codes_are_reported_at_their_instruction() {
    let dir = scratch("past-codes");
    // 300 remainders by 7 (no trap), then the remainder of MIN by -1: its check has no site
    // code left, so it is a branch to the trap routine.
    let src = many_checks(300, "  %t: i32 = srem %a, %m\n  ret %t");
    let want = "trap: integer overflow (MIN / -1) in @many ^entry, instruction 301 (srem %t)\n";
    assert_all_trap(three_ways(&dir, &src), want);
    // A guarded access past the codes faults in the guard region: found by its code range.
    let src = many_checks(300, "  %x: i32 = mem_load 0 @mem, i32 65536\n  ret %x");
    let want = "trap: out of bounds memory access in @many ^entry, instruction 301 (mem_load %x)\n";
    assert_all_trap(three_ways(&dir, &src), want);
}

#[test]
fn a_trap_flushes_the_output_and_runs_no_atexit_function() {
    let dir = scratch("atexit");
    // `main` registers `@bye` (which prints `B`), prints `A` (buffered in C's `stdout`), then
    // divides by zero: the trap is the fault handler's, which ends the program as C's `abort`
    // would, after flushing what it printed.
    let src = "#[extern(\"putchar\")]\n@putchar: fn(i32) -> i32 = func\n\
               #[extern(\"atexit\")]\n@atexit: fn(ptr) -> i32 = func\n\n\
               @zero: i32 = global_var i32 0\n\n\
               @bye: fn() -> void = func {\n^entry:\n  %c: i32 = call @putchar(i32 66)\n  ret\n}\n\n\
               #[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  \
               %r: i32 = call @atexit(@bye)\n  \
               %a: i32 = call @putchar(i32 65)\n  \
               %z: i32 = load @zero\n  \
               %q: i32 = sdiv %r, %z\n  \
               ret %q\n}\n";
    let [_, jit, exe] = three_ways(&dir, src);
    for o in [jit, exe] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(70), "{err}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), "A");
        assert_eq!(
            err,
            "trap: integer division by zero in @main ^entry, instruction 3 (sdiv %q)\n"
        );
    }
}
