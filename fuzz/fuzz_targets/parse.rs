//! Arbitrary text into the parser: it returns a module or errors, never panics. Errors are the
//! same on a second parse and carry no raw control characters. A module it returns must print,
//! re-parse to an equal module, and verify without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let module = match irkit_text::parse(text, "fuzz.ir") {
        Ok(m) => m,
        Err(errors) => {
            // Messages are deterministic (no hash-map order, no addresses) and carry no raw
            // control characters.
            let again = irkit_text::parse(text, "fuzz.ir").expect_err("the same text fails again");
            let rendered = errors.render();
            assert_eq!(rendered, again.render(), "the same errors, in the same order");
            assert!(
                !rendered.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
                "a raw control character in {rendered:?}"
            );
            return;
        }
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
