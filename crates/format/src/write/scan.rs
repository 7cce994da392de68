//! The walks of the writer: each definition's tree numbered in its own order ([`Writer::scan`]),
//! on every core, with the pool values it names listed; and its body encoded right after its
//! walk when the layout allows (the fused path), else in a second pass.

use super::*;

impl<'m> Writer<'m> {
    /// [`Writer::scan`] of every definition, on every core. A module the walks refuse
    /// (a removed instruction, one reachable twice) is walked again serially, so that the
    /// error reported is the first in module order, whatever the threads did.
    pub(super) fn scan_defs(&self, defs: &[Inst]) -> Result<Vec<Scan<'m>>, WriteError> {
        let scans: Vec<Result<Scan<'m>, WriteError>> = defs
            .par_iter()
            .enumerate()
            .map(|(d, &def)| self.scan(def, d as u32, false))
            .collect();
        if scans.iter().all(Result::is_ok) {
            return scans.into_iter().collect();
        }
        self.slot.clear();
        defs.iter()
            .enumerate()
            .map(|(d, &def)| self.scan(def, d as u32, false))
            .collect()
    }

    /// [`Writer::scan`] of every definition on every core, each encoded right after its walk
    /// with its pool references by arena index (`PoolRefs::Provisional`). Every definition's
    /// own instruction is numbered first, so that a walk may meet references to definitions
    /// not walked yet. Any problem fails the whole (the caller redoes it in two passes, which
    /// report the first problem in module order).
    pub(super) fn scan_encode_defs(
        &self,
        defs: &[Inst],
        major: u16,
    ) -> Result<Vec<(Scan<'m>, Encoded<'m>)>, WriteError> {
        for (d, &def) in defs.iter().enumerate() {
            if !self.slot.claim(def, d as u32, 0) {
                return Err(WriteError::Unrepresentable(format!(
                    "{def}: a definition listed twice"
                )));
            }
        }
        defs.par_iter()
            .enumerate()
            .map(|(d, &def)| {
                let owner = d as u32;
                let mut scan = self.scan(def, owner, false)?;
                let order = std::mem::take(&mut scan.order);
                let e = self.encode_laid(order, owner, major, PoolRefs::Provisional)?;
                Ok((scan, e))
            })
            .collect()
    }

    /// [`Writer::encode_body`], laid out in the layout of major `major` (compact from 3.x on).
    pub(super) fn encode_laid(
        &self,
        order: Vec<Inst>,
        owner: u32,
        major: u16,
        pool: PoolRefs,
    ) -> Result<Encoded<'m>, WriteError> {
        let mut e = self.encode_body(order, owner, pool)?;
        if major >= 3
            && let Laid::Records(body) = &e.flat.laid
        {
            e.flat.laid = Laid::Compact(compact::encode(body)?);
        }
        Ok(e)
    }

    /// Renumbers the pool references of definition `d`'s body encoded with
    /// `PoolRefs::Provisional` (its `ext` entries naming pool values by arena index) by the
    /// pool's numbering.
    pub(super) fn number_pool_refs(&self, flat: &mut Flattened, d: u32) -> Result<(), WriteError> {
        let Laid::Compact(bytes) = &mut flat.laid else {
            return Err(WriteError::Archive(format!(
                "definition {d}: a body not laid out"
            )));
        };
        let renumbered = compact::rewrite_ext(bytes, |r| {
            if r >> 30 != TAG_POOL {
                return Some(r);
            }
            match self.slot.get(Inst::from_index(r & REF_MAX_INDEX)) {
                (OWNER_POOL, p) => Some(pack_ref(TAG_POOL, p)),
                _ => None,
            }
        });
        if renumbered {
            Ok(())
        } else {
            Err(WriteError::Archive(format!(
                "definition {d}: a pool reference to a value not in the pool"
            )))
        }
    }

    /// Walks a tree in pre-order (an instruction, its decorations, its children), numbering
    /// its instructions (slot `(owner, local)`), taking out the decorations that move to the
    /// debug section, and listing the pool values it names. For the root only its decorations
    /// are walked (its children are the definitions).
    pub(super) fn scan(
        &self,
        top: Inst,
        owner: u32,
        is_root: bool,
    ) -> Result<Scan<'m>, WriteError> {
        let m = self.m;
        // Room for a typical function's instructions, the values it names and the siblings
        // waiting on the stack, so that most walks grow nothing (growing from empty copied
        // each list several times, a few percent of a large module's write).
        let mut scan = Scan {
            order: Vec::with_capacity(SCAN_ROOM),
            debug: Vec::new(),
            pool_refs: Vec::with_capacity(SCAN_ROOM / 4),
        };
        let order = &mut scan.order;
        let mut recent = Recent::new();
        // (instruction, whether it moved to the debug section).
        let mut stack = Vec::with_capacity(SCAN_ROOM / 2);
        stack.push((top, false));
        while let Some((i, moved)) = stack.pop() {
            if moved {
                self.name_pool_values(i, &mut recent, &mut scan.pool_refs)?;
                continue;
            }
            let local = order.len() as u32;
            if order.len() > REF_MAX_INDEX as usize {
                return Err(too_large("instructions in one definition", order.len() + 1));
            }
            // A pool value is never a tree instruction (its slot is the pool's).
            // A definition's own instruction may be numbered before its walk
            // ([`Writer::scan_encode_defs`]).
            let numbered = i == top && local == 0 && self.slot.get(i) == (owner, 0);
            if !m.is_live(i)
                || m.opcode(i).is_hoistable()
                || !(numbered || self.slot.claim(i, owner, local))
            {
                return Err(WriteError::Unrepresentable(format!(
                    "{i} (`{}`): removed, a pool value, or reachable twice in the tree",
                    m.opcode(i)
                )));
            }
            order.push(i);
            self.name_pool_values(i, &mut recent, &mut scan.pool_refs)?;
            let data = m.data(i);
            if !(is_root && i == top) {
                stack.extend(data.children().iter().rev().map(|&c| (c, false)));
            }
            for (pos, &d) in data.decorations().iter().enumerate().rev() {
                let debuggable = !is_root && m.is_live(d) && self.slot.get(d).0 == UNMAPPED;
                let record = debuggable
                    .then(|| self.debug_record(d, owner, local, pos))
                    .flatten();
                match record {
                    Some(rec) => {
                        if !self.slot.claim(d, OWNER_DEBUG, 0) {
                            return Err(WriteError::Unrepresentable(format!(
                                "{d} (`{}`): reachable twice in the tree",
                                m.opcode(d)
                            )));
                        }
                        scan.debug.push(rec);
                        stack.push((d, true));
                    }
                    None => stack.push((d, false)),
                }
            }
        }
        Ok(scan)
    }
}
