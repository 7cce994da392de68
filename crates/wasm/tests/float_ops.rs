//! wasm's float rounding, sign and `min`/`max` operators, translated to the IR's `fceil` …
//! `fmax` and run in the interpreter, agree bit for bit with the host's `f64` operations (and a
//! direct statement of wasm's `min`/`max` rule) on special values and random bit patterns;
//! NaN results of the non-sign operators are the canonical NaN.

use irkit_interp::{Interpreter, Value};

const SRC: &str = r#"(module
  (func (export "ceil") (param f64) (result f64) local.get 0 f64.ceil)
  (func (export "floor") (param f64) (result f64) local.get 0 f64.floor)
  (func (export "trunc") (param f64) (result f64) local.get 0 f64.trunc)
  (func (export "nearest") (param f64) (result f64) local.get 0 f64.nearest)
  (func (export "neg") (param f64) (result f64) local.get 0 f64.neg)
  (func (export "abs") (param f64) (result f64) local.get 0 f64.abs)
  (func (export "nearest32") (param f32) (result f32) local.get 0 f32.nearest)
  (func (export "min") (param f64 f64) (result f64) local.get 0 local.get 1 f64.min)
  (func (export "max") (param f64 f64) (result f64) local.get 0 local.get 1 f64.max)
  (func (export "copysign") (param f64 f64) (result f64) local.get 0 local.get 1 f64.copysign))"#;

const NAN: u64 = 0x7ff8_0000_0000_0000;

fn canon(x: f64) -> u64 {
    if x.is_nan() { NAN } else { x.to_bits() }
}

/// wasm's `min` (`max` with `min = false`): NaN if either is; `-0 < +0`.
fn min_max(a: f64, b: f64, min: bool) -> u64 {
    if a.is_nan() || b.is_nan() {
        NAN
    } else if a == b {
        // Only zeros of different signs are equal with different bits.
        if (a.is_sign_negative() || b.is_sign_negative()) == min && a == 0.0 {
            (-0.0f64).to_bits()
        } else if a == 0.0 {
            0.0f64.to_bits()
        } else {
            a.to_bits()
        }
    } else if (a < b) == min {
        a.to_bits()
    } else {
        b.to_bits()
    }
}

#[test]
fn rounding_sign_and_min_max_agree_with_the_host() {
    let m = irkit_wasm::translate_input(SRC.as_bytes(), "f").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    let mut it = Interpreter::new(&m).unwrap();
    let mut d: Vec<u64> = vec![
        0,
        1 << 63,
        1,
        0.5f64.to_bits(),
        (-0.5f64).to_bits(),
        1.5f64.to_bits(),
        2.5f64.to_bits(),
        (-2.5f64).to_bits(),
        4503599627370495.5f64.to_bits(),
        4503599627370497.0f64.to_bits(),
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff0_0000_0000_0001,
        0xfff8_0000_0000_0123,
    ];
    let mut rng = irkit_testgen::Entropy::from_seed(2);
    for _ in 0..600 {
        let r = rng.u64();
        d.push(r);
        // magnitudes around 1 .. 2^60, where rounding does something
        d.push((r & 0x800f_ffff_ffff_ffff) | ((0x3fe + (r >> 52) % 64) << 52));
    }
    let run1 = |it: &mut Interpreter<'_>, f: &str, x: u64| match it
        .run(format!("wasm:f:{f}").as_str(), &[Value::F64(x)])
        .unwrap()
    {
        Some(Value::F64(r)) => r,
        other => panic!("{f}: {other:?}"),
    };
    for &bits in &d {
        let x = f64::from_bits(bits);
        let at = |name: &str| format!("{name}(0x{bits:016x})");
        assert_eq!(
            run1(&mut it, "ceil", bits),
            canon(x.ceil()),
            "{}",
            at("ceil")
        );
        assert_eq!(
            run1(&mut it, "floor", bits),
            canon(x.floor()),
            "{}",
            at("floor")
        );
        assert_eq!(
            run1(&mut it, "trunc", bits),
            canon(x.trunc()),
            "{}",
            at("trunc")
        );
        assert_eq!(
            run1(&mut it, "nearest", bits),
            canon(x.round_ties_even()),
            "{}",
            at("nearest")
        );
        assert_eq!(
            run1(&mut it, "neg", bits),
            bits ^ (1 << 63),
            "{}",
            at("neg")
        );
        assert_eq!(
            run1(&mut it, "abs", bits),
            bits & !(1 << 63),
            "{}",
            at("abs")
        );
        let x32 = bits as u32;
        let want32 = {
            let r = f32::from_bits(x32).round_ties_even();
            if r.is_nan() { 0x7fc0_0000 } else { r.to_bits() }
        };
        assert_eq!(
            it.run("wasm:f:nearest32", &[Value::F32(x32)]).unwrap(),
            Some(Value::F32(want32)),
            "nearest32(0x{x32:08x})"
        );
    }
    for pair in d.chunks(2).chain([[0, 1 << 63].as_slice(), &[1 << 63, 0]]) {
        let (a, b) = (pair[0], pair[1]);
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        let run2 = |it: &mut Interpreter<'_>, f: &str| match it
            .run(
                format!("wasm:f:{f}").as_str(),
                &[Value::F64(a), Value::F64(b)],
            )
            .unwrap()
        {
            Some(Value::F64(r)) => r,
            other => panic!("{f}: {other:?}"),
        };
        let at = |name: &str| format!("{name}(0x{a:016x}, 0x{b:016x})");
        assert_eq!(run2(&mut it, "min"), min_max(x, y, true), "{}", at("min"));
        assert_eq!(run2(&mut it, "max"), min_max(x, y, false), "{}", at("max"));
        assert_eq!(
            run2(&mut it, "copysign"),
            (a & !(1 << 63)) | (b & (1 << 63)),
            "{}",
            at("copysign")
        );
    }
}
