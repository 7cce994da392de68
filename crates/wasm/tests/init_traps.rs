//! The module initializer traps with wasm's messages when an active segment does not fit:
//! "out of bounds memory access" for a data segment, "out of bounds table access" for an
//! element segment (spec/wasm.md, Traps).

use irkit_interp::Interpreter;

fn init_trap(src: &str) -> String {
    let m = irkit_wasm::translate_input(src.as_bytes(), "t").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    let mut it = Interpreter::new(&m).unwrap();
    match it.run(irkit_wasm::init_symbol("t").as_str(), &[]) {
        Ok(v) => panic!("the initializer returned {v:?}"),
        Err(t) => t.kind.to_string(),
    }
}

#[test]
fn a_data_segment_beyond_the_memory_traps() {
    let src = r#"(module (memory 1) (data (i32.const 65535) "ab"))"#;
    assert_eq!(init_trap(src), "out of bounds memory access");
}

#[test]
fn an_element_segment_beyond_the_table_traps() {
    let src = r#"(module (table 2 funcref) (func $f) (elem (i32.const 1) $f $f))"#;
    assert_eq!(init_trap(src), "out of bounds table access");
}

#[test]
fn segments_that_fit_do_not_trap() {
    let src = r#"(module (memory 1) (table 2 funcref) (func $f)
      (data (i32.const 65534) "ab") (elem (i32.const 0) $f $f))"#;
    let m = irkit_wasm::translate_input(src.as_bytes(), "t").unwrap();
    let mut it = Interpreter::new(&m).unwrap();
    it.run(irkit_wasm::init_symbol("t").as_str(), &[]).unwrap();
}
