//! Errors of tree construction and editing. (Verification problems are [`VerifyError`]s.)
//!
//! [`VerifyError`]: crate::verify::VerifyError

use crate::{Inst, Opcode};

/// A request the instruction tree refused: the tree is unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// A handle that is not a live instruction of this module.
    #[error("{0} is not a live instruction of this module")]
    BadHandle(Inst),
    /// `intern` was asked for an opcode that is not hoistable, or `new_inst` for one that is.
    #[error("opcode `{opcode}` {what}")]
    WrongKind {
        /// The opcode.
        opcode: Opcode,
        /// What is wrong with it.
        what: &'static str,
    },
    /// A hoistable value whose operands live in unrelated scopes (e.g. two different functions).
    #[error("hoistable `{opcode}` has operands from unrelated scopes {a} and {b}")]
    ScopeConflict {
        /// The opcode being interned.
        opcode: Opcode,
        /// One scope.
        a: Inst,
        /// The other.
        b: Inst,
    },
    /// An attach that would make an instruction its own ancestor, or attach one twice.
    #[error("cannot attach {child} under {parent}: {why}")]
    BadAttach {
        /// The parent.
        parent: Inst,
        /// The child.
        child: Inst,
        /// Why not.
        why: &'static str,
    },
    /// An index past the end of an operand or child list.
    #[error("index {index} out of range for {inst} ({len} entries)")]
    IndexOutOfRange {
        /// The instruction.
        inst: Inst,
        /// The index asked for.
        index: usize,
        /// The list's length.
        len: usize,
    },
    /// A replacement that would make a hoistable value (transitively) its own operand, or a
    /// replacement map that maps a value back to itself through a chain.
    #[error("replacement would make {0} depend on itself")]
    ReplacementCycle(Inst),
    /// The arena would exceed 2^32 - 1 instructions.
    #[error("module exceeds the maximum of 4294967294 instructions")]
    TooManyInstructions,
}

impl CoreError {
    /// A replacement whose result would make a hoistable value depend on itself.
    pub(crate) fn cycle(inst: Inst) -> CoreError {
        CoreError::ReplacementCycle(inst)
    }
}
