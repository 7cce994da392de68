//! Allocation through the runtime the user chooses (spec/linking.md, "Objects", step 6;
//! issue 39, item 6): `classalloc` calls one routine, the C allocator by default (nothing is
//! collected) or, with `ir-link --gc boehm --emit exe`, the Boehm-Demers-Weiser collector.
//!
//! One program, generated here: it allocates `n` objects of 1 KiB in a loop and drops all but
//! one in 65,536, which it keeps on a list rooted in a global (the executable's data, which the
//! collector scans), plus one object reachable only through the address of one of its fields
//! (an interior pointer). It exits with 42 when the kept objects still hold what was stored in
//! them, so a collector that freed a live object (and reused its memory) is a wrong exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Objects of the collected run: 2 GB in all.
const MANY: u64 = 2_000_000;
/// Objects of the run with the C allocator: 100 MB, all of them kept by the process.
const FEW: u64 = 100_000;
/// The size of one object: header, `next`, `value`, `[125 x i64]`.
const OBJECT: u64 = 1024;

/// A scratch directory for this test.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("objects-gc-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The program allocating `n` objects (see the module documentation).
fn program(n: u64) -> String {
    let kept = (n - 1) / 65_536 + 1;
    let sum = 65_536 * kept * (kept - 1) / 2;
    format!(
        r#"@Node = class {{
  field_def "next" ptr
  field_def "value" i64
  field_def "pad" [125 x i64]
}}

@kept: ptr = global_var ptr null
@inner: ptr = global_var ptr null

@fill: fn(i64) -> ptr = func {{
^entry(%i: i64):
  %o: ptr = classalloc @Node
  %pv: ptr = field "value" @Node, %o
  store %pv, %i
  ret %o
}}

#[export("main")]
@main: fn() -> i32 = func {{
^entry:
  %first: ptr = call @fill(i64 7)
  %pf: ptr = field "value" @Node, %first
  store @inner, %pf
  jump ^loop(i64 0)
^loop(%i: i64):
  %o: ptr = call @fill(%i)
  %low: i64 = and %i, i64 65535
  %keep: i1 = icmp eq %low, i64 0
  br %keep, ^link, ^next
^link:
  %head: ptr = load @kept
  %pn: ptr = field "next" @Node, %o
  store %pn, %head
  store @kept, %o
  jump ^next
^next:
  %i1: i64 = iadd %i, i64 1
  %more: i1 = icmp ult %i1, i64 {n}
  br %more, ^loop(%i1), ^done
^done:
  %h: ptr = load @kept
  jump ^walk(%h, i64 0, i64 0)
^walk(%p: ptr, %count: i64, %sum: i64):
  %end: i1 = icmp eq %p, ptr null
  br %end, ^verify, ^step
^step:
  %pv: ptr = field "value" @Node, %p
  %v: i64 = load %pv
  %pn2: ptr = field "next" @Node, %p
  %n: ptr = load %pn2
  %c1: i64 = iadd %count, i64 1
  %s1: i64 = iadd %sum, %v
  jump ^walk(%n, %c1, %s1)
^verify:
  %q: ptr = load @inner
  %iv: i64 = load %q
  %ok1: i1 = icmp eq %count, i64 {kept}
  %ok2: i1 = icmp eq %sum, i64 {sum}
  %ok3: i1 = icmp eq %iv, i64 7
  %ok12: i1 = and %ok1, %ok2
  %ok: i1 = and %ok12, %ok3
  %r: i32 = select %ok, i32 42, i32 1
  ret %r
}}
"#
    )
}

/// Writes the program for `n` objects to `dir` and links it with `args` into an executable:
/// its path, or the linker's stderr.
fn build(dir: &Path, n: u64, args: &[&str]) -> Result<PathBuf, String> {
    let src = dir.join(format!("alloc{n}.ir"));
    std::fs::write(&src, program(n)).expect("write the program");
    let exe = dir.join(format!("alloc{n}"));
    let out = Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .arg(&src)
        .args(args)
        .args(["--emit", "exe", "-o"])
        .arg(&exe)
        .output()
        .expect("ir-link runs");
    if out.status.success() {
        Ok(exe)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Runs `exe`: its exit code and peak RSS in KiB.
fn run(exe: &Path) -> (Option<i32>, u64) {
    let r = irkit_testkit::run(&mut Command::new(exe)).expect("the executable runs");
    (r.code, r.rss_kb.expect("Linux reports the peak RSS"))
}

#[test]
fn boehm_collects_what_the_program_drops_and_keeps_what_it_reaches() {
    let dir = scratch("boehm");
    let exe = match build(&dir, MANY, &["--gc", "boehm"]) {
        Ok(exe) => exe,
        // The test is skipped only on a machine without libgc (.ci/run installs it and says
        // so with IRKIT_REQUIRE_LIBGC).
        Err(e) if e.contains("-lgc") && std::env::var_os("IRKIT_REQUIRE_LIBGC").is_none() => {
            eprintln!("skipped: the Boehm collector is not installed (libgc-dev): {e}");
            return;
        }
        Err(e) => panic!("ir-link --gc boehm --emit exe: {e}"),
    };
    let (code, rss_kb) = run(&exe);
    assert_eq!(code, Some(42), "the kept objects hold what was stored");
    let total_mb = MANY * OBJECT / 1_000_000;
    assert!(
        rss_kb < 200_000,
        "{total_mb} MB allocated in all, peak RSS {rss_kb} KiB: not collected"
    );
}

#[test]
fn the_c_allocator_gives_the_same_result_and_collects_nothing() {
    let dir = scratch("calloc");
    let exe = build(&dir, FEW, &[]).unwrap_or_else(|e| panic!("ir-link --emit exe: {e}"));
    let (code, rss_kb) = run(&exe);
    assert_eq!(code, Some(42));
    // Every object stays: the peak holds (nearly) all of them.
    let total_kb = FEW * OBJECT / 1024;
    assert!(
        rss_kb > total_kb * 9 / 10,
        "{total_kb} KiB allocated, peak RSS {rss_kb} KiB: the C allocator collects nothing"
    );
    // The JIT and the interpreter run the program as the executable does.
    for backend in [&[][..], &["--interp"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_ir-run"))
            .args(backend)
            .arg(dir.join(format!("alloc{FEW}.ir")))
            .output()
            .expect("ir-run runs");
        assert_eq!(out.status.code(), Some(42), "ir-run {backend:?}");
    }
}

#[test]
fn the_jit_refuses_the_collector() {
    let dir = scratch("jit");
    let src = dir.join("alloc.ir");
    std::fs::write(&src, program(10)).expect("write the program");
    let out = Command::new(env!("CARGO_BIN_EXE_ir-run"))
        .args(["--gc", "boehm"])
        .arg(&src)
        .output()
        .expect("ir-run runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--gc boehm is for executables (ir-link --gc boehm --emit exe)"),
        "{err}"
    );
}
