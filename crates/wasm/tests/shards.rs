//! Function bodies translated in shards on every core (`translate_in_shards`, what
//! `translate` does for a large module) make the module a serial translation makes: the same
//! file, byte for byte, for every number of shards, including the definitions bodies make on
//! first use (signature ids, function records) when several shards make the same one.

use irkit_wasm::{features, translate_in_shards};

/// A module of `n` functions of two types, each adding to a global, storing to memory,
/// looping, and calling through a table it fills with references to functions all over the
/// module (each shard makes records and signature ids that others make too).
fn generated(n: usize) -> Vec<u8> {
    let mut wat = String::from(
        "(module
  (type $t (func (param i32) (result i32)))
  (type $u (func (param i32) (result i64)))
  (table 64 funcref)
  (memory 1)
  (global $g (mut i32) (i32.const 0))\n",
    );
    let declared: Vec<String> = (0..n).map(|i| format!("$f{i}")).collect();
    wat.push_str(&format!("  (elem declare func {})\n", declared.join(" ")));
    for i in 0..n {
        let (ty, result) = if i % 3 == 2 {
            ("$u", "i64.extend_i32_u")
        } else {
            ("$t", "")
        };
        let target = (i * 7 + 3) % n.div_ceil(4);
        let slot = i % 64;
        let called = if target % 3 == 2 { "$u" } else { "$t" };
        let wrap = if called == "$u" { "i32.wrap_i64" } else { "" };
        wat.push_str(&format!(
            "  (func $f{i} (type {ty}) (local $k i32)
    (global.set $g (i32.add (global.get $g) (local.get 0)))
    (table.set (i32.const {slot}) (ref.func $f{target}))
    (block $out
      (loop $again
        (br_if $out (i32.ge_u (local.get $k) (i32.and (local.get 0) (i32.const 7))))
        (i32.store (i32.shl (local.get $k) (i32.const 2)) (local.get $k))
        (local.set $k (i32.add (local.get $k) (i32.const {i})))
        (br $again)))
    (if (result i32) (i32.gt_u (local.get 0) (i32.const 100))
      (then (call_indirect (type {called}) (i32.shr_u (local.get 0) (i32.const 1))
              (i32.const {slot})) {wrap})
      (else (i32.add (local.get $k) (i32.load (i32.const 4)))))
    {result})\n"
        ));
    }
    wat.push_str("  (export \"f0\" (func $f0)))\n");
    wat::parse_str(&wat).expect("the generated module assembles")
}

/// The file of `wasm` translated in `shards` shards.
fn file(wasm: &[u8], shards: usize) -> Vec<u8> {
    let m = translate_in_shards(wasm, "m", features(), shards).expect("translates");
    irkit_core::verify::verify(&m).expect("verifies");
    irkit_format::write(&m).expect("writes")
}

#[test]
fn every_number_of_shards_writes_the_same_file() {
    let wasm = generated(40);
    let serial = file(&wasm, 1);
    assert_eq!(
        serial,
        irkit_format::write(&irkit_wasm::translate(&wasm, "m").unwrap()).unwrap()
    );
    for shards in [2, 3, 5, 7, 40, 100] {
        assert!(
            file(&wasm, shards) == serial,
            "{shards} shards write another file"
        );
    }
}

#[test]
fn the_examples_write_the_same_file_in_shards() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/wasm-c");
    for name in ["lib.wasm", "main.wasm", "prog.wasm"] {
        let wasm = std::fs::read(format!("{dir}/{name}")).expect("the example is there");
        let serial = file(&wasm, 1);
        for shards in [2, 3, 8] {
            assert!(
                file(&wasm, shards) == serial,
                "{name}: {shards} shards differ"
            );
        }
    }
}

/// A module whose bodies are too small to share out is the same with or without shards,
/// and one with no function at all translates in any number.
#[test]
fn small_and_empty_modules_translate_in_shards() {
    let empty = wat::parse_str("(module (memory 1))").unwrap();
    assert_eq!(file(&empty, 4), file(&empty, 1));
    let one = wat::parse_str("(module (func (export \"f\") (result i32) i32.const 1))").unwrap();
    assert_eq!(file(&one, 4), file(&one, 1));
}
