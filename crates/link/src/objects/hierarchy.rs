//! The class hierarchy of a linked module (spec/linking.md, "Objects", steps 1–4): every
//! class, object and trait with its supertypes and members, checked for cycles; the linear
//! traits, visible fields and methods, implementations and vtable slots of each class; type ids
//! by a pre-order walk of the class forest; and object layouts.

use std::collections::{HashMap, HashSet};

use irkit_core::layout::Layouts;
use irkit_core::{Inst, Module, Opcode};

use crate::error::LinkError;

/// A member's name (a field's, or a method's selector): shared, since every class copies
/// the names its parent sees.
pub(super) type Name = std::rc::Rc<str>;

/// What a definition of the hierarchy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Class,
    Trait,
    Object,
}

/// A method as a class or trait declares it.
#[derive(Clone, Debug)]
pub(super) struct MethodDecl {
    pub selector: Name,
    pub sig: Inst,
    pub body: Option<Inst>,
}

/// One class, object or trait, with what was computed for it.
#[derive(Debug)]
pub(super) struct Def {
    pub inst: Inst,
    pub kind: Kind,
    pub name: String,
    pub parent: Option<usize>,
    pub traits: Vec<usize>,
    fields: Vec<(Name, Inst)>,
    pub methods: Vec<MethodDecl>,
    pub ctor: Option<Inst>,
    /// Linear traits (classes) or linear supertraits (traits), spec order.
    pub linear: Vec<usize>,
    /// Visible fields: name -> (offset, type).
    pub field_at: HashMap<Name, (u64, Inst)>,
    /// Object size (classes and objects), header included, a multiple of 8.
    pub size: u64,
    /// Visible selectors -> signature.
    pub sees: HashMap<Name, Inst>,
    /// Selector -> implementation, for every selector seen (None: abstract).
    pub impls: HashMap<Name, Option<Inst>>,
    /// Vtable: slot -> selector.
    pub slots: Vec<Name>,
    pub slot_of: HashMap<Name, usize>,
    /// Type id and the last id of the subtree (classes and objects).
    pub id: u64,
    pub last: u64,
}

impl Def {
    pub fn is_class_like(&self) -> bool {
        self.kind != Kind::Trait
    }

    /// A selector of the vtable without an implementation (the class is abstract), if any.
    pub fn unimplemented(&self) -> Option<&str> {
        let s = self
            .slots
            .iter()
            .find(|s| self.impls.get(*s) == Some(&None))?;
        Some(s)
    }
}

/// The hierarchy: definitions in output order, type-id order of the classes.
pub(super) struct Hierarchy {
    pub defs: Vec<Def>,
    pub index: HashMap<Inst, usize>,
    /// Classes and objects by type id.
    pub by_id: Vec<usize>,
    /// Per definition: whether it is live (a class allocated, an object instantiated:
    /// [`super::rta`]); every class-like definition until the analysis says otherwise.
    pub live: Vec<bool>,
    /// Implementations no reached call can select ([`super::rta`]): in no table.
    pub dropped: HashSet<Inst>,
}

/// At most this many fields and methods seen, summed over every class, object and trait (a
/// program of 10,000 classes seeing 100 members each is 1,000,000).
pub(super) const MAX_MEMBERS_SEEN: usize = 1 << 21;

fn err(msg: String) -> LinkError {
    LinkError::Objects(msg)
}

/// Whether `f` is a top-level `func` whose type `ty_ok` accepts: what the verifier's rules O4
/// and O5 ask of an implementation and a constructor, checked again because the link lowers
/// its inputs' classes before anything verifies them.
fn is_func_of(m: &Module, f: Inst, ty_ok: impl Fn(Inst) -> bool) -> bool {
    m.parent(f) == Some(m.root()) && m.opcode(f) == Opcode::FUNC && m.ty(f).is_some_and(ty_ok)
}

impl Hierarchy {
    /// Collects and checks the hierarchy of `m`; `Ok(None)` when it has no class, trait or
    /// object.
    pub fn build(m: &Module, layouts: &Layouts) -> Result<Option<Hierarchy>, Vec<LinkError>> {
        let mut defs = Vec::new();
        let mut index = HashMap::new();
        for &d in m.top_level() {
            let kind = match m.opcode(d) {
                Opcode::CLASS => Kind::Class,
                Opcode::TRAIT => Kind::Trait,
                Opcode::OBJECT => Kind::Object,
                _ => continue,
            };
            index.insert(d, defs.len());
            defs.push(Def {
                inst: d,
                kind,
                name: m
                    .name(d)
                    .map_or_else(|| format!("#{}", d.index()), str::to_owned),
                parent: None,
                traits: Vec::new(),
                fields: Vec::new(),
                methods: Vec::new(),
                ctor: None,
                linear: Vec::new(),
                field_at: HashMap::new(),
                size: 8,
                sees: HashMap::new(),
                impls: HashMap::new(),
                slots: Vec::new(),
                slot_of: HashMap::new(),
                id: 0,
                last: 0,
            });
        }
        if defs.is_empty() {
            return Ok(None);
        }
        let live = defs.iter().map(Def::is_class_like).collect();
        let mut h = Hierarchy {
            defs,
            index,
            by_id: Vec::new(),
            live,
            dropped: HashSet::new(),
        };
        h.read_members(m)?;
        let order = h.topological()?;
        let mut errors = Vec::new();
        // Methods seen, summed over the definitions: what the tables and vtables hold is of
        // that order, so a hostile hierarchy (a chain of N classes adding one method each
        // sees N²/2) is refused before it is built.
        let mut seen = 0usize;
        for &k in &order {
            h.linearize(k);
            if let Err(e) = h.layout(k, m, layouts) {
                errors.push(e);
            }
            errors.extend(h.methods_of(k, m));
            seen = seen.saturating_add(h.defs[k].sees.len() + h.defs[k].field_at.len());
            if seen > MAX_MEMBERS_SEEN {
                return Err(vec![err(format!(
                    "the class hierarchy is too large: its classes see more than {MAX_MEMBERS_SEEN} fields and methods in all (at @{})",
                    h.defs[k].name
                ))]);
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        h.number(&order);
        Ok(Some(h))
    }

    /// Supertypes and members of every definition.
    fn read_members(&mut self, m: &Module) -> Result<(), Vec<LinkError>> {
        let mut errors = Vec::new();
        for k in 0..self.defs.len() {
            let d = self.defs[k].inst;
            for (j, &s) in m.operands(d).iter().enumerate() {
                let Some(&sk) = self.index.get(&s) else {
                    errors.push(err(format!(
                        "@{}: supertype {j} is not a class or trait of the program",
                        self.defs[k].name
                    )));
                    continue;
                };
                match self.defs[sk].kind {
                    Kind::Class if j == 0 && self.defs[k].kind != Kind::Trait => {
                        self.defs[k].parent = Some(sk);
                    }
                    Kind::Trait => self.defs[k].traits.push(sk),
                    _ => errors.push(err(format!(
                        "@{}: cannot extend @{} (a {})",
                        self.defs[k].name,
                        self.defs[sk].name,
                        m.opcode(s)
                    ))),
                }
            }
            for &c in m.children(d) {
                let name = m.payload(c).as_str().unwrap_or("").to_owned();
                let ops = m.operands(c);
                match m.opcode(c) {
                    Opcode::FIELD_DEF if !ops.is_empty() => {
                        self.defs[k].fields.push((name.into(), ops[0]))
                    }
                    Opcode::METHOD_DEF if !ops.is_empty() => {
                        let body = ops.get(1).copied();
                        if let Some(f) = body
                            && !is_func_of(m, f, |t| t == ops[0])
                        {
                            errors.push(err(format!(
                                "@{}: the implementation of method \"{name}\" is not a `func` of its signature {} ({})",
                                self.defs[k].name,
                                irkit_core::message::value_text(m, ops[0]),
                                irkit_core::place::def_label(m, f)
                            )));
                        }
                        self.defs[k].methods.push(MethodDecl {
                            selector: name.into(),
                            sig: ops[0],
                            body,
                        })
                    }
                    Opcode::CTOR_DEF if !ops.is_empty() => {
                        let ctor = |t| {
                            m.fn_signature(t).is_some_and(|(ret, params)| {
                                m.opcode(ret) == Opcode::VOID
                                    && params.len() == 1
                                    && m.opcode(params[0]) == Opcode::PTR
                            })
                        };
                        if !is_func_of(m, ops[0], ctor) {
                            errors.push(err(format!(
                                "@{}: the constructor is not a `func` of type fn(ptr) -> void ({})",
                                self.defs[k].name,
                                irkit_core::place::def_label(m, ops[0])
                            )));
                        }
                        self.defs[k].ctor = Some(ops[0])
                    }
                    _ => {}
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The definitions with every supertype before its subtypes (Kahn's algorithm, in output
    /// order); a cycle is an error naming its members.
    fn topological(&self) -> Result<Vec<usize>, Vec<LinkError>> {
        let n = self.defs.len();
        let mut pending: Vec<usize> = self
            .defs
            .iter()
            .map(|d| d.traits.len() + usize::from(d.parent.is_some()))
            .collect();
        let mut subs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (k, d) in self.defs.iter().enumerate() {
            for s in d.parent.iter().chain(&d.traits) {
                subs[*s].push(k);
            }
        }
        let mut ready: std::collections::VecDeque<usize> =
            (0..n).filter(|&k| pending[k] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(k) = ready.pop_front() {
            order.push(k);
            for &s in &subs[k] {
                pending[s] -= 1;
                if pending[s] == 0 {
                    ready.push_back(s);
                }
            }
        }
        if order.len() == n {
            return Ok(order);
        }
        let names: Vec<String> = (0..n)
            .filter(|&k| pending[k] > 0)
            .map(|k| format!("@{}", self.defs[k].name))
            .collect();
        Err(vec![err(format!(
            "the class hierarchy has a cycle: {} extend each other",
            names.join(", ")
        ))])
    }

    /// Linear traits of definition `k` (its supertypes are done).
    fn linearize(&mut self, k: usize) {
        let mut linear = Vec::new();
        let d = &self.defs[k];
        for &t in &d.traits {
            linear.push(t);
            linear.extend(self.defs[t].linear.iter().copied());
        }
        if let Some(p) = d.parent {
            linear.extend(self.defs[p].linear.iter().copied());
        }
        let mut seen = std::collections::HashSet::new();
        linear.retain(|t| seen.insert(*t));
        self.defs[k].linear = linear;
    }

    /// Field offsets and size of class or object `k` (its parent is done).
    fn layout(&mut self, k: usize, m: &Module, layouts: &Layouts) -> Result<(), LinkError> {
        if self.defs[k].kind == Kind::Trait {
            return Ok(());
        }
        let (mut at, mut fields) = match self.defs[k].parent {
            Some(p) => (self.defs[p].size, self.defs[p].field_at.clone()),
            None => (8, HashMap::new()),
        };
        for (name, ty) in &self.defs[k].fields {
            let Some(l) = layouts.get(*ty) else {
                return Err(err(format!(
                    "@{}: field \"{name}\" has a type without a layout ({})",
                    self.defs[k].name,
                    irkit_core::message::value_text(m, *ty)
                )));
            };
            let align = l.align.max(1);
            at = at.div_ceil(align).saturating_mul(align);
            fields.insert(name.clone(), (at, *ty));
            at = at.saturating_add(l.size);
        }
        let d = &mut self.defs[k];
        d.size = at.div_ceil(8).saturating_mul(8);
        d.field_at = fields;
        Ok(())
    }

    /// Visible methods, implementations and slots of `k` (its supertypes are done).
    fn methods_of(&mut self, k: usize, m: &Module) -> Vec<LinkError> {
        let mut errors = Vec::new();
        let (mut sees, mut impls, mut slots) = match self.defs[k].parent {
            Some(p) => {
                let p = &self.defs[p];
                (p.sees.clone(), p.impls.clone(), p.slots.clone())
            }
            None => (HashMap::new(), HashMap::new(), Vec::new()),
        };
        let name = self.defs[k].name.clone();
        // Who declared each selector first, for the message of a disagreement.
        let mut first: HashMap<Name, String> = HashMap::new();
        let mut declare =
            |decl: &MethodDecl, owner: &str, sees: &mut HashMap<Name, Inst>| match sees
                .get(&decl.selector)
            {
                Some(&sig) if sig != decl.sig => {
                    let other = first
                        .get(&decl.selector)
                        .map_or("a parent class", String::as_str);
                    errors.push(err(format!(
                        "@{name}: method \"{}\" has type {} in @{owner} but {} in {other}",
                        decl.selector,
                        irkit_core::message::value_text(m, decl.sig),
                        irkit_core::message::value_text(m, sig)
                    )));
                }
                Some(_) => {}
                None => {
                    sees.insert(decl.selector.clone(), decl.sig);
                    first.insert(decl.selector.clone(), format!("@{owner}"));
                }
            };
        let own = self.defs[k].methods.clone();
        for decl in &own {
            declare(decl, &name, &mut sees);
            if decl.body.is_some() {
                impls.insert(decl.selector.clone(), decl.body);
            }
        }
        let linear = self.defs[k].linear.clone();
        for &t in &linear {
            let tname = self.defs[t].name.clone();
            for decl in &self.defs[t].methods {
                declare(decl, &tname, &mut sees);
            }
        }
        // Class wins: own, then inherited; then the first trait default.
        for &t in &linear {
            for decl in &self.defs[t].methods {
                if let Some(body) = decl.body {
                    let slot = impls.entry(decl.selector.clone()).or_insert(None);
                    if slot.is_none() {
                        *slot = Some(body);
                    }
                }
            }
        }
        for s in sees.keys() {
            impls.entry(s.clone()).or_insert(None);
        }
        if self.defs[k].kind != Kind::Trait {
            let mut fresh: Vec<&Name> = own.iter().map(|d| &d.selector).collect();
            for &t in &linear {
                fresh.extend(self.defs[t].methods.iter().map(|d| &d.selector));
            }
            for s in fresh {
                if !slots.contains(s) {
                    slots.push(s.clone());
                }
            }
        }
        let d = &mut self.defs[k];
        d.slot_of = slots
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i))
            .collect();
        d.slots = slots;
        d.sees = sees;
        d.impls = impls;
        errors
    }

    /// Type ids: a pre-order walk of the class forest, in output order.
    fn number(&mut self, order: &[usize]) {
        let n = self.defs.len();
        let mut subs: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for &k in order {
            if !self.defs[k].is_class_like() {
                continue;
            }
            match self.defs[k].parent {
                Some(p) => subs[p].push(k),
                None => roots.push(k),
            }
        }
        // Output order among siblings (Kahn's order may differ).
        roots.sort_unstable();
        for s in &mut subs {
            s.sort_unstable();
        }
        let mut next = 0u64;
        // (def, children visited?)
        let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((k, done)) = stack.pop() {
            if done {
                self.defs[k].last = next - 1;
                continue;
            }
            self.defs[k].id = next;
            self.by_id.push(k);
            next += 1;
            stack.push((k, true));
            stack.extend(subs[k].iter().rev().map(|&c| (c, false)));
        }
    }

    /// Whether class-like `k` is below `t`: a subclass of class `t` (or `t` itself), or a
    /// class extending trait `t`.
    pub fn below(&self, k: usize, t: usize) -> bool {
        let (kd, td) = (&self.defs[k], &self.defs[t]);
        match td.kind {
            Kind::Trait => self.extends_trait(k, t),
            Kind::Class | Kind::Object => td.id <= kd.id && kd.id <= td.last,
        }
    }

    /// Whether class-like `c` extends trait `t` (directly or through parents and supertraits).
    pub fn extends_trait(&self, c: usize, t: usize) -> bool {
        self.defs[c].linear.contains(&t)
    }

    /// The implementation of selector `s` in class-like `k` that the tables hold: none when
    /// it is abstract or was dropped.
    pub fn implementation(&self, k: usize, s: &str) -> Option<Inst> {
        let f = self.defs[k].impls.get(s).copied().flatten()?;
        (!self.dropped.contains(&f)).then_some(f)
    }

    /// The definition of `inst`, if it is one of the hierarchy.
    pub fn get(&self, inst: Inst) -> Option<usize> {
        self.index.get(&inst).copied()
    }
}
