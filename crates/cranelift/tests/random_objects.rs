//! Random programs with classes (`irkit_testgen::object_program`: a hierarchy of traits,
//! classes and an object over two modules, and a `main` using every object instruction) give
//! the result or trap kind the generator worked out from the rules of spec/linking.md
//! ("Objects") in the interpreter, and the same in the interpreter after `-O` and in the JIT
//! before and after `-O` (issue 39, "Done when"). The test also checks that the seeds
//! reach every outcome it compares: results and each of the named traps.

use std::collections::BTreeMap;

use irkit_backend::{Backend, Call, RunOptions};
use irkit_link::{Input, LinkOptions, link};
use irkit_testgen::{Config, Entropy, object_program};

/// Seeds run (`IRKIT_RANDOM_SEEDS` to change).
const SEEDS: u64 = 150;

/// The program of `seed`, linked, with or without the `-O` passes.
fn linked(seed: u64, optimize: bool) -> irkit_core::Module {
    let set = object_program(&mut Entropy::from_seed(seed), &Config::default()).set;
    let inputs = set
        .modules
        .iter()
        .map(|(name, m)| Input::from_module(name, m).unwrap_or_else(|e| panic!("seed {seed}: {e}")))
        .collect();
    let opts = LinkOptions {
        devirtualize: optimize,
        inline: optimize,
        ..LinkOptions::default()
    };
    match link(inputs, &opts) {
        Ok(l) => l.module,
        Err(e) => panic!("seed {seed}: {e}\n{set:?}"),
    }
}

/// `main`'s result, or the trap's kind.
fn run(backend: &dyn Backend, m: &irkit_core::Module) -> Result<u64, String> {
    let opts = RunOptions {
        fuel: Some(10_000_000),
        ..RunOptions::default()
    };
    let mut s = backend.session(&opts).expect("a session starts");
    s.load(m.clone()).expect("the linked program loads");
    match s.call("main", &[]).expect("main is called") {
        Call::Returned(v) => match v.as_slice() {
            [irkit_backend::Val::I32(x)] => Ok(u64::from(*x)),
            other => Err(format!("unexpected result {other:?}")),
        },
        Call::Trapped { kind, .. } => Err(kind),
        Call::Exited(n) => Err(format!("exit {n}")),
    }
}

#[test]
fn programs_with_classes_agree_on_the_interpreter_and_the_jit_before_and_after_o() {
    let seeds: u64 = std::env::var("IRKIT_RANDOM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEEDS);
    let interp = &irkit_interp::InterpBackend;
    let jit = &irkit_cranelift::Jit;
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    for seed in 0..seeds {
        let program = object_program(&mut Entropy::from_seed(seed), &Config::default());
        let plain = linked(seed, false);
        let optimized = linked(seed, true);
        let want = run(interp, &plain);
        let show = || format!("{program:?}");
        let expected = program.expected.map(u64::from).map_err(str::to_string);
        assert_eq!(
            want,
            expected,
            "seed {seed}: the interpreter differs from what the rules give\n{}",
            show()
        );
        for (what, got) in [
            ("the interpreter after -O", run(interp, &optimized)),
            ("the JIT", run(jit, &plain)),
            ("the JIT after -O", run(jit, &optimized)),
        ] {
            assert_eq!(got, want, "seed {seed}: {what} differs\n{}", show());
        }
        let key = match &want {
            Ok(_) => "result".to_string(),
            Err(kind) => kind.clone(),
        };
        *outcomes.entry(key).or_default() += 1;
    }
    eprintln!("{seeds} programs with classes: {outcomes:?}");
    if seeds >= SEEDS {
        for kind in [
            "result",
            "invalid cast",
            "null receiver",
            "method not found",
        ] {
            assert!(
                outcomes.contains_key(kind),
                "no program of {seeds} ends with {kind}: {outcomes:?}"
            );
        }
    }
}
