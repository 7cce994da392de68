//! A generated (hence valid) module through text and binary and back: it verifies; printing
//! then parsing gives an equal module and printing is a fixed point; writing then reading gives
//! an equal module, re-writing gives the same bytes, and writing is deterministic.
#![no_main]

use irkit_testgen::ArbitraryModule;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ArbitraryModule| {
    let module = input.0.0;
    if let Err(errors) = irkit_core::verify::verify(&module) {
        panic!("the generator made a module the verifier refuses: {errors:?}");
    }

    let text = irkit_text::print(&module);
    let parsed = irkit_text::parse(&text, "generated.ir").expect("printed text parses");
    irkit_core::equiv::modules_equal(&module, &parsed).expect("parse(print(m)) == m");
    assert_eq!(
        irkit_text::print(&parsed),
        text,
        "printing is a fixed point"
    );

    let bytes = irkit_format::write(&module).expect("a valid module writes");
    assert_eq!(
        irkit_format::write(&module).expect("a valid module writes"),
        bytes,
        "writing is deterministic"
    );
    let read = irkit_format::read(&bytes).expect("written bytes read back");
    irkit_core::equiv::modules_equal(&module, &read).expect("read(write(m)) == m");
    assert_eq!(
        irkit_format::write(&read).expect("a module that was read writes"),
        bytes,
        "writing what was read gives the same bytes"
    );
    irkit_format::ModuleView::from_bytes(&bytes)
        .and_then(|v| v.validate_all())
        .expect("written bytes validate");
});
