//! Trivia: the comments and blank lines of a source, attached to the instructions of the
//! module parsed from it, so that [`print_with_trivia`](crate::print_with_trivia) can re-emit
//! them (the canonical form of comments, `spec/text.md`, "Comments and formatting").
//!
//! Attachment walks the statements of each body (the top level, a body `{…}`) in source order,
//! a block label and the statements after it counting as statements of the function body:
//!
//! * own-line comments and blank lines between two statements are the *leading* trivia of the
//!   next one (of the first top-level statement: the file *header*); after the last one, the
//!   *closing* trivia of the body (at the top level: the *end* of the file);
//! * a comment after code on a line is a *trailing* comment of the statement that code belongs
//!   to, or an *after-close* comment of the statement whose body's `}` precedes it, or a
//!   trailing comment of the statement whose body's `{` precedes it;
//! * any comment inside a statement's own text (between its decoration lines, on the
//!   continuation lines of an operand list, inside a decoration) is a trailing comment of it;
//! * statements that create no instruction in the tree (types, constants, `#![…]` lines) have
//!   nothing to attach to: their comments go, in order, to the next statement of the body (as
//!   leading comments), or to the body's closing trivia.

use std::collections::HashMap;

use irkit_core::Inst;

use crate::ast::{File, Stmt, StmtKind};
use crate::error::Pos;
use crate::lexer::Comment;

/// One element of leading, closing, header or end trivia.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// One or more blank lines (printed as one).
    Blank,
    /// An own-line comment: the text after its `;`.
    Comment(String),
}

/// The comments and blank lines of a source, attached to the instructions of the module parsed
/// from it by [`parse_with_trivia`](crate::parse_with_trivia), for
/// [`print_with_trivia`](crate::print_with_trivia).
///
/// Opaque: it refers to instructions by [`Inst`] handle, so it is only meaningful with the
/// module it was parsed with (printed with another module, comments whose instruction is not
/// printed as a statement go to the end of the file). The default value holds nothing, and
/// printing with it is the same as [`print()`](crate::print()).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trivia {
    /// Printed first in the file.
    pub(crate) header: Vec<Piece>,
    /// Printed before a statement or label (before its decoration lines).
    pub(crate) leading: HashMap<Inst, Vec<Piece>>,
    /// Printed at the end of the first line of a statement or label.
    pub(crate) trailing: HashMap<Inst, Vec<String>>,
    /// Printed before the `}` of a statement's body.
    pub(crate) closing: HashMap<Inst, Vec<Piece>>,
    /// Printed after the `}` of a statement's body.
    pub(crate) after_close: HashMap<Inst, Vec<String>>,
    /// Printed last in the file.
    pub(crate) end: Vec<Piece>,
    /// The digits the source wrote for values named by number (`%2`, `^0`), kept by the
    /// formatter.
    pub(crate) numbers: HashMap<Inst, String>,
}

impl Trivia {
    /// Whether there is nothing to print (no comment, no blank line).
    pub fn is_empty(&self) -> bool {
        self.header.is_empty()
            && self.end.is_empty()
            && self.leading.values().all(Vec::is_empty)
            && self.trailing.values().all(Vec::is_empty)
            && self.closing.values().all(Vec::is_empty)
            && self.after_close.values().all(Vec::is_empty)
    }

    /// How many comments are kept.
    pub fn comment_count(&self) -> usize {
        let pieces = |v: &Vec<Piece>| v.iter().filter(|p| matches!(p, Piece::Comment(_))).count();
        pieces(&self.header)
            + pieces(&self.end)
            + self.leading.values().map(pieces).sum::<usize>()
            + self.closing.values().map(pieces).sum::<usize>()
            + self.trailing.values().map(Vec::len).sum::<usize>()
            + self.after_close.values().map(Vec::len).sum::<usize>()
    }
}

/// Appends a piece, collapsing consecutive blank lines.
pub(crate) fn push_piece(v: &mut Vec<Piece>, p: Piece) {
    if p == Piece::Blank && v.last() == Some(&Piece::Blank) {
        return;
    }
    v.push(p);
}

/// Drops the blank lines at the end.
pub(crate) fn trim_blank_end(v: &mut Vec<Piece>) {
    while v.last() == Some(&Piece::Blank) {
        v.pop();
    }
}

/// A statement of a body as the attachment sees it.
struct Item<'a> {
    first: Pos,
    last: Pos,
    /// The instruction its trivia attach to (`None`: it created none).
    anchor: Option<Inst>,
    /// `{` and `}` positions and the statements in between.
    body: Option<(Pos, Pos, &'a [Stmt])>,
}

/// Attaches `comments` (in source order) and the blank lines of `source` to the instructions
/// `created` for the statements of `file`. `eof` is the position of the end of the file.
pub(crate) fn collect(
    file: &File,
    comments: &[Comment],
    source: &str,
    created: &HashMap<usize, Inst>,
    eof: Pos,
) -> Trivia {
    let mut blank_before = vec![0u32];
    let mut count = 0u32;
    for line in source.split('\n') {
        if line.trim().is_empty() {
            count += 1;
        }
        blank_before.push(count);
    }
    let mut c = Collector {
        comments,
        next: 0,
        blank_before,
        created,
        t: Trivia::default(),
    };
    let mut items: Vec<Item<'_>> = c.items(&file.items);
    items.extend(file.root_spans.iter().map(|&(first, last)| Item {
        first,
        last,
        anchor: None,
        body: None,
    }));
    items.sort_by_key(|it| it.first);
    c.body(&items, None, eof, None);
    // Anything not consumed (cannot happen: every comment precedes the end of the file).
    while let Some(cm) = c.comments.get(c.next) {
        c.next += 1;
        c.t.end.push(Piece::Comment(cm.text.clone()));
    }
    c.t
}

struct Collector<'a> {
    comments: &'a [Comment],
    /// The first comment not yet attached.
    next: usize,
    /// `blank_before[l]`: how many of the lines `1..=l` are blank.
    blank_before: Vec<u32>,
    created: &'a HashMap<usize, Inst>,
    t: Trivia,
}

impl<'a> Collector<'a> {
    /// The items of a body: its statements, a label-block standing for its label line followed
    /// by the statements written after it.
    fn items(&self, stmts: &'a [Stmt]) -> Vec<Item<'a>> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            let anchor = self.created.get(&s.id).copied();
            match (s.label_params, &s.kind) {
                (
                    Some(n),
                    StmtKind::Inst {
                        body: Some(children),
                        ..
                    },
                ) => {
                    out.push(Item {
                        first: s.pos,
                        last: s.end,
                        anchor,
                        body: None,
                    });
                    for c in children.get(n..).unwrap_or(&[]) {
                        out.push(self.item(c));
                    }
                }
                _ => out.push(self.item(s)),
            }
        }
        out
    }

    fn item(&self, s: &'a Stmt) -> Item<'a> {
        let body = match (&s.kind, s.braces) {
            (
                StmtKind::Inst {
                    body: Some(children),
                    ..
                },
                Some((open, close)),
            ) => Some((open, close, children.as_slice())),
            _ => None,
        };
        Item {
            first: s.pos,
            last: s.end,
            anchor: self.created.get(&s.id).copied(),
            body,
        }
    }

    /// Whether a line strictly between lines `a` and `b` is blank.
    fn blank_between(&self, a: u32, b: u32) -> bool {
        if b <= a + 1 {
            return false;
        }
        let at = |l: u32| {
            self.blank_before
                .get(l as usize)
                .or(self.blank_before.last())
                .copied()
                .unwrap_or(0)
        };
        at(b - 1) > at(a)
    }

    /// The next comment if it lies before `pos`.
    fn comment_before(&mut self, pos: Pos) -> Option<&'a Comment> {
        let c = self.comments.get(self.next).filter(|c| c.pos < pos)?;
        self.next += 1;
        Some(c)
    }

    /// Attaches the trivia of a body: `items` between `open` (`None` at the top level) and
    /// `close` (the end of the file at the top level), the body of `owner`.
    fn body(&mut self, items: &[Item<'a>], open: Option<Pos>, close: Pos, owner: Option<Inst>) {
        let top = open.is_none();
        let mut line = open.map_or(0, |p| p.line);
        // Comments of statements without an instruction, for the next one.
        let mut pending: Vec<Piece> = Vec::new();
        let mut prev: Option<&Item<'_>> = None;
        for (k, it) in items.iter().enumerate() {
            let gap = self.gap(it.first, line, prev, owner, &mut pending);
            let mut lead = std::mem::take(&mut pending);
            for p in gap {
                push_piece(&mut lead, p);
            }
            if top && k == 0 {
                self.t.header = lead;
            } else if let Some(i) = it.anchor {
                if !lead.is_empty() {
                    self.t.leading.insert(i, lead);
                }
            } else {
                pending = lead;
            }
            match it.body {
                Some((bopen, bclose, stmts)) => {
                    self.head(bopen, it.anchor, &mut pending);
                    let sub = self.items(stmts);
                    self.body(&sub, Some(bopen), bclose, it.anchor);
                    // Nothing is left before the `}`, the statement's last token.
                    self.head(it.last, it.anchor, &mut pending);
                }
                None => self.head(it.last, it.anchor, &mut pending),
            }
            line = it.last.line;
            prev = Some(it);
        }
        let gap = self.gap(close, line, prev, owner, &mut pending);
        let mut closing = pending;
        for p in gap {
            push_piece(&mut closing, p);
        }
        trim_blank_end(&mut closing);
        if closing.is_empty() {
            return;
        }
        match owner {
            Some(o) if !top => {
                self.t.closing.entry(o).or_default().extend(closing);
            }
            _ => {
                for p in closing {
                    push_piece(&mut self.t.end, p);
                }
            }
        }
    }

    /// The comments inside a statement's text, before `until`: trailing comments of it.
    fn head(&mut self, until: Pos, anchor: Option<Inst>, pending: &mut Vec<Piece>) {
        while let Some(c) = self.comment_before(until) {
            match anchor {
                Some(i) => self.t.trailing.entry(i).or_default().push(c.text.clone()),
                None => pending.push(Piece::Comment(c.text.clone())),
            }
        }
    }

    /// The trivia between the end of `prev` (or the `{` of the body, on line `line`) and
    /// `until`: comments after code on `prev`'s last line (or the `{` line) attach there, the
    /// rest is returned as pieces.
    fn gap(
        &mut self,
        until: Pos,
        mut line: u32,
        prev: Option<&Item<'_>>,
        owner: Option<Inst>,
        pending: &mut Vec<Piece>,
    ) -> Vec<Piece> {
        let mut out = Vec::new();
        while let Some(c) = self.comment_before(until) {
            if !c.own_line {
                let text = c.text.clone();
                match (prev, owner) {
                    (
                        Some(Item {
                            anchor: Some(i),
                            body,
                            ..
                        }),
                        _,
                    ) => {
                        let list = if body.is_some() {
                            &mut self.t.after_close
                        } else {
                            &mut self.t.trailing
                        };
                        list.entry(*i).or_default().push(text);
                    }
                    (Some(_), _) => pending.push(Piece::Comment(text)),
                    (None, Some(o)) => self.t.trailing.entry(o).or_default().push(text),
                    (None, None) => out.push(Piece::Comment(text)),
                }
                continue;
            }
            if self.blank_between(line, c.pos.line) {
                push_piece(&mut out, Piece::Blank);
            }
            out.push(Piece::Comment(c.text.clone()));
            line = c.pos.line;
        }
        if self.blank_between(line, until.line) {
            push_piece(&mut out, Piece::Blank);
        }
        out
    }
}
