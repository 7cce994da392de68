//! Building: the syntax tree to a [`Module`], resolving names (forward references included).
//!
//! The file is built one top-level item at a time, in two passes over its items, so that a
//! statement may refer to any name of its scope wherever it is defined, while only one item's
//! syntax tree needs to be held at a time (a caller that parses the source twice, as
//! [`build_source`] does, never holds the whole tree):
//!
//! 1. **declare**: every top-level statement creates its instruction (without operands, type,
//!    decorations or body) and defines its name in the module scope; the module-scope types and
//!    constants (`@t = …`) are kept;
//! 2. the module-scope types and constants are interned in dependency order, found by an
//!    explicit-stack depth-first search (a cycle is an error, not a stack overflow);
//! 3. **define**, item by item: create the instructions written inside the item (decorations,
//!    body, nested bodies) and record their names in the item's local scope, intern the item's
//!    own named types and constants (as in 2), then resolve the types and operands of the item's
//!    instructions. Everything a lookup can find is known by then: the item's local names and
//!    the whole module scope.
//!
//! Scopes: the names of top-level statements (and of `#![…]` entries) form the module scope;
//! everything written inside a top-level statement (its decorations, body, nested bodies)
//! forms that statement's local scope. A lookup tries the local scope, then the module scope.

use std::collections::HashMap;

use irkit_core::{Inst, Module, Opcode, Payload};

use crate::ast::{ConstValue, File, Name, Operand, PayloadLit, Stmt, StmtKind};
use crate::error::{Diags, Pos};
use crate::literal::int_payload;
use crate::parser::{Item, parse_items};

mod hoists;
mod resolve;

/// The sigils a name may be written with.
const SIGILS: [char; 3] = ['%', '@', '^'];

#[derive(Clone, Copy)]
enum Binding {
    Inst(Inst),
    /// A module-scope type or constant, by its index in [`Build::module_hoists`].
    Hoist(u32),
    /// A type or constant of the current item's local scope, by its index in
    /// [`Local::hoists`].
    LocalHoist(u32),
}

#[derive(Clone, Copy)]
enum Place {
    Child(Inst),
    Deco(Inst),
}

/// How a top-level statement was written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Top {
    /// An entry of a `#![…]` line: a decoration of the module.
    RootDeco,
    /// A top-level statement: a child of the module.
    Stmt,
}

/// The local scope of the top-level item being defined: what is written inside it.
///
/// Statements are taken apart as they are built: a statement whose names all resolve when it
/// is created gets its type and operands at once and is dropped; only the others (forward
/// references, names of the module scope that a later local name could still shadow, local
/// types and constants) wait for the end of the item.
struct Local {
    names: HashMap<Name, (Binding, Pos)>,
    /// Its named types and constants, and the value each was interned as (by
    /// [`Build::intern_local_hoists`], at the end of the item).
    hoists: Vec<Stmt>,
    hoist_values: Vec<Option<Inst>>,
    /// Its instructions whose type and operands are still to be resolved.
    pending: Vec<(Inst, Stmt)>,
    /// The item's top-level instruction.
    owner: Inst,
}

impl Local {
    fn new(owner: Inst) -> Self {
        Local {
            names: HashMap::new(),
            hoists: Vec::new(),
            hoist_values: Vec::new(),
            pending: Vec::new(),
            owner,
        }
    }
}

pub(crate) struct Build {
    m: Module,
    diags: Diags,
    /// The module scope (owned: an item's tree is gone once it is built).
    names: HashMap<Name, (Binding, Pos)>,
    /// A name to look up others by (no allocation per lookup once it has grown).
    probe: Name,
    /// The value of each module-scope type or constant, once interned.
    module_hoists: Vec<Option<Inst>>,
    /// The instruction each top-level statement created when declared, in order (`None` for
    /// types, constants and statements that failed).
    tops: Vec<Option<Inst>>,
    /// The next entry of `tops` to define.
    next_top: usize,
    /// The instruction created for each statement ([`Stmt::id`]) that created one; only kept
    /// when asked for (comment attachment needs it).
    created: Option<HashMap<usize, Inst>>,
    /// Where each created instruction was written (its result name, else its opcode); kept
    /// with `created`.
    positions: HashMap<Inst, Pos>,
    /// The digits of each value named by number (`%2`); kept with `created`.
    numbers: HashMap<Inst, String>,
    /// Every statement's instruction and position, and every named type's or constant's value
    /// and position: where the nesting check reports.
    stmt_pos: Vec<(Inst, Pos)>,
    hoist_pos: Vec<(Option<Inst>, Pos)>,
}

/// What [`build_file`] and [`build_source`] build.
pub(crate) struct Built {
    pub(crate) module: Module,
    /// The instruction created for each statement, by [`Stmt::id`] (when asked for).
    pub(crate) created: HashMap<usize, Inst>,
    /// Where each created instruction was written (when asked for).
    pub(crate) positions: HashMap<Inst, Pos>,
    /// The digits of each value named by number (`%2`), when asked for.
    pub(crate) numbers: HashMap<Inst, String>,
}

/// Builds the module for a parsed `file`, with the instruction created for each statement (by
/// [`Stmt::id`]; types, constants and `#![…]` lines create none) if `keep_created`; on any
/// error, returns the diagnostics instead.
pub(crate) fn build_file(file: &File, keep_created: bool) -> Result<Built, Diags> {
    let items = || {
        let decos = file.root_decos.iter().map(|d| (d, Top::RootDeco));
        decos.chain(file.items.iter().map(|s| (s, Top::Stmt)))
    };
    let mut lw = Build::new(keep_created);
    let mut module_hoists = Vec::new();
    for (s, top) in items() {
        if lw.declare(s, top) {
            module_hoists.push(s);
        }
    }
    lw.intern_module_hoists(&module_hoists);
    for (s, _) in items() {
        lw.define_item(s.clone());
    }
    lw.finish()
}

/// Parses `source` and builds its module, holding one top-level item's syntax tree at a time:
/// the source is parsed twice, once to declare the module scope and once to define each item.
/// Parse errors come first: if there are any, they are the result.
pub(crate) fn build_source(source: &str, keep_created: bool) -> Result<Built, Diags> {
    let mut diags = Diags::default();
    let mut lw = Build::new(keep_created);
    let mut module_hoists = Vec::new();
    parse_items(source, &mut diags, false, &mut |item| match item {
        Item::RootDecos(entries, _) => {
            for d in &entries {
                lw.declare(d, Top::RootDeco);
            }
        }
        Item::Stmt(s) => {
            if lw.declare(&s, Top::Stmt) {
                module_hoists.push(s);
            }
        }
    });
    if !diags.is_empty() {
        return Err(diags);
    }
    lw.intern_module_hoists(&module_hoists.iter().collect::<Vec<_>>());
    drop(module_hoists);
    // The same source parses the same way again, without errors.
    let mut again = Diags::default();
    parse_items(source, &mut again, false, &mut |item| match item {
        Item::RootDecos(entries, _) => {
            for d in entries {
                lw.define_item(d);
            }
        }
        Item::Stmt(s) => lw.define_item(s),
    });
    lw.finish()
}

impl Build {
    fn new(keep_created: bool) -> Build {
        Build {
            m: Module::new(),
            diags: Diags::default(),
            names: HashMap::new(),
            probe: Name {
                sigil: '%',
                text: String::new(),
                anon: false,
            },
            module_hoists: Vec::new(),
            tops: Vec::new(),
            next_top: 0,
            created: keep_created.then(HashMap::new),
            positions: HashMap::new(),
            numbers: HashMap::new(),
            stmt_pos: Vec::new(),
            hoist_pos: Vec::new(),
        }
    }

    fn finish(mut self) -> Result<Built, Diags> {
        if self.diags.is_empty() {
            self.check_nesting();
        }
        if self.diags.is_empty() {
            Ok(Built {
                module: self.m,
                created: self.created.unwrap_or_default(),
                positions: self.positions,
                numbers: self.numbers,
            })
        } else {
            Err(self.diags)
        }
    }

    fn error(&mut self, pos: Pos, msg: impl Into<String>) {
        self.diags.push(pos, msg);
    }

    /// Pass 1 for top-level statement `s`: creates its instruction and names it in the module
    /// scope. Returns whether `s` is a module-scope type or constant, which the caller keeps for
    /// [`Build::intern_module_hoists`].
    fn declare(&mut self, s: &Stmt, top: Top) -> bool {
        if self.diags.full() {
            self.tops.push(None);
            return false;
        }
        let root = self.m.root();
        let place = match top {
            Top::RootDeco => Place::Deco(root),
            Top::Stmt => Place::Child(root),
        };
        if is_hoist(s) {
            self.tops.push(None);
            if !self.check_hoist(s, place) {
                return false;
            }
            let Some(idx) = self.hoist_index(self.module_hoists.len(), s.pos) else {
                return false;
            };
            self.module_hoists.push(None);
            if let Some(r) = &s.result {
                self.define(None, &r.name, Binding::Hoist(idx), r.pos);
            }
            return true;
        }
        let inst = self.make(s, place, None);
        self.tops.push(inst);
        false
    }

    /// Pass 3 for top-level statement `s`, declared before: everything written inside it.
    fn define_item(&mut self, s: Stmt) {
        let k = self.next_top;
        self.next_top += 1;
        let Some(Some(inst)) = self.tops.get(k).copied() else {
            return;
        };
        if self.diags.full() {
            return;
        }
        let mut local = Local::new(inst);
        self.fill(s, inst, &mut local);
        self.intern_local_hoists(&mut local);
        for (inst, stmt) in std::mem::take(&mut local.pending) {
            if self.diags.full() {
                return;
            }
            self.resolve(inst, &stmt, &local);
        }
    }

    /// Defines `name` in `local`'s scope, or the module scope if `None`.
    fn define(&mut self, local: Option<&mut Local>, name: &Name, b: Binding, pos: Pos) {
        let names = match &local {
            Some(l) => &l.names,
            None => &self.names,
        };
        if let Some(&(_, first)) = names.get(name) {
            let msg = format!(
                "`{}` is already defined at {}:{}",
                name.display(),
                first.line,
                first.col
            );
            return self.error(pos, msg);
        }
        // The printer gives every named instruction of a scope one sigil by kind: `@` at module
        // level, `^` for blocks and `%` for everything else inside a definition. Two names that
        // would print alike (`@x` and `%x` in one body, say) could not print back faithfully,
        // so they are one name here. (Lookup stays exact: `@f` in a body still finds the
        // module's `@f`.)
        if let Binding::Inst(inst) = b {
            let in_body = local.is_some();
            let block = in_body && self.m.opcode(inst) == Opcode::BLOCK;
            let same_kind =
                |m: &Module, other: Inst| !in_body || (m.opcode(other) == Opcode::BLOCK) == block;
            if let Some((shown, first)) = self.printed_alike(local.as_deref(), name, same_kind) {
                let msg = format!(
                    "`{}` is already defined as `{}` at {}:{} (they would print alike)",
                    name.display(),
                    shown.display(),
                    first.line,
                    first.col
                );
                return self.error(pos, msg);
            }
        }
        match local {
            Some(l) => l.names.insert(name.clone(), (b, pos)),
            None => self.names.insert(name.clone(), (b, pos)),
        };
    }

    /// Another instruction of the scope (`local`'s, else the module's) named `name` with
    /// another sigil, which `same_kind` says would print with the same one: the name as it was
    /// written and where. Anonymous names print as written.
    fn printed_alike(
        &mut self,
        local: Option<&Local>,
        name: &Name,
        same_kind: impl Fn(&Module, Inst) -> bool,
    ) -> Option<(Name, Pos)> {
        if name.anon {
            return None;
        }
        self.probe.text.clear();
        self.probe.text.push_str(&name.text);
        for sigil in SIGILS.into_iter().filter(|&c| c != name.sigil) {
            self.probe.sigil = sigil;
            let found = match local {
                Some(l) => l.names.get(&self.probe),
                None => self.names.get(&self.probe),
            };
            if let Some(&(Binding::Inst(other), first)) = found
                && same_kind(&self.m, other)
            {
                return Some((self.probe.clone(), first));
            }
        }
        None
    }

    fn lookup(&self, local: Option<&Local>, name: &Name) -> Option<Binding> {
        local
            .and_then(|l| l.names.get(name))
            .or_else(|| self.names.get(name))
            .map(|(b, _)| *b)
    }

    /// The nesting limit on the built module: the parser bounds syntactic nesting, but named
    /// values (`@t2 = struct {@t1}`) and label-form blocks add depth that no syntax shows.
    /// Reported at the first statement (in source order) that is, or uses, a value too deep,
    /// or at the statement of the instruction too deep in the tree. Linear.
    fn check_nesting(&mut self) {
        use irkit_core::{MAX_NESTING, Nesting};
        let Err(n) = irkit_core::check_nesting(&self.m) else {
            return;
        };
        let mut at: Option<(Pos, String)> = None;
        let mut consider = |pos: Pos, what: String| {
            if at
                .as_ref()
                .is_none_or(|(p, _)| (pos.line, pos.col) < (p.line, p.col))
            {
                at = Some((pos, what));
            }
        };
        match n {
            Nesting::Tree(inst) => {
                // The statement of the instruction, or of its nearest ancestor that has one
                // (a name hint is created for, not by, a statement).
                let stmts: HashMap<Inst, Pos> = self.stmt_pos.iter().copied().collect();
                let mut cur = Some(inst);
                while let Some(i) = cur {
                    if let Some(&pos) = stmts.get(&i) {
                        let what = if i == inst {
                            ""
                        } else {
                            "a decoration of this "
                        };
                        consider(
                            pos,
                            format!("{what}instruction nested deeper than {MAX_NESTING} levels"),
                        );
                        break;
                    }
                    cur = self.m.parent(i);
                }
            }
            Nesting::Value(_) => {
                let depth = irkit_core::limits::value_depths(&self.m);
                let deep = |i: Inst| depth.get(i.idx()).copied().unwrap_or(0) > MAX_NESTING;
                for &(v, pos) in &self.hoist_pos {
                    if v.is_some_and(deep) {
                        consider(pos, format!("{n}"));
                    }
                }
                for &(i, pos) in &self.stmt_pos {
                    let d = self.m.data(i);
                    if d.ty()
                        .into_iter()
                        .chain(d.operands().iter().copied())
                        .any(deep)
                    {
                        consider(pos, format!("uses {n}"));
                    }
                }
            }
        }
        let (pos, msg) = at.unwrap_or((Pos { line: 1, col: 1 }, n.to_string()));
        self.error(pos, msg);
    }

    // ---- creating instructions ----------------------------------------------------------------

    /// Creates the instructions of statement `s`, written inside the item of `local`, at
    /// `place`.
    fn create(&mut self, s: Stmt, place: Place, local: &mut Local) {
        if self.diags.full() {
            return;
        }
        if is_hoist(&s) {
            if self.check_hoist(&s, place)
                && let Some(idx) = self.hoist_index(local.hoists.len(), s.pos)
            {
                if let Some(r) = &s.result {
                    self.define(Some(local), &r.name, Binding::LocalHoist(idx), r.pos);
                }
                local.hoists.push(s);
                local.hoist_values.push(None);
            }
            return;
        }
        if let Some(inst) = self.make(&s, place, Some(local)) {
            self.fill(s, inst, local);
        }
    }

    /// The instruction of non-hoistable statement `s`, without type and operands, attached at
    /// `place`, with its name hint, its name defined in `local` (the module scope if `None`).
    fn make(&mut self, s: &Stmt, place: Place, local: Option<&mut Local>) -> Option<Inst> {
        let StmtKind::Inst {
            op,
            op_pos,
            payload,
            ..
        } = &s.kind
        else {
            return None;
        };
        let (op, op_pos) = (*op, *op_pos);
        let payload = match payload {
            Some(p) => self.plain_payload(&p.0, p.1),
            None => Payload::None,
        };
        let inst = match self.m.new_inst(op, None, Vec::new(), payload) {
            Ok(i) => i,
            Err(e) => {
                self.error(op_pos, format!("cannot build `{op}`: {e}"));
                return None;
            }
        };
        let attached = match place {
            Place::Child(parent) => {
                if op.is_decoration() {
                    self.error(
                        op_pos,
                        format!(
                            "decoration `{op}` must be written in `#[…]` before what it decorates"
                        ),
                    );
                    return None;
                }
                self.m.append_child(parent, inst)
            }
            Place::Deco(owner) => {
                if op.is_known() && !op.is_decoration() {
                    self.error(op_pos, format!("`{op}` is not a decoration"));
                    return None;
                }
                self.m.attach_decoration(owner, inst)
            }
        };
        if let Err(e) = attached {
            self.error(op_pos, format!("cannot build `{op}`: {e}"));
            return None;
        }
        if let Some(created) = &mut self.created {
            created.insert(s.id, inst);
            let at = s.result.as_ref().map_or(op_pos, |r| r.pos);
            self.positions.insert(inst, at);
            if let Some(r) = s.result.as_ref().filter(|r| r.name.anon) {
                self.numbers.insert(inst, r.name.text.clone());
            }
        }
        self.stmt_pos.push((inst, s.pos));
        if let Some(r) = &s.result {
            if !r.name.anon {
                let hint = self.m.new_inst(
                    Opcode::NAME_HINT,
                    None,
                    Vec::new(),
                    Payload::Str(r.name.text.as_str().into()),
                );
                if let Ok(h) = hint
                    && let Err(e) = self.m.insert_decoration(inst, 0, h)
                {
                    self.error(r.pos, format!("cannot name `{op}`: {e}"));
                }
            }
            self.define(local, &r.name, Binding::Inst(inst), r.pos);
        }
        Some(inst)
    }

    /// The decorations and body of statement `s`, whose instruction is `inst`; `s` waits in
    /// `local` for its type and operands.
    fn fill(&mut self, mut s: Stmt, inst: Inst, local: &mut Local) {
        for d in std::mem::take(&mut s.decos) {
            self.create(d, Place::Deco(inst), local);
        }
        if let StmtKind::Inst { body, .. } = &mut s.kind
            && let Some(body) = body.take()
        {
            for c in body {
                self.create(c, Place::Child(inst), local);
            }
        }
        if self.resolvable_now(&s, local) {
            self.resolve(inst, &s, local);
        } else {
            local.pending.push((inst, s));
        }
    }

    /// Whether every name `s`'s type and operands use is bound to an instruction of the local
    /// scope already: then resolving them now gives what resolving them at the end of the
    /// item would. (A name found only in the module scope could still be shadowed by a local
    /// name defined later; a local type or constant is interned at the end of the item.)
    fn resolvable_now(&self, s: &Stmt, local: &Local) -> bool {
        let bound = &mut |n: &Name| matches!(local.names.get(n), Some((Binding::Inst(_), _)));
        let ty = s.result.as_ref().and_then(|r| r.ty.as_deref());
        let operands = match &s.kind {
            StmtKind::Inst { operands, .. } => operands.as_slice(),
            StmtKind::Alias(_) => &[],
        };
        ty.into_iter().chain(operands).all(|o| all_refs(o, bound))
    }

    /// Index `n` of a named type or constant, if it fits the 32 bits a binding keeps.
    fn hoist_index(&mut self, n: usize, pos: Pos) -> Option<u32> {
        let idx = u32::try_from(n).ok();
        if idx.is_none() {
            self.error(pos, "more than 2^32 named types and constants in one scope");
        }
        idx
    }

    /// Whether a type or constant statement may stand at `place` (errors reported).
    fn check_hoist(&mut self, s: &Stmt, place: Place) -> bool {
        if let Place::Deco(_) = place {
            self.error(s.pos, "a type or constant cannot be a decoration");
            return false;
        }
        if !s.decos.is_empty() {
            self.error(s.pos, "types and constants carry no decorations");
            return false;
        }
        if let StmtKind::Inst {
            body: Some(_), op, ..
        } = &s.kind
        {
            self.error(
                s.pos,
                format!("`{op}` is a type or constant and has no body"),
            );
            return false;
        }
        true
    }

    /// The payload of a non-hoistable instruction (no result type is needed to read it).
    fn plain_payload(&mut self, lit: &PayloadLit, pos: Pos) -> Payload {
        match lit {
            PayloadLit::Int(v) => match int_payload(*v) {
                Some(p) => Payload::Int(p),
                None => {
                    self.error(
                        pos,
                        format!("integer payload `{v}` does not fit in 64 bits"),
                    );
                    Payload::None
                }
            },
            PayloadLit::FBits(b) => Payload::Float(*b),
            PayloadLit::Str(s) => Payload::Str(s.as_str().into()),
            PayloadLit::Bytes(b) => Payload::Bytes(b.as_slice().into()),
            PayloadLit::Cc(c) => Payload::Int(*c),
            PayloadLit::Float(_) | PayloadLit::Nan(_) => {
                self.error(pos, "a float payload must be written `fbits:0x…` here");
                Payload::None
            }
        }
    }
}

fn collect_refs<'n>(o: &'n Operand, out: &mut Vec<&'n Name>) {
    all_refs(o, &mut |n| {
        out.push(n);
        true
    });
}

/// Whether `f` holds for every name operand `o` refers to (inline types and constants
/// included), stopping at the first that it does not hold for. Recursion is bounded by the
/// parser's value depth.
fn all_refs<'n>(o: &'n Operand, f: &mut impl FnMut(&'n Name) -> bool) -> bool {
    match o {
        Operand::Ref(n, _) => f(n),
        Operand::Prim(..) => true,
        Operand::Array(_, e, _) | Operand::Vector(_, e, _) => all_refs(e, f),
        Operand::Struct(v, _) | Operand::Fn(v, _) => v.iter().all(|x| all_refs(x, f)),
        Operand::Const(t, v, _) => {
            all_refs(t, f)
                && match v {
                    ConstValue::Aggregate(elems) => elems.iter().all(|x| all_refs(x, f)),
                    _ => true,
                }
        }
    }
}

/// Whether `s` names a type or constant (a hoistable value) rather than creating an
/// instruction of the tree.
fn is_hoist(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Inst { op, .. } => op.is_hoistable(),
        StmtKind::Alias(_) => true,
    }
}
