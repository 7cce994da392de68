//! The optimization pipeline (`-O`: spec/linking.md, "Optimization passes"): the passes asked
//! for ([`Passes`]), run in rounds on a module, then the removal of what nothing uses, and
//! what they did ([`Optimized`]).

use irkit_core::{CoreError, Module};

use crate::inline::Visible;

/// Which passes [`optimize()`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Passes {
    /// Rewrite indirect calls that can only call one function as direct calls
    /// ([`crate::devirtualize()`]).
    pub devirtualize: bool,
    /// Inline each function into its only call site and copies of `inline_always` functions,
    /// fold what became constant, then merge jump chains ([`crate::inline_single_calls`]).
    pub inline: bool,
}

/// What [`optimize()`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Optimized {
    /// Indirect calls rewritten as direct calls.
    pub devirtualized: u64,
    /// Of those, the ones behind a guard that keeps the indirect call for other callees.
    pub devirtualized_guarded: u64,
    /// Functions inlined into their only call site.
    pub inlined: u64,
    /// Call sites that received a copy of an `inline_always` callee.
    pub inlined_copies: u64,
    /// Blocks merged into their only predecessor.
    pub blocks_merged: u64,
    /// Instructions in function bodies before the passes.
    pub insts_before: u64,
    /// Instructions in function bodies after them.
    pub insts_after: u64,
    /// Definitions removed because nothing used them any more.
    pub removed: u64,
}

/// A pass that failed: its name and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pass}: {message}")]
pub struct PassError {
    /// The pass (`devirtualize`, `inline`, `inline_always`, `fold`, `merge`, `prune`).
    pub pass: &'static str,
    /// Why it failed.
    pub message: String,
}

/// The passes `passes` asks for, in rounds until one changes nothing (inlining can make a
/// call devirtualizable, which can make a function inlinable), at most [`MAX_ROUNDS`]; then
/// the definitions nothing `visible` sees uses any more are removed.
pub fn optimize(
    m: &mut Module,
    passes: Passes,
    visible: &Visible<'_>,
) -> Result<Optimized, PassError> {
    let pass = |pass: &'static str| {
        move |e: CoreError| PassError {
            pass,
            message: e.to_string(),
        }
    };
    let mut done = Optimized {
        insts_before: crate::rewrite::body_instructions(m),
        ..Optimized::default()
    };
    let mut budget = crate::inline_always::growth_budget(m);
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        if passes.devirtualize {
            let d = crate::devirtualize::devirtualize(m, visible).map_err(pass("devirtualize"))?;
            done.devirtualized += d.calls;
            done.devirtualized_guarded += d.guarded;
            changed |= d.calls > 0;
        }
        if passes.inline {
            let i = crate::inline::inline_single_calls(m, visible).map_err(pass("inline"))?;
            let c =
                crate::inline_always::inline_always(m, budget).map_err(pass("inline_always"))?;
            budget -= c.instructions;
            let f = crate::fold::fold_constants(m).map_err(pass("fold"))?;
            done.inlined += i.functions;
            done.inlined_copies += c.calls;
            changed |= i.functions > 0 || c.calls > 0 || f.selects > 0 || f.branches > 0;
        }
        if !changed {
            break;
        }
    }
    if passes.inline {
        let j = crate::merge::merge_jump_chains(m).map_err(pass("merge"))?;
        done.blocks_merged += j.blocks;
    }
    let removed = crate::prune::remove_unreferenced(m, visible).map_err(pass("prune"))?;
    done.removed += removed;
    // Types and constants only the removed definitions used (a removed global's initializer,
    // say) leave the pool with them.
    if removed > 0 {
        *m = m.compact().map_err(|e| PassError {
            pass: "prune",
            message: e.to_string(),
        })?;
    }
    done.insts_after = crate::rewrite::body_instructions(m);
    Ok(done)
}

/// How many rounds of the optimization passes run at most.
pub const MAX_ROUNDS: usize = 4;
