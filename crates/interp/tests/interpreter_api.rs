//! What the interpreter's API promises beyond the result of one call: output captured and state
//! kept across calls and traps, its limits (fuel, call depth, memory) as typed traps naming the
//! instruction, arguments checked at entry, aggregate arguments, a grown linear memory's old
//! bytes freed, unverified modules and values nested too deep refused without a crash. What a call gives (values and traps, spec/ir.md) is
//! the file cases' business: `tests/semantics/*.ir`, run on every back end by
//! `tests/tests/semantics.rs` of `irkit-tests`.

mod common;

use common::{module, run};
use irkit_interp::{Interpreter, TrapKind, Value};

#[test]
fn aggregate_arguments_and_persistent_globals() {
    let src = r#"
@S = struct {i8, i64, i16}
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
    let int = |w, v: i64| Value::int(w, v as u64).unwrap();
    let s = Value::Aggregate(vec![int(8, 1), Value::i64(21), int(16, 3)].into());
    let r = Value::Aggregate(vec![int(8, 1), Value::i64(42), int(16, 3)].into());
    let m = module(src);
    let mut it = Interpreter::new(&m).unwrap();
    assert_eq!(it.run("aggregates", &[s]), Ok(Some(r)));
    assert_eq!(it.run("bump", &[]), Ok(Some(Value::i32(1))));
    assert_eq!(it.run("bump", &[]), Ok(Some(Value::i32(2))));
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
        TrapKind::Trap
    );
    assert_eq!(it.output(), b"\xffA");
    let t = it.run("use_saved", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::UseAfterFree { .. }), "{t}");
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

#[test]
fn run_main_returns_the_code_exit_was_called_with() {
    let src = r#"
#[extern("exit")]
@exit: fn(i32) -> void = func
#[export("main")]
@main: fn() -> i32 = func {
^entry:
  call @exit(i32 3)
  ret i32 0
}
"#;
    let m = module(src);
    assert_eq!(Interpreter::new(&m).unwrap().run_main(), Ok(3));
}

#[test]
fn bad_entry_calls_are_reported() {
    const INDIRECT: &str = r#"
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
@ok: fn() -> i32 = func {
^entry:
  %r: i32 = call @call(@sq)
  ret %r
}
"#;
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

/// A linear memory's growth moves its bytes to a new object (spec/backends.md, "Linear
/// memories"): through the new `base` they are kept and the new page is zero; the old `base`
/// is a use after free.
#[test]
fn a_grown_linear_memory_moves_and_its_old_base_is_freed() {
    let src = r#"
@mem: struct {ptr, i64, i32, i64} = global_var struct {ptr, i64, i32, i64} [ptr null, i64 0, i32 4, i64 0]
@old: ptr = global_var ptr null
@grow: fn() -> i32 = func {
^entry:
  %g: i32 = mem_grow @mem, i32 1
  mem_store 0 @mem, i32 8, i32 7
  %f: ptr = elem struct {ptr, i64, i32, i64}, @mem, i64 0, i32 0
  %b: ptr = load %f
  store @old, %b
  %h: i32 = mem_grow @mem, i32 2
  %k: i32 = mem_load 0 @mem, i32 8
  %z: i32 = mem_load 0 @mem, i32 196604
  %r: i32 = iadd %k, %z
  ret %r
}
@stale: fn() -> i32 = func {
^entry:
  %b: ptr = load @old
  %v: i32 = load %b
  ret %v
}
"#;
    let m = module(src);
    let mut it = Interpreter::new(&m).unwrap();
    assert_eq!(it.run("grow", &[]), Ok(Some(Value::i32(7))));
    let t = it.run("stale", &[]).unwrap_err();
    assert!(matches!(t.kind, TrapKind::UseAfterFree { .. }), "{t}");
}
