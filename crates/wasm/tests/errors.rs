//! Bad input is refused with one clear line, never a panic: malformed bytes, invalid modules,
//! text that does not parse, and valid modules using what is not translated yet.

use irkit_wasm::{WasmError, translate, translate_input};

fn err(input: &[u8]) -> WasmError {
    match translate_input(input, "m") {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn one_line(e: &WasmError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "{s}");
    s
}

#[test]
fn malformed_bytes_name_the_offset() {
    // A truncated type section.
    let e = err(b"\0asm\x01\0\0\0\x01\x05\x01");
    assert!(matches!(e, WasmError::Invalid { .. }), "{e:?}");
    let s = one_line(&e);
    assert!(
        s.starts_with("invalid WebAssembly module at byte offset 0x"),
        "{s}"
    );
    // A wrong version.
    let e = err(b"\0asm\x02\0\0\0");
    assert!(matches!(e, WasmError::Invalid { offset: 4, .. }), "{e:?}");
    // Not even the magic: treated as text, which does not parse.
    let e = translate(b"\x01\x02\x03", "m").unwrap_err();
    assert!(matches!(e, WasmError::Invalid { offset: 0, .. }), "{e:?}");
}

#[test]
fn invalid_modules_give_wasmparsers_message() {
    let e = err(b"(module (func (result i32)))");
    match &e {
        WasmError::Invalid { message, .. } => {
            assert!(message.contains("type mismatch"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    one_line(&e);
    let e = err(b"(module (func local.get 3))");
    assert!(matches!(e, WasmError::Invalid { .. }), "{e:?}");
    // A feature outside the accepted set (threads: a shared memory).
    let e = err(b"(module (memory 1 1 shared))");
    assert!(matches!(e, WasmError::Invalid { .. }), "{e:?}");
}

#[test]
fn simd_translates_and_relaxed_simd_is_refused_by_validation() {
    let ok =
        b"(module (func (param v128 v128) (result v128) local.get 0 local.get 1 i8x16.swizzle))";
    assert!(translate_input(ok, "m").is_ok());
    let e = err(b"(module (func (param v128 v128) (result v128) local.get 0 local.get 1 i8x16.relaxed_swizzle))");
    assert!(matches!(e, WasmError::Invalid { .. }), "{e:?}");
    one_line(&e);
}

#[test]
fn text_errors_are_one_line() {
    let e = err(b"(module (func");
    assert!(matches!(e, WasmError::Text(_)), "{e:?}");
    one_line(&e);
}

#[test]
fn unsupported_constructs_are_named_with_their_offset() {
    // Module `m` exporting its import of `m`'s own `g` as `g`: a re-export of itself.
    let e = err(b"(module (import \"m\" \"g\" (global i32)) (export \"g\" (global 0)))");
    let s = one_line(&e);
    assert!(s.starts_with("byte offset 0x"), "{s}");
    assert!(s.ends_with("(a cycle) is not supported yet"), "{s}");
}

/// Several exports of one definition, and re-exports of imports (functions, globals, the
/// memory, the table), translate to modules that verify: `export`s on the definition, and
/// `import` with `export`s on the declaration.
#[test]
fn several_exports_and_reexports_translate() {
    let src = br#"(module
      (import "a" "g" (global $g i32))
      (import "a" "f" (func $f (param i32) (result i32)))
      (import "a" "mem" (memory 1))
      (import "a" "tab" (table 2 funcref))
      (global $h (mut i64) (i64.const 3))
      (func $k (result i32) i32.const 1)
      (export "g1" (global $g)) (export "g2" (global $g))
      (export "f1" (func $f)) (export "f2" (func $f))
      (export "m1" (memory 0)) (export "m2" (memory 0))
      (export "t1" (table 0)) (export "t2" (table 0))
      (export "h1" (global $h)) (export "h2" (global $h))
      (export "k1" (func $k)) (export "k2" (func $k)))"#;
    let m = irkit_wasm::translate_input(src, "m").expect("translates");
    irkit_core::verify::verify(&m).expect("verifies");
    for (import, names) in [
        ("wasm:a:g", ["wasm:m:g1", "wasm:m:g2"]),
        ("wasm:a:f", ["wasm:m:f1", "wasm:m:f2"]),
        ("wasm:a:mem", ["wasm:m:m1", "wasm:m:m2"]),
        ("wasm:a:tab", ["wasm:m:t1", "wasm:m:t2"]),
    ] {
        for n in names {
            let d = m.find_export(n).expect("exported");
            assert_eq!(
                m.decoration_str(d, irkit_core::Opcode::IMPORT),
                Some(import)
            );
        }
    }
    for [a, b] in [["wasm:m:h1", "wasm:m:h2"], ["wasm:m:k1", "wasm:m:k2"]] {
        let d = m.find_export(a).expect("exported");
        assert_eq!(m.find_export(b), Some(d));
        assert_eq!(m.decoration_str(d, irkit_core::Opcode::IMPORT), None);
    }
}

/// Tables of both reference types, several per module, defined and imported, translate; a
/// table declared beyond the implementation limit is refused.
#[test]
fn tables_translate_up_to_the_limit() {
    for src in [
        &b"(module (table 1 externref))"[..],
        b"(module (table 1 funcref) (table 1 funcref))",
        b"(module (import \"a\" \"t\" (table 1 funcref)) (table 1 externref))",
        b"(module (import \"a\" \"t\" (table 1 funcref)) (import \"a\" \"u\" (table 1 funcref)))",
    ] {
        let m = translate_input(src, "m").expect("translates");
        irkit_core::verify::verify(&m).expect("verifies");
    }
    let e = err(b"(module (table 2000000 funcref))");
    assert!(
        one_line(&e).ends_with("a table of more than 2^20 entries is not supported yet"),
        "{e}"
    );
}

/// Every single-byte change of valid modules either translates to a module that verifies or
/// is refused with an error: never a panic, never an invalid irkit module.
#[test]
fn mutated_modules_never_panic() {
    let sources = [
        include_str!("cases/control.wat"),
        include_str!("cases/memory.wat"),
        include_str!("cases/tables.wat"),
        include_str!("cases/refs.wat"),
    ];
    for src in sources {
        let wasm = wat::parse_str(src).expect("case parses");
        for i in 8..wasm.len() {
            for v in [0u8, 1, 0x0b, 0x7f, 0x80, 0xff, wasm[i] ^ 1] {
                let mut bad = wasm.clone();
                bad[i] = v;
                if let Ok(m) = translate(&bad, "m")
                    && let Err(errs) = irkit_core::verify::verify(&m)
                {
                    panic!("byte {i} = {v:#x}: translated module does not verify: {errs:?}");
                }
            }
        }
    }
}

/// Reference values and their operators translate to modules that verify; what is left
/// unsupported is refused with its name and offset.
#[test]
fn reference_values_translate() {
    for src in [
        &b"(module (func (param funcref)))"[..],
        b"(module (global externref (ref.null extern)))",
        b"(module (func (result i32) (ref.is_null (ref.null func))))",
        b"(module (table 1 funcref) (func (drop (table.size 0))))",
        b"(module (table 1 funcref) (func (table.set 0 (i32.const 0) (ref.null func))))",
        b"(module (func $f) (global funcref (ref.func $f)) (elem declare func $f)
           (func (result funcref) (ref.func $f)))",
    ] {
        let m = translate_input(src, "m").expect("translates");
        irkit_core::verify::verify(&m).expect("verifies");
    }
    let e = err(
        b"(module (import \"a\" \"g\" (global funcref)) (table 1 funcref)
                  (elem funcref (global.get 0)))",
    );
    let s = one_line(&e);
    assert!(
        s.contains("byte offset 0x")
            && s.ends_with("`global.get` in a passive element segment is not supported yet"),
        "{s}"
    );
}
