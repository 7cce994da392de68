//! Hooks for test support, compiled only with the `testing` feature (which `irkit-hostile`,
//! the hostile writer of tests and fuzzers, turns on): writing the layouts of older major
//! versions, the two-pass walk the one-pass writer must agree with, writing past the nesting
//! limit, and the layout facts a byte-level mutator needs (where a compact body's arrays lie;
//! the reference encoding; the symbol index's record sizes). Nothing a compiler needs is here.

pub use crate::compact::{Array as BodyArray, arrays as body_arrays};
pub use crate::schema::{REF_MAX_INDEX, REF_NONE, SYMIX_HEADER, SYMIX_RECORD};
pub use crate::write::{write_two_pass, write_unlimited, write_version};
