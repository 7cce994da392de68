//! The back ends the tools can run a module with, by name.

use irkit_backend::{Backend, CodeGen};

/// The names of the back ends, the default first.
pub const BACKENDS: &[&str] = &["jit", "interp"];

/// The code generator `ir-link --emit obj|exe` uses.
pub fn codegen() -> &'static dyn CodeGen {
    &irkit_cranelift::ObjectGen
}

/// The back end called `name` ([`BACKENDS`]).
pub fn backend(name: &str) -> Option<&'static dyn Backend> {
    match name {
        "jit" => Some(&irkit_cranelift::Jit),
        "interp" => Some(&irkit_interp::InterpBackend),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_a_back_end_of_that_name() {
        for &n in BACKENDS {
            assert_eq!(backend(n).map(|b| b.name()), Some(n));
        }
        assert!(backend("llvm").is_none());
    }
}
