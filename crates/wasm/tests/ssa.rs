//! SSA construction leaves no trivial block parameters: a local that a loop does not change
//! is not a parameter of the loop's header.

use irkit_core::Opcode;

#[test]
fn loops_carry_only_the_locals_they_change() {
    let src = br#"(module (func (export "f") (param i32 i32) (result i32)
        (loop
          local.get 0 i32.const 1 i32.sub local.tee 0
          br_if 0)
        local.get 1))"#;
    let m = irkit_wasm::translate_input(src, "m").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    let f = m.find_export("wasm:m:f").unwrap();
    let params: Vec<usize> = m
        .blocks(f)
        .skip(1)
        .map(|b| m.block_params(b).len())
        .collect();
    // The loop header carries local 0 only; the function's end block its result.
    assert_eq!(params.iter().sum::<usize>(), 2, "{params:?}");
    assert!(
        m.walk()
            .iter()
            .all(|&i| m.opcode(i) != Opcode::PARAM || m.is_live(i))
    );
}
