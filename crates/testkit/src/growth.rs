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

/// The shortest of `runs` runs each of `small` and `big`, run alternately (small, big, small,
/// big…), so that a period of load on the machine falls on both measurements alike rather
/// than on one of them, as timing all of one before the other lets it.
pub fn best_of_both(
    runs: usize,
    mut small: impl FnMut(),
    mut big: impl FnMut(),
) -> (Duration, Duration) {
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        small();
        best.0 = best.0.min(t.elapsed());
        let t = Instant::now();
        big();
        best.1 = best.1.min(t.elapsed());
    }
    best
}

/// The shortest of `runs` runs of `f` in CPU time of the calling thread (at least one run),
/// for work `f` does on this thread: unlike [`best_of`]'s wall time, it does not count the
/// time the thread waited for a core, which is what a loaded machine adds (a test that timed
/// a verifier run failed that way while other builds ran). Work `f` hands to other threads is
/// not counted: use [`best_of`] for that.
pub fn best_cpu_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs.max(1))
        .map(|_| {
            let t = thread_cpu_time();
            f();
            thread_cpu_time().saturating_sub(t)
        })
        .min()
        .unwrap_or_default()
}

/// The CPU time this thread has used (`CLOCK_THREAD_CPUTIME_ID`); zero if the clock cannot
/// be read, which makes a growth check compare its floors, never fail.
#[allow(unsafe_code)]
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
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
