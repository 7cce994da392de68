//! `f32.sqrt` and `f64.sqrt` are correctly rounded: the IR's `fsqrt` they become agrees bit for bit
//! with the host's square root on special values, subnormals and random bit patterns (NaN
//! results are the canonical NaN).

use irkit_interp::{Interpreter, Value};

const SRC: &str = r#"(module
  (func (export "sqrt64") (param f64) (result f64) local.get 0 f64.sqrt)
  (func (export "sqrt32") (param f32) (result f32) local.get 0 f32.sqrt))"#;

fn want64(x: f64) -> u64 {
    let r = x.sqrt();
    if r.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        r.to_bits()
    }
}

fn want32(x: f32) -> u32 {
    let r = x.sqrt();
    if r.is_nan() { 0x7fc0_0000 } else { r.to_bits() }
}

#[test]
fn sqrt_is_correctly_rounded() {
    let m = irkit_wasm::translate_input(SRC.as_bytes(), "s").unwrap();
    irkit_core::verify::verify(&m).unwrap();
    let mut it = Interpreter::new(&m).unwrap();
    let mut d: Vec<u64> = vec![
        0,
        1 << 63,
        1,
        2,
        3,
        (1 << 52) - 1,
        1 << 52,
        0x3ff0_0000_0000_0000,
        0x4000_0000_0000_0000,
        0x4010_0000_0000_0000,
        0x7fef_ffff_ffff_ffff,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x7ff0_0000_0000_0001,
        0xbff0_0000_0000_0000,
        0x8000_0000_0000_0001,
        2f64.to_bits(),
        0.5f64.to_bits(),
        1e-310f64.to_bits(),
        1e300f64.to_bits(),
    ];
    // SplitMix64 from seed 1: small, fast, deterministic.
    let mut rng = irkit_testgen::Entropy::from_seed(1);
    for _ in 0..1500 {
        let r = rng.u64();
        d.push(r);
        d.push(r >> 12); // positive subnormals and small normals
        d.push(r & 0x7fff_ffff_ffff_ffff);
        // squares and their neighbours: exact and near-tie roots
        let s = f64::from_bits(r & 0x3fff_ffff_ffff_ffff).sqrt().floor();
        let sq = (s * s).to_bits();
        d.extend([sq, sq.wrapping_add(1), sq.wrapping_sub(1)]);
    }
    for bits in d {
        let x = f64::from_bits(bits);
        let got = it.run("wasm:s:sqrt64", &[Value::F64(bits)]).unwrap();
        assert_eq!(
            got,
            Some(Value::F64(want64(x))),
            "sqrt({x:e}) = sqrt(0x{bits:016x})"
        );
    }
    let mut f: Vec<u32> = vec![
        0,
        1 << 31,
        1,
        0x007f_ffff,
        0x3f80_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0xbf80_0000,
        2f32.to_bits(),
    ];
    for _ in 0..2000 {
        let r = rng.u64();
        f.push(r as u32);
        f.push((r as u32) >> 9);
        f.push((r as u32) & 0x7fff_ffff);
    }
    for bits in f {
        let x = f32::from_bits(bits);
        let got = it.run("wasm:s:sqrt32", &[Value::F32(bits)]).unwrap();
        assert_eq!(
            got,
            Some(Value::F32(want32(x))),
            "sqrt({x:e}) = sqrt(0x{bits:08x})"
        );
    }
}
