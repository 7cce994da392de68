//! The verifier (placeholder until the full rule set lands).

use crate::Module;

/// One problem found by the verifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// The message.
    pub message: String,
}

/// Verifies a module.
pub fn verify(_m: &Module) -> Result<(), Vec<VerifyError>> {
    Ok(())
}
