//! Arbitrary text into the parser: it returns a module or errors, never panics. A module it
//! returns must print, re-parse to an equal module, and verify without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(module) = irkit_text::parse(text, "fuzz.ir") else {
        return;
    };
    let _ = irkit_core::verify::verify(&module);
    let printed = irkit_text::print(&module);
    let again = irkit_text::parse(&printed, "printed.ir").expect("printed text parses");
    irkit_core::equiv::modules_equal(&module, &again).expect("parse(print(m)) == m");
    assert_eq!(
        irkit_text::print(&again),
        printed,
        "printing is a fixed point"
    );
});
