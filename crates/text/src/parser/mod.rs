//! The parser: tokens to the syntax tree of [`ast`](crate::ast).
//!
//! Recursive descent with nesting bounds ([`MAX_DEPTH`], the IR's nesting limit
//! [`irkit_core::MAX_NESTING`]), so no input can overflow the stack: bodies and decorations
//! may nest [`MAX_DEPTH`] levels (each is a level of the instruction tree), and so may inline
//! types and constants (each is a level of value depth) and operand groups. Depth built
//! without syntactic nesting (named values, label-form blocks) is checked when the module is
//! built (`build/`). On an error it reports, skips to the next line (keeping braces balanced)
//! and goes on, so one run reports every independent error.

use irkit_core::Opcode;
use thin_vec::ThinVec;

use crate::ast::{File, Name, Operand, PayloadLit, ResultDef, Stmt, StmtKind};
use crate::error::{Diags, Pos};
use crate::lexer::{Comment, Lexer, Tok, Token};

mod operands;
mod words;

use words::{is_const_value_start, is_operand_start, prim_type};

/// How deeply bodies and decorations may nest, and, separately, inline types, constants and
/// operand groups: the IR's nesting limit, [`irkit_core::MAX_NESTING`].
pub const MAX_DEPTH: u32 = irkit_core::MAX_NESTING;

/// An error already reported to the diagnostics.
struct Reported;

type PResult<T> = Result<T, Reported>;

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
    let mut file = File::default();
    let (comments, eof) = parse_items(source, diags, true, &mut |item| match item {
        Item::RootDecos(entries, span) => {
            file.root_decos.extend(entries);
            file.root_spans.push(span);
        }
        Item::Stmt(s) => file.items.push(s),
    });
    file.items.shrink_to_fit();
    (file, comments, eof)
}

/// One top-level item of a file, as [`parse_items`] hands it out.
pub(crate) enum Item {
    /// The entries of one `#![…]` line, with the positions of its first and last tokens.
    RootDecos(Vec<Stmt>, (Pos, Pos)),
    /// A top-level statement.
    Stmt(Stmt),
}

/// Parses `source`, handing each top-level item to `sink` as soon as it is read; errors go to
/// `diags`. Returns the comments (kept only if `keep_comments`, for trivia) and the position of
/// the end of the input.
pub(crate) fn parse_items(
    source: &str,
    diags: &mut Diags,
    keep_comments: bool,
    sink: &mut dyn FnMut(Item),
) -> (Vec<Comment>, Pos) {
    let mut lx = Lexer::new(source, diags, keep_comments);
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
    p.items(sink);
    while p.peek().tok != Tok::Eof {
        p.bump();
    }
    let eof = p.peek().pos;
    (p.lx.into_comments(), eof)
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

    /// Parses the top-level items one by one, handing each to `sink` as soon as it is complete
    /// (an item the parser could not read is reported and skipped), so a caller that does not
    /// keep them holds one item's syntax tree at a time.
    fn items(&mut self, sink: &mut dyn FnMut(Item)) {
        while !self.is(&Tok::Eof) && !self.lx.diags.full() {
            let start = self.consumed;
            let r = if self.is(&Tok::HashBang) {
                let first = self.bump().pos;
                let mut entries = Vec::new();
                self.deco_entries(&mut entries).and_then(|()| {
                    let span = (first, self.prev_pos());
                    self.end_of_stmt(false)?;
                    sink(Item::RootDecos(entries, span));
                    Ok(())
                })
            } else if self.is(&Tok::RBrace) {
                self.expected("a statement")
            } else {
                self.stmt().and_then(|s| {
                    self.end_of_stmt(false)?;
                    sink(Item::Stmt(s));
                    Ok(())
                })
            };
            if r.is_err() {
                self.recover(start, false);
            }
        }
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
                decos: pdecos.into(),
                result: Some(ResultDef {
                    name: Name { sigil, text, anon },
                    pos: nt.pos,
                    ty: Some(Box::new(ty)),
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
            decos: decos.into(),
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
                body: Some(children.into()),
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
                decos: decos.into(),
                result,
                kind: StmtKind::Alias(operand),
            });
        }
        let (op, by_name, op_pos) = self.opname(result.is_some() || !decos.is_empty())?;
        let payload = if self.same_line() && self.at_payload(op, by_name) {
            Some(Box::new(self.payload(op, by_name)?))
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
        Ok(Stmt {
            pos: h.pos,
            id: self.new_id(),
            end: close,
            braces: Some((open, close)),
            label_params: None,
            decos: h.decos.into(),
            result: h.result,
            kind: StmtKind::Inst {
                op: h.op,
                by_name: h.by_name,
                op_pos: h.op_pos,
                payload: h.payload,
                operands: h.operands,
                body: Some(params.into()),
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
            decos: h.decos.into(),
            result: h.result,
            kind: StmtKind::Inst {
                op: h.op,
                by_name: h.by_name,
                op_pos: h.op_pos,
                payload: h.payload,
                operands: h.operands,
                body: body.map(ThinVec::from),
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
                payload = Some(Box::new(self.payload(op, by_name)?));
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

/// What an instruction statement has before its optional body.
struct InstHead {
    pos: Pos,
    decos: Vec<Stmt>,
    result: Option<ResultDef>,
    op: Opcode,
    by_name: bool,
    op_pos: Pos,
    payload: Option<Box<(PayloadLit, Pos)>>,
    operands: Vec<Operand>,
}
