//! Random WebAssembly modules (`irkit_testgen::wasm`, wasm-smith) through the front end, the
//! linker and both back ends: every exported function's outcome must be the same on the
//! interpreter and in native code, called with the same random arguments (the `wasm_agree`
//! fuzz target explores further). `IRKIT_RANDOM_SEEDS=N` runs N seeds from
//! `IRKIT_FIRST_SEED` (0); `IRKIT_DIFF_DUMP=DIR` writes a disagreeing module to
//! `DIR/seedS.wasm` (`ir-wasm` translates it for reading).

use irkit_backend::RunOptions;
use irkit_testgen::Entropy;
use irkit_wast::differential::{Compared, Differential, value_like};

/// How many random modules: `IRKIT_RANDOM_SEEDS`, else 48.
fn seeds() -> u64 {
    std::env::var("IRKIT_RANDOM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48)
}

#[test]
fn the_back_ends_agree_on_random_modules() {
    let mut total = Compared::default();
    let mut modules = 0;
    let first: u64 = std::env::var("IRKIT_FIRST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // One pair of stores for every module, as the fuzz target keeps one: each module is
    // compiled once and its exports called twice.
    let mut pair = Differential::new(
        &irkit_interp::InterpBackend,
        &irkit_cranelift::Jit,
        &RunOptions::default(),
    )
    .expect("the stores");
    for seed in first..first + seeds() {
        let mut e = Entropy::from_seed(seed);
        let bytes: Vec<u8> = (0..4096).map(|_| e.byte()).collect();
        let Some(wasm) = irkit_testgen::wasm::module(&bytes) else {
            continue;
        };
        modules += 1;
        match pair.compare(
            &wasm,
            2,
            // Small values half the time (loop bounds, indices), any bits otherwise.
            &mut |v| {
                let bits = if e.chance(50) { e.u64() % 64 } else { e.u64() };
                value_like(v, bits)
            },
        ) {
            Ok(c) => {
                total.calls += c.calls;
                total.traps += c.traps;
            }
            Err(e) => {
                if let Some(dir) = std::env::var_os("IRKIT_DIFF_DUMP") {
                    let path = std::path::Path::new(&dir).join(format!("seed{seed}.wasm"));
                    std::fs::write(&path, &wasm).expect("dump the module");
                }
                panic!("seed {seed}: {e}")
            }
        }
    }
    eprintln!(
        "{modules} modules, {} calls ({} traps) compared",
        total.calls, total.traps
    );
    // The generator makes modules with exports; a run that compares nothing tests nothing.
    assert!(
        total.calls > total.traps && total.calls >= seeds() as usize,
        "{total:?}"
    );
}
