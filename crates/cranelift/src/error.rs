//! Building [`BackendError`]s for this back end.

use irkit_backend::BackendError;

/// The back end's name in errors.
pub(crate) const NAME: &str = "cranelift";

/// "`place`: unsupported by the cranelift back end: `what`".
pub(crate) fn unsupported(place: impl Into<String>, what: impl Into<String>) -> BackendError {
    BackendError::Unsupported {
        backend: NAME,
        place: place.into(),
        what: what.into(),
    }
}

/// A Cranelift error at `place`, in one line.
pub(crate) fn cl_err(place: &str, e: impl std::fmt::Display) -> BackendError {
    let text = e.to_string().replace('\n', "; ");
    BackendError::Codegen(format!("{place}: {text}"))
}
