//! Operands: references by name, inline types (`[N x T]`, `struct {…}`, `fn(…) -> R`) and
//! constants (`T value`), bounded in depth.

use std::fmt::Write;

use irkit_core::{Inst, Opcode, Payload};

use super::{MAX_PRINT_DEPTH, Printer};
use crate::literal::{write_bytes_lit, write_f32, write_f64, write_str_lit};

impl Printer<'_> {
    // ---- operands -----------------------------------------------------------------------------

    /// Whether an operand prints as a reference (so it can be grouped with arguments).
    pub(super) fn is_ref(&self, o: Inst) -> bool {
        match self.m.get(o) {
            Some(d) => !d.opcode().is_hoistable() || self.n.is_stmt_hoist(o),
            None => true,
        }
    }

    /// A comma-separated operand list; a block operand is grouped with the operands after it
    /// up to the next block operand (its edge, `irkit_core::edges`): `^b(%x, %y)`.
    pub(super) fn list(&mut self, ops: &[Inst], depth: u32) {
        let m = self.m;
        let is_block = |o: Inst| m.get(o).is_some_and(|d| d.opcode() == Opcode::BLOCK);
        let (leading, edges) = irkit_core::edges::edges(ops, is_block);
        let mut first = true;
        for &o in &ops[leading] {
            if !first {
                self.out.push_str(", ");
            }
            first = false;
            self.operand(o, depth);
        }
        for e in edges {
            if !first {
                self.out.push_str(", ");
            }
            first = false;
            self.name(e.target);
            if !e.args.is_empty() {
                self.out.push('(');
                self.list(&ops[e.args], depth);
                self.out.push(')');
            }
        }
    }

    pub(super) fn name(&mut self, i: Inst) {
        match self.n.get(i) {
            Some(s) => self.out.push_str(s),
            None => {
                let _ = write!(self.out, "%\"<unnamed {i}>\"");
            }
        }
    }

    pub(super) fn operand(&mut self, o: Inst, depth: u32) {
        if self.m.get(o).is_some_and(|d| d.opcode().is_hoistable()) && !self.n.is_stmt_hoist(o) {
            self.inline(o, depth);
        } else {
            self.name(o);
        }
    }

    /// A type or constant in its inline form.
    pub(super) fn inline(&mut self, h: Inst, depth: u32) {
        if depth >= MAX_PRINT_DEPTH {
            self.out.push('…');
            return;
        }
        self.mark(h);
        let m = self.m;
        let d = m.data(h);
        let ops = d.operands();
        let op = d.opcode();
        if let Some(s) = irkit_core::scalar::scalar(op) {
            self.out.push_str(s.name);
            return;
        }
        match op {
            Opcode::ARRAY => {
                let n = d.payload().as_int().unwrap_or(0);
                let _ = write!(self.out, "[{n} x ");
                if let Some(&e) = ops.first() {
                    self.operand(e, depth + 1);
                }
                self.out.push(']');
                return;
            }
            Opcode::VEC => {
                self.out.push_str("vec ");
                if let Some(&e) = ops.first() {
                    self.operand(e, depth + 1);
                }
                let n = d.payload().as_int().unwrap_or(0);
                let _ = write!(self.out, " {n}");
                return;
            }
            Opcode::NAMED_STRUCT => {
                // Only in a single printed instruction (a message): a whole module names every
                // named struct in a statement of its own. Its name says which it is.
                self.out.push_str("named_struct ");
                write_str_lit(&mut self.out, d.payload().as_str().unwrap_or(""));
                return;
            }
            Opcode::STRUCT => {
                self.out.push_str("struct {");
                self.list(ops, depth + 1);
                self.out.push('}');
                return;
            }
            Opcode::FN => {
                self.out.push_str("fn(");
                self.list(ops.get(1..).unwrap_or(&[]), depth + 1);
                self.out.push_str(") -> ");
                if let Some(&r) = ops.first() {
                    self.operand(r, depth + 1);
                }
                return;
            }
            _ => {}
        }
        let Some(t) = d.ty() else {
            let _ = write!(self.out, "<{op}>");
            return;
        };
        self.operand(t, depth + 1);
        self.out.push(' ');
        match (op, d.payload()) {
            (Opcode::CONST_INT, Payload::Int(v)) => match m.int_width(t) {
                Some(1) => self
                    .out
                    .push_str(if *v & 1 == 1 { "true" } else { "false" }),
                Some(w) => {
                    let _ = write!(self.out, "{}", irkit_core::payload::sign_extend(*v, w));
                }
                None => {
                    let _ = write!(self.out, "{v}");
                }
            },
            (Opcode::CONST_FLOAT, Payload::Float(b)) => {
                if m.float_width(t) == Some(32) {
                    write_f32(&mut self.out, *b as u32);
                } else {
                    write_f64(&mut self.out, *b);
                }
            }
            (Opcode::CONST_NULL, _) => self.out.push_str("null"),
            (Opcode::CONST_ZERO, _) => self.out.push_str("zero"),
            (Opcode::CONST_BYTES, Payload::Bytes(b)) => write_bytes_lit(&mut self.out, b),
            (Opcode::CONST_AGGREGATE, _) => {
                self.out.push('[');
                self.list(ops, depth + 1);
                self.out.push(']');
            }
            _ => {
                let _ = write!(self.out, "<{op}>");
            }
        }
    }
}
