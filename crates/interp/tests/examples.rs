//! Every example program gives the result examples/README.md states.

mod common;

use irkit_interp::Interpreter;
use irkit_link::{Input, LinkOptions, link};

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run_example(name: &str) -> (i32, Vec<u8>) {
    let m = common::module(&example(name));
    let mut it = Interpreter::new(&m).expect("interpreter");
    let code = it.run_main().unwrap_or_else(|t| panic!("{name}: {t}"));
    (code, it.take_output())
}

#[test]
fn fib_recursive_returns_55() {
    assert_eq!(run_example("fib_recursive.ir"), (55, vec![]));
}

#[test]
fn fib_iterative_returns_832040() {
    assert_eq!(run_example("fib_iterative.ir"), (832_040, vec![]));
}

#[test]
fn fcn_pointer_returns_69() {
    assert_eq!(run_example("fcn_pointer.ir"), (69, vec![]));
}

#[test]
fn memory_returns_144() {
    assert_eq!(run_example("memory.ir"), (144, vec![]));
}

#[test]
fn switch_returns_122() {
    assert_eq!(run_example("switch.ir"), (122, vec![]));
}

#[test]
fn printing_prints_and_returns_0() {
    let (code, out) = run_example("printing.ir");
    assert_eq!(code, 0);
    assert_eq!(String::from_utf8_lossy(&out), "n = 6170\n");
}

#[test]
fn noir_fib_prints_fib_0_to_20_and_returns_120() {
    // fib(90) = 2880067194370816120, truncated to i32: 2713352312 = -1581614984 as a signed
    // i32 (run_main's code), whose low byte, the process exit code, is 120.
    let (code, out) = run_example("noir_fib.ir");
    assert_eq!(code, -1_581_614_984);
    assert_eq!(code & 0xff, 120);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "0 1 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987 1597 2584 4181 6765\n"
    );
}

#[test]
fn two_module_linked_returns_42() {
    let inputs = vec![
        text_input("lib.ir", &example("two_module/lib.ir")).expect("lib"),
        text_input("main.ir", &example("two_module/main.ir")).expect("main"),
    ];
    let linked = link(inputs, &LinkOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    irkit_core::verify::verify(&linked.module).expect("linked module verifies");
    let mut it = Interpreter::new(&linked.module).expect("interpreter");
    assert_eq!(it.run_main(), Ok(42));
}

#[test]
fn two_module_unlinked_traps_on_import() {
    let m = common::module(&example("two_module/main.ir"));
    let mut it = Interpreter::new(&m).expect("interpreter");
    let t = it.run_main().unwrap_err();
    assert_eq!(
        t.kind,
        irkit_interp::TrapKind::UnresolvedImport("counter".into()),
        "{t}"
    );
}

/// A `.ir` text input, parsed and encoded in memory as `ir-link` does.
fn text_input(name: &str, text: &str) -> Result<Input, String> {
    let module = irkit_text::parse(text, name).map_err(|e| e.to_string())?;
    Input::from_module(name, &module).map_err(|e| e.to_string())
}
