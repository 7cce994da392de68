//! Helpers shared by the integration tests.

#![allow(dead_code)]

use irkit_core::Module;
use irkit_interp::{Interpreter, Trap, TrapKind, Value};

/// Parses and verifies `src`, panicking with the diagnostics otherwise.
pub fn module(src: &str) -> Module {
    let m = irkit_text::parse(src, "test.ir").unwrap_or_else(|e| panic!("parse: {e}\n{src}"));
    if let Err(errs) = irkit_core::verify::verify(&m) {
        let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        panic!("verify:\n{}\n{src}", msgs.join("\n"));
    }
    m
}

/// Runs `func` of `src` with `args`.
pub fn run(src: &str, func: &str, args: &[Value]) -> Result<Option<Value>, Trap> {
    let m = module(src);
    let mut it = Interpreter::new(&m).expect("interpreter");
    it.run(func, args)
}

/// Runs `func` of `src` with `args`, expecting a result.
pub fn eval(src: &str, func: &str, args: &[Value]) -> Value {
    match run(src, func, args) {
        Ok(Some(v)) => v,
        other => panic!("{func}: expected a value, got {other:?}"),
    }
}

/// Runs `func` of `src` with `args`, expecting a trap; returns it.
pub fn trap(src: &str, func: &str, args: &[Value]) -> Trap {
    match run(src, func, args) {
        Err(t) => t,
        other => panic!("{func}: expected a trap, got {other:?}"),
    }
}

/// Runs and expects a trap of `kind`.
pub fn expect_trap(src: &str, func: &str, args: &[Value], kind: TrapKind) -> Trap {
    let t = trap(src, func, args);
    assert_eq!(t.kind, kind, "{t}");
    t
}

/// A function `@f: fn(T, T) -> T` applying `op` to its parameters.
pub fn binop(op: &str, ty: &str) -> String {
    format!(
        "@f: fn({ty}, {ty}) -> {ty} = func {{\n^entry(%a: {ty}, %b: {ty}):\n  %r: {ty} = {op} %a, %b\n  ret %r\n}}\n"
    )
}
