//! Random valid WebAssembly modules (`irkit_testgen::wasm`, wasm-smith) through the front end,
//! the linker and both back ends: every exported function must end the same way on the
//! interpreter and in native code (the same values bit for bit, or the same trap kind), called
//! with the same arguments, drawn from the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(wasm) = irkit_testgen::wasm::module(data) else {
        return;
    };
    let opts = irkit_backend::RunOptions::default();
    // The arguments come from the same bytes, read from the end.
    let mut tail = data.iter().rev().copied();
    let mut arg = |v| {
        let bits = (0..8).fold(0u64, |acc, _| acc << 8 | u64::from(tail.next().unwrap_or(0)));
        irkit_wast::differential::value_like(v, bits)
    };
    if let Err(e) = irkit_wast::differential::compare(
        &wasm,
        &irkit_interp::InterpBackend,
        &irkit_cranelift::Jit,
        &opts,
        &mut arg,
    ) {
        panic!("the back ends disagree: {e}");
    }
});
