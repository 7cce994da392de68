//! Throughput figures for the binary format (a plain bench binary: `cargo bench -p
//! irkit-format`; `IRKIT_BENCH_MB=1,100` picks the module sizes, default both).
//!
//! For each size: write throughput, open alone, open + `find_export` (header, directory and
//! O(log n) symbol-index records: should be flat from 1 MB to 100 MB), validated access of one
//! definition, full validation throughput, materialize throughput, bytes per instruction. The
//! last line compares the open + find_export figures of the sizes run.

use std::time::{Duration, Instant};

use irkit_core::{Builder, Inst, Module, Opcode};
use irkit_format::{ModuleView, write, write_to_path};

/// A flat module: `funcs` exported functions of `body` arithmetic instructions each, the
/// first block's value threaded through, every function calling the previous one.
fn build(funcs: usize, body: usize) -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i64t = b.module().ty_i64();
    let sig = b.module().ty_fn(i64t, &[i64t]).unwrap();
    let mut prev: Option<Inst> = None;
    for k in 0..funcs {
        let f = b.func(&format!("fn_{k}"), sig).unwrap();
        b.export(f, &format!("fn_{k}")).unwrap();
        let (entry, p) = b.block(f, &[i64t]).unwrap();
        b.position_at_end(entry);
        let mut v = p[0];
        for j in 0..body {
            let c = b.module().const_i64((j % 251) as i64);
            let op = [Opcode::IADD, Opcode::IMUL, Opcode::XOR, Opcode::ISUB][j % 4];
            v = b.binary(op, v, c).unwrap();
        }
        if let Some(g) = prev {
            v = b.call(g, &[v]).unwrap();
        }
        b.ret(Some(v)).unwrap();
        prev = Some(f);
    }
    m
}

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        out = Some(v);
    }
    (best, out.expect("runs > 0"))
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// Returns (module size in MB, open + find_export time).
fn run(target_mb: f64) -> (f64, Duration) {
    const BODY: usize = 100;
    // Calibrate bytes per function on a small module.
    let probe = write(&build(50, BODY)).unwrap().len() as f64 / 50.0;
    let funcs = ((target_mb * 1e6) / probe).ceil().max(1.0) as usize;
    let t = Instant::now();
    let m = build(funcs, BODY);
    let build_time = t.elapsed();
    let insts = m.live_count();
    let runs = if target_mb > 10.0 { 2 } else { 10 };
    let (wt, bytes) = best(runs, || write(&m).unwrap());
    let dir = std::env::temp_dir().join(format!("irkit-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.irm");
    write_to_path(&m, &path).unwrap();
    println!(
        "== {:.1} MB module: {funcs} functions, {insts} instructions (built in {:.2?})",
        bytes.len() as f64 / 1e6,
        build_time
    );
    println!(
        "  bytes/instruction        {:.1}",
        bytes.len() as f64 / insts as f64
    );
    println!(
        "  write                    {:.2?}  ({:.1} M inst/s, {:.0} MB/s)",
        wt,
        insts as f64 / 1e6 / wt.as_secs_f64(),
        mbps(bytes.len(), wt)
    );
    let probe_name = format!("fn_{}", funcs / 2);
    let lookups = 200;
    let (open_t, _) = best(lookups, || ModuleView::open(&path).unwrap().def_count());
    println!("  open                     {open_t:.2?}");
    let (ot, _) = best(lookups, || {
        let v = ModuleView::open(&path).unwrap();
        let s = v.find_export(&probe_name).unwrap();
        s.def
    });
    println!("  open + find_export       {ot:.2?}");
    let (st, _) = best(runs, || {
        let v = ModuleView::open(&path).unwrap();
        v.symbols().len()
    });
    println!("  open + all symbols       {st:.2?}  (validates strings, symbols, pool)");
    let view = ModuleView::open(&path).unwrap();
    let def = view.find_export(&probe_name).unwrap().def;
    let t = Instant::now();
    let d = view.def(def).unwrap();
    let n = d.insts().filter(|i| i.opcode() == Opcode::IADD).count();
    let first = t.elapsed();
    let (again, _) = best(1000, || view.def(def).unwrap().len());
    println!(
        "  one definition: first (validated) access {first:.2?}, cached access {again:.2?} ({n} iadd)"
    );
    let (vt, _) = best(runs, || {
        let v = ModuleView::open(&path).unwrap();
        v.validate_all().unwrap();
    });
    println!(
        "  full validation          {vt:.2?}  ({:.0} MB/s, content hashes recomputed)",
        mbps(bytes.len(), vt)
    );
    let (mt, back) = best(runs.min(3), || {
        ModuleView::open(&path).unwrap().materialize().unwrap()
    });
    println!(
        "  materialize              {mt:.2?}  ({:.1} M inst/s, {:.0} MB/s)",
        insts as f64 / 1e6 / mt.as_secs_f64(),
        mbps(bytes.len(), mt)
    );
    assert_eq!(back.live_count(), insts);
    std::fs::remove_dir_all(&dir).unwrap();
    (bytes.len() as f64 / 1e6, ot)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would pass test filters.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let sizes = std::env::var("IRKIT_BENCH_MB").unwrap_or_else(|_| "1,100".into());
    let mut figures = Vec::new();
    for s in sizes.split(',') {
        match s.trim().parse::<f64>() {
            Ok(mb) if mb > 0.0 => figures.push(run(mb)),
            _ => eprintln!("IRKIT_BENCH_MB: cannot parse `{s}`"),
        }
    }
    if let (Some(&(small_mb, small)), Some(&(big_mb, big))) = (figures.first(), figures.last())
        && figures.len() > 1
    {
        println!(
            "== open + find_export: {small:.2?} at {small_mb:.1} MB, {big:.2?} at {big_mb:.1} MB \
             (ratio {:.2}; flat means about 1)",
            big.as_secs_f64() / small.as_secs_f64()
        );
    }
}
