//! Validating ahead of the copy, on a thread of its own.
//!
//! The work list is first in first out: a definition reached now is copied later, and its
//! copy resolves every definition it refers to, which validates each (and, for an import,
//! every export candidate of its name: spec/linking.md §3). Validation is most of what a
//! reached definition costs besides its copy, and it depends on nothing but the input's bytes.
//! So each time a definition is reached, the walk hands it to the prefetcher, which validates
//! what its copy will validate, while the walk copies what came before it.
//!
//! The prefetcher only validates. A definition's validation runs once, for whoever asks first
//! (`ModuleView::def` caches it; a second asker waits for the first), and the walk asks for
//! everything itself, in its own order, and reports what it finds. So the link does exactly
//! what it does without the prefetcher: the same output, the same errors in the same order, the
//! same definitions left unread (the prefetcher reads only what the walk is about to read).
//! With one thread (`RAYON_NUM_THREADS=1`) there is no prefetcher.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::Scope;

use super::linkage::{ExportIndex, linkage};
use crate::input::Input;

/// What the walk tells the prefetcher.
pub(super) enum Job<'a> {
    /// Definition `d` of input `m` was reached: validate what its copy will resolve.
    Reached(u32, u32),
    /// The index of export candidates by name, once the walk has built it: from then on an
    /// import's candidates are validated ahead too.
    Exports(Arc<ExportIndex<'a>>),
}

/// The walk's end of the prefetcher. Dropping it lets the prefetcher finish; the scope it was
/// started in waits for that.
pub(super) struct Prefetcher<'a> {
    jobs: Sender<Job<'a>>,
    stop: &'a AtomicBool,
}

impl<'a> Prefetcher<'a> {
    /// Starts the prefetcher of `inputs` in `scope`, if more than one thread may run (and the
    /// system starts one).
    pub(super) fn start<'s, 'e>(
        scope: &'s Scope<'s, 'e>,
        inputs: &'a [Input],
        stop: &'a AtomicBool,
    ) -> Option<Prefetcher<'a>>
    where
        'a: 's,
    {
        if rayon::current_num_threads() < 2 {
            return None;
        }
        let (jobs, rx) = channel();
        std::thread::Builder::new()
            .name("irkit-prefetch".into())
            .spawn_scoped(scope, move || run(inputs, rx, stop))
            .ok()?;
        Some(Prefetcher { jobs, stop })
    }

    pub(super) fn send(&self, job: Job<'a>) {
        // A prefetcher that stopped is only a lost head start.
        let _ = self.jobs.send(job);
    }
}

impl Drop for Prefetcher<'_> {
    fn drop(&mut self) {
        // What is still queued is of no use to the walk any more.
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn run<'a>(inputs: &'a [Input], jobs: Receiver<Job<'a>>, stop: &AtomicBool) {
    let mut exports: Option<Arc<ExportIndex<'a>>> = None;
    let stopped = || stop.load(Ordering::Relaxed);
    let validate = |m: u32, d: u32| inputs.get(m as usize).and_then(|i| i.view.def(d).ok());
    for job in jobs {
        if stopped() {
            return;
        }
        let (m, d) = match job {
            Job::Exports(ix) => {
                exports = Some(ix);
                continue;
            }
            Job::Reached(m, d) => (m, d),
        };
        let Some(def) = validate(m, d) else { continue };
        for r in def.referenced_defs() {
            if stopped() {
                return;
            }
            let Some(target) = validate(m, r) else {
                continue;
            };
            let Some(ix) = &exports else { continue };
            let import = linkage(&target).import;
            for &(cm, cd) in import.and_then(|name| ix.get(&*name)).into_iter().flatten() {
                validate(cm, cd);
            }
        }
    }
}
