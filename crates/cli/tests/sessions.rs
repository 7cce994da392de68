//! Sessions (spec/backends.md, "Sessions"): the same loads and calls on every back end that
//! has sessions, with the same results. `sessions/a.ir` is instantiated, its exports called
//! (results, a struct result's leaves, traps, the state a trap leaves, `exit`, the call depth
//! limit), then `sessions/b.ir` is linked onto the live program (`irkit_link::extend`) and
//! loaded: it imports `a`'s global and function and sees their live state.

use irkit_backend::{Backend, Call, RunOptions, Session, Val, trap_kinds};
use irkit_core::Module;
use irkit_link::{LinkOptions, extend};

fn input(name: &str) -> irkit_link::Input {
    let path = format!("{}/tests/sessions/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("test module");
    irkit_tests::text_input(name, &text).expect("test module parses")
}

fn load(s: &mut dyn Session, name: &str) {
    let m = extend(s.module(), vec![input(name)], &LinkOptions::default())
        .expect("links onto the live program")
        .module;
    s.load(m).expect("loads");
}

fn trapped(kind: &str) -> Call {
    Call::Trapped {
        kind: kind.into(),
        message: String::new(),
    }
}

thread_local! {
    /// Every trap line of the script, in order (compared between the back ends).
    static LINES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The call's result, with a trap's message checked for its kind, recorded in [`LINES`], and
/// dropped.
fn call(s: &mut dyn Session, f: &str, args: &[Val]) -> Call {
    match s.call(f, args).expect("a callable export") {
        Call::Trapped { kind, message } => {
            assert!(
                message.starts_with(&format!("trap: {kind} in @")),
                "{message}"
            );
            LINES.with(|l| l.borrow_mut().push(message));
            trapped(&kind)
        }
        c => c,
    }
}

/// Runs the script on `backend`; returns its trap lines.
fn script(backend: &dyn Backend) -> Vec<String> {
    LINES.with(|l| l.borrow_mut().clear());
    let opts = RunOptions {
        max_depth: Some(100),
        ..RunOptions::default()
    };
    let mut s = backend.session(&opts).expect("sessions are supported");
    let s = &mut *s;
    assert_eq!(s.module().top_level().len(), 0);
    load(s, "a.ir");
    let ret = |v: Vec<Val>| Call::Returned(v);
    assert_eq!(call(s, "get", &[]), ret(vec![Val::I32(40)]));
    assert_eq!(call(s, "bump", &[Val::I32(2)]), ret(vec![Val::I32(42)]));
    assert_eq!(call(s, "get", &[]), ret(vec![Val::I32(42)]));
    assert_eq!(
        call(s, "div", &[Val::I32(7), Val::I32(0)]),
        trapped(trap_kinds::DIVISION_BY_ZERO)
    );
    assert_eq!(
        call(s, "div", &[Val::I32(0x8000_0000), Val::I32(u32::MAX)]),
        trapped(trap_kinds::INTEGER_OVERFLOW)
    );
    assert_eq!(
        call(s, "div", &[Val::I32(-7i32 as u32), Val::I32(2)]),
        ret(vec![Val::I32(-3i32 as u32)])
    );
    // The state a trap leaves is kept.
    assert_eq!(
        call(s, "set_then_trap", &[Val::I32(7)]),
        trapped(trap_kinds::TRAP)
    );
    assert_eq!(call(s, "get", &[]), ret(vec![Val::I32(7)]));
    assert_eq!(call(s, "quit", &[Val::I32(3)]), Call::Exited(3));
    assert_eq!(call(s, "get", &[]), ret(vec![Val::I32(4)]));
    // The depth counter restarts at each call.
    assert_eq!(
        call(s, "deep", &[Val::I64(200)]),
        trapped(&trap_kinds::stack_overflow(100))
    );
    assert_eq!(call(s, "deep", &[Val::I64(99)]), ret(vec![Val::I64(99)]));
    assert_eq!(
        call(s, "deep", &[Val::I64(100)]),
        trapped(&trap_kinds::stack_overflow(100))
    );
    assert_eq!(
        call(s, "pair", &[Val::I8(0xfe), Val::F64(1.5f64.to_bits())]),
        ret(vec![
            Val::I8(0xfe),
            Val::F64(3.0f64.to_bits()),
            Val::I1(true)
        ])
    );
    assert_eq!(call(s, "nop", &[]), ret(vec![]));
    // Bad calls are errors, not results.
    assert!(s.call("nowhere", &[]).is_err());
    assert!(s.call("bump", &[]).is_err());
    assert!(s.call("bump", &[Val::I64(1)]).is_err());
    // A module that does not extend the live one is refused; the session goes on.
    assert!(s.load(Module::new()).is_err());
    assert_eq!(call(s, "get", &[]), ret(vec![Val::I32(4)]));

    // A second module, linked onto the live program, sees its state.
    load(s, "b.ir");
    assert_eq!(call(s, "b_get", &[]), ret(vec![Val::I32(4)]));
    assert_eq!(call(s, "b_bump2", &[Val::I32(10)]), ret(vec![Val::I64(29)]));
    assert_eq!(call(s, "get", &[]), ret(vec![Val::I32(24)]));
    assert_eq!(call(s, "bump", &[Val::I32(1)]), ret(vec![Val::I32(25)]));
    assert_eq!(call(s, "b_get", &[]), ret(vec![Val::I32(25)]));
    assert_eq!(call(s, "b_bump2", &[Val::I32(0)]), ret(vec![Val::I64(54)]));
    // The first module's functions still work, and trap, after the load.
    assert_eq!(
        call(s, "div", &[Val::I32(1), Val::I32(0)]),
        trapped(trap_kinds::DIVISION_BY_ZERO)
    );
    assert_eq!(call(s, "b_get", &[]), ret(vec![Val::I32(25)]));

    // A third: data naming live and new functions, zero-initialized memory, indirect calls.
    load(s, "c.ir");
    assert_eq!(call(s, "zero_at", &[Val::I32(1)]), ret(vec![Val::I64(0)]));
    let via = |s: &mut dyn Session, i: u32, x: u32| call(s, "via", &[Val::I32(i), Val::I32(x)]);
    assert_eq!(via(s, 0, 5), ret(vec![Val::I32(1030)]));
    assert_eq!(call(s, "get", &[]), ret(vec![Val::I32(30)]));
    assert_eq!(via(s, 1, 21), ret(vec![Val::I32(1042)]));
    assert_eq!(call(s, "zero_at", &[Val::I32(1)]), ret(vec![Val::I64(21)]));
    assert_eq!(
        call(s, "div_via", &[Val::I32(3)]),
        trapped(trap_kinds::DIVISION_BY_ZERO)
    );
    assert_eq!(
        call(s, "null_call", &[]),
        trapped(&trap_kinds::bad_function_pointer(0))
    );
    assert_eq!(
        call(
            s,
            "mix",
            &[Val::F32(2.5f32.to_bits()), Val::I1(true), Val::I16(0x7fff)]
        ),
        ret(vec![Val::F32((-2.5f32).to_bits()), Val::I16(0x7ffd)])
    );
    assert_eq!(call(s, "quit", &[Val::I32(-1i32 as u32)]), Call::Exited(-1));
    assert_eq!(call(s, "b_get", &[]), ret(vec![Val::I32(0)]));
    assert_eq!(call(s, "zero_at", &[Val::I32(0)]), ret(vec![Val::I64(5)]));
    LINES.with(|l| l.take())
}

#[test]
fn interpreter_session() {
    let lines = script(&irkit_interp::InterpBackend);
    assert_eq!(
        lines.first().map(String::as_str),
        Some("trap: integer division by zero in @div ^entry, instruction 0 (sdiv %q)")
    );
}

/// The JIT gives the same results and the same trap lines as the interpreter.
#[test]
fn jit_session() {
    let jit = script(&irkit_cranelift::Jit);
    assert_eq!(jit, script(&irkit_interp::InterpBackend));
}

/// A generated module set (`irkit-testgen`), loaded one module at a time in dependency order
/// when it links so (each linked onto the live program), else linked at once; then `main` is
/// called twice (the second call sees what the first left in the globals) on both back ends,
/// which must agree. Returns whether the set was loaded incrementally.
fn random_session(seed: u64) -> bool {
    use irkit_testgen::{Config, Entropy, module_set};
    let set = module_set(&mut Entropy::from_seed(seed), &Config::default());
    let text: String = set
        .modules
        .iter()
        .map(|(_, m)| irkit_text::print(m))
        .collect();
    // Addresses differ between back ends (such programs only have to run); procs are located
    // differently (kinds only).
    let compare = !text.contains("ptrtoint");
    let procs = text.contains("proc");
    let input = |(name, m): &(String, Module)| {
        irkit_link::Input::from_module(name, m).expect("generated modules encode")
    };
    let opts = LinkOptions::default();
    // Dependency order is m0 (main) first: load the last first.
    let mut steps = Vec::new();
    let mut live = Module::new();
    // Lowering procs rewrites them in place: a lowered extension would not extend the
    // lowered live program. Sets with procs are linked at once.
    let mut incremental = !procs;
    for m in set.modules.iter().rev().filter(|_| !procs) {
        match extend(&live, vec![input(m)], &opts) {
            Ok(l) => {
                live = l.module.clone();
                steps.push(l.module);
            }
            Err(e) => {
                if std::env::var_os("SHOW").is_some() {
                    eprintln!("seed {seed}: {e}");
                }
                incremental = false;
                break;
            }
        }
    }
    if !incremental {
        let all = set.modules.iter().map(input).collect();
        let l = extend(&Module::new(), all, &opts).expect("the set links");
        steps = vec![l.module];
    }
    let run = |backend: &dyn Backend, lower: bool| -> Vec<Call> {
        let mut s = backend
            .session(&RunOptions::default())
            .expect("sessions are supported");
        for m in &steps {
            let mut m = m.clone();
            if lower {
                irkit_noir::lower_procs(&mut m).expect("procs lower");
            }
            s.load(m).expect("loads");
        }
        (0..2)
            .map(|_| match s.call("main", &[]).expect("main is callable") {
                Call::Trapped { kind, .. } if procs => Call::Trapped {
                    kind,
                    message: String::new(),
                },
                c => c,
            })
            .collect()
    };
    let interp = run(&irkit_interp::InterpBackend, false);
    let jit = run(&irkit_cranelift::Jit, true);
    if compare {
        assert_eq!(jit, interp, "seed {seed}:\n{set:?}");
    }
    incremental
}

#[test]
fn random_sessions() {
    // 48 sets: the sets without a proc are the ones loaded one module at a time, and the
    // first 24 held 4 of them before the generator made tail calls, 3 after (6 of 48).
    let incremental = (0..48).filter(|&s| random_session(s)).count();
    eprintln!("{incremental} of 48 sets loaded one module at a time");
    assert!(
        incremental >= 4,
        "only {incremental} sets loaded one module at a time"
    );
}

/// Live indirect call sites reserve the stack of the largest function of their type compiled
/// so far: the JIT refuses a later function of that type with larger stack objects, and the
/// session goes on.
#[test]
fn jit_refuses_a_larger_frame_behind_live_indirect_calls() {
    let first = r#"
@slot: ptr = global_var ptr null

#[export("set")]
@set: fn(ptr) -> void = func {
^entry(%f: ptr):
  store @slot, %f
  ret
}

#[export("small")]
@small: fn(i64) -> i64 = func {
^entry(%x: i64):
  %a: ptr = stackalloc [4 x i64]
  ret %x
}

#[export("call")]
@call: fn(i64) -> i64 = func {
^entry(%x: i64):
  %f: ptr = load @slot
  %r: i64 = call_indirect fn(i64) -> i64, %f(%x)
  ret %r
}
"#;
    let second = r#"
#[export("big")]
@big: fn(i64) -> i64 = func {
^entry(%x: i64):
  %a: ptr = stackalloc [100000 x i64]
  ret %x
}
"#;
    let third = r#"
#[export("fine")]
@fine: fn(i64) -> i64 = func {
^entry(%x: i64):
  %a: ptr = stackalloc [2 x i64]
  %y: i64 = iadd %x, i64 1
  ret %y
}
"#;
    let text = |name: &str, t: &str| irkit_tests::text_input(name, t).expect("parses");
    let mut s = irkit_cranelift::Jit
        .session(&RunOptions::default())
        .expect("sessions");
    let opts = LinkOptions::default();
    let m = extend(s.module(), vec![text("first.ir", first)], &opts).unwrap();
    s.load(m.module).unwrap();
    let m = extend(s.module(), vec![text("second.ir", second)], &opts).unwrap();
    let err = s.load(m.module).unwrap_err().to_string();
    assert!(err.contains("reserve"), "{err}");
    let m = extend(s.module(), vec![text("third.ir", third)], &opts).unwrap();
    s.load(m.module).unwrap();
    assert_eq!(
        s.call("fine", &[Val::I64(1)]).unwrap(),
        Call::Returned(vec![Val::I64(2)])
    );
    assert_eq!(
        s.call("call", &[Val::I64(1)]).unwrap(),
        Call::Trapped {
            kind: trap_kinds::bad_function_pointer(0),
            message:
                "trap: bad function pointer 0x0 in @call ^entry, instruction 1 (call_indirect %r)"
                    .into()
        }
    );
}

/// What a WebAssembly script runner does: instantiate `lib.wat`, call its exports, then
/// instantiate `main.wat`, which imports `lib`'s memory, global and functions from the live
/// instance. Both back ends agree.
fn wasm_script(backend: &dyn Backend) -> Vec<Call> {
    let wasm = |name: &str| {
        let path = format!("{}/tests/wasm/{name}.wat", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).expect("wat file");
        let m = irkit_wasm::translate_input(&bytes, name).expect("translates");
        irkit_link::Input::from_module(&format!("{name}.irm"), &m).expect("encodes")
    };
    let mut s = backend
        .session(&RunOptions::default())
        .expect("sessions are supported");
    let opts = LinkOptions::default();
    let mut out = Vec::new();
    let m = extend(s.module(), vec![wasm("lib")], &opts).expect("links");
    s.load(m.module).expect("loads");
    out.push(s.call("wasm-init:lib", &[]).expect("init"));
    out.push(s.call("wasm:lib:fill", &[Val::I32(3)]).expect("fill"));
    out.push(s.call("wasm:lib:sum", &[Val::I32(3)]).expect("sum"));
    let m = extend(s.module(), vec![wasm("main")], &opts).expect("links onto lib");
    s.load(m.module).expect("loads");
    out.push(s.call("wasm-init:main", &[]).expect("init"));
    out.push(s.call("wasm:main:oob", &[]).expect("oob"));
    out.push(s.call("wasm:main:run", &[]).expect("run"));
    out.push(s.call("wasm:main:oob", &[]).expect("oob"));
    out.push(s.call("wasm:lib:sum", &[Val::I32(5)]).expect("sum"));
    out
}

#[test]
fn wasm_instances_share_live_state() {
    let interp = wasm_script(&irkit_interp::InterpBackend);
    assert_eq!(interp[2], Call::Returned(vec![Val::I32(5)]));
    // One page of memory: out of bounds.
    assert!(matches!(interp[4], Call::Trapped { .. }), "{interp:?}");
    // 38 as a program, plus one: this script's own call of `sum` counted in lib's live global.
    assert_eq!(interp[5], Call::Returned(vec![Val::I32(39)]));
    // `run` grew the shared memory by two pages: 65536 is in bounds (and zero) now.
    assert_eq!(interp[6], Call::Returned(vec![Val::I32(0)]));
    assert_eq!(interp[7], Call::Returned(vec![Val::I32(30)]));
    assert_eq!(wasm_script(&irkit_cranelift::Jit), interp);
}
