//! Growth checks: a cost measured at two input sizes grew at most n log n.
//!
//! The bound is a ratio, so the machine's speed cancels out; it is generous, because the
//! machines are shared and a timing may be doubled by a neighbour: for sizes `n` and `k·n` the
//! cost may grow by up to `3·k` (linear is `k`, n log n a little more; the square of the size
//! would be `k²`: 100 for `k = 10`, far beyond 30).

use std::time::{Duration, Instant};

/// The shortest of `runs` runs of `f` (at least one run): the least disturbed by the machine.
pub fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// How much more a cost may be at `k` times the size: `3·k`.
pub fn max_ratio(k: f64) -> f64 {
    3.0 * k
}

/// Panics, naming `what` and both measurements, unless `costs.1` (at size `sizes.1`) is at
/// most [`max_ratio`] of the size ratio times `costs.0` (at `sizes.0`). Costs are in any unit
/// (seconds, bytes, instructions); a small cost is taken as at least `floor`, so that a
/// measurement too short to resolve does not make a huge ratio.
pub fn assert_grows_at_most_n_log_n(
    what: &str,
    sizes: (usize, usize),
    costs: (f64, f64),
    floor: f64,
) {
    let k = sizes.1 as f64 / sizes.0.max(1) as f64;
    let ratio = costs.1 / costs.0.max(floor);
    let bound = max_ratio(k);
    eprintln!(
        "{what}: {} at size {}, {} at size {} (ratio {ratio:.1}, bound {bound:.0})",
        costs.0, sizes.0, costs.1, sizes.1
    );
    assert!(
        ratio <= bound,
        "{what} grew faster than n log n: {} at size {}, {} at size {} (ratio {ratio:.1} > {bound:.0})",
        costs.0,
        sizes.0,
        costs.1,
        sizes.1
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_growth_passes() {
        assert_grows_at_most_n_log_n("linear", (10, 100), (1.0, 12.0), 0.0);
    }

    #[test]
    #[should_panic(expected = "grew faster than n log n")]
    fn quadratic_growth_fails() {
        assert_grows_at_most_n_log_n("quadratic", (10, 100), (1.0, 100.0), 0.0);
    }

    #[test]
    fn a_cost_below_the_floor_counts_as_the_floor() {
        assert_grows_at_most_n_log_n("tiny", (10, 100), (0.0, 5.0), 1.0);
    }
}
