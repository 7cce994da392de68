//! Why a proc could not be lowered.

use irkit_core::CoreError;

/// A lowering failure; the proc and instruction are named as in verifier messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// The instruction given is not a `proc`.
    #[error("inst {0} is not a proc")]
    NotAProc(u32),
    /// The proc is not valid (a dependency cycle, a missing type, …): verify it first.
    #[error("in {proc_}: {message}")]
    Proc {
        /// The proc.
        proc_: String,
        /// What is wrong.
        message: String,
    },
    /// An instruction the verifier would have refused.
    #[error("in {proc_}, {inst}: cannot lower {what}")]
    Malformed {
        /// The proc.
        proc_: String,
        /// The instruction.
        inst: String,
        /// What it is.
        what: String,
    },
    /// An edit of the module failed.
    #[error(transparent)]
    Core(#[from] CoreError),
}
