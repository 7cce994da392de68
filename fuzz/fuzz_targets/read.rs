//! Arbitrary bytes into the binary reader, then a walk of every definition: `Ok` or an error,
//! never a panic, an abort, unbounded memory or a hang. A module that reads must verify without
//! panicking, print, and re-encode to bytes that read back to an equal module.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(view) = irkit_format::ModuleView::from_bytes(data) else {
        return;
    };
    let _ = view.symbols();
    let _ = view.sections();
    for i in 0..view.def_count() {
        if let Ok(def) = view.def(i) {
            for inst in def.insts() {
                let _ = inst.opcode();
                let _ = inst.ty();
                for op in inst.operands() {
                    let _ = op;
                }
                let _ = inst.payload();
            }
        }
        let _ = view.def_info(i);
    }
    let _ = view.validate_all();
    let Ok(module) = view.materialize() else {
        return;
    };
    let _ = irkit_core::verify::verify(&module);
    let _ = irkit_text::print(&module);
    let bytes = irkit_format::write(&module).expect("a module that was read can be written");
    let again = irkit_format::read(&bytes).expect("written bytes read back");
    irkit_core::equiv::modules_equal(&module, &again).expect("read(write(m)) == m");
});
