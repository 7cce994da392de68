//! Pool values re-interned in the output: each input's types and constants are interned again
//! in the output module (so equal ones from different inputs merge), memoized per input and
//! iteratively (an entry may refer only to earlier entries). A pool value naming a definition
//! reaches it for the node whose copy needs it; without such a node (the type of a
//! declaration) only an interface or a generic may be named.

use irkit_core::{Inst, Module, Opcode};
use irkit_format::Ref;

use super::State;
use super::index::{DefId, InputId, NodeId, PoolId, SrcDef};
use crate::error::LinkError;

impl State<'_> {
    /// Pool entry `p` of input `m`, re-interned in the output (memoized, iterative).
    /// `needer` is the node whose copy needs it; without one (types of declarations), a pool
    /// value naming a definition is refused.
    #[inline]
    pub(super) fn pool_value(
        &mut self,
        out: &mut Module,
        m: InputId,
        p: PoolId,
        needer: Option<NodeId>,
    ) -> Result<Inst, LinkError> {
        // Most references are to values already re-interned: answered here, inlined into the
        // copy's loop, before anything else.
        if let Some(Some(i)) = self.pool_memo.get(m.idx()).and_then(|v| v.get(p.idx())) {
            return Ok(*i);
        }
        self.pool_value_new(out, m, p, needer)
    }

    /// [`State::pool_value`] of an entry not re-interned yet.
    #[inline(never)]
    fn pool_value_new(
        &mut self,
        out: &mut Module,
        m: InputId,
        p: PoolId,
        needer: Option<NodeId>,
    ) -> Result<Inst, LinkError> {
        let mi = m.idx();
        let p = p.index();
        let view = self.view(m);
        let pool = match self.pools[mi] {
            Some(p) => p,
            None => {
                let p = view.pool()?;
                self.pools[mi] = Some(p);
                p
            }
        };
        if self.pool_memo[mi].is_empty() {
            self.pool_memo[mi] = vec![None; pool.len() as usize];
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
            let Some(e) = pool.get(top) else {
                return Err(bad(format!("pool index {top} out of range")));
            };
            if self.pool_memo[mi][top as usize].is_some() {
                stack.pop();
                continue;
            }
            if !expanded {
                if let Some(last) = stack.last_mut() {
                    last.1 = true;
                }
                for r in e.ty().into_iter().chain(e.operands()) {
                    if let Ref::Pool(q) = r
                        && self.pool_memo[mi].get(q as usize) == Some(&None)
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
                    Ref::Pool(q) => st.pool_memo[mi]
                        .get(q as usize)
                        .copied()
                        .flatten()
                        .ok_or_else(|| bad(format!("entry {top}: unresolved entry {q}"))),
                    Ref::Def(d) => match needer {
                        Some(n) => Ok(st
                            .need(out, SrcDef::new(m, DefId::new(d)), Some(n), false)
                            .unwrap_or(out.root())),
                        // An interface standing for `Self` in a requirement's type, or the
                        // generic a type parameter belongs to.
                        None if matches!(
                            st.view(m).def_opcode(d),
                            Some(Opcode::INTERFACE | Opcode::GENERIC)
                        ) =>
                        {
                            Ok(st
                                .need(out, SrcDef::new(m, DefId::new(d)), None, false)
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
            self.pool_memo[mi][top as usize] = Some(inst);
            stack.pop();
        }
        self.pool_memo[mi]
            .get(p as usize)
            .copied()
            .flatten()
            .ok_or_else(|| bad(format!("pool index {p} out of range")))
    }
}
