//! The link-time optimization pipeline (`-O`: spec/linking.md, "Optimization passes"): the
//! passes `LinkOptions` asks for, run in rounds on the linked module, then the removal of what
//! nothing uses. It uses no linker state, only the module, the options and the statistics.

use irkit_core::Module;

use crate::error::LinkError;
use crate::{LinkOptions, Stats};

/// The link-time optimization passes `opts` asks for, in rounds until one changes nothing
/// (inlining can make a call devirtualizable, which can make a function inlinable), at most
/// [`MAX_ROUNDS`]; then the definitions nothing uses any more are removed.
pub(crate) fn optimize(
    out: &mut Module,
    opts: &LinkOptions,
    stats: &mut Stats,
) -> Result<(), LinkError> {
    let pass = |pass: &'static str| {
        move |e: irkit_core::CoreError| LinkError::Pass {
            pass,
            message: e.to_string(),
        }
    };
    let visible = crate::inline::Visible {
        library: opts.library,
        names: &opts.exports,
        entry: &opts.entry,
    };
    stats.insts_before_optimize = crate::rewrite::body_instructions(out);
    let mut budget = crate::inline_always::growth_budget(out);
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        if opts.devirtualize {
            let d =
                crate::devirtualize::devirtualize(out, &visible).map_err(pass("devirtualize"))?;
            stats.devirtualized += d.calls;
            stats.devirtualized_guarded += d.guarded;
            changed |= d.calls > 0;
        }
        if opts.inline {
            let i = crate::inline::inline_single_calls(out, &visible).map_err(pass("inline"))?;
            let c =
                crate::inline_always::inline_always(out, budget).map_err(pass("inline_always"))?;
            budget -= c.instructions;
            let f = crate::fold::fold_constants(out).map_err(pass("fold"))?;
            stats.inlined += i.functions;
            stats.inlined_copies += c.calls;
            changed |= i.functions > 0 || c.calls > 0 || f.selects > 0 || f.branches > 0;
        }
        if !changed {
            break;
        }
    }
    if opts.inline {
        let j = crate::merge::merge_jump_chains(out).map_err(pass("merge"))?;
        stats.blocks_merged += j.blocks;
    }
    let removed = crate::prune::remove_unreferenced(out, &visible).map_err(pass("prune"))?;
    stats.removed += removed;
    // Types and constants only the removed definitions used (a removed global's initializer,
    // say) leave the pool with them.
    if removed > 0 {
        *out = out.compact().map_err(|e| LinkError::Pass {
            pass: "prune",
            message: e.to_string(),
        })?;
    }
    stats.insts_after_optimize = crate::rewrite::body_instructions(out);
    Ok(())
}

/// How many rounds of the optimization passes run at most.
const MAX_ROUNDS: usize = 4;
