//! # irkit-noir: NOIR procs lowered to the block form
//!
//! This crate owns one pass: [`lower_procs`] rewrites every `proc` of a module (NOIR's
//! blockless function form, spec/ir.md "NOIR: procs without blocks") into an ordinary `func`
//! with the same type, decorations and uses, so that the verifier, the interpreter's block-form
//! path and native back ends run it unchanged. The pass is exact for every valid proc: the
//! interpreter's evaluator (`irkit_interp::eval_proc`) and the lowered function agree on every
//! result and trap kind (property-tested on random procs from `irkit-testgen`).
//!
//! How (`to_blocks.rs`): instructions that depend on no `event` run once, in the entry block;
//! the others are carried, value and *defined* flag, as parameters of one loop block,
//! recomputed in each iteration under an *updated* flag (a `select` keeps the previous state),
//! together with one *cued* flag per event. Flags known at lowering time are folded
//! (`flags.rs`). A division the proc would not execute computes 0 / 1. The loop exits when no
//! event was cued; the exit returns the result or executes `unreachable` when it is undefined.
//! The module must verify first (`check.rs`; several `next`s of one `var` are merged
//! beforehand): a malformed proc is a [`LowerError`], never a panic. The function takes the
//! proc's place (`replace.rs`).

mod check;
mod emit;
mod error;
mod flags;
mod replace;
mod to_blocks;

pub use error::LowerError;
pub use to_blocks::ProcLowering;

use irkit_core::{Inst, Module, Opcode};

/// Lowers every proc of `m` (in module order); returns what each became (nothing, and the
/// module untouched, when it has no proc).
///
/// The module must verify, except that a `var` may be written by several `next`s (these are
/// merged first, [`irkit_core::noir::merge_nexts`]); otherwise the verifier's first complaint
/// is returned as [`LowerError::Invalid`] and no proc is lowered (several `next`s may have been
/// merged). The module is verified once, however many procs it has.
pub fn lower_procs(m: &mut Module) -> Result<Vec<ProcLowering>, LowerError> {
    let procs = irkit_core::noir::procs(m);
    if procs.is_empty() {
        return Ok(Vec::new());
    }
    check::prepare(m, &procs)?;
    let mut out = Vec::with_capacity(procs.len());
    for p in procs {
        out.push(to_blocks::lower_verified(m, p)?);
    }
    Ok(out)
}

/// Lowers proc `p` of `m` to a `func` with the same type, decorations and uses (the handle
/// `p` is gone afterwards: [`ProcLowering::func`] is the function).
///
/// Same precondition as [`lower_procs`] (several `next`s of one `var` are merged in every
/// proc of `m`); the whole module is verified on each call, so lower all procs with
/// [`lower_procs`].
pub fn lower_proc(m: &mut Module, p: Inst) -> Result<ProcLowering, LowerError> {
    if m.get(p)
        .is_none_or(|d| d.is_dead() || d.opcode() != Opcode::PROC)
    {
        return Err(LowerError::NotAProc(p.index()));
    }
    check::prepare(m, &irkit_core::noir::procs(m))?;
    to_blocks::lower_verified(m, p)
}

/// Whether `m` has a proc to lower.
pub fn has_procs(m: &Module) -> bool {
    !irkit_core::noir::procs(m).is_empty()
}
