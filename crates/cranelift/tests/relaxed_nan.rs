//! A `relaxed_nan` function returns the NaN the hardware computes, not the canonical one
//! (spec/ir.md, "Relaxed NaNs"; spec/backends.md). The IR allows either, so the semantics
//! cases (`tests/semantics/relaxed_nan.ir`) only test what all allowed NaNs share; this test
//! shows that native code does skip the canonicalization: on x86-64, `0.0 / 0.0` is the
//! *negative* default NaN, which the canonical NaN is not.

use irkit_backend::{Backend, Outcome, RunOptions};

/// A program whose exit code is the sign bit of `0.0 / 0.0` divided in a function that is
/// `relaxed_nan` (`relaxed`) or not.
fn sign_of_zero_by_zero(relaxed: bool) -> irkit_core::Module {
    let decoration = if relaxed { "#[relaxed_nan]\n" } else { "" };
    let text = format!(
        "{decoration}@div: fn(f64, f64) -> f64 = func {{
^entry(%a: f64, %b: f64):
  %q: f64 = fdiv %a, %b
  ret %q
}}

#[export(\"main\")]
@main: fn() -> i32 = func {{
^entry:
  %q: f64 = call @div(f64 0.0, f64 0.0)
  %b: i64 = bitcast %q
  %s: i64 = lshr %b, i64 63
  %r: i32 = trunc %s
  ret %r
}}
"
    );
    let m = irkit_text::parse(&text, "relaxed_nan.ir").expect("parses");
    irkit_core::verify::verify(&m).expect("verifies");
    m
}

fn exit_code(backend: &dyn Backend, m: &irkit_core::Module) -> i32 {
    match backend.run(m, &RunOptions::default()).expect("runs") {
        Outcome::Exited(code) => code,
        other => panic!("{} did not exit: {other:?}", backend.name()),
    }
}

#[test]
fn canonical_nans_are_positive_everywhere() {
    let m = sign_of_zero_by_zero(false);
    assert_eq!(exit_code(&irkit_interp::InterpBackend, &m), 0);
    assert_eq!(exit_code(&irkit_cranelift::Jit, &m), 0);
}

#[test]
#[cfg(target_arch = "x86_64")]
fn a_relaxed_function_returns_the_hardware_nan() {
    let m = sign_of_zero_by_zero(true);
    // The interpreter ignores the decoration (the canonical NaN is allowed); x86-64's
    // default NaN has the sign bit set.
    assert_eq!(exit_code(&irkit_interp::InterpBackend, &m), 0);
    assert_eq!(exit_code(&irkit_cranelift::Jit, &m), 1);
}
