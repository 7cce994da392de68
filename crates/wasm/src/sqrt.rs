//! `sqrt`, correctly rounded, in exact IR: a helper function of the module computing the
//! square root of an `f64` bit by bit with integer operations (fdlibm's `e_sqrtf.c` algorithm,
//! widened to 64 bits: 54 steps, then rounding to nearest by the remainder). `f32.sqrt` is the
//! `f64` root of the widened operand, narrowed: rounding twice is exact for square roots when
//! the wider format has at least `2p + 2` bits of precision (53 >= 2 * 24 + 2).
//!
//! NaN gives the canonical NaN, `+inf` itself, `-0` and `+0` themselves, and every other
//! negative number the canonical NaN.

use irkit_core::{Builder, CoreError, Inst, IntCC, Opcode};

use crate::error::{At, Place, WasmError};

/// Builds the body of `f: fn(f64) -> f64`, the correctly rounded square root.
pub fn build_sqrt(b: &mut Builder<'_>, f: Inst, place: Place) -> Result<(), WasmError> {
    build(b, f).at(place)
}

fn build(b: &mut Builder<'_>, f: Inst) -> Result<(), CoreError> {
    let m = b.module();
    let (f64t, i64t) = (m.ty_f64(), m.ty_i64());
    let c = |b: &mut Builder<'_>, v: u64| b.module().const_i64(v as i64);
    let (entry, ps) = b.block(f, &[f64t])?;
    let x = ps[0];
    let (special, _) = b.block(f, &[])?;
    let (finite, _) = b.block(f, &[])?;
    let (same, _) = b.block(f, &[])?;
    let (nonzero, _) = b.block(f, &[])?;
    let (nan, _) = b.block(f, &[])?;
    let (positive, _) = b.block(f, &[])?;
    let (sub, sub_ps) = b.block(f, &[i64t, i64t])?;
    let (sub_done, sub_done_ps) = b.block(f, &[i64t, i64t])?;
    let (main, main_ps) = b.block(f, &[i64t, i64t])?;
    let (lp, lp_ps) = b.block(f, &[i64t, i64t, i64t, i64t, i64t])?;
    let (fin, fin_ps) = b.block(f, &[i64t, i64t, i64t])?;

    b.position_at_end(entry);
    let bits = b.convert(Opcode::BITCAST, i64t, x)?;
    let s52 = c(b, 52);
    let e = b.binary(Opcode::LSHR, bits, s52)?;
    let e_mask = c(b, 0x7ff);
    let exp = b.binary(Opcode::AND, e, e_mask)?;
    let is_special = b.icmp(IntCC::Eq, exp, e_mask)?;
    b.br(is_special, special, &[], finite, &[])?;

    // NaN and infinities: x * x + x (NaN for NaN and -inf, +inf for +inf).
    b.position_at_end(special);
    let xx = b.binary(Opcode::FMUL, x, x)?;
    let r = b.binary(Opcode::FADD, xx, x)?;
    b.ret(Some(r))?;

    b.position_at_end(finite);
    let mag_mask = c(b, 0x7fff_ffff_ffff_ffff);
    let mag = b.binary(Opcode::AND, bits, mag_mask)?;
    let zero = c(b, 0);
    let is_zero = b.icmp(IntCC::Eq, mag, zero)?;
    b.br(is_zero, same, &[], nonzero, &[])?;

    b.position_at_end(same);
    b.ret(Some(x))?;

    b.position_at_end(nonzero);
    let negative = b.icmp(IntCC::Slt, bits, zero)?;
    b.br(negative, nan, &[], positive, &[])?;

    b.position_at_end(nan);
    let d = b.binary(Opcode::FSUB, x, x)?;
    let r = b.binary(Opcode::FDIV, d, d)?;
    b.ret(Some(r))?;

    // Subnormals: shift the fraction up until the implicit bit's place is set.
    b.position_at_end(positive);
    let is_sub = b.icmp(IntCC::Eq, exp, zero)?;
    b.br(is_sub, sub, &[bits, zero], main, &[bits, exp])?;

    b.position_at_end(sub);
    let (ix, i) = (sub_ps[0], sub_ps[1]);
    let implicit = c(b, 1 << 52);
    let top = b.binary(Opcode::AND, ix, implicit)?;
    let unset = b.icmp(IntCC::Eq, top, zero)?;
    let one = c(b, 1);
    let ix2 = b.binary(Opcode::SHL, ix, one)?;
    let i2 = b.binary(Opcode::IADD, i, one)?;
    b.br(unset, sub, &[ix2, i2], sub_done, &[ix, i])?;

    b.position_at_end(sub_done);
    let m = b.binary(Opcode::ISUB, one, sub_done_ps[1])?;
    b.jump(main, &[sub_done_ps[0], m])?;

    // Unbias the exponent, make it even, and scale the significand to match.
    b.position_at_end(main);
    let (ix, m) = (main_ps[0], main_ps[1]);
    let bias = c(b, 1023);
    let m = b.binary(Opcode::ISUB, m, bias)?;
    let frac_mask = c(b, (1 << 52) - 1);
    let frac = b.binary(Opcode::AND, ix, frac_mask)?;
    let ix = b.binary(Opcode::OR, frac, implicit)?;
    let parity = b.binary(Opcode::AND, m, one)?;
    let odd = b.icmp(IntCC::Ne, parity, zero)?;
    let doubled = b.binary(Opcode::IADD, ix, ix)?;
    let ix = b.select(odd, doubled, ix)?;
    let m = b.binary(Opcode::ASHR, m, one)?;
    let ix = b.binary(Opcode::IADD, ix, ix)?;
    let r0 = c(b, 1 << 53);
    b.jump(lp, &[ix, zero, zero, r0, m])?;

    // One bit of the root per step.
    b.position_at_end(lp);
    let (ix, q, s, r, m) = (lp_ps[0], lp_ps[1], lp_ps[2], lp_ps[3], lp_ps[4]);
    let t = b.binary(Opcode::IADD, s, r)?;
    let fits = b.icmp(IntCC::Ule, t, ix)?;
    let tr = b.binary(Opcode::IADD, t, r)?;
    let s = b.select(fits, tr, s)?;
    let ixt = b.binary(Opcode::ISUB, ix, t)?;
    let ix = b.select(fits, ixt, ix)?;
    let qr = b.binary(Opcode::IADD, q, r)?;
    let q = b.select(fits, qr, q)?;
    let ix = b.binary(Opcode::IADD, ix, ix)?;
    let r = b.binary(Opcode::LSHR, r, one)?;
    let done = b.icmp(IntCC::Eq, r, zero)?;
    b.br(done, fin, &[ix, q, m], lp, &[ix, q, s, r, m])?;

    // Round to nearest by the remainder, then assemble the result.
    b.position_at_end(fin);
    let (ix, q, m) = (fin_ps[0], fin_ps[1], fin_ps[2]);
    let inexact = b.icmp(IntCC::Ne, ix, zero)?;
    let low = b.binary(Opcode::AND, q, one)?;
    let up = b.binary(Opcode::IADD, q, low)?;
    let q = b.select(inexact, up, q)?;
    let half = b.binary(Opcode::LSHR, q, one)?;
    let base = c(b, 0x3fe0_0000_0000_0000);
    let v = b.binary(Opcode::IADD, half, base)?;
    let me = b.binary(Opcode::SHL, m, s52)?;
    let v = b.binary(Opcode::IADD, v, me)?;
    let r = b.convert(Opcode::BITCAST, f64t, v)?;
    b.ret(Some(r))?;
    Ok(())
}
