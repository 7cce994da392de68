//! Pool values re-interned in the output: each input's types and constants are interned again
//! in the output module (so equal ones from different inputs merge), memoized per input and
//! iteratively (an entry may refer only to earlier entries). A pool value naming a definition
//! reaches it for the node whose copy needs it; without such a node (the type of a
//! declaration) only an interface or a generic may be named. [`Pools`] owns each input's pool
//! view and what its entries became.

use irkit_core::{Inst, Module, Opcode};
use irkit_format::Ref;

use super::State;
use super::index::{InputId, NodeId, PoolIndex, SrcDef};
use crate::error::LinkError;

/// Per input: its validated pool (fetched on first use), and per entry its value in the
/// output, once re-interned.
pub(super) struct Pools<'a> {
    views: Vec<Option<irkit_format::PoolView<'a>>>,
    memo: Vec<Vec<Option<Inst>>>,
}

impl Pools<'_> {
    /// Nothing re-interned yet, for a link of `inputs` inputs.
    pub(super) fn new(inputs: usize) -> Self {
        Pools {
            views: vec![None; inputs],
            memo: vec![Vec::new(); inputs],
        }
    }

    /// Pool entry `p` of input `m` in the output, if it was re-interned.
    #[inline]
    fn get(&self, m: InputId, p: PoolIndex) -> Option<Inst> {
        self.memo.get(m.idx())?.get(p.idx()).copied().flatten()
    }
}

impl State<'_> {
    /// Pool entry `p` of input `m`, re-interned in the output (memoized, iterative).
    /// `needer` is the node whose copy needs it; without one (types of declarations), a pool
    /// value naming a definition is refused.
    #[inline]
    pub(super) fn pool_value(
        &mut self,
        out: &mut Module,
        m: InputId,
        p: PoolIndex,
        needer: Option<NodeId>,
    ) -> Result<Inst, LinkError> {
        // Most references are to values already re-interned: answered here, inlined into the
        // copy's loop, before anything else.
        if let Some(i) = self.pools.get(m, p) {
            return Ok(i);
        }
        self.pool_value_new(out, m, p, needer)
    }

    /// [`State::pool_value`] of an entry not re-interned yet.
    #[inline(never)]
    fn pool_value_new(
        &mut self,
        out: &mut Module,
        m: InputId,
        p: PoolIndex,
        needer: Option<NodeId>,
    ) -> Result<Inst, LinkError> {
        let mi = m.idx();
        let view = self.cx.view(m);
        let pool = match self.pools.views[mi] {
            Some(p) => p,
            None => {
                let p = view.pool()?;
                self.pools.views[mi] = Some(p);
                p
            }
        };
        if self.pools.memo[mi].is_empty() {
            self.pools.memo[mi] = vec![None; pool.len() as usize];
        }
        let bad = |what: String| {
            LinkError::Read(irkit_format::ReadError {
                file: view.file().into(),
                location: irkit_format::Location::Section("pool".into()),
                cause: irkit_format::ReadCause::Malformed(what),
            })
        };
        let mut stack = vec![(p, false)];
        while let Some(&(top, expanded)) = stack.last() {
            let Some(e) = pool.get(top.index()) else {
                return Err(bad(format!("pool index {top} out of range")));
            };
            if self.pools.memo[mi][top.idx()].is_some() {
                stack.pop();
                continue;
            }
            if !expanded {
                if let Some(last) = stack.last_mut() {
                    last.1 = true;
                }
                for r in e.ty().into_iter().chain(e.operands()) {
                    if let Ref::Pool(q) = r
                        && self.pools.memo[mi].get(q.idx()) == Some(&None)
                    {
                        if q >= top {
                            return Err(bad(format!("entry {top} refers to later entry {q}")));
                        }
                        stack.push((q, false));
                    }
                }
                continue;
            }
            let map = |r: Ref, st: &mut Self, out: &mut Module| -> Result<Inst, LinkError> {
                match r {
                    Ref::Pool(q) => st.pools.memo[mi]
                        .get(q.idx())
                        .copied()
                        .flatten()
                        .ok_or_else(|| bad(format!("entry {top}: unresolved entry {q}"))),
                    Ref::Def(d) => match needer {
                        Some(n) => Ok(st
                            .need(out, SrcDef::new(m, d), Some(n), false)
                            .unwrap_or(out.root())),
                        // An interface standing for `Self` in a requirement's type, or the
                        // generic a type parameter belongs to.
                        None if matches!(
                            st.cx.view(m).def_opcode(d.index()),
                            Some(Opcode::INTERFACE | Opcode::GENERIC)
                        ) =>
                        {
                            Ok(st
                                .need(out, SrcDef::new(m, d), None, false)
                                .unwrap_or(out.root()))
                        }
                        None => Err(bad(format!("entry {top}: a type refers to definition {d}"))),
                    },
                    Ref::Local(_) => Err(bad(format!("entry {top}: local reference"))),
                }
            };
            let ty = match e.ty() {
                Some(t) => Some(map(t, self, out)?),
                None => None,
            };
            let mut ops = Vec::with_capacity(e.operands().len());
            for o in e.operands() {
                ops.push(map(o, self, out)?);
            }
            let inst = out
                .intern(e.opcode(), ty, &ops, e.payload().to_payload())
                .map_err(|err| bad(format!("entry {top} (`{}`): {err}", e.opcode())))?;
            self.pools.memo[mi][top.idx()] = Some(inst);
            stack.pop();
        }
        self.pools.memo[mi]
            .get(p.idx())
            .copied()
            .flatten()
            .ok_or_else(|| bad(format!("pool index {p} out of range")))
    }
}
