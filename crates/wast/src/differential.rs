//! Differential runs: one WebAssembly module instantiated on two back ends, every exported
//! function called on both (with the same arguments), the results compared exactly: the same
//! values bit for bit (a reference, an address of its back end, by whether it is null), or the
//! same trap kind. The oracle for random modules (the `wasm_agree`
//! fuzz target and `tests/differential.rs`), which no expected-results file can cover.

use irkit_backend::{Backend, Call, RunOptions, Val};

/// A value of `template`'s type drawn from `bits`: integers take the low bits, floats the
/// bits of their width (any NaN payload included); a pointer (a reference) stays null, as a
/// random address is no reference.
pub fn value_like(template: Val, bits: u64) -> Val {
    match template {
        Val::I1(_) => Val::I1(bits & 1 == 1),
        Val::I8(_) => Val::I8(bits as u8),
        Val::I16(_) => Val::I16(bits as u16),
        Val::I32(_) => Val::I32(bits as u32),
        Val::I64(_) => Val::I64(bits),
        Val::F32(_) => Val::F32(bits as u32),
        Val::F64(_) => Val::F64(bits),
        Val::Ptr(_) => Val::Ptr(0),
        Val::V128(_) => Val::V128((u128::from(bits) | (u128::from(!bits) << 64)).to_le_bytes()),
    }
}

use crate::store::{InstantiateError, Store};

/// A result as the two back ends can agree on it: a reference (a pointer, an address of its
/// back end's own) by whether it is null.
fn comparable(v: Val) -> Val {
    match v {
        Val::Ptr(p) => Val::Ptr(u64::from(p != 0)),
        v => v,
    }
}

/// What a differential run compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compared {
    /// Calls made on both back ends with the same outcome.
    pub calls: usize,
    /// Of those, calls that trapped.
    pub traps: usize,
}

/// Two stores, one per back end, that modules are compared on one after another: each
/// module is compiled once into the live program of each store and its exports called there,
/// so a comparison costs what the module costs (the spectest module and each back end's
/// session are made once per pair, not once per module). Modules instantiated earlier stay
/// live but unreachable from later ones (nothing registers them), so a comparison does not
/// depend on what was compared before, except for the memory the pair holds: drop the pair
/// after [`Differential::modules`] grows large.
pub struct Differential {
    names: [String; 2],
    stores: [Store; 2],
    modules: usize,
}

impl Differential {
    /// A pair of fresh stores on `a` and `b`, with `opts` (see [`Store::new`]). Their modules
    /// are translated with canonical NaNs (`irkit_wasm::Nans::Canonical`): wasm lets a float
    /// operation return any of several NaNs, and back ends pick different ones, so only
    /// canonical NaNs compare bit for bit.
    pub fn new(a: &dyn Backend, b: &dyn Backend, opts: &RunOptions) -> Result<Self, String> {
        let wasm = irkit_wasm::Options {
            nans: irkit_wasm::Nans::Canonical,
            ..irkit_wasm::Options::default()
        };
        let store = |be: &dyn Backend| {
            Store::with_options(be, opts, wasm).map_err(|e| format!("{}: {e}", be.name()))
        };
        Ok(Differential {
            names: [a.name().to_string(), b.name().to_string()],
            stores: [store(a)?, store(b)?],
            modules: 0,
        })
    }

    /// How many modules this pair has compared (instantiated or not).
    pub fn modules(&self) -> usize {
        self.modules
    }

    /// Instantiates `wasm` on both back ends and calls each exported function with numeric
    /// parameters on both, in export order, `rounds` times over, each call seeing the state
    /// the earlier calls left. The arguments are `arg` of a zero of each parameter's type (so
    /// `|v| v` passes zeros; a random source passes random values of that type). `Ok` with
    /// what was compared when every outcome agrees (a module the front end refuses, or
    /// neither instantiates alike, compares nothing); `Err` naming the first disagreement.
    pub fn compare(
        &mut self,
        wasm: &[u8],
        rounds: usize,
        arg: &mut dyn FnMut(Val) -> Val,
    ) -> Result<Compared, String> {
        self.modules += 1;
        let [a, b] = &self.names;
        let [sa, sb] = &mut self.stores;
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
                    "instantiation differs: {a} {}, {b} {}",
                    show_instance(&ra),
                    show_instance(&rb)
                ));
            }
        };
        let mut compared = Compared::default();
        let exports = sa.exported_functions(&ia);
        for _ in 0..rounds {
            for (field, zeros) in &exports {
                let Some(zeros) = zeros else { continue };
                let args: Vec<Val> = zeros.iter().copied().map(&mut *arg).collect();
                let ca = sa
                    .invoke(&ia, field, &args)
                    .map_err(|e| format!("{a}: {e}"))?;
                let cb = sb
                    .invoke(&ib, field, &args)
                    .map_err(|e| format!("{b}: {e}"))?;
                let same = match (&ca, &cb) {
                    (Call::Trapped { kind: ka, .. }, Call::Trapped { kind: kb, .. }) => ka == kb,
                    (Call::Returned(va), Call::Returned(vb)) => va
                        .iter()
                        .copied()
                        .map(comparable)
                        .eq(vb.iter().copied().map(comparable)),
                    _ => ca == cb,
                };
                if !same {
                    return Err(format!(
                        "{field:?} with {args:?} differs: {a} {ca:?}, {b} {cb:?}"
                    ));
                }
                compared.calls += 1;
                compared.traps += usize::from(matches!(ca, Call::Trapped { .. }));
            }
        }
        Ok(compared)
    }
}

fn show_instance(r: &Result<String, InstantiateError>) -> String {
    match r {
        Ok(_) => "instantiated".into(),
        Err(e) => e.to_string(),
    }
}
