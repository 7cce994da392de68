//! Bit flips and truncations of valid binary modules: reading, walking, materializing,
//! verifying, printing and linking what is left is `Ok` or an error, never a panic.
//!
//! An input that starts with the format's magic bytes is used as a file as it is (the seed
//! corpus holds the golden `.irm` files; libFuzzer mutates them). Any other input generates a
//! valid module, writes it, and then reads mutations from the rest of the input: a few bit
//! flips and maybe a truncation.
#![no_main]

use irkit_format::{MAGIC, ModuleView};
use irkit_link::{Input, LinkOptions, link};
use irkit_testgen::{Config, Entropy, module};
use libfuzzer_sys::fuzz_target;

fn mutated(data: &[u8]) -> Vec<u8> {
    if data.starts_with(&MAGIC) {
        return data.to_vec();
    }
    // The first half shapes the module, the second half the damage.
    let (shape, damage) = data.split_at(data.len() / 2);
    let m = module(&mut Entropy::new(shape), &Config::default());
    let mut bytes = irkit_format::write(&m).expect("a valid module writes");
    let mut e = Entropy::new(damage);
    for _ in 0..e.range(1, 8) {
        let at = e.below(bytes.len());
        bytes[at] ^= 1 << e.below(8);
    }
    if e.chance(30) {
        let len = e.below(bytes.len());
        bytes.truncate(len);
    }
    bytes
}

fuzz_target!(|data: &[u8]| {
    let bytes = mutated(data);
    if let Ok(view) = ModuleView::from_bytes(&bytes) {
        let _ = view.symbols();
        let _ = view.sections();
        for i in 0..view.def_count() {
            if let Ok(def) = view.def(i) {
                for inst in def.insts() {
                    let _ = (inst.opcode(), inst.ty(), inst.payload());
                    for op in inst.operands() {
                        let _ = op;
                    }
                }
            }
            let _ = view.def_info(i);
        }
        let _ = view.validate_all();
        if let Ok(m) = view.materialize() {
            let _ = irkit_core::verify::verify(&m);
            let _ = irkit_text::print(&m);
            let again = irkit_format::write(&m).expect("a module that was read can be written");
            let reread = irkit_format::read(&again).expect("written bytes read back");
            irkit_core::equiv::modules_equal(&m, &reread).expect("read(write(m)) == m");
        }
    }
    for library in [true, false] {
        let Ok(input) = Input::from_bytes("mutated.irm", &bytes) else {
            return;
        };
        let opts = LinkOptions {
            library,
            ..LinkOptions::default()
        };
        let _ = link(vec![input], &opts);
    }
});
