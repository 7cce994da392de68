//! Checks as machine traps (spec/backends.md, "Checks as machine traps"): in executables and
//! `ir-run` a failed check is a trap instruction the fault handler finds by its program counter,
//! and prints the interpreter's exact line; past a function's 249 site codes, checks are
//! branches again and a guarded access is found by its code range; code cached for a function
//! C code could not call is not reused where it can.

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
    for o in three_ways(&dir, &src) {
        assert_eq!(
            o.status.code(),
            Some(70),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&o.stderr), want);
    }
    // A guarded access past the codes faults in the guard region: found by its code range.
    let src = many_checks(300, "  %x: i32 = mem_load 0 @mem, i32 65536\n  ret %x");
    let want = "trap: out of bounds memory access in @many ^entry, instruction 301 (mem_load %x)\n";
    for o in three_ways(&dir, &src) {
        assert_eq!(
            o.status.code(),
            Some(70),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&o.stderr), want);
    }
}

/// A program whose `main` runs `@worker` (a 1,000-deep recursion) either directly or, with
/// `thread`, as the start routine of a new thread (its address taken: C code calls it).
fn worker(thread: bool) -> String {
    let run = if thread {
        "  %tid: ptr = stackalloc i64\n  \
         %c: i32 = call @pthread_create(%tid, ptr null, @worker, ptr null)\n  \
         %t: i64 = load %tid\n  \
         %j: i32 = call @pthread_join(%t, ptr null)\n"
    } else {
        "  %w: ptr = call @worker(ptr null)\n"
    };
    format!(
        r#"#[extern("pthread_create")]
@pthread_create: fn(ptr, ptr, ptr, ptr) -> i32 = func
#[extern("pthread_join")]
@pthread_join: fn(i64, ptr) -> i32 = func

@result: i32 = global_var i32 0

@rec: fn(i32) -> i32 = func {{
^entry(%n: i32):
  %z: i1 = icmp eq %n, i32 0
  br %z, ^done, ^more
^done:
  ret i32 0
^more:
  %m: i32 = isub %n, i32 1
  %r: i32 = call @rec(%m)
  %s: i32 = iadd %r, i32 1
  ret %s
}}

@worker: fn(ptr) -> ptr = func {{
^entry(%arg: ptr):
  %v: i32 = call @rec(i32 1000)
  store @result, %v
  ret ptr null
}}

#[export("main")]
@main: fn() -> i32 = func {{
^entry:
{run}  %r: i32 = load @result
  %e: i32 = urem %r, i32 256
  ret %e
}}
"#
    )
}

#[test]
fn code_cached_before_c_could_call_a_function_is_not_reused_once_it_can() {
    let dir = scratch("cache-entered");
    let cache = dir.join("cache");
    let cache_arg = cache.to_str().expect("utf-8 path");
    // First `@worker` is called by IR code only; then its address is taken and a new thread
    // runs it first: its code must find that thread's stack limit before its checks.
    for (k, thread) in [false, true].into_iter().enumerate() {
        let file = dir.join(format!("prog{k}.ir"));
        std::fs::write(&file, worker(thread)).expect("write module");
        let exe = dir.join(format!("prog{k}"));
        link_exe(&file, &exe, &["--cache", cache_arg]);
        let o = Command::new(&exe).output().expect("the executable runs");
        assert_eq!(
            o.status.code(),
            Some(1000 % 256),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
