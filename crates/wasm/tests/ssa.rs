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

/// Where a local keeps its value (a loop that does not assign it, the arms of an `if` that do
/// not), a read makes no parameter at all: the translation leaves no removed instruction
/// behind in the arena, though the result is the same.
#[test]
fn unchanged_locals_make_no_parameter_to_remove() {
    let src = br#"(module (func (export "f") (param i32 i32) (result i32) (local i32)
        (loop
          (loop
            local.get 1 local.set 2
            local.get 0 i32.const 1 i32.sub local.tee 0
            br_if 0)
          (if (local.get 1) (then (drop (local.get 1))) (else nop))
          local.get 1
          br_if 0)
        (if (local.get 0) (then (local.set 2 (i32.const 7))))
        local.get 1 local.get 2 i32.add))"#;
    let m = irkit_wasm::translate_input(src, "m").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    let removed = (0..m.arena_len())
        .filter(|&k| !m.is_live(irkit_core::Inst::from_index(k as u32)))
        .count();
    assert_eq!(removed, 0);
    // Local 0 is carried by both loops, local 2 into the block after the last `if` (7, or
    // local 1 it was set to), and the function's end block has its result.
    let f = m.find_export("wasm:m:f").unwrap();
    let params: usize = m.blocks(f).skip(1).map(|b| m.block_params(b).len()).sum();
    assert_eq!(params, 4);
}
