//! Differential runs: one WebAssembly module instantiated on two back ends, every exported
//! function called on both (with the same arguments), the results compared exactly: the same
//! values bit for bit, or the same trap kind. The oracle for random modules (the `wasm_agree`
//! fuzz target and `tests/differential.rs`), which no expected-results file can cover.

use irkit_backend::{Backend, Call, RunOptions, Val};

/// A value of `template`'s type drawn from `bits`: integers take the low bits, floats the
/// bits of their width (any NaN payload included).
pub fn value_like(template: Val, bits: u64) -> Val {
    match template {
        Val::I1(_) => Val::I1(bits & 1 == 1),
        Val::I8(_) => Val::I8(bits as u8),
        Val::I16(_) => Val::I16(bits as u16),
        Val::I32(_) => Val::I32(bits as u32),
        Val::I64(_) => Val::I64(bits),
        Val::F32(_) => Val::F32(bits as u32),
        Val::F64(_) => Val::F64(bits),
        Val::Ptr(_) => Val::Ptr(bits),
    }
}

use crate::store::{InstantiateError, Store};

/// What a differential run compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compared {
    /// Calls made on both back ends with the same outcome.
    pub calls: usize,
    /// Of those, calls that trapped.
    pub traps: usize,
}

/// Instantiates `wasm` on `a` and on `b` and calls each exported function with numeric
/// parameters on both, in export order, each call seeing the state the earlier calls left.
/// The arguments are `arg` of a zero of each parameter's type (so `|v| v` passes zeros; a
/// random source passes random values of that type). `Ok` with what was compared when every outcome agrees (a module the
/// front end refuses, or neither instantiates alike, compares nothing); `Err` naming the
/// first disagreement.
pub fn compare(
    wasm: &[u8],
    a: &dyn Backend,
    b: &dyn Backend,
    opts: &RunOptions,
    arg: &mut dyn FnMut(Val) -> Val,
) -> Result<Compared, String> {
    let store = |be: &dyn Backend| Store::new(be, opts).map_err(|e| format!("{}: {e}", be.name()));
    let (mut sa, mut sb) = (store(a)?, store(b)?);
    let (ia, ib) = (sa.instantiate(wasm), sb.instantiate(wasm));
    let (ia, ib) = match (ia, ib) {
        (Ok(ia), Ok(ib)) => (ia, ib),
        (Err(InstantiateError::Invalid(_) | InstantiateError::Unsupported(_)), _) => {
            return Ok(Compared::default());
        }
        (
            Err(InstantiateError::Trapped { kind: ka }),
            Err(InstantiateError::Trapped { kind: kb }),
        ) if ka == kb => {
            return Ok(Compared::default());
        }
        (ra, rb) => {
            return Err(format!(
                "instantiation differs: {} {}, {} {}",
                a.name(),
                show_instance(&ra),
                b.name(),
                show_instance(&rb)
            ));
        }
    };
    let mut compared = Compared::default();
    for (field, args) in sa.exported_functions(&ia) {
        let Some(zeros) = args else { continue };
        let args: Vec<Val> = zeros.into_iter().map(&mut *arg).collect();
        let ca = sa
            .invoke(&ia, &field, &args)
            .map_err(|e| format!("{}: {e}", a.name()))?;
        let cb = sb
            .invoke(&ib, &field, &args)
            .map_err(|e| format!("{}: {e}", b.name()))?;
        let same = match (&ca, &cb) {
            (Call::Trapped { kind: ka, .. }, Call::Trapped { kind: kb, .. }) => ka == kb,
            _ => ca == cb,
        };
        if !same {
            return Err(format!(
                "{field:?} with {args:?} differs: {} {ca:?}, {} {cb:?}",
                a.name(),
                b.name()
            ));
        }
        compared.calls += 1;
        compared.traps += usize::from(matches!(ca, Call::Trapped { .. }));
    }
    Ok(compared)
}

fn show_instance(r: &Result<String, InstantiateError>) -> String {
    match r {
        Ok(_) => "instantiated".into(),
        Err(e) => e.to_string(),
    }
}
