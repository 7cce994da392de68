//! A `switch` costs native compilation what its cases cost (issue 37, "Size"): a switch with
//! 10× the targets compiles in about 10× the time, never 100×; and it still takes the right
//! edge, negative and sparse case values included.
//!
//! The modules are generated here; the growth is checked by the ratio of two sizes (the best of
//! a few runs each), with a bound far above n log n and far below n².

use std::fmt::Write as _;

use irkit_backend::{Backend, Outcome, RunOptions};
use irkit_core::Module;

/// `@f(%x: i32) -> i32`: a `switch` with a case `value(k)` for each `k < n`, to its own block
/// returning `k`, the default returning 200; `main` returns `f(arg)`.
fn switch_module(n: usize, value: impl Fn(usize) -> i64, arg: i64) -> Module {
    let mut t = String::from("@f: fn(i32) -> i32 = func {\n^entry(%x: i32):\n  switch %x");
    for k in 0..n {
        let _ = write!(t, ", i32 {}", value(k));
    }
    t.push_str(", ^dflt");
    for k in 0..n {
        let _ = write!(t, ", ^b{k}");
    }
    t.push_str("\n^dflt:\n  ret i32 200\n");
    for k in 0..n {
        let _ = writeln!(t, "^b{k}:\n  ret i32 {k}");
    }
    let _ = write!(
        t,
        "}}\n#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  \
         %r: i32 = call @f(i32 {arg})\n  ret %r\n}}\n"
    );
    let m = irkit_text::parse(&t, "switch.ir").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    m
}

/// What `main` exits with on the JIT.
fn jit(m: &Module) -> Outcome {
    irkit_cranelift::Jit.run(m, &RunOptions::default()).unwrap()
}

#[test]
fn a_switch_takes_the_edge_of_its_case() {
    // Dense, sparse (one jump table per run of consecutive values, a search between them),
    // and negative values (i32 bits, not sign-extended to 64).
    let dense = |k: usize| k as i64;
    let sparse = |k: usize| (k as i64 / 3) * 1000 + (k as i64 % 3);
    let negative = |k: usize| k as i64 - 50;
    for (value, arg, want) in [
        (&dense as &dyn Fn(usize) -> i64, 7, 7),
        (&dense, 300, 200),
        (&sparse, 5001, 16),
        (&sparse, 5003, 200),
        (&negative, -50, 0),
        (&negative, -1, 49),
        (&negative, 49, 99),
    ] {
        let m = switch_module(100, value, arg);
        assert_eq!(jit(&m), Outcome::Exited(want), "f({arg})");
    }
}

/// Base size: 10× it compiles in a few seconds in a debug build (it took seconds at 2× this
/// size before, growing with the square).
const N: usize = 2_000;

#[test]
fn compiling_a_switch_grows_linearly_with_its_cases() {
    let small = switch_module(N, |k| k as i64, 0);
    let big = switch_module(10 * N, |k| k as i64, 0);
    let compile = |m: &Module| drop(irkit_cranelift::emit_object(m).unwrap());
    let t_small = irkit_testkit::best_of(3, || compile(&small));
    let t_big = irkit_testkit::best_of(2, || compile(&big));
    irkit_testkit::assert_grows_at_most_n_log_n(
        "compiling a switch (time per case count)",
        (N, 10 * N),
        (t_small.as_secs_f64(), t_big.as_secs_f64()),
        1e-3,
    );
}
