//! The lowering's precondition: the module verifies (spec/ir.md, rules N1–N9 for procs), once
//! every `var` written by several `next`s has had them merged into one (the seed's footnote 2,
//! [`irkit_core::noir::merge_nexts`]). Checked before anything is lowered, so that the lowering
//! itself only ever sees well-formed procs and never panics on a malformed one.

use irkit_core::noir;
use irkit_core::verify::{VerifyError, verify};
use irkit_core::{Inst, Module, Opcode};

use crate::LowerError;

/// Merges several `next`s of one `var` in each of `procs` (only if the module does not verify
/// as it is), then verifies the module. The module is left unchanged when it verifies at once.
pub(crate) fn prepare(m: &mut Module, procs: &[Inst]) -> Result<(), LowerError> {
    let Err(first) = verify(m) else {
        return Ok(());
    };
    // Several `next`s of one var are the only invalidity the lowering repairs; the merge needs
    // well-formed `next`s (two operands, live handles), else the verifier's report stands.
    if !procs.iter().all(|&p| nexts_mergeable(m, p)) {
        return Err(invalid(m, &first));
    }
    for &p in procs {
        if noir::merge_nexts(m, p).is_err() {
            return Err(invalid(m, &first));
        }
    }
    verify(m).map_err(|errs| invalid(m, &errs))
}

/// Whether every `next` among `p`'s children has two operands and only live handles.
fn nexts_mergeable(m: &Module, p: Inst) -> bool {
    let Some(d) = m.get(p) else { return false };
    d.children().iter().all(|&c| match m.get(c) {
        Some(cd) if !cd.is_dead() && cd.opcode() == Opcode::NEXT => {
            cd.operands().len() == 2
                && cd
                    .operands()
                    .iter()
                    .chain(cd.decorations())
                    .chain(cd.ty().as_ref())
                    .all(|&h| m.get(h).is_some_and(|hd| !hd.is_dead()))
        }
        _ => true,
    })
}

/// [`LowerError::Invalid`] for the verifier's errors (the first one, and how many more).
fn invalid(m: &Module, errs: &[VerifyError]) -> LowerError {
    match errs.first() {
        Some(e) => LowerError::Invalid {
            proc_: e.func.map(|f| noir::describe(m, f)),
            inst: noir::describe(m, e.inst),
            first: e.to_string(),
            more: errs.len() - 1,
        },
        None => LowerError::Invalid {
            proc_: None,
            inst: String::new(),
            first: "unknown problem".into(),
            more: 0,
        },
    }
}
