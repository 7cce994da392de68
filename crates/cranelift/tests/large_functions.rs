//! A function's compile work grows about linearly with its size (issue 37, "Size"; spec/backends.md,
//! "Code generation level"): a function making N calls, each result added to a running sum,
//! compiles at 10N in about ten times the work of N, in an object file and in the JIT, and
//! runs. (Before, the optimizer made every call's result live to the `ret` and the register
//! allocator's work grew with the square of N: 10,000 calls took 47 s, 100,000 ran out of
//! memory.)

use std::time::Duration;

use irkit_backend::{Backend, Outcome, RunOptions};
use irkit_core::Module;

/// `@main` calls `@one` `n` times, adding each result to a running sum, and returns the sum
/// modulo 256 (its exit code).
fn calls(n: usize) -> Module {
    let mut t = String::from(
        "#[export(\"one\")]\n@one: fn() -> i32 = func {\n^entry:\n  ret i32 1\n}\n\n\
         #[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %s0: i32 = iadd i32 0, i32 0\n",
    );
    for i in 0..n {
        t += &format!(
            "  %c{i}: i32 = call @one()\n  %s{}: i32 = iadd %s{i}, %c{i}\n",
            i + 1
        );
    }
    t += &format!("  %r: i32 = urem %s{n}, i32 256\n  ret %r\n}}\n");
    let m = irkit_text::parse(&t, "calls.ir").expect("parses");
    irkit_core::verify::verify(&m).expect("verifies");
    m
}

/// The shortest of two object builds of `m` on one thread.
fn object_time(m: &Module) -> Duration {
    let opts = irkit_cranelift::CodegenOptions {
        jobs: Some(1),
        ..irkit_cranelift::CodegenOptions::default()
    };
    irkit_testkit::best_of(2, || {
        irkit_cranelift::compile_object(m, &opts).expect("compiles");
    })
}

#[test]
fn ten_times_the_calls_is_about_ten_times_the_compile_work() {
    let (small, large) = (calls(1_000), calls(10_000));
    let (t1, t10) = (object_time(&small), object_time(&large));
    irkit_testkit::assert_grows_at_most_n_log_n(
        "compiling a function (time per call count)",
        (1_000, 10_000),
        (t1.as_secs_f64(), t10.as_secs_f64()),
        1e-3,
    );
}

#[test]
fn a_function_of_ten_thousand_calls_runs_in_the_jit() {
    let m = calls(10_000);
    let out = irkit_cranelift::Jit
        .run(&m, &RunOptions::default())
        .expect("compiles and runs");
    assert_eq!(out, Outcome::Exited(10_000 % 256));
}
