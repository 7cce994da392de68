//! What the generator produces, opcode by opcode: one exhaustive table (by category, see
//! `irkit_core::opcode`), checked by `tests/coverage.rs` against what many seeds really
//! generate, in both directions: an opcode added to the registry fails that test until the
//! generator makes it, or the table says why it does not.

use irkit_core::Op;

/// Whether generated modules hold instructions of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Some modules of [`crate::module`], [`crate::module_set`], [`crate::proc_module`] or
    /// [`crate::object_program`] hold it (with the default [`crate::Config`], over a few hundred seeds).
    Generated,
    /// No generated module holds it, for the reason given.
    NotGenerated(&'static str),
}

/// The generator's coverage of `op`.
pub fn coverage(op: Op) -> Coverage {
    match op {
        // Written by the cases of tests/link and examples/generics, run on every back end.
        Op::Exists | Op::Pack | Op::ExistsCall | Op::ExistsOpen => {
            Coverage::NotGenerated("existentials: the hand-written cases cover them")
        }
        // Made by the inliners (tests/link/inline_scopes), written by hand in the verify and
        // round-trip cases (tests/cases/*/inline_scopes.ir) and the format's golden 6.2 file.
        Op::InlineScope => Coverage::NotGenerated(
            "inlining scopes: the inliners make them; hand-written cases cover the rest",
        ),
        // Written by tests/semantics/vectors*.ir (every back end) and the wasm SIMD suite.
        Op::Vec | Op::Splat | Op::Shuffle | Op::Swizzle => Coverage::NotGenerated(
            "vectors: the semantics cases and the wasm SIMD suite cover them",
        ),
        // Written by tests/semantics/linear_memory.ir (every back end) and every wasm module
        // with a memory.
        irkit_core::op_linear_memory!() => Coverage::NotGenerated(
            "linear memories: the semantics cases and the wasm suites cover them",
        ),
        // Written by tests/semantics/relaxed_nan.ir (every back end) and tests/link/inline_nans,
        // and on every function the wasm front end translates (the wasm suites).
        Op::RelaxedNan => Coverage::NotGenerated(
            "relaxed NaNs: back ends may return different NaNs there, and generated programs \
             are compared bit for bit; the semantics cases and the wasm suites cover them",
        ),
        irkit_core::op_pure!()
        | irkit_core::op_memory!()
        | irkit_core::op_calls!()
        | irkit_core::op_terminators!()
        | irkit_core::op_structure!()
        | irkit_core::op_types!()
        | irkit_core::op_constants!()
        | irkit_core::op_decorations!()
        | irkit_core::op_generics!()
        | irkit_core::op_noir!()
        | irkit_core::op_object_defs!()
        | irkit_core::op_objects!() => Coverage::Generated,
    }
}
