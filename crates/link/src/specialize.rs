//! Specialization after link: every `specialize` of a generic whose definition the link found
//! is replaced by an instance of that definition with the arguments substituted.
//!
//! The pass follows the design document *Slang IR* (generics "validated before link, and
//! specialization performed after"; its specialization cache is keyed on the deduplicated
//! `specialize` instruction):
//!
//! 1. The work list starts with the `specialize` values at module scope (all arguments
//!    concrete). A `specialize` inside a generic (it names a parameter) is not instantiated
//!    itself: cloning the generic's body re-interns it with concrete arguments, and that value
//!    joins the work list.
//! 2. Each distinct `specialize` is instantiated **once** (memoized on the hash-consed
//!    instruction, so the count of clones is the count of distinct instantiations): a
//!    generic function's `func`, or a generic witness table, is cloned to module level with
//!    every parameter replaced by its argument (hoistables re-interned, so `fn(%T) -> %T`
//!    becomes `fn(i32) -> i32`); a generic type becomes its type with the arguments
//!    substituted. Every use of the `specialize` is then replaced by the instance.
//! 3. `lookup_witness` on a concrete witness table is replaced by the table's implementation
//!    of the requirement, so the call through it becomes a direct call.
//! 4. Rounds repeat until no `specialize` of a known generic is left (a generic calling a
//!    generic, a generic struct in a generic function). An instantiation more than
//!    [`LinkOptions::max_instantiation_depth`](crate::LinkOptions) levels below a module-level
//!    one (polymorphic recursion such as `f<T>` calling `f<Pair<T>>`) is an error naming the
//!    chain.
//! 5. Generic definitions, interfaces, requirements and witness tables nothing uses any more
//!    are removed (in a library link, exported generics stay), and the module is compacted.

use std::collections::{HashMap, HashSet};

use irkit_core::{Inst, Module, Opcode};

use crate::dynamic::{Generics, Shared};
use crate::error::LinkError;
use crate::label::label;

/// The most distinct instantiations one link makes (a bound on work, whatever the input).
const MAX_INSTANTIATIONS: usize = 100_000;

/// What the pass did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Distinct instantiations (clones of a generic function or witness table, and
    /// substituted generic types).
    pub instantiations: u64,
    /// The generic functions shared instead (see [`Generics`]).
    pub shared: Shared,
}

/// One instantiation, for the chain of an error.
struct Record {
    label: String,
    parent: Option<usize>,
    depth: usize,
}

/// The pass state.
struct Pass<'a> {
    m: &'a mut Module,
    limit: usize,
    /// `specialize` value -> its instance.
    memo: HashMap<Inst, Inst>,
    /// Instantiations so far, for chains.
    records: Vec<Record>,
    /// `specialize` values waiting, with the record of the instantiation that made them.
    pending: Vec<(Inst, Option<usize>)>,
    queued: HashSet<Inst>,
    /// The generics shared instead of cloned: their instances stay for `dynamic/`.
    skip: &'a HashMap<Inst, crate::dynamic::Info>,
}

/// Runs the pass on a linked module (a public pass: [`link`](crate::link) runs it after
/// reaching and copying, and any module without unresolved generics can be given to it).
/// `limit` is the deepest instantiation chain allowed
/// ([`LinkOptions::max_instantiation_depth`](crate::LinkOptions)); `keep` says whether a
/// top-level generic-family definition must stay even when unused (a root of a library link).
pub fn specialize(
    m: &mut Module,
    limit: usize,
    keep: &dyn Fn(&Module, Inst) -> bool,
) -> Result<Report, LinkError> {
    specialize_with(m, limit, None, keep)
}

/// What an executable link's specialization does beyond [`specialize`]: which generic
/// functions it shares, and how it allocates existentials (spec/linking.md, "Existentials").
#[derive(Clone, Copy, Debug)]
pub struct Sharing {
    /// The policy.
    pub generics: Generics,
    /// The allocator of existential cells.
    pub gc: crate::objects::Gc,
}

/// [`specialize`], sharing the generic functions `sharing` chooses with one dynamic-dispatch
/// version each instead of cloning them, and lowering existentials (`None`: neither, as a
/// library link does: its generics stay generic; see `dynamic/`, and spec/linking.md,
/// "Dynamic generics").
pub fn specialize_with(
    m: &mut Module,
    limit: usize,
    sharing: Option<Sharing>,
    keep: &dyn Fn(&Module, Inst) -> bool,
) -> Result<Report, LinkError> {
    // A module without generics (no generic-family definition, no `specialize`) has nothing
    // to instantiate or remove: the pass costs O(definitions + pool), not a walk of every
    // instruction and a compaction.
    let nothing_generic = !m.top_level().iter().any(|&t| generic_family(m.opcode(t)))
        && !m.pool().iter().any(|&h| m.opcode(h) == Opcode::SPECIALIZE);
    if nothing_generic {
        return Ok(Report::default());
    }
    let choice = match sharing {
        Some(s) => crate::dynamic::policy::choose(m, s.generics)?,
        None => Default::default(),
    };
    let root = m.root();
    let initial: Vec<Inst> = m
        .pool()
        .iter()
        .copied()
        .filter(|&h| m.opcode(h) == Opcode::SPECIALIZE && m.parent(h) == Some(root))
        .collect();
    let mut pass = Pass {
        m,
        limit,
        memo: HashMap::new(),
        records: Vec::new(),
        pending: Vec::new(),
        queued: HashSet::new(),
        skip: &choice.shared,
    };
    for s in initial {
        pass.enqueue(s, None);
    }
    pass.run()?;
    let instantiations = pass.records.len() as u64;
    let mut shared =
        crate::dynamic::lower_shared(m, &choice.shared, &choice.opened, sharing.map(|s| s.gc))?;
    shared.fallbacks = choice.fallbacks;
    let report = Report {
        instantiations,
        shared,
    };
    cleanup(m, keep)?;
    Ok(report)
}

impl Pass<'_> {
    fn enqueue(&mut self, s: Inst, from: Option<usize>) {
        if self.queued.insert(s) {
            self.pending.push((s, from));
        }
    }

    fn run(&mut self) -> Result<(), LinkError> {
        loop {
            let mut rauw: HashMap<Inst, Inst> = HashMap::new();
            self.resolve_lookups(&mut rauw);
            let batch = std::mem::take(&mut self.pending);
            if batch.is_empty() && rauw.is_empty() {
                return Ok(());
            }
            let lookups: Vec<Inst> = rauw.keys().copied().collect();
            for (s, from) in batch {
                let s = self.m.resolve(s);
                if !self.m.is_live(s) || self.m.opcode(s) != Opcode::SPECIALIZE {
                    continue;
                }
                if let Some(&r) = self.memo.get(&s) {
                    rauw.insert(s, r);
                    continue;
                }
                if self.records.len() >= MAX_INSTANTIATIONS {
                    return Err(LinkError::Specialize(format!(
                        "more than {MAX_INSTANTIATIONS} distinct instantiations (the last: {})",
                        label(self.m, s)
                    )));
                }
                let Some(r) = self.instantiate(s, from)? else {
                    continue;
                };
                self.memo.insert(s, r);
                rauw.insert(s, r);
            }
            if !rauw.is_empty() {
                self.m
                    .replace_all_uses(&rauw)
                    .map_err(|e| internal(format!("replacing specialized values: {e}")))?;
            }
            for lw in lookups {
                if self.m.is_live(lw) {
                    self.m
                        .remove(lw)
                        .map_err(|e| internal(format!("removing a resolved lookup: {e}")))?;
                }
            }
        }
    }

    /// `lookup_witness` on a concrete witness table (outside generics) -> the implementation.
    fn resolve_lookups(&mut self, rauw: &mut HashMap<Inst, Inst>) {
        let m = &*self.m;
        let mut stack: Vec<Inst> = m.top_level().to_vec();
        while let Some(i) = stack.pop() {
            let op = m.opcode(i);
            if op == Opcode::GENERIC {
                continue;
            }
            if op == Opcode::LOOKUP_WITNESS
                && let [w, req] = *m.operands(i)
                && m.opcode(w) == Opcode::WITNESS_TABLE
                && let Some(imp) = m.children(w).iter().find_map(|&e| match *m.operands(e) {
                    [r, imp] if r == req => Some(imp),
                    _ => None,
                })
            {
                rauw.insert(i, imp);
            }
            stack.extend(m.children(i).iter().copied());
        }
    }

    /// Instantiates `s` (made by record `from`), or `None` when its generic has no
    /// definition here (an unresolved import of a library link).
    fn instantiate(&mut self, s: Inst, from: Option<usize>) -> Result<Option<Inst>, LinkError> {
        let ops = self.m.operands(s).to_vec();
        let Some((&g, args)) = ops.split_first() else {
            return Ok(None);
        };
        if self.m.opcode(g) != Opcode::GENERIC || self.skip.contains_key(&g) {
            return Ok(None);
        }
        let params = self.m.operands(g).to_vec();
        if params.len() != args.len() {
            return Err(LinkError::Specialize(format!(
                "{} passes {}, the generic takes {}",
                label(self.m, s),
                irkit_core::message::count(args.len(), "argument"),
                params.len()
            )));
        }
        let children = self.m.children(g).to_vec();
        let defined = match children.as_slice() {
            [] => None,
            [c] => Some(*c),
            _ => return Ok(None),
        };
        if let Some(c) = defined {
            let has_body = match self.m.opcode(c) {
                Opcode::FUNC => self.m.entry_block(c).is_some(),
                Opcode::WITNESS_TABLE => !self.m.children(c).is_empty(),
                _ => false,
            };
            if !has_body {
                return Ok(None);
            }
        } else if self.m.ty(g).is_none() {
            return Ok(None);
        }
        // The record, and the depth check.
        let depth = from.map_or(1, |f| self.records[f].depth + 1);
        let label = label(self.m, s);
        self.records.push(Record {
            label,
            parent: from,
            depth,
        });
        let me = self.records.len() - 1;
        if depth > self.limit {
            return Err(LinkError::InstantiationLimit {
                limit: self.limit,
                chain: self.chain(me),
            });
        }
        let mut sub: HashMap<Inst, Inst> =
            params.iter().copied().zip(args.iter().copied()).collect();
        let r = match defined {
            None => {
                let shape = self.m.ty(g).unwrap_or(g);
                self.subst(shape, &mut sub, me)?
            }
            Some(c) => {
                let name = self.records[me].label.trim_start_matches('@').to_owned();
                self.clone_def(c, &mut sub, me, &name)?
            }
        };
        Ok(Some(r))
    }

    /// `t` with `sub` applied: hoistables re-interned (memoized in `sub`), everything else
    /// mapped by `sub` or kept. A `specialize` met on the way is mapped to its instance, or
    /// queued.
    fn subst(
        &mut self,
        t: Inst,
        sub: &mut HashMap<Inst, Inst>,
        rec: usize,
    ) -> Result<Inst, LinkError> {
        if let Some(&v) = sub.get(&t) {
            return Ok(v);
        }
        if !self.m.opcode(t).is_hoistable() {
            return Ok(t);
        }
        let mut stack = vec![(t, false)];
        while let Some((x, ready)) = stack.pop() {
            if sub.contains_key(&x) {
                continue;
            }
            let d = self.m.data(x);
            let deps: Vec<Inst> = d.ty().iter().chain(d.operands()).copied().collect();
            if !ready {
                stack.push((x, true));
                for o in deps {
                    if !sub.contains_key(&o) && self.m.opcode(o).is_hoistable() {
                        stack.push((o, false));
                    }
                }
                continue;
            }
            let (opcode, ty, payload) = (d.opcode(), d.ty(), d.payload().clone());
            let map = |o: Inst| sub.get(&o).copied().unwrap_or(o);
            let new_ty = ty.map(map);
            let new_ops: Vec<Inst> = self.m.operands(x).iter().map(|&o| map(o)).collect();
            let unchanged = new_ty == ty && new_ops.as_slice() == self.m.operands(x);
            let mut v = if unchanged {
                x
            } else {
                self.m
                    .intern(opcode, new_ty, &new_ops, payload)
                    .map_err(|e| internal(format!("substituting into `{opcode}`: {e}")))?
            };
            if opcode == Opcode::SPECIALIZE && self.m.parent(v) == Some(self.m.root()) {
                match self.memo.get(&v) {
                    Some(&r) => v = r,
                    None => self.enqueue(v, Some(rec)),
                }
            }
            sub.insert(x, v);
        }
        Ok(sub[&t])
    }

    /// Clones definition `c` (a generic's `func` or `witness_table`) to module level with
    /// `sub` applied, named `name`.
    fn clone_def(
        &mut self,
        c: Inst,
        sub: &mut HashMap<Inst, Inst>,
        rec: usize,
        name: &str,
    ) -> Result<Inst, LinkError> {
        let root = self.m.root();
        let err = |e: irkit_core::CoreError| internal(format!("cloning a generic: {e}"));
        // Phase 1: the tree, without types or operands.
        let mut copied: Vec<(Inst, Inst)> = Vec::new();
        let mut stack = vec![(c, root, false)];
        while let Some((s, parent, is_deco)) = stack.pop() {
            let d = self.m.data(s);
            let (opcode, payload) = (d.opcode(), d.payload().clone());
            let children = d.children().to_vec();
            let decos = d.decorations().to_vec();
            let new = self
                .m
                .new_inst(opcode, None, Vec::new(), payload)
                .map_err(err)?;
            if is_deco {
                self.m.attach_decoration(parent, new).map_err(err)?;
            } else {
                self.m.append_child(parent, new).map_err(err)?;
            }
            sub.insert(s, new);
            copied.push((s, new));
            for &ch in children.iter().rev() {
                stack.push((ch, new, false));
            }
            for &dd in decos.iter().rev() {
                stack.push((dd, new, true));
            }
        }
        // Phase 2: types and operands.
        for &(s, new) in &copied {
            let ty = self.m.ty(s);
            let ops = self.m.operands(s).to_vec();
            let ty = match ty {
                Some(t) => Some(self.subst(t, sub, rec)?),
                None => None,
            };
            let mut new_ops = Vec::with_capacity(ops.len());
            for o in ops {
                new_ops.push(self.subst(o, sub, rec)?);
            }
            self.m.set_type(new, ty).map_err(err)?;
            self.m.set_operands(new, new_ops).map_err(err)?;
        }
        let out = sub[&c];
        self.m.set_name(out, name).map_err(err)?;
        Ok(out)
    }

    /// The chain of record `me`, innermost first: `@f<…> <- @f<i32> <- …`, long chains cut in
    /// the middle.
    fn chain(&self, me: usize) -> String {
        let mut links = Vec::new();
        let mut cur = Some(me);
        while let Some(k) = cur {
            links.push(self.records[k].label.as_str());
            cur = self.records[k].parent;
        }
        if links.len() > 6 {
            let n = links.len();
            let mut short: Vec<String> = links[..3].iter().map(|s| s.to_string()).collect();
            short.push(format!("… ({} more)", n - 6));
            short.extend(links[n - 3..].iter().map(|s| s.to_string()));
            short.join(" <- ")
        } else {
            links.join(" <- ")
        }
    }
}

fn internal(msg: String) -> LinkError {
    LinkError::Internal(msg)
}

/// Whether `op` is one of the definitions specialization makes unnecessary.
fn generic_family(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::GENERIC | Opcode::INTERFACE | Opcode::INTERFACE_REQ | Opcode::WITNESS_TABLE
    )
}

/// Removes the generic-family definitions nothing else uses (unless `keep` says otherwise),
/// then compacts the module (dropping the values only they used).
fn cleanup(m: &mut Module, keep: &dyn Fn(&Module, Inst) -> bool) -> Result<(), LinkError> {
    let tops: Vec<Inst> = m.top_level().to_vec();
    let mut live: HashSet<Inst> = HashSet::new();
    let mut work: Vec<Inst> = Vec::new();
    for &t in &tops {
        if !generic_family(m.opcode(t)) || keep(m, t) {
            live.insert(t);
            work.push(t);
        }
    }
    // Definitions used (through operands, types and values) from the live ones.
    let mut seen_vals: HashSet<Inst> = HashSet::new();
    while let Some(d) = work.pop() {
        let mut refs: Vec<Inst> = Vec::new();
        for i in m.walk_from(d) {
            refs.extend(m.ty(i));
            refs.extend(m.operands(i).iter().copied());
        }
        while let Some(r) = refs.pop() {
            let r = m.resolve(r);
            if m.opcode(r).is_hoistable() {
                if seen_vals.insert(r) {
                    refs.extend(m.ty(r));
                    refs.extend(m.operands(r).iter().copied());
                }
            } else if m.parent(r) == Some(m.root()) && live.insert(r) {
                work.push(r);
            }
        }
    }
    let mut removed = false;
    for t in tops {
        if !live.contains(&t) {
            m.remove(t)
                .map_err(|e| internal(format!("removing a generic definition: {e}")))?;
            removed = true;
        }
    }
    if removed {
        *m = m
            .compact()
            .map_err(|e| internal(format!("compacting after specialization: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_family_is_the_generics_definitions() {
        assert!(generic_family(Opcode::GENERIC));
        assert!(generic_family(Opcode::WITNESS_TABLE));
        assert!(!generic_family(Opcode::FUNC));
    }
}
