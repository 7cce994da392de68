//! The semantics of spec/ir.md, opcode by opcode: wrapping, masked shifts, division, floats
//! and NaN canonicalization, conversions, comparisons, i1, block parameters, memory.

mod common;

use common::{binop, eval, module};
use irkit_interp::ops::{CANONICAL_NAN_F32, CANONICAL_NAN_F64};
use irkit_interp::{Interpreter, Value};

fn int(w: u32, v: i64) -> Value {
    Value::int(w, v as u64).unwrap()
}

fn ib(op: &str, w: u32, a: i64, b: i64) -> Value {
    eval(&binop(op, &format!("i{w}")), "f", &[int(w, a), int(w, b)])
}

#[test]
fn integer_arithmetic_wraps_at_every_width() {
    assert_eq!(ib("iadd", 1, 1, 1), int(1, 0));
    assert_eq!(ib("iadd", 8, 127, 1), int(8, -128));
    assert_eq!(ib("iadd", 16, 0xffff, 2), int(16, 1));
    assert_eq!(
        ib("iadd", 32, i64::from(i32::MAX), 1),
        int(32, i64::from(i32::MIN))
    );
    assert_eq!(ib("iadd", 64, i64::MAX, 1), int(64, i64::MIN));
    assert_eq!(ib("isub", 8, 0, 1), int(8, -1));
    assert_eq!(ib("isub", 64, i64::MIN, 1), int(64, i64::MAX));
    assert_eq!(ib("imul", 8, 16, 17), int(8, 16));
    assert_eq!(ib("imul", 16, 300, 300), int(16, 90000 & 0xffff));
    assert_eq!(ib("imul", 32, 0x10000, 0x10000), int(32, 0));
    assert_eq!(ib("imul", 64, i64::MAX, 2), int(64, -2));
    assert_eq!(ib("imul", 1, 1, 1), int(1, 1));
}

#[test]
fn shifts_are_masked_to_width_minus_one() {
    assert_eq!(ib("shl", 32, 1, 33), int(32, 2));
    assert_eq!(ib("shl", 8, 1, 9), int(8, 2));
    assert_eq!(ib("shl", 16, 1, 17), int(16, 2));
    assert_eq!(ib("shl", 64, 1, 65), int(64, 2));
    assert_eq!(ib("shl", 8, 1, 7), int(8, -128));
    assert_eq!(ib("lshr", 8, -128, 7), int(8, 1));
    assert_eq!(ib("lshr", 8, -128, 15), int(8, 1));
    assert_eq!(ib("ashr", 8, -128, 7), int(8, -1));
    assert_eq!(ib("ashr", 32, i64::from(i32::MIN), 63), int(32, -1));
    assert_eq!(ib("ashr", 64, -8, 1), int(64, -4));
    assert_eq!(ib("shl", 64, 1, -1), int(64, i64::MIN));
    // i1: the mask is 0, every shift returns its first operand.
    for op in ["shl", "lshr", "ashr"] {
        assert_eq!(ib(op, 1, 1, 1), int(1, 1));
        assert_eq!(ib(op, 1, 0, 1), int(1, 0));
    }
}

#[test]
fn division_rounds_toward_zero_and_remainder_has_dividend_sign() {
    assert_eq!(ib("sdiv", 32, -7, 2), int(32, -3));
    assert_eq!(ib("srem", 32, -7, 2), int(32, -1));
    assert_eq!(ib("srem", 32, 7, -2), int(32, 1));
    assert_eq!(ib("udiv", 8, -1, 2), int(8, 127));
    assert_eq!(ib("urem", 8, -1, 16), int(8, 15));
    assert_eq!(ib("sdiv", 8, -128, 2), int(8, -64));
    assert_eq!(ib("srem", 64, i64::MIN, 3), int(64, -2));
    assert_eq!(ib("sdiv", 64, i64::MIN, 1), int(64, i64::MIN));
}

#[test]
fn bitwise_operations() {
    assert_eq!(ib("and", 16, 0x0ff0, 0x00ff), int(16, 0x00f0));
    assert_eq!(ib("or", 16, 0x0ff0, 0x00ff), int(16, 0x0fff));
    assert_eq!(ib("xor", 8, -1, 0x0f), int(8, 0xf0));
    assert_eq!(ib("xor", 1, 1, 1), int(1, 0));
}

#[test]
fn i1_arithmetic() {
    // i1 1 is -1 when signed.
    assert_eq!(ib("isub", 1, 0, 1), int(1, 1));
    assert_eq!(ib("and", 1, 1, 1), int(1, 1));
    assert_eq!(ib("udiv", 1, 1, 1), int(1, 1));
    assert_eq!(ib("urem", 1, 1, 1), int(1, 0));
    assert_eq!(ib("sdiv", 1, 0, 1), int(1, 0));
    let src = r#"
@f: fn(i1) -> i32 = func {
^entry(%b: i1):
  %s: i32 = sext %b
  ret %s
}
@g: fn(i1) -> i32 = func {
^entry(%b: i1):
  %z: i32 = zext %b
  ret %z
}
@lt: fn(i1, i1) -> i1 = func {
^entry(%a: i1, %b: i1):
  %c: i1 = icmp slt %a, %b
  ret %c
}
"#;
    assert_eq!(eval(src, "f", &[Value::bool(true)]), Value::i32(-1));
    assert_eq!(eval(src, "g", &[Value::bool(true)]), Value::i32(1));
    assert_eq!(
        eval(src, "lt", &[Value::bool(true), Value::bool(false)]),
        Value::bool(true)
    );
}

fn fb64(op: &str, a: f64, b: f64) -> u64 {
    match eval(&binop(op, "f64"), "f", &[Value::f64(a), Value::f64(b)]) {
        Value::F64(b) => b,
        v => panic!("{v}"),
    }
}

fn fb32(op: &str, a: f32, b: f32) -> u32 {
    match eval(&binop(op, "f32"), "f", &[Value::f32(a), Value::f32(b)]) {
        Value::F32(b) => b,
        v => panic!("{v}"),
    }
}

#[test]
fn float_arithmetic_is_ieee() {
    assert_eq!(f64::from_bits(fb64("fadd", 0.1, 0.2)), 0.1 + 0.2);
    assert_eq!(f64::from_bits(fb64("fdiv", 1.0, 0.0)), f64::INFINITY);
    assert_eq!(f64::from_bits(fb64("fdiv", 1.0, -0.0)), f64::NEG_INFINITY);
    assert_eq!(f64::from_bits(fb64("frem", -5.5, 2.0)), -1.5);
    assert_eq!(f64::from_bits(fb64("frem", 5.5, f64::INFINITY)), 5.5);
    assert_eq!(fb64("fmul", -0.0, 1.0), (-0.0f64).to_bits());
    assert_eq!(f32::from_bits(fb32("fmul", 1.5, 3.0)), 4.5);
    // Subnormals are honoured.
    assert_eq!(
        f64::from_bits(fb64("fmul", f64::MIN_POSITIVE, 0.5)),
        f64::MIN_POSITIVE / 2.0
    );
}

#[test]
fn nan_results_are_canonical() {
    let odd64 = f64::from_bits(0x7ff8_0000_0000_0001);
    let neg64 = f64::from_bits(0xfff8_0000_0000_0000);
    for op in ["fadd", "fsub", "fmul", "fdiv", "frem"] {
        assert_eq!(fb64(op, odd64, 1.0), CANONICAL_NAN_F64, "{op}");
        assert_eq!(fb64(op, 1.0, neg64), CANONICAL_NAN_F64, "{op}");
        let odd32 = f32::from_bits(0xffc0_0001);
        assert_eq!(fb32(op, odd32, 1.0), CANONICAL_NAN_F32, "{op}");
    }
    assert_eq!(
        fb64("fsub", f64::INFINITY, f64::INFINITY),
        CANONICAL_NAN_F64
    );
    assert_eq!(fb64("fdiv", 0.0, 0.0), CANONICAL_NAN_F64);
    assert_eq!(fb64("frem", 1.0, 0.0), CANONICAL_NAN_F64);
    assert_eq!(fb32("fmul", f32::INFINITY, 0.0), CANONICAL_NAN_F32);

    let src = r#"
@trunc: fn(f64) -> f32 = func {
^entry(%x: f64):
  %r: f32 = fptrunc %x
  ret %r
}
@ext: fn(f32) -> f64 = func {
^entry(%x: f32):
  %r: f64 = fpext %x
  ret %r
}
@bits: fn(f64) -> i64 = func {
^entry(%x: f64):
  %r: i64 = bitcast %x
  ret %r
}
@sel: fn(i1, f64) -> f64 = func {
^entry(%c: i1, %x: f64):
  %r: f64 = select %c, %x, f64 1.0
  ret %r
}
@konst: fn() -> f64 = func {
^entry:
  ret f64 nan:0x7ff0000000000001
}
@through_memory: fn(f32) -> f32 = func {
^entry(%x: f32):
  %p: ptr = stackalloc f32
  store %p, %x
  %r: f32 = load %p
  ret %r
}
"#;
    assert_eq!(
        eval(src, "trunc", &[Value::f64(odd64)]),
        Value::F32(CANONICAL_NAN_F32)
    );
    assert_eq!(
        eval(src, "ext", &[Value::F32(0xff80_0001)]),
        Value::F64(CANONICAL_NAN_F64)
    );
    assert_eq!(eval(src, "ext", &[Value::f32(1.5)]), Value::f64(1.5));
    assert_eq!(
        eval(src, "trunc", &[Value::f64(1e300)]),
        Value::f32(f32::INFINITY)
    );
    // Moves and reinterpretations preserve NaN bits.
    assert_eq!(
        eval(src, "bits", &[Value::f64(odd64)]),
        Value::I64(0x7ff8_0000_0000_0001)
    );
    assert_eq!(
        eval(src, "sel", &[Value::bool(true), Value::f64(odd64)]),
        Value::f64(odd64)
    );
    assert_eq!(eval(src, "konst", &[]), Value::F64(0x7ff0_0000_0000_0001));
    assert_eq!(
        eval(src, "through_memory", &[Value::F32(0xffc0_0001)]),
        Value::F32(0xffc0_0001)
    );
}

const CONV: &str = r#"
@si8: fn(f64) -> i8 = func {
^entry(%x: f64):
  %r: i8 = fptosi %x
  ret %r
}
@ui8: fn(f64) -> i8 = func {
^entry(%x: f64):
  %r: i8 = fptoui %x
  ret %r
}
@si64: fn(f32) -> i64 = func {
^entry(%x: f32):
  %r: i64 = fptosi %x
  ret %r
}
@ui64: fn(f64) -> i64 = func {
^entry(%x: f64):
  %r: i64 = fptoui %x
  ret %r
}
@ui32: fn(f64) -> i32 = func {
^entry(%x: f64):
  %r: i32 = fptoui %x
  ret %r
}
@u2f: fn(i64) -> f64 = func {
^entry(%x: i64):
  %r: f64 = uitofp %x
  ret %r
}
@s2f: fn(i8) -> f32 = func {
^entry(%x: i8):
  %r: f32 = sitofp %x
  ret %r
}
@u2f32: fn(i8) -> f32 = func {
^entry(%x: i8):
  %r: f32 = uitofp %x
  ret %r
}
@tr: fn(i64) -> i8 = func {
^entry(%x: i64):
  %r: i8 = trunc %x
  ret %r
}
@sx: fn(i8) -> i64 = func {
^entry(%x: i8):
  %r: i64 = sext %x
  ret %r
}
@zx: fn(i8) -> i64 = func {
^entry(%x: i8):
  %r: i64 = zext %x
  ret %r
}
@roundtrip: fn() -> i1 = func {
^entry:
  %p: ptr = stackalloc i64
  %i: i64 = ptrtoint %p
  %q: ptr = inttoptr %i
  store %q, i64 9
  %v: i64 = load %p
  %a: i1 = icmp eq %p, %q
  %b: i1 = icmp eq %v, i64 9
  %r: i1 = and %a, %b
  ret %r
}
@ptr32: fn() -> i32 = func {
^entry:
  %i: i32 = ptrtoint ptr null
  ret %i
}
"#;

#[test]
fn float_to_int_conversions_saturate() {
    let c = |f: &str, x: f64| eval(CONV, f, &[Value::f64(x)]);
    assert_eq!(c("si8", 1e10), int(8, 127));
    assert_eq!(c("si8", -1e10), int(8, -128));
    assert_eq!(c("si8", f64::NAN), int(8, 0));
    assert_eq!(c("si8", -127.9), int(8, -127));
    assert_eq!(c("si8", f64::INFINITY), int(8, 127));
    assert_eq!(c("ui8", -1.0), int(8, 0));
    assert_eq!(c("ui8", 255.9), int(8, 255));
    assert_eq!(c("ui8", 256.0), int(8, 255));
    assert_eq!(c("ui8", f64::NEG_INFINITY), int(8, 0));
    assert_eq!(c("ui32", 4e9), Value::I32(4_000_000_000));
    assert_eq!(c("ui32", 5e9), Value::I32(u32::MAX.into()));
    assert_eq!(c("ui64", 1e20), Value::I64(u64::MAX));
    assert_eq!(c("ui64", f64::NAN), Value::I64(0));
    assert_eq!(
        eval(CONV, "si64", &[Value::f32(-1e30)]),
        Value::i64(i64::MIN)
    );
    assert_eq!(eval(CONV, "si64", &[Value::f32(f32::NAN)]), Value::i64(0));
}

#[test]
fn integer_conversions() {
    assert_eq!(
        eval(CONV, "u2f", &[Value::I64(u64::MAX)]),
        Value::f64(18446744073709551615.0)
    );
    assert_eq!(eval(CONV, "s2f", &[int(8, -3)]), Value::f32(-3.0));
    assert_eq!(eval(CONV, "u2f32", &[int(8, -3)]), Value::f32(253.0));
    assert_eq!(
        eval(CONV, "tr", &[Value::I64(0x1234_5678_9abc_def0)]),
        int(8, 0xf0)
    );
    assert_eq!(eval(CONV, "sx", &[int(8, -2)]), Value::i64(-2));
    assert_eq!(eval(CONV, "zx", &[int(8, -2)]), Value::I64(254));
    assert_eq!(eval(CONV, "roundtrip", &[]), Value::bool(true));
    assert_eq!(eval(CONV, "ptr32", &[]), Value::I32(0));
}

const CMP: &str = r#"
@f: fn(f64, f64) -> i32 = func {
^entry(%a: f64, %b: f64):
  %oeq: i1 = fcmp oeq %a, %b
  %une: i1 = fcmp une %a, %b
  %olt: i1 = fcmp olt %a, %b
  %uno: i1 = fcmp uno %a, %b
  %ueq: i1 = fcmp ueq %a, %b
  %one: i1 = fcmp one %a, %b
  %x0: i32 = zext %oeq
  %x1: i32 = zext %une
  %x2: i32 = zext %olt
  %x3: i32 = zext %uno
  %x4: i32 = zext %ueq
  %x5: i32 = zext %one
  %s1: i32 = shl %x1, i32 1
  %s2: i32 = shl %x2, i32 2
  %s3: i32 = shl %x3, i32 3
  %s4: i32 = shl %x4, i32 4
  %s5: i32 = shl %x5, i32 5
  %r1: i32 = or %x0, %s1
  %r2: i32 = or %r1, %s2
  %r3: i32 = or %r2, %s3
  %r4: i32 = or %r3, %s4
  %r5: i32 = or %r4, %s5
  ret %r5
}
@i: fn(i8, i8) -> i32 = func {
^entry(%a: i8, %b: i8):
  %slt: i1 = icmp slt %a, %b
  %ult: i1 = icmp ult %a, %b
  %x0: i32 = zext %slt
  %x1: i32 = zext %ult
  %s1: i32 = shl %x1, i32 1
  %r: i32 = or %x0, %s1
  ret %r
}
"#;

#[test]
fn float_comparisons_negative_zero_and_nan() {
    let f = |a: f64, b: f64| eval(CMP, "f", &[Value::f64(a), Value::f64(b)]);
    // -0.0 and 0.0 compare equal: oeq, ueq.
    assert_eq!(f(-0.0, 0.0), Value::I32(0b01_0001));
    assert_eq!(f(1.0, 2.0), Value::I32(0b10_0110));
    // NaN: unordered: une, uno, ueq.
    assert_eq!(f(f64::NAN, f64::NAN), Value::I32(0b01_1010));
    assert_eq!(f(f64::NAN, 1.0), Value::I32(0b01_1010));
}

#[test]
fn integer_comparisons_are_signed_or_unsigned() {
    let i = |a: i64, b: i64| eval(CMP, "i", &[int(8, a), int(8, b)]);
    assert_eq!(i(-1, 0), Value::I32(0b01));
    assert_eq!(i(0, -1), Value::I32(0b10));
    assert_eq!(i(1, 2), Value::I32(0b11));
}

#[test]
fn block_parameters_are_assigned_simultaneously() {
    let src = r#"
@swap: fn(i32, i32, i32) -> i32 = func {
^entry(%x0: i32, %y0: i32, %n: i32):
  jump ^b(%x0, %y0, %n)
^b(%x: i32, %y: i32, %k: i32):
  %done: i1 = icmp eq %k, i32 0
  %k1: i32 = isub %k, i32 1
  br %done, ^exit(%x, %y), ^b(%y, %x, %k1)
^exit(%a: i32, %b: i32):
  %t: i32 = imul %a, i32 10
  %r: i32 = iadd %t, %b
  ret %r
}
"#;
    let s = |n| eval(src, "swap", &[Value::i32(1), Value::i32(2), Value::i32(n)]);
    assert_eq!(s(0), Value::i32(12));
    assert_eq!(s(1), Value::i32(21));
    assert_eq!(s(2), Value::i32(12));
    assert_eq!(s(7), Value::i32(21));
}

#[test]
fn switch_and_br_to_one_block_with_different_arguments() {
    let src = r#"
@f: fn(i8) -> i8 = func {
^entry(%x: i8):
  switch %x, i8 -1, i8 3, ^d(i8 0), ^t(i8 10), ^t(i8 30)
^t(%v: i8):
  ret %v
^d(%w: i8):
  %c: i1 = icmp sgt %x, i8 0
  br %c, ^t(i8 1), ^t(i8 2)
}
"#;
    let f = |x| eval(src, "f", &[int(8, x)]);
    assert_eq!(f(-1), int(8, 10));
    assert_eq!(f(3), int(8, 30));
    assert_eq!(f(5), int(8, 1));
    assert_eq!(f(-5), int(8, 2));
}

const MEMORY: &str = r#"
#[extern("malloc")]
@malloc: fn(i64) -> ptr = func
#[extern("free")]
@free: fn(ptr) -> void = func
#[extern("memset")]
@memset: fn(ptr, i32, i64) -> ptr = func
#[extern("memcpy")]
@memcpy: fn(ptr, ptr, i64) -> ptr = func

@S = struct {i8, i64, i16}
@table: [2 x @S] = global_const [2 x @S] [@S [i8 1, i64 2, i16 3], @S [i8 -4, i64 5, i16 6]]
@fp: ptr = global_const @sq
@gp: ptr = global_var @table
@msg: [3 x i8] = global_const [3 x i8] b"hi!"

@sq: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = imul %x, %x
  ret %r
}

; Layout: {i8, i64, i16} has offsets 0, 8, 16 and size 24.
@layout: fn() -> i64 = func {
^entry:
  %p: ptr = load @gp
  %f: ptr = elem [2 x @S], %p, i32 0, i32 1, i32 2
  %base: i64 = ptrtoint %p
  %at: i64 = ptrtoint %f
  %off: i64 = isub %at, %base
  ret %off
}

@fields: fn() -> i64 = func {
^entry:
  %a: ptr = elem @S, @table, i32 1, i32 0
  %b: ptr = elem @S, @table, i32 1, i32 1
  %c: ptr = elem @S, @table, i32 1, i32 2
  %va: i8 = load %a
  %vb: i64 = load %b
  %vc: i16 = load %c
  %wa: i64 = sext %va
  %wc: i64 = zext %vc
  %s: i64 = iadd %wa, %vb
  %r: i64 = iadd %s, %wc
  ret %r
}

@indirect_from_global: fn() -> i32 = func {
^entry:
  %f: ptr = load @fp
  %r: i32 = call_indirect fn(i32) -> i32, %f(i32 9)
  ret %r
}

@negative_index: fn() -> i32 = func {
^entry:
  %p: ptr = stackalloc [4 x i32]
  %e3: ptr = elem i32, %p, i32 3
  store %e3, i32 77
  %e: ptr = elem i32, %p, i64 4
  %back: ptr = elem i32, %e, i8 -1
  %v: i32 = load %back
  ret %v
}

@little_endian: fn() -> i8 = func {
^entry:
  %p: ptr = stackalloc i32
  store %p, i32 0x11223344
  %b: ptr = elem i8, %p, i32 1
  %v: i8 = load %b
  ret %v
}

@i1_memory: fn() -> i1 = func {
^entry:
  %p: ptr = stackalloc i8
  store %p, i8 3
  %v: i1 = load %p
  ret %v
}

@heap: fn() -> i32 = func {
^entry:
  %p: ptr = call @malloc(i64 16)
  %q: ptr = call @malloc(i64 16)
  %p1: ptr = call @memset(%p, i32 0x41, i64 16)
  %q1: ptr = call @memcpy(%q, @msg, i64 3)
  %a: i32 = load %p
  %b: i8 = load %q
  %c: ptr = elem i8, %q, i32 2
  %d: i8 = load %c
  call @free(%p)
  call @free(%q)
  call @free(ptr null)
  %bw: i32 = zext %b
  %dw: i32 = zext %d
  %s: i32 = iadd %a, %bw
  %r: i32 = iadd %s, %dw
  ret %r
}

@aggregates: fn(@S) -> @S = func {
^entry(%s: @S):
  %x: i64 = extract 1 %s
  %y: i64 = imul %x, i64 2
  %t: @S = insert 1 %s, %y
  ret %t
}

@count: i32 = global_var
@bump: fn() -> i32 = func {
^entry:
  %v: i32 = load @count
  %n: i32 = iadd %v, i32 1
  store @count, %n
  ret %n
}
"#;

#[test]
fn memory_layout_and_initializers() {
    assert_eq!(eval(MEMORY, "layout", &[]), Value::i64(24 + 16));
    assert_eq!(eval(MEMORY, "fields", &[]), Value::i64(-4 + 5 + 6));
    assert_eq!(eval(MEMORY, "indirect_from_global", &[]), Value::i32(81));
    assert_eq!(eval(MEMORY, "negative_index", &[]), Value::i32(77));
    assert_eq!(eval(MEMORY, "little_endian", &[]), int(8, 0x33));
    assert_eq!(eval(MEMORY, "i1_memory", &[]), Value::bool(true));
    assert_eq!(
        eval(MEMORY, "heap", &[]),
        Value::i32(0x4141_4141 + i32::from(b'h') + i32::from(b'!'))
    );
}

#[test]
fn aggregate_values_and_persistent_globals() {
    let s = Value::Aggregate(vec![int(8, 1), Value::i64(21), int(16, 3)].into());
    let r = Value::Aggregate(vec![int(8, 1), Value::i64(42), int(16, 3)].into());
    assert_eq!(eval(MEMORY, "aggregates", &[s]), r);
    let m = module(MEMORY);
    let mut it = Interpreter::new(&m).unwrap();
    assert_eq!(it.run("bump", &[]), Ok(Some(Value::i32(1))));
    assert_eq!(it.run("bump", &[]), Ok(Some(Value::i32(2))));
}

#[test]
fn function_tables_and_zero_initializers_in_globals() {
    let src = r#"
@P = struct {i16, ptr, [2 x i8]}
@add1: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = iadd %x, i32 1
  ret %r
}
@dbl: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = imul %x, i32 2
  ret %r
}
@table: [2 x ptr] = global_const [2 x ptr] [@add1, @dbl]
@rec: @P = global_var @P [i16 -2, @table, [2 x i8] b"ok"]
@zeros: [3 x @P] = global_var [3 x @P] zero
@apply: fn(i64, i32) -> i32 = func {
^entry(%i: i64, %x: i32):
  %slot: ptr = elem ptr, @table, %i
  %f: ptr = load %slot
  %r: i32 = call_indirect fn(i32) -> i32, %f(%x)
  ret %r
}
@peek: fn() -> i64 = func {
^entry:
  %tp: ptr = elem @P, @rec, i32 0, i32 1
  %t: ptr = load %tp
  %same: i1 = icmp eq %t, @table
  %k: ptr = elem @P, @rec, i32 0, i32 2, i32 1
  %ch: i8 = load %k
  %h: ptr = elem @P, @rec, i32 0, i32 0
  %hv: i16 = load %h
  %z: ptr = elem [3 x @P], @zeros, i32 0, i32 2, i32 1
  %zv: ptr = load %z
  %zn: i1 = icmp eq %zv, ptr null
  %both: i1 = and %same, %zn
  %b: i64 = zext %both
  %c: i64 = zext %ch
  %hs: i64 = sext %hv
  %s1: i64 = shl %b, i64 16
  %s2: i64 = shl %c, i64 8
  %s3: i64 = or %s1, %s2
  %s4: i64 = iadd %s3, %hs
  ret %s4
}
"#;
    assert_eq!(
        eval(src, "apply", &[Value::i64(0), Value::i32(5)]),
        Value::i32(6)
    );
    assert_eq!(
        eval(src, "apply", &[Value::i64(1), Value::i32(5)]),
        Value::i32(10)
    );
    let expect = (1i64 << 16) + (i64::from(b'k') << 8) - 2;
    assert_eq!(eval(src, "peek", &[]), Value::i64(expect));
}

#[test]
fn putchar_output_and_stack_objects_released_after_a_trap() {
    let src = r#"
#[extern("putchar")]
@putchar: fn(i32) -> i32 = func
@saved: ptr = global_var ptr null
@keep_and_trap: fn() -> void = func {
^entry:
  %p: ptr = stackalloc i32
  store @saved, %p
  %c: i32 = call @putchar(i32 0x141)
  trap
}
@use_saved: fn() -> i32 = func {
^entry:
  %p: ptr = load @saved
  %v: i32 = load %p
  ret %v
}
@echo: fn(i32) -> i32 = func {
^entry(%c: i32):
  %r: i32 = call @putchar(%c)
  ret %r
}
"#;
    let m = module(src);
    let mut it = Interpreter::new(&m).unwrap();
    assert_eq!(
        it.run("echo", &[Value::i32(0x1ff)]),
        Ok(Some(Value::i32(0xff)))
    );
    assert_eq!(
        it.run("keep_and_trap", &[]).unwrap_err().kind,
        irkit_interp::TrapKind::Trap
    );
    assert_eq!(it.output(), b"\xffA");
    let t = it.run("use_saved", &[]).unwrap_err();
    assert!(
        matches!(t.kind, irkit_interp::TrapKind::UseAfterFree { .. }),
        "{t}"
    );
}
