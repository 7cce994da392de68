//! Payloads and operands: literals after an opcode, references, inline types (`[N x T]`,
//! `struct {…}`, `fn(…) -> R`) and constants (`T value`), with the nesting bound on values.

use irkit_core::{FloatCC, IntCC, Opcode, PayloadKind};

use super::words::{is_const_value_start, prim_type};
use super::{MAX_DEPTH, PResult, Parser};
use crate::ast::{ConstValue, Name, Operand, PayloadLit};
use crate::error::Pos;
use crate::lexer::Tok;

impl Parser<'_, '_> {
    // ---- payloads -----------------------------------------------------------------------------

    pub(super) fn at_payload(&self, op: Opcode, by_name: bool) -> bool {
        match self.peek().tok {
            Tok::Int(_)
            | Tok::Float(_)
            | Tok::Nan(_)
            | Tok::FBits(_)
            | Tok::Str(_)
            | Tok::Bytes(_) => true,
            Tok::Ident(_) => {
                by_name
                    && matches!(
                        op.payload_kind(),
                        Some(PayloadKind::IntCC | PayloadKind::FloatCC)
                    )
            }
            _ => false,
        }
    }

    pub(super) fn check_missing_payload(
        &mut self,
        op: Opcode,
        by_name: bool,
        op_pos: Pos,
    ) -> PResult<()> {
        if !by_name {
            return Ok(());
        }
        match op.payload_kind() {
            Some(PayloadKind::None) | None => Ok(()),
            Some(kind) => self.error(
                op_pos,
                format!(
                    "`{op}` needs {} payload (or write it `#{}`)",
                    kind_name(kind),
                    op.0
                ),
            ),
        }
    }

    pub(super) fn payload(&mut self, op: Opcode, by_name: bool) -> PResult<(PayloadLit, Pos)> {
        let t = self.bump();
        let lit = match t.tok.clone() {
            Tok::Int(v) => PayloadLit::Int(v),
            Tok::Float(s) => PayloadLit::Float(s),
            Tok::Nan(b) => PayloadLit::Nan(b),
            Tok::FBits(b) => PayloadLit::FBits(b),
            Tok::Str(s) => PayloadLit::Str(s),
            Tok::Bytes(b) => PayloadLit::Bytes(b),
            Tok::Ident(w) => {
                let code = match op.payload_kind() {
                    Some(PayloadKind::IntCC) => IntCC::from_name(&w).map(IntCC::code),
                    _ => FloatCC::from_name(&w).map(FloatCC::code),
                };
                match code {
                    Some(c) => PayloadLit::Cc(c),
                    None => {
                        return self
                            .error(t.pos, format!("unknown condition code `{w}` for `{op}`"));
                    }
                }
            }
            _ => {
                return self.error(
                    t.pos,
                    format!("expected a payload, found {}", self.describe(&t)),
                );
            }
        };
        if !by_name {
            if matches!(lit, PayloadLit::Float(_) | PayloadLit::Nan(_)) {
                return self.error(
                    t.pos,
                    format!("a float payload of `{op}` must be written `fbits:0x…`"),
                );
            }
            return Ok((lit, t.pos));
        }
        let kind = op.payload_kind().unwrap_or(PayloadKind::None);
        let ok = match kind {
            PayloadKind::None => false,
            PayloadKind::Int => matches!(lit, PayloadLit::Int(_)),
            PayloadKind::Float => matches!(
                lit,
                PayloadLit::Int(_)
                    | PayloadLit::Float(_)
                    | PayloadLit::Nan(_)
                    | PayloadLit::FBits(_)
            ),
            PayloadKind::Str => matches!(lit, PayloadLit::Str(_)),
            PayloadKind::Bytes => matches!(lit, PayloadLit::Bytes(_)),
            PayloadKind::IntCC | PayloadKind::FloatCC => matches!(lit, PayloadLit::Cc(_)),
        };
        if ok {
            Ok((lit, t.pos))
        } else if kind == PayloadKind::None {
            self.error(
                t.pos,
                format!("`{op}` takes no payload, found {}", self.describe(&t)),
            )
        } else {
            self.error(
                t.pos,
                format!(
                    "expected {} payload for `{op}`, found {}",
                    kind_name(kind),
                    self.describe(&t)
                ),
            )
        }
    }

    // ---- operands -----------------------------------------------------------------------------

    /// Operands separated by commas up to `close` (consumed); a trailing comma is allowed.
    pub(super) fn operand_list(
        &mut self,
        out: &mut Vec<Operand>,
        close: Tok,
        what: &str,
    ) -> PResult<()> {
        while !self.is(&close) {
            self.operand_into(out, true, true)?;
            if self.is(&Tok::Comma) {
                self.bump();
            } else if !self.is(&close) {
                return self.expected(what);
            }
        }
        self.bump();
        Ok(())
    }

    /// Exactly one operand (no grouping).
    pub(super) fn single_operand(&mut self, allow_value: bool) -> PResult<Operand> {
        let mut v = Vec::with_capacity(1);
        self.operand_into(&mut v, allow_value, false)?;
        match v.pop() {
            Some(o) => Ok(o),
            None => self.expected("an operand"),
        }
    }

    /// One operand, or a grouped reference `name(args)` as several.
    pub(super) fn operand_into(
        &mut self,
        out: &mut Vec<Operand>,
        allow_value: bool,
        allow_group: bool,
    ) -> PResult<()> {
        if self.value_depth >= MAX_DEPTH {
            let pos = self.peek().pos;
            return self.error(
                pos,
                format!("types, constants or groups nested deeper than {MAX_DEPTH} levels"),
            );
        }
        self.value_depth += 1;
        let r = self.operand_inner(out, allow_value, allow_group);
        self.value_depth -= 1;
        r
    }

    fn operand_inner(
        &mut self,
        out: &mut Vec<Operand>,
        allow_value: bool,
        allow_group: bool,
    ) -> PResult<()> {
        let t = self.peek().clone();
        let pos = t.pos;
        let base = match &t.tok {
            Tok::Name { sigil, text, anon } => {
                self.bump();
                let r = Operand::Ref(
                    Name {
                        sigil: *sigil,
                        text: text.clone(),
                        anon: *anon,
                    },
                    pos,
                );
                if allow_group && self.is(&Tok::LParen) && self.same_line() {
                    self.bump();
                    out.push(r);
                    return self.operand_list(out, Tok::RParen, "`,` or `)`");
                }
                r
            }
            Tok::Ident(w) if prim_type(w).is_some() => {
                self.bump();
                Operand::Prim(prim_type(w).unwrap_or(Opcode::VOID), pos)
            }
            Tok::Ident(w) if w == "struct" => {
                self.bump();
                self.expect(Tok::LBrace, "`{` after `struct`")?;
                let mut fields = Vec::new();
                self.operand_list(&mut fields, Tok::RBrace, "`,` or `}`")?;
                Operand::Struct(fields, pos)
            }
            Tok::Ident(w) if w == "vec" => {
                self.bump();
                let lane = self.single_operand(false)?;
                let nt = self.bump();
                let n = match nt.tok {
                    Tok::Int(n) if (0..=i128::from(u64::MAX)).contains(&n) => n as u64,
                    _ => {
                        return self.error(
                            nt.pos,
                            format!(
                                "expected the lane count of `vec T N`, found {}",
                                self.describe(&nt)
                            ),
                        );
                    }
                };
                Operand::Vector(n, Box::new(lane), pos)
            }
            Tok::Ident(w) if w == "fn" => {
                self.bump();
                self.expect(Tok::LParen, "`(` after `fn`")?;
                let mut params = Vec::new();
                self.operand_list(&mut params, Tok::RParen, "`,` or `)`")?;
                self.expect(Tok::Arrow, "`->` and the return type")?;
                let ret = self.single_operand(false)?;
                let mut ops = vec![ret];
                ops.extend(params);
                Operand::Fn(ops, pos)
            }
            Tok::LBracket => {
                self.bump();
                let nt = self.bump();
                let n = match nt.tok {
                    Tok::Int(n) if (0..=i128::from(u64::MAX)).contains(&n) => n as u64,
                    Tok::Int(_) => return self.error(nt.pos, "array length must not be negative"),
                    _ => {
                        return self.error(
                            nt.pos,
                            format!("expected the array length, found {}", self.describe(&nt)),
                        );
                    }
                };
                if !matches!(&self.peek().tok, Tok::Ident(w) if w == "x") {
                    return self.expected("`x` in `[N x T]`");
                }
                self.bump();
                let elem = self.single_operand(true)?;
                self.expect(Tok::RBracket, "`]` closing the array type")?;
                Operand::Array(n, Box::new(elem), pos)
            }
            _ => return self.expected("an operand"),
        };
        if allow_value && self.same_line() && is_const_value_start(&self.peek().tok) {
            let value = self.const_value()?;
            out.push(Operand::Const(Box::new(base), value, pos));
        } else {
            out.push(base);
        }
        Ok(())
    }

    fn const_value(&mut self) -> PResult<ConstValue> {
        let t = self.bump();
        Ok(match t.tok {
            Tok::Int(v) => ConstValue::Int(v),
            Tok::Float(s) => ConstValue::Float(s),
            Tok::Nan(b) => ConstValue::Nan(b),
            Tok::Bytes(b) => ConstValue::Bytes(b),
            Tok::Ident(w) if w == "true" => ConstValue::Bool(true),
            Tok::Ident(w) if w == "false" => ConstValue::Bool(false),
            Tok::Ident(w) if w == "null" => ConstValue::Null,
            Tok::Ident(w) if w == "zero" => ConstValue::Zero,
            Tok::LBracket => {
                let mut elems = Vec::new();
                self.operand_list(&mut elems, Tok::RBracket, "`,` or `]`")?;
                ConstValue::Aggregate(elems)
            }
            _ => {
                return self.error(
                    t.pos,
                    format!("expected a constant value, found {}", self.describe(&t)),
                );
            }
        })
    }
}

/// "an integer", "a string", … for messages.
pub(crate) fn kind_name(kind: PayloadKind) -> &'static str {
    match kind {
        PayloadKind::None => "no",
        PayloadKind::Int => "an integer",
        PayloadKind::Float => "a float",
        PayloadKind::Str => "a string",
        PayloadKind::Bytes => "a byte-string",
        PayloadKind::IntCC => "an integer condition code",
        PayloadKind::FloatCC => "a float condition code",
    }
}
