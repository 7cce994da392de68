//! The JIT in-process, against the interpreter, on the examples that do not trap (a trap would
//! end the test process; the trapping cases run as separate processes in
//! `crates/cli/tests/backends.rs`).

use std::path::Path;

use irkit_backend::{Backend, Outcome, RunOptions};

fn example(name: &str) -> irkit_core::Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("example exists");
    let m = irkit_text::parse(&text, name).expect("example parses");
    irkit_core::verify::verify(&m).expect("example verifies");
    m
}

#[test]
fn examples_agree_with_the_interpreter() {
    for name in [
        "fib_recursive.ir",
        "fib_iterative.ir",
        "fcn_pointer.ir",
        "memory.ir",
        "switch.ir",
    ] {
        let m = example(name);
        let jit = irkit_cranelift::Jit
            .run(&m, &RunOptions::default())
            .unwrap();
        let interp = irkit_interp::InterpBackend
            .run(&m, &RunOptions::default())
            .unwrap();
        assert_eq!(jit, interp, "{name}");
        assert!(matches!(jit, Outcome::Exited(_)));
    }
}

#[test]
fn objects_are_elf_or_macho_with_main() {
    let m = example("fib_recursive.ir");
    let obj = irkit_cranelift::emit_object(&m).unwrap();
    assert!(obj.starts_with(b"\x7fELF") || obj.starts_with(&[0xcf, 0xfa, 0xed, 0xfe]));
    assert!(obj.windows(5).any(|w| w == b"main\0"));
}

#[test]
fn missing_entry_is_an_error() {
    let m = irkit_text::parse("@f: fn() -> i32 = func {\n^e:\n  ret i32 1\n}\n", "t.ir").unwrap();
    let e = irkit_cranelift::Jit
        .run(&m, &RunOptions::default())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "entry function: no function is exported as main"
    );
}

#[test]
fn entry_must_return_an_integer() {
    let m = irkit_text::parse(
        "#[export(\"main\")]\n@main: fn() -> f64 = func {\n^e:\n  ret f64 1.0\n}\n",
        "t.ir",
    )
    .unwrap();
    let e = irkit_cranelift::emit_object(&m).unwrap_err();
    assert!(
        e.to_string().contains("must return an integer or void"),
        "{e}"
    );
}

/// A proc is not compiled behind the caller's back: lowering procs is a pipeline step of its
/// own (`irkit_noir::lower_procs`), and a proc reaching the native back end is reported.
#[test]
fn procs_must_be_lowered_first() {
    let m = example("noir_fib.ir");
    let e = irkit_cranelift::emit_object(&m).unwrap_err().to_string();
    assert!(e.contains("lower procs"), "{e}");
    assert!(!irkit_backend::Backend::runs_procs(&irkit_cranelift::Jit));
    let mut lowered = m.clone();
    irkit_noir::lower_procs(&mut lowered).unwrap();
    let jit = irkit_cranelift::Jit
        .run(&lowered, &RunOptions::default())
        .unwrap();
    let interp = irkit_interp::InterpBackend
        .run(&m, &RunOptions::default())
        .unwrap();
    assert_eq!(jit, interp);
}
