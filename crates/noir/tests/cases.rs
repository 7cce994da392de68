//! Hand-written procs, in the generic text form (`param` children, `#[when]`/`#[unless]`
//! decorations, `result`), one per NOIR feature: each is lowered, the lowered module verifies
//! and has no proc left, and the lowered function gives, for every argument tried, what the
//! interpreter's NOIR evaluator gives on the proc (the same value, or an undefined result where
//! the function traps "unreachable executed", or the same trap kind).

use irkit_core::{Inst, Module, Opcode};
use irkit_interp::{Interpreter, ProcResult, TrapKind, Value, eval_proc};
use proptest::prelude::*;

/// The seed's fibonacci, written exactly as in the task (generic form).
const FIB: &str = r#"#[export("fib")]
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
"#;

/// A multi-way `case` with a default branch through `unless` (all cases undefined), merged by
/// `phi`: classify(1) = 11, classify(2 or 3) = 100 x, otherwise -x.
const CLASSIFY: &str = r#"#[export("classify")]
@classify: fn(i32) -> i32 = proc {
  %x: i32 = param
  %one = case %x, i32 1
  %two = case %x, i32 2, i32 3
  #[when(%one)] %a: i32 = iadd %x, i32 10
  #[when(%two)] %b: i32 = imul %x, i32 100
  #[unless(%one, %two)] %d: i32 = isub i32 0, %x
  %r: i32 = phi %a, %b, %d
  result %r
}
"#;

/// Branches that are not exclusive: `coalesce` takes the first defined one; `phi` of two
/// defined operands is undefined (then the outer `coalesce` falls back to 7).
const MERGES: &str = r#"#[export("first")]
@first: fn(i32) -> i32 = proc {
  %x: i32 = param
  %big: i1 = icmp sgt %x, i32 10
  %low: i32 = and %x, i32 1
  %isbig = case %big, i1 true
  %iseven = case %low, i32 0
  #[when(%isbig)] %a: i32 = iadd %x, i32 1000
  #[when(%iseven)] %b: i32 = iadd %x, i32 500
  %r: i32 = coalesce %a, %b, %x
  result %r
}

#[export("only")]
@only: fn(i32) -> i32 = proc {
  %x: i32 = param
  %big: i1 = icmp sgt %x, i32 10
  %low: i32 = and %x, i32 1
  %isbig = case %big, i1 true
  %iseven = case %low, i32 0
  #[when(%isbig)] %a: i32 = iadd %x, i32 1000
  #[when(%iseven)] %b: i32 = iadd %x, i32 500
  %p: i32 = phi %a, %b
  %r: i32 = coalesce %p, i32 7
  result %r
}

#[export("strict")]
@strict: fn(i32) -> i32 = proc {
  %x: i32 = param
  %big: i1 = icmp sgt %x, i32 10
  %low: i32 = and %x, i32 1
  %isbig = case %big, i1 true
  %iseven = case %low, i32 0
  #[when(%isbig)] %a: i32 = iadd %x, i32 1000
  #[when(%iseven)] %b: i32 = iadd %x, i32 500
  %p: i32 = phi %a, %b
  result %p
}
"#;

/// Two nested loops on two events; the inner counter's `%init` depends on the outer loop, so
/// each outer iteration re-initializes it. tri(n) = sum of i * j over 0 <= j < i < n.
const NESTED: &str = r#"#[export("tri")]
@tri: fn(i32) -> i32 = proc {
  %n: i32 = param
  %O = event
  %I = event
  %i: i32 = var i32 0
  %acc: i32 = var i32 0
  #[when(%O)] %oc: i1 = icmp slt %i, %n
  %ok = case %oc, i1 true
  #[when(%ok)] %i1: i32 = iadd %i, i32 1
  #[when(%ok)] %j0: i32 = isub %i, %i
  %j: i32 = var %j0
  #[when(%I)] %ic: i1 = icmp slt %j, %i
  %ik = case %ic, i1 true
  #[when(%ik)] %prod: i32 = imul %i, %j
  #[when(%ik)] %acc1: i32 = iadd %acc, %prod
  #[when(%ik)] %j1: i32 = iadd %j, i32 1
  #[when(%ik)] next %acc, %acc1
  #[when(%ik)] next %j, %j1
  #[when(%ik)] cue %I
  #[when(%ok), unless(%ik)] next %i, %i1
  #[when(%ok), unless(%ik)] cue %O
  result %acc
}
"#;

/// Two loops in sequence on two events: the second event is defined only once the first
/// loop's condition fails. seq(n) = 3 * (n + (n - 1) + … + 1) for n >= 0.
const SEQUENCE: &str = r#"#[export("seq")]
@seq: fn(i32) -> i32 = proc {
  %n: i32 = param
  %A = event
  %i: i32 = var %n
  %s: i32 = var i32 0
  #[when(%A)] %ca: i1 = icmp sgt %i, i32 0
  %ga = case %ca, i1 true
  #[when(%ga)] %i1: i32 = isub %i, i32 1
  #[when(%ga)] %s1: i32 = iadd %s, %i
  #[when(%ga)] next %i, %i1
  #[when(%ga)] next %s, %s1
  #[when(%ga)] cue %A
  #[when(%A), unless(%ga)] %B = event
  %k: i32 = var i32 0
  %t: i32 = var i32 0
  #[when(%B)] %cb: i1 = icmp slt %k, i32 3
  %gb = case %cb, i1 true
  #[when(%gb)] %k1: i32 = iadd %k, i32 1
  #[when(%gb)] %t1: i32 = iadd %t, %s
  #[when(%gb)] next %k, %k1
  #[when(%gb)] next %t, %t1
  #[when(%gb)] cue %B
  result %t
}
"#;

/// A var re-initialized by an updated `%init`, overriding the pending `next` (footnote 1):
/// total(n) = 10 n + 10 (n - 1) + … + 10 for n >= 0.
const REINIT: &str = r#"#[export("total")]
@total: fn(i32) -> i32 = proc {
  %n: i32 = param
  %E = event
  %k: i32 = var %n
  #[when(%E)] %c: i1 = icmp sgt %k, i32 0
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

/// A result undefined on some path (odd x), and divisions: only the executed one can trap.
const PARTIAL: &str = r#"#[export("half")]
@half: fn(i32) -> i32 = proc {
  %x: i32 = param
  %low: i32 = and %x, i32 1
  %even = case %low, i32 0
  #[when(%even)] %h: i32 = sdiv %x, i32 2
  result %h
}

#[export("safe")]
@safe: fn(i32) -> i32 = proc {
  %d: i32 = param
  %nz: i1 = icmp ne %d, i32 0
  %ok = case %nz, i1 true
  #[when(%ok)] %q: i32 = sdiv i32 100, %d
  #[when(%ok)] %r: i32 = urem i32 100, %d
  %s: i32 = iadd %q, %r
  %out: i32 = coalesce %s, i32 0
  result %out
}

#[export("unsafe")]
@unsafe: fn(i32) -> i32 = proc {
  %d: i32 = param
  %q: i32 = sdiv i32 100, %d
  result %q
}

#[export("min_div")]
@min_div: fn(i32) -> i32 = proc {
  %d: i32 = param
  %neg: i1 = icmp slt %d, i32 0
  %ok = case %neg, i1 true
  #[when(%ok)] %q: i32 = sdiv i32 -2147483648, %d
  %r: i32 = coalesce %q, i32 1
  result %r
}
"#;

/// A void proc: a countdown loop dividing by its counter while it is positive (never traps),
/// and a division by n + 3 outside the loop (traps for n = -3).
const VOID: &str = r#"#[export("tick")]
@tick: fn(i32) -> void = proc {
  %n: i32 = param
  %E = event
  %k: i32 = var %n
  #[when(%E)] %c: i1 = icmp sgt %k, i32 0
  %go = case %c, i1 true
  #[when(%go)] %q: i32 = sdiv i32 1000, %k
  #[when(%go)] %k1: i32 = isub %k, i32 1
  #[when(%go)] next %k, %k1
  #[when(%go)] cue %E
  %z: i32 = iadd %n, i32 3
  %w: i32 = udiv i32 7, %z
  result
}
"#;

/// Every hand-written module with the arguments to try for each of its procs (bounded where
/// the proc loops once per unit of its argument).
fn programs() -> Vec<(&'static str, &'static str, Vec<i64>)> {
    let any: Vec<i64> = (-12..=24)
        .chain([
            i64::from(i32::MIN),
            -1_000_000,
            1_000_000,
            i64::from(i32::MAX),
        ])
        .collect();
    let counts: Vec<i64> = (-3..=30).collect();
    vec![
        (FIB, "fib", (0..=93).collect()),
        (CLASSIFY, "classify", any.clone()),
        (MERGES, "first", any.clone()),
        (MERGES, "only", any.clone()),
        (MERGES, "strict", any.clone()),
        (NESTED, "tri", counts.clone()),
        (SEQUENCE, "seq", counts.clone()),
        (REINIT, "total", counts.clone()),
        (PARTIAL, "half", any.clone()),
        (PARTIAL, "safe", any.clone()),
        (PARTIAL, "unsafe", any.clone()),
        (PARTIAL, "min_div", any.clone()),
        (
            VOID,
            "tick",
            counts.iter().copied().chain([-3, -4]).collect(),
        ),
    ]
}

fn parse(src: &str) -> Module {
    let m = irkit_text::parse(src, "case.ir").unwrap_or_else(|e| panic!("{e}"));
    if let Err(es) = irkit_core::verify::verify(&m) {
        panic!("{es:?}");
    }
    m
}

/// The module with every proc lowered; checks that it verifies and that no NOIR instruction
/// or passive dependency is left.
fn lowered(m: &Module) -> Module {
    let mut l = m.clone();
    irkit_noir::lower_procs(&mut l).unwrap_or_else(|e| panic!("{e}"));
    if let Err(es) = irkit_core::verify::verify(&l) {
        let es: Vec<String> = es.iter().map(|e| e.to_string()).collect();
        panic!(
            "lowered module does not verify: {es:#?}\n{}",
            irkit_text::print(&l)
        );
    }
    assert!(!irkit_noir::has_procs(&l));
    assert!(l.walk().iter().all(|&i| {
        let op = l.opcode(i);
        !irkit_core::noir::is_noir_op(op)
            && !matches!(
                op,
                Opcode::PROC | Opcode::RESULT | Opcode::WHEN | Opcode::UNLESS
            )
    }));
    l
}

/// The argument of the proc's only parameter type, as an interpreter value.
fn arg(m: &Module, p: Inst, x: i64) -> Value {
    let sig = m.ty(p).unwrap();
    let pty = m.operands(sig)[1];
    match m.opcode(pty) {
        Opcode::I64 => Value::I64(x as u64),
        _ => Value::I32(x as u32 as u64),
    }
}

/// What the evaluator gives: a value (`None` for void) or a trap kind ("unreachable executed"
/// for an undefined result).
fn evaluated(m: &Module, p: Inst, args: &[Value]) -> Result<Option<Value>, String> {
    let mut fuel = 20_000_000;
    match eval_proc(m, p, args, &mut fuel) {
        Ok(ProcResult::Defined(v)) => Ok(v),
        Ok(ProcResult::Undefined) => Err(TrapKind::Unreachable.to_string()),
        Err(t) => Err(t.kind.to_string()),
    }
}

/// What the lowered function gives, run by the interpreter's block-form path.
fn run_lowered(l: &Module, f: Inst, args: &[Value]) -> Result<Option<Value>, String> {
    let mut it = Interpreter::new(l).unwrap().with_fuel(200_000_000);
    it.run(f, args).map_err(|t| t.kind.to_string())
}

/// The evaluator and the lowered function agree on `name(x)`; returns what both gave.
fn agree(m: &Module, l: &Module, name: &str, x: i64) -> Result<Option<Value>, String> {
    let p = m.find_export(name).unwrap();
    let f = l.find_export(name).unwrap();
    assert_eq!(l.opcode(f), Opcode::FUNC);
    let args = [arg(m, p, x)];
    let want = evaluated(m, p, &args);
    let got = run_lowered(l, f, &args);
    assert_eq!(got, want, "@{name}({x}): lowered vs evaluated");
    got
}

fn i32_of(r: Result<Option<Value>, String>) -> Result<i32, String> {
    match r? {
        Some(Value::I32(b)) => Ok(b as u32 as i32),
        other => panic!("not an i32: {other:?}"),
    }
}

#[test]
fn every_hand_written_proc_agrees_with_the_evaluator() {
    for (src, name, args) in programs() {
        let m = parse(src);
        let l = lowered(&m);
        for x in args {
            let _ = agree(&m, &l, name, x);
        }
    }
}

#[test]
fn fibonacci_in_the_generic_form() {
    let m = parse(FIB);
    let l = lowered(&m);
    let f = l.find_export("fib").unwrap();
    let (mut a, mut b) = (0u64, 1u64);
    for n in 0..=90u64 {
        if n <= 20 || n == 90 {
            assert_eq!(
                run_lowered(&l, f, &[Value::I64(n)]),
                Ok(Some(Value::I64(a))),
                "fib({n})"
            );
        }
        (a, b) = (b, a.wrapping_add(b));
    }
    assert_eq!(a, 4660046610375530309); // fib(91): the loop above did run to 90
    assert_eq!(
        run_lowered(&l, f, &[Value::I64(90)]),
        Ok(Some(Value::I64(2880067194370816120)))
    );
}

#[test]
fn multi_way_case_with_a_default_through_unless() {
    let (m, l) = both(CLASSIFY);
    let c = |x| i32_of(agree(&m, &l, "classify", x));
    assert_eq!(c(1), Ok(11));
    assert_eq!(c(2), Ok(200));
    assert_eq!(c(3), Ok(300));
    assert_eq!(c(7), Ok(-7));
    assert_eq!(c(0), Ok(0));
}

#[test]
fn coalesce_merges_non_exclusive_branches_and_phi_needs_exactly_one() {
    let (m, l) = both(MERGES);
    let first = |x| i32_of(agree(&m, &l, "first", x));
    assert_eq!(first(12), Ok(1012)); // both defined: the first
    assert_eq!(first(13), Ok(1013));
    assert_eq!(first(4), Ok(504));
    assert_eq!(first(3), Ok(3));
    let only = |x| i32_of(agree(&m, &l, "only", x));
    assert_eq!(only(12), Ok(7)); // both defined: phi undefined
    assert_eq!(only(13), Ok(1013));
    assert_eq!(only(4), Ok(504));
    assert_eq!(only(3), Ok(7)); // none defined
    let unreachable = Err(TrapKind::Unreachable.to_string());
    assert_eq!(i32_of(agree(&m, &l, "strict", 12)), unreachable);
    assert_eq!(i32_of(agree(&m, &l, "strict", 3)), unreachable);
    assert_eq!(i32_of(agree(&m, &l, "strict", 4)), Ok(504));
}

#[test]
fn two_nested_loops_on_two_events() {
    let (m, l) = both(NESTED);
    let tri = |n: i32| (0..n).flat_map(|i| (0..i).map(move |j| i * j)).sum::<i32>();
    for n in 0..=12 {
        assert_eq!(
            i32_of(agree(&m, &l, "tri", i64::from(n))),
            Ok(tri(n)),
            "tri({n})"
        );
    }
}

#[test]
fn two_loops_in_sequence_on_two_events() {
    let (m, l) = both(SEQUENCE);
    for n in 0..=12i32 {
        assert_eq!(
            i32_of(agree(&m, &l, "seq", i64::from(n))),
            Ok(3 * n * (n + 1) / 2),
            "seq({n})"
        );
    }
    assert_eq!(i32_of(agree(&m, &l, "seq", -5)), Ok(0));
}

#[test]
fn a_var_reinitialized_by_an_updated_init() {
    let (m, l) = both(REINIT);
    assert_eq!(i32_of(agree(&m, &l, "total", 4)), Ok(100)); // 104 if the `next` won
    assert_eq!(i32_of(agree(&m, &l, "total", 0)), Ok(0));
    assert_eq!(i32_of(agree(&m, &l, "total", 1)), Ok(10));
}

#[test]
fn an_undefined_result_traps_as_unreachable() {
    let (m, l) = both(PARTIAL);
    assert_eq!(i32_of(agree(&m, &l, "half", 8)), Ok(4));
    assert_eq!(
        i32_of(agree(&m, &l, "half", 7)),
        Err(TrapKind::Unreachable.to_string())
    );
}

#[test]
fn only_an_executed_division_traps() {
    let (m, l) = both(PARTIAL);
    assert_eq!(i32_of(agree(&m, &l, "safe", 0)), Ok(0));
    assert_eq!(i32_of(agree(&m, &l, "safe", 7)), Ok(14 + 2));
    assert_eq!(
        i32_of(agree(&m, &l, "unsafe", 0)),
        Err(TrapKind::DivisionByZero.to_string())
    );
    assert_eq!(i32_of(agree(&m, &l, "unsafe", 5)), Ok(20));
    // MIN / -1 traps only where the division runs (negative divisors).
    assert_eq!(i32_of(agree(&m, &l, "min_div", 5)), Ok(1));
    assert_eq!(i32_of(agree(&m, &l, "min_div", -2)), Ok(1 << 30));
    assert!(i32_of(agree(&m, &l, "min_div", -1)).is_err());
}

#[test]
fn a_void_proc() {
    let (m, l) = both(VOID);
    assert_eq!(agree(&m, &l, "tick", 5), Ok(None));
    assert_eq!(agree(&m, &l, "tick", 0), Ok(None));
    assert_eq!(
        agree(&m, &l, "tick", -3),
        Err(TrapKind::DivisionByZero.to_string())
    );
}

#[test]
fn calls_and_exports_reach_the_lowered_function() {
    // A func calling the proc, and the proc's address taken: both now name the function.
    let src = format!(
        "{FIB}\n#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  \
         %f: i64 = call @fib(i64 10)\n  %r: i32 = trunc %f\n  ret %r\n}}\n"
    );
    let (m, l) = both(&src);
    let mut it = Interpreter::new(&m).unwrap();
    assert_eq!(it.run_main(), Ok(55));
    let mut it = Interpreter::new(&l).unwrap();
    assert_eq!(it.run_main(), Ok(55));
    let fib = l.find_export("fib").unwrap();
    assert_eq!(l.find_named("fib"), Some(fib));
    assert_eq!(
        irkit_text::parse(&irkit_text::print(&l), "l.ir").map(|_| ()),
        Ok(())
    );
}

/// Sizes for the note: body instructions of each proc, instructions of its lowering.
#[test]
fn instruction_counts() {
    for (src, name, _) in programs() {
        let m = parse(src);
        let mut l = m.clone();
        let stats = irkit_noir::lower_procs(&mut l).unwrap();
        let s = stats.iter().find(|s| s.name == format!("@{name}")).unwrap();
        println!(
            "@{name:<10} proc {:>3} instructions, lowered {:>3} ({:.2}x)",
            s.proc_insts,
            s.func_insts,
            s.func_insts as f64 / s.proc_insts.max(1) as f64
        );
        if name == "fib" {
            assert_eq!(s.proc_insts, 12);
            assert!(
                s.func_insts <= 2 * s.proc_insts,
                "{}",
                irkit_text::print(&l)
            );
        }
    }
}

fn both(src: &str) -> (Module, Module) {
    let m = parse(src);
    let l = lowered(&m);
    (m, l)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    /// Any i32 argument, for the hand-written procs that do not loop on it.
    #[test]
    fn hand_written_procs_agree_on_any_argument(k in 0usize..7, x in any::<i32>()) {
        let (src, name) = [
            (CLASSIFY, "classify"),
            (MERGES, "first"),
            (MERGES, "only"),
            (MERGES, "strict"),
            (PARTIAL, "half"),
            (PARTIAL, "safe"),
            (PARTIAL, "min_div"),
        ][k];
        let (m, l) = both(src);
        let _ = agree(&m, &l, name, i64::from(x));
    }

    /// Any loop count up to 40, for the looping procs.
    #[test]
    fn looping_procs_agree_on_small_counts(k in 0usize..5, n in -2i64..40) {
        let (src, name) = [
            (FIB, "fib"),
            (NESTED, "tri"),
            (SEQUENCE, "seq"),
            (REINIT, "total"),
            (VOID, "tick"),
        ][k];
        let (m, l) = both(src);
        let _ = agree(&m, &l, name, if name == "fib" { n.abs() } else { n });
    }
}
