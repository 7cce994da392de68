//! The copy of a reached definition into the output: [`State::copy`] validates it, refuses a
//! reached stub without `--link-stubs`, and plans its copy (when the walk splits) or copies it
//! at once; [`Copying::build_planned`] builds the planned bodies on every core after the walk,
//! in walk order. [`Copying`] owns each input's copier and the plans. The format's copier asks the [`Mapper`] for every reference: a pool value
//! (re-interned, `pool.rs`), a definition (resolved and reached), and whether to keep each
//! decoration (an `export` only on what its name resolves to, a `pin_if` re-attached once its
//! condition is reached, a `pin_weak` only when its target resolves).

use irkit_core::{Inst, Module, Opcode};
use irkit_format::{CopyMapper, CopyPlan, DefCopier, InstView, PayloadView};

use super::context::Context;
use super::index::{DefIndex, InputId, NodeId, PoolIndex, SrcDef, def_of};
use super::linkage::linkage;
use super::reach::{Node, PinIf};
use super::resolve::Resolved;
use super::{Key, State};
use crate::error::LinkError;

/// The copies: per input its definition copier (fetched on first use), and the copies planned
/// during the walk, built after it.
pub(super) struct Copying<'a> {
    copiers: Vec<Option<DefCopier<'a>>>,
    /// Plan each copy during the walk and build the copies afterwards, on every core
    /// ([`Copying::build_planned`]); off for the walk redone after a plan or build failed.
    split: bool,
    /// Copies planned, in walk order: (input, plan).
    plans: Vec<(InputId, CopyPlan<'a>)>,
    /// A plan or a build failed: the walk must be redone without splitting.
    split_failed: bool,
}

impl<'a> Copying<'a> {
    /// Nothing copied yet, for a link of `inputs` inputs; `split` as [`Copying::split`] says.
    pub(super) fn new(inputs: usize, split: bool) -> Self {
        Copying {
            copiers: vec![None; inputs],
            split,
            plans: Vec::new(),
            split_failed: false,
        }
    }

    /// Whether a plan or a build failed (the walk must be redone without splitting).
    pub(super) fn split_failed(&self) -> bool {
        self.split_failed
    }

    /// Input `m`'s copier (made on first use; the error of one that cannot be made).
    fn copier(&mut self, cx: &Context<'a>, m: InputId) -> Result<DefCopier<'a>, LinkError> {
        if let Some(c) = self.copiers[m.idx()] {
            return Ok(c);
        }
        let c = cx.view(m).copier(cx.opts.debug_info)?;
        self.copiers[m.idx()] = Some(c);
        Ok(c)
    }

    /// Builds the planned copies on every core, each into the arena slots reserved for it at
    /// the end of `out`, in walk order ([`Module::append_fragments`]), so the result is the
    /// same on any number of threads; returns the instructions built. A refused build sets
    /// `split_failed` (the caller redoes the walk without splitting).
    pub(super) fn build_planned(&mut self, cx: &Context<'_>, out: &mut Module) -> u64 {
        let plans = std::mem::take(&mut self.plans);
        if plans.is_empty() {
            return 0;
        }
        let bodies: Vec<(Inst, u32)> = plans.iter().map(|(_, p)| (p.target(), p.count())).collect();
        let copiers = &self.copiers;
        let slots = cx.ahead.map(|a| a.take_slots()).unwrap_or_default();
        let built = out.append_fragments_in(slots, &bodies, |k, fragment| {
            let (m, plan) = &plans[k];
            let copier = copiers.get(m.idx()).copied().flatten().ok_or(())?;
            copier.build(plan, fragment).map_err(|_| ())
        });
        match built {
            Ok(()) => bodies.iter().map(|&(_, n)| u64::from(n) + 1).sum::<u64>(),
            Err(_) => {
                self.split_failed = true;
                0
            }
        }
    }
}

impl State<'_> {
    /// Copies the definition of node `n` into its output instruction, or, when the walk
    /// splits, plans the copy for [`Copying::build_planned`] (a definition the copier does not
    /// plan is copied at once). Errors are collected.
    pub(super) fn copy(&mut self, out: &mut Module, n: NodeId) {
        let Node {
            src,
            out: target,
            parent,
            ..
        } = *self.reach.node(n);
        let m = src.input;
        let view = self.cx.view(m);
        self.res.mark_validated(src);
        let def = match view.def(src.def.index()) {
            Ok(def) => def,
            Err(e) => {
                self.res.def_error(&mut self.errors, src, e);
                return;
            }
        };
        let stub = match self.cx.facts.known(src) {
            Some(f) => f.linkage.stub,
            None => linkage(&def).stub,
        };
        if stub && !self.cx.opts.link_stubs {
            let chain = self.chain(parent);
            self.errors.push(LinkError::Stub {
                name: self.cx.display_name(src),
                file: self.cx.file(m).to_string(),
                chain,
            });
        }
        let copier = match self.copy.copier(&self.cx, m) {
            Ok(c) => c,
            Err(e) => {
                self.errors.push(e);
                return;
            }
        };
        if self.copy.split {
            let mut mapper = Mapper {
                st: self,
                m,
                node: n,
            };
            match copier.plan(def, out, target, &mut mapper) {
                Ok(Some(plan)) => {
                    if let Some(a) = self.cx.ahead {
                        a.plan(plan.count());
                    }
                    self.copy.plans.push((m, plan));
                    return;
                }
                // Not planned (nothing asked yet): copied now.
                Ok(None) => {}
                Err(e) => {
                    self.errors.push(e);
                    self.copy.split_failed = true;
                    return;
                }
            }
        }
        let mut mapper = Mapper {
            st: self,
            m,
            node: n,
        };
        match copier.copy(def, out, target, &mut mapper) {
            Ok(s) => self.stats.insts_copied += s.insts,
            Err(e) => self.errors.push(e),
        }
    }
}

/// Maps the references of one definition being copied (from input `m`, into node `node`).
struct Mapper<'s, 'a> {
    st: &'s mut State<'a>,
    m: InputId,
    node: NodeId,
}

impl CopyMapper for Mapper<'_, '_> {
    type Error = LinkError;

    #[inline]
    fn pool(&mut self, dst: &mut Module, index: PoolIndex) -> Result<Inst, LinkError> {
        self.st.pool_value(dst, self.m, index, Some(self.node))
    }

    fn def(&mut self, dst: &mut Module, index: DefIndex) -> Result<Inst, LinkError> {
        let src = SrcDef::new(self.m, index);
        Ok(self
            .st
            .need(dst, src, Some(self.node), false)
            .unwrap_or(dst.root()))
    }

    fn keep_decoration(
        &mut self,
        dst: &mut Module,
        owner: u32,
        deco: InstView<'_>,
    ) -> Result<bool, LinkError> {
        if owner != 0 {
            return Ok(true);
        }
        let (m, node) = (self.m, self.node);
        let st = &mut *self.st;
        match deco.opcode() {
            Opcode::EXPORT => {
                let node = st.reach.node(node);
                // A declaration's names (re-exports) are attached at the end, to whatever they
                // resolve to.
                if node.decl {
                    return Ok(false);
                }
                let src = node.src;
                let PayloadView::Str(name) = deco.payload() else {
                    return Ok(true);
                };
                if st.cx.opts.internalize && !st.cx.keep_exports.contains(name) {
                    return Ok(false);
                }
                // The output exports a name once, on what it resolves to: a definition
                // exported under several names keeps those it wins.
                let name = name.to_string();
                Ok(st.resolve_name(dst, &name) == Resolved::Def(src))
            }
            Opcode::PIN_IF => {
                let mut ops = deco.operands();
                let (Some(d), Some(c)) = (ops.next().and_then(def_of), ops.next().and_then(def_of))
                else {
                    return Ok(true);
                };
                let ck = st.resolve_ref(dst, SrcDef::new(m, c));
                let now = if st.reach.contains(&ck) {
                    true
                } else if st.cx.opts.library && matches!(ck, Key::Import(_)) {
                    // The condition is an import this partial link leaves unresolved: a later
                    // link may provide (and reach) it, so the pin must survive. Keep both ends,
                    // the condition as an import declaration and the target copied, and with
                    // them the decoration (spec/linking.md, "Pins").
                    st.need(dst, SrcDef::new(m, c), Some(node), false);
                    true
                } else {
                    false
                };
                let pin = PinIf {
                    owner: node,
                    module: m,
                    def: d,
                    cond: c,
                };
                st.reach.pin_if(pin, ck, now);
                Ok(false)
            }
            Opcode::PIN_WEAK => {
                let Some(d) = deco.operands().next().and_then(def_of) else {
                    return Ok(true);
                };
                Ok(st.need(dst, SrcDef::new(m, d), Some(node), true).is_some())
            }
            _ => Ok(true),
        }
    }
}
