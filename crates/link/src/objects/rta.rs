//! Rapid type analysis (spec/linking.md, "Objects", step 0; NIR's Reach): which classes a
//! program can instantiate and which method implementations its calls can select, so that the
//! rest is dropped before the tables are built.
//!
//! The walk starts at the definitions the output keeps visible (or at every definition, when
//! the module's functions are all callable) and follows every reference, as a link does, with
//! two exceptions that make it hierarchy-aware: a `method_def`'s implementation and an
//! object's `ctor_def` are not references. Instead,
//! * a class is **live** once a reached `classalloc` names it, and an object once a reached
//!   `instance` does (its constructor is then reached);
//! * a reached `method "s" %o, @T` may select, in every live class `K` below `T` (a subclass
//!   of class `T`, or a class extending trait `T`), `K`'s implementation of `s`; a reached
//!   `dynmethod "s"` may select it in every live class;
//! * an implementation is reached when a live class and a reached call meet on it, in
//!   whichever order the walk finds them (a fixed point).
//!
//! Whatever the walk does not reach is dropped: functions and globals only implementations
//! used, and the implementations themselves. The result depends only on the module.

use std::collections::{HashMap, HashSet};

use irkit_core::{Inst, Module, Opcode};
use irkit_opt::Visible;

use super::hierarchy::Hierarchy;

/// What the analysis found.
pub(super) struct Reached {
    /// Top-level definitions reached, by instruction index.
    pub reached: Vec<bool>,
    /// Whether each definition of the hierarchy is live (a class allocated, an object
    /// instantiated).
    pub live: Vec<bool>,
}

impl Reached {
    /// The top-level definitions of `m` not reached, outside the hierarchy (which the
    /// lowering removes whole).
    pub fn dead(&self, m: &Module, h: &Hierarchy) -> Vec<Inst> {
        m.top_level()
            .iter()
            .copied()
            .filter(|&d| !self.reached[d.idx()] && h.get(d).is_none())
            .collect()
    }
}

/// Where a call may dispatch: below a class or trait of the hierarchy, or anywhere
/// (`dynmethod`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Below {
    Def(usize),
    Any,
}

struct Walk<'a> {
    m: &'a Module,
    h: &'a Hierarchy,
    reached: Vec<bool>,
    seen_pool: Vec<bool>,
    work: Vec<Inst>,
    live: Vec<bool>,
    /// Per selector: the live definitions with an implementation of it.
    live_by_selector: HashMap<&'a str, Vec<usize>>,
    /// Per selector: where the reached calls of it dispatch (each once).
    calls: HashMap<String, HashSet<Below>>,
}

/// Runs the analysis on `m`, whose hierarchy is `h`. `roots`: the definitions other programs
/// see; `None` makes every definition outside the hierarchy a root (a module whose functions
/// are called by name).
pub(super) fn analyze(m: &Module, h: &Hierarchy, roots: Option<&Visible<'_>>) -> Reached {
    let n = m.arena_len();
    let mut w = Walk {
        m,
        h,
        reached: vec![false; n],
        seen_pool: vec![false; n],
        work: Vec::new(),
        live: vec![false; h.defs.len()],
        live_by_selector: HashMap::new(),
        calls: HashMap::new(),
    };
    for &d in m.top_level() {
        let root = match roots {
            Some(v) => v.sees(m, d),
            None => h.get(d).is_none(),
        };
        if root {
            w.reach(d);
        }
    }
    while let Some(d) = w.work.pop() {
        w.scan(d);
    }
    Reached {
        reached: w.reached,
        live: w.live,
    }
}

impl<'a> Walk<'a> {
    /// Reaches value `v`: each top-level definition it names ([`Module::definitions_named`])
    /// is queued once.
    fn reach(&mut self, v: Inst) {
        let (reached, work) = (&mut self.reached, &mut self.work);
        self.m.definitions_named(v, &mut self.seen_pool, |t| {
            if !std::mem::replace(&mut reached[t.idx()], true) {
                work.push(t);
            }
        });
    }

    /// Follows what the instructions of definition `d` name.
    fn scan(&mut self, d: Inst) {
        let m = self.m;
        for i in m.walk_from(d) {
            let ops = m.operands(i);
            match m.opcode(i) {
                // Members: the signature is a reference, the implementation is not.
                Opcode::METHOD_DEF => {
                    if let Some(&sig) = ops.first() {
                        self.reach(sig);
                    }
                    continue;
                }
                Opcode::CTOR_DEF => continue,
                Opcode::CLASSALLOC | Opcode::INSTANCE => {
                    if let Some(k) = ops.first().and_then(|&c| self.def(c)) {
                        self.make_live(k);
                    }
                }
                Opcode::METHOD => {
                    if let (Some(s), Some(k)) =
                        (m.payload(i).as_str(), ops.get(1).and_then(|&c| self.def(c)))
                    {
                        self.call(s, Below::Def(k));
                    }
                }
                Opcode::DYNMETHOD => {
                    if let Some(s) = m.payload(i).as_str() {
                        self.call(s, Below::Any);
                    }
                }
                _ => {}
            }
            for &o in ops {
                self.reach(o);
            }
            if let Some(t) = m.ty(i) {
                self.reach(t);
            }
        }
    }

    fn def(&self, d: Inst) -> Option<usize> {
        self.h.get(self.m.resolve(d))
    }

    /// Whether class-like `k` is `below`.
    fn is_below(&self, k: usize, below: Below) -> bool {
        match below {
            Below::Any => true,
            Below::Def(t) => self.h.below(k, t),
        }
    }

    /// Class or object `k` is instantiated: its constructor is reached, and each of its
    /// implementations that a reached call may select.
    fn make_live(&mut self, k: usize) {
        if std::mem::replace(&mut self.live[k], true) {
            return;
        }
        let h = self.h;
        let d = &h.defs[k];
        if let Some(c) = d.ctor {
            self.reach(c);
        }
        let mut selected = Vec::new();
        for (s, body) in &d.impls {
            let Some(f) = *body else { continue };
            self.live_by_selector.entry(s.as_ref()).or_default().push(k);
            let called = self
                .calls
                .get(s.as_ref())
                .is_some_and(|below| below.iter().any(|&b| self.is_below(k, b)));
            if called {
                selected.push(f);
            }
        }
        for f in selected {
            self.reach(f);
        }
    }

    /// A call of selector `s` dispatching `below`: reaches the implementation of `s` in every
    /// live class below.
    fn call(&mut self, s: &str, below: Below) {
        let new = match self.calls.get_mut(s) {
            Some(seen) => seen.insert(below),
            None => {
                self.calls.insert(s.to_owned(), HashSet::from([below]));
                true
            }
        };
        if !new {
            return;
        }
        let h = self.h;
        let selected: Vec<Inst> = self
            .live_by_selector
            .get(s)
            .into_iter()
            .flatten()
            .filter(|&&k| self.is_below(k, below))
            .filter_map(|&k| h.defs[k].impls.get(s).copied().flatten())
            .collect();
        for f in selected {
            self.reach(f);
        }
    }
}
