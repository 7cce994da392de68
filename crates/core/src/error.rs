//! Errors of tree construction and editing ([`CoreError`]), and the one error a front end
//! propagates through build, verify and write ([`Error`]). (Verification problems are
//! [`VerifyError`]s.)
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
    /// A call given another number of arguments than its callee's signature takes.
    #[error("a call of {callee} with {given} arguments: its signature takes {expected}")]
    ArgumentCount {
        /// The callee (a function, or the signature of an indirect call).
        callee: Inst,
        /// The parameters of the signature.
        expected: usize,
        /// The arguments given.
        given: usize,
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
    /// A branch ([`Module::adopt`](crate::Module::adopt)) that is not a copy of this module
    /// extended only as adoption allows.
    #[error("cannot adopt {inst} from the branch: {why}")]
    NotAdoptable {
        /// The branch's instruction at fault.
        inst: Inst,
        /// Why.
        why: &'static str,
    },
}

impl CoreError {
    /// A replacement whose result would make a hoistable value depend on itself.
    pub(crate) fn cycle(inst: Inst) -> CoreError {
        CoreError::ReplacementCycle(inst)
    }
}

/// The one error a front end needs: building ([`CoreError`]), verifying (every
/// [`VerifyError`]) and writing (the format crate's `WriteError`, boxed here because the
/// format crate depends on this one, and converted by its `From` impl) all convert into it, so
/// one `?` serves the whole path from source to `.irm` bytes.
///
/// It displays one line per problem: a verification failure shows each [`VerifyError`] on a
/// line of its own.
///
/// [`VerifyError`]: crate::verify::VerifyError
#[derive(Debug)]
pub enum Error {
    /// The instruction tree refused a request.
    Build(CoreError),
    /// The verifier found these problems (at least one).
    Verify(Vec<crate::verify::VerifyError>),
    /// Writing the module failed (an `irkit_format::WriteError`).
    Write(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Build(e) => write!(f, "{e}"),
            Error::Verify(errors) => {
                for (k, e) in errors.iter().enumerate() {
                    if k > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            Error::Write(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Build(e) => Some(e),
            Error::Verify(errors) => errors
                .first()
                .map(|e| e as &(dyn std::error::Error + 'static)),
            Error::Write(e) => Some(e.as_ref()),
        }
    }
}

impl From<CoreError> for Error {
    fn from(e: CoreError) -> Error {
        Error::Build(e)
    }
}

impl From<Vec<crate::verify::VerifyError>> for Error {
    fn from(errors: Vec<crate::verify::VerifyError>) -> Error {
        Error::Verify(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::VerifyError;

    #[test]
    fn one_line_per_problem() {
        let e: Error = vec![
            VerifyError::new(None, None, Inst::from_index(3), "first"),
            VerifyError::new(None, None, Inst::from_index(4), "second"),
        ]
        .into();
        assert_eq!(e.to_string(), "in #3: first\nin #4: second");
        let e: Error = CoreError::TooManyInstructions.into();
        assert_eq!(
            e.to_string(),
            "module exceeds the maximum of 4294967294 instructions"
        );
    }

    #[test]
    fn question_mark_converts_build_and_verify_errors() {
        fn build() -> Result<(), Error> {
            let mut m = crate::Module::new();
            crate::verify::verify(&m)?;
            m.new_inst(crate::Opcode::I32, None, Vec::new(), crate::Payload::None)?;
            Ok(())
        }
        assert!(matches!(build(), Err(Error::Build(_))));
    }
}
