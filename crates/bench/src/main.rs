//! `irkit-bench`: the linker's workload generator and benchmark driver.
//!
//! * `irkit-bench gen --modules N --functions M --insts K --reach FRACTION --out DIR
//!   [--seed S] [--text]` writes the program as `.irm` (and `.ir`) and `.ll` files (see
//!   the `workload` module).
//! * `irkit-bench bench --ir-link PATH [--dir DIR] [--modules 50 --functions 200 --insts 100]
//!   [--runs 3]` generates the same-sized program at 1 % and at 100 % reachability, links each
//!   with `ir-link` and with `llvm-link --only-needed` (on the `.ll` files and on bitcode made
//!   from them by `llvm-as`), measuring wall time and peak RSS (of the command alone: `run`), and prints
//!   the figures and their ratios. `crates/bench/run.sh` builds and runs it.
//! * `irkit-bench codegen --ir-link PATH [--dir DIR] [--modules 50 --functions 200 --insts 100]
//!   [--runs 3]` generates the program at 100 % reachability and measures native code
//!   generation: `ir-link --emit obj` on one thread and on every core against `llc -O0` and
//!   `llc -O2` on the same program's bitcode (`llvm-link` of the `.ll` files, not timed), and
//!   `ir-link --emit exe --cache DIR` cold (an empty cache) and warm after editing one
//!   function of one module (each run another edit, so each recompiles that function).
//! * `irkit-bench generics --ir-link PATH [--types 1000] [--elements 1000000] [--runs 3]`
//!   measures the generics policies: link time and object size of a generic used at many
//!   types, and a generic sort's run time cloned and shared (see the `generics` module).

mod codegen;
mod generics;
mod workload;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use clap::{Parser, Subcommand};

/// The linker workload generator and benchmark.
#[derive(Parser)]
#[command(name = "irkit-bench", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The generated program's size.
#[derive(clap::Args, Clone, Copy)]
struct Size {
    /// Number of modules (m0 holds only `main`).
    #[arg(long, default_value_t = 50)]
    modules: usize,
    /// Functions per module.
    #[arg(long, default_value_t = 200)]
    functions: usize,
    /// Instructions per function.
    #[arg(long, default_value_t = 100)]
    insts: usize,
}

impl Size {
    /// The workload of this size with `reach` of its functions reachable.
    fn shape(self, reach: f64, seed: u64) -> workload::Shape {
        workload::Shape {
            modules: self.modules,
            functions: self.functions,
            insts: self.insts,
            reach,
            seed,
            edit: None,
        }
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate a workload.
    Gen {
        #[command(flatten)]
        size: Size,
        /// Fraction of the functions reachable from `main`.
        #[arg(long, default_value_t = 0.01)]
        reach: f64,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write `.ir` text.
        #[arg(long)]
        text: bool,
    },
    /// Generate at 1 % and 100 % reach and compare ir-link with llvm-link.
    Bench {
        /// The `ir-link` binary (a release build).
        #[arg(long)]
        ir_link: PathBuf,
        /// The `llvm-link` binary.
        #[arg(long, default_value = "llvm-link")]
        llvm_link: PathBuf,
        /// The `llvm-as` binary (to make bitcode).
        #[arg(long, default_value = "llvm-as")]
        llvm_as: PathBuf,
        /// The `llvm-dis` binary (to count what llvm-link kept).
        #[arg(long, default_value = "llvm-dis")]
        llvm_dis: PathBuf,
        /// Work directory.
        #[arg(long, default_value = "target/irkit-bench")]
        dir: PathBuf,
        #[command(flatten)]
        size: Size,
        /// Runs per measurement (the fastest is reported).
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Generate at 100 % reach and compare ir-link's native code generation with llc, and a
    /// one-edit rebuild with a warm code cache with a cold build.
    Codegen {
        /// The `ir-link` binary (a release build).
        #[arg(long)]
        ir_link: PathBuf,
        /// The `llc` binary.
        #[arg(long, default_value = "llc")]
        llc: PathBuf,
        /// The `llvm-link` binary (to make the program's bitcode).
        #[arg(long, default_value = "llvm-link")]
        llvm_link: PathBuf,
        /// Work directory.
        #[arg(long, default_value = "target/irkit-bench")]
        dir: PathBuf,
        #[command(flatten)]
        size: Size,
        /// Runs per measurement (the fastest is reported; `llc -O2` runs once).
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Link a generic used at many types under each `--generics` policy, and run a generic
    /// sort cloned and shared.
    Generics {
        /// The `ir-link` binary (a release build).
        #[arg(long)]
        ir_link: PathBuf,
        /// Work directory.
        #[arg(long, default_value = "target/irkit-bench")]
        dir: PathBuf,
        /// Distinct types the generic is used at (at most 1,554).
        #[arg(long, default_value_t = 1000)]
        types: usize,
        /// Elements sorted.
        #[arg(long, default_value_t = 1_000_000)]
        elements: u64,
        /// Runs per measurement (the fastest is reported).
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().cmd {
        Cmd::Gen {
            size,
            reach,
            out,
            seed,
            text,
        } => {
            let shape = size.shape(reach, seed);
            workload::generate(&shape, &out, text).map(|g| {
                println!(
                    "{} modules, {} functions ({} reachable), {} instructions, {} bytes of .irm in {}",
                    size.modules,
                    g.functions,
                    g.reachable,
                    g.insts,
                    g.irm_bytes,
                    out.display()
                );
            })
        }
        Cmd::Bench {
            ir_link,
            llvm_link,
            llvm_as,
            llvm_dis,
            dir,
            size,
            runs,
        } => bench(&Bench {
            ir_link,
            llvm_link,
            llvm_as,
            llvm_dis,
            dir,
            size,
            runs: runs.max(1),
        }),
        Cmd::Codegen {
            ir_link,
            llc,
            llvm_link,
            dir,
            size,
            runs,
        } => codegen::run(&codegen::Codegen {
            ir_link,
            llc,
            llvm_link,
            dir,
            shape: size.shape(1.0, 1),
            runs: runs.max(1),
        }),
        Cmd::Generics {
            ir_link,
            dir,
            types,
            elements,
            runs,
        } => generics::run(&generics::Generics {
            ir_link,
            dir,
            types,
            elements,
            runs: runs.max(1),
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Bench {
    ir_link: PathBuf,
    llvm_link: PathBuf,
    llvm_as: PathBuf,
    llvm_dis: PathBuf,
    dir: PathBuf,
    size: Size,
    runs: usize,
}

/// One measurement: the fastest wall time and the largest peak RSS over the runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Measure {
    pub(crate) wall: Duration,
    pub(crate) rss_kb: Option<u64>,
}

pub(crate) fn files(dir: &Path, ext: &str, modules: usize) -> Vec<String> {
    (0..modules)
        .map(|m| dir.join(format!("m{m}.{ext}")).display().to_string())
        .collect()
}

/// Runs `cmd args` `runs` times: the fastest wall time, the largest peak RSS
/// ([`irkit_testkit::run`]).
pub(crate) fn measure(cmd: &Path, args: &[String], runs: usize) -> Result<Measure, String> {
    measure_with(cmd, args, runs, &[])
}

/// [`measure`] with environment variables `env` set.
pub(crate) fn measure_with(
    cmd: &Path,
    args: &[String],
    runs: usize,
    env: &[(&str, &str)],
) -> Result<Measure, String> {
    let mut best: Option<Measure> = None;
    for _ in 0..runs {
        let r = irkit_testkit::run(
            std::process::Command::new(cmd)
                .args(args)
                .envs(env.iter().copied()),
        )?;
        if !r.success {
            return Err(format!("{} failed:\n{}", cmd.display(), r.stderr));
        }
        let m = Measure {
            wall: r.wall,
            rss_kb: r.rss_kb,
        };
        best = Some(match best {
            None => m,
            Some(b) => Measure {
                wall: b.wall.min(m.wall),
                rss_kb: b.rss_kb.max(m.rss_kb),
            },
        });
    }
    best.ok_or_else(|| "no run".into())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub(crate) fn row(name: &str, m: &Measure) {
    let rss = m
        .rss_kb
        .map(|k| format!("{:>9.1} MB", k as f64 / 1024.0))
        .unwrap_or_else(|| "        n/a".into());
    println!("{name:<44} {:>10.1} ms {rss}", ms(m.wall));
}

pub(crate) fn ratio(a: &Measure, b: &Measure) -> String {
    let t = a.wall.as_secs_f64() / b.wall.as_secs_f64().max(1e-9);
    let r = match (a.rss_kb, b.rss_kb) {
        (Some(x), Some(y)) if y > 0 => format!("{:.3}", x as f64 / y as f64),
        _ => "n/a".into(),
    };
    format!("time {t:.3}, peak RSS {r}")
}

fn bench(b: &Bench) -> Result<(), String> {
    let mut results = Vec::new();
    for (tag, reach) in [("1%", 0.01), ("100%", 1.0)] {
        let dir = b.dir.join(format!("reach-{}", (reach * 100.0) as u32));
        let shape = b.size.shape(reach, 1);
        let g = workload::generate(&shape, &dir, false)?;
        println!(
            "workload {tag}: {} modules, {} functions, {} reachable, {} instructions, {:.1} MB of .irm",
            b.size.modules,
            g.functions,
            g.reachable,
            g.insts,
            g.irm_bytes as f64 / 1e6
        );
        // Bitcode for llvm-link's lazy loading (not timed).
        for ll in files(&dir, "ll", b.size.modules) {
            let bc = ll.trim_end_matches(".ll").to_string() + ".bc";
            let st = Command::new(&b.llvm_as)
                .args([&ll, "-o", &bc])
                .status()
                .map_err(|e| format!("cannot run {}: {e}", b.llvm_as.display()))?;
            if !st.success() {
                return Err(format!("llvm-as failed on {ll}"));
            }
        }
        println!(
            "  {}",
            size_per_instruction(&dir, b.size.modules, g.irm_bytes, g.insts)?
        );
        let needed = g.reachable + 1;
        let mut args = files(&dir, "irm", b.size.modules);
        let out = dir.join("linked.irm");
        args.extend(["-o".into(), out.display().to_string()]);
        let ir = measure(&b.ir_link, &args, b.runs)?;
        // The same link on one thread: what the second core brings.
        let one = measure_with(&b.ir_link, &args, b.runs, &[("RAYON_NUM_THREADS", "1")])?;
        let kept = irkit_format::ModuleView::open(&out)
            .map(|v| v.def_count() as usize)
            .map_err(|e| e.to_string())?;
        println!("  ir-link kept {kept} of the {needed} needed functions");
        let mut runs = vec![
            ("ir-link".to_string(), ir),
            ("ir-link, one thread".to_string(), one),
        ];
        for (what, ext, only) in [
            ("llvm-link --only-needed .ll", "ll", true),
            ("llvm-link --only-needed .bc", "bc", true),
            ("llvm-link (full) .bc", "bc", false),
        ] {
            let mut args = Vec::new();
            if only {
                args.push("--only-needed".to_string());
            }
            args.extend(files(&dir, ext, b.size.modules));
            let out = dir.join(format!("linked-{ext}-{only}.bc"));
            args.extend(["-o".into(), out.display().to_string()]);
            let m = measure(&b.llvm_link, &args, b.runs)?;
            let kept = count_defines(&b.llvm_dis, &out)?;
            println!("  {what} kept {kept} of the {needed} needed functions");
            runs.push((what.to_string(), m));
        }
        results.push((tag, runs));
    }
    println!();
    println!("{:<44} {:>13} {:>12}", "", "wall (best)", "peak RSS");
    for (tag, runs) in &results {
        for (what, m) in runs {
            row(&format!("{what}, reach {tag}"), m);
        }
    }
    if let [(_, r1), (_, r100)] = results.as_slice() {
        println!();
        println!(
            "ir-link reach 1% / reach 100%:             {}",
            ratio(&r1[0].1, &r100[0].1)
        );
        println!(
            "ir-link / ir-link one thread, reach 100%:   {}",
            ratio(&r100[0].1, &r100[1].1)
        );
        for (i, (what, _)) in r1.iter().enumerate().skip(2) {
            println!(
                "ir-link / {what}, reach 1%:   {}",
                ratio(&r1[0].1, &r1[i].1)
            );
            println!(
                "ir-link / {what}, reach 100%: {}",
                ratio(&r100[0].1, &r100[i].1)
            );
        }
    }
    Ok(())
}

/// File size per instruction of the workload's inputs: the `.irm` files' and the LLVM
/// bitcode's (`.bc`, made by `llvm-as` from the same program), and their ratio (issue 17: at
/// most 2).
fn size_per_instruction(
    dir: &Path,
    modules: usize,
    irm_bytes: u64,
    insts: u64,
) -> Result<String, String> {
    let mut bc_bytes = 0u64;
    for bc in files(dir, "bc", modules) {
        bc_bytes += std::fs::metadata(&bc)
            .map_err(|e| format!("{bc}: {e}"))?
            .len();
    }
    let per = |bytes: u64| bytes as f64 / insts.max(1) as f64;
    Ok(format!(
        "bytes per instruction: .irm {:.2}, .bc {:.2}; .irm / .bc {:.3}",
        per(irm_bytes),
        per(bc_bytes),
        irm_bytes as f64 / bc_bytes.max(1) as f64
    ))
}

/// The number of function definitions in a bitcode file (via `llvm-dis`).
fn count_defines(llvm_dis: &Path, bc: &Path) -> Result<usize, String> {
    let out = Command::new(llvm_dis)
        .arg(bc)
        .args(["-o", "-"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", llvm_dis.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("define "))
        .count())
}
