//! Helpers shared by the integration tests.

#![allow(dead_code)]

use irkit_core::Module;
use irkit_interp::{Interpreter, Trap, Value};

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
