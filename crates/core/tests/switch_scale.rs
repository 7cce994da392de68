//! A `switch` costs the verifier what its cases cost (issue 37, "Size"): the check that case
//! values are pairwise distinct (rule I3) and the successor list of the dominance pass take one
//! look-up per case, so a switch with 10× the cases takes about 10× the time, never 100×.
//!
//! The modules are generated here; the growth is checked by the ratio of two sizes (the best of
//! a few runs each, the two sizes timed alternately so that load on a shared machine falls on
//! both), with a bound far above n log n and far below n².

use irkit_core::verify::verify;
use irkit_core::{Builder, Module};

/// `@f(%x: i32) -> i32`: a `switch` on `%x` with `n` cases, case `k` (value `k - n/2`, so
/// negative values too) to its own block returning `k`; with `dup`, every case `k ≥ 1` of
/// odd index repeats the value of case `k - 1`.
fn switch_module(n: usize, dup: bool) -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, params) = b.block(f, &[i32t]).unwrap();
    let (dflt, _) = b.block(f, &[]).unwrap();
    let half = (n / 2) as i32;
    let mut cases = Vec::with_capacity(n);
    for k in 0..n {
        let (blk, _) = b.block(f, &[]).unwrap();
        b.position_at_end(blk);
        let r = b.module().const_i32(k as i32);
        b.ret(Some(r)).unwrap();
        let value = if dup && k % 2 == 1 { k - 1 } else { k };
        cases.push((b.module().const_i32(value as i32 - half), blk, &[][..]));
    }
    b.position_at_end(dflt);
    let minus = b.module().const_i32(-1);
    b.ret(Some(minus)).unwrap();
    b.position_at_end(entry);
    b.switch(params[0], (dflt, &[]), &cases).unwrap();
    m
}

/// Base size: big enough to measure, small enough that 10× it verifies in well under a second
/// in a debug build (the linear search per case took seconds at 10× this size).
const N: usize = 10_000;

#[test]
fn verifying_a_switch_grows_linearly_with_its_cases() {
    let small = switch_module(N, false);
    let big = switch_module(10 * N, false);
    verify(&small).unwrap();
    verify(&big).unwrap();
    // Wall time, alternating: the verifier works on rayon's threads.
    let (t_small, t_big) =
        irkit_testkit::best_of_both(3, || verify(&small).unwrap(), || verify(&big).unwrap());
    irkit_testkit::assert_grows_at_most_n_log_n(
        "verifying a switch (time per case count)",
        (N, 10 * N),
        (t_small.as_secs_f64(), t_big.as_secs_f64()),
        1e-4,
    );
}

#[test]
fn duplicate_cases_are_reported_in_case_order_naming_the_first() {
    let m = switch_module(10, true);
    let errs = verify(&m).unwrap_err();
    let msgs: Vec<&str> = errs.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "case value 1 duplicates case value 0 (-5)",
            "case value 3 duplicates case value 2 (-3)",
            "case value 5 duplicates case value 4 (-1)",
            "case value 7 duplicates case value 6 (1)",
            "case value 9 duplicates case value 8 (3)",
        ]
    );
}

#[test]
fn a_switch_with_many_duplicates_is_checked_in_linear_time() {
    let small = switch_module(N, true);
    let big = switch_module(10 * N, true);
    let (t_small, t_big) = irkit_testkit::best_of_both(
        3,
        || assert!(verify(&small).is_err()),
        || assert!(verify(&big).is_err()),
    );
    irkit_testkit::assert_grows_at_most_n_log_n(
        "verifying a switch with duplicates (time per case count)",
        (N, 10 * N),
        (t_small.as_secs_f64(), t_big.as_secs_f64()),
        1e-4,
    );
}
