//! Native code never crashes on what a module may legally say (issue 14, "Never a crash"):
//! huge zero-initialized globals are zero-fill data (a small object file, lazily zeroed JIT
//! memory) and globals beyond what native code can address are refused in one line; an
//! `extern` global without an initial value is the C library's object, not a new one; deep
//! recursion is the `stack overflow` trap (exit 70) on every back end, large frames included.

use std::path::PathBuf;
use std::process::{Command, Output};

/// A scratch directory for this test.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("native-limits-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Writes `src` as `name` in `dir`.
fn write(dir: &std::path::Path, name: &str, src: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, src).expect("write module");
    f
}

fn ir_run(args: &[&str], file: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ir-run"))
        .args(args)
        .arg(file)
        .output()
        .expect("ir-run runs")
}

fn ir_link(args: &[&str], file: &std::path::Path, out: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(args)
        .arg(file)
        .arg("-o")
        .arg(out)
        .output()
        .expect("ir-link runs")
}

/// Links `file` into an executable in `dir` (extra `args`) and runs it.
fn run_exe(dir: &std::path::Path, file: &std::path::Path, args: &[&str]) -> Output {
    let exe = dir.join("prog");
    let mut a = vec!["--emit", "exe"];
    a.extend_from_slice(args);
    let link = ir_link(&a, file, &exe);
    assert!(
        link.status.success(),
        "ir-link --emit exe failed: {}",
        String::from_utf8_lossy(&link.stderr)
    );
    Command::new(&exe).output().expect("the executable runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 1 and exactly one line on standard error, containing every one of `words`.
fn assert_one_line_error(o: &Output, words: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "expected exit 1: {err}");
    assert_eq!(err.lines().count(), 1, "expected one line: {err}");
    for w in words {
        assert!(err.contains(w), "expected {w:?} in {err:?}");
    }
}

/// A module whose `main` stores 7 into byte 1000 of global `@big` of type `[n x i8]`
/// (initialized with `init`, e.g. `" [N x i8] zero"`, or nothing) and returns it.
fn big_global(n: u64, init: &str) -> String {
    let init = init.replace('N', &n.to_string());
    format!(
        "@big: [{n} x i8] = global_var{init}\n\n\
         #[export(\"main\")]\n\
         @main: fn() -> i32 = func {{\n\
         ^entry:\n  \
         %p: ptr = elem [{n} x i8], @big, i64 0, i64 1000\n  \
         store %p, i8 7\n  \
         %v: i8 = load %p\n  \
         %r: i32 = sext %v\n  \
         ret %r\n\
         }}\n"
    )
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

#[test]
fn zero_initialized_global_is_zero_fill_in_object_files_and_executables() {
    let dir = scratch("zero-fill");
    // Explicitly `zero`, and without an initial value: both are zero-fill data.
    for (i, init) in [" [N x i8] zero", ""].into_iter().enumerate() {
        let f = write(&dir, &format!("big{i}.ir"), &big_global(GIB, init));
        let obj = dir.join(format!("big{i}.o"));
        let o = ir_link(&["--emit", "obj"], &f, &obj);
        assert!(o.status.success(), "ir-link --emit obj: {}", stderr(&o));
        let len = std::fs::metadata(&obj).expect("object written").len();
        assert!(
            len < 64 * 1024,
            "a 1 GiB zero global made a {len}-byte object"
        );
    }
    // An 80 MiB zero array: a small executable that runs.
    let f = write(&dir, "big80.ir", &big_global(80 * MIB, " [N x i8] zero"));
    let out = run_exe(&dir, &f, &[]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let len = std::fs::metadata(dir.join("prog")).expect("exe").len();
    assert!(
        len < MIB,
        "an 80 MiB zero global made a {len}-byte executable"
    );
}

#[test]
fn zero_initialized_globals_run_in_the_jit() {
    let dir = scratch("jit-zero");
    // 64 MiB, and the largest global native code holds (2 GiB - 1): lazily zeroed memory,
    // never written whole.
    for n in [64 * MIB, 2 * GIB - 1] {
        let f = write(&dir, "big.ir", &big_global(n, " [N x i8] zero"));
        let o = ir_run(&[], &f);
        assert_eq!(o.status.code(), Some(7), "{n} bytes: {}", stderr(&o));
    }
}

#[test]
fn globals_too_large_for_native_code_are_refused_in_one_line() {
    let dir = scratch("too-large");
    for (n, init) in [
        (1u64 << 40, " [N x i8] zero"),
        (1u64 << 40, ""),
        (4 * GIB, ""),
        (u64::MAX, " [N x i8] zero"),
    ] {
        let f = write(&dir, "huge.ir", &big_global(n, init));
        assert_one_line_error(&ir_run(&[], &f), &["error: jit back end: @big", "bytes"]);
        let o = ir_link(&["--emit", "obj"], &f, &dir.join("huge.o"));
        assert_one_line_error(&o, &["error: @big", "bytes"]);
        assert!(!dir.join("huge.o").exists(), "a refused object was written");
    }
    // A size that overflows 64 bits.
    let src = big_global(1, "")
        .replace("[1 x i8]", "[18446744073709551615 x i64]")
        .replace("i8 7", "i64 7")
        .replace("%v: i8", "%v: i64")
        .replace("sext %v", "trunc %v");
    let f = write(&dir, "overflow.ir", &src);
    assert_one_line_error(&ir_run(&[], &f), &["error: jit back end: @big"]);
}

/// Reads C's `stderr` (an `extern` data object the program declares without defining it) and
/// writes a line through it with `fputs`.
const STDERR_PROGRAM: &str = r#"#[extern("stderr")]
@stderr: ptr = global_var

#[extern("fputs")]
@fputs: fn(ptr, ptr) -> i32 = func

@msg: [9 x i8] = global_const [9 x i8] b"to err!\n\x00"

#[export("main")]
@main: fn() -> i32 = func {
^entry:
  %f: ptr = load @stderr
  %r: i32 = call @fputs(@msg, %f)
  ret i32 3
}
"#;

#[test]
fn extern_global_without_initial_value_is_the_c_librarys_object() {
    let dir = scratch("extern-data");
    let f = write(&dir, "stderr.ir", STDERR_PROGRAM);
    let jit = ir_run(&[], &f);
    assert_eq!(jit.status.code(), Some(3), "jit: {}", stderr(&jit));
    assert_eq!(stderr(&jit), "to err!\n");
    let exe = run_exe(&dir, &f, &[]);
    assert_eq!(exe.status.code(), Some(3), "exe: {}", stderr(&exe));
    assert_eq!(stderr(&exe), "to err!\n");
    // A data symbol the process does not have: refused by the JIT in one line.
    let f = write(
        &dir,
        "missing.ir",
        &STDERR_PROGRAM.replace("\"stderr\"", "\"irkit_no_such_data_symbol\""),
    );
    assert_one_line_error(
        &ir_run(&[], &f),
        &["@stderr", "\"irkit_no_such_data_symbol\""],
    );
}

/// Recursion without end: each activation of `@down` holds a `stackalloc` of `frame` bytes
/// (none if 0) and writes into it.
fn recursion(frame: u64) -> String {
    let body = if frame == 0 {
        String::new()
    } else {
        format!(
            "  %buf: ptr = stackalloc [{frame} x i8]\n  \
             %p: ptr = elem [{frame} x i8], %buf, i64 0, %n\n  \
             store %p, i8 1\n"
        )
    };
    format!(
        "@down: fn(i64) -> i64 = func {{\n\
         ^entry(%n: i64):\n\
         {body}  \
         %m: i64 = iadd %n, i64 1\n  \
         %r: i64 = call @down(%m)\n  \
         ret %r\n\
         }}\n\n\
         #[export(\"main\")]\n\
         @main: fn() -> i32 = func {{\n\
         ^entry:\n  \
         %r: i64 = call @down(i64 0)\n  \
         %c: i32 = trunc %r\n  \
         ret %c\n\
         }}\n"
    )
}

/// Runs `file` through the interpreter, the JIT and an executable, each with `args` (for
/// `ir-run`, and for `ir-link --emit exe`).
fn three_ways(dir: &std::path::Path, file: &std::path::Path, args: &[&str]) -> [Output; 3] {
    let mut interp = vec!["--interp"];
    interp.extend_from_slice(args);
    [
        ir_run(&interp, file),
        ir_run(args, file),
        run_exe(dir, file, args),
    ]
}

#[test]
fn max_depth_is_the_same_limit_on_every_back_end() {
    let dir = scratch("max-depth");
    let f = write(&dir, "rec.ir", &recursion(0));
    let want =
        "trap: stack overflow (call depth limit 100) in @down ^entry, instruction 1 (call %r)\n";
    for (o, name) in three_ways(&dir, &f, &["--max-depth", "100"])
        .iter()
        .zip(["interp", "jit", "exe"])
    {
        assert_eq!(o.status.code(), Some(70), "{name}: {}", stderr(o));
        assert_eq!(stderr(o), want, "{name}");
    }
    // 0 is not a limit, and more than a million is refused: usage errors.
    for n in ["0", "1000001"] {
        assert_eq!(ir_run(&["--max-depth", n], &f).status.code(), Some(2));
        let o = ir_link(&["--emit", "obj", "--max-depth", n], &f, &dir.join("x.o"));
        assert_eq!(o.status.code(), Some(2));
    }
    // The largest limit: the interpreter and the JIT reach it.
    let want = "trap: stack overflow (call depth limit 1000000) in @down ^entry, instruction 1 (call %r)\n";
    for args in [
        &["--interp", "--max-depth", "1000000"][..],
        &["--max-depth", "1000000"],
    ] {
        let o = ir_run(args, &f);
        assert_eq!(o.status.code(), Some(70), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), want, "{args:?}");
    }
}

#[test]
fn deep_recursion_of_large_frames_is_a_trap_on_every_back_end() {
    let dir = scratch("large-frames");
    let f = write(&dir, "big.ir", &recursion(64 * 1024));
    // Without a depth limit: native code runs out of stack, and says so at the first
    // instruction of the function whose frame would not fit (given the stack limit, it checks
    // its own frame: spec/backends.md, "Call depth and the native stack"); the interpreter
    // runs out of the 1 GiB its `stackalloc` objects may take (16,384 frames), a trap too.
    let [interp, jit, exe] = three_ways(&dir, &f, &[]);
    assert!(
        stderr(&interp).starts_with("trap: out of memory"),
        "interp: {}",
        stderr(&interp)
    );
    for o in [&jit, &exe] {
        assert_eq!(
            stderr(o),
            "trap: stack overflow (native stack exhausted) in @down ^entry, instruction 0 (stackalloc %buf)\n"
        );
    }
    for o in [&interp, &jit, &exe] {
        assert_eq!(o.status.code(), Some(70), "{}", stderr(o));
    }
    // Within a depth limit the frames fit: the same trap everywhere.
    let want =
        "trap: stack overflow (call depth limit 50) in @down ^entry, instruction 4 (call %r)\n";
    for o in three_ways(&dir, &f, &["--max-depth", "50"]) {
        assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
        assert_eq!(stderr(&o), want);
    }
}

#[test]
fn unbounded_recursion_ends_at_the_stack_natively_and_at_a_million_frames_interpreted() {
    let dir = scratch("unbounded");
    let f = write(&dir, "rec.ir", &recursion(0));
    let [interp, jit, exe] = three_ways(&dir, &f, &[]);
    assert_eq!(
        stderr(&interp),
        "trap: stack overflow (call depth limit 1000000) in @down ^entry, instruction 1 (call %r)\n"
    );
    for o in [&jit, &exe] {
        assert_eq!(
            stderr(o),
            "trap: stack overflow (native stack exhausted) in @down ^entry, instruction 0 (iadd %m)\n"
        );
    }
    for o in [&interp, &jit, &exe] {
        assert_eq!(o.status.code(), Some(70), "{}", stderr(o));
    }
}

#[test]
fn an_entry_frame_larger_than_the_stack_is_a_trap() {
    let dir = scratch("entry-frame");
    let n = 100 * MIB;
    let src = format!(
        "#[export(\"main\")]\n\
         @main: fn() -> i32 = func {{\n\
         ^entry:\n  \
         %buf: ptr = stackalloc [{n} x i8]\n  \
         %p: ptr = elem [{n} x i8], %buf, i64 0, i64 5\n  \
         store %p, i8 1\n  \
         %v: i8 = load %p\n  \
         %r: i32 = sext %v\n  \
         ret %r\n\
         }}\n"
    );
    let f = write(&dir, "main.ir", &src);
    let want = "trap: stack overflow (native stack exhausted) in @main ^entry, instruction 0 (stackalloc %buf)\n";
    // An executable's stack is `ulimit -s`, and the JIT's program thread has the same: with
    // the usual 8 MiB both trap; with an unlimited one (1 GiB) both run; never a signal.
    let jit = ir_run(&[], &f);
    let exe = run_exe(&dir, &f, &[]);
    assert_eq!(jit.status.code(), exe.status.code(), "{}", stderr(&jit));
    for o in [&jit, &exe] {
        match o.status.code() {
            Some(1) => assert_eq!(stderr(o), ""),
            Some(70) => assert_eq!(stderr(o), want),
            other => panic!("ended with {other:?}: {}", stderr(o)),
        }
    }
}

#[test]
fn an_indirect_call_reserves_stack_for_functions_of_its_type_only() {
    let dir = scratch("indirect-reserve");
    // `@big`'s 100 MiB frame does not fit in any stack here, but `@big` cannot be the target
    // of a call through `fn(i32) -> i32`: the call of `@small` runs.
    let src = "@big: fn() -> i32 = func {\n\
               ^entry:\n  \
               %buf: ptr = stackalloc [104857600 x i8]\n  \
               ret i32 0\n\
               }\n\n\
               @small: fn(i32) -> i32 = func {\n\
               ^entry(%n: i32):\n  \
               %m: i32 = iadd %n, i32 1\n  \
               ret %m\n\
               }\n\n\
               #[export(\"main\")]\n\
               @main: fn() -> i32 = func {\n\
               ^entry:\n  \
               %r: i32 = call_indirect fn(i32) -> i32, @small(i32 4)\n  \
               ret %r\n\
               }\n";
    let f = write(&dir, "ind.ir", src);
    for o in three_ways(&dir, &f, &[]) {
        assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    }
}

#[test]
fn frames_too_large_for_native_code_are_refused_in_one_line() {
    let dir = scratch("huge-frame");
    let src = "#[export(\"main\")]\n\
               @main: fn() -> i32 = func {\n\
               ^entry:\n  \
               %a: ptr = stackalloc [805306368 x i8]\n  \
               %b: ptr = stackalloc [805306368 x i8]\n  \
               ret i32 0\n\
               }\n";
    let f = write(&dir, "frame.ir", src);
    assert_one_line_error(
        &ir_run(&[], &f),
        &["error: jit back end: @main", "1610612736 bytes"],
    );
    let o = ir_link(&["--emit", "obj"], &f, &dir.join("frame.o"));
    assert_one_line_error(&o, &["error: @main", "1610612736 bytes"]);
}

#[test]
fn recursion_through_c_callbacks_is_a_trap() {
    let dir = scratch("callbacks");
    // `@cmp`, called back by `qsort`, calls `qsort` again: no IR function calls another, every
    // activation is entered from C; the calls of `qsort` check the stack.
    let src = "#[extern(\"qsort\")]\n\
               @qsort: fn(ptr, i64, i64, ptr) -> void = func\n\n\
               @data: [2 x i32] = global_var [2 x i32] [i32 2, i32 1]\n\n\
               @cmp: fn(ptr, ptr) -> i32 = func {\n\
               ^entry(%a: ptr, %b: ptr):\n  \
               call @qsort(@data, i64 2, i64 4, @cmp)\n  \
               ret i32 0\n\
               }\n\n\
               #[export(\"main\")]\n\
               @main: fn() -> i32 = func {\n\
               ^entry:\n  \
               call @qsort(@data, i64 2, i64 4, @cmp)\n  \
               ret i32 0\n\
               }\n";
    let f = write(&dir, "qsort.ir", src);
    let want =
        "trap: stack overflow (native stack exhausted) in @cmp ^entry, instruction 0 (call)\n";
    for o in [ir_run(&[], &f), run_exe(&dir, &f, &[])] {
        assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
        assert_eq!(stderr(&o), want);
    }
}

/// A memory fault in native code (which does not check accesses), in the JIT or a built
/// executable, ends the run with a trap line and exit code 70, never a bare SIGSEGV; the
/// interpreter names the instruction.
#[test]
fn a_memory_fault_in_the_jit_is_a_trap_line_not_a_signal() {
    let dir = scratch("fault");
    let file = write(
        &dir,
        "fault.ir",
        "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %p: ptr = inttoptr i64 16\n  store %p, i32 5\n  ret i32 0\n}\n",
    );
    let o = ir_run(&[], &file);
    assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("trap: memory fault at 0x10 "),
        "{}",
        stderr(&o)
    );
    let o = ir_run(&["--interp"], &file);
    assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("in @main ^entry, instruction 1 (store)"),
        "{}",
        stderr(&o)
    );
    // A built executable too: its C `main` installs the handler.
    let o = run_exe(&dir, &file, &[]);
    assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("trap: memory fault (native code does not check"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_linear_memory_whose_reservation_is_refused_ends_the_program_with_a_trap_line() {
    // An executable gives each linear memory 6 GiB of address space with guard pages before
    // its entry runs (spec/backends.md, "Linear memories"); under a smaller `ulimit -v` that
    // is refused, which ends the program with one trap line, never a signal or a fault.
    let dir = scratch("memory-reserve");
    let src = "@mem: struct {ptr, i64, i32, i64} = global_var struct {ptr, i64, i32, i64} [ptr null, i64 0, i32 65537, i64 0]\n\n\
               #[export(\"main\")]\n\
               @main: fn() -> i32 = func {\n\
               ^entry:\n  \
               %g: i32 = mem_grow @mem, i32 1\n  \
               mem_store 0 @mem, i32 8, i32 7\n  \
               %v: i32 = mem_load 0 @mem, i32 8\n  \
               ret %v\n\
               }\n";
    let f = write(&dir, "mem.ir", src);
    let exe = dir.join("prog");
    let link = ir_link(&["--emit", "exe"], &f, &exe);
    assert!(link.status.success(), "{}", stderr(&link));
    let free = Command::new(&exe).output().expect("the executable runs");
    assert_eq!(free.status.code(), Some(7), "{}", stderr(&free));
    // 2 GiB of address space: enough for the program, not for the reservation.
    let limited = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v 2097152 && exec '{}'", exe.display()))
        .output()
        .expect("sh runs");
    assert_eq!(limited.status.code(), Some(70), "{}", stderr(&limited));
    assert_eq!(
        stderr(&limited),
        "trap: out of memory (a linear memory's 6 GiB address space reservation failed)\n"
    );
}
