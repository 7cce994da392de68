//! Random valid WebAssembly modules (`irkit_testgen::wasm`, wasm-smith) through the front end,
//! the linker and both back ends: every exported function must end the same way on the
//! interpreter and in native code (the same values bit for bit, or the same trap kind), called
//! with the same arguments, drawn from the input.
//!
//! One execution costs what its module costs: the two stores (each with its back-end session
//! and the spectest module) are made once and reused for [`MODULES_PER_PAIR`] modules, and
//! each module is compiled once and its exports called [`ROUNDS`] times over. wasm-smith needs
//! entropy to make a module worth comparing (a few hundred bytes make a handful of functions):
//! `.ci/run` gives this target `-max_len` and `-len_control=0`, and `fuzz/corpus/wasm_agree`
//! holds seeds of that size.
#![no_main]

use std::cell::RefCell;

use irkit_wast::differential::{Differential, value_like};
use libfuzzer_sys::fuzz_target;

/// Modules compared on one pair of stores before it is dropped (its live programs hold every
/// module compared so far).
const MODULES_PER_PAIR: usize = 256;

/// How many times each export is called, with fresh arguments each time.
const ROUNDS: usize = 3;

thread_local! {
    static PAIR: RefCell<Option<Differential>> = const { RefCell::new(None) };
}

fuzz_target!(|data: &[u8]| {
    let Some(wasm) = irkit_testgen::wasm::module(data) else {
        return;
    };
    PAIR.with_borrow_mut(|pair| {
        // A pair that holds many modules is dropped before the next one is made.
        if pair.as_ref().is_some_and(|p| p.modules() >= MODULES_PER_PAIR) {
            *pair = None;
        }
        let pair = pair.get_or_insert_with(|| {
            Differential::new(
                &irkit_interp::InterpBackend,
                &irkit_cranelift::Jit,
                &irkit_backend::RunOptions::default(),
            )
            .unwrap_or_else(|e| panic!("no stores: {e}"))
        });
        // The arguments come from the same bytes, read from the end (again and again when
        // there are more arguments than bytes).
        let mut tail = data.iter().rev().copied().cycle();
        let mut arg = |v| {
            let bits = (0..8).fold(0u64, |acc, _| acc << 8 | u64::from(tail.next().unwrap_or(0)));
            value_like(v, bits)
        };
        if let Err(e) = pair.compare(&wasm, ROUNDS, &mut arg) {
            panic!("the back ends disagree: {e}");
        }
    });
});
