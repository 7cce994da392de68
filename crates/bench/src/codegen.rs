//! The native code generation benchmark (`irkit-bench codegen`): the 100 %-reach program
//! compiled to an object file by `ir-link` (one thread, every core, `--codegen fast`) and by
//! `llc` (`-O0`, `-O2`) from the same program's bitcode, and built into an executable with a
//! code cache, cold and after a one-function edit. Prints the figures and their ratios in one table.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::workload::{self, Shape};
use crate::{Measure, files, measure, ratio, row};

/// The benchmark's inputs.
pub(crate) struct Codegen {
    pub(crate) ir_link: PathBuf,
    pub(crate) llc: PathBuf,
    pub(crate) llvm_link: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) shape: Shape,
    pub(crate) runs: usize,
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Runs the benchmark.
pub(crate) fn run(b: &Codegen) -> Result<(), String> {
    let dir = b.dir.join("codegen");
    let g = workload::generate(&b.shape, &dir, false)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "workload 100%: {} modules, {} functions, {} instructions; {threads} cores",
        b.shape.modules, g.functions, g.insts
    );
    // The same program as one bitcode file for llc (not timed).
    let bc = dir.join("linked.bc");
    let mut args = files(&dir, "ll", b.shape.modules);
    args.extend(["-o".into(), path(&bc)]);
    let st = Command::new(&b.llvm_link)
        .args(&args)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", b.llvm_link.display()))?;
    if !st.success() {
        return Err("llvm-link failed".into());
    }
    let irm = files(&dir, "irm", b.shape.modules);
    let obj = |extra: &[&str]| {
        let mut a = irm.clone();
        a.extend([
            "--emit".into(),
            "obj".into(),
            "-o".into(),
            path(&dir.join("x.o")),
        ]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let serial = measure(&b.ir_link, &obj(&["--jobs", "1"]), b.runs)?;
    let serial_obj = std::fs::read(dir.join("x.o")).map_err(|e| e.to_string())?;
    let parallel = measure(&b.ir_link, &obj(&[]), b.runs)?;
    let parallel_obj = std::fs::read(dir.join("x.o")).map_err(|e| e.to_string())?;
    if serial_obj != parallel_obj {
        return Err("the parallel object differs from the one-thread object".into());
    }
    let fast = measure(&b.ir_link, &obj(&["--codegen", "fast"]), b.runs)?;
    let llc = |opt: &str, runs| {
        let args: Vec<String> = vec![
            opt.into(),
            "-filetype=obj".into(),
            path(&bc),
            "-o".into(),
            path(&dir.join("llc.o")),
        ];
        measure(&b.llc, &args, runs)
    };
    let o0 = llc("-O0", b.runs)?;
    let o2 = llc("-O2", 1)?;

    // Executables with a code cache: cold (emptied before each run), then warm after an edit
    // of one function in a middle module (another constant each run).
    let cache = dir.join("cache");
    let exe = |stats: bool| {
        let mut a = irm.clone();
        a.extend([
            "--emit".into(),
            "exe".into(),
            "--cache".into(),
            path(&cache),
            "-o".into(),
            path(&dir.join("prog")),
        ]);
        if stats {
            a.push("--stats".into());
        }
        a
    };
    let mut cold: Option<Measure> = None;
    for _ in 0..b.runs {
        let _ = std::fs::remove_dir_all(&cache);
        let m = measure(&b.ir_link, &exe(false), 1)?;
        cold = Some(cold.map_or(m, |c| best(c, m)));
    }
    let cold = cold.ok_or("no run")?;
    let f = g.functions / 2;
    let (module, k) = workload::function_site(&b.shape, f).ok_or("no function to edit")?;
    let edit = |r: u32| -> Result<(), String> {
        let shape = Shape {
            edit: Some((f, (k - 1 + r) % 15 + 1)),
            ..b.shape.clone()
        };
        workload::rewrite_module(&shape, &dir, module)
    };
    let mut warm: Option<Measure> = None;
    for r in 1..=b.runs as u32 {
        edit(r)?;
        let m = measure(&b.ir_link, &exe(false), 1)?;
        warm = Some(warm.map_or(m, |c| best(c, m)));
    }
    let warm = warm.ok_or("no run")?;
    // One more edit, to show what a warm build recompiles (not timed).
    edit(b.runs as u32 + 1)?;
    let out = Command::new(&b.ir_link)
        .args(exe(true))
        .output()
        .map_err(|e| e.to_string())?;
    let stats = String::from_utf8_lossy(&out.stderr);
    let compiled = stats
        .lines()
        .find(|l| l.starts_with("functions compiled:"))
        .unwrap_or("functions compiled: ?")
        .to_string();
    workload::rewrite_module(&b.shape, &dir, module)?;

    println!();
    println!("{:<44} {:>13} {:>12}", "", "wall (best)", "peak RSS");
    row("ir-link --emit obj --jobs 1", &serial);
    row(
        &format!("ir-link --emit obj ({threads} threads)"),
        &parallel,
    );
    row(
        &format!("ir-link --emit obj --codegen fast ({threads} thr.)"),
        &fast,
    );
    row("llc -O0 -filetype=obj (linked .bc)", &o0);
    row("llc -O2 -filetype=obj (linked .bc, 1 run)", &o2);
    row("ir-link --emit exe --cache, cold", &cold);
    row("ir-link --emit exe --cache, one edit, warm", &warm);
    println!("  warm one-edit build: {}", compiled.trim());
    println!();
    println!(
        "obj, every core / one thread:      {}",
        ratio(&parallel, &serial)
    );
    println!("obj, one thread / llc -O0:         {}", ratio(&serial, &o0));
    println!(
        "obj, every core / llc -O0:         {}",
        ratio(&parallel, &o0)
    );
    println!(
        "obj, every core / llc -O2:         {}",
        ratio(&parallel, &o2)
    );
    println!("obj fast, every core / llc -O0:    {}", ratio(&fast, &o0));
    println!("exe, warm one-edit / cold:         {}", ratio(&warm, &cold));
    Ok(())
}

fn best(a: Measure, b: Measure) -> Measure {
    Measure {
        wall: a.wall.min(b.wall),
        rss_kb: a.rss_kb.max(b.rss_kb),
    }
}
