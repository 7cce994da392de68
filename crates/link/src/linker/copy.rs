//! The copy of a reached definition into the output: [`State::copy`] validates it, refuses a
//! reached stub without `--link-stubs`, and plans its copy (when the walk splits) or copies it
//! at once; [`State::build_planned`] builds the planned bodies on every core after the walk, in
//! walk order. The format's copier asks the [`Mapper`] for every reference: a pool value
//! (re-interned, `pool.rs`), a definition (resolved and reached), and whether to keep each
//! decoration (an `export` only on what its name resolves to, a `pin_if` re-attached once its
//! condition is reached, a `pin_weak` only when its target resolves).

use irkit_core::{Inst, Module, Opcode};
use irkit_format::{CopyMapper, InstView, PayloadView, Ref};

use super::linkage::linkage;
use super::resolve::Resolved;
use super::{Key, Node, PinIf, State};
use crate::error::LinkError;

impl State<'_> {
    /// Copies the definition of node `n` into its output instruction, or, when the walk
    /// splits, plans the copy for [`State::build_planned`] (a definition the copier does not
    /// plan is copied at once). Errors are collected.
    pub(super) fn copy(&mut self, out: &mut Module, n: u32) {
        let Node {
            src: (m, d),
            out: target,
            parent,
            ..
        } = self.nodes[n as usize];
        let view = self.view(m);
        self.validated.insert((m, d));
        let def = match view.def(d) {
            Ok(def) => def,
            Err(e) => {
                self.def_error(m, d, e);
                return;
            }
        };
        let stub = match self.facts.known(m, d) {
            Some(f) => f.linkage.stub,
            None => linkage(&def).stub,
        };
        if stub && !self.opts.link_stubs {
            let chain = self.chain(parent);
            self.errors.push(LinkError::Stub {
                name: self.display_name(m, d),
                file: self.file(m).to_string(),
                chain,
            });
        }
        let copier = match self.copiers[m as usize] {
            Some(c) => c,
            None => match view.copier(self.opts.debug_info) {
                Ok(c) => {
                    self.copiers[m as usize] = Some(c);
                    c
                }
                Err(e) => {
                    self.errors.push(e.into());
                    return;
                }
            },
        };
        if self.split {
            let mut mapper = Mapper {
                st: self,
                m,
                node: n,
            };
            match copier.plan(def, out, target, &mut mapper) {
                Ok(Some(plan)) => {
                    if let Some(a) = self.ahead {
                        a.plan(plan.count());
                    }
                    self.plans.push((m, plan));
                    return;
                }
                // Not planned (nothing asked yet): copied now.
                Ok(None) => {}
                Err(e) => {
                    self.errors.push(e);
                    self.split_failed = true;
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

    /// Builds the planned copies on every core, each into the arena slots reserved for it at
    /// the end of `out`, in walk order ([`Module::append_fragments`]), so the result is the
    /// same on any number of threads. A refused build sets `split_failed` (the caller redoes
    /// the walk without splitting).
    pub(super) fn build_planned(&mut self, out: &mut Module) {
        let plans = std::mem::take(&mut self.plans);
        if plans.is_empty() {
            return;
        }
        let bodies: Vec<(Inst, u32)> = plans.iter().map(|(_, p)| (p.target(), p.count())).collect();
        let copiers = &self.copiers;
        let slots = self.ahead.map(|a| a.take_slots()).unwrap_or_default();
        let built = out.append_fragments_in(slots, &bodies, |k, fragment| {
            let (m, plan) = &plans[k];
            let copier = copiers.get(*m as usize).copied().flatten().ok_or(())?;
            copier.build(plan, fragment).map_err(|_| ())
        });
        match built {
            Ok(()) => {
                self.stats.insts_copied +=
                    bodies.iter().map(|&(_, n)| u64::from(n) + 1).sum::<u64>();
            }
            Err(_) => self.split_failed = true,
        }
    }
}

/// Maps the references of one definition being copied (input `m`, node `node`).
struct Mapper<'s, 'a> {
    st: &'s mut State<'a>,
    m: u32,
    node: u32,
}

impl CopyMapper for Mapper<'_, '_> {
    type Error = LinkError;

    #[inline]
    fn pool(&mut self, dst: &mut Module, index: u32) -> Result<Inst, LinkError> {
        self.st.pool_value(dst, self.m, index, Some(self.node))
    }

    fn def(&mut self, dst: &mut Module, index: u32) -> Result<Inst, LinkError> {
        Ok(self
            .st
            .need(dst, self.m, index, Some(self.node), false)
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
        let st = &mut *self.st;
        match deco.opcode() {
            Opcode::EXPORT => {
                let node = &st.nodes[self.node as usize];
                // A declaration's names (re-exports) are attached at the end, to whatever they
                // resolve to.
                if node.decl {
                    return Ok(false);
                }
                let src = node.src;
                let PayloadView::Str(name) = deco.payload() else {
                    return Ok(true);
                };
                if st.opts.internalize && !st.keep_exports.contains(name) {
                    return Ok(false);
                }
                // The output exports a name once, on what it resolves to: a definition
                // exported under several names keeps those it wins.
                let name = name.to_string();
                Ok(st.resolve_name(dst, &name) == Resolved::Def(src.0, src.1))
            }
            Opcode::PIN_IF => {
                let mut ops = deco.operands();
                let (Some(d), Some(c)) = (def_ref(ops.next()), def_ref(ops.next())) else {
                    return Ok(true);
                };
                let ck = st.resolve_ref(dst, self.m, c);
                if st.node_of.contains_key(&ck) {
                    st.triggered.push_back((self.node, self.m, d));
                } else if st.opts.library && matches!(ck, Key::Import(_)) {
                    // The condition is an import this partial link leaves unresolved: a later
                    // link may provide (and reach) it, so the pin must survive. Keep both ends,
                    // the condition as an import declaration and the target copied, and with
                    // them the decoration (spec/linking.md, "Pins").
                    st.need(dst, self.m, c, Some(self.node), false);
                    st.triggered.push_back((self.node, self.m, d));
                } else {
                    st.pending
                        .entry(ck)
                        .or_default()
                        .push((self.node, self.m, d));
                }
                st.pin_ifs.push(PinIf {
                    owner: self.node,
                    module: self.m,
                    def: d,
                    cond: c,
                });
                Ok(false)
            }
            Opcode::PIN_WEAK => {
                let Some(d) = def_ref(deco.operands().next()) else {
                    return Ok(true);
                };
                Ok(st.need(dst, self.m, d, Some(self.node), true).is_some())
            }
            _ => Ok(true),
        }
    }
}

fn def_ref(r: Option<Ref>) -> Option<u32> {
    match r {
        Some(Ref::Def(d)) => Some(d),
        _ => None,
    }
}
