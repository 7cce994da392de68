//! Validation ahead of the copy. Reaching and copying is one serial walk (its order decides
//! the output), and each definition it reaches is validated on first touch (`spec/format.md`
//! §4: body hash, compact layout, every index) and checked against its file's symbol index
//! (`ModuleView::check_def_symbols`). Both depend on the input alone and their verdicts are
//! cached by the input's view, whoever asked first. So while the walk runs on the calling
//! thread, a spare thread of rayon's pool validates the inputs' definitions, and the walk
//! mostly finds them checked; with each it reads what the walk reads of a definition before
//! copying it (its linkage and type: [`FactTable`]), so that the walk mostly finds that read.
//!
//! Nothing observable changes: a view caches a definition's verdict, error or not, and only
//! the walk reports one (for a definition it reached, when it reached it). The thread stops as
//! soon as the walk is done (between two definitions), so at low reach it costs the spare
//! core the walk's duration and nothing else. It validates 64 definitions at a time (their
//! body hashes computed together: `ModuleView::validate_defs`) and leaves an input after the
//! block of its first refused definition (a broken input fails the link anyway, and the
//! verdicts it would cache are held until the inputs are dropped). With one thread in the pool (`RAYON_NUM_THREADS=1`) there is
//! no spare thread and the walk validates everything itself, as before.
//!
//! Once it has validated everything while the walk still runs, the thread makes the output's
//! arena slots for the copies planned so far ([`irkit_core::Slots`]): the first write to that
//! memory, and the kernel's zeroing of it, then happen here rather than in the copy.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use irkit_core::Slots;

use super::exports::{ExportIndex, export_index};
use super::index::{DefIndex, InputId, SrcDef};
use super::linkage::FactTable;
use crate::input::Input;

/// What the spare thread prepared for the walk: the export index (every export of every
/// input by name), once built, when every input's symbols could be read; and the output's
/// arena slots for the copies the walk plans ([`Slots`]).
#[derive(Default)]
pub(super) struct Ahead<'a> {
    index: Mutex<Option<ExportIndex<'a>>>,
    ready: AtomicBool,
    /// Instructions the planned copies create so far (the walk adds each plan's).
    planned: AtomicUsize,
    /// Set once the walk has planned everything: the spare thread stops making slots.
    planned_all: AtomicBool,
    slots: Mutex<Option<Slots>>,
}

impl<'a> Ahead<'a> {
    /// Counts the instructions of one more planned copy.
    pub(super) fn plan(&self, insts: u32) {
        self.planned.fetch_add(insts as usize, Ordering::Relaxed);
    }

    /// The slots made so far (none if the spare thread made none); the spare thread makes
    /// no more.
    pub(super) fn take_slots(&self) -> Slots {
        self.planned_all.store(true, Ordering::Relaxed);
        self.slots
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .unwrap_or_default()
    }

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
    facts: &FactTable,
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
            validate(inputs, facts, &done);
            make_slots(inputs, ahead, &done);
        });
        let r = walk();
        done.store(true, Ordering::Relaxed);
        r
    })
}

fn validate(inputs: &[Input], facts: &FactTable, done: &AtomicBool) {
    // The sections every copy from an input reads first (a reach of 1 % touches most inputs
    // and few of their definitions), then the definitions.
    for input in inputs {
        if done.load(Ordering::Relaxed) {
            return;
        }
        let _ = input.view.pool();
        let _ = input.view.check_debug();
    }
    for (m, input) in InputId::all(inputs.len()).zip(inputs) {
        let view = &input.view;
        if view.pool().is_err() {
            continue;
        }
        // Definitions a block at a time: their body hashes are computed together.
        const BLOCK: u32 = 64;
        'input: for start in (0..view.def_count()).step_by(BLOCK as usize) {
            if done.load(Ordering::Relaxed) {
                return;
            }
            let end = start.saturating_add(BLOCK).min(view.def_count());
            view.validate_defs(start..end);
            for d in start..end {
                if done.load(Ordering::Relaxed) {
                    return;
                }
                if view.check_def_symbols(d).is_err() {
                    break 'input;
                }
                facts.prefetch(view, SrcDef::new(m, DefIndex::new(d)));
            }
        }
    }
}

/// Makes the output's arena slots for the copies the walk plans, as it plans them, until it
/// has planned everything (then the copies are built in them: [`Slots`]). The room is
/// reserved once, for the most any link of `inputs` could create (each input's definitions,
/// their instructions and its pool); if the allocator refuses it, no slot is made.
fn make_slots(inputs: &[Input], ahead: &Ahead<'_>, done: &AtomicBool) {
    /// Slots made per step: the walk waits at most one step for them once it is done.
    const STEP: usize = 1 << 14;
    let stop = || done.load(Ordering::Relaxed) || ahead.planned_all.load(Ordering::Relaxed);
    let mut room = 1usize;
    for input in inputs {
        let view = &input.view;
        let pool = view.pool().map_or(0, |p| p.len() as usize);
        room = room
            .saturating_add(pool)
            .saturating_add(view.def_count() as usize);
        for d in 0..view.def_count() {
            if stop() {
                return;
            }
            room = room.saturating_add(view.def_inst_count(d).unwrap_or(0) as usize);
        }
    }
    let Some(slots) = Slots::with_room(room) else {
        return;
    };
    let Ok(mut held) = ahead.slots.lock() else {
        return;
    };
    *held = Some(slots);
    drop(held);
    while !stop() {
        let want = ahead.planned.load(Ordering::Relaxed);
        let Ok(mut held) = ahead.slots.lock() else {
            return;
        };
        let Some(slots) = held.as_mut() else {
            return;
        };
        if slots.len() < want.min(room) {
            slots.fill_to(want.min(slots.len() + STEP));
        } else {
            drop(held);
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}
