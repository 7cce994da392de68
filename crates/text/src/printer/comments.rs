//! Comments and blank lines (trivia) around statements, from a [`Trivia`](crate::Trivia) table.

use irkit_core::Inst;

use super::Printer;
use crate::trivia::{Piece, push_piece, trim_blank_end};

impl Printer<'_> {
    // ---- trivia -------------------------------------------------------------------------------

    /// A blank line, unless at the start of the file, after a blank line or after a `{` line.
    pub(super) fn blank_line(&mut self) {
        if self.out.is_empty() || self.out.ends_with("\n\n") || self.out.len() == self.open_at {
            return;
        }
        self.nl();
    }

    /// Blank lines and own-line comments (at `indent`).
    pub(super) fn pieces(&mut self, pieces: Vec<Piece>, indent: usize) {
        for p in pieces {
            match p {
                Piece::Blank => self.blank_line(),
                Piece::Comment(text) => {
                    self.indent(indent);
                    self.out.push(';');
                    self.out.push_str(&text);
                    self.nl();
                }
            }
        }
    }

    /// Adds comments to the end of the current line: `  ;a ;b`.
    pub(super) fn add_trailing(&mut self, comments: Vec<String>) {
        for c in comments {
            self.trailing.push_str(if self.trailing.is_empty() {
                "  ;"
            } else {
                " ;"
            });
            self.trailing.push_str(&c);
        }
    }

    pub(super) fn take_leading(&mut self, i: Inst) -> Vec<Piece> {
        self.tv
            .as_mut()
            .and_then(|t| t.leading.remove(&i))
            .unwrap_or_default()
    }

    pub(super) fn take_trailing(&mut self, i: Inst) -> Vec<String> {
        self.tv
            .as_mut()
            .and_then(|t| t.trailing.remove(&i))
            .unwrap_or_default()
    }

    pub(super) fn take_closing(&mut self, i: Inst) -> Vec<Piece> {
        let mut v = self
            .tv
            .as_mut()
            .and_then(|t| t.closing.remove(&i))
            .unwrap_or_default();
        trim_blank_end(&mut v);
        v
    }

    pub(super) fn take_after_close(&mut self, i: Inst) -> Vec<String> {
        self.tv
            .as_mut()
            .and_then(|t| t.after_close.remove(&i))
            .unwrap_or_default()
    }

    /// Every comment of `i`, in order (for an instruction not printed as a statement).
    pub(super) fn take_all_comments(&mut self, i: Inst) -> Vec<String> {
        let mut out = comments_of(self.take_leading(i));
        out.extend(self.take_trailing(i));
        out.extend(comments_of(self.take_closing(i)));
        out.extend(self.take_after_close(i));
        out
    }

    /// The leading trivia of a statement or label and its trailing comments (for the end of
    /// its first line); with `whole`, also those of its body if it prints none.
    pub(super) fn stmt_trivia(&mut self, i: Inst, indent: usize, whole: bool) {
        if self.tv.is_none() || self.one_line {
            return;
        }
        let leading = self.take_leading(i);
        self.pieces(leading, indent);
        let mut t = self.take_trailing(i);
        if whole {
            t.extend(comments_of(self.take_closing(i)));
            t.extend(self.take_after_close(i));
        }
        self.add_trailing(t);
    }

    /// The end of the file: its trailing trivia, then the comments of instructions that were
    /// not printed as statements (only with trivia that does not belong to this module).
    pub(super) fn end_trivia(&mut self) {
        let Some(tv) = self.tv.take() else { return };
        let mut end = tv.end;
        let mut rest: Vec<(Inst, usize, Vec<String>)> = Vec::new();
        rest.extend(tv.leading.into_iter().map(|(i, v)| (i, 0, comments_of(v))));
        rest.extend(tv.trailing.into_iter().map(|(i, v)| (i, 1, v)));
        rest.extend(tv.closing.into_iter().map(|(i, v)| (i, 2, comments_of(v))));
        rest.extend(tv.after_close.into_iter().map(|(i, v)| (i, 3, v)));
        rest.sort_by_key(|(i, k, _)| (*i, *k));
        for (_, _, v) in rest {
            for c in v {
                push_piece(&mut end, Piece::Comment(c));
            }
        }
        trim_blank_end(&mut end);
        self.pieces(end, 0);
        // A header followed by nothing printed (e.g. only a type statement) ends with a blank.
        while self.out.ends_with("\n\n") {
            self.out.pop();
        }
    }

    pub(super) fn indent(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    pub(super) fn mark(&mut self, inst: Inst) {
        self.line_of.entry(inst).or_insert(self.line);
    }
}

/// The comments among trivia pieces.
fn comments_of(pieces: Vec<Piece>) -> Vec<String> {
    pieces
        .into_iter()
        .filter_map(|p| match p {
            Piece::Comment(c) => Some(c),
            Piece::Blank => None,
        })
        .collect()
}
