//! Lowering: the syntax tree to a [`Module`], resolving names (forward references included).
//!
//! Three phases, so that any statement may refer to any name of its scope wherever it is
//! defined:
//!
//! 1. create every non-hoistable instruction (detached operands and type), attach it, add its
//!    name hint first among its decorations, and record every name;
//! 2. intern the named types and constants (`%t = …` statements) in dependency order, found by
//!    an explicit-stack depth-first search (a cycle is an error, not a stack overflow);
//! 3. resolve the types and operands of the instructions of phase 1.
//!
//! Scopes: the names of top-level statements (and of `#![…]` entries) form the module scope;
//! everything written inside a top-level statement (its decorations, body, nested bodies)
//! forms that statement's local scope. A lookup tries the local scope, then the module scope.

use std::collections::HashMap;

use irkit_core::{Inst, Module, Opcode, Payload, PayloadKind};

use crate::ast::{ConstValue, File, Name, Operand, PayloadLit, Stmt, StmtKind};
use crate::error::{Diags, Pos};
use crate::literal::{int_in_width, int_payload, parse_f32, parse_f64};

type ScopeId = usize;
const MODULE_SCOPE: ScopeId = 0;

#[derive(Clone, Copy)]
enum Binding {
    Inst(Inst),
    Hoist(usize),
}

#[derive(Clone, Copy)]
enum Place {
    Child(Inst),
    Deco(Inst),
}

struct HoistDef<'a> {
    stmt: &'a Stmt,
    scope: ScopeId,
    value: Option<Inst>,
}

struct Lower<'a> {
    m: Module,
    diags: Diags,
    scopes: Vec<HashMap<&'a Name, (Binding, Pos)>>,
    hoists: Vec<HoistDef<'a>>,
    pending: Vec<(Inst, &'a Stmt, ScopeId)>,
    /// The instruction created for each statement ([`Stmt::id`]) that created one; only kept
    /// when asked for (comment attachment needs it).
    created: Option<HashMap<usize, Inst>>,
    /// Where each created instruction was written (its result name, else its opcode); kept
    /// with `created`.
    positions: HashMap<Inst, Pos>,
    /// The digits of each value named by number (`%2`); kept with `created`.
    numbers: HashMap<Inst, String>,
    /// The top-level instruction whose statement opened each local scope (`None` for the
    /// module scope, and for a statement that created nothing).
    scope_owner: Vec<Option<Inst>>,
    /// Names by how they print: (scope, is a block label, text) -> (as written, where).
    printed: HashMap<(ScopeId, bool, &'a str), (&'a Name, Pos)>,
}

/// What [`lower`] builds.
pub(crate) struct Lowered {
    pub(crate) module: Module,
    /// The instruction created for each statement, by [`Stmt::id`] (when asked for).
    pub(crate) created: HashMap<usize, Inst>,
    /// Where each created instruction was written (when asked for).
    pub(crate) positions: HashMap<Inst, Pos>,
    /// The digits of each value named by number (`%2`), when asked for.
    pub(crate) numbers: HashMap<Inst, String>,
}

/// Builds the module for `file`, with the instruction created for each statement (by
/// [`Stmt::id`]; types, constants and `#![…]` entries create none); on any error, returns
/// the diagnostics instead.
pub(crate) fn lower(file: &File, diags: Diags, keep_created: bool) -> Result<Lowered, Diags> {
    let mut lw = Lower {
        m: Module::new(),
        diags,
        scopes: vec![HashMap::new()],
        hoists: Vec::new(),
        pending: Vec::new(),
        created: keep_created.then(HashMap::new),
        positions: HashMap::new(),
        numbers: HashMap::new(),
        scope_owner: vec![None],
        printed: HashMap::new(),
    };
    let root = lw.m.root();
    for d in &file.root_decos {
        let local = lw.new_scope();
        let before = lw.m.decorations(root).len();
        lw.create(d, Place::Deco(root), MODULE_SCOPE, local);
        if lw.m.decorations(root).len() > before {
            lw.scope_owner[local] = lw.m.decorations(root).last().copied();
        }
    }
    for s in &file.items {
        let local = lw.new_scope();
        let before = lw.m.children(root).len();
        lw.create(s, Place::Child(root), MODULE_SCOPE, local);
        if lw.m.children(root).len() > before {
            lw.scope_owner[local] = lw.m.children(root).last().copied();
        }
    }
    lw.intern_hoists();
    lw.resolve_pending();
    if lw.diags.is_empty() {
        lw.check_nesting();
    }
    if lw.diags.is_empty() {
        Ok(Lowered {
            module: lw.m,
            created: lw.created.unwrap_or_default(),
            positions: lw.positions,
            numbers: lw.numbers,
        })
    } else {
        Err(lw.diags)
    }
}

impl<'a> Lower<'a> {
    fn new_scope(&mut self) -> ScopeId {
        self.scopes.push(HashMap::new());
        self.scope_owner.push(None);
        self.scopes.len() - 1
    }

    fn error(&mut self, pos: Pos, msg: impl Into<String>) {
        self.diags.push(pos, msg);
    }

    fn define(&mut self, scope: ScopeId, name: &'a Name, b: Binding, pos: Pos) {
        if let Some((_, first)) = self.scopes[scope].get(name) {
            let msg = format!(
                "`{}` is already defined at {}:{}",
                name.display(),
                first.line,
                first.col
            );
            self.error(pos, msg);
            return;
        }
        // The printer gives every named instruction of a scope one sigil by kind: `@` at module
        // level, `^` for blocks and `%` for everything else inside a definition. Two names that
        // would print alike (`@x` and `%x` in one body, say) could not print back faithfully,
        // so they are one name here. (Lookup stays exact: `@f` in a body still finds the
        // module's `@f`.)
        if let Binding::Inst(inst) = b
            && !name.anon
        {
            let block = scope != MODULE_SCOPE && self.m.opcode(inst) == Opcode::BLOCK;
            let key = (scope, block, name.text.as_str());
            if let Some((shown, first)) = self.printed.get(&key) {
                let msg = format!(
                    "`{}` is already defined as `{}` at {}:{} (they would print alike)",
                    name.display(),
                    shown.display(),
                    first.line,
                    first.col
                );
                self.error(pos, msg);
                return;
            }
            self.printed.insert(key, (name, pos));
        }
        self.scopes[scope].insert(name, (b, pos));
    }

    fn lookup(&self, scope: ScopeId, name: &Name) -> Option<Binding> {
        self.scopes[scope]
            .get(name)
            .or_else(|| self.scopes[MODULE_SCOPE].get(name))
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
                let stmts: HashMap<Inst, Pos> =
                    self.pending.iter().map(|(i, s, _)| (*i, s.pos)).collect();
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
                for h in &self.hoists {
                    if h.value.is_some_and(deep) {
                        consider(h.stmt.pos, format!("{n}"));
                    }
                }
                for (i, s, _) in &self.pending {
                    let d = self.m.data(*i);
                    if d.ty()
                        .into_iter()
                        .chain(d.operands().iter().copied())
                        .any(deep)
                    {
                        consider(s.pos, format!("uses {n}"));
                    }
                }
            }
        }
        let (pos, msg) = at.unwrap_or((Pos { line: 1, col: 1 }, n.to_string()));
        self.error(pos, msg);
    }

    // ---- phase 1 ------------------------------------------------------------------------------

    fn create(&mut self, s: &'a Stmt, place: Place, name_scope: ScopeId, inner: ScopeId) {
        if self.diags.full() {
            return;
        }
        let StmtKind::Inst {
            op,
            by_name: _,
            op_pos,
            payload,
            operands: _,
            body,
        } = &s.kind
        else {
            return self.hoist_stmt(s, place, name_scope);
        };
        if op.is_hoistable() {
            return self.hoist_stmt(s, place, name_scope);
        }
        let (op, op_pos) = (*op, *op_pos);
        let payload = match payload {
            Some((lit, pos)) => self.plain_payload(lit, *pos),
            None => Payload::None,
        };
        let inst = match self.m.new_inst(op, None, Vec::new(), payload) {
            Ok(i) => i,
            Err(e) => return self.error(op_pos, format!("cannot build `{op}`: {e}")),
        };
        let attached = match place {
            Place::Child(parent) => {
                if op.is_decoration() {
                    return self.error(
                        op_pos,
                        format!(
                            "decoration `{op}` must be written in `#[…]` before what it decorates"
                        ),
                    );
                }
                self.m.append_child(parent, inst)
            }
            Place::Deco(owner) => {
                if op.is_known() && !op.is_decoration() {
                    return self.error(op_pos, format!("`{op}` is not a decoration"));
                }
                self.m.attach_decoration(owner, inst)
            }
        };
        if let Err(e) = attached {
            return self.error(op_pos, format!("cannot build `{op}`: {e}"));
        }
        if let Some(created) = &mut self.created {
            created.insert(s.id, inst);
            let at = s.result.as_ref().map_or(op_pos, |r| r.pos);
            self.positions.insert(inst, at);
            if let Some(r) = s.result.as_ref().filter(|r| r.name.anon) {
                self.numbers.insert(inst, r.name.text.clone());
            }
        }
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
            self.define(name_scope, &r.name, Binding::Inst(inst), r.pos);
        }
        for d in &s.decos {
            self.create(d, Place::Deco(inst), inner, inner);
        }
        if let Some(body) = body {
            for c in body {
                self.create(c, Place::Child(inst), inner, inner);
            }
        }
        self.pending.push((inst, s, inner));
    }

    fn hoist_stmt(&mut self, s: &'a Stmt, place: Place, scope: ScopeId) {
        if let Place::Deco(_) = place {
            return self.error(s.pos, "a type or constant cannot be a decoration");
        }
        if !s.decos.is_empty() {
            return self.error(s.pos, "types and constants carry no decorations");
        }
        if let StmtKind::Inst {
            body: Some(_), op, ..
        } = &s.kind
        {
            return self.error(
                s.pos,
                format!("`{op}` is a type or constant and has no body"),
            );
        }
        let idx = self.hoists.len();
        self.hoists.push(HoistDef {
            stmt: s,
            scope,
            value: None,
        });
        if let Some(r) = &s.result {
            self.define(scope, &r.name, Binding::Hoist(idx), r.pos);
        }
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

    // ---- phase 2 ------------------------------------------------------------------------------

    /// The hoistable statements another one's operands and type name.
    fn hoist_deps(&self, idx: usize) -> Vec<usize> {
        let h = &self.hoists[idx];
        let mut refs = Vec::new();
        match &h.stmt.kind {
            StmtKind::Alias(o) => collect_refs(o, &mut refs),
            StmtKind::Inst { operands, .. } => {
                if let Some(t) = h.stmt.result.as_ref().and_then(|r| r.ty.as_ref()) {
                    collect_refs(t, &mut refs);
                }
                for o in operands {
                    collect_refs(o, &mut refs);
                }
            }
        }
        refs.into_iter()
            .filter_map(|n| match self.lookup(h.scope, n) {
                Some(Binding::Hoist(j)) => Some(j),
                _ => None,
            })
            .collect()
    }

    fn intern_hoists(&mut self) {
        let n = self.hoists.len();
        let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
        let mut cyclic = vec![false; n];
        let mut order = Vec::with_capacity(n);
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            state[start] = 1;
            let mut stack = vec![(start, self.hoist_deps(start), 0usize)];
            while let Some((node, deps, k)) = stack.last_mut() {
                if let Some(&d) = deps.get(*k) {
                    *k += 1;
                    match state[d] {
                        0 => {
                            state[d] = 1;
                            let dd = self.hoist_deps(d);
                            stack.push((d, dd, 0));
                        }
                        1 => cyclic[d] = true,
                        _ => {}
                    }
                } else {
                    state[*node] = 2;
                    order.push(*node);
                    stack.pop();
                }
            }
        }
        for idx in order {
            if cyclic[idx] {
                let s = self.hoists[idx].stmt;
                let name = s
                    .result
                    .as_ref()
                    .map_or_else(String::new, |r| format!("`{}` ", r.name.display()));
                self.error(s.pos, format!("{name}is defined in terms of itself"));
                continue;
            }
            self.hoists[idx].value = self
                .intern_hoist(idx)
                .filter(|&v| self.lives_where_written(idx, v));
        }
    }

    /// Whether hoisted value `v` of statement `idx` lives in the scope the statement is
    /// written in, or in the module scope (which every scope sees). A value whose operands
    /// place it in another definition's scope (`type_param 0 @g` written in the body of
    /// `@h`) could not be printed where it was written, so the text is refused.
    fn lives_where_written(&mut self, idx: usize, v: Inst) -> bool {
        let root = self.m.root();
        let Some(home) = self.m.parent(v).filter(|&p| p != root) else {
            return true;
        };
        let (stmt, scope) = (self.hoists[idx].stmt, self.hoists[idx].scope);
        // The top-level instruction `home` is in (the tree is at most the parser's nesting
        // bound deep, and the walk is bounded anyway).
        let mut top = home;
        for _ in 0..=crate::MAX_DEPTH {
            match self.m.parent(top) {
                Some(p) if p != root => top = p,
                _ => break,
            }
        }
        if self.scope_owner.get(scope).copied().flatten() == Some(top) {
            return true;
        }
        let owner = irkit_core::place::def_label(&self.m, top);
        let name = stmt
            .result
            .as_ref()
            .map_or_else(String::new, |r| format!("`{}` ", r.name.display()));
        self.error(
            stmt.pos,
            format!(
                "{name}belongs to the scope of {owner}, where its operands place it: write it \
                 there, not here"
            ),
        );
        false
    }

    fn intern_hoist(&mut self, idx: usize) -> Option<Inst> {
        let (stmt, scope) = (self.hoists[idx].stmt, self.hoists[idx].scope);
        let StmtKind::Inst {
            op,
            by_name,
            op_pos,
            payload,
            operands,
            ..
        } = &stmt.kind
        else {
            let StmtKind::Alias(o) = &stmt.kind else {
                return None;
            };
            return self.operand(o, scope);
        };
        let ty = match stmt.result.as_ref().and_then(|r| r.ty.as_ref()) {
            Some(t) => Some(self.operand(t, scope)?),
            None => None,
        };
        let mut ops = Vec::with_capacity(operands.len());
        let mut ok = true;
        for o in operands {
            match self.operand(o, scope) {
                Some(i) => ops.push(i),
                None => ok = false,
            }
        }
        let payload = match payload {
            Some((lit, pos)) => {
                let float_kind = *by_name && op.payload_kind() == Some(PayloadKind::Float);
                match lit {
                    PayloadLit::Int(_) | PayloadLit::Float(_) | PayloadLit::Nan(_)
                        if float_kind =>
                    {
                        self.float_payload(lit, *pos, *op, ty)?
                    }
                    _ => self.plain_payload(lit, *pos),
                }
            }
            None => Payload::None,
        };
        if !ok {
            return None;
        }
        match self.m.intern(*op, ty, &ops, payload) {
            Ok(i) => Some(i),
            Err(e) => {
                self.error(*op_pos, format!("cannot build `{op}`: {e}"));
                None
            }
        }
    }

    /// A decimal float payload of `const_float`, read in the format of the result type.
    fn float_payload(
        &mut self,
        lit: &PayloadLit,
        pos: Pos,
        op: Opcode,
        ty: Option<Inst>,
    ) -> Option<Payload> {
        let width = ty.and_then(|t| self.m.float_width(t));
        let Some(width) = width else {
            self.error(
                pos,
                format!("a decimal payload of `{op}` needs an `f32` or `f64` result type"),
            );
            return None;
        };
        let value = match lit {
            PayloadLit::Int(v) => ConstValue::Int(*v),
            PayloadLit::Float(s) => ConstValue::Float(s.clone()),
            PayloadLit::Nan(b) => ConstValue::Nan(*b),
            _ => return None,
        };
        self.float_bits(&value, width, pos).map(Payload::Float)
    }

    // ---- phase 3 ------------------------------------------------------------------------------

    fn resolve_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for &(inst, stmt, scope) in &pending {
            if self.diags.full() {
                return;
            }
            if let Some(t) = stmt.result.as_ref().and_then(|r| r.ty.as_ref())
                && let Some(ty) = self.operand(t, scope)
                && let Err(e) = self.m.set_type(inst, Some(ty))
            {
                self.error(t.pos(), format!("cannot set the type: {e}"));
            }
            let StmtKind::Inst { operands, .. } = &stmt.kind else {
                continue;
            };
            let mut ops = Vec::with_capacity(operands.len());
            for o in operands {
                if let Some(i) = self.operand(o, scope) {
                    ops.push(i);
                }
            }
            if ops.len() == operands.len()
                && !ops.is_empty()
                && let Err(e) = self.m.set_operands(inst, ops)
            {
                self.error(stmt.pos, format!("cannot set the operands: {e}"));
            }
        }
        // Kept for the nesting check, which reports at statements.
        self.pending = pending;
    }

    /// The instruction an operand stands for, interning inline types and constants; `None`
    /// after reporting an error (or when it names a value that already failed).
    fn operand(&mut self, o: &Operand, scope: ScopeId) -> Option<Inst> {
        match o {
            Operand::Ref(name, pos) => match self.lookup(scope, name) {
                Some(Binding::Inst(i)) => Some(i),
                Some(Binding::Hoist(j)) => self.hoists[j].value,
                None => {
                    self.error(*pos, format!("undefined name `{}`", name.display()));
                    None
                }
            },
            Operand::Prim(op, pos) => self.intern(*op, None, &[], Payload::None, *pos),
            Operand::Array(n, elem, pos) => {
                let e = self.operand(elem, scope)?;
                self.intern(Opcode::ARRAY, None, &[e], Payload::Int(*n), *pos)
            }
            Operand::Struct(fields, pos) => {
                let ops = self.operands(fields, scope)?;
                self.intern(Opcode::STRUCT, None, &ops, Payload::None, *pos)
            }
            Operand::Fn(ops, pos) => {
                let ops = self.operands(ops, scope)?;
                self.intern(Opcode::FN, None, &ops, Payload::None, *pos)
            }
            Operand::Const(ty, value, pos) => {
                let t = self.operand(ty, scope)?;
                self.constant(t, value, *pos, scope)
            }
        }
    }

    fn operands(&mut self, list: &[Operand], scope: ScopeId) -> Option<Vec<Inst>> {
        let mut out = Vec::with_capacity(list.len());
        let mut ok = true;
        for o in list {
            match self.operand(o, scope) {
                Some(i) => out.push(i),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn intern(
        &mut self,
        op: Opcode,
        ty: Option<Inst>,
        ops: &[Inst],
        payload: Payload,
        pos: Pos,
    ) -> Option<Inst> {
        match self.m.intern(op, ty, ops, payload) {
            Ok(i) => Some(i),
            Err(e) => {
                self.error(pos, format!("cannot build `{op}`: {e}"));
                None
            }
        }
    }

    fn type_text(&self, t: Inst) -> String {
        crate::printer::operand_text(&self.m, t)
    }

    fn constant(&mut self, t: Inst, value: &ConstValue, pos: Pos, scope: ScopeId) -> Option<Inst> {
        let (op, payload, ops) = match value {
            ConstValue::Int(v) => {
                if let Some(w) = self.m.int_width(t) {
                    match int_in_width(*v, w) {
                        Some(p) => (Opcode::CONST_INT, Payload::Int(p), Vec::new()),
                        None => {
                            let msg = format!("integer `{v}` is out of range for `i{w}`");
                            self.error(pos, msg);
                            return None;
                        }
                    }
                } else if let Some(w) = self.m.float_width(t) {
                    let bits = self.float_bits(value, w, pos)?;
                    (Opcode::CONST_FLOAT, Payload::Float(bits), Vec::new())
                } else {
                    let msg = format!(
                        "an integer constant needs an integer or float type, found `{}`",
                        self.type_text(t)
                    );
                    self.error(pos, msg);
                    return None;
                }
            }
            ConstValue::Bool(b) => {
                if self.m.opcode(t) != Opcode::I1 {
                    let msg = format!(
                        "`{b}` is a constant of type `i1`, not `{}`",
                        self.type_text(t)
                    );
                    self.error(pos, msg);
                    return None;
                }
                (Opcode::CONST_INT, Payload::Int(u64::from(*b)), Vec::new())
            }
            ConstValue::Float(_) | ConstValue::Nan(_) => {
                let Some(w) = self.m.float_width(t) else {
                    let msg = format!(
                        "a float constant needs type `f32` or `f64`, not `{}`",
                        self.type_text(t)
                    );
                    self.error(pos, msg);
                    return None;
                };
                let bits = self.float_bits(value, w, pos)?;
                (Opcode::CONST_FLOAT, Payload::Float(bits), Vec::new())
            }
            ConstValue::Null => (Opcode::CONST_NULL, Payload::None, Vec::new()),
            ConstValue::Zero => (Opcode::CONST_ZERO, Payload::None, Vec::new()),
            ConstValue::Bytes(b) => (
                Opcode::CONST_BYTES,
                Payload::Bytes(b.as_slice().into()),
                Vec::new(),
            ),
            ConstValue::Aggregate(elems) => {
                let ops = self.operands(elems, scope)?;
                (Opcode::CONST_AGGREGATE, Payload::None, ops)
            }
        };
        self.intern(op, Some(t), &ops, payload, pos)
    }

    /// The bits of a float literal in a format of `width` bits.
    fn float_bits(&mut self, value: &ConstValue, width: u32, pos: Pos) -> Option<u64> {
        let f32_ = width == 32;
        match value {
            ConstValue::Int(v) => Some(if f32_ {
                u64::from((*v as f32).to_bits())
            } else {
                (*v as f64).to_bits()
            }),
            ConstValue::Float(s) => {
                let b = if f32_ { parse_f32(s) } else { parse_f64(s) };
                if b.is_none() {
                    self.error(pos, format!("float `{s}` is out of range for `f{width}`"));
                }
                b
            }
            ConstValue::Nan(None) => Some(if f32_ {
                crate::literal::F32_CANONICAL_NAN
            } else {
                crate::literal::F64_CANONICAL_NAN
            }),
            ConstValue::Nan(Some(b)) => {
                let is_nan = if f32_ {
                    u32::try_from(*b).is_ok_and(|x| f32::from_bits(x).is_nan())
                } else {
                    f64::from_bits(*b).is_nan()
                };
                if !is_nan {
                    self.error(pos, format!("`nan:{b:#x}` is not a NaN of `f{width}`"));
                    return None;
                }
                Some(*b)
            }
            _ => None,
        }
    }
}

fn collect_refs<'n>(o: &'n Operand, out: &mut Vec<&'n Name>) {
    match o {
        Operand::Ref(n, _) => out.push(n),
        Operand::Prim(..) => {}
        Operand::Array(_, e, _) => collect_refs(e, out),
        Operand::Struct(v, _) | Operand::Fn(v, _) => v.iter().for_each(|x| collect_refs(x, out)),
        Operand::Const(t, v, _) => {
            collect_refs(t, out);
            if let ConstValue::Aggregate(elems) = v {
                elems.iter().for_each(|x| collect_refs(x, out));
            }
        }
    }
}
