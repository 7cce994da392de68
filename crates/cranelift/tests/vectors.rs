//! Vectors the Cranelift back end does not hold (spec/ir.md, "Vectors", Back ends): a value
//! of a vector type other than 128 bits, and a lane-wise operation Cranelift has no vector
//! instruction for, are refused with an error naming the place, never miscompiled.

use irkit_backend::{BackendError, RunOptions, Session};

fn load(src: &str) -> Result<(), BackendError> {
    let m = irkit_text::parse(src, "t.ir").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    let mut s = irkit_cranelift::JitSession::new(&RunOptions::default());
    s.load(m)
}

#[test]
fn a_float3_value_is_refused_naming_the_place() {
    let src = "#[export(\"f\")]\n@f: fn(f32) -> f32 = func {\n^entry(%x: f32):\n  %v: vec f32 3 = splat %x\n  %r: f32 = extract 0 %v\n  ret %r\n}\n";
    let e = load(src).unwrap_err().to_string();
    assert!(e.contains("@f"), "{e}");
    assert!(e.contains("128-bit vectors only"), "{e}");
}

#[test]
fn vector_division_is_refused_naming_the_instruction() {
    let src = "#[export(\"f\")]\n@f: fn(vec i32 4) -> vec i32 4 = func {\n^entry(%v: vec i32 4):\n  %q: vec i32 4 = sdiv %v, %v\n  ret %q\n}\n";
    let e = load(src).unwrap_err().to_string();
    assert!(e.contains("sdiv"), "{e}");
    assert!(e.contains("of a vector"), "{e}");
}

#[test]
fn a_float3_global_may_exist() {
    let src = "@g: vec f32 3 = global_var vec f32 3 [f32 1.0, f32 2.0, f32 3.0]\n#[export(\"f\")]\n@f: fn() -> f32 = func {\n^entry:\n  %p: ptr = elem f32, @g, i32 2\n  %x: f32 = load %p\n  ret %x\n}\n";
    let m = irkit_text::parse(src, "t.ir").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    let mut s = irkit_cranelift::JitSession::new(&RunOptions::default());
    s.load(m).unwrap();
    assert_eq!(
        s.call("f", &[]).unwrap(),
        irkit_backend::Call::Returned(vec![irkit_backend::Val::F32(3.0f32.to_bits())])
    );
}
