//! Every module the generator produces (valid, and using every core opcode) compiles to an
//! object file without error, once its procs are lowered: the lowering handles whatever the
//! verifier accepts.

use irkit_testgen::{Config, Entropy, module};

#[test]
fn generated_modules_compile_to_objects() {
    // Linked modules have no unresolved imports and no generics (the linker specializes them;
    // linked generated programs, generics included, run in crates/cli/tests/backends.rs).
    let cfg = Config {
        dangling_imports: false,
        generics: false,
        ..Config::default()
    };
    for seed in 0..150 {
        let mut m = module(&mut Entropy::from_seed(seed), &cfg);
        irkit_core::verify::verify(&m).expect("generated modules verify");
        // Procs are lowered to functions before a native back end, as the tools do.
        irkit_noir::lower_procs(&mut m).expect("generated procs lower");
        if let Err(e) = irkit_cranelift::emit_object(&m) {
            panic!(
                "seed {seed}: {e}\n{}",
                irkit_text::print(&m)
                    .lines()
                    .take(40)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}
