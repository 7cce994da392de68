//! Figures of the native back end, measured side by side in one run (`crates/cranelift/bench.sh`
//! generates the workload, then runs `cargo bench -p irkit-cranelift`):
//!
//! * **compile throughput**: the linker's workload (`irkit-bench gen --reach 1`, in the directory
//!   `IRKIT_BENCH_WORKLOAD`) linked, then compiled to an object file and into the JIT; reported
//!   as IR instructions (function-body instructions, parameters excluded) per second;
//! * **run time**: recursive `fib(30)` by the JIT (compiled once, then run) and by the
//!   interpreter, and their ratio;
//! * **NOIR**: the fibonacci proc for n = 90 (1000 calls) by the interpreter's evaluator, by the
//!   interpreter after lowering, and lowered and compiled by the JIT; the lowered size.

use std::path::PathBuf;
use std::time::Instant;

use irkit_core::{Module, Opcode};

const FIB: &str = "@fib: fn(i32) -> i32 = func {
^entry(%n: i32):
  %small: i1 = icmp slt %n, i32 2
  br %small, ^base, ^rec
^base:
  ret %n
^rec:
  %a: i32 = isub %n, i32 1
  %fa: i32 = call @fib(%a)
  %b: i32 = isub %n, i32 2
  %fb: i32 = call @fib(%b)
  %s: i32 = iadd %fa, %fb
  ret %s
}

#[export(\"main\")]
@main: fn() -> i32 = func {
^entry:
  %r: i32 = call @fib(i32 30)
  ret %r
}
";

/// Instructions in function bodies (block children that are not parameters).
fn body_insts(m: &Module) -> usize {
    let mut n = 0;
    for &d in m.top_level() {
        if m.opcode(d) != Opcode::FUNC {
            continue;
        }
        for b in m.blocks(d) {
            n += m.children(b).len() - m.block_params(b).len();
        }
    }
    n
}

fn compile_throughput() {
    let Some(dir) = std::env::var_os("IRKIT_BENCH_WORKLOAD").map(PathBuf::from) else {
        println!(
            "compile: skipped (set IRKIT_BENCH_WORKLOAD to a directory made by \
             `irkit-bench gen --reach 1 --out DIR`, or run crates/cranelift/bench.sh)"
        );
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("workload directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "irm"))
        .collect();
    files.sort();
    let t = Instant::now();
    let linked = irkit_link::link_files(&files, &irkit_link::LinkOptions::default())
        .unwrap_or_else(|e| panic!("the workload links: {e:?}"));
    let link = t.elapsed();
    let m = linked.module;
    let insts = body_insts(&m);
    let funcs = m
        .top_level()
        .iter()
        .filter(|&&d| m.opcode(d) == Opcode::FUNC)
        .count();
    println!(
        "workload: {} files, linked: {funcs} functions, {insts} instructions (link {:.3} s)",
        files.len(),
        link.as_secs_f64()
    );
    let t = Instant::now();
    let obj = irkit_cranelift::emit_object(&m).expect("the workload compiles");
    let dt = t.elapsed().as_secs_f64();
    println!(
        "compile to object: {dt:.3} s, {:.0} instructions/s, {} bytes of object",
        insts as f64 / dt,
        obj.len()
    );
    let t = Instant::now();
    let jit = irkit_cranelift::jit::compile(&m, "main").expect("the workload JIT-compiles");
    let dt = t.elapsed().as_secs_f64();
    println!(
        "compile into the JIT: {dt:.3} s, {:.0} instructions/s",
        insts as f64 / dt
    );
    drop(jit);
}

fn fib_run_time() {
    let m = irkit_text::parse(FIB, "fib.ir").expect("fib parses");
    irkit_core::verify::verify(&m).expect("fib verifies");
    let jit = irkit_cranelift::jit::compile(&m, "main").expect("fib compiles");
    let t = Instant::now();
    let r = jit.run().expect("the program runs");
    let native = t.elapsed().as_secs_f64();
    assert_eq!(r, 832_040);
    let mut it = irkit_interp::Interpreter::new(&m).expect("fib loads");
    let t = Instant::now();
    let r = it.run_main().expect("fib runs");
    let interp = t.elapsed().as_secs_f64();
    assert_eq!(r, 832_040);
    println!(
        "fib(30): JIT {:.4} s, interpreter {:.3} s, interpreter / JIT = {:.0}x",
        native,
        interp,
        interp / native
    );
}

/// NOIR's fibonacci proc (examples/noir_fib.ir) called `CALLS` times for fib(90).
const NOIR_FIB: &str = "#[export(\"fib\")]
@fib: fn(i64) -> i64 = proc(%n: i64) -> %x0 {
  %L = event
  %x0: i64 = var i64 0
  %x1: i64 = var i64 1
  %i: i64 = var %n
  %more: i1 = %L ? icmp ne %i, i64 0
  %again = case %more, i1 true
  %sum: i64 = %again ? iadd %x0, %x1
  %dec: i64 = %again ? isub %i, i64 1
  %again ? next %x0, %x1
  %again ? next %x1, %sum
  %again ? next %i, %dec
  %again ? cue %L
}

#[export(\"main\")]
@main: fn() -> i32 = func {
^entry:
  jump ^loop(i32 0, i64 0)
^loop(%k: i32, %acc: i64):
  %f: i64 = call @fib(i64 90)
  %acc1: i64 = iadd %acc, %f
  %k1: i32 = iadd %k, i32 1
  %done: i1 = icmp eq %k1, i32 1000
  br %done, ^exit, ^loop(%k1, %acc1)
^exit:
  %r: i32 = trunc %acc1
  ret %r
}
";

/// The NOIR figure: the fibonacci proc for n = 90, 1000 calls, by the interpreter's evaluator,
/// by the interpreter after lowering, and lowered and compiled by the JIT; and the size of the
/// lowered function against the proc.
fn noir_fib_run_time() {
    let m = irkit_text::parse(NOIR_FIB, "noir_fib.ir").expect("noir fib parses");
    irkit_core::verify::verify(&m).expect("noir fib verifies");
    let want = (2_880_067_194_370_816_120u64.wrapping_mul(1000)) as i32;
    let mut lowered = m.clone();
    let stats = irkit_noir::lower_procs(&mut lowered).expect("noir fib lowers");
    let jit = irkit_cranelift::jit::compile(&lowered, "main").expect("noir fib compiles");
    let t = Instant::now();
    let r = jit.run().expect("the program runs");
    let native = t.elapsed().as_secs_f64();
    assert_eq!(r, want);
    let mut it = irkit_interp::Interpreter::new(&m).expect("noir fib loads");
    let t = Instant::now();
    let r = it.run_main().expect("noir fib runs");
    let eval = t.elapsed().as_secs_f64();
    assert_eq!(r, want);
    let mut it = irkit_interp::Interpreter::new(&lowered).expect("lowered fib loads");
    let t = Instant::now();
    let r = it.run_main().expect("lowered fib runs");
    let interp_lowered = t.elapsed().as_secs_f64();
    assert_eq!(r, want);
    println!(
        "NOIR fib(90) x 1000: evaluator {:.4} s, lowered in the interpreter {:.4} s, lowered + JIT {:.6} s; evaluator / JIT = {:.0}x",
        eval,
        interp_lowered,
        native,
        eval / native
    );
    for s in stats {
        println!(
            "NOIR fib: proc {} instructions, lowered function {} ({:.2}x)",
            s.proc_insts,
            s.func_insts,
            s.func_insts as f64 / s.proc_insts as f64
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run quickly then.
    compile_throughput();
    fib_run_time();
    noir_fib_run_time();
}
