//! Every tool's work grows at most n log n with its input (issue 37, "Size"): `ir-as`,
//! `ir-dis`, `ir-fmt`, `ir-info`, `ir-verify` and `ir-link --emit irm` run on generated
//! programs of 10× and 100× a base size, and their CPU time and peak memory, each read from
//! the kernel's accounting of that one process, may grow by at most [`max_ratio`] of 10.
//! (The other tools have scale tests of their own: code generation in
//! `crates/cranelift/tests/{large_functions,switch_scale}.rs`, `ir-wasm` in
//! `crates/wasm/tests/br_table_scale.rs`, `ir-wast` in `crates/wast/tests/scale.rs`.)
//!
//! The program has what makes a quadratic pass show: many definitions (a library of `n`
//! functions, each calling the next) and one long function (`main` calls each of them and
//! sums the results), split over two modules so that the link resolves `n` imports.
//!
//! [`max_ratio`]: irkit_testkit::growth::max_ratio

use std::path::{Path, PathBuf};
use std::process::Command;

use irkit_testkit::{assert_grows_at_most_n_log_n, run};

/// The base size: 100× it (50,000 functions, a 100,000-instruction `main`) takes a debug
/// build of the slowest tool a few seconds.
const N: usize = 500;

/// The library: `@f{i}` returns `x + i`, through a call of `@f{i+1}` for all but the last.
fn library(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let body = if i + 1 < n {
            format!(
                "  %y: i32 = iadd %x, i32 1\n  %r: i32 = call @f{}(%y)\n  ret %r\n",
                i + 1
            )
        } else {
            "  ret %x\n".into()
        };
        s += &format!(
            "#[export(\"f{i}\")]\n@f{i}: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n{body}}}\n\n"
        );
    }
    s
}

/// The main module: imports every `@f{i}`, and `main` calls each with `i32 0`, summing.
fn main_module(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s += &format!("#[import(\"f{i}\")]\n@f{i}: fn(i32) -> i32 = func\n\n");
    }
    s += "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %s0: i32 = iadd i32 0, i32 0\n";
    for i in 0..n {
        s += &format!(
            "  %c{i}: i32 = call @f{i}(i32 0)\n  %s{}: i32 = iadd %s{i}, %c{i}\n",
            i + 1
        );
    }
    s += &format!("  ret %s{n}\n}}\n");
    s
}

/// The files of the program of size `n` in `dir`: both modules as text and assembled.
struct Program {
    lib_ir: PathBuf,
    main_ir: PathBuf,
    lib_irm: PathBuf,
    main_irm: PathBuf,
    linked: PathBuf,
}

fn program(dir: &Path, n: usize) -> Program {
    let p = |name: &str| dir.join(format!("{name}-{n}"));
    let prog = Program {
        lib_ir: p("lib.ir"),
        main_ir: p("main.ir"),
        lib_irm: p("lib.irm"),
        main_irm: p("main.irm"),
        linked: p("linked.irm"),
    };
    std::fs::write(&prog.lib_ir, library(n)).expect("write the library");
    std::fs::write(&prog.main_ir, main_module(n)).expect("write main");
    for (ir, irm) in [
        (&prog.lib_ir, &prog.lib_irm),
        (&prog.main_ir, &prog.main_irm),
    ] {
        let r = run(Command::new(env!("CARGO_BIN_EXE_ir-as"))
            .arg(ir)
            .arg("-o")
            .arg(irm))
        .expect("ir-as runs");
        assert!(r.success, "ir-as {}: {}", ir.display(), r.stderr);
    }
    prog
}

/// A tool's run on one program: its arguments.
type Args = fn(&Program) -> Vec<PathBuf>;

/// The tools measured, each with its arguments.
const TOOLS: [(&str, &str, Args); 6] = [
    ("ir-as", env!("CARGO_BIN_EXE_ir-as"), |p| {
        vec![p.main_ir.clone(), "-o".into(), "/dev/null".into()]
    }),
    ("ir-dis", env!("CARGO_BIN_EXE_ir-dis"), |p| {
        vec![p.lib_irm.clone(), "-o".into(), "/dev/null".into()]
    }),
    ("ir-fmt", env!("CARGO_BIN_EXE_ir-fmt"), |p| {
        vec![p.main_ir.clone()]
    }),
    ("ir-info", env!("CARGO_BIN_EXE_ir-info"), |p| {
        vec![p.lib_irm.clone()]
    }),
    ("ir-verify", env!("CARGO_BIN_EXE_ir-verify"), |p| {
        vec![p.lib_irm.clone(), p.main_ir.clone()]
    }),
    ("ir-link --emit irm", env!("CARGO_BIN_EXE_ir-link"), |p| {
        vec![
            p.lib_irm.clone(),
            p.main_irm.clone(),
            "--emit".into(),
            "irm".into(),
            "-o".into(),
            p.linked.clone(),
        ]
    }),
];

/// The least CPU time (seconds) and the largest peak RSS (KiB) of `runs` runs.
fn measure(tool: &str, path: &str, args: &[PathBuf], runs: usize) -> (f64, f64) {
    let (mut cpu, mut rss) = (f64::INFINITY, 0.0f64);
    for _ in 0..runs {
        let r = run(Command::new(path).args(args)).expect("the tool runs");
        assert!(r.success, "{tool} {args:?}: {}", r.stderr);
        cpu = cpu.min(r.cpu.unwrap_or(r.wall).as_secs_f64());
        rss = rss.max(r.rss_kb.unwrap_or(0) as f64);
    }
    (cpu, rss)
}

#[test]
fn every_tool_grows_at_most_n_log_n_with_its_input() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tools-scale");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let (small, large) = (10 * N, 100 * N);
    let (ps, pl) = (program(&dir, small), program(&dir, large));
    for (tool, path, args) in TOOLS {
        let (cpu_s, rss_s) = measure(tool, path, &args(&ps), 2);
        let (cpu_l, rss_l) = measure(tool, path, &args(&pl), 1);
        // CPU time below 10 ms is not resolved well enough to make a ratio of.
        assert_grows_at_most_n_log_n(
            &format!("{tool}: CPU seconds"),
            (small, large),
            (cpu_s, cpu_l),
            0.01,
        );
        assert_grows_at_most_n_log_n(
            &format!("{tool}: peak KiB"),
            (small, large),
            (rss_s, rss_l),
            1.0,
        );
    }
    // The linked program is the whole program: it verifies.
    let r = run(Command::new(env!("CARGO_BIN_EXE_ir-verify")).arg(&pl.linked)).expect("runs");
    assert!(r.success, "the linked program: {}", r.stderr);
}
