//! Generated module sets through the linker, with options chosen by the input (the
//! optimization passes included): `Ok` or an error, never a panic. Executable links of a generated set must succeed (every import is
//! provided), a successful link must verify, and the inputs' order must not matter.
#![no_main]

use irkit_link::{Input, LinkOptions, link};
use irkit_testgen::{Config, Entropy, module_set};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut e = Entropy::new(data);
    let opts = LinkOptions {
        library: e.chance(50),
        internalize: e.chance(25),
        link_stubs: e.chance(25),
        debug_info: !e.chance(25),
        exports: if e.chance(30) {
            vec!["hook".to_string(), "no_such_export".to_string()]
        } else {
            Vec::new()
        },
        devirtualize: e.chance(40),
        inline: e.chance(40),
        ..LinkOptions::default()
    };
    let cfg = Config {
        dangling_imports: false,
        ..Config::default()
    };
    let set = module_set(&mut e, &cfg);
    let files: Vec<(String, Vec<u8>)> = set
        .modules
        .iter()
        .map(|(name, m)| {
            (
                name.clone(),
                irkit_format::write(m).expect("a valid module writes"),
            )
        })
        .collect();
    let run = |order: &mut dyn Iterator<Item = &(String, Vec<u8>)>| {
        let inputs: Vec<Input> = order
            .map(|(name, bytes)| Input::from_bytes(name, bytes).expect("written bytes open"))
            .collect();
        link(inputs, &opts).map(|linked| {
            irkit_core::verify::verify(&linked.module).expect("a linked module verifies");
            irkit_format::write(&linked.module).expect("a linked module writes")
        })
    };
    let forward = run(&mut files.iter());
    let backward = run(&mut files.iter().rev());
    match (&forward, &backward) {
        (Ok(a), Ok(b)) => assert!(a == b, "the inputs' order changes the linked bytes"),
        (Err(_), Err(_)) => {}
        _ => panic!("one order links, the other does not"),
    }
    // Without the unknown extra root, a generated set always links.
    if opts.exports.is_empty() && !opts.internalize {
        if let Err(errors) = forward {
            panic!("a generated set does not link: {errors}\n{set:?}");
        }
    }
});
