//! Every trap of spec/ir.md, "Traps and memory errors", plus the interpreter's limits: each is a
//! typed trap located at the right instruction, never a crash.

mod common;

use common::{binop, expect_trap, module, run};
use irkit_interp::{Interpreter, TrapKind, Value};

#[test]
fn division_by_zero_traps_for_every_division() {
    for op in ["sdiv", "udiv", "srem", "urem"] {
        for ty in ["i1", "i8", "i16", "i32", "i64"] {
            let zero = Value::int(ty[1..].parse().unwrap(), 0).unwrap();
            let one = Value::int(ty[1..].parse().unwrap(), 1).unwrap();
            let t = expect_trap(&binop(op, ty), "f", &[one, zero], TrapKind::DivisionByZero);
            let loc = t.location.expect("located");
            assert_eq!((loc.func.as_str(), loc.block.as_str()), ("@f", "^entry"));
            assert_eq!((loc.index, loc.opcode.as_str()), (0, op));
            assert_eq!(loc.name.as_deref(), Some("r"));
        }
    }
}

#[test]
fn min_by_minus_one_traps_for_sdiv_and_srem() {
    let cases = [
        (1, 1u64),
        (8, 0x80),
        (16, 0x8000),
        (32, 0x8000_0000),
        (64, 1 << 63),
    ];
    for op in ["sdiv", "srem"] {
        for (w, min) in cases {
            let ty = format!("i{w}");
            let args = [
                Value::int(w, min).unwrap(),
                Value::int(w, u64::MAX).unwrap(),
            ];
            expect_trap(&binop(op, &ty), "f", &args, TrapKind::IntegerOverflow);
        }
    }
    // The unsigned operations do not trap on these bit patterns.
    let v = common::eval(
        &binop("udiv", "i32"),
        "f",
        &[Value::I32(0x8000_0000), Value::I32(0xffff_ffff)],
    );
    assert_eq!(v, Value::I32(0));
}

#[test]
fn unreachable_and_trap_trap() {
    let src = "@u: fn() -> void = func {\n^entry:\n  unreachable\n}\n\
               @t: fn() -> void = func {\n^entry:\n  trap\n}\n";
    let t = expect_trap(src, "u", &[], TrapKind::Unreachable);
    assert_eq!(
        t.to_string(),
        "trap: unreachable executed in @u ^entry, instruction 0 (unreachable)"
    );
    expect_trap(src, "t", &[], TrapKind::Trap);
}

const MEM: &str = r#"
#[extern("malloc")]
@malloc: fn(i64) -> ptr = func
#[extern("free")]
@free: fn(ptr) -> void = func
@ro: i32 = global_const i32 5
@rw: i32 = global_var i32 6

@load_past_end: fn() -> i32 = func {
^entry:
  %p: ptr = stackalloc i32
  %q: ptr = elem i32, %p, i32 1
  %v: i32 = load %q
  ret %v
}
@load_before_start: fn() -> i32 = func {
^entry:
  %p: ptr = stackalloc [2 x i32]
  %q: ptr = elem i32, %p, i32 -1
  %v: i32 = load %q
  ret %v
}
@load_straddling: fn() -> i64 = func {
^entry:
  %p: ptr = stackalloc i32
  %v: i64 = load %p
  ret %v
}
@store_past_end: fn() -> void = func {
^entry:
  %p: ptr = stackalloc [4 x i8]
  %q: ptr = elem i8, %p, i32 2
  store %q, i32 7
  ret
}
@load_null: fn() -> i32 = func {
^entry:
  %v: i32 = load ptr null
  ret %v
}
@store_int_addr: fn() -> void = func {
^entry:
  %p: ptr = inttoptr i64 4096
  store %p, i8 1
  ret
}
@heap_use_after_free: fn() -> i32 = func {
^entry:
  %p: ptr = call @malloc(i64 8)
  store %p, i32 3
  call @free(%p)
  %v: i32 = load %p
  ret %v
}
@double_free: fn() -> void = func {
^entry:
  %p: ptr = call @malloc(i64 8)
  call @free(%p)
  call @free(%p)
  ret
}
@free_interior: fn() -> void = func {
^entry:
  %p: ptr = call @malloc(i64 8)
  %q: ptr = elem i8, %p, i32 1
  call @free(%q)
  ret
}
@escape: fn() -> ptr = func {
^entry:
  %p: ptr = stackalloc i32
  ret %p
}
@stack_use_after_return: fn() -> i32 = func {
^entry:
  %p: ptr = call @escape()
  %v: i32 = load %p
  ret %v
}
@store_const: fn() -> void = func {
^entry:
  store @ro, i32 1
  ret
}
@load_const_store_var: fn() -> i32 = func {
^entry:
  %a: i32 = load @ro
  store @rw, %a
  %b: i32 = load @rw
  ret %b
}
@load_function: fn() -> i32 = func {
^entry:
  %v: i32 = load @escape
  ret %v
}
"#;

#[test]
fn out_of_bounds_loads_and_stores_trap() {
    let t = run(MEM, "load_past_end", &[]).unwrap_err();
    assert!(
        matches!(t.kind, TrapKind::OutOfBounds { size: 4, .. }),
        "{t}"
    );
    assert_eq!(t.location.as_ref().unwrap().opcode, "load");
    let t = run(MEM, "load_before_start", &[]).unwrap_err();
    assert!(
        matches!(t.kind, TrapKind::OutOfBounds { size: 4, .. }),
        "{t}"
    );
    let t = run(MEM, "load_straddling", &[]).unwrap_err();
    assert!(
        matches!(t.kind, TrapKind::OutOfBounds { size: 8, .. }),
        "{t}"
    );
    let t = run(MEM, "store_past_end", &[]).unwrap_err();
    assert!(
        matches!(t.kind, TrapKind::OutOfBounds { size: 4, .. }),
        "{t}"
    );
    assert_eq!(t.location.as_ref().unwrap().opcode, "store");
}

#[test]
fn null_access_traps() {
    expect_trap(MEM, "load_null", &[], TrapKind::NullAccess { addr: 0 });
    expect_trap(
        MEM,
        "store_int_addr",
        &[],
        TrapKind::NullAccess { addr: 4096 },
    );
}

#[test]
fn use_after_free_traps() {
    let t = run(MEM, "heap_use_after_free", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::UseAfterFree { .. }), "{t}");
    let t = run(MEM, "stack_use_after_return", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::UseAfterFree { .. }), "{t}");
    let t = run(MEM, "double_free", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::InvalidFree { .. }), "{t}");
    let t = run(MEM, "free_interior", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::InvalidFree { .. }), "{t}");
}

#[test]
fn store_to_global_const_traps() {
    let t = run(MEM, "store_const", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::ReadOnlyStore { .. }), "{t}");
    assert_eq!(
        common::eval(MEM, "load_const_store_var", &[]),
        Value::I32(5)
    );
}

#[test]
fn memory_access_through_function_address_traps() {
    let t = run(MEM, "load_function", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::FunctionAccess { .. }), "{t}");
}

const INDIRECT: &str = r#"
@g: i64 = global_var i64 0
@sq: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = imul %x, %x
  ret %r
}
@call: fn(ptr) -> i32 = func {
^entry(%f: ptr):
  %r: i32 = call_indirect fn(i32) -> i32, %f(i32 7)
  ret %r
}
@wrong_sig: fn() -> i64 = func {
^entry:
  %r: i64 = call_indirect fn(i64) -> i64, @sq(i64 7)
  ret %r
}
@data: fn() -> i32 = func {
^entry:
  %r: i32 = call @call(@g)
  ret %r
}
@null: fn() -> i32 = func {
^entry:
  %r: i32 = call @call(ptr null)
  ret %r
}
@ok: fn() -> i32 = func {
^entry:
  %r: i32 = call @call(@sq)
  ret %r
}
"#;

#[test]
fn bad_function_pointers_trap() {
    assert_eq!(common::eval(INDIRECT, "ok", &[]), Value::I32(49));
    for f in ["wrong_sig", "data", "null"] {
        let t = run(INDIRECT, f, &[]).unwrap_err();
        assert!(
            matches!(t.kind, TrapKind::BadFunctionPointer { .. }),
            "{f}: {t}"
        );
        assert_eq!(t.location.as_ref().unwrap().opcode, "call_indirect");
    }
    expect_trap(
        INDIRECT,
        "null",
        &[],
        TrapKind::BadFunctionPointer { addr: 0 },
    );
}

const LOOP: &str = r#"
@spin: fn() -> void = func {
^entry:
  jump ^loop(i32 0)
^loop(%i: i32):
  %n: i32 = iadd %i, i32 1
  jump ^loop(%n)
}
@rec: fn(i32) -> i32 = func {
^entry(%n: i32):
  %m: i32 = iadd %n, i32 1
  %r: i32 = call @rec(%m)
  ret %r
}
@alloc_forever: fn() -> void = func {
^entry:
  jump ^loop
^loop:
  %p: ptr = stackalloc [65536 x i64]
  jump ^loop
}
"#;

#[test]
fn fuel_exhaustion_names_the_instruction() {
    let m = module(LOOP);
    let mut it = Interpreter::new(&m).unwrap().with_fuel(1001);
    let t = it.run("spin", &[]).unwrap_err();
    assert_eq!(t.kind, TrapKind::FuelExhausted);
    // 1 (entry jump) + 500 iterations of 2 instructions: the next one is the iadd.
    let loc = t.location.as_ref().unwrap();
    assert_eq!(
        (
            loc.func.as_str(),
            loc.block.as_str(),
            loc.index,
            loc.opcode.as_str()
        ),
        ("@spin", "^loop", 0, "iadd")
    );
    assert_eq!(it.fuel(), Some(0));
    assert!(
        t.to_string().contains("fuel exhausted in @spin ^loop"),
        "{t}"
    );
}

#[test]
fn deep_recursion_is_a_stack_overflow_trap() {
    let t = run(LOOP, "rec", &[Value::i32(0)]).unwrap_err();
    assert_eq!(
        t.kind,
        TrapKind::StackOverflow {
            limit: irkit_interp::DEFAULT_MAX_CALL_DEPTH
        }
    );
    let m = module(LOOP);
    let mut it = Interpreter::new(&m).unwrap().with_max_call_depth(5);
    let t = it.run("rec", &[Value::i32(0)]).unwrap_err();
    assert_eq!(t.kind, TrapKind::StackOverflow { limit: 5 });
}

#[test]
fn unbounded_stackalloc_is_out_of_memory() {
    let m = module(LOOP);
    let mut it = Interpreter::with_memory_limit(&m, 1 << 24).unwrap();
    let t = it.run("alloc_forever", &[]).unwrap_err();
    assert_eq!(t.kind, TrapKind::OutOfMemory);
}

const EXTERNS: &str = r#"
#[extern("no_such_function")]
@nope: fn() -> void = func
#[extern("abort")]
@abort: fn() -> void = func
#[extern("exit")]
@exit: fn(i32) -> void = func
@unknown: fn() -> void = func {
^entry:
  call @nope()
  ret
}
@aborts: fn() -> void = func {
^entry:
  call @abort()
  ret
}
#[export("main")]
@main: fn() -> i32 = func {
^entry:
  call @exit(i32 3)
  ret i32 0
}
"#;

#[test]
fn extern_traps_and_exit() {
    expect_trap(
        EXTERNS,
        "unknown",
        &[],
        TrapKind::UnknownExtern("no_such_function".into()),
    );
    expect_trap(EXTERNS, "aborts", &[], TrapKind::Abort);
    let m = module(EXTERNS);
    assert_eq!(Interpreter::new(&m).unwrap().run_main(), Ok(3));
}

#[test]
fn bad_entry_calls_are_reported() {
    let t = run(INDIRECT, "ok", &[Value::i32(1)]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::BadCall(_)), "{t}");
    let t = run(INDIRECT, "call", &[Value::i32(1)]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::BadCall(_)), "{t}");
    let t = run(INDIRECT, "missing", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::BadCall(_)), "{t}");
    assert!(t.location.is_none());
}

/// Modules that parse but do not verify: errors, never panics.
#[test]
fn unverified_modules_report_errors_without_panicking() {
    let parse = |src: &str| irkit_text::parse(src, "bad.ir").expect("parses");
    let bad_ops = parse(
        "@f: fn(i32) -> i64 = func {\n^entry(%x: i32):\n  %y: i64 = iadd %x, i64 1\n  ret %y\n}\n\
         @g: fn() -> i32 = func {\n^entry:\n  %v: i32 = load i32 5\n  ret %v\n}\n\
         @h: fn() -> i32 = func {\n^entry:\n  ret\n}\n\
         @k: fn() -> i32 = func {\n^entry:\n  %v: struct {i32} = insert 3 struct {i32} zero, i32 1\n  %w: i32 = extract 0 %v\n  ret %w\n}\n",
    );
    assert!(irkit_core::verify::verify(&bad_ops).is_err());
    let mut it = Interpreter::new(&bad_ops).expect("prepares");
    for f in ["f", "g", "h", "k"] {
        let t = it
            .run(f, &[Value::i32(1)][..usize::from(f == "f")])
            .unwrap_err();
        assert!(matches!(t.kind, TrapKind::Malformed(_)), "{f}: {t}");
    }
    let bad_init = parse("@g: i32 = global_const i64 5\n");
    assert!(Interpreter::new(&bad_init).is_err());
}

/// A constant nested far deeper than the nesting limit (a module built in memory; no reader
/// accepts one) is refused when the interpreter is built, not overflowed when dropped.
#[test]
fn values_over_the_nesting_limit_are_refused() {
    let mut m = irkit_core::Module::new();
    let mut t = m.ty_i32();
    let mut c = m.const_i32(1);
    for _ in 0..100_000 {
        t = m.ty_struct(&[t]).unwrap();
        c = m.const_aggregate(t, &[c]).unwrap();
    }
    let g = m
        .new_inst(
            irkit_core::Opcode::GLOBAL_CONST,
            Some(t),
            vec![c],
            Default::default(),
        )
        .unwrap();
    let root = m.root();
    m.append_child(root, g).unwrap();
    let r = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            irkit_interp::Interpreter::new(&m)
                .err()
                .map(|e| e.to_string())
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert!(r.is_some_and(|e| e.contains("nested deeper than 256 levels")));
}
