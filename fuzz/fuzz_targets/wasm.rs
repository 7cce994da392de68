//! Arbitrary bytes into the WebAssembly front end: `Ok` or an error, never a panic. A module
//! that translates must verify and encode to bytes that read back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = irkit_wasm::translate(data, "m") else {
        return;
    };
    if let Err(errors) = irkit_core::verify::verify(&module) {
        panic!("a translated module does not verify: {errors:?}");
    }
    let bytes = irkit_format::write(&module).expect("a verified module encodes");
    irkit_format::ModuleView::from_bytes(&bytes).expect("its bytes read back");
});
