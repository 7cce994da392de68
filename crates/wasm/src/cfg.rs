//! A function's control-flow graph while it is being built: the terminator of each block is
//! kept abstract (its edges, with arguments that SSA construction may still extend) and
//! written into the irkit function only when the whole body is translated.

use rustc_hash::FxHashMap as HashMap;

use irkit_core::{Builder, Inst};

/// A branch edge: a target block and the arguments for its parameters.
#[derive(Clone, Debug)]
pub struct Edge {
    /// The target block.
    pub target: Inst,
    /// One argument per parameter of `target` (parameters added later by SSA construction
    /// get theirs appended).
    pub args: Vec<Inst>,
}

impl Edge {
    /// An edge to `target` with `args`.
    pub fn new(target: Inst, args: &[Inst]) -> Edge {
        Edge {
            target,
            args: args.to_vec(),
        }
    }
}

/// A block's terminator.
#[derive(Clone, Debug)]
pub enum Term {
    /// `jump`.
    Jump(Edge),
    /// `br cond, then, else`.
    Br(Inst, Edge, Edge),
    /// `switch value, cases…`: the default edge, then one `(case value, edge)` per case.
    Switch(Inst, Edge, Vec<(Inst, Edge)>),
    /// `ret [value]`.
    Ret(Option<Inst>),
    /// `unreachable`.
    Unreachable,
    /// `trap_msg kind`: a wasm trap with its message (`"out of bounds memory access"` …).
    Trap(&'static str),
    /// `tail_call callee(args…)` (`return_call`).
    TailCall(Inst, Vec<Inst>),
    /// `tail_call_indirect sig, callee(args…)` (`return_call_indirect`, `return_call_ref`).
    TailCallIndirect(Inst, Inst, Vec<Inst>),
}

impl Term {
    fn edges(&self) -> Vec<&Edge> {
        match self {
            Term::Jump(e) => vec![e],
            Term::Br(_, a, b) => vec![a, b],
            Term::Switch(_, d, cases) => std::iter::once(d)
                .chain(cases.iter().map(|c| &c.1))
                .collect(),
            Term::Ret(_)
            | Term::Unreachable
            | Term::Trap(_)
            | Term::TailCall(..)
            | Term::TailCallIndirect(..) => Vec::new(),
        }
    }

    /// Edge `i` (in the order of [`Term::edges`]), found without listing the others: a
    /// `br_table` edge is read once per predecessor entry, so this must not cost its size.
    fn edge(&self, i: usize) -> Option<&Edge> {
        match (self, i) {
            (Term::Jump(e) | Term::Br(_, e, _) | Term::Switch(_, e, _), 0) => Some(e),
            (Term::Br(_, _, e), 1) => Some(e),
            (Term::Switch(_, _, cases), _) => cases.get(i - 1).map(|c| &c.1),
            _ => None,
        }
    }

    fn edge_mut(&mut self, i: usize) -> Option<&mut Edge> {
        match (self, i) {
            (Term::Jump(e) | Term::Br(_, e, _) | Term::Switch(_, e, _), 0) => Some(e),
            (Term::Br(_, _, e), 1) => Some(e),
            (Term::Switch(_, _, cases), _) => cases.get_mut(i - 1).map(|c| &mut c.1),
            _ => None,
        }
    }
}

/// The blocks of one function, their abstract terminators and their predecessors.
#[derive(Debug, Default)]
pub struct Cfg {
    blocks: Vec<Inst>,
    terms: HashMap<Inst, Term>,
    preds: HashMap<Inst, Vec<(Inst, usize)>>,
}

impl Cfg {
    /// Records a new block (in creation order, which is the order of the function's blocks).
    pub fn add_block(&mut self, block: Inst) {
        self.blocks.push(block);
    }

    /// The blocks, in creation order.
    pub fn blocks(&self) -> &[Inst] {
        &self.blocks
    }

    /// Whether `block` has a terminator.
    pub fn is_terminated(&self, block: Inst) -> bool {
        self.terms.contains_key(&block)
    }

    /// Ends `block` with `term`. A block is terminated once; a second terminator is ignored
    /// (the translator only terminates reachable, open blocks).
    pub fn terminate(&mut self, block: Inst, term: Term) {
        if self.terms.contains_key(&block) {
            return;
        }
        for (i, e) in term.edges().into_iter().enumerate() {
            self.preds.entry(e.target).or_default().push((block, i));
        }
        self.terms.insert(block, term);
    }

    /// The predecessor edges of `block`: (source block, edge index in its terminator).
    pub fn preds(&self, block: Inst) -> &[(Inst, usize)] {
        self.preds.get(&block).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Appends `arg` to edge `edge` of `src`'s terminator.
    pub fn push_arg(&mut self, src: Inst, edge: usize, arg: Inst) {
        if let Some(e) = self.terms.get_mut(&src).and_then(|t| t.edge_mut(edge)) {
            e.args.push(arg);
        }
    }

    /// The arguments of edge `edge` of `src`'s terminator.
    pub fn edge_args(&self, src: Inst, edge: usize) -> Option<&[Inst]> {
        let e = self.terms.get(&src)?.edge(edge)?;
        Some(e.args.as_slice())
    }

    /// Removes argument `index` of edge `edge` of `src`'s terminator.
    pub fn remove_arg(&mut self, src: Inst, edge: usize, index: usize) {
        if let Some(e) = self.terms.get_mut(&src).and_then(|t| t.edge_mut(edge))
            && index < e.args.len()
        {
            e.args.remove(index);
        }
    }

    /// Applies `f` to every value a terminator uses (conditions, switch values, returned
    /// values, edge arguments).
    pub fn map_values(&mut self, f: impl Fn(Inst) -> Inst) {
        for t in self.terms.values_mut() {
            match t {
                Term::Jump(e) => e.args.iter_mut().for_each(|a| *a = f(*a)),
                Term::Br(c, a, b) => {
                    *c = f(*c);
                    a.args
                        .iter_mut()
                        .chain(b.args.iter_mut())
                        .for_each(|x| *x = f(*x));
                }
                Term::Switch(v, d, cases) => {
                    *v = f(*v);
                    d.args.iter_mut().for_each(|x| *x = f(*x));
                    for (_, e) in cases {
                        e.args.iter_mut().for_each(|x| *x = f(*x));
                    }
                }
                Term::Ret(v) => *v = v.map(&f),
                Term::TailCall(_, args) => args.iter_mut().for_each(|x| *x = f(*x)),
                Term::TailCallIndirect(_, p, args) => {
                    *p = f(*p);
                    args.iter_mut().for_each(|x| *x = f(*x));
                }
                Term::Unreachable | Term::Trap(_) => {}
            }
        }
    }

    /// Writes every terminator into the function; a block left open gets `unreachable`.
    /// Every edge passes one argument of the right type per parameter of its target (SSA
    /// construction keeps them in step), so the typed path's checks hold.
    pub fn emit(&self, b: &mut Builder<'_>) {
        for &block in &self.blocks {
            b.position_at_end(block);
            let mut ins = b.ins();
            match self.terms.get(&block) {
                Some(Term::Jump(e)) => ins.jump(e.target, &e.args),
                Some(Term::Br(c, t, e)) => ins.br(*c, t.target, &t.args, e.target, &e.args),
                Some(Term::Switch(v, d, cases)) => {
                    let cases: Vec<(Inst, Inst, &[Inst])> = cases
                        .iter()
                        .map(|(k, e)| (*k, e.target, e.args.as_slice()))
                        .collect();
                    ins.switch(*v, (d.target, &d.args), &cases)
                }
                Some(Term::Ret(v)) => ins.ret(*v),
                Some(Term::Trap(kind)) => ins.trap_msg(kind),
                Some(Term::TailCall(callee, args)) => ins.tail_call(*callee, args),
                Some(Term::TailCallIndirect(sig, p, args)) => {
                    ins.tail_call_indirect(*sig, *p, args)
                }
                Some(Term::Unreachable) | None => ins.unreachable(),
            };
        }
    }
}
