//! Validation ahead of the copy. Reaching and copying is one serial walk (its order decides
//! the output), and each definition it reaches is validated on first touch (`spec/format.md`
//! §4: body hash, compact layout, every index) and checked against its file's symbol index
//! (`ModuleView::check_def_symbols`). Both depend on the input alone and their verdicts are
//! cached by the input's view, whoever asked first. So while the walk runs on the calling
//! thread, a spare thread of rayon's pool validates the inputs' definitions, and the walk
//! mostly finds them checked.
//!
//! Nothing observable changes: a view caches a definition's verdict, error or not, and only
//! the walk reports one (for a definition it reached, when it reached it). The thread stops as
//! soon as the walk is done (between two definitions), so at low reach it costs the spare
//! core the walk's duration and nothing else. It leaves an input at its first refused
//! definition (a broken input fails the link anyway, and the verdicts it would cache are held
//! until the inputs are dropped). With one thread in the pool (`RAYON_NUM_THREADS=1`) there is
//! no spare thread and the walk validates everything itself, as before.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::input::Input;

/// Runs `walk` on the calling thread while a spare thread validates the definitions of
/// `inputs` (pool first, then each definition in index order with its symbol records, input
/// by input), and returns `walk`'s result once that thread has stopped.
pub(super) fn with_validation_ahead<R>(inputs: &[Input], walk: impl FnOnce() -> R) -> R {
    if rayon::current_num_threads() < 2 {
        return walk();
    }
    let done = AtomicBool::new(false);
    rayon::in_place_scope(|s| {
        s.spawn(|_| validate(inputs, &done));
        let r = walk();
        done.store(true, Ordering::Relaxed);
        r
    })
}

fn validate(inputs: &[Input], done: &AtomicBool) {
    for input in inputs {
        let view = &input.view;
        if view.pool().is_err() {
            continue;
        }
        for d in 0..view.def_count() {
            if done.load(Ordering::Relaxed) {
                return;
            }
            if view.check_def_symbols(d).is_err() {
                break;
            }
        }
    }
}
