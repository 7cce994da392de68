//! # irkit-format: the binary module format
//!
//! This crate owns irkit's on-disk module format and nothing else: the bytes, their writer
//! and their reader. `spec/format.md` describes the bytes (well enough for an independent
//! reader) and `spec/versioning.md` the compatibility promise: a module written today is read
//! by every later release.
//!
//! * [`write()`] / [`write_to_path`] / [`write_to`] turn a core [`Module`](irkit_core::Module)
//!   into bytes, deterministically (the same module always gives the same bytes; writing what
//!   was read gives the same bytes again, on any number of threads: per-definition work runs
//!   on every core and is merged in definition order). `write_to` streams into any seekable
//!   sink, a chunk of definitions at a time, so a file is never held whole in memory;
//!   `write_to_path` streams that way into its temporary file.
//! * [`ModuleView`] reads in place, lazily: opening checks the header and the section directory
//!   only, so it costs the same for any module size; a symbol lookup binary-searches the
//!   fixed-layout symbol index, checking only the bytes it touches; every other table, and
//!   each definition, is validated (its hash, rkyv's bytecheck, then every index in it) the
//!   first time it is used, and then read without copying through [`DefView`] / [`InstView`].
//!   rkyv's checked access runs once per archive, in that validation; afterwards archives are
//!   read by hand through bounds-checked slices (the private `placed` module, whose doc says
//!   why this stays sound when a mapped file is cut under the reader).
//!   Prefer the `try_*` lookups: the plain ones answer "nothing" for a corrupt table.
//! * [`ModuleView::materialize`] rebuilds a core module equal to the one written, through the
//!   same copy as [`ModuleView::copy_def`] (one decoding path, one rule for debug records).
//! * [`read_input`] reads any tool's input from a stream once, within a documented limit (a
//!   binary module up to the length its header announces), and stops at the first bytes that
//!   cannot be right. Files themselves (mapping inputs, writing outputs atomically) are
//!   `irkit-io`'s.
//! * [`ModuleView::copy_def`] copies one definition into an existing core module, with a
//!   caller-supplied [`CopyMapper`] for its references to the pool and to other definitions
//!   (what the linker uses to copy only what it reaches). Every copy is made in two steps:
//!   [`DefCopier::plan`] asks the mapper everything, then [`build_copies`] makes the
//!   instructions of one or many planned bodies at once, on every core
//!   ([`DefCopier::copy`] is both for one definition).
//!
//! * `testing` (only with the `testing` feature, off by default) exposes the hooks the
//!   hostile writer of tests and fuzzers (`irkit-hostile`) needs: the older layouts, the
//!   two-pass writer, writing past the nesting limit. A compiler never turns it on.
//!
//! No input, however hostile, makes the reader panic, abort, allocate without bound or hang:
//! every failure is a [`ReadError`] naming the file, the section and the cause. That includes
//! the nesting limit ([`irkit_core::MAX_NESTING`], `spec/format.md` §4): a definition, the root
//! or the pool nested deeper is refused ([`ReadCause::TooDeep`]) the first time it is used, in
//! one linear pass, so everything reading a validated archive may rely on bounded depth; the
//! writer refuses such a module ([`WriteError::TooDeep`]).
//!
//! The file is a fixed little-endian header and section directory ([`header`]) followed by
//! sections (the layout is in the spec): strings, the symbol index (a hand-written fixed
//! layout, binary-searched in place), pool, definition index, definitions (one independent
//! body per top-level definition), root, and optional debug info (name hints, source
//! locations). The tables are rkyv 0.8 archives of plain data (the private `schema` module);
//! the bodies of definitions and the root are, since format 3.0, the compact fixed-width
//! layout of the private `compact` module (2-byte references where they fit, side tables by
//! rank), read in place instruction by instruction. 1.x and 2.x files (rkyv bodies, and a
//! second, rkyv symbol table) are still read.

mod batch;
mod build;
mod compact;
mod copy;
mod defview;
mod error;
mod feed;
mod flat;
mod hash;
pub mod header;
mod input;
mod materialize;
mod placed;
mod plan;
mod schema;
mod semantic;
#[cfg(feature = "testing")]
pub mod testing;
mod validate;
mod view;
mod write;

#[cfg(test)]
mod tests;

pub use build::build_copies;
pub use copy::{CopyMapper, CopySummary, DefCopier};
pub use defview::{
    DefIndex, DefView, InstView, PayloadView, PoolEntryView, PoolIndex, PoolView, Ref, Subs,
};
pub use error::{Location, ReadCause, ReadError, WriteError};
pub use hash::hex;
pub use header::{FORMAT_MAJOR, FORMAT_MINOR, MAGIC, SectionKind};
pub use input::{MAX_INPUT, read_binary_input, read_input};
pub use plan::CopyPlan;
pub use view::{DefInfo, ModuleView, SectionInfo, Symbol, SymbolRole};
pub use write::{Prepared, prepare, write, write_to, write_to_path};

/// Reads a module from bytes and materializes it (convenience for `from_bytes` +
/// `materialize`).
pub fn read(bytes: &[u8]) -> Result<irkit_core::Module, ReadError> {
    ModuleView::from_bytes(bytes)?.materialize()
}
