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

/// A program that keeps `keep` of the blocks it allocates (`malloc`, `calloc`, `realloc`),
/// frees the others, and returns the byte it wrote into the last one.
fn heap_program(keep: bool) -> irkit_core::Module {
    let tail = if keep {
        ""
    } else {
        "  call @free(%a)\n  call @free(%c)\n  call @free(%r)\n"
    };
    let text = format!(
        r#"
#[extern("malloc")]
@malloc: fn(i64) -> ptr = func
#[extern("calloc")]
@calloc: fn(i64, i64) -> ptr = func
#[extern("realloc")]
@realloc: fn(ptr, i64) -> ptr = func
#[extern("free")]
@free: fn(ptr) -> void = func

#[export("main")]
@main: fn() -> i32 = func {{
^entry:
  %a: ptr = call @malloc(i64 1024)
  %b: ptr = call @malloc(i64 64)
  %c: ptr = call @calloc(i64 16, i64 16)
  %r: ptr = call @realloc(%b, i64 100000)
  store %r, i8 7
  %v: i8 = load %r
  %w: i32 = zext %v
{tail}  ret %w
}}
"#
    );
    let m = irkit_text::parse(&text, "heap.ir").expect("parses");
    irkit_core::verify::verify(&m).expect("verifies");
    m
}

/// What a JIT-compiled program leaves on the C heap belongs to its compiled module: counted
/// while it lives, freed with it (a process running many programs does not keep them all).
#[test]
fn the_c_heap_of_a_program_is_its_compiled_modules() {
    for keep in [true, false] {
        let compiled =
            irkit_cranelift::jit::compile(&heap_program(keep), "main").expect("compiles");
        assert_eq!(compiled.heap_blocks(), 0);
        assert_eq!(compiled.run().expect("runs"), 7);
        // `realloc` moved or kept `b`: either way one block stands for it.
        assert_eq!(
            compiled.heap_blocks(),
            if keep { 3 } else { 0 },
            "keep {keep}"
        );
        assert_eq!(compiled.run().expect("runs again"), 7);
        assert_eq!(
            compiled.heap_blocks(),
            if keep { 6 } else { 0 },
            "keep {keep}"
        );
    }
}

/// The same for a session: what its calls leave on the C heap is counted by it, and freed with
/// it (a wasm instance's linear memory, say).
#[test]
fn the_c_heap_of_a_session_is_its_own() {
    use irkit_backend::Session;
    let mut session = irkit_cranelift::JitSession::new(&RunOptions::default());
    session.load(heap_program(true)).expect("loads");
    assert_eq!(session.heap_blocks(), 0);
    for calls in 1..=3 {
        let r = session.call("main", &[]).expect("calls");
        assert_eq!(
            r,
            irkit_backend::Call::Returned(vec![irkit_backend::Val::I32(7)])
        );
        assert_eq!(session.heap_blocks(), 3 * calls);
    }
}
