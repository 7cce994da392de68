//! Building [`BackendError`]s for this back end: unsupported constructs, Cranelift's errors,
//! and a function's compilation error.

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

/// A Cranelift compilation error of the function named `place`, in one line.
pub(crate) fn compile_error(place: &str, e: cranelift_codegen::CodegenError) -> BackendError {
    match e {
        cranelift_codegen::CodegenError::Verifier(errs) => BackendError::Codegen(format!(
            "{place}: Cranelift verifier: {}",
            errs.to_string().replace('\n', "; ")
        )),
        e => cl_err(place, cranelift_module::ModuleError::Compilation(e)),
    }
}
