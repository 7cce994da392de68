//! # irkit-io: the files of every irkit tool
//!
//! What a tool needs from the file system, and nothing about what the files hold (the module
//! format is `irkit-format`'s, which uses this crate to map its inputs and stage its outputs):
//!
//! * [`write_file`] writes an output safely: a regular file atomically (a temporary file with
//!   a random name, created exclusively in the destination's directory, renamed over it, not
//!   synced to disk; an existing file keeps its mode), a device or FIFO directly, never
//!   replaced; [`Staged`] is an output written in full but put in place only on
//!   [`Staged::commit`], so a caller can check what it wrote first.
//! * [`Temporary`] registers a temporary path while it exists, and [`remove_temporaries`]
//!   removes them all, for a process about to end on a signal.
//! * [`Mapping`] maps an input file read-only, and [`guard_truncation`] keeps a process alive
//!   when a mapped file shrinks under it (the reads see zeros and the mapping reports itself
//!   changed).

mod mapping;
mod output;
mod temporary;

pub use mapping::{MAX_GUARDED, Mapping, guard_truncation};
pub use output::{Staged, is_device, stage_bytes, stage_with, write_file};
pub use temporary::{Temporary, remove_temporaries};
