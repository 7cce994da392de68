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
    /// The module does not verify (checked before anything is lowered): the verifier's first
    /// error, and how many more it found.
    #[error("the module does not verify: {first}{}", and_more(*.more))]
    Invalid {
        /// The proc (or function) the first error is in, if any.
        proc_: Option<String>,
        /// The instruction the first error is about.
        inst: String,
        /// The first error, as the verifier prints it (`in @p, inst N: …`).
        first: String,
        /// How many more errors the verifier reported.
        more: usize,
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

/// ` (and N more errors)`, or nothing for none.
fn and_more(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (and 1 more error)".to_owned(),
        n => format!(" (and {n} more errors)"),
    }
}
