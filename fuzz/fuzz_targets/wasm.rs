//! Arbitrary bytes into the WebAssembly front end: `Ok` or an error, never a panic. A module
//! that translates must verify and encode to bytes that read back; translated with its
//! function bodies in three shards (what a large module gets on every core), it must be the
//! same file, and a refused one the same error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let translated = irkit_wasm::translate(data, "m");
    let sharded = irkit_wasm::translate_in_shards(data, "m", irkit_wasm::features(), 3);
    let (module, sharded) = match (translated, sharded) {
        (Ok(module), Ok(sharded)) => (module, sharded),
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "three shards fail otherwise");
            return;
        }
        (a, b) => panic!("one translation failed: serial {:?}, sharded {:?}", a.err(), b.err()),
    };
    if let Err(errors) = irkit_core::verify::verify(&module) {
        panic!("a translated module does not verify: {errors:?}");
    }
    let bytes = irkit_format::write(&module).expect("a verified module encodes");
    let in_shards = irkit_format::write(&sharded).expect("a module in shards encodes");
    assert!(bytes == in_shards, "three shards make another file");
    irkit_format::ModuleView::from_bytes(&bytes).expect("its bytes read back");
});
