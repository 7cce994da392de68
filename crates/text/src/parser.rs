//! The parser: tokens to the syntax tree of [`ast`](crate::ast).
//!
//! Recursive descent with nesting bounds ([`MAX_DEPTH`], the IR's nesting limit
//! [`irkit_core::MAX_NESTING`]), so no input can overflow the stack: bodies and decorations
//! may nest [`MAX_DEPTH`] levels (each is a level of the instruction tree), and so may inline
//! types and constants (each is a level of value depth) and operand groups. Depth built
//! without syntactic nesting (named values, label-form blocks) is checked on the built
//! module, when lowering. On an error it reports, skips to the next line (keeping braces balanced) and goes
//! on, so one run reports every independent error.

use irkit_core::{FloatCC, IntCC, Opcode, PayloadKind};

use crate::ast::{ConstValue, File, Name, Operand, PayloadLit, ResultDef, Stmt, StmtKind};
use crate::error::{Diags, Pos};
use crate::lexer::{Comment, Lexer, Tok, Token};

/// How deeply bodies and decorations may nest, and, separately, inline types, constants and
/// operand groups: the IR's nesting limit, [`irkit_core::MAX_NESTING`].
pub const MAX_DEPTH: u32 = irkit_core::MAX_NESTING;

/// An error already reported to the diagnostics.
struct Reported;

type PResult<T> = Result<T, Reported>;

/// The type keyword `word` (`i32`, `ptr`, …), from the one table of scalar types.
fn prim_type(word: &str) -> Option<Opcode> {
    irkit_core::scalar::scalar_named(word).map(|s| s.opcode)
}

/// How many tokens the parser looks ahead at most (`peek_at(k)` takes `k < LOOKAHEAD`).
const LOOKAHEAD: usize = 3;

struct Parser<'s, 'd> {
    lx: Lexer<'s, 'd>,
    /// The next [`LOOKAHEAD`] tokens (the lexer repeats `Eof` at the end).
    ahead: std::collections::VecDeque<Token>,
    /// How many tokens were consumed (progress checks in error recovery).
    consumed: usize,
    /// The position of the last token consumed.
    prev: Pos,
    /// Open bodies and decoration entries.
    tree_depth: u32,
    /// Open operands (inline types and constants, groups).
    value_depth: u32,
    /// The next [`Stmt::id`].
    next_id: usize,
}

/// Parses `source` into a file, lexing as it goes; errors go to `diags`. Also returns the
/// comments (for trivia) and the position of the end of the input.
pub(crate) fn parse_source(source: &str, diags: &mut Diags) -> (File, Vec<Comment>, Pos) {
    let mut lx = Lexer::new(source, diags);
    let ahead = (0..LOOKAHEAD).map(|_| lx.next_token()).collect();
    let mut p = Parser {
        lx,
        ahead,
        consumed: 0,
        prev: Pos::default(),
        tree_depth: 0,
        value_depth: 0,
        next_id: 0,
    };
    let file = p.file();
    while p.peek().tok != Tok::Eof {
        p.bump();
    }
    let eof = p.peek().pos;
    (file, p.lx.into_comments(), eof)
}

impl Parser<'_, '_> {
    // ---- token access -----------------------------------------------------------------------

    fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    fn peek_at(&self, k: usize) -> &Token {
        &self.ahead[k.min(LOOKAHEAD - 1)]
    }

    fn bump(&mut self) -> Token {
        let next = self.lx.next_token();
        self.ahead.push_back(next);
        let t = self
            .ahead
            .pop_front()
            .unwrap_or_else(|| self.lx.next_token());
        if t.tok != Tok::Eof {
            self.consumed += 1;
        }
        self.prev = t.pos;
        t
    }

    /// The position of the last token consumed.
    fn prev_pos(&self) -> Pos {
        self.prev
    }

    /// How `t` is named in messages.
    fn describe(&self, t: &Token) -> String {
        t.describe(self.lx.source())
    }

    /// A fresh statement id.
    fn new_id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id - 1
    }

    fn is(&self, tok: &Tok) -> bool {
        &self.peek().tok == tok
    }

    /// Whether the next token is on the same line as the previous one.
    fn same_line(&self) -> bool {
        let t = self.peek();
        !t.line_start && t.tok != Tok::Eof
    }

    fn error<T>(&mut self, pos: Pos, msg: impl Into<String>) -> PResult<T> {
        self.lx.diags.push(pos, msg);
        Err(Reported)
    }

    fn expected<T>(&mut self, what: &str) -> PResult<T> {
        let t = self.peek();
        let (pos, found) = (t.pos, self.describe(t));
        self.error(pos, format!("expected {what}, found {found}"))
    }

    fn expect(&mut self, tok: Tok, what: &str) -> PResult<Token> {
        if self.is(&tok) {
            Ok(self.bump())
        } else {
            self.expected(what)
        }
    }

    /// Opens a body or decoration entry.
    fn enter(&mut self) -> PResult<()> {
        if self.tree_depth >= MAX_DEPTH {
            let pos = self.peek().pos;
            return self.error(pos, format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        self.tree_depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.tree_depth -= 1;
    }

    /// Skips the rest of a failed statement: up to the next line start outside any braces
    /// opened meanwhile, or a `}` closing the current body.
    fn recover(&mut self, start: usize, in_body: bool) {
        let mut depth = 0u32;
        loop {
            let t = self.peek();
            match t.tok {
                Tok::Eof => return,
                Tok::RBrace if depth == 0 && in_body => return,
                _ => {}
            }
            if self.consumed > start && t.line_start && depth == 0 {
                return;
            }
            match t.tok {
                Tok::LBrace => depth += 1,
                Tok::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    fn end_of_stmt(&mut self, in_body: bool) -> PResult<()> {
        let t = self.peek();
        if t.line_start || t.tok == Tok::Eof || (in_body && t.tok == Tok::RBrace) {
            Ok(())
        } else {
            self.expected("end of line")
        }
    }

    // ---- file and bodies ----------------------------------------------------------------------

    fn file(&mut self) -> File {
        let mut file = File::default();
        while !self.is(&Tok::Eof) && !self.lx.diags.full() {
            let start = self.consumed;
            let r = if self.is(&Tok::HashBang) {
                let first = self.bump().pos;
                self.deco_entries(&mut file.root_decos).and_then(|()| {
                    file.root_spans.push((first, self.prev_pos()));
                    self.end_of_stmt(false)
                })
            } else if self.is(&Tok::RBrace) {
                self.expected("a statement")
            } else {
                self.stmt().and_then(|s| {
                    file.items.push(s);
                    self.end_of_stmt(false)
                })
            };
            if r.is_err() {
                self.recover(start, false);
            }
        }
        file.items.shrink_to_fit();
        file
    }

    /// The statements of a body, after its `{`, through its `}`. In a `func` body, block
    /// labels open blocks that collect the statements after them.
    fn body(&mut self, open: Pos, is_func: bool) -> PResult<Vec<Stmt>> {
        self.enter()?;
        let mut items = Vec::new();
        let mut block: Option<Stmt> = None;
        loop {
            if self.lx.diags.full() {
                self.leave();
                return Err(Reported);
            }
            match self.peek().tok {
                Tok::RBrace => {
                    self.bump();
                    break;
                }
                Tok::Eof => {
                    self.leave();
                    return self.expected(&format!(
                        "`}}` closing the `{{` at {}:{}",
                        open.line, open.col
                    ));
                }
                _ => {}
            }
            let start = self.consumed;
            let r = self.body_stmt(is_func, &mut items, &mut block);
            if r.is_err() {
                self.recover(start, true);
            }
        }
        if let Some(b) = block.take() {
            items.push(finished_block(b));
        }
        self.leave();
        // Bodies are final here: no spare capacity held for the rest of the parse.
        items.shrink_to_fit();
        Ok(items)
    }

    fn body_stmt(
        &mut self,
        is_func: bool,
        items: &mut Vec<Stmt>,
        block: &mut Option<Stmt>,
    ) -> PResult<()> {
        let pos = self.peek().pos;
        let decos = self.deco_groups()?;
        if is_func && self.at_label() {
            let b = self.label(pos, decos)?;
            if let Some(prev) = block.replace(b) {
                items.push(finished_block(prev));
            }
            return Ok(());
        }
        let s = self.stmt_rest(pos, decos)?;
        match block {
            Some(Stmt {
                kind:
                    StmtKind::Inst {
                        body: Some(children),
                        ..
                    },
                ..
            }) => children.push(s),
            _ => items.push(s),
        }
        self.end_of_stmt(true)
    }

    // ---- labels -------------------------------------------------------------------------------

    fn at_label(&self) -> bool {
        if !matches!(self.peek().tok, Tok::Name { sigil: '^', .. }) {
            return false;
        }
        match self.peek_at(1).tok {
            Tok::LParen => true,
            // `^b: T = …` is a typed result; anything else after the colon is a label (and
            // the label reports what follows it on its line).
            Tok::Colon => {
                let after = self.peek_at(2);
                after.line_start || !is_operand_start(&after.tok)
            }
            _ => false,
        }
    }

    /// `%p: T, …)` after a `(`: the parameters of a block label or a proc header, through the
    /// `)`, as `param` statements.
    fn param_list(&mut self) -> PResult<Vec<Stmt>> {
        let mut params = Vec::new();
        while !self.is(&Tok::RParen) {
            let ppos = self.peek().pos;
            let pdecos = self.deco_groups()?;
            let nt = self.peek().clone();
            let Tok::Name { sigil, text, anon } = nt.tok else {
                return self.expected("a parameter name or `)`");
            };
            self.bump();
            self.expect(Tok::Colon, "`:` and the parameter's type")?;
            let ty = self.single_operand(true)?;
            params.push(Stmt {
                pos: ppos,
                id: self.new_id(),
                end: self.prev_pos(),
                braces: None,
                label_params: None,
                decos: pdecos,
                result: Some(ResultDef {
                    name: Name { sigil, text, anon },
                    pos: nt.pos,
                    ty: Some(ty),
                }),
                kind: StmtKind::Inst {
                    op: Opcode::PARAM,
                    by_name: true,
                    op_pos: nt.pos,
                    payload: None,
                    operands: Vec::new(),
                    body: None,
                },
            });
            if self.is(&Tok::Comma) {
                self.bump();
            } else if !self.is(&Tok::RParen) {
                return self.expected("`,` or `)`");
            }
        }
        self.bump();
        Ok(params)
    }

    fn label(&mut self, pos: Pos, decos: Vec<Stmt>) -> PResult<Stmt> {
        let t = self.bump();
        let Tok::Name { sigil, text, anon } = t.tok else {
            return self.error(t.pos, "expected a block label");
        };
        let mut children = Vec::new();
        if self.is(&Tok::LParen) {
            self.bump();
            children = self.param_list()?;
        }
        self.expect(Tok::Colon, "`:` ending the block label")?;
        let next = self.peek();
        if !(next.line_start || matches!(next.tok, Tok::Eof | Tok::RBrace)) {
            return self.expected("end of line after the block label");
        }
        let label_params = Some(children.len());
        Ok(Stmt {
            pos,
            id: self.new_id(),
            end: self.prev_pos(),
            braces: None,
            label_params,
            decos,
            result: Some(ResultDef {
                name: Name { sigil, text, anon },
                pos: t.pos,
                ty: None,
            }),
            kind: StmtKind::Inst {
                op: Opcode::BLOCK,
                by_name: true,
                op_pos: t.pos,
                payload: None,
                operands: Vec::new(),
                body: Some(children),
            },
        })
    }

    // ---- statements ---------------------------------------------------------------------------

    fn stmt(&mut self) -> PResult<Stmt> {
        let pos = self.peek().pos;
        let decos = self.deco_groups()?;
        self.stmt_rest(pos, decos)
    }

    fn result(&mut self) -> PResult<Option<ResultDef>> {
        let t = self.peek().clone();
        let Tok::Name { sigil, text, anon } = t.tok else {
            return Ok(None);
        };
        self.bump();
        let ty = if self.is(&Tok::Colon) {
            self.bump();
            Some(self.single_operand(true)?)
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
    fn at_alias(&self) -> bool {
        let next = self.peek_at(1);
        let next_same_line = !next.line_start;
        match &self.peek().tok {
            Tok::LBracket => true,
            Tok::Ident(w) if w == "struct" => next.tok == Tok::LBrace,
            Tok::Ident(w) if w == "fn" => next.tok == Tok::LParen,
            Tok::Ident(w) if prim_type(w).is_some() => {
                next_same_line && is_const_value_start(&next.tok)
            }
            _ => false,
        }
    }

    fn stmt_rest(&mut self, pos: Pos, mut decos: Vec<Stmt>) -> PResult<Stmt> {
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
                decos,
                result,
                kind: StmtKind::Alias(operand),
            });
        }
        let (op, by_name, op_pos) = self.opname(result.is_some() || !decos.is_empty())?;
        let payload = if self.same_line() && self.at_payload(op, by_name) {
            Some(self.payload(op, by_name)?)
        } else {
            self.check_missing_payload(op, by_name, op_pos)?;
            None
        };
        if op == Opcode::PROC && by_name && self.is(&Tok::LParen) {
            return self.proc_header(InstHead {
                pos,
                decos,
                result,
                op,
                by_name,
                op_pos,
                payload,
                operands: Vec::new(),
            });
        }
        let mut operands = Vec::new();
        if self.same_line() && is_operand_start(&self.peek().tok) {
            self.operand_into(&mut operands, true, true)?;
            while self.is(&Tok::Comma) {
                self.bump();
                self.operand_into(&mut operands, true, true)?;
            }
            if self.same_line() && !self.is(&Tok::LBrace) && !self.is(&Tok::RBrace) {
                return self.expected("`,` or end of line");
            }
        } else if self.same_line() && !self.is(&Tok::LBrace) && !self.is(&Tok::RBrace) {
            return self.expected("an operand or end of line");
        }
        self.finish_inst(InstHead {
            pos,
            decos,
            result,
            op,
            by_name,
            op_pos,
            payload,
            operands,
        })
    }

    /// Whether the tokens ahead start passive dependencies (NOIR): `%a, …` or `%a ?` /
    /// `%a !`. Where this is asked (the start of a statement, or right after its `=`), nothing
    /// else starts with a name followed by one of those, so two tokens decide.
    fn at_passive_deps(&self) -> bool {
        matches!(self.peek().tok, Tok::Name { .. })
            && matches!(self.peek_at(1).tok, Tok::Comma | Tok::Question | Tok::Bang)
    }

    /// Parses any number of `%a, %b ?` / `%c !` groups into `when` / `unless` decoration
    /// statements appended to `decos`; whether there was one.
    fn passive_deps(&mut self, decos: &mut Vec<Stmt>) -> PResult<bool> {
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
                decos: Vec::new(),
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
    fn proc_header(&mut self, h: InstHead) -> PResult<Stmt> {
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
            decos: Vec::new(),
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
        Ok(Stmt {
            pos: h.pos,
            id: self.new_id(),
            end: close,
            braces: Some((open, close)),
            label_params: None,
            decos: h.decos,
            result: h.result,
            kind: StmtKind::Inst {
                op: h.op,
                by_name: h.by_name,
                op_pos: h.op_pos,
                payload: h.payload,
                operands: h.operands,
                body: Some(params),
            },
        })
    }

    fn opname(&mut self, after_something: bool) -> PResult<(Opcode, bool, Pos)> {
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

    fn deco_groups(&mut self) -> PResult<Vec<Stmt>> {
        let mut out = Vec::new();
        while self.is(&Tok::HashBracket) {
            self.bump();
            self.deco_entries(&mut out)?;
        }
        Ok(out)
    }

    /// The entries of a group after its `#[` or `#![`, through its `]`.
    fn deco_entries(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
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

    fn deco_entry(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.deco_entry_inner();
        self.leave();
        r
    }

    /// The optional `{ body }` after an instruction's head, and the statement they make.
    fn finish_inst(&mut self, mut h: InstHead) -> PResult<Stmt> {
        h.operands.shrink_to_fit();
        h.decos.shrink_to_fit();
        let (body, braces) = if self.is(&Tok::LBrace) {
            let open = self.bump().pos;
            let body = self.body(open, h.op == Opcode::FUNC)?;
            (Some(body), Some((open, self.prev_pos())))
        } else {
            (None, None)
        };
        Ok(Stmt {
            pos: h.pos,
            id: self.new_id(),
            end: self.prev_pos(),
            braces,
            label_params: None,
            decos: h.decos,
            result: h.result,
            kind: StmtKind::Inst {
                op: h.op,
                by_name: h.by_name,
                op_pos: h.op_pos,
                payload: h.payload,
                operands: h.operands,
                body,
            },
        })
    }

    fn deco_entry_inner(&mut self) -> PResult<Stmt> {
        let pos = self.peek().pos;
        let decos = self.deco_groups()?;
        let result = self.result()?;
        let (op, by_name, op_pos) = self.opname(true)?;
        let mut payload = None;
        let mut operands = Vec::new();
        if self.is(&Tok::LParen) {
            self.bump();
            if self.at_payload(op, by_name) {
                payload = Some(self.payload(op, by_name)?);
                if self.is(&Tok::Comma) {
                    self.bump();
                }
            }
            self.operand_list(&mut operands, Tok::RParen, "`,` or `)`")?;
        }
        if payload.is_none() {
            self.check_missing_payload(op, by_name, op_pos)?;
        }
        self.finish_inst(InstHead {
            pos,
            decos,
            result,
            op,
            by_name,
            op_pos,
            payload,
            operands,
        })
    }

    // ---- payloads -----------------------------------------------------------------------------

    fn at_payload(&self, op: Opcode, by_name: bool) -> bool {
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

    fn check_missing_payload(&mut self, op: Opcode, by_name: bool, op_pos: Pos) -> PResult<()> {
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

    fn payload(&mut self, op: Opcode, by_name: bool) -> PResult<(PayloadLit, Pos)> {
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
    fn operand_list(&mut self, out: &mut Vec<Operand>, close: Tok, what: &str) -> PResult<()> {
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
    fn single_operand(&mut self, allow_value: bool) -> PResult<Operand> {
        let mut v = Vec::with_capacity(1);
        self.operand_into(&mut v, allow_value, false)?;
        match v.pop() {
            Some(o) => Ok(o),
            None => self.expected("an operand"),
        }
    }

    /// One operand, or a grouped reference `name(args)` as several.
    fn operand_into(
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

fn is_const_value_start(tok: &Tok) -> bool {
    match tok {
        Tok::Int(_) | Tok::Float(_) | Tok::Nan(_) | Tok::Bytes(_) | Tok::LBracket => true,
        Tok::Ident(w) => matches!(w.as_str(), "true" | "false" | "null" | "zero"),
        _ => false,
    }
}

/// Whether a decoration statement is a passive dependency (`when` or `unless`).
/// A block opened by a label, once its last statement is in: its children take no spare
/// capacity for the rest of the parse.
fn finished_block(mut b: Stmt) -> Stmt {
    if let StmtKind::Inst {
        body: Some(children),
        ..
    } = &mut b.kind
    {
        children.shrink_to_fit();
    }
    b
}

fn is_passive(d: &Stmt) -> bool {
    matches!(
        d.kind,
        StmtKind::Inst {
            op: Opcode::WHEN | Opcode::UNLESS,
            ..
        }
    )
}

fn is_operand_start(tok: &Tok) -> bool {
    match tok {
        Tok::Name { .. } | Tok::LBracket => true,
        Tok::Ident(w) => prim_type(w).is_some() || w == "struct" || w == "fn",
        _ => false,
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

/// What an instruction statement has before its optional body.
struct InstHead {
    pos: Pos,
    decos: Vec<Stmt>,
    result: Option<ResultDef>,
    op: Opcode,
    by_name: bool,
    op_pos: Pos,
    payload: Option<(PayloadLit, Pos)>,
    operands: Vec<Operand>,
}
