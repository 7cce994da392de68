//! The printer: a [`Module`] to canonical text.
//!
//! Readable forms are used wherever they express the instruction exactly (inline types and
//! constants, block labels, grouped arguments, names from `name_hint`); anything else falls
//! back to the generic form, and an opcode whose payload does not match its registry kind is
//! spelled `#id`, the form that reads any payload. So `parse(print(m))` rebuilds `m` for any
//! module, and printing a parsed canonical text gives the same text.

use std::collections::HashMap;
use std::fmt::Write;

use irkit_core::{FloatCC, Inst, IntCC, MAX_NESTING, Module, Opcode, Payload, PayloadKind};

use crate::literal::{write_bytes_lit, write_str_lit};
use crate::names::Names;
use crate::trivia::{Piece, Trivia};

mod comments;
mod operands;

/// Deeper inline nests than this print `…` (only reachable without a plan, in messages).
const MAX_PRINT_DEPTH: u32 = 64;

/// Prints the whole module in canonical form.
pub fn print(module: &Module) -> String {
    let names = Names::new(module);
    let mut p = Printer::new(module, &names, false);
    p.module();
    p.out
}

/// Prints the whole module in canonical form with the comments and blank lines of `trivia`
/// (from [`parse_with_trivia`](crate::parse_with_trivia)) in their canonical places; see
/// `spec/text.md`, "Comments and formatting". With [`Trivia::default()`] this is [`print()`].
pub fn print_with_trivia(module: &Module, trivia: &Trivia) -> String {
    let names = Names::with_numbers(module, &trivia.numbers);
    let mut p = Printer::new(module, &names, false);
    p.tv = Some(trivia.clone());
    p.module();
    p.out
}

/// Prints one instruction as it appears in [`print()`]'s output, on one line and with the same
/// names: a statement's line (a body shown as `{ … }`), a block's label, a decoration as
/// `#[…]`, a type or constant inline (or its statement, if it needs one).
pub fn print_inst(module: &Module, inst: Inst) -> String {
    print_inst_with(module, &Names::new(module), inst)
}

/// Like [`print_inst`] with a naming table computed beforehand (cheaper for many calls).
pub fn print_inst_with(module: &Module, names: &Names, inst: Inst) -> String {
    let mut p = Printer::new(module, names, true);
    let m = module;
    let Some(d) = m.get(inst) else {
        return format!("<{inst}: not in this module>");
    };
    if inst == m.root() {
        return "module".to_string();
    }
    if d.opcode().is_hoistable() {
        if names.is_stmt_hoist(inst) {
            p.head(inst);
        } else {
            p.inline(inst, 0);
        }
    } else if d.opcode().is_decoration()
        || d.parent().is_some_and(|o| m.decorations(o).contains(&inst))
    {
        p.out.push_str("#[");
        p.deco_entry(inst, 0);
        p.out.push(']');
    } else if p.is_label(inst) {
        p.label_line(inst, 0);
    } else {
        p.stmt(inst, 0, false);
    }
    p.out.trim_end().to_string()
}

/// Prints the module with `; error: <msg>` comment lines after the line of each noted
/// instruction (a decoration's or inline value's note follows the line it is printed on;
/// notes for instructions not in the printout come first). The result still parses.
pub fn print_annotated(module: &Module, notes: &[(Inst, String)]) -> String {
    let names = Names::new(module);
    let mut p = Printer::new(module, &names, false);
    p.module();
    let lines: Vec<&str> = p.out.lines().collect();
    let mut after: HashMap<usize, Vec<&str>> = HashMap::new();
    let mut out = String::new();
    for (inst, msg) in notes {
        match p.line_of.get(inst) {
            Some(&l) if l < lines.len() => after.entry(l).or_default().push(msg),
            _ => push_note(&mut out, "", msg),
        }
    }
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        if let Some(msgs) = after.get(&i) {
            let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
            for msg in msgs {
                push_note(&mut out, &indent, msg);
            }
        }
    }
    out
}

fn push_note(out: &mut String, indent: &str, msg: &str) {
    for (k, part) in msg.lines().enumerate() {
        out.push_str(indent);
        out.push_str(if k == 0 { "; error: " } else { ";        " });
        out.push_str(part);
        out.push('\n');
    }
    if msg.is_empty() {
        out.push_str(indent);
        out.push_str("; error:\n");
    }
}

/// An operand as printed without a naming table (references unnamed), for messages.
pub(crate) fn operand_text(module: &Module, inst: Inst) -> String {
    let names = Names::default();
    let mut p = Printer::new(module, &names, true);
    p.operand(inst, MAX_PRINT_DEPTH - 8);
    p.out
}

struct Printer<'m> {
    m: &'m Module,
    n: &'m Names,
    out: String,
    line: usize,
    line_of: HashMap<Inst, usize>,
    one_line: bool,
    /// The trivia still to print (entries are removed as they are printed).
    tv: Option<Trivia>,
    /// Trailing comments for the end of the current line (written by [`Printer::nl`]).
    trailing: String,
    /// `out.len()` right after the last `{` line (no blank line goes there).
    open_at: usize,
    /// Bodies and decoration entries open: each is one level of the tree, so a module within
    /// the nesting limit never has more than [`MAX_NESTING`] open; deeper (a module built in
    /// memory, which no reader accepts) prints `…` there instead of recursing further.
    level: u32,
}

impl<'m> Printer<'m> {
    fn new(m: &'m Module, n: &'m Names, one_line: bool) -> Self {
        Printer {
            m,
            n,
            out: String::new(),
            line: 0,
            line_of: HashMap::new(),
            one_line,
            tv: None,
            trailing: String::new(),
            open_at: usize::MAX,
            level: 0,
        }
    }

    fn nl(&mut self) {
        if !self.trailing.is_empty() {
            let t = std::mem::take(&mut self.trailing);
            self.out.push_str(&t);
        }
        self.out.push('\n');
        self.line += 1;
    }

    // ---- module layout ------------------------------------------------------------------------

    fn module(&mut self) {
        let m = self.m;
        let root = m.root();
        if let Some(t) = self.tv.as_mut() {
            let h = std::mem::take(&mut t.header);
            self.pieces(h, 0);
        }
        let mut header = false;
        let decos = m.decorations(root);
        if !decos.is_empty() {
            self.out.push_str("#![");
            for (k, &d) in decos.iter().enumerate() {
                if k > 0 {
                    self.out.push_str(", ");
                }
                self.deco_entry(d, 0);
            }
            self.out.push(']');
            self.nl();
            header = true;
        }
        for &h in self.n.module_hoists() {
            self.mark(h);
            self.head(h);
            self.nl();
            header = true;
        }
        let mut prev_multi = header;
        for (k, &c) in m.children(root).iter().enumerate() {
            let multi = self.has_body(c);
            if k > 0 && (multi || prev_multi) || (k == 0 && header) {
                self.blank_line();
            }
            self.stmt(c, 0, true);
            prev_multi = multi;
        }
        self.end_trivia();
    }

    fn has_body(&self, i: Inst) -> bool {
        !self.m.children(i).is_empty() || !self.n.local_hoists(i).is_empty()
    }

    // ---- statements ---------------------------------------------------------------------------

    /// The decorations that are printed (all but the one the name comes from).
    fn shown_decos(&self, i: Inst) -> &'m [Inst] {
        let d = self.m.decorations(i);
        if self.n.is_hinted(i) { &d[1..] } else { d }
    }

    fn deco_group(&mut self, decos: &[Inst], indent: usize) {
        if self.level > MAX_NESTING {
            self.out.push_str("#[…]");
            return;
        }
        self.level += 1;
        self.out.push_str("#[");
        for (k, &d) in decos.iter().enumerate() {
            if k > 0 {
                self.out.push_str(", ");
            }
            self.deco_entry(d, indent);
        }
        self.out.push(']');
        self.level -= 1;
    }

    /// A statement with its decorations and body; `own_lines` puts decorations on the line
    /// above (top-level statements) rather than before the result on the same line.
    fn stmt(&mut self, i: Inst, indent: usize, own_lines: bool) {
        let bodiless = !self.has_body(i);
        self.stmt_trivia(i, indent, bodiless);
        let all = self.shown_decos(i);
        let (decos, passive) = all.split_at(all.len() - self.passive_suffix(i));
        self.indent(indent);
        if !decos.is_empty() {
            if own_lines && !self.one_line {
                for &d in decos {
                    self.mark(d);
                }
                self.deco_group(decos, indent);
                self.nl();
                self.indent(indent);
            } else {
                self.mark(i);
                self.deco_group(decos, indent);
                self.out.push(' ');
            }
        }
        self.mark(i);
        for &d in passive {
            self.mark(d);
        }
        self.head_passive(i, passive);
        self.body(i, indent, true);
        if !self.one_line {
            self.nl();
        }
    }

    /// How many of `i`'s shown decorations print as a NOIR passive-dependency prefix
    /// (`%a, %b ? op`, `%c ! op`): its `when`/`unless` decorations, when they all come last
    /// and each names at least one value; 0 otherwise (they print in `#[…]` like any other).
    fn passive_suffix(&self, i: Inst) -> usize {
        let m = self.m;
        let decos = self.shown_decos(i);
        let is_passive = |d: Inst| matches!(m.opcode(d), Opcode::WHEN | Opcode::UNLESS);
        let n = decos.iter().rev().take_while(|&&d| is_passive(d)).count();
        let suffix = &decos[decos.len() - n..];
        let sugared = decos[..decos.len() - n].iter().all(|&d| !is_passive(d))
            && suffix.iter().all(|&d| {
                let dd = m.data(d);
                !dd.operands().is_empty()
                    && dd.payload().is_none()
                    && dd.ty().is_none()
                    && dd.decorations().is_empty()
                    && dd.children().is_empty()
                    && dd.operands().iter().all(|&o| self.is_ref(o))
            });
        if sugared { n } else { 0 }
    }

    /// Whether a proc prints with its header `proc(%p: T, …) -> %v`: its leading children
    /// are plain parameters, its last child a plain `result`, and no other child is either.
    fn proc_sugar(&self, p: Inst) -> Option<(usize, Inst)> {
        let m = self.m;
        if m.opcode(p) != Opcode::PROC {
            return None;
        }
        let children = m.children(p);
        let n = self.header_params(p);
        let (&last, middle) = children.get(n..)?.split_last()?;
        let ld = m.data(last);
        let plain_result = ld.opcode() == Opcode::RESULT
            && ld.decorations().is_empty()
            && ld.ty().is_none()
            && ld.payload().is_none()
            && ld.children().is_empty()
            && ld.operands().len() <= 1;
        let clean = middle
            .iter()
            .all(|&c| !matches!(m.opcode(c), Opcode::PARAM | Opcode::RESULT));
        (plain_result && clean).then_some((n, last))
    }

    /// `(%p: T, …)`: the parameters of a block label or a proc header.
    fn param_list(&mut self, params: &[Inst], indent: usize) {
        self.out.push('(');
        for (k, &p) in params.iter().enumerate() {
            if k > 0 {
                self.out.push_str(", ");
            }
            self.mark(p);
            let decos = self.shown_decos(p);
            if !decos.is_empty() {
                self.deco_group(decos, indent);
                self.out.push(' ');
            }
            self.name(p);
            self.out.push_str(": ");
            if let Some(t) = self.m.ty(p) {
                self.operand(t, 0);
            }
        }
        self.out.push(')');
    }

    /// `(%p: T, …) -> %v` after `proc`.
    fn proc_header(&mut self, p: Inst, n: usize, result: Inst, indent: usize) {
        self.param_list(&self.m.children(p)[..n], indent);
        self.mark(result);
        if let Some(&v) = self.m.operands(result).first() {
            self.out.push_str(" -> ");
            self.operand(v, 0);
        }
    }

    /// ` {`, the children, `}` (nothing without children); `stmt`: the body of a statement
    /// (not of a decoration), which has trivia.
    fn body(&mut self, i: Inst, indent: usize, stmt: bool) {
        let m = self.m;
        let is_top = m.parent(i) == Some(m.root());
        let hoists: &[Inst] = if is_top { self.n.local_hoists(i) } else { &[] };
        let mut children = m.children(i);
        if children.is_empty() && hoists.is_empty() {
            return;
        }
        if let Some((n, result)) = self.proc_sugar(i) {
            self.proc_header(i, n, result, indent);
            children = &children[n..children.len() - 1];
        }
        if self.one_line || self.level > MAX_NESTING {
            self.out.push_str(" { … }");
            return;
        }
        self.level += 1;
        self.body_inner(i, indent, stmt, children, hoists);
        self.level -= 1;
    }

    fn body_inner(
        &mut self,
        i: Inst,
        indent: usize,
        stmt: bool,
        children: &'m [Inst],
        hoists: &'m [Inst],
    ) {
        let m = self.m;
        self.out.push_str(" {");
        self.nl();
        self.open_at = self.out.len();
        for &h in hoists {
            self.indent(indent + 2);
            self.mark(h);
            self.head(h);
            self.nl();
        }
        if self.sugar(i) {
            for (k, &b) in children.iter().enumerate() {
                let header = self.header_params(b);
                if self.tv.is_some() {
                    let leading = self.take_leading(b);
                    self.pieces(leading, indent);
                    let mut t = self.take_trailing(b);
                    for &p in &m.children(b)[..header] {
                        t.extend(self.take_all_comments(p));
                    }
                    self.add_trailing(t);
                }
                let bdecos = self.shown_decos(b);
                if !bdecos.is_empty() {
                    self.indent(indent);
                    for &d in bdecos {
                        self.mark(d);
                    }
                    self.deco_group(bdecos, indent);
                    self.nl();
                }
                self.indent(indent);
                self.label_line(b, indent);
                self.nl();
                for &c in &m.children(b)[header..] {
                    self.stmt(c, indent + 2, false);
                }
                if self.tv.is_some() {
                    // What closed a block written `^b = block {…}`: before the next label (at
                    // its indentation) or the function's `}` (at the statements').
                    let mut end = self.take_closing(b);
                    end.extend(self.take_after_close(b).into_iter().map(Piece::Comment));
                    let last = k + 1 == children.len();
                    self.pieces(end, if last { indent + 2 } else { indent });
                }
            }
        } else {
            for &c in children {
                self.stmt(c, indent + 2, false);
            }
        }
        if stmt && self.tv.is_some() {
            let closing = self.take_closing(i);
            self.pieces(closing, indent + 2);
        }
        self.indent(indent);
        self.out.push('}');
        if stmt && self.tv.is_some() {
            let after = self.take_after_close(i);
            self.add_trailing(after);
        }
    }

    /// Whether a function body prints with block labels: all its children are plain blocks.
    fn sugar(&self, f: Inst) -> bool {
        let m = self.m;
        m.opcode(f) == Opcode::FUNC
            && m.children(f).iter().all(|&b| {
                let d = m.data(b);
                d.opcode() == Opcode::BLOCK
                    && d.ty().is_none()
                    && d.operands().is_empty()
                    && d.payload().is_none()
                    && self.n.get(b).is_some()
            })
    }

    fn is_label(&self, b: Inst) -> bool {
        self.m
            .parent(b)
            .is_some_and(|f| self.sugar(f) && self.m.children(f).contains(&b))
    }

    /// How many leading children of a block print in its label's parameter list.
    fn header_params(&self, b: Inst) -> usize {
        let m = self.m;
        m.children(b)
            .iter()
            .take_while(|&&p| {
                let d = m.data(p);
                d.opcode() == Opcode::PARAM
                    && d.ty().is_some()
                    && d.operands().is_empty()
                    && d.payload().is_none()
                    && d.children().is_empty()
                    && self.n.get(p).is_some()
            })
            .count()
    }

    /// `^name(%p: T, …):`
    fn label_line(&mut self, b: Inst, indent: usize) {
        self.mark(b);
        self.name(b);
        let n = self.header_params(b);
        if n > 0 {
            self.param_list(&self.m.children(b)[..n], indent);
        }
        self.out.push(':');
    }

    /// `[result [: T] =] opname [payload] [operands]`.
    fn head(&mut self, i: Inst) {
        self.head_passive(i, &[]);
    }

    /// `[result [: T] =] [%a, … ? | %b, … !]* opname [payload] [operands]`, with the given
    /// `when`/`unless` decorations written as the passive-dependency prefix.
    fn head_passive(&mut self, i: Inst, passive: &[Inst]) {
        let m = self.m;
        let d = m.data(i);
        if self.n.get(i).is_some() {
            self.name(i);
            if let Some(t) = d.ty() {
                self.out.push_str(": ");
                self.operand(t, 0);
            }
            self.out.push_str(" = ");
        }
        for &dep in passive {
            for (k, &o) in m.operands(dep).iter().enumerate() {
                if k > 0 {
                    self.out.push_str(", ");
                }
                self.name(o);
            }
            self.out.push_str(if m.opcode(dep) == Opcode::UNLESS {
                " ! "
            } else {
                " ? "
            });
        }
        let by_name = self.opname(i);
        if !d.payload().is_none() {
            self.out.push(' ');
            self.payload(i, by_name);
        }
        let ops = d.operands();
        if ops.is_empty() {
            return;
        }
        self.out.push(' ');
        match d.opcode() {
            Opcode::CALL | Opcode::TAIL_CALL if self.is_ref(ops[0]) => {
                self.name(ops[0]);
                self.group(&ops[1..]);
            }
            Opcode::CALL_INDIRECT | Opcode::TAIL_CALL_INDIRECT
                if ops.len() >= 2 && self.is_ref(ops[1]) =>
            {
                self.operand(ops[0], 0);
                self.out.push_str(", ");
                self.name(ops[1]);
                self.group(&ops[2..]);
            }
            _ => self.list(ops, 0),
        }
    }

    fn group(&mut self, args: &[Inst]) {
        self.out.push('(');
        self.list(args, 0);
        self.out.push(')');
    }

    /// Writes the opcode; returns whether it was spelled by name (payload matches its kind).
    fn opname(&mut self, i: Inst) -> bool {
        let d = self.m.data(i);
        let op = d.opcode();
        let by_name = match op.info() {
            Some(info) => {
                payload_fits(info.payload, d.payload())
                    && !(op.is_type() && irkit_core::scalar::scalar(op).is_some())
            }
            None => false,
        };
        if by_name {
            self.out.push_str(op.name().unwrap_or_default());
        } else {
            let _ = write!(self.out, "#{}", op.0);
        }
        by_name
    }

    fn payload(&mut self, i: Inst, by_name: bool) {
        let d = self.m.data(i);
        let kind = if by_name {
            d.opcode().payload_kind()
        } else {
            None
        };
        match (d.payload(), kind) {
            (Payload::Int(v), Some(PayloadKind::IntCC)) => {
                self.out
                    .push_str(IntCC::from_code(*v).map_or("?", IntCC::name));
            }
            (Payload::Int(v), Some(PayloadKind::FloatCC)) => {
                self.out
                    .push_str(FloatCC::from_code(*v).map_or("?", FloatCC::name));
            }
            (Payload::Int(v), _) => {
                let _ = write!(self.out, "{v}");
            }
            (Payload::Float(b), _) => {
                let _ = write!(self.out, "fbits:{b:#x}");
            }
            (Payload::Str(s), _) => write_str_lit(&mut self.out, s),
            (Payload::Bytes(b), _) => write_bytes_lit(&mut self.out, b),
            (Payload::None, _) => {}
        }
    }

    /// One decoration entry (inside `#[…]`): `[result =] opname[(payload, operands)] [body]`.
    fn deco_entry(&mut self, d: Inst, indent: usize) {
        self.mark(d);
        let m = self.m;
        let decos = self.shown_decos(d);
        if !decos.is_empty() {
            self.deco_group(decos, indent);
            self.out.push(' ');
        }
        let data = m.data(d);
        if self.n.get(d).is_some() {
            self.name(d);
            if let Some(t) = data.ty() {
                self.out.push_str(": ");
                self.operand(t, 0);
            }
            self.out.push_str(" = ");
        }
        let by_name = self.opname(d);
        let has_payload = !data.payload().is_none();
        if has_payload || !data.operands().is_empty() {
            self.out.push('(');
            if has_payload {
                self.payload(d, by_name);
                if !data.operands().is_empty() {
                    self.out.push_str(", ");
                }
            }
            self.list(data.operands(), 0);
            self.out.push(')');
        }
        self.body(d, indent, false);
    }
}

/// Whether a payload has the kind the registry gives (so the opcode can be spelled by name).
fn payload_fits(kind: PayloadKind, p: &Payload) -> bool {
    match (kind, p) {
        (PayloadKind::None, Payload::None) => true,
        (PayloadKind::Int, Payload::Int(_)) => true,
        (PayloadKind::Float, Payload::Float(_)) => true,
        (PayloadKind::Str, Payload::Str(_)) => true,
        (PayloadKind::Bytes, Payload::Bytes(_)) => true,
        (PayloadKind::IntCC, Payload::Int(c)) => IntCC::from_code(*c).is_some(),
        (PayloadKind::FloatCC, Payload::Int(c)) => FloatCC::from_code(*c).is_some(),
        _ => false,
    }
}
