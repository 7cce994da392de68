//! Encoding records: one instruction's payload and references, a body, the pool, and the
//! symbols, as the archives' plain records (`schema.rs`) with strings numbered in first-use
//! order.

use super::*;

impl<'m> Writer<'m> {
    /// A payload's kind and fields; a string's index is left 0 and its text returned, for
    /// the caller to number.
    pub(super) fn encode_payload(
        &self,
        p: &'m Payload,
        blob: &mut Vec<u8>,
    ) -> Result<(u8, u32, u32, Option<&'m str>), WriteError> {
        Ok(match p {
            Payload::None => (payload_kind::NONE, 0, 0, None),
            Payload::Int(v) => (payload_kind::INT, *v as u32, (*v >> 32) as u32, None),
            Payload::Float(v) => (payload_kind::FLOAT, *v as u32, (*v >> 32) as u32, None),
            Payload::Str(s) => (payload_kind::STR, 0, 0, Some(&**s)),
            Payload::Bytes(b) => {
                let off = blob.len();
                let total = off + b.len();
                if total > u32::MAX as usize {
                    return Err(WriteError::TooLarge {
                        what: "payload bytes in one archive",
                        count: total as u64,
                        max: u32::MAX as u64,
                    });
                }
                blob.extend_from_slice(b);
                (payload_kind::BYTES, off as u32, b.len() as u32, None)
            }
        })
    }

    /// Encodes a reference from `user` (in archive `owner`) to `target`.
    pub(super) fn encode_ref(
        &self,
        owner: u32,
        user: Inst,
        target: Inst,
        pool: PoolRefs,
    ) -> Result<u32, WriteError> {
        let m = self.m;
        let mut t = target;
        if !m.contains(t) {
            return Err(WriteError::Unrepresentable(format!(
                "{user} refers to {t}, which is not an instruction of this module"
            )));
        }
        if self.slot.get(t).0 == UNMAPPED {
            t = m.resolve(t);
        }
        let (o, index) = self.slot.get(t);
        if o == owner && owner != OWNER_POOL {
            return Ok(pack_ref(TAG_LOCAL, index));
        }
        match o {
            OWNER_POOL => Ok(pack_ref(TAG_POOL, index)),
            // A live pool value the walks listed (the walk of `owner` did: it names what
            // `owner` refers to), numbered later.
            UNMAPPED
                if pool == PoolRefs::Provisional && m.opcode(t).is_hoistable() && m.is_live(t) =>
            {
                Ok(pack_ref(TAG_POOL, t.index()))
            }
            d if d < OWNER_DEBUG && index == 0 => Ok(pack_ref(TAG_DEF, d)),
            _ => {
                let why = match o {
                    UNMAPPED => "a removed or detached instruction",
                    OWNER_ROOT => "the module root or one of its decorations",
                    OWNER_DEBUG => "a name_hint or loc decoration",
                    // Unreachable: handled above, or numbered before encoding.
                    OWNER_POOL => "a pool value",
                    _ => "an instruction inside another definition",
                };
                Err(WriteError::Unrepresentable(format!(
                    "the reference from {user} (`{}`) to {t} (`{}`): {why}",
                    m.opcode(user),
                    m.opcode(t)
                )))
            }
        }
    }

    pub(super) fn encode_pool(&mut self, pool: &[Inst]) -> Result<PoolTable, WriteError> {
        let m = self.m;
        let mut table = PoolTable::default();
        for (i, &p) in pool.iter().enumerate() {
            let d = m.data(p);
            let ty = match d.ty() {
                Some(t) => self.encode_ref(OWNER_POOL, p, t, PoolRefs::Numbered)?,
                None => REF_NONE,
            };
            for &o in d.operands() {
                table
                    .operands
                    .push(self.encode_ref(OWNER_POOL, p, o, PoolRefs::Numbered)?);
            }
            // Pool references must point backwards (guaranteed by `pool_order`).
            debug_assert!(
                table
                    .operands
                    .iter()
                    .all(|&r| r >> 30 != TAG_POOL || (r & REF_MAX_INDEX) < i as u32 + 1)
            );
            let (kind, mut lo, hi, text) = self.encode_payload(d.payload(), &mut table.bytes)?;
            if let Some(text) = text {
                lo = self.strings.intern(text)?;
            }
            table.entries.push(PoolRec {
                opcode: d.opcode().0,
                payload_kind: kind,
                reserved: 0,
                ty,
                ops_end: ops_len(table.operands.len())?,
                payload_lo: lo,
                payload_hi: hi,
            });
        }
        Ok(table)
    }

    /// Flattens one numbered tree ([`Writer::scan`]); its strings are numbered by
    /// [`Writer::adopt_strings`].
    pub(super) fn encode_body(
        &self,
        order: Vec<Inst>,
        owner: u32,
        pool: PoolRefs,
    ) -> Result<Encoded<'m>, WriteError> {
        let m = self.m;
        let n = order.len();
        let mut body = Body::default();
        // Subtree sizes, from the parents (pre-order: a parent precedes its subtree).
        let mut size = vec![1u32; n];
        let mut n_decos = vec![0u32; n];
        for l in (1..n).rev() {
            let parent = m.parent(order[l]).map(|p| self.slot.get(p));
            if let Some((po, pl)) = parent
                && po == owner
                && (pl as usize) < l
            {
                size[pl as usize] += size[l];
                // Whether it sits in the decoration list is what counts, not its opcode.
                if m.decorations(order[pl as usize]).contains(&order[l]) {
                    n_decos[pl as usize] += 1;
                }
            }
        }
        body.insts.reserve(n);
        // About two operands an instruction.
        body.operands.reserve(2 * n);
        let mut strings = Vec::new();
        let mut rows = 0u32;
        for (l, &i) in order.iter().enumerate() {
            let d = m.data(i);
            let ty = match d.ty() {
                Some(t) => self.encode_ref(owner, i, t, pool)?,
                None => REF_NONE,
            };
            for &o in d.operands() {
                body.operands.push(self.encode_ref(owner, i, o, pool)?);
            }
            let (kind, lo, hi, text) = self.encode_payload(d.payload(), &mut body.bytes)?;
            if let Some(text) = text {
                strings.push((l as u32, rows, text));
            }
            rows += u32::from(kind != payload_kind::NONE);
            body.insts.push(InstRec {
                opcode: d.opcode().0,
                payload_kind: kind,
                reserved: 0,
                ty,
                ops_end: ops_len(body.operands.len())?,
                end: l as u32 + size[l],
                n_decos: n_decos[l],
                payload_lo: lo,
                payload_hi: hi,
            });
        }
        Ok(Encoded {
            flat: Flattened {
                count: n as u32,
                laid: Laid::Records(body),
            },
            strings,
        })
    }

    /// Numbers an encoded body's strings (in its local order) and puts their indices in.
    pub(super) fn adopt_strings(&mut self, e: Encoded<'m>) -> Result<Flattened, WriteError> {
        let mut flat = e.flat;
        for (l, row, text) in e.strings {
            let index = self.strings.intern(text)?;
            let set = match &mut flat.laid {
                Laid::Records(body) => body
                    .insts
                    .get_mut(l as usize)
                    .map(|rec| rec.payload_lo = index)
                    .is_some(),
                Laid::Compact(bytes) => compact::set_payload_lo(bytes, row as usize, index),
            };
            if !set {
                return Err(WriteError::Archive(format!(
                    "no payload row {row} for the string of instruction {l}"
                )));
            }
        }
        Ok(flat)
    }

    /// Definition `d`'s type as a pool index (`REF_NONE` without one), for its symbols.
    pub(super) fn signature(&self, d: Inst) -> u32 {
        let m = self.m;
        match m.ty(d) {
            Some(t) => match self.slot.get(m.resolve(t)) {
                (OWNER_POOL, p) => p,
                _ => REF_NONE,
            },
            None => REF_NONE,
        }
    }

    pub(super) fn symbols(
        &mut self,
        defs: &[Inst],
        signatures: &[u32],
        content: &[[u8; 32]],
    ) -> Result<SymbolTable, WriteError> {
        let m = self.m;
        let mut out = Vec::new();
        for (i, &d) in defs.iter().enumerate() {
            let signature = signatures.get(i).copied().unwrap_or(REF_NONE);
            for &x in m.decorations(d) {
                let role = match m.opcode(x) {
                    Opcode::EXPORT => 0,
                    Opcode::IMPORT => 1,
                    Opcode::EXTERN => 2,
                    _ => continue,
                };
                let Payload::Str(name) = m.payload(x) else {
                    continue;
                };
                out.push((
                    &**name,
                    SymbolRec {
                        name: self.strings.intern(name)?,
                        role,
                        reserved: 0,
                        def_opcode: m.opcode(d).0,
                        def: i as u32,
                        signature,
                        hash: content[i],
                    },
                ));
            }
        }
        out.sort_by(|a, b| {
            (a.0.as_bytes(), a.1.role, a.1.def).cmp(&(b.0.as_bytes(), b.1.role, b.1.def))
        });
        Ok(SymbolTable {
            symbols: out.into_iter().map(|(_, s)| s).collect(),
        })
    }
}
