//! Statements: an instruction's head (result, opcode, payload, operands), its body, the
//! passive dependencies of NOIR, and decoration groups.

use irkit_core::Opcode;
use thin_vec::ThinVec;

use super::words::{is_const_value_start, is_operand_start, prim_type};
use super::{PResult, Parser};
use crate::ast::{Name, Operand, PayloadLit, ResultDef, Stmt, StmtKind};
use crate::error::Pos;
use crate::lexer::Tok;

impl Parser<'_, '_> {
    // ---- statements ---------------------------------------------------------------------------

    pub(super) fn stmt(&mut self) -> PResult<Stmt> {
        let pos = self.peek().pos;
        let decos = self.deco_groups()?;
        self.stmt_rest(pos, decos)
    }

    pub(super) fn result(&mut self) -> PResult<Option<ResultDef>> {
        let t = self.peek().clone();
        let Tok::Name { sigil, text, anon } = t.tok else {
            return Ok(None);
        };
        self.bump();
        let ty = if self.is(&Tok::Colon) {
            self.bump();
            Some(Box::new(self.single_operand(true)?))
        } else {
            None
        };
        if !self.is(&Tok::Eq) {
            let what = if ty.is_some() { "`=`" } else { "`:` or `=`" };
            return self.expected(what);
        }
        self.bump();
        Ok(Some(ResultDef {
            name: Name { sigil, text, anon },
            pos: t.pos,
            ty,
        }))
    }

    /// Whether the right-hand side of `%x = …` is an inline type or constant.
    pub(super) fn at_alias(&self) -> bool {
        let next = self.peek_at(1);
        let next_same_line = !next.line_start;
        match &self.peek().tok {
            Tok::LBracket => true,
            Tok::Ident(w) if w == "struct" => next.tok == Tok::LBrace,
            Tok::Ident(w) if w == "fn" => next.tok == Tok::LParen,
            // `vec T N` (the generic form writes its payload first: `vec 4 i32`).
            Tok::Ident(w) if w == "vec" => next_same_line && !matches!(next.tok, Tok::Int(_)),
            Tok::Ident(w) if prim_type(w).is_some() => {
                next_same_line && is_const_value_start(&next.tok)
            }
            _ => false,
        }
    }

    pub(super) fn stmt_rest(&mut self, pos: Pos, mut decos: Vec<Stmt>) -> PResult<Stmt> {
        let before = self.passive_deps(&mut decos)?;
        let result = if before { None } else { self.result()? };
        if result.is_some() {
            self.passive_deps(&mut decos)?;
        }
        if let Some(r) = &result
            && decos.iter().all(|d| !is_passive(d))
            && self.at_alias()
        {
            if r.ty.is_some() {
                return self.error(r.pos, "an inline type or constant takes no type annotation");
            }
            let operand = self.single_operand(true)?;
            if !decos.is_empty() {
                return self.error(pos, "types and constants carry no decorations");
            }
            return Ok(Stmt {
                pos,
                id: self.new_id(),
                end: self.prev_pos(),
                braces: None,
                label_params: None,
                decos: decos.into(),
                result,
                kind: StmtKind::Alias(operand),
            });
        }
        let name = self.opname(result.is_some() || !decos.is_empty())?;
        let mut h = InstHead::new(pos, decos, result, name);
        let (op, by_name) = (h.op, h.by_name);
        if self.same_line() && self.at_payload(op, by_name) {
            h.payload = Some(Box::new(self.payload(op, by_name)?));
        } else {
            self.check_missing_payload(op, by_name, h.op_pos)?;
        }
        if op == Opcode::PROC && by_name && self.is(&Tok::LParen) {
            return self.proc_header(h);
        }
        if self.same_line() && is_operand_start(&self.peek().tok) {
            self.operand_into(&mut h.operands, true, true)?;
            while self.is(&Tok::Comma) {
                self.bump();
                self.operand_into(&mut h.operands, true, true)?;
            }
            if self.same_line() && !self.is(&Tok::LBrace) && !self.is(&Tok::RBrace) {
                return self.expected("`,` or end of line");
            }
        } else if self.same_line() && !self.is(&Tok::LBrace) && !self.is(&Tok::RBrace) {
            return self.expected("an operand or end of line");
        }
        self.finish_inst(h)
    }

    /// Whether the tokens ahead start passive dependencies (NOIR): `%a, …` or `%a ?` /
    /// `%a !`. Where this is asked (the start of a statement, or right after its `=`), nothing
    /// else starts with a name followed by one of those, so two tokens decide.
    pub(super) fn at_passive_deps(&self) -> bool {
        matches!(self.peek().tok, Tok::Name { .. })
            && matches!(self.peek_at(1).tok, Tok::Comma | Tok::Question | Tok::Bang)
    }

    /// Parses any number of `%a, %b ?` / `%c !` groups into `when` / `unless` decoration
    /// statements appended to `decos`; whether there was one.
    pub(super) fn passive_deps(&mut self, decos: &mut Vec<Stmt>) -> PResult<bool> {
        let mut any = false;
        while self.at_passive_deps() {
            any = true;
            let pos = self.peek().pos;
            let mut operands = Vec::new();
            loop {
                let t = self.bump();
                let Tok::Name { sigil, text, anon } = t.tok else {
                    return self.error(t.pos, "expected a dependency name");
                };
                operands.push(Operand::Ref(Name { sigil, text, anon }, t.pos));
                if self.is(&Tok::Comma) {
                    self.bump();
                } else {
                    break;
                }
            }
            if !matches!(self.peek().tok, Tok::Question | Tok::Bang) {
                return self.expected("`,`, `?` or `!` after a dependency name");
            }
            let mark = self.bump();
            let op = if mark.tok == Tok::Bang {
                Opcode::UNLESS
            } else {
                Opcode::WHEN
            };
            decos.push(Stmt {
                pos,
                id: self.new_id(),
                end: mark.pos,
                braces: None,
                label_params: None,
                decos: ThinVec::new(),
                result: None,
                kind: StmtKind::Inst {
                    op,
                    by_name: true,
                    op_pos: mark.pos,
                    payload: None,
                    operands,
                    body: None,
                },
            });
        }
        Ok(any)
    }

    /// `proc(%p: T, …) [-> %v] { body }`: the parameters become the first children and
    /// `result [%v]` the last.
    pub(super) fn proc_header(&mut self, h: InstHead) -> PResult<Stmt> {
        self.bump(); // `(`
        let mut params = self.param_list()?;
        let mut result_ops = Vec::new();
        if self.is(&Tok::Arrow) {
            self.bump();
            result_ops.push(self.single_operand(true)?);
        }
        if !self.is(&Tok::LBrace) {
            return self.expected("`{` opening the proc's body");
        }
        let open = self.bump().pos;
        let mut body = self.body(open, false)?;
        let close = self.prev_pos();
        // The result is written in the header; for comment placement it stands at the `{`.
        let result = Stmt {
            pos: open,
            id: self.new_id(),
            end: open,
            braces: None,
            label_params: None,
            decos: ThinVec::new(),
            result: None,
            kind: StmtKind::Inst {
                op: Opcode::RESULT,
                by_name: true,
                op_pos: open,
                payload: None,
                operands: result_ops,
                body: None,
            },
        };
        params.append(&mut body);
        params.push(result);
        let id = self.new_id();
        Ok(h.into_stmt(id, close, Some((open, close)), Some(params.into())))
    }

    pub(super) fn opname(&mut self, after_something: bool) -> PResult<(Opcode, bool, Pos)> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Ident(w) => match Opcode::from_name(w) {
                Some(op) => {
                    self.bump();
                    Ok((op, true, t.pos))
                }
                None => self.error(t.pos, format!("unknown opcode `{w}`")),
            },
            Tok::Opaque(id) => {
                self.bump();
                Ok((Opcode(*id), false, t.pos))
            }
            _ if after_something => self.expected("an opcode name or `#id`"),
            _ => self.expected("a statement"),
        }
    }

    // ---- decorations --------------------------------------------------------------------------

    pub(super) fn deco_groups(&mut self) -> PResult<Vec<Stmt>> {
        let mut out = Vec::new();
        while self.is(&Tok::HashBracket) {
            self.bump();
            self.deco_entries(&mut out)?;
        }
        Ok(out)
    }

    /// The entries of a group after its `#[` or `#![`, through its `]`.
    pub(super) fn deco_entries(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        while !self.is(&Tok::RBracket) {
            out.push(self.deco_entry()?);
            if self.is(&Tok::Comma) {
                self.bump();
            } else if !self.is(&Tok::RBracket) {
                return self.expected("`,` or `]`");
            }
        }
        self.bump();
        Ok(())
    }

    pub(super) fn deco_entry(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.deco_entry_inner();
        self.leave();
        r
    }

    /// The optional `{ body }` after an instruction's head, and the statement they make.
    pub(super) fn finish_inst(&mut self, mut h: InstHead) -> PResult<Stmt> {
        h.operands.shrink_to_fit();
        h.decos.shrink_to_fit();
        let (body, braces) = if self.is(&Tok::LBrace) {
            let open = self.bump().pos;
            let body = self.body(open, h.op == Opcode::FUNC)?;
            (Some(body), Some((open, self.prev_pos())))
        } else {
            (None, None)
        };
        let id = self.new_id();
        Ok(h.into_stmt(id, self.prev_pos(), braces, body.map(ThinVec::from)))
    }

    pub(super) fn deco_entry_inner(&mut self) -> PResult<Stmt> {
        let pos = self.peek().pos;
        let decos = self.deco_groups()?;
        let result = self.result()?;
        let name = self.opname(true)?;
        let mut h = InstHead::new(pos, decos, result, name);
        let (op, by_name) = (h.op, h.by_name);
        if self.is(&Tok::LParen) {
            self.bump();
            if self.at_payload(op, by_name) {
                h.payload = Some(Box::new(self.payload(op, by_name)?));
                if self.is(&Tok::Comma) {
                    self.bump();
                }
            }
            self.operand_list(&mut h.operands, Tok::RParen, "`,` or `)`")?;
        }
        if h.payload.is_none() {
            self.check_missing_payload(op, by_name, h.op_pos)?;
        }
        self.finish_inst(h)
    }
}

/// Whether a decoration statement is a passive dependency (`when` or `unless`).
fn is_passive(d: &Stmt) -> bool {
    matches!(
        d.kind,
        StmtKind::Inst {
            op: Opcode::WHEN | Opcode::UNLESS,
            ..
        }
    )
}

/// What an instruction statement has before its optional body.
pub(super) struct InstHead {
    pos: Pos,
    decos: Vec<Stmt>,
    result: Option<ResultDef>,
    op: Opcode,
    by_name: bool,
    op_pos: Pos,
    payload: Option<Box<(PayloadLit, Pos)>>,
    operands: Vec<Operand>,
}

impl InstHead {
    /// The head of an instruction at `pos` named by `(op, by_name, op_pos)` ([`Parser::opname`]),
    /// with no payload or operand read yet.
    fn new(
        pos: Pos,
        decos: Vec<Stmt>,
        result: Option<ResultDef>,
        name: (Opcode, bool, Pos),
    ) -> Self {
        let (op, by_name, op_pos) = name;
        InstHead {
            pos,
            decos,
            result,
            op,
            by_name,
            op_pos,
            payload: None,
            operands: Vec::new(),
        }
    }

    /// The statement this head starts, numbered `id`, ending at `end`, with its braces and
    /// body if it has them.
    fn into_stmt(
        self,
        id: usize,
        end: Pos,
        braces: Option<(Pos, Pos)>,
        body: Option<ThinVec<Stmt>>,
    ) -> Stmt {
        Stmt {
            pos: self.pos,
            id,
            end,
            braces,
            label_params: None,
            decos: self.decos.into(),
            result: self.result,
            kind: StmtKind::Inst {
                op: self.op,
                by_name: self.by_name,
                op_pos: self.op_pos,
                payload: self.payload,
                operands: self.operands,
                body,
            },
        }
    }
}
