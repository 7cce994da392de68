//! The link-time optimization pipeline (`-O`: spec/linking.md, "Optimization passes"): the
//! passes `LinkOptions` asks for, run on the linked module by `irkit-opt` (which owns them and
//! needs no linker state), their figures added to the link's statistics.

use irkit_core::Module;
use irkit_opt::{Passes, Visible};

use crate::error::LinkError;
use crate::{LinkOptions, Stats};

/// The link-time optimization passes `opts` asks for ([`irkit_opt::optimize`]), what they did
/// recorded in `stats`.
pub(crate) fn optimize(
    out: &mut Module,
    opts: &LinkOptions,
    stats: &mut Stats,
) -> Result<(), LinkError> {
    let visible = Visible {
        library: opts.library,
        names: &opts.exports,
        entry: &opts.entry,
    };
    let passes = Passes {
        devirtualize: opts.devirtualize,
        inline: opts.inline,
    };
    let done = irkit_opt::optimize(out, passes, &visible).map_err(|e| LinkError::Pass {
        pass: e.pass,
        message: e.message,
    })?;
    stats.insts_before_optimize = done.insts_before;
    stats.insts_after_optimize = done.insts_after;
    stats.devirtualized += done.devirtualized;
    stats.devirtualized_guarded += done.devirtualized_guarded;
    stats.inlined += done.inlined;
    stats.inlined_copies += done.inlined_copies;
    stats.blocks_merged += done.blocks_merged;
    stats.removed += done.removed;
    Ok(())
}
