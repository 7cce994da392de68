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

use crate::ast::{File, Name, ResultDef, Stmt, StmtKind};
use crate::error::{Diags, Pos};
use crate::lexer::{Comment, Lexer, Tok, Token};

mod operands;
mod statements;
mod words;

use words::is_operand_start;

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
}

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
