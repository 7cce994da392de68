//! The writer's plan of a whole file ([`Writer::prepare`]): every definition walked, encoded
//! and hashed, the pool ordered (each value after the values it depends on), the debug
//! records gathered, and every section made, in memory, before a byte is written.

use super::*;

impl<'m> Writer<'m> {
    /// Everything but the output itself: the walks, encodings, hashes and sections of
    /// [`Writer::run`], held in memory.
    pub(super) fn prepare(mut self, major: u16) -> Result<Prepared, WriteError> {
        let m = self.m;
        let defs = m.top_level().to_vec();
        if defs.len() > REF_MAX_INDEX as usize + 1 {
            return Err(too_large("top-level definitions", defs.len()));
        }
        // 1. Walk every definition on every core (numbering its instructions, finding its
        // debug decorations and the pool values it names), then the root; order the pool.
        // In a 3.x layout each definition is encoded right after its walk, its pool
        // references numbered later (`PoolRefs::Provisional`); a module the walks or the
        // encodings refuse is walked and encoded again in two passes, which report the first
        // problem in module order.
        let fused = major >= 3 && !self.two_pass && m.arena_len() <= REF_MAX_INDEX as usize + 1;
        let (nesting, walked) = rayon::join(
            || match self.limit_nesting {
                true => irkit_core::check_nesting(m),
                false => Ok(()),
            },
            || {
                if fused {
                    match self.scan_encode_defs(&defs, major) {
                        Ok(done) => {
                            return Ok(done.into_iter().map(|(s, e)| (s, Some(e))).collect());
                        }
                        // The two passes start from unnumbered slots.
                        Err(_) => self.slot.clear(),
                    }
                }
                self.scan_defs(&defs)
                    .map(|scans| scans.into_iter().map(|s| (s, None)).collect::<Vec<_>>())
            },
        );
        nesting.map_err(|nesting| WriteError::TooDeep { nesting })?;
        let (scans, early): (Vec<Scan<'m>>, Vec<Option<Encoded<'m>>>) = walked?.into_iter().unzip();
        let root_scan = self.scan(m.root(), OWNER_ROOT, true)?;
        let pool = self.pool_order(scans.iter().chain(std::iter::once(&root_scan)))?;
        for (i, &p) in pool.iter().enumerate() {
            self.slot.set(p, OWNER_POOL, i as u32);
        }
        // 2. Encode: the bodies on every core, then their strings numbered in the
        // deterministic first-use order (pool, root, definitions in order).
        let pool_table = self.encode_pool(&pool)?;
        let root_body = self.encode_body(root_scan.order, OWNER_ROOT, PoolRefs::Numbered)?;
        let root_body = self.adopt_strings(root_body)?;
        let mut orders = Vec::with_capacity(scans.len());
        for scan in scans {
            for (mut rec, text) in scan.debug {
                rec.text = self.debug_strings.intern(text)?;
                self.debug.push(rec);
            }
            orders.push(scan.order);
        }
        // A 3.x body is laid out as soon as it is flattened (its records freed at once).
        let encoded: Vec<Result<Encoded<'m>, WriteError>> = orders
            .into_par_iter()
            .zip(early)
            .enumerate()
            .map(|(d, (order, early))| match early {
                Some(mut e) => {
                    self.number_pool_refs(&mut e.flat, d as u32)?;
                    Ok(e)
                }
                None => self.encode_laid(order, d as u32, major, PoolRefs::Numbered),
            })
            .collect();
        let bodies = encoded
            .into_iter()
            .map(|e| self.adopt_strings(e?))
            .collect::<Result<Vec<Flattened>, WriteError>>()?;
        self.debug
            .sort_unstable_by_key(|r| (r.def, r.local, r.position));
        // Everything numbered is encoded: the slot table (8 bytes an instruction) goes before
        // the hashes, once each definition's signature is read from it.
        let signatures: Vec<u32> = defs.iter().map(|&d| self.signature(d)).collect();
        self.slot = Slots(Vec::new());
        // 3. Keys, hashes, symbols.
        let content = match major {
            3.. => {
                let views = bodies
                    .iter()
                    .map(|b| match &b.laid {
                        Laid::Compact(bytes) => Compact::parse(bytes).map_err(WriteError::Archive),
                        Laid::Records(_) => Err(WriteError::Archive("a body not laid out".into())),
                    })
                    .collect::<Result<Vec<Compact<'_>>, WriteError>>()?;
                content_hashes(
                    &self.strings.table,
                    views.iter().collect(),
                    &pool_table,
                    major,
                )
            }
            _ => {
                let records = bodies
                    .iter()
                    .map(Flattened::records)
                    .collect::<Result<Vec<&Body>, WriteError>>()?;
                content_hashes(&self.strings.table, records, &pool_table, major)
            }
        };
        let symbols = self.symbols(&defs, &signatures, &content)?;
        // 4. The sections before the definitions, the definition index as a placeholder of
        // its final size (its entries are fixed-size), then the definitions streamed.
        let symbol_index = symbol_index(&symbols, &self.strings.table)?;
        let placeholder = DefIndex {
            defs: vec![DefEntry::default(); bodies.len()],
        };
        let mut sections: Vec<(SectionKind, u32, Bytes)> =
            vec![(SectionKind::STRINGS, 0, archive(&self.strings.table)?)];
        // 3.x keeps only the symbol index (spec/format.md §1.4); 2.x had both.
        if major < 3 {
            sections.push((SectionKind::SYMBOLS, 0, archive(&symbols)?));
        }
        sections.extend([
            (SectionKind::SYMBOL_INDEX, 0, symbol_index.into()),
            (SectionKind::POOL, 0, archive(&pool_table)?),
            (SectionKind::DEF_INDEX, 0, archive(&placeholder)?),
            (
                SectionKind::ROOT,
                0,
                body_bytes(root_body.records()?, major)?,
            ),
        ]);
        if !self.debug.is_empty() {
            let table = DebugTable {
                strings: std::mem::take(&mut self.debug_strings.table),
                entries: std::mem::take(&mut self.debug),
            };
            sections.push((SectionKind::DEBUG, SECTION_OPTIONAL, archive(&table)?));
        }
        let opcodes: Vec<u16> = defs.iter().map(|&d| m.opcode(d).0).collect();
        Ok(Prepared {
            major,
            sections,
            bodies,
            content,
            opcodes,
        })
    }

    /// The pool values the tree uses, in a canonical dependency order: the order in which a
    /// walk of the tree (each top-level definition in order, then the root; each instruction
    /// before its decorations and children; its type before its operands) first reaches them,
    /// every value after its type and operands. The order is therefore a function of the
    /// module's structure alone, not of how its pool happened to be built: equal modules
    /// (`irkit_core::equiv::modules_equal`) write equal bytes. Values nothing uses are not
    /// written. `scans` are the walks in that order, each listing the values it names in its
    /// own first-use order.
    pub(super) fn pool_order<'s>(
        &self,
        scans: impl Iterator<Item = &'s Scan<'m>>,
    ) -> Result<Vec<Inst>, WriteError>
    where
        'm: 's,
    {
        let mut state = vec![0u8; self.m.arena_len()];
        let mut out = Vec::new();
        for scan in scans {
            for &p in &scan.pool_refs {
                if state[p.idx()] != 2 {
                    self.visit_pool_value(p, &mut state, &mut out)?;
                }
            }
        }
        if out.len() > REF_MAX_INDEX as usize + 1 {
            return Err(too_large("pool values", out.len()));
        }
        Ok(out)
    }

    /// Lists the pool values `i`'s type and operands name (about once per walk: `recent`).
    pub(super) fn name_pool_values(
        &self,
        i: Inst,
        recent: &mut Recent,
        refs: &mut Vec<Inst>,
    ) -> Result<(), WriteError> {
        let m = self.m;
        let d = m.data(i);
        for &p in d.ty().iter().chain(d.operands()) {
            let p = m.resolve(p);
            if !m.contains(p) || !m.opcode(p).is_hoistable() {
                continue;
            }
            if !m.is_live(p) {
                return Err(WriteError::Unrepresentable(format!(
                    "{i} (`{}`) refers to removed value {p}",
                    m.opcode(i)
                )));
            }
            if !recent.seen(p) {
                refs.push(p);
            }
        }
        Ok(())
    }

    /// Appends `p` and, first, every pool value it depends on, in post-order.
    pub(super) fn visit_pool_value(
        &self,
        p: Inst,
        state: &mut [u8],
        out: &mut Vec<Inst>,
    ) -> Result<(), WriteError> {
        let m = self.m;
        let mut stack = vec![(p, false)];
        while let Some((x, ready)) = stack.pop() {
            if ready {
                state[x.idx()] = 2;
                out.push(x);
                continue;
            }
            match state[x.idx()] {
                2 => continue,
                1 => {
                    return Err(WriteError::Unrepresentable(format!(
                        "pool value {x} (`{}`): it depends on itself",
                        m.opcode(x)
                    )));
                }
                _ => {}
            }
            state[x.idx()] = 1;
            stack.push((x, true));
            let d = m.data(x);
            for &o in d.operands().iter().rev().chain(d.ty().iter()) {
                let o = m.resolve(o);
                if m.contains(o) && m.opcode(o).is_hoistable() && state[o.idx()] != 2 {
                    if !m.is_live(o) {
                        return Err(WriteError::Unrepresentable(format!(
                            "pool value {x} refers to removed value {o}"
                        )));
                    }
                    stack.push((o, false));
                }
            }
        }
        Ok(())
    }

    /// The debug record of decoration `d` if it moves to the debug section (its text not yet
    /// interned).
    pub(super) fn debug_record(
        &self,
        d: Inst,
        owner: u32,
        local: u32,
        position: usize,
    ) -> Option<(DebugRec, &'m str)> {
        let m = self.m;
        let data = m.data(d);
        if data.ty().is_some() || !data.decorations().is_empty() || !data.children().is_empty() {
            return None;
        }
        let Payload::Str(text) = data.payload() else {
            return None;
        };
        let mut scope = 0u32;
        let (kind, line, col) = match data.opcode() {
            Opcode::NAME_HINT if data.operands().is_empty() => (DEBUG_NAME, 0, 0),
            Opcode::LOC => match data.operands() {
                [l, c] => (DEBUG_LOC, self.i32_value(*l)?, self.i32_value(*c)?),
                // In an inlining scope: a decoration of this definition's own instruction,
                // numbered already (the walk numbers it before the definition's children).
                [l, c, s] => {
                    let (o, at) = self.slot.get(*s);
                    if o != owner || at >= DEBUG_SCOPE_LIMIT || m.opcode(*s) != Opcode::INLINE_SCOPE
                    {
                        return None;
                    }
                    scope = at;
                    (DEBUG_SCOPED_LOC, self.i32_value(*l)?, self.i32_value(*c)?)
                }
                _ => return None,
            },
            _ => return None,
        };
        let [s0, s1, s2, _] = scope.to_le_bytes();
        let rec = DebugRec {
            def: owner,
            local,
            position: position as u32,
            kind,
            reserved: [s0, s1, s2],
            text: 0,
            line,
            col,
        };
        Some((rec, &**text))
    }

    /// The value of a live `const_int` of type `i32` that fits 32 bits.
    pub(super) fn i32_value(&self, c: Inst) -> Option<u32> {
        let m = self.m;
        let c = m.resolve(c);
        let d = m.get(c)?;
        if d.is_dead() || d.opcode() != Opcode::CONST_INT {
            return None;
        }
        let t = d.ty()?;
        if m.get(t)?.opcode() != Opcode::I32 {
            return None;
        }
        u32::try_from(d.payload().as_int()?).ok()
    }
}
