//! Profiles taken by the real `perf` (spec/backends.md, "Debug information" and "Profiling JIT
//! code"): on the matmul kernel of examples/wasm-c, compiled by clang with `-g` to wasm,
//! translated and linked into an executable, `perf report` attributes the samples to the C
//! source line of the inner loop; run by `ir-run --perf-map`, to the IR function by its name.
//!
//! Sampling uses the software event `cpu-clock`, which needs no hardware counters (virtual
//! machines often have none). Without `perf` a test is skipped with a note on stderr, unless
//! `IRKIT_REQUIRE_PERF=1` (set by `.ci/run`), which makes it a failure; where the kernel does
//! not let this user profile (`perf_event_paranoid`, a container's seccomp profile), it is
//! skipped whatever that says: the tool is there, the system forbids it.

use std::path::Path;
use std::process::Command;

mod tools;
use tools::{repo, run, scratch, text};

/// Whether `perf` is installed (if not, the test is skipped, or fails under
/// `IRKIT_REQUIRE_PERF=1`) and may sample this user's processes (if not, skipped).
fn can_profile(dir: &Path) -> bool {
    let installed = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        assert!(
            std::env::var_os("IRKIT_REQUIRE_PERF").is_none_or(|v| v != "1"),
            "perf is not installed (IRKIT_REQUIRE_PERF=1)"
        );
        eprintln!("skipped: perf is not installed");
        return false;
    }
    let o = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-o"])
        .arg(dir.join("probe.data"))
        .args(["--", "true"])
        .output()
        .expect("perf runs");
    if !o.status.success() {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .unwrap_or_else(|_| "unreadable".into());
        eprintln!(
            "skipped: perf may not profile here (perf_event_paranoid {}): {}",
            paranoid.trim(),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        );
    }
    o.status.success()
}

/// Whether clang with the wasm target is there (a best-effort tool: without it the test is
/// skipped, whatever `IRKIT_REQUIRE_PERF` says, as in debug_tools.rs).
fn have_clang() -> bool {
    let found = Command::new("clang-19")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: clang-19 is not installed");
    }
    found
}

/// The 1-based number of the first line of `file` in `dir` containing `needle`.
fn line_of(dir: &Path, file: &str, needle: &str) -> usize {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    1 + text
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in {file}"))
}

/// examples/wasm-c compiled by clang with `-g` to two wasm modules whose `main` is the matmul
/// kernel's bench export (its repetitions cut to 40, a fraction of a second), translated in
/// `dir` to `lib.irm` and `main.irm`.
fn matmul_modules(dir: &Path) {
    for f in ["lib.c", "wasm.h"] {
        std::fs::copy(repo().join("examples/wasm-c").join(f), dir.join(f)).unwrap();
    }
    let main = std::fs::read_to_string(repo().join("examples/wasm-c/main.c")).unwrap();
    assert!(main.contains("matmul(300)"), "the bench export changed");
    std::fs::write(
        dir.join("main.c"),
        main.replace("matmul(300)", "matmul(40)"),
    )
    .unwrap();
    // examples/wasm-c/build.sh's flags, with -g.
    let flags =
        "--target=wasm32 -O2 -g -fno-builtin -nostdlib -Wl,--no-entry -Wl,--allow-undefined";
    for m in ["lib", "main"] {
        run(Command::new("clang-19")
            .args(flags.split(' '))
            .args(["-o", &format!("{m}.wasm"), &format!("{m}.c")])
            .current_dir(dir));
    }
    let wasm = |args: &[&str]| {
        run(Command::new(env!("CARGO_BIN_EXE_ir-wasm"))
            .args(args)
            .current_dir(dir))
    };
    wasm(&["lib.wasm", "-o", "lib.irm"]);
    wasm(&["main.wasm", "-o", "main.irm", "--main", "bench_matmul"]);
}

/// `perf record -e cpu-clock -o DATA -- COMMAND...` in `dir`. Its exit code is the program's
/// (the matmul program's result, not 0): what matters is that the samples were written.
fn record(dir: &Path, data: &str, command: &[&str]) {
    let o = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-o", data, "--"])
        .args(command)
        .current_dir(dir)
        .output()
        .expect("perf runs");
    assert!(
        dir.join(data).is_file() && o.status.code().is_some(),
        "perf record {command:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `perf report --stdio --sort KEY` of `data` in `dir`: its rows, each (percent, key), in
/// the report's order (most samples first).
fn report(dir: &Path, data: &str, key: &str) -> Vec<(f64, String)> {
    let o = run(Command::new("perf")
        .args(["report", "--stdio", "-i", data, "--sort", key])
        .current_dir(dir));
    text(&o)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (pct, rest) = l.trim().split_once('%')?;
            Some((pct.trim().parse().ok()?, rest.trim().to_string()))
        })
        .collect()
}

#[test]
fn perf_attributes_the_matmul_executables_samples_to_its_c_lines() {
    let dir = scratch("perf", "exe");
    if !can_profile(&dir) || !have_clang() {
        return;
    }
    matmul_modules(&dir);
    run(Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(["lib.irm", "main.irm", "--emit", "exe", "-o", "matmul"])
        .current_dir(&dir));
    record(&dir, "exe.data", &["./matmul"]);
    let inner = line_of(&dir, "main.c", "s += a[i][k] * b[k][j]");
    let rows = report(&dir, "exe.data", "srcline");
    let (pct, top) = rows.first().cloned().unwrap_or_default();
    assert!(
        top == format!("main.c:{inner}") && pct > 50.0,
        "the inner loop (main.c:{inner}) is not the hottest line: {rows:?}"
    );
    // `perf script` names the line of each sample too.
    let o = run(Command::new("perf")
        .args(["script", "-i", "exe.data", "-F", "ip,sym,srcline"])
        .current_dir(&dir));
    assert!(
        text(&o).contains(&format!("main.c:{inner}")),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_names_the_jits_functions_from_ir_runs_perf_map() {
    let dir = scratch("perf", "jit");
    if !can_profile(&dir) || !have_clang() {
        return;
    }
    matmul_modules(&dir);
    // `perf record` sets PERF_BUILDID_DIR, for which cranelift-jit writes names of its own
    // into the same map: without it, the names are `--perf-map`'s alone.
    let ir_run = env!("CARGO_BIN_EXE_ir-run");
    let command = ["env", "-u", "PERF_BUILDID_DIR", ir_run, "--perf-map"];
    record(
        &dir,
        "jit.data",
        &[&command[..], &["lib.irm", "main.irm"]].concat(),
    );
    let rows = report(&dir, "jit.data", "sym");
    let (pct, top) = rows.first().cloned().unwrap_or_default();
    assert!(
        top == "[.] @matmul" && pct > 50.0,
        "the kernel is not the hottest function: {rows:?}"
    );
    // The map outlives the process (profilers read it afterwards): the test's is removed.
    let pids = run(Command::new("perf")
        .args(["script", "-i", "jit.data", "-F", "pid"])
        .current_dir(&dir));
    if let Some(pid) = text(&pids).split_whitespace().next() {
        let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
