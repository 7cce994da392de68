//! The NOIR evaluator (spec/ir.md, "NOIR: procs without blocks"): procs written in the generic
//! text form, evaluated by their iteration semantics, directly ([`Interpreter::eval_proc`],
//! [`eval_proc`], whose results may be undefined) and as `main`. Every expected value is
//! computed by hand in the comment beside it. Procs called as functions (`call`,
//! `call_indirect`, an undefined result trapping) are the file case `tests/semantics/noir.ir`,
//! run on every back end.

mod common;

use common::module;
use irkit_backend::{Backend, Outcome, RunOptions};
use irkit_interp::{InterpBackend, Interpreter, ProcResult, TrapKind, Value, eval_proc};
use irkit_tests::expect::Expect;

/// The seed's iterative fibonacci, and a func calling it (not a proc: `eval_proc` refuses it).
const FIB: &str = r#"
#[export("fib")]
@fib: fn(i64) -> i64 = proc {
  %n: i64 = param
  %L = event
  %x0: i64 = var i64 0
  %x1: i64 = var i64 1
  %i: i64 = var %n
  #[when(%L)] %2: i1 = icmp ne %i, i64 0
  %3 = case %2, i1 true
  #[when(%3)] %8: i64 = iadd %x0, %x1
  #[when(%3)] %5: i64 = isub %i, i64 1
  #[when(%3)] next %x0, %x1
  #[when(%3)] next %x1, %8
  #[when(%3)] next %i, %5
  #[when(%3)] cue %L
  result %x0
}

@fib_sum: fn(i64, i64) -> i64 = func {
^entry(%a: i64, %b: i64):
  %fa: i64 = call @fib(%a)
  %fb: i64 = call @fib(%b)
  %r: i64 = iadd %fa, %fb
  ret %r
}
"#;

/// fib(k) by the usual recurrence: 0, 1, 1, 2, 3, 5, ...
fn fib_ref(k: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..k {
        (a, b) = (b, a.wrapping_add(b));
    }
    a
}

/// `proc_` of `m` with `args`, by [`Interpreter::eval_proc`].
fn eval(src: &str, proc_: &str, args: &[Value]) -> ProcResult {
    let m = module(src);
    let mut it = Interpreter::new(&m).expect("interpreter");
    it.eval_proc(proc_, args)
        .unwrap_or_else(|t| panic!("{proc_}{args:?}: {t}"))
}

fn defined(v: Value) -> ProcResult {
    ProcResult::Defined(Some(v))
}

#[test]
fn fib_of_0_to_20_and_90() {
    let m = module(FIB);
    let mut it = Interpreter::new(&m).expect("interpreter");
    // 0 1 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987 1597 2584 4181 6765
    let table = [
        0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181, 6765,
    ];
    for (n, &want) in table.iter().enumerate() {
        assert_eq!(fib_ref(n as u64), want);
        let r = it.eval_proc("fib", &[Value::I64(n as u64)]);
        assert_eq!(r, Ok(defined(Value::I64(want))), "fib({n})");
    }
    assert_eq!(
        it.eval_proc("fib", &[Value::I64(90)]),
        Ok(defined(Value::i64(2_880_067_194_370_816_120)))
    );
}

#[test]
fn fuel_is_one_unit_per_executed_instruction() {
    // Iteration 0 executes the 12 body instructions; each of the n later iterations (the
    // last one with %i = 0, cueing nothing) executes the 9 that depend on %L (all but the
    // three vars, whose inits, constants and a parameter, never change): fib(10) costs
    // 12 + 10 * 9 = 102.
    let m = module(FIB);
    let fib = m.find_export("fib").expect("fib");
    let mut fuel = 102;
    assert_eq!(
        eval_proc(&m, fib, &[Value::I64(10)], &mut fuel),
        Ok(defined(Value::I64(55)))
    );
    assert_eq!(fuel, 0);
    let mut fuel = 101;
    let t = eval_proc(&m, fib, &[Value::I64(10)], &mut fuel).unwrap_err();
    assert_eq!(t.kind, TrapKind::FuelExhausted);
    // The last instruction of the last iteration, `cue %L`, is the 12th child after %n.
    assert_eq!(
        t.to_string(),
        "trap: fuel exhausted in @fib, instruction 11 (cue)"
    );
    assert_eq!(fuel, 0);
}

/// A three-way `case` on %x: 1, 2 or 3, and the default through `unless` (all undefined).
const CLASSIFY: &str = r#"
@classify: fn(i32) -> i32 = proc {
  %x: i32 = param
  %a = case %x, i32 1
  %b = case %x, i32 2, i32 3
  #[when(%a)] %ra: i32 = iadd %x, i32 10
  #[when(%b)] %rb: i32 = imul %x, i32 100
  #[unless(%a, %b)] %rd: i32 = isub i32 0, %x
  %r: i32 = phi %ra, %rb, %rd
  result %r
}
"#;

#[test]
fn multi_way_case_with_default() {
    // x = 1: %a holds, 1 + 10 = 11. x = 2, 3: %b holds, x * 100. Otherwise neither holds and
    // the default -x is the phi's only defined operand.
    for (x, want) in [(1, 11), (2, 200), (3, 300), (0, 0), (5, -5), (-4, 4)] {
        assert_eq!(
            eval(CLASSIFY, "classify", &[Value::i32(x)]),
            defined(Value::i32(want)),
            "classify({x})"
        );
    }
}

/// Two non-exclusive conditions: %x > 0 and %x even.
const MERGE: &str = r#"
@merge: fn(i32) -> i32 = proc {
  %x: i32 = param
  %pos: i1 = icmp sgt %x, i32 0
  %low: i32 = and %x, i32 1
  %even: i1 = icmp eq %low, i32 0
  %p = case %pos, i1 true
  %e = case %even, i1 true
  #[when(%p)] %vp: i32 = iadd %x, i32 1000
  #[when(%e)] %ve: i32 = iadd %x, i32 2000
  %first: i32 = coalesce %vp, %ve, i32 -1
  result %first
}

@merge_rev: fn(i32) -> i32 = proc {
  %x: i32 = param
  %pos: i1 = icmp sgt %x, i32 0
  %low: i32 = and %x, i32 1
  %even: i1 = icmp eq %low, i32 0
  %p = case %pos, i1 true
  %e = case %even, i1 true
  #[when(%p)] %vp: i32 = iadd %x, i32 1000
  #[when(%e)] %ve: i32 = iadd %x, i32 2000
  %first: i32 = coalesce %ve, %vp
  result %first
}

@phi2: fn(i32) -> i32 = proc {
  %x: i32 = param
  %pos: i1 = icmp sgt %x, i32 0
  %low: i32 = and %x, i32 1
  %even: i1 = icmp eq %low, i32 0
  %p = case %pos, i1 true
  %e = case %even, i1 true
  #[when(%p)] %vp: i32 = iadd %x, i32 1000
  #[when(%e)] %ve: i32 = iadd %x, i32 2000
  %one: i32 = phi %vp, %ve
  result %one
}
"#;

#[test]
fn coalesce_takes_the_first_defined_operand() {
    // x = 4: both defined, the first wins: 1004 (and 2004 in the other order).
    // x = 3: only %vp: 1003. x = -2: only %ve: 1998. x = -3: neither: the constant -1, and
    // undefined without it.
    for (x, want, rev) in [
        (
            4,
            ProcResult::Defined(Some(Value::i32(1004))),
            defined(Value::i32(2004)),
        ),
        (3, defined(Value::i32(1003)), defined(Value::i32(1003))),
        (-2, defined(Value::i32(1998)), defined(Value::i32(1998))),
        (-3, defined(Value::i32(-1)), ProcResult::Undefined),
    ] {
        assert_eq!(eval(MERGE, "merge", &[Value::i32(x)]), want, "merge({x})");
        assert_eq!(
            eval(MERGE, "merge_rev", &[Value::i32(x)]),
            rev,
            "merge_rev({x})"
        );
    }
}

#[test]
fn phi_is_defined_with_exactly_one_defined_operand() {
    // One defined: x = 3 gives 1003, x = -2 gives 1998. Two (x = 4) or none (x = -3):
    // undefined.
    assert_eq!(
        eval(MERGE, "phi2", &[Value::i32(3)]),
        defined(Value::i32(1003))
    );
    assert_eq!(
        eval(MERGE, "phi2", &[Value::i32(-2)]),
        defined(Value::i32(1998))
    );
    assert_eq!(eval(MERGE, "phi2", &[Value::i32(4)]), ProcResult::Undefined);
    assert_eq!(
        eval(MERGE, "phi2", &[Value::i32(-3)]),
        ProcResult::Undefined
    );
}

/// sum over 0 <= j < i < n of j, with an outer loop on %O and an inner loop on %I. The inner
/// counter %j is re-initialized by every outer iteration (its init %j0 depends on %O).
const NESTED: &str = r#"
@nested: fn(i32) -> i32 = proc {
  %n: i32 = param
  %O = event
  %I = event
  %i: i32 = var i32 0
  %acc: i32 = var i32 0
  #[when(%O)] %oc: i1 = icmp slt %i, %n
  %ok = case %oc, i1 true
  #[when(%ok)] %i1: i32 = iadd %i, i32 1
  #[when(%ok)] %j0: i32 = and %i, i32 0
  %j: i32 = var %j0
  #[when(%I)] %ic: i1 = icmp slt %j, %i
  %ik = case %ic, i1 true
  #[when(%ik)] %acc1: i32 = iadd %acc, %j
  #[when(%ik)] %j1: i32 = iadd %j, i32 1
  #[when(%ik)] next %acc, %acc1
  #[when(%ik)] next %j, %j1
  #[when(%ik)] cue %I
  #[when(%ok), unless(%ik)] next %i, %i1
  #[when(%ok), unless(%ik)] cue %O
  result %acc
}
"#;

#[test]
fn nested_loops_on_two_events() {
    // sum_{i<n} sum_{j<i} j = sum_{i<n} i(i-1)/2 = C(n, 3). By hand for n = 5:
    // i = 2: 0 + 1 = 1; i = 3: 0 + 1 + 2 = 3; i = 4: 0 + 1 + 2 + 3 = 6; total 10.
    let hand = [
        (0, 0),
        (1, 0),
        (2, 0),
        (3, 1),
        (4, 4),
        (5, 10),
        (6, 20),
        (10, 120),
    ];
    for (n, want) in hand {
        assert_eq!(
            eval(NESTED, "nested", &[Value::i32(n)]),
            defined(Value::i32(want)),
            "nested({n})"
        );
    }
}

/// %v's init %base is updated by every iteration, so %v takes it again, overriding the
/// pending `next %v, %v1` (the seed's footnote 1).
const REINIT: &str = r#"
@total: fn(i32) -> i32 = proc {
  %n: i32 = param
  %E = event
  %k: i32 = var %n
  #[when(%E)] %c: i1 = icmp ne %k, i32 0
  %go = case %c, i1 true
  #[when(%go)] %base: i32 = imul %k, i32 10
  %v: i32 = var %base
  #[when(%go)] %v1: i32 = iadd %v, i32 1
  #[when(%go)] next %v, %v1
  %total: i32 = var i32 0
  #[when(%go)] %t1: i32 = iadd %total, %v
  #[when(%go)] next %total, %t1
  #[when(%go)] %k1: i32 = isub %k, i32 1
  #[when(%go)] next %k, %k1
  #[when(%go)] cue %E
  result %total
}
"#;

#[test]
fn var_is_reinitialized_by_an_updated_init() {
    // total(4) = 40 + 30 + 20 + 10 = 100 (it would be 40 + 41 + 42 + 43 = 166 if %v kept
    // counting, or 104 if the pending `next %v` won over %base); total(0) = 0;
    // total(1) = 10.
    for (n, want) in [(4, 100), (0, 0), (1, 10), (3, 60)] {
        assert_eq!(
            eval(REINIT, "total", &[Value::i32(n)]),
            defined(Value::i32(want)),
            "total({n})"
        );
    }
}

const DIVISION: &str = r#"
@safe_div: fn(i32, i32) -> i32 = proc {
  %a: i32 = param
  %b: i32 = param
  %nz: i1 = icmp ne %b, i32 0
  %ok = case %nz, i1 true
  #[when(%ok)] %q: i32 = sdiv %a, %b
  #[unless(%ok)] %z: i32 = iadd i32 0, i32 -1
  %r: i32 = phi %q, %z
  result %r
}

@strict: fn(i32) -> i32 = proc {
  %a: i32 = param
  %nz: i1 = icmp ne %a, i32 0
  %ok = case %nz, i1 true
  #[unless(%ok)] %zero: i32 = iadd %a, i32 0
  %q: i32 = sdiv i32 100, %zero
  %r: i32 = coalesce %q, %a
  result %r
}

@div: fn(i32, i32) -> i32 = proc {
  %a: i32 = param
  %b: i32 = param
  %q: i32 = sdiv %a, %b
  result %q
}
"#;

#[test]
fn division_traps_only_on_the_executed_path() {
    // 7 / 2 = 3; 7 / 0 takes the default -1 and the division never executes.
    assert_eq!(
        eval(DIVISION, "safe_div", &[Value::i32(7), Value::i32(2)]),
        defined(Value::i32(3))
    );
    assert_eq!(
        eval(DIVISION, "safe_div", &[Value::i32(7), Value::i32(0)]),
        defined(Value::i32(-1))
    );
    // The guarded division still traps on MIN / -1, which it executes.
    let m = module(DIVISION);
    let mut it = Interpreter::new(&m).expect("interpreter");
    let t = it
        .eval_proc("safe_div", &[Value::i32(i32::MIN), Value::i32(-1)])
        .unwrap_err();
    assert_eq!(t.kind, TrapKind::IntegerOverflow);
    assert_eq!(
        t.to_string(),
        "trap: integer overflow (MIN / -1) in @safe_div, instruction 2 (sdiv %q)"
    );
    // A division reading an undefined divisor is undefined, not a trap: strict(5) = 5 (the
    // coalesce's fallback). strict(0) defines the divisor as 0 and divides: it traps.
    assert_eq!(
        eval(DIVISION, "strict", &[Value::i32(5)]),
        defined(Value::i32(5))
    );
    let t = it.eval_proc("strict", &[Value::i32(0)]).unwrap_err();
    assert_eq!(t.kind, TrapKind::DivisionByZero);
    assert_eq!(
        t.to_string(),
        "trap: integer division by zero in @strict, instruction 3 (sdiv %q)"
    );
    // Unguarded: 1 / 0 traps.
    let t = it
        .eval_proc("div", &[Value::i32(1), Value::i32(0)])
        .unwrap_err();
    assert_eq!(
        t.to_string(),
        "trap: integer division by zero in @div, instruction 0 (sdiv %q)"
    );
}

const SPIN: &str = r#"
@spin: fn() -> i32 = proc {
  %L = event
  %x: i32 = var i32 0
  #[when(%L)] %x1: i32 = iadd %x, i32 1
  next %x, %x1
  cue %L
  result %x
}

#[export("main")]
@main: fn() -> i32 = func {
^entry:
  %r: i32 = call @spin()
  ret %r
}
"#;

#[test]
fn fuel_stops_a_proc_that_cues_forever() {
    // Iteration 0 executes %L, %x, %x1, next, cue (5 units); every later one %L, %x1, next,
    // cue (4). With 1000 units: 5 + 248 * 4 = 997, so iteration 249 runs out at its fourth
    // instruction, `cue %L` (child 4).
    let m = module(SPIN);
    let mut it = Interpreter::new(&m).expect("interpreter").with_fuel(1000);
    let t = it.eval_proc("spin", &[]).unwrap_err();
    assert_eq!(t.kind, TrapKind::FuelExhausted);
    assert_eq!(
        t.to_string(),
        "trap: fuel exhausted in @spin, instruction 4 (cue)"
    );
    assert_eq!(it.fuel(), Some(0));
    // Called from main, the trap is the proc's too (the call took one unit first, so the
    // proc runs out one instruction earlier: at `next`, child 3).
    let mut it = Interpreter::new(&m).expect("interpreter").with_fuel(1000);
    let t = it.run_main().unwrap_err();
    assert_eq!(
        t.to_string(),
        "trap: fuel exhausted in @spin, instruction 3 (next)"
    );
}

const MAIN_PROC: &str = r#"
#[export("main")]
@main: fn() -> i32 = proc {
  %a: i32 = iadd i32 40, i32 2
  result %a
}
"#;

#[test]
fn main_may_be_a_proc() {
    let m = module(MAIN_PROC);
    let mut it = Interpreter::new(&m).expect("interpreter");
    assert_eq!(it.run_main(), Ok(42));
    let out = InterpBackend.run(&m, &RunOptions::default()).expect("runs");
    assert_eq!(out, Outcome::Exited(42));
}

const VOID_PROC: &str = r#"
@nothing: fn(i32) -> void = proc {
  %x: i32 = param
  %y: i32 = iadd %x, i32 1
  result
}
"#;

#[test]
fn void_proc_returns_when_it_ends() {
    let m = module(VOID_PROC);
    let mut it = Interpreter::new(&m).expect("interpreter");
    assert_eq!(
        it.eval_proc("nothing", &[Value::i32(1)]),
        Ok(ProcResult::Defined(None))
    );
}

#[test]
fn eval_proc_checks_its_callee_and_arguments() {
    let m = module(FIB);
    let mut it = Interpreter::new(&m).expect("interpreter");
    let t = it.eval_proc("fib_sum", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::BadCall(_)), "{t}");
    let t = it.eval_proc("fib", &[Value::i32(1)]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::BadCall(_)), "{t}");
}

#[test]
fn runnable_noir_cases_give_their_expected_outcome() {
    // tests/run/noir_*.ir: each states its exit code or trap (`irkit_tests::expect`).
    let dir = format!("{}/../../tests/run", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("noir_") && n.ends_with(".ir"))
        })
        .collect();
    entries.sort();
    for path in entries {
        let src = std::fs::read_to_string(&path).expect("readable");
        assert!(Expect::stated(&src), "{}: no expectation", path.display());
        let expect = Expect::parse(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let m = module(&src);
        let mut it = Interpreter::new(&m).expect("interpreter");
        let got = it.run_main();
        match &expect.trap {
            None => {
                let code = expect.exit_code();
                assert_eq!(got.map(|c| c & 0xff), Ok(code), "{}", path.display());
            }
            Some(kind) => {
                let t = got.expect_err("traps");
                assert_eq!(&t.kind.to_string(), kind, "{}", path.display());
            }
        }
        seen += 1;
    }
    assert!(seen >= 6, "only {seen} cases");
}
