//! The lowering is exact: every hand-written proc (the runnable NOIR cases, the fibonacci
//! example) gives, lowered and run by the interpreter's block-form path, what the interpreter's
//! evaluator gives on the proc itself; and the lowered module verifies and has no proc left.

use std::path::{Path, PathBuf};

use irkit_core::{Module, Opcode};
use irkit_interp::{Interpreter, ProcResult, TrapKind, Value, eval_proc};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn parse(path: &Path) -> Module {
    let text = std::fs::read_to_string(path).unwrap();
    let m = irkit_text::parse(&text, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
    irkit_core::verify::verify(&m).unwrap();
    m
}

/// Lowers every proc of `m`, checks the result verifies and has no proc.
fn lowered(m: &Module) -> (Module, Vec<irkit_noir::ProcLowering>) {
    let mut l = m.clone();
    let stats = irkit_noir::lower_procs(&mut l).unwrap();
    if let Err(es) = irkit_core::verify::verify(&l) {
        let es: Vec<String> = es.iter().map(|e| e.to_string()).collect();
        panic!(
            "lowered module does not verify:\n{}\n{es:#?}",
            irkit_text::print(&l)
        );
    }
    assert!(!irkit_noir::has_procs(&l));
    assert!(l.walk().iter().all(|&i| {
        let op = l.opcode(i);
        !irkit_core::noir::is_noir_op(op)
            && !matches!(op, Opcode::RESULT | Opcode::WHEN | Opcode::UNLESS)
    }));
    (l, stats)
}

/// `main`'s outcome: its exit code, or the trap's kind.
fn outcome(m: &Module) -> Result<i32, String> {
    let mut it = Interpreter::new(m).unwrap().with_fuel(50_000_000);
    it.run_main().map_err(|t| t.kind.to_string())
}

fn noir_programs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/run"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("noir_")
        })
        .collect();
    v.sort();
    v.push(repo().join("examples/noir_fib.ir"));
    v
}

#[test]
fn runnable_noir_programs_behave_alike_evaluated_and_lowered() {
    let files = noir_programs();
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let m = parse(&f);
        let (l, _) = lowered(&m);
        assert_eq!(outcome(&m), outcome(&l), "{}", f.display());
    }
}

#[test]
fn lowered_fibonacci_gives_fib_0_to_20_and_90() {
    let m = parse(&repo().join("examples/noir_fib.ir"));
    let (l, stats) = lowered(&m);
    let fib = stats.iter().find(|s| s.name == "@fib").unwrap().func;
    let (mut a, mut b) = (0u64, 1u64);
    for n in 0..=90u64 {
        let mut it = Interpreter::new(&l).unwrap();
        let got = it.run(fib, &[Value::I64(n)]).unwrap();
        if n <= 20 || n == 90 {
            assert_eq!(got, Some(Value::I64(a)), "fib({n})");
        }
        (a, b) = (b, a.wrapping_add(b));
    }
}

#[test]
fn an_undefined_result_is_unreachable_after_lowering() {
    let m = parse(&repo().join("tests/run/noir_undefined_result.ir"));
    let half = m.find_named("half").unwrap();
    let mut fuel = u64::MAX;
    let r = eval_proc(&m, half, &[Value::I32(7)], &mut fuel).unwrap();
    assert_eq!(r, ProcResult::Undefined);
    let (l, stats) = lowered(&m);
    let f = stats[0].func;
    let mut it = Interpreter::new(&l).unwrap();
    let t = it.run(f, &[Value::I32(7)]).unwrap_err();
    assert_eq!(t.kind, TrapKind::Unreachable);
    let mut it = Interpreter::new(&l).unwrap();
    assert_eq!(it.run(f, &[Value::I32(8)]).unwrap(), Some(Value::I32(4)));
}

#[test]
fn a_proc_that_cues_forever_loops_forever_after_lowering_too() {
    let src = "@spin: fn() -> i32 = proc() -> %c {\n  %E = event\n  %c: i32 = var i32 1\n  %E ? cue %E\n}\n";
    let m = irkit_text::parse(src, "spin.ir").unwrap();
    let (l, stats) = lowered(&m);
    let mut it = Interpreter::new(&l).unwrap().with_fuel(10_000);
    let t = it.run(stats[0].func, &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::FuelExhausted), "{t}");
}

#[test]
fn several_nexts_of_one_var_are_merged_before_lowering() {
    // Two `next`s of %acc (footnote 2): the later one in topological order wins when both
    // apply. count(n) adds 1 per iteration, but 10 on the last one.
    let src = r#"@count: fn(i32) -> i32 = proc(%n: i32) -> %acc {
  %E = event
  %k: i32 = var %n
  %acc: i32 = var i32 0
  %c: i1 = %E ? icmp ne %k, i32 0
  %go = case %c, i1 true
  %k1: i32 = %go ? isub %k, i32 1
  %a1: i32 = %go ? iadd %acc, i32 1
  %last = case %k1, i32 0
  %a10: i32 = %last ? iadd %acc, i32 10
  %go ? next %acc, %a1
  %go, %last ? next %acc, %a10
  %go ? next %k, %k1
  %go ? cue %E
}
"#;
    let m = irkit_text::parse(src, "count.ir").unwrap();
    assert!(
        irkit_core::verify::verify(&m).is_err(),
        "two nexts are invalid"
    );
    let (l, stats) = lowered(&m);
    let mut it = Interpreter::new(&l).unwrap();
    assert_eq!(
        it.run(stats[0].func, &[Value::I32(4)]).unwrap(),
        Some(Value::I32(13))
    );
}

/// The figure for the note: instructions of each proc and of its lowering.
#[test]
fn lowered_sizes() {
    for f in noir_programs() {
        let m = parse(&f);
        let (_, stats) = lowered(&m);
        for s in stats {
            println!(
                "{:<28} {:<12} proc {:>3} insts, lowered {:>3} ({:.2}x)",
                f.file_name().unwrap().to_string_lossy(),
                s.name,
                s.proc_insts,
                s.func_insts,
                s.func_insts as f64 / s.proc_insts.max(1) as f64
            );
        }
    }
}
