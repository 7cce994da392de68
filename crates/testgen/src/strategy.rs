//! `proptest` strategies (feature `proptest`).
//!
//! The strategies generate a byte string and feed it to the generator through
//! [`Entropy::new`], so proptest's shrinking (shorter strings, smaller bytes) shrinks the
//! generated modules towards the smallest ones.

use proptest::prelude::*;

use crate::{Config, Entropy, Generated, ModuleSet, ProcModule, module, module_set, proc_module};

/// Most bytes drawn per generated module or set.
const MAX_BYTES: usize = 4096;

/// Valid random modules.
pub fn modules(cfg: Config) -> impl Strategy<Value = Generated> {
    proptest::collection::vec(any::<u8>(), 0..MAX_BYTES)
        .prop_map(move |bytes| Generated(module(&mut Entropy::new(&bytes), &cfg)))
}

/// Valid random module sets that link (see [`module_set`]).
pub fn module_sets(cfg: Config) -> impl Strategy<Value = ModuleSet> {
    proptest::collection::vec(any::<u8>(), 0..MAX_BYTES)
        .prop_map(move |bytes| module_set(&mut Entropy::new(&bytes), &cfg))
}

/// Modules of exported NOIR procs with arguments to call them on (see [`proc_module`]).
pub fn proc_modules(cfg: Config) -> impl Strategy<Value = ProcModule> {
    proptest::collection::vec(any::<u8>(), 0..MAX_BYTES)
        .prop_map(move |bytes| proc_module(&mut Entropy::new(&bytes), &cfg))
}
