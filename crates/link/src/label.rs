//! How an instantiation or a type is spelled in the linker's messages and name hints:
//! `@max<i32, ord_i32>`, `struct {i32, f64}`, `[4 x i8]`, bounded in depth and length. Both
//! specialization and the shared generics name instances with it.

use irkit_core::{Inst, Module, Opcode};

/// How an instantiation is named in messages: `@max<i32, ord_i32>` (its name hint is the
/// same without the `@`).
pub(crate) fn label(m: &Module, s: Inst) -> String {
    let mut out = String::from("@");
    spell(m, s, 0, &mut out);
    out
}

fn spell(m: &Module, x: Inst, depth: usize, out: &mut String) {
    if depth > 3 || out.len() > 80 {
        out.push('…');
        return;
    }
    let d = m.data(x);
    match d.opcode() {
        Opcode::SPECIALIZE => {
            let ops = d.operands();
            if let Some((&g, args)) = ops.split_first() {
                spell(m, g, depth + 1, out);
                out.push('<');
                for (k, &a) in args.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    spell(m, a, depth + 1, out);
                }
                out.push('>');
            }
        }
        Opcode::STRUCT | Opcode::NAMED_STRUCT => {
            out.push_str("struct {");
            for (k, &f) in d.operands().iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                spell(m, f, depth + 1, out);
            }
            out.push('}');
        }
        Opcode::ARRAY => {
            out.push_str(&format!("[{} x ", d.payload().as_int().unwrap_or(0)));
            if let Some(&e) = d.operands().first() {
                spell(m, e, depth + 1, out);
            }
            out.push(']');
        }
        op if op.is_type() && d.operands().is_empty() => out.push_str(&op.to_string()),
        op => match m.name(x) {
            Some(n) => out.push_str(n),
            None => out.push_str(&format!("{op}")),
        },
    }
}
