//! The naming table: which instructions get a name in the text, and which name.
//!
//! Computed once per module ([`Names::new`]) and shared by everything that prints: the full
//! printer, [`print_inst`](crate::print_inst) and [`print_annotated`](crate::print_annotated),
//! so that an instruction is called the same everywhere.
//!
//! The table also fixes the *plan* of the printout: which hoistable values are written inline
//! at their uses and which need a statement of their own (named structs; values the inline
//! syntax cannot express, such as a `const_int` wider than its type; nests deeper than
//! [`MAX_INLINE_DEPTH`]).

use std::collections::{HashMap, HashSet};

use irkit_core::{Inst, Module, Opcode, Payload};

use crate::literal::{mask, write_name};

/// Inline types and constants nest at most this deep in the printout; deeper parts are given
/// statements of their own (so the parser's nesting bound is never reached).
pub const MAX_INLINE_DEPTH: u32 = 48;

/// The names a module prints with, and which hoistable values print as statements.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Printed reference (`%x`, `@"a b"`, `^3`) per named instruction.
    names: HashMap<Inst, String>,
    /// Instructions whose first decoration is the `name_hint` their name comes from (the
    /// printer does not repeat it among the decorations).
    hinted: HashSet<Inst>,
    /// Hoistable values printed as statements.
    stmt_hoists: HashSet<Inst>,
    /// Module-scope hoistable statements, in print order (named structs first).
    module_hoists: Vec<Inst>,
    /// Hoistable statements local to a top-level instruction, in print order.
    local_hoists: HashMap<Inst, Vec<Inst>>,
}

impl Names {
    /// Computes the table for `m`.
    pub fn new(m: &Module) -> Names {
        Builder::new(m, None).build()
    }

    /// Like [`Names::new`], but an unnamed value that `numbers` gives digits for (the `%2` or
    /// `^7` its source wrote) is called by them rather than by its position; the others are
    /// numbered around them. For a formatter, which keeps the names the source wrote.
    pub(crate) fn with_numbers(m: &Module, numbers: &HashMap<Inst, String>) -> Names {
        Builder::new(m, Some(numbers)).build()
    }

    /// The printed reference of `inst` (`%x`, `@fib`, `^loop`, `%3`, `%"a b"`), if it has one.
    pub fn get(&self, inst: Inst) -> Option<&str> {
        self.names.get(&inst).map(String::as_str)
    }

    /// Whether `inst`'s first decoration is the `name_hint` its printed name comes from.
    pub(crate) fn is_hinted(&self, inst: Inst) -> bool {
        self.hinted.contains(&inst)
    }

    /// Whether a hoistable value is printed as a statement (and referenced by name).
    pub(crate) fn is_stmt_hoist(&self, inst: Inst) -> bool {
        self.stmt_hoists.contains(&inst)
    }

    pub(crate) fn module_hoists(&self) -> &[Inst] {
        &self.module_hoists
    }

    pub(crate) fn local_hoists(&self, top: Inst) -> &[Inst] {
        self.local_hoists.get(&top).map_or(&[], Vec::as_slice)
    }
}

/// The top-level instruction (child or decoration of the root) containing `inst`, or `inst`
/// itself if it is one; `None` for the root and detached instructions.
pub(crate) fn top_item(m: &Module, inst: Inst) -> Option<Inst> {
    let root = m.root();
    let mut cur = inst;
    for _ in 0..=m.arena_len() {
        let parent = m.get(cur)?.parent()?;
        if parent == root {
            return Some(cur);
        }
        cur = parent;
    }
    None
}

fn is_hoistable(m: &Module, i: Inst) -> bool {
    m.get(i).is_some_and(|d| d.opcode().is_hoistable())
}

/// The name a `name_hint` first decoration gives, if it is a plain one (string payload, no
/// type, operands, children or decorations).
fn plain_hint(m: &Module, inst: Inst, referenced: &HashSet<Inst>) -> Option<String> {
    let d = *m.get(inst)?.decorations().first()?;
    let dd = m.get(d)?;
    let plain = dd.opcode() == Opcode::NAME_HINT
        && dd.ty().is_none()
        && dd.operands().is_empty()
        && dd.children().is_empty()
        && dd.decorations().is_empty()
        && !referenced.contains(&d);
    match dd.payload() {
        Payload::Str(s) if plain => Some(s.to_string()),
        _ => None,
    }
}

struct Builder<'m> {
    m: &'m Module,
    /// The digits the source wrote for unnamed values, when they are kept.
    numbers: Option<&'m HashMap<Inst, String>>,
    tree: Vec<Inst>,
    referenced: HashSet<Inst>,
    inline: HashMap<Inst, bool>,
    names: Names,
}

impl<'m> Builder<'m> {
    fn new(m: &'m Module, numbers: Option<&'m HashMap<Inst, String>>) -> Self {
        Builder {
            m,
            numbers,
            tree: m.walk(),
            referenced: HashSet::new(),
            inline: HashMap::new(),
            names: Names::default(),
        }
    }

    fn build(mut self) -> Names {
        self.plan_hoistables();
        self.place_hoist_statements();
        self.assign();
        self.names
    }

    /// Finds the hoistables the printout uses, decides inline or statement for each (operands
    /// first, with an explicit stack), and records every non-hoistable that is referenced.
    fn plan_hoistables(&mut self) {
        let m = self.m;
        let mut roots = Vec::new();
        for &i in &self.tree {
            let d = m.data(i);
            for r in d.ty().into_iter().chain(d.operands().iter().copied()) {
                if is_hoistable(m, r) {
                    roots.push(r);
                } else {
                    self.referenced.insert(r);
                }
            }
        }
        let mut depth: HashMap<Inst, u32> = HashMap::new();
        let mut expanded: HashSet<Inst> = HashSet::new();
        // Post-order over the hoistable DAG: (value, whether its dependencies were pushed).
        let mut stack: Vec<(Inst, bool)> = roots.into_iter().rev().map(|r| (r, false)).collect();
        while let Some((h, deps_done)) = stack.pop() {
            if self.inline.contains_key(&h) {
                continue;
            }
            let Some(d) = m.get(h) else { continue };
            let deps: Vec<Inst> = d
                .ty()
                .into_iter()
                .chain(d.operands().iter().copied())
                .collect();
            if !deps_done {
                if !expanded.insert(h) {
                    // Reached again before being decided: only a (corrupt) cycle does that.
                    self.inline.insert(h, false);
                    self.names.stmt_hoists.insert(h);
                    continue;
                }
                stack.push((h, true));
                for &r in &deps {
                    if is_hoistable(m, r) {
                        if !self.inline.contains_key(&r) {
                            stack.push((r, false));
                        }
                    } else {
                        self.referenced.insert(r);
                    }
                }
                continue;
            }
            let mut dep_depth = 0;
            for &r in &deps {
                if self.inline.get(&r) == Some(&true) {
                    dep_depth = dep_depth.max(depth.get(&r).copied().unwrap_or(0));
                }
            }
            let ok = self.inline_shape(h) && dep_depth < MAX_INLINE_DEPTH;
            self.inline.insert(h, ok);
            depth.insert(h, if ok { dep_depth + 1 } else { 0 });
            if !ok {
                self.names.stmt_hoists.insert(h);
            }
        }
    }

    /// Whether a value printed inline ends with a constant's value (`i32 5`), so it cannot be
    /// followed by another value.
    fn ends_with_value(&self, i: Inst) -> bool {
        self.inline.get(&i) == Some(&true) && self.m.opcode(i).is_constant()
    }

    /// Whether the inline syntax expresses `h` exactly (given the decisions for its operands).
    fn inline_shape(&self, h: Inst) -> bool {
        let m = self.m;
        let d = m.data(h);
        let (ty, ops, payload) = (d.ty(), d.operands(), d.payload());
        let typed_const = |want_ops: bool| match ty {
            Some(t) => !self.ends_with_value(t) && (want_ops || ops.is_empty()),
            None => false,
        };
        match d.opcode() {
            op if irkit_core::scalar::scalar(op).is_some() => {
                ty.is_none() && ops.is_empty() && payload.is_none()
            }
            Opcode::ARRAY => ty.is_none() && ops.len() == 1 && matches!(payload, Payload::Int(_)),
            // The lane is printed before the count: it must not end with a value.
            Opcode::VEC => {
                ty.is_none()
                    && ops.len() == 1
                    && matches!(payload, Payload::Int(_))
                    && !self.ends_with_value(ops[0])
            }
            Opcode::STRUCT => ty.is_none() && payload.is_none(),
            Opcode::FN => {
                ty.is_none()
                    && payload.is_none()
                    && !ops.is_empty()
                    && !self.ends_with_value(ops[0])
            }
            Opcode::CONST_INT => {
                let fits = match (ty.and_then(|t| m.int_width(t)), payload) {
                    (Some(w), Payload::Int(v)) => *v <= mask(w),
                    _ => false,
                };
                fits && typed_const(false)
            }
            Opcode::CONST_FLOAT => {
                let fits = match (ty.and_then(|t| m.float_width(t)), payload) {
                    (Some(32), Payload::Float(b)) => *b <= u64::from(u32::MAX),
                    (Some(_), Payload::Float(_)) => true,
                    _ => false,
                };
                fits && typed_const(false)
            }
            Opcode::CONST_NULL | Opcode::CONST_ZERO => payload.is_none() && typed_const(false),
            Opcode::CONST_AGGREGATE => payload.is_none() && typed_const(true),
            Opcode::CONST_BYTES => matches!(payload, Payload::Bytes(_)) && typed_const(false),
            _ => false,
        }
    }

    /// Sorts the statement hoistables into the module scope or a top-level instruction's.
    fn place_hoist_statements(&mut self) {
        let m = self.m;
        let root = m.root();
        let in_pool: HashSet<Inst> = m.pool().iter().copied().collect();
        let mut order: Vec<Inst> = m
            .pool()
            .iter()
            .copied()
            .filter(|h| self.names.stmt_hoists.contains(h))
            .collect();
        let mut extra: Vec<Inst> = self
            .names
            .stmt_hoists
            .iter()
            .copied()
            .filter(|h| !in_pool.contains(h))
            .collect();
        extra.sort();
        order.extend(extra);
        let (named, other): (Vec<Inst>, Vec<Inst>) = order
            .into_iter()
            .partition(|&h| m.opcode(h) == Opcode::NAMED_STRUCT);
        let mut module_list = Vec::new();
        let mut local_lists: Vec<(Inst, Vec<Inst>)> = Vec::new();
        for h in named.into_iter().chain(other) {
            let scope = m.parent(h).filter(|&p| p != root);
            match scope.and_then(|p| top_item(m, p)) {
                Some(top) => match local_lists.iter_mut().find(|(t, _)| *t == top) {
                    Some((_, list)) => list.push(h),
                    None => local_lists.push((top, vec![h])),
                },
                None => module_list.push(h),
            }
        }
        self.names.module_hoists = self.dependencies_first(&module_list);
        for (top, list) in local_lists {
            let sorted = self.dependencies_first(&list);
            self.names.local_hoists.insert(top, sorted);
        }
    }

    /// The statement values another one's printout names, in print order (type, then
    /// operands, looking through inline values).
    fn stmt_deps(&self, h: Inst) -> Vec<Inst> {
        let m = self.m;
        let mut out = Vec::new();
        let d = m.data(h);
        let mut stack: Vec<Inst> = d
            .ty()
            .into_iter()
            .chain(d.operands().iter().copied())
            .collect();
        stack.reverse();
        while let Some(x) = stack.pop() {
            if !is_hoistable(m, x) {
                continue;
            }
            if self.names.stmt_hoists.contains(&x) {
                out.push(x);
                continue;
            }
            let xd = m.data(x);
            let start = stack.len();
            stack.extend(xd.ty().into_iter().chain(xd.operands().iter().copied()));
            stack[start..].reverse();
        }
        out
    }

    /// `list` reordered so that every statement comes after the statements it names: the
    /// depth-first post-order the parser interns them in, so reprinting keeps the order.
    fn dependencies_first(&self, list: &[Inst]) -> Vec<Inst> {
        let members: HashSet<Inst> = list.iter().copied().collect();
        let mut done: HashSet<Inst> = HashSet::new();
        let mut out = Vec::with_capacity(list.len());
        for &start in list {
            if !done.insert(start) {
                continue;
            }
            let mut stack = vec![(start, self.stmt_deps(start), 0usize)];
            while let Some((node, deps, k)) = stack.last_mut() {
                if let Some(&d) = deps.get(*k) {
                    *k += 1;
                    if members.contains(&d) && done.insert(d) {
                        let dd = self.stmt_deps(d);
                        stack.push((d, dd, 0));
                    }
                } else {
                    out.push(*node);
                    stack.pop();
                }
            }
        }
        out
    }

    fn needs_name(&self, i: Inst, hint: bool) -> bool {
        let m = self.m;
        let d = m.data(i);
        hint || d.ty().is_some()
            || self.referenced.contains(&i)
            || d.opcode() == Opcode::BLOCK
            || (d.parent() == Some(m.root()) && d.opcode().is_definition())
    }

    /// Gives names, scope by scope, in print order.
    fn assign(&mut self) {
        let m = self.m;
        let root = m.root();
        let mut module_scope = Vec::new();
        for &d in m.decorations(root) {
            self.candidate(&mut module_scope, d, '@');
        }
        for &h in &self.names.module_hoists.clone() {
            self.candidate(&mut module_scope, h, '@');
        }
        for &c in m.children(root) {
            self.candidate(&mut module_scope, c, '@');
        }
        self.name_scope(module_scope);
        let tops: Vec<Inst> = m
            .decorations(root)
            .iter()
            .chain(m.children(root))
            .copied()
            .collect();
        for top in tops {
            let mut scope = Vec::new();
            for &d in m.decorations(top) {
                for i in m.walk_from(d) {
                    self.candidate(&mut scope, i, '%');
                }
            }
            for &h in self.names.local_hoists(top).to_vec().iter() {
                self.candidate(&mut scope, h, '%');
            }
            for &c in m.children(top) {
                for i in m.walk_from(c) {
                    self.candidate(&mut scope, i, '%');
                }
            }
            self.name_scope(scope);
        }
    }

    fn candidate(&mut self, scope: &mut Vec<(Inst, char, Option<String>)>, i: Inst, sigil: char) {
        let m = self.m;
        if is_hoistable(m, i) {
            if self.names.stmt_hoists.contains(&i) {
                let desired = match (m.opcode(i), m.payload(i)) {
                    (Opcode::NAMED_STRUCT, Payload::Str(s)) => Some(s.to_string()),
                    // Generic parameters: `%T0`, `%w1` (by position).
                    (Opcode::TYPE_PARAM, Payload::Int(k)) => Some(format!("T{k}")),
                    (Opcode::WITNESS_PARAM, Payload::Int(k)) => Some(format!("w{k}")),
                    _ => None,
                };
                scope.push((i, sigil, desired));
            }
            return;
        }
        let hint = plain_hint(m, i, &self.referenced);
        if !self.needs_name(i, hint.is_some()) {
            return;
        }
        if hint.is_some() {
            self.names.hinted.insert(i);
        }
        let sigil = if sigil == '%' && m.opcode(i) == Opcode::BLOCK {
            '^'
        } else {
            sigil
        };
        scope.push((i, sigil, hint));
    }

    fn name_scope(&mut self, scope: Vec<(Inst, char, Option<String>)>) {
        let wanted: HashSet<(char, &str)> = scope
            .iter()
            .filter_map(|(_, s, n)| n.as_deref().map(|n| (*s, n)))
            .collect();
        let mut used: HashSet<(char, String)> = HashSet::new();
        let mut counters: HashMap<char, u64> = HashMap::new();
        // The numbers the source wrote, kept (a formatter's names); the other unnamed values
        // are numbered around them.
        let source_number = |i: &Inst| {
            self.numbers
                .and_then(|n| n.get(i))
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        };
        let kept: HashSet<(char, &str)> = scope
            .iter()
            .filter(|(_, _, n)| n.is_none())
            .filter_map(|(i, s, _)| source_number(i).map(|d| (*s, d.as_str())))
            .collect();
        let mut out = Vec::with_capacity(scope.len());
        for (i, sigil, desired) in &scope {
            let text = match desired {
                Some(n) => {
                    let mut pick = n.clone();
                    let mut k = 1u64;
                    while used.contains(&(*sigil, pick.clone()))
                        || (pick != *n && wanted.contains(&(*sigil, pick.as_str())))
                    {
                        pick = format!("{n}.{k}");
                        k += 1;
                    }
                    used.insert((*sigil, pick.clone()));
                    let mut s = String::new();
                    write_name(&mut s, *sigil, &pick);
                    s
                }
                None => match source_number(i) {
                    Some(d) => format!("{sigil}{d}"),
                    None => {
                        let c = counters.entry(*sigil).or_insert(0);
                        while kept.contains(&(*sigil, c.to_string().as_str())) {
                            *c += 1;
                        }
                        let s = format!("{sigil}{c}");
                        *c += 1;
                        s
                    }
                },
            };
            out.push((*i, text));
        }
        self.names.names.extend(out);
    }
}
