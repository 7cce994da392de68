//! # irkit-noir: NOIR procs lowered to the block form
//!
//! This crate owns one pass: [`lower_procs`] rewrites every `proc` of a module (NOIR's
//! blockless function form, spec/ir.md "NOIR: procs without blocks") into an ordinary `func`
//! with the same type, decorations and uses, so that the verifier, the interpreter's block-form
//! path and native back ends run it unchanged. The pass is exact for every valid proc: the
//! interpreter's evaluator (`irkit_interp::eval_proc`) and the lowered function agree on every
//! result and trap kind (property-tested on random procs from `irkit-testgen`).
//!
//! How (`lower.rs`): instructions that depend on no `event` run once, in the entry block; the
//! others are carried, value and *defined* flag, as parameters of one loop block, recomputed in
//! each iteration under an *updated* flag (a `select` keeps the previous state), together with
//! one *cued* flag per event. Flags known at lowering time are folded. A division the proc would
//! not execute divides by 1. The loop exits when no event was cued; the exit returns the result
//! or executes `unreachable` when it is undefined.

mod error;
mod lower;

pub use error::LowerError;
pub use lower::{ProcLowering, lower_proc};

use irkit_core::Module;

/// Lowers every proc of `m` (in module order); returns what each became. On error the module
/// may have been partly lowered: procs before the failing one are functions already.
pub fn lower_procs(m: &mut Module) -> Result<Vec<ProcLowering>, LowerError> {
    let procs = irkit_core::noir::procs(m);
    let mut out = Vec::with_capacity(procs.len());
    for p in procs {
        out.push(lower_proc(m, p)?);
    }
    Ok(out)
}

/// Whether `m` has a proc to lower.
pub fn has_procs(m: &Module) -> bool {
    !irkit_core::noir::procs(m).is_empty()
}
