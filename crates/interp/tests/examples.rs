//! The examples through the interpreter's API where the `; expect:` lines of the examples
//! (checked for every example by `tests/tests/examples.rs`) cannot say it: the two-module
//! program's main module, run without its library, traps on the missing import.

mod common;

use irkit_interp::Interpreter;

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
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
