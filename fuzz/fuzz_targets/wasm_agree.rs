//! Random valid WebAssembly modules (`irkit_testgen::wasm`, wasm-smith) through the front end,
//! the linker and both back ends: every exported function must end the same way on the
//! interpreter and in native code (the same values bit for bit, or the same trap kind).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(wasm) = irkit_testgen::wasm::module(data) else {
        return;
    };
    let opts = irkit_backend::RunOptions::default();
    if let Err(e) = irkit_wast::differential::compare(
        &wasm,
        &irkit_interp::InterpBackend,
        &irkit_cranelift::Jit,
        &opts,
    ) {
        panic!("the back ends disagree: {e}");
    }
});
