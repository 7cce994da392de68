//! The bounded parallel run of a fetch or an upload: `n` pieces of work on at most
//! [`crate::Policy::parallel`] threads, each taking the next piece until there is none, the
//! deadline has passed or the store is down; a piece not run has no result. The threads are
//! scoped to the call: none outlives it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::policy::Health;

/// The results of `work(i, left)` for `i` in `0..n` (`left`: the time before `deadline`),
/// on at most `threads` threads; `None` for a piece not run.
pub(crate) fn run<T: Send>(
    n: usize,
    threads: usize,
    deadline: Instant,
    health: &Health,
    work: impl Fn(usize, Duration) -> T + Sync,
) -> Vec<Option<T>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    let worker = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let left = deadline.saturating_duration_since(Instant::now());
            if i >= n || left.is_zero() || health.is_down() {
                break;
            }
            let r = work(i, left);
            if let Ok(mut all) = results.lock()
                && let Some(slot) = all.get_mut(i)
            {
                *slot = Some(r);
            }
        }
    };
    let threads = threads.clamp(1, n.max(1));
    std::thread::scope(|s| {
        // A thread that cannot be started leaves its share to the others (and to this one).
        for _ in 1..threads {
            let _ = std::thread::Builder::new().spawn_scoped(s, worker);
        }
        worker();
    });
    results.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fault;

    #[test]
    fn every_piece_runs_once_in_place() {
        let health = Health::default();
        let far = Instant::now() + Duration::from_secs(60);
        let out = run(100, 7, far, &health, |i, _| i * 2);
        assert_eq!(out, (0..100).map(|i| Some(i * 2)).collect::<Vec<_>>());
        assert!(run(0, 4, far, &health, |i, _| i).is_empty());
    }

    #[test]
    fn nothing_starts_past_the_deadline_or_once_the_store_is_down() {
        let health = Health::default();
        let out = run(10, 2, Instant::now(), &health, |i, _| i);
        assert!(out.iter().all(Option::is_none));
        let far = Instant::now() + Duration::from_secs(60);
        let out = run(50, 1, far, &health, |i, _| {
            if i == 3 {
                health.fault(&Fault::Unreachable("gone".into()));
            }
            i
        });
        assert_eq!(out.iter().flatten().count(), 4);
    }
}
