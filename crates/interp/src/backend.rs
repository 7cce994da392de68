//! The interpreter as an [`irkit_backend::Backend`]: the oracle the native back ends are
//! compared with.

use irkit_backend::{Backend, BackendError, Outcome, RunOptions, Session};
use irkit_core::Module;

use crate::{DEFAULT_MAX_CALL_DEPTH, Interpreter, TrapKind};

/// The reference interpreter as a back end (name `interp`). `putchar` writes to the process's
/// standard output; a trap is an [`Outcome::Trapped`], never the end of the process.
#[derive(Clone, Copy, Debug, Default)]
pub struct InterpBackend;

impl Backend for InterpBackend {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn run(&self, module: &Module, opts: &RunOptions) -> Result<Outcome, BackendError> {
        let mut it = Interpreter::new(module)
            .map_err(|e| BackendError::Malformed(e.to_string()))?
            .with_stdout(true)
            .with_max_call_depth(opts.max_depth.unwrap_or(DEFAULT_MAX_CALL_DEPTH));
        if let Some(fuel) = opts.fuel {
            it = it.with_fuel(fuel);
        }
        let result = if opts.entry == "main" {
            it.run_main()
        } else {
            it.run(opts.entry.as_str(), &[])
                .map(|v| v.and_then(|v| v.as_signed()).map_or(0, |s| s as i32))
        };
        match result {
            Ok(code) => Ok(Outcome::Exited(code)),
            Err(t) => match t.kind {
                TrapKind::Exit(code) => Ok(Outcome::Exited(code)),
                TrapKind::BadCall(why) => Err(BackendError::Entry(why)),
                kind => Ok(Outcome::Trapped {
                    kind: kind.to_string(),
                    message: crate::Trap {
                        kind,
                        location: t.location,
                    }
                    .to_string(),
                }),
            },
        }
    }

    fn session(&self, opts: &RunOptions) -> Result<Box<dyn Session>, BackendError> {
        Ok(Box::new(crate::InterpSession::new(opts)))
    }
}

#[cfg(test)]
mod tests {
    use irkit_backend::trap_kinds;

    use super::*;

    #[test]
    fn shared_trap_kind_spellings() {
        assert_eq!(
            TrapKind::DivisionByZero.to_string(),
            trap_kinds::DIVISION_BY_ZERO
        );
        assert_eq!(
            TrapKind::IntegerOverflow.to_string(),
            trap_kinds::INTEGER_OVERFLOW
        );
        assert_eq!(TrapKind::Unreachable.to_string(), trap_kinds::UNREACHABLE);
        assert_eq!(TrapKind::Trap.to_string(), trap_kinds::TRAP);
        // `trap_msg`'s kind is its payload, verbatim.
        assert_eq!(
            TrapKind::Message("out of bounds memory access".into()).to_string(),
            "out of bounds memory access"
        );
        assert_eq!(TrapKind::Abort.to_string(), trap_kinds::ABORT);
        assert_eq!(
            TrapKind::BadFunctionPointer { addr: 0 }.to_string(),
            trap_kinds::bad_function_pointer(0)
        );
        assert_eq!(
            TrapKind::StackOverflow { limit: 12 }.to_string(),
            trap_kinds::stack_overflow(12)
        );
        assert_eq!(
            TrapKind::UnknownExtern("puts".into()).to_string(),
            trap_kinds::unknown_extern("puts")
        );
    }

    #[test]
    fn runs_and_traps() {
        let src = "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %q: i32 = sdiv i32 1, i32 0\n  ret %q\n}\n";
        let m = irkit_text::parse(src, "t.ir").unwrap();
        let out = InterpBackend.run(&m, &RunOptions::default()).unwrap();
        assert_eq!(
            out,
            Outcome::Trapped {
                kind: trap_kinds::DIVISION_BY_ZERO.into(),
                message: "trap: integer division by zero in @main ^entry, instruction 0 (sdiv %q)"
                    .into()
            }
        );
    }
}
