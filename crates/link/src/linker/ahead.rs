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

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::linkage::ExportIndex;
use super::resolve::export_index;
use crate::input::Input;

/// What the spare thread prepared for the walk: the export index (every export of every
/// input by name), once built, when every input's symbols could be read.
#[derive(Default)]
pub(super) struct Ahead<'a> {
    index: Mutex<Option<ExportIndex<'a>>>,
    ready: AtomicBool,
}

impl<'a> Ahead<'a> {
    /// The export index, if it is built and not taken yet.
    pub(super) fn take_export_index(&self) -> Option<ExportIndex<'a>> {
        if !self.ready.load(Ordering::Acquire) {
            return None;
        }
        self.index.lock().ok()?.take()
    }
}

/// Runs `walk` on the calling thread while a spare thread builds the export index of
/// `inputs` into `ahead` and then validates their pools and debug sections, then their
/// definitions (each in index order with its symbol records, input by input), and returns `walk`'s
/// result once that thread has stopped (it stops between two inputs, or two definitions, once
/// the walk is done).
pub(super) fn with_validation_ahead<'a, R>(
    inputs: &'a [Input],
    ahead: &Ahead<'a>,
    walk: impl FnOnce() -> R,
) -> R {
    if rayon::current_num_threads() < 2 {
        return walk();
    }
    let done = AtomicBool::new(false);
    rayon::in_place_scope(|s| {
        s.spawn(|_| {
            // Only an index of inputs whose symbols all read is offered: then the walk's
            // searches would meet no error either, and give the same candidates.
            if inputs.len() > 1
                && let Some((index, refused)) =
                    export_index(inputs, true, || done.load(Ordering::Relaxed))
                && refused.is_empty()
                && let Ok(mut slot) = ahead.index.lock()
            {
                *slot = Some(index);
                ahead.ready.store(true, Ordering::Release);
            }
            validate(inputs, &done)
        });
        let r = walk();
        done.store(true, Ordering::Relaxed);
        r
    })
}

fn validate(inputs: &[Input], done: &AtomicBool) {
    // The sections every copy from an input reads first (a reach of 1 % touches most inputs
    // and few of their definitions), then the definitions.
    for input in inputs {
        if done.load(Ordering::Relaxed) {
            return;
        }
        let _ = input.view.pool();
        let _ = input.view.check_debug();
    }
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
