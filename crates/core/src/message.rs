//! Wording shared by the messages of every crate, so that they read alike.

use std::fmt::Write;

use crate::{Inst, Module, Opcode, Payload};

/// `n` followed by `word` in the singular or the plural: `1 argument`, `2 arguments`,
/// `0 parameters`.
pub fn count(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// How deep [`value_text`] follows a type's or constant's operands before it writes `…`.
const MAX_VALUE_DEPTH: u32 = 16;

/// A type or constant of `m` as a message shows it, in the text format's inline syntax for the
/// common cases: `i32`, `[4 x i8]`, `struct {i32, ptr}`, `fn(i32) -> i64`, `i32 -1`, `i1 true`;
/// any other value as `<opcode>`. For crates that write messages without the text format (the
/// linker): the text printer (`irkit_text::print_inst`) is the canonical rendering.
pub fn value_text(m: &Module, v: Inst) -> String {
    let mut out = String::new();
    write_value(&mut out, m, v, 0);
    out
}

fn write_value(out: &mut String, m: &Module, v: Inst, depth: u32) {
    if depth >= MAX_VALUE_DEPTH {
        out.push('…');
        return;
    }
    let Some(d) = m.get(v) else {
        out.push_str("<?>");
        return;
    };
    let list = |out: &mut String, ops: &[Inst]| {
        for (k, &o) in ops.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            write_value(out, m, o, depth + 1);
        }
    };
    let op = d.opcode();
    if let Some(s) = crate::scalar::scalar(op) {
        out.push_str(s.name);
        return;
    }
    let ops = d.operands();
    match (op, d.payload()) {
        (Opcode::ARRAY, p) => {
            let _ = write!(out, "[{} x ", p.as_int().unwrap_or(0));
            list(out, ops.get(..1).unwrap_or(&[]));
            out.push(']');
        }
        (Opcode::VEC, p) => {
            out.push_str("vec ");
            list(out, ops.get(..1).unwrap_or(&[]));
            let _ = write!(out, " {}", p.as_int().unwrap_or(0));
        }
        (Opcode::STRUCT, _) => {
            out.push_str("struct {");
            list(out, ops);
            out.push('}');
        }
        (Opcode::NAMED_STRUCT, p) => {
            let _ = write!(out, "named_struct {:?}", p.as_str().unwrap_or(""));
        }
        (Opcode::FN, _) => {
            out.push_str("fn(");
            list(out, ops.get(1..).unwrap_or(&[]));
            out.push_str(") -> ");
            list(out, ops.get(..1).unwrap_or(&[]));
        }
        (Opcode::CONST_INT, Payload::Int(bits)) if d.ty().is_some() => {
            let t = d.ty().unwrap_or(v);
            write_value(out, m, t, depth + 1);
            match m.int_width(t) {
                Some(1) => out.push_str(if bits & 1 == 1 { " true" } else { " false" }),
                Some(w) => {
                    let _ = write!(out, " {}", crate::payload::sign_extend(*bits, w));
                }
                None => {
                    let _ = write!(out, " {bits}");
                }
            }
        }
        _ => {
            let _ = write!(out, "<{op}>");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_singular_every_other_count_plural() {
        assert_eq!(super::count(1, "argument"), "1 argument");
        assert_eq!(super::count(0, "argument"), "0 arguments");
        assert_eq!(super::count(2, "parameter"), "2 parameters");
    }

    #[test]
    fn values_read_as_the_text_format_writes_them() {
        use crate::{Module, Opcode, Payload};
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let i64t = m.intern(Opcode::I64, None, &[], Payload::None).unwrap();
        let arr = m
            .intern(Opcode::ARRAY, None, &[i32t], Payload::Int(4))
            .unwrap();
        let st = m
            .intern(Opcode::STRUCT, None, &[i32t, arr], Payload::None)
            .unwrap();
        let f = m.ty_fn(i64t, &[i32t, st]).unwrap();
        let minus_one = m
            .intern(
                Opcode::CONST_INT,
                Some(i32t),
                &[],
                Payload::Int(0xffff_ffff),
            )
            .unwrap();
        assert_eq!(
            super::value_text(&m, f),
            "fn(i32, struct {i32, [4 x i32]}) -> i64"
        );
        assert_eq!(super::value_text(&m, minus_one), "i32 -1");
    }
}
