//! The C functions the interpreter provides to `extern("name")` declarations without a body:
//! `putchar`, `malloc`, `calloc`, `free`, `memcpy`, `memmove`, `memset`, `exit` and `abort`.

use std::io::Write;

use crate::layout::{Scalar, ScalarValue};
use crate::memory::{Kind, Memory};
use crate::program::Ret;
use crate::trap::TrapKind;
use crate::value::Value;

/// Where `putchar` writes.
#[derive(Debug, Default)]
pub(crate) struct Output {
    /// Captured bytes.
    pub(crate) captured: Vec<u8>,
    /// Write to the process's standard output instead of capturing.
    pub(crate) passthrough: bool,
}

/// The names of the extern functions the interpreter provides.
pub const PROVIDED: &[&str] = &[
    "putchar", "malloc", "calloc", "free", "memcpy", "memmove", "memset", "exit", "abort",
];

/// Calls extern `name` with `args`; `ret` is the declared return type.
pub(crate) fn call(
    name: &str,
    args: &[Value],
    ret: Ret,
    mem: &mut Memory,
    out: &mut Output,
) -> Result<Option<Value>, TrapKind> {
    let bad = |why: &str| TrapKind::BadExtern {
        name: name.to_string(),
        why: why.to_string(),
    };
    let int = |i: usize| -> Result<u64, TrapKind> {
        args.get(i)
            .and_then(Value::as_int)
            .map(|(_, b)| b)
            .ok_or_else(|| bad(&format!("argument {i} must be an integer")))
    };
    let ptr = |i: usize| -> Result<u64, TrapKind> {
        args.get(i)
            .and_then(Value::as_ptr)
            .ok_or_else(|| bad(&format!("argument {i} must be a ptr")))
    };
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(bad(&format!(
                "takes {}, declared with {}",
                irkit_core::message::count(n, "argument"),
                args.len()
            )))
        }
    };
    let result: Option<u64> = match name {
        "putchar" => {
            arity(1)?;
            let c = int(0)? as u8;
            if out.passthrough {
                let mut so = std::io::stdout().lock();
                // Output errors are not the program's: putchar returns EOF (-1) as C does.
                if so.write_all(&[c]).and_then(|()| so.flush()).is_err() {
                    return ret_value(Some(u64::MAX), ret, &bad);
                }
            } else {
                out.captured.push(c);
            }
            Some(u64::from(c))
        }
        "malloc" => {
            arity(1)?;
            // C's malloc returns null when it cannot allocate.
            Some(mem.alloc(Kind::Heap, int(0)?).unwrap_or(0))
        }
        "calloc" => {
            arity(2)?;
            // Every object starts zeroed; a product that overflows is refused, as in C.
            let size = int(0)?.checked_mul(int(1)?);
            Some(size.map_or(0, |n| mem.alloc(Kind::Heap, n).unwrap_or(0)))
        }
        "free" => {
            arity(1)?;
            let p = ptr(0)?;
            if p != 0 {
                mem.release(p, true)?;
            }
            None
        }
        "memcpy" | "memmove" => {
            arity(3)?;
            let (d, s, n) = (ptr(0)?, ptr(1)?, int(2)?);
            mem.copy(d, s, n)?;
            Some(d)
        }
        "memset" => {
            arity(3)?;
            let (d, c, n) = (ptr(0)?, int(1)?, int(2)?);
            mem.fill(d, c as u8, n)?;
            Some(d)
        }
        "exit" => {
            arity(1)?;
            let code = args[0]
                .as_signed()
                .ok_or_else(|| bad("argument 0 must be an integer"))?;
            return Err(TrapKind::Exit(code as i32));
        }
        "abort" => return Err(TrapKind::Abort),
        _ => return Err(TrapKind::UnknownExtern(name.to_string())),
    };
    ret_value(result, ret, &bad)
}

/// The declared result of an extern, from the raw bits the C function returned.
fn ret_value(
    bits: Option<u64>,
    ret: Ret,
    bad: &dyn Fn(&str) -> TrapKind,
) -> Result<Option<Value>, TrapKind> {
    match (ret, bits) {
        (Ret::Void, _) => Ok(None),
        (Ret::Scalar(s @ (Scalar::Int(_) | Scalar::Ptr)), Some(b)) => Ok(Some(s.value(b))),
        _ => Err(bad("declared with a return type it does not have")),
    }
}
