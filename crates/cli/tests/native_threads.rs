//! Native code behaves as the same program compiled from C (issue 37, "Threads and the C
//! library"): IR code runs on any thread against that thread's own stack; the JIT and an
//! executable agree on `atexit`, on signals the program raises itself, and on what a memory
//! fault prints and flushes (spec/backends.md, "What native code does not check" and "Call
//! depth and the native stack").

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory for this test.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("native-threads-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The program `src`, run by the JIT (`ir-run`) and as an executable (`ir-link --emit exe`),
/// each with `args`.
fn jit_and_exe(dir: &Path, src: &str, args: &[&str]) -> [Output; 2] {
    let file = dir.join("prog.ir");
    std::fs::write(&file, src).expect("write module");
    let jit = Command::new(env!("CARGO_BIN_EXE_ir-run"))
        .args(args)
        .arg(&file)
        .output()
        .expect("ir-run runs");
    let exe = dir.join("prog");
    let link = Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(args)
        .arg(&file)
        .args(["--emit", "exe", "-o"])
        .arg(&exe)
        .output()
        .expect("ir-link runs");
    assert!(
        link.status.success(),
        "ir-link --emit exe: {}",
        String::from_utf8_lossy(&link.stderr)
    );
    [
        jit,
        Command::new(&exe).output().expect("the executable runs"),
    ]
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `main` starts a worker with `pthread_create` whose start routine is an IR function, joins
/// it, and returns what the worker stored: the result of a `depth`-deep recursion.
fn worker_program(depth: u32) -> String {
    worker_run(depth, true)
}

/// [`worker_program`], or with `thread` false a `main` calling the worker directly (its
/// address not taken: only IR code calls it).
fn worker_run(depth: u32, thread: bool) -> String {
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
  %v: i32 = call @rec(i32 {depth})
  store @result, %v
  ret ptr null
}}

#[export("main")]
@main: fn() -> i32 = func {{
^entry:
{run}  %r: i32 = load @result
  ret %r
}}
"#
    )
}

#[test]
fn code_cached_before_c_could_call_a_function_is_not_reused_once_it_can() {
    let dir = scratch("cache-entered");
    let cache = dir.join("cache");
    let cache = cache.to_str().expect("utf-8 path");
    // Where checks are machine traps, a function C code may call finds the thread's stack
    // limit first (spec/backends.md, "Call depth and the native stack"): first `@worker` is
    // called by IR code only, then a new thread runs it first, from the same code cache.
    for thread in [false, true] {
        let [_, exe] = jit_and_exe(&dir, &worker_run(50, thread), &["--cache", cache]);
        assert_eq!(exe.status.code(), Some(50), "{}", text(&exe.stderr));
    }
}

#[test]
fn ir_code_on_a_worker_thread_checks_that_threads_own_stack() {
    let dir = scratch("worker");
    // Before, the worker was checked against the main thread's stack limit: a false `stack
    // overflow` in every executable and in some JIT runs. Several runs: the JIT's was a race.
    for _ in 0..3 {
        for o in jit_and_exe(&dir, &worker_program(50), &[]) {
            assert_eq!(o.status.code(), Some(50), "{}", text(&o.stderr));
        }
    }
    // With a call depth limit, the worker counts its own activations.
    for o in jit_and_exe(&dir, &worker_program(50), &["--max-depth", "100"]) {
        assert_eq!(o.status.code(), Some(50), "{}", text(&o.stderr));
    }
    // Unbounded recursion on the worker ends at the worker's own stack, as a trap (at the
    // first instruction of `@rec`, which checks its own frame against the limit it is given).
    for o in jit_and_exe(&dir, &worker_program(2_000_000_000), &[]) {
        assert_eq!(o.status.code(), Some(70), "{}", text(&o.stderr));
        assert_eq!(
            text(&o.stderr),
            "trap: stack overflow (native stack exhausted) in @rec ^entry, instruction 0 (icmp %z)\n"
        );
    }
}

const PUTCHAR: &str = "#[extern(\"putchar\")]\n@putchar: fn(i32) -> i32 = func\n";

#[test]
fn atexit_functions_run_in_the_jit_as_in_an_executable() {
    let dir = scratch("atexit");
    let program = |end: &str| {
        format!(
            "{PUTCHAR}#[extern(\"atexit\")]\n@atexit: fn(ptr) -> i32 = func\n\
             #[extern(\"exit\")]\n@exit: fn(i32) -> void = func\n\n\
             @bye: fn() -> void = func {{\n^entry:\n  %a: i32 = call @putchar(i32 66)\n  ret\n}}\n\n\
             @bye2: fn() -> void = func {{\n^entry:\n  %a: i32 = call @putchar(i32 67)\n  ret\n}}\n\n\
             #[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  \
             %r: i32 = call @atexit(@bye)\n  %s: i32 = call @atexit(@bye2)\n  \
             %a: i32 = call @putchar(i32 65)\n{end}}}\n"
        )
    };
    // Returning from `main`, and calling `exit`: the functions run last first, then the
    // output is flushed.
    for (end, code) in [
        ("  ret i32 3\n", 3),
        ("  call @exit(i32 4)\n  ret i32 3\n", 4),
    ] {
        for o in jit_and_exe(&dir, &program(end), &[]) {
            assert_eq!(o.status.code(), Some(code), "{}", text(&o.stderr));
            assert_eq!(text(&o.stdout), "ACB");
        }
    }
}

/// `main` prints `A` (buffered in C's `stdout`), then raises signal `sig`.
fn raising(sig: i32) -> String {
    format!(
        "{PUTCHAR}#[extern(\"raise\")]\n@raise: fn(i32) -> i32 = func\n\n\
         #[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  \
         %a: i32 = call @putchar(i32 65)\n  %r: i32 = call @raise(i32 {sig})\n  ret i32 3\n}}\n"
    )
}

#[cfg(unix)]
#[test]
fn a_signal_the_program_raises_ends_it_as_in_c() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch("raise");
    // SIGTERM was swallowed by `ir-run` (the program went on), and SIGSEGV was reported as a
    // memory fault at the process id: both now end the program by the signal, in the JIT as
    // in an executable, as in C (unflushed).
    for sig in [libc_sig::SIGTERM, libc_sig::SIGSEGV] {
        for o in jit_and_exe(&dir, &raising(sig), &[]) {
            assert_eq!(o.status.signal(), Some(sig), "{o:?}");
            assert_eq!(text(&o.stderr), "");
        }
    }
}

/// Signal numbers (Linux and macOS agree on these two).
mod libc_sig {
    pub const SIGSEGV: i32 = 11;
    pub const SIGTERM: i32 = 15;
}

#[test]
fn a_memory_fault_flushes_what_the_program_printed_first() {
    let dir = scratch("fault-flush");
    let src = format!(
        "{PUTCHAR}\n#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  \
         %a: i32 = call @putchar(i32 65)\n  %p: ptr = inttoptr i64 16\n  \
         %v: i32 = load %p\n  ret %v\n}}\n"
    );
    let [jit, exe] = jit_and_exe(&dir, &src, &[]);
    for o in [&jit, &exe] {
        assert_eq!(o.status.code(), Some(70), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout), "A");
    }
    // The address is the faulting one (the JIT prints it; an executable prints none).
    assert!(
        text(&jit.stderr).starts_with("trap: memory fault at 0x10 ("),
        "{}",
        text(&jit.stderr)
    );
    assert!(
        text(&exe.stderr).starts_with("trap: memory fault (native code"),
        "{}",
        text(&exe.stderr)
    );
}
