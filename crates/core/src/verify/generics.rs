//! Generics: parameters, `specialize`, interfaces, witness tables and `lookup_witness`.
//!
//! Everything here works from a generic's *signature* alone (its parameters, their interface
//! constraints and the type of what it defines), never from a generic's body, so a module that
//! imports a generic (a `generic` with a bodyless `func` or witness-table declaration) is
//! checked completely before any link: argument count and kinds, witness tables of the right
//! interface for the right type, and the type of every use of the specialized value.
//!
//! Types are compared *under a substitution* (parameter -> argument) without building the
//! substituted type (the verifier never changes the module): the generic-side type is walked
//! together with the actual one; a parameter must meet its argument, everything else must have
//! the same opcode, payload and operand count. An interface used as a type (in a requirement's
//! type) stands for the conforming type, `Self`.

use std::collections::{HashMap, HashSet};

use crate::{Inst, Opcode};

use super::{Cx, Kind, VTy, plural};

/// What a generic defines.
#[derive(Clone, Copy, Debug)]
pub(super) enum Defines {
    /// A function (the child `func`), with its signature.
    Func(Option<Inst>),
    /// A witness table (the child `witness_table`): its interface and conforming type.
    Table(Option<Inst>, Option<Inst>),
    /// A type (the generic's own type).
    Type(Inst),
}

/// A witness as a `lookup_witness` or a witness argument sees it.
#[derive(Clone, Debug)]
struct Witness {
    /// The interface it conforms to.
    interface: Inst,
    /// The conforming type, as written (a pattern under `sub`).
    conforming: Inst,
    /// The substitution `conforming` is read under (empty for a table or a parameter).
    sub: HashMap<Inst, Inst>,
}

/// The largest number of type pairs one comparison visits (bounds the work on hostile input).
const MATCH_BUDGET: usize = 1 << 16;

impl Cx<'_> {
    /// Whether `i` is a live instruction of opcode `op`.
    fn is_op(&self, i: Inst, op: Opcode) -> bool {
        self.opc(i) == Some(op)
    }

    /// What generic `g` defines, if it is a well-shaped `generic`.
    pub(super) fn generic_defines(&self, g: Inst) -> Option<Defines> {
        let d = self.live(g)?;
        if d.opcode != Opcode::GENERIC {
            return None;
        }
        match d.children() {
            [] => d.ty.map(Defines::Type),
            [c] => {
                let cd = self.live(*c)?;
                match cd.opcode {
                    Opcode::FUNC => Some(Defines::Func(cd.ty)),
                    Opcode::WITNESS_TABLE => {
                        Some(Defines::Table(cd.ty, cd.operands.first().copied()))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether `t` is an `interface` definition.
    pub(super) fn is_interface(&self, t: Inst) -> bool {
        self.is_op(t, Opcode::INTERFACE)
    }

    /// Does `pat` (read under `sub`, with the interface `slf.0` standing for the pattern
    /// `slf.1`, itself read under `sub`) equal `act`? `sub` maps parameters to actual values.
    fn ty_matches(
        &self,
        pat: Inst,
        act: Inst,
        sub: &HashMap<Inst, Inst>,
        slf: Option<(Inst, Inst)>,
    ) -> bool {
        let mut stack = vec![(pat, act)];
        let mut seen: HashSet<(Inst, Inst)> = HashSet::new();
        while let Some((p, a)) = stack.pop() {
            if !seen.insert((p, a)) {
                continue;
            }
            if seen.len() > MATCH_BUDGET {
                return false;
            }
            if let Some(&v) = sub.get(&p) {
                if v != a {
                    return false;
                }
                continue;
            }
            if let Some((iface, c)) = slf
                && p == iface
            {
                stack.push((c, a));
                continue;
            }
            if p == a && sub.is_empty() && slf.is_none() {
                continue;
            }
            let (Some(pd), Some(ad)) = (self.live(p), self.live(a)) else {
                return false;
            };
            if !pd.opcode.is_hoistable() {
                if p != a {
                    return false;
                }
                continue;
            }
            if pd.opcode != ad.opcode
                || pd.payload != ad.payload
                || pd.operands.len() != ad.operands.len()
                || pd.ty.is_some() != ad.ty.is_some()
            {
                return false;
            }
            if let (Some(pt), Some(at)) = (pd.ty, ad.ty) {
                stack.push((pt, at));
            }
            stack.extend(pd.operands.iter().copied().zip(ad.operands.iter().copied()));
        }
        true
    }

    /// The witness `w` stands for: a `witness_param`, a `witness_table`, or a `specialize` of
    /// a generic witness table.
    fn witness_of(&self, w: Inst) -> Option<Witness> {
        let d = self.live(w)?;
        match d.opcode {
            Opcode::WITNESS_PARAM => Some(Witness {
                interface: d.ty?,
                conforming: *d.operands.get(1)?,
                sub: HashMap::new(),
            }),
            Opcode::WITNESS_TABLE => Some(Witness {
                interface: d.ty?,
                conforming: *d.operands.first()?,
                sub: HashMap::new(),
            }),
            Opcode::SPECIALIZE => {
                let g = *d.operands.first()?;
                let Defines::Table(Some(iface), Some(conf)) = self.generic_defines(g)? else {
                    return None;
                };
                let params = &self.live(g)?.operands;
                let args = &d.operands[1..];
                if params.len() != args.len() {
                    return None;
                }
                Some(Witness {
                    interface: iface,
                    conforming: conf,
                    sub: params.iter().copied().zip(args.iter().copied()).collect(),
                })
            }
            _ => None,
        }
    }

    /// For a specialized generic type: the generic's type (its shape, in terms of the
    /// parameters) and the substitution of the arguments.
    pub(super) fn unfold_specialized(&self, v: VTy) -> Option<(VTy, HashMap<Inst, Inst>)> {
        let d = self.live(v.0?)?;
        if d.opcode != Opcode::SPECIALIZE {
            return None;
        }
        let g = *d.operands.first()?;
        let Defines::Type(shape) = self.generic_defines(g)? else {
            return None;
        };
        let params = &self.live(g)?.operands;
        let args = &d.operands[1..];
        if params.len() != args.len() {
            return None;
        }
        let sub = params.iter().copied().zip(args.iter().copied()).collect();
        Some((VTy(Some(shape)), sub))
    }

    /// The existing value `t` becomes with `sub` applied, if the module has it (the verifier
    /// builds nothing: a type the module lacks is a type no value of it has).
    pub(super) fn subst_lookup(&self, t: Inst, sub: &HashMap<Inst, Inst>) -> Option<Inst> {
        let mut memo: HashMap<Inst, Option<Inst>> = HashMap::new();
        self.subst_lookup_at(t, sub, 0, &mut memo)
    }

    fn subst_lookup_at(
        &self,
        t: Inst,
        sub: &HashMap<Inst, Inst>,
        depth: u32,
        memo: &mut HashMap<Inst, Option<Inst>>,
    ) -> Option<Inst> {
        if let Some(&a) = sub.get(&t) {
            return Some(a);
        }
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let d = self.live(t)?;
        if !d.opcode.is_hoistable() || depth > 64 || memo.len() > MATCH_BUDGET {
            return Some(t);
        }
        let mut r = None;
        'build: {
            let ty = match d.ty {
                Some(x) => match self.subst_lookup_at(x, sub, depth + 1, memo) {
                    Some(y) => Some(y),
                    None => break 'build,
                },
                None => None,
            };
            let mut ops = Vec::with_capacity(d.operands.len());
            for &o in &d.operands {
                match self.subst_lookup_at(o, sub, depth + 1, memo) {
                    Some(y) => ops.push(y),
                    None => break 'build,
                }
            }
            r = if ty == d.ty && ops == *d.operands {
                Some(t)
            } else {
                self.m.lookup(d.opcode, ty, &ops, &d.payload)
            };
        }
        memo.insert(t, r);
        r
    }

    /// A short spelling of a value for messages.
    pub(super) fn gname(&self, i: Inst) -> String {
        match self.opc(i) {
            Some(op) if op.is_type() || op == Opcode::SPECIALIZE => self.ty_str(i),
            _ => format!("{} ({})", self.vname(i), self.opname(i)),
        }
    }

    /// Checks the generic parameters and `specialize` values of the pool.
    pub(super) fn check_generic_pool(&mut self) {
        let pool: Vec<Inst> = self.m.pool.to_vec();
        for h in pool {
            if !self.ok(h) || !self.reg_ok[h.idx()] || self.errors.len() >= super::MAX_ERRORS {
                continue;
            }
            match self.opc(h) {
                Some(Opcode::TYPE_PARAM | Opcode::WITNESS_PARAM) => self.check_param(h),
                Some(Opcode::SPECIALIZE) => self.check_specialize(h),
                _ => {}
            }
        }
    }

    /// A parameter is operand `payload` of the generic it names; a witness parameter has an
    /// interface type and witnesses a type parameter of the same generic.
    fn check_param(&mut self, p: Inst) {
        let Some(d) = self.live(p) else { return };
        let op = d.opcode;
        let g = d.operands[0];
        if !self.is_op(g, Opcode::GENERIC) {
            let msg = format!(
                "`{op}` operand 0 must be the `generic` it belongs to, found {}",
                self.gname(g)
            );
            self.err(p, msg);
            return;
        }
        let index = d.payload.as_int().unwrap_or(u64::MAX);
        let listed = usize::try_from(index)
            .ok()
            .and_then(|k| self.live(g).and_then(|gd| gd.operands.get(k)).copied());
        if listed != Some(p) {
            let msg = format!(
                "`{op}` {index} is not parameter {index} of {}",
                self.vname(g)
            );
            self.err(p, msg);
        }
        if op == Opcode::WITNESS_PARAM {
            if let Some(t) = d.ty
                && !self.is_interface(t)
            {
                let msg = format!(
                    "the type of a `witness_param` must be an `interface`, found {}",
                    self.gname(t)
                );
                self.err(p, msg);
            }
            let t = d.operands[1];
            let good = self.live(t).is_some_and(|td| {
                td.opcode == Opcode::TYPE_PARAM && td.operands.first() == Some(&g)
            });
            if !good {
                let msg = format!(
                    "`witness_param` operand 1 must be a `type_param` of {}, found {}",
                    self.vname(g),
                    self.gname(t)
                );
                self.err(p, msg);
            }
        }
    }

    /// `specialize @g, args…`: as many arguments as `@g` has parameters, a type for each type
    /// parameter, a witness of the right interface for the right type for each witness
    /// parameter, and the result type `@g`'s with the arguments substituted.
    fn check_specialize(&mut self, s: Inst) {
        let Some(d) = self.live(s) else { return };
        let g = d.operands[0];
        let args = &d.operands[1..];
        let Some(defines) = self.generic_defines(g) else {
            let msg = if self.is_op(g, Opcode::GENERIC) {
                format!(
                    "{} is not a well-formed generic (it needs one `func` or `witness_table` child, or a type and no child)",
                    self.vname(g)
                )
            } else {
                format!(
                    "`specialize` operand 0 must be a `generic`, found {}",
                    self.gname(g)
                )
            };
            self.err(s, msg);
            return;
        };
        let params: Vec<Inst> = self
            .live(g)
            .map_or_else(Vec::new, |gd| gd.operands.to_vec());
        if params.len() != args.len() {
            let msg = format!(
                "`specialize` of {} passes {}, the generic takes {}",
                self.vname(g),
                plural(args.len(), "argument"),
                plural(params.len(), "parameter")
            );
            self.err(s, msg);
            return;
        }
        let sub: HashMap<Inst, Inst> = params.iter().copied().zip(args.iter().copied()).collect();
        let mut good = true;
        for (k, (&p, &a)) in params.iter().zip(args).enumerate() {
            match self.opc(p) {
                Some(Opcode::TYPE_PARAM) => {
                    if self.kind(a) != Kind::Value || self.is_interface(a) {
                        let msg = format!(
                            "argument {k} of {} is a type parameter, found {}, which is not a value type",
                            self.vname(g),
                            self.gname(a)
                        );
                        self.err(s, msg);
                        good = false;
                    }
                }
                Some(Opcode::WITNESS_PARAM) => {
                    let (Some(iface), Some(&tp)) = (
                        self.live(p).and_then(|pd| pd.ty),
                        self.live(p).and_then(|pd| pd.operands.get(1)),
                    ) else {
                        continue;
                    };
                    let want_ty = sub.get(&tp).copied();
                    let Some(w) = self.witness_of(a) else {
                        let msg = format!(
                            "argument {k} of {} is a witness of {} conformance, found {}",
                            self.vname(g),
                            self.vname(iface),
                            self.gname(a)
                        );
                        self.err(s, msg);
                        good = false;
                        continue;
                    };
                    if w.interface != iface {
                        let msg = format!(
                            "argument {k} of {} must witness {}, but {} witnesses {}",
                            self.vname(g),
                            self.vname(iface),
                            self.gname(a),
                            self.vname(w.interface)
                        );
                        self.err(s, msg);
                        good = false;
                    } else if let Some(want) = want_ty
                        && !self.ty_matches(w.conforming, want, &w.sub, None)
                    {
                        let msg = format!(
                            "argument {k} of {}: {} is a conformance of {} to {}, not of {}",
                            self.vname(g),
                            self.gname(a),
                            self.ty_str(w.conforming),
                            self.vname(iface),
                            self.ty_str(want)
                        );
                        self.err(s, msg);
                        good = false;
                    }
                }
                _ => good = false,
            }
        }
        if !good {
            return;
        }
        let ty = d.ty;
        match (defines, ty) {
            (Defines::Type(_), None) => {}
            (Defines::Type(_), Some(_)) => {
                self.err(s, "`specialize` of a generic type has no result type");
            }
            (_, None) => {
                self.err(
                    s,
                    "`specialize` of a generic function or witness table needs a result type",
                );
            }
            (Defines::Func(Some(sig)), Some(t)) if !self.ty_matches(sig, t, &sub, None) => {
                let msg = format!(
                    "`specialize` has type {}, but {} with these arguments has type {}",
                    self.ty_str(t),
                    self.vname(g),
                    self.subst_str(sig, &sub)
                );
                self.err(s, msg);
            }
            (Defines::Table(Some(iface), _), Some(t)) if t != iface => {
                let msg = format!(
                    "`specialize` has type {}, but {} defines a witness table of {}",
                    self.gname(t),
                    self.vname(g),
                    self.vname(iface)
                );
                self.err(s, msg);
            }
            _ => {}
        }
    }

    /// `ty_str` of `t` with the parameters of `sub` spelled as their arguments (for messages;
    /// only the outermost level is substituted when it is a parameter or a fn type).
    fn subst_str(&self, t: Inst, sub: &HashMap<Inst, Inst>) -> String {
        let one = |x: Inst| self.ty_str(sub.get(&x).copied().unwrap_or(x));
        match self.live(t) {
            Some(d) if d.opcode == Opcode::FN && !d.operands.is_empty() => {
                let params: Vec<String> = d.operands[1..].iter().map(|&p| one(p)).collect();
                format!("fn({}) -> {}", params.join(", "), one(d.operands[0]))
            }
            _ => one(t),
        }
    }

    /// A `generic` in the tree: at module level, its operands its parameters in order, and
    /// one `func` or `witness_table` child, or (a generic type) a type and no child.
    pub(super) fn check_generic(&mut self, g: Inst) {
        let Some(d) = self.live(g) else { return };
        if !self.is_top_def(g) {
            self.err(g, "`generic` must be a child of the module");
        }
        for (k, &p) in d.operands.iter().enumerate() {
            let good = self.live(p).is_some_and(|pd| {
                matches!(pd.opcode, Opcode::TYPE_PARAM | Opcode::WITNESS_PARAM)
                    && pd.operands.first() == Some(&g)
                    && pd.payload.as_int() == Some(k as u64)
            });
            if !good {
                let msg = format!(
                    "operand {k} of a `generic` must be its parameter {k} (`type_param {k}` or `witness_param {k}` naming it), found {}",
                    self.gname(p)
                );
                self.err(g, msg);
            }
        }
        match (d.children(), d.ty) {
            ([], Some(t)) => {
                if self.kind(t) != Kind::Value || self.is_interface(t) {
                    let msg = format!(
                        "a generic type must define a value type, found {}",
                        self.gname(t)
                    );
                    self.err(g, msg);
                }
            }
            ([], None) => self.err(
                g,
                "a `generic` defines a `func` or a `witness_table` (its child) or a type (its type)",
            ),
            ([c], None) => {
                if !matches!(self.opc(*c), Some(Opcode::FUNC | Opcode::WITNESS_TABLE)) {
                    let msg = format!(
                        "a `generic` defines a `func` or a `witness_table`, found {}",
                        self.opname(*c)
                    );
                    self.err(*c, msg);
                }
            }
            ([_], Some(_)) => self.err(
                g,
                "a `generic` with a child has no type (the type belongs to what it defines)",
            ),
            (cs, _) => {
                let msg = format!(
                    "a `generic` has at most one child (what it defines), found {}",
                    cs.len()
                );
                self.err(g, msg);
            }
        }
    }

    /// Whether definition `d` is imported, itself or through its enclosing generic.
    pub(super) fn is_imported(&self, d: Inst) -> bool {
        let has = |x: Inst| {
            self.live(x).is_some_and(|xd| {
                xd.decorations()
                    .iter()
                    .any(|&dec| self.opc(dec) == Some(Opcode::IMPORT))
            })
        };
        has(d)
            || self
                .live(d)
                .and_then(|dd| dd.parent)
                .is_some_and(|p| self.is_op(p, Opcode::GENERIC) && has(p))
    }

    /// Whether the tree parent of `d` is the module or a `generic`.
    pub(super) fn at_def_level(&self, d: Inst) -> bool {
        match self.tparent.get(d.idx()).copied().flatten() {
            Some(p) => p == self.m.root() || self.is_op(p, Opcode::GENERIC),
            None => false,
        }
    }

    /// An `interface`: at module level, its operands its requirements.
    pub(super) fn check_interface(&mut self, i: Inst) {
        let Some(d) = self.live(i) else { return };
        if !self.is_top_def(i) {
            self.err(i, "`interface` must be a child of the module");
        }
        let mut seen = HashSet::new();
        for (k, &r) in d.operands.iter().enumerate() {
            if !self.is_op(r, Opcode::INTERFACE_REQ) || !self.is_top_def(r) {
                let msg = format!(
                    "operand {k} of an `interface` must be a top-level `interface_req`, found {}",
                    self.gname(r)
                );
                self.err(i, msg);
            } else if !seen.insert(r) {
                let msg = format!("requirement {} is listed twice", self.vname(r));
                self.err(i, msg);
            }
        }
    }

    /// An `interface_req`: at module level, typed (usually a fn type naming its interface as
    /// `Self`).
    pub(super) fn check_interface_req(&mut self, r: Inst) {
        let Some(d) = self.live(r) else { return };
        if !self.is_top_def(r) {
            self.err(r, "`interface_req` must be a child of the module");
        }
        if let Some(t) = d.ty
            && matches!(self.kind(t), Kind::NotType | Kind::Void)
            && !self.is_interface(t)
        {
            let msg = format!(
                "the type of an `interface_req` must be a type, found {}",
                self.gname(t)
            );
            self.err(r, msg);
        }
    }

    /// A `witness_table`: of an interface, for a value type; a body of `witness_entry`s giving
    /// each requirement exactly once an implementation of the requirement's type with `Self`
    /// the conforming type; no body only when imported.
    pub(super) fn check_witness_table(&mut self, w: Inst) {
        let Some(d) = self.live(w) else { return };
        if !self.at_def_level(w) {
            self.err(
                w,
                "`witness_table` must be a child of the module or of a `generic`",
            );
        }
        let Some(iface) = d.ty else { return };
        if !self.is_interface(iface) {
            let msg = format!(
                "the type of a `witness_table` must be an `interface`, found {}",
                self.gname(iface)
            );
            self.err(w, msg);
            return;
        }
        let conf = d.operands[0];
        if self.kind(conf) != Kind::Value || self.is_interface(conf) {
            let msg = format!(
                "operand 0 of a `witness_table` (the conforming type) must be a value type, found {}",
                self.gname(conf)
            );
            self.err(w, msg);
            return;
        }
        if d.children().is_empty() {
            if !self.is_imported(w) {
                self.err(
                    w,
                    "witness table has no entries: a declaration must carry `import`",
                );
            }
            return;
        }
        if self.is_imported(w) {
            self.err(
                w,
                "an imported witness table has no entries, but this one has",
            );
            return;
        }
        let reqs: Vec<Inst> = self
            .live(iface)
            .map_or_else(Vec::new, |x| x.operands.to_vec());
        let mut covered: HashMap<Inst, Inst> = HashMap::new();
        for &e in d.children() {
            let Some(ed) = self.live(e) else { continue };
            if ed.opcode != Opcode::WITNESS_ENTRY || ed.operands.len() != 2 {
                if ed.opcode != Opcode::WITNESS_ENTRY {
                    let msg = format!(
                        "a `witness_table`'s children are `witness_entry`s, found {}",
                        self.opname(e)
                    );
                    self.err(e, msg);
                }
                continue;
            }
            let (req, imp) = (ed.operands[0], ed.operands[1]);
            if !reqs.contains(&req) {
                let msg = format!(
                    "{} is not a requirement of {}",
                    self.gname(req),
                    self.vname(iface)
                );
                self.err(e, msg);
                continue;
            }
            if covered.insert(req, e).is_some() {
                let msg = format!("requirement {} is given twice", self.vname(req));
                self.err(e, msg);
                continue;
            }
            let Some(want) = self.live(req).and_then(|x| x.ty) else {
                continue;
            };
            let got = match self.opc(imp) {
                Some(Opcode::FUNC | Opcode::SPECIALIZE) => self.live(imp).and_then(|x| x.ty),
                _ => {
                    let msg = format!(
                        "the implementation of {} must be a `func` or a specialized generic function, found {}",
                        self.vname(req),
                        self.gname(imp)
                    );
                    self.err(e, msg);
                    continue;
                }
            };
            let Some(got) = got else { continue };
            if !self.ty_matches(want, got, &HashMap::new(), Some((iface, conf))) {
                let msg = format!(
                    "the implementation of {} has type {}, expected {} with Self = {}",
                    self.vname(req),
                    self.ty_str(got),
                    self.ty_str(want),
                    self.ty_str(conf)
                );
                self.err(e, msg);
            }
        }
        for &r in &reqs {
            if !covered.contains_key(&r) {
                let msg = format!(
                    "witness table of {} for {} does not implement {}",
                    self.vname(iface),
                    self.ty_str(conf),
                    self.vname(r)
                );
                self.err(w, msg);
            }
        }
    }

    /// `lookup_witness %w, @req`: `%w` a witness, `@req` a requirement of its interface, the
    /// result the requirement's type with `Self` the conforming type.
    pub(super) fn check_lookup_witness(&mut self, i: Inst) {
        let Some(d) = self.live(i) else { return };
        let (w, req) = (d.operands[0], d.operands[1]);
        let Some(wit) = self.witness_of(w) else {
            let msg = format!(
                "operand 0 of `lookup_witness` must be a witness (`witness_param`, `witness_table` or a specialized generic witness table), found {}",
                self.gname(w)
            );
            self.err(i, msg);
            return;
        };
        let reqs: &[Inst] = self.live(wit.interface).map_or(&[], |x| &x.operands);
        if !reqs.contains(&req) {
            let msg = format!(
                "{} is not a requirement of {}",
                self.gname(req),
                self.vname(wit.interface)
            );
            self.err(i, msg);
            return;
        }
        let (Some(want), Some(got)) = (self.live(req).and_then(|x| x.ty), d.ty) else {
            return;
        };
        if !self.ty_matches(want, got, &wit.sub, Some((wit.interface, wit.conforming))) {
            let msg = format!(
                "result type is {}, expected {} with Self = {}",
                self.ty_str(got),
                self.ty_str(want),
                self.ty_str(wit.conforming)
            );
            self.err(i, msg);
        }
    }

    /// A `witness_entry` is a child of a `witness_table` (its operands are checked there).
    pub(super) fn check_witness_entry(&mut self, e: Inst) {
        let parent = self.tparent.get(e.idx()).copied().flatten();
        if !parent.is_some_and(|p| self.is_op(p, Opcode::WITNESS_TABLE)) {
            self.err(e, "`witness_entry` must be a child of a `witness_table`");
        }
    }
}
