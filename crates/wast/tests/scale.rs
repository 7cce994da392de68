//! Instantiating a module costs what the module costs (spec/wasm.md, "Scripts"): a script of
//! ten times as many small modules does about ten times the work, on every back end. The work
//! is counted deterministically: the bytes allocated while the script runs (a copy, a
//! verification, a preparation or a compilation of the whole live program per module, as the
//! store once made, grows with the square of the number of modules), and the instructions the
//! links copied into the live program (each module's own).

use irkit_backend::{Backend, RunOptions};
use irkit_testkit::{Counting, Heap};
use irkit_wast::{Store, Verdict, run_script};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A script of `n` small modules, each with an `assert_return` of its export; every tenth
/// exports a global, a memory and a function and is registered, and the module five after it
/// imports that function and memory.
fn script(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        match i % 10 {
            0 => {
                s += &format!(
                    "(module (global (export \"g\") i32 (i32.const {i})) (memory (export \"m\") 1)\n\
                     (func (export \"f\") (result i32) i32.const 1))\n(register \"m{i}\")\n"
                );
            }
            5 => {
                let j = i - 5;
                s += &format!(
                    "(module (import \"m{j}\" \"f\" (func $f (result i32)))\n\
                     (import \"m{j}\" \"m\" (memory 1))\n\
                     (func (export \"f\") (result i32) call $f i32.const 0 i32.load8_u i32.add))\n"
                );
            }
            _ => s += "(module (func (export \"f\") (result i32) i32.const 1))\n",
        }
        s += "(assert_return (invoke \"f\") (i32.const 1))\n";
    }
    s
}

/// The bytes allocated while `n` modules run on `backend`, every command passing.
fn allocated(backend: &dyn Backend, n: usize) -> u64 {
    let text = script(n);
    let (report, heap) =
        Heap::of(|| run_script(&text, "scale.wast", backend, &RunOptions::default()));
    let failed: Vec<String> = report
        .results
        .iter()
        .filter(|r| !matches!(r.verdict, Verdict::Passed))
        .map(|r| format!("line {}: {:?}", r.line, r.verdict))
        .collect();
    assert!(failed.is_empty(), "{}: {failed:?}", backend.name());
    assert_eq!(report.results.len(), 2 * n + n.div_ceil(10));
    heap.allocated
}

// One test: the allocation counter is the process's, so nothing may run beside it.
#[test]
fn instantiating_costs_what_the_module_costs() {
    ten_times_the_modules_is_about_ten_times_the_work();
    links_copy_each_module_once();
}

fn ten_times_the_modules_is_about_ten_times_the_work() {
    let backends: [Box<dyn Backend>; 2] = [
        Box::new(irkit_interp::InterpBackend),
        Box::new(irkit_cranelift::Jit),
    ];
    for b in &backends {
        let small = allocated(b.as_ref(), 20);
        let large = allocated(b.as_ref(), 200);
        let ratio = large as f64 / small as f64;
        eprintln!(
            "{}: {small} bytes for 20 modules, {large} for 200 ({ratio:.1})",
            b.name()
        );
        // Linear work gives about 10 (8 here, the store's setup being shared); work that
        // grows with the live program per module gives more the more modules there are.
        assert!(
            ratio < 14.0,
            "{}: {small} bytes allocated for 20 modules, {large} for 200 (ratio {ratio:.1})",
            b.name()
        );
    }
}

fn links_copy_each_module_once() {
    let opts = RunOptions::default();
    let copied = |n: usize| {
        let mut store = Store::new(&irkit_interp::InterpBackend, &opts).expect("a store");
        let before = store.stats();
        for _ in 0..n {
            let wasm = irkit_wasm::to_binary(
                b"(module (func (export \"f\") (result i32) i32.const 1))".as_slice(),
            )
            .expect("assembles");
            store.instantiate(&wasm).expect("instantiates");
        }
        let after = store.stats();
        assert_eq!(after.modules - before.modules, n);
        after.insts_linked - before.insts_linked
    };
    let (small, large) = (copied(10), copied(100));
    assert!(small > 0);
    assert_eq!(
        large,
        10 * small,
        "the same module copies as many instructions each time"
    );
}
