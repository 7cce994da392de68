//! The copy of a reached definition into the output: [`State::copy`] validates it, refuses a
//! reached stub without `--link-stubs`, and plans its copy; [`Copying::build_planned`] builds
//! the planned bodies on every core after the walk, in walk order. [`Copying`] owns each
//! input's copier and the plans. The format's copier asks the [`Mapper`] for every reference:
//! a pool value (re-interned, `pool.rs`), a definition (resolved and reached), and whether to
//! keep each of the definition's own decorations (an `export` only on what its name resolves
//! to, a `pin_if` re-attached once its condition is reached, a `pin_weak` only when its target
//! resolves).
//!
//! A body whose build is refused is reported where the walk planned it: its error goes into
//! the link's errors after what the questions about the definition's own decorations
//! reported and before what the questions about its references reported (spec/linking.md
//! §5, "Copying on every core").

use irkit_core::{Inst, Module, Opcode};
use irkit_format::{CopyMapper, CopyPlan, DefCopier, InstView, PayloadView, build_copies};

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
    /// Copies planned, in walk order.
    plans: Vec<CopyPlan<'a>>,
    /// For each plan, where its build's error goes among the link's errors.
    at: Vec<usize>,
}

impl<'a> Copying<'a> {
    /// Nothing copied yet, for a link of `inputs` inputs.
    pub(super) fn new(inputs: usize) -> Self {
        Copying {
            copiers: vec![None; inputs],
            plans: Vec::new(),
            at: Vec::new(),
        }
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
    /// the end of `out`, in walk order ([`build_copies`]), so the result is the same on any
    /// number of threads; returns the instructions built. If bodies are refused, nothing is
    /// built and each refusal is inserted into `errors` where its plan put it (in walk order).
    pub(super) fn build_planned(
        &mut self,
        cx: &Context<'_>,
        out: &mut Module,
        errors: &mut Vec<LinkError>,
    ) -> u64 {
        let plans = std::mem::take(&mut self.plans);
        let at = std::mem::take(&mut self.at);
        let slots = cx.ahead.map(|a| a.take_slots()).unwrap_or_default();
        match build_copies(out, slots, &plans) {
            Ok(insts) => insts,
            Err(failed) => {
                let mut refused: Vec<(usize, LinkError)> = failed
                    .into_iter()
                    .map(|(k, e)| (at.get(k).copied().unwrap_or(errors.len()), e.into()))
                    .collect();
                // Inserted last first (later positions, and at one position later plans),
                // so that each goes before the errors that were at its position and the
                // refusals end in walk order.
                refused.reverse();
                refused.sort_by_key(|&(pos, _)| std::cmp::Reverse(pos));
                for (pos, e) in refused {
                    errors.insert(pos.min(errors.len()), e);
                }
                0
            }
        }
    }
}

impl State<'_> {
    /// Plans the copy of the definition of node `n` into its output instruction, for
    /// [`Copying::build_planned`]. Errors are collected.
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
        let mut mapper = Mapper {
            st: self,
            m,
            node: n,
            refs_at: None,
        };
        let planned = copier.plan(def, out, target, &mut mapper);
        let at = mapper.refs_at;
        match planned {
            Ok(plan) => {
                if let Some(a) = self.cx.ahead {
                    a.plan(plan.count());
                }
                self.copy.at.push(at.unwrap_or(self.errors.len()));
                self.copy.plans.push(plan);
            }
            Err(e) => self.errors.push(e),
        }
    }
}

/// Maps the references of one definition being copied (from input `m`, into node `node`).
struct Mapper<'s, 'a> {
    st: &'s mut State<'a>,
    m: InputId,
    node: NodeId,
    /// How many errors the link had when the first reference was asked about: where a
    /// refusal of the body's build goes.
    refs_at: Option<usize>,
}

impl CopyMapper for Mapper<'_, '_> {
    type Error = LinkError;

    #[inline]
    fn pool(&mut self, dst: &mut Module, index: PoolIndex) -> Result<Inst, LinkError> {
        self.refs_at.get_or_insert(self.st.errors.len());
        self.st.pool_value(dst, self.m, index, Some(self.node))
    }

    fn def(&mut self, dst: &mut Module, index: DefIndex) -> Result<Inst, LinkError> {
        self.refs_at.get_or_insert(self.st.errors.len());
        let src = SrcDef::new(self.m, index);
        Ok(self
            .st
            .need(dst, src, Some(self.node), false)
            .unwrap_or(dst.root()))
    }

    fn keep_decoration(&mut self, dst: &mut Module, deco: InstView<'_>) -> Result<bool, LinkError> {
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
            // Inlining scopes are debug information: without it (`--strip-debug`), they go
            // with the locations that name them.
            Opcode::INLINE_SCOPE => Ok(st.cx.opts.debug_info),
            _ => Ok(true),
        }
    }
}
