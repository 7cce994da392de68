//! Decorations: well formed (payloads, operands), placed where they mean something, and
//! consistent per definition and across the module (one definition per export name). A
//! definition may carry several `export`s (one definition under several names), and an
//! import declaration may carry `export`s too: a *re-export* (spec/ir.md, rule A7).

use std::collections::HashMap;

use crate::{Inst, Opcode};

use super::Cx;

/// Decorations only allowed on top-level definitions.
const TOP_ONLY: [Opcode; 9] = [
    Opcode::EXPORT,
    Opcode::IMPORT,
    Opcode::EXTERN,
    Opcode::STUB,
    Opcode::WEAK,
    Opcode::LINKONCE,
    Opcode::PIN,
    Opcode::PIN_IF,
    Opcode::PIN_WEAK,
];

/// Decorations only allowed on functions.
const FUNC_ONLY: [Opcode; 5] = [
    Opcode::INLINE_HINT,
    Opcode::INLINE_ALWAYS,
    Opcode::INLINE_NEVER,
    Opcode::PURE,
    Opcode::RELAXED_NAN,
];

impl Cx<'_> {
    /// Checks the decoration list of `owner` as a whole: only decorations, and no conflicting
    /// or repeated ones.
    pub(super) fn check_owner_decorations(&mut self, owner: Inst) {
        let Some(d) = self.live(owner) else { return };
        let mut first: Vec<(Opcode, Inst)> = Vec::new();
        for &dec in d.decorations() {
            let Some(op) = self.opc(dec) else { continue };
            if !op.is_known() {
                continue;
            }
            if !op.is_decoration() {
                self.err(
                    dec,
                    format!("`{op}` is in a decoration list but is not a decoration"),
                );
                continue;
            }
            let seen = |x: Opcode| first.iter().find(|(o, _)| *o == x).map(|&(_, i)| i);
            if matches!(op, Opcode::IMPORT | Opcode::EXTERN | Opcode::NAME_HINT)
                && seen(op).is_some()
            {
                self.err(dec, format!("more than one `{op}` on one instruction"));
                continue;
            }
            // `export` and `import` together make a re-export (rule A7): the declaration's
            // export names stand for whatever its import resolves to. Re-exporting a name
            // under itself is a cycle of one.
            let same_name = |other: Opcode| {
                let name = self.m.insts[dec.idx()].payload.as_str()?;
                let prev = seen(other)?;
                (self.m.insts[prev.idx()].payload.as_str() == Some(name)).then_some(())
            };
            let conflict = match op {
                Opcode::EXPORT => same_name(Opcode::IMPORT)
                    .map(|_| "a definition cannot re-export its own import name"),
                Opcode::IMPORT => same_name(Opcode::EXPORT)
                    .map(|_| "a definition cannot re-export its own import name")
                    .or_else(|| {
                        (seen(Opcode::WEAK).or(seen(Opcode::LINKONCE)))
                            .map(|_| "an imported definition cannot be `weak` or `linkonce`")
                    }),
                Opcode::WEAK => seen(Opcode::LINKONCE)
                    .map(|_| "`weak` and `linkonce` are exclusive")
                    .or_else(|| {
                        seen(Opcode::IMPORT)
                            .map(|_| "an imported definition cannot be `weak` or `linkonce`")
                    }),
                Opcode::LINKONCE => seen(Opcode::WEAK)
                    .map(|_| "`weak` and `linkonce` are exclusive")
                    .or_else(|| {
                        seen(Opcode::IMPORT)
                            .map(|_| "an imported definition cannot be `weak` or `linkonce`")
                    }),
                Opcode::SPECIALIZE_ALWAYS => seen(Opcode::DYNAMIC_DISPATCH)
                    .map(|_| "`specialize_always` and `dynamic_dispatch` are exclusive"),
                Opcode::DYNAMIC_DISPATCH => seen(Opcode::SPECIALIZE_ALWAYS)
                    .map(|_| "`specialize_always` and `dynamic_dispatch` are exclusive"),
                _ => None,
            };
            if let Some(msg) = conflict {
                self.err(dec, msg);
            }
            if seen(op).is_none() {
                first.push((op, dec));
            }
        }
    }

    /// One decoration: in a decoration list, on an owner it applies to, with good operands.
    pub(super) fn check_decoration(&mut self, dec: Inst) {
        let Some(d) = self.live(dec) else { return };
        let op = d.opcode;
        let Some(owner) = self.tparent.get(dec.idx()).copied().flatten() else {
            return;
        };
        let Some(od) = self.live(owner) else { return };
        if !od.decorations().contains(&dec) {
            self.err(
                dec,
                format!("decoration `{op}` is in a child list: decorations go in decoration lists"),
            );
            return;
        }
        let owner_op = od.opcode;
        if TOP_ONLY.contains(&op) && !self.is_top_def(owner) {
            let msg = format!(
                "`{op}` is only allowed on top-level definitions, not on {}",
                self.opname(owner)
            );
            self.err(dec, msg);
            return;
        }
        if FUNC_ONLY.contains(&op) && !matches!(owner_op, Opcode::FUNC | Opcode::PROC) {
            let msg = format!(
                "`{op}` is only allowed on a `func`, not on {}",
                self.opname(owner)
            );
            self.err(dec, msg);
            return;
        }
        if matches!(op, Opcode::SPECIALIZE_ALWAYS | Opcode::DYNAMIC_DISPATCH)
            && owner_op != Opcode::GENERIC
        {
            let msg = format!(
                "`{op}` is only allowed on a `generic`, not on {}",
                self.opname(owner)
            );
            self.err(dec, msg);
            return;
        }
        if op == Opcode::EXTERN && !matches!(owner_op, Opcode::FUNC | Opcode::GLOBAL_VAR) {
            let msg = format!(
                "`extern` is only allowed on a `func` or a `global_var`, not on {}",
                self.opname(owner)
            );
            self.err(dec, msg);
            return;
        }
        match op {
            Opcode::WHEN | Opcode::UNLESS => self.check_passive(dec, owner),
            Opcode::PIN | Opcode::PIN_IF | Opcode::PIN_WEAK => {
                for (k, &o) in d.operands.iter().enumerate() {
                    if !self.is_top_def(o) {
                        let msg = format!(
                            "`{op}` operand {k} must be a top-level definition, found {} ({})",
                            self.vname(o),
                            self.opname(o)
                        );
                        self.err(dec, msg);
                    }
                }
            }
            Opcode::LOC => {
                let sig = op.info().map(|i| i.signature);
                let n = d.operands.len();
                if let Some(&scope) = d.operands.get(2) {
                    self.check_loc_scope(dec, owner, scope);
                }
                for (k, &o) in d.operands.iter().enumerate().take(2) {
                    let good = self.live(o).is_some_and(|x| {
                        x.opcode == Opcode::CONST_INT
                            && x.ty.and_then(|t| self.opc(t)) == Some(Opcode::I32)
                    });
                    if !good {
                        // The slot's name in the registry: `line` or `column`.
                        let what = sig.and_then(|s| s.slot_at(k, n)).map_or("?", |s| s.name);
                        let msg = format!(
                            "`loc` operand {k} ({what}) must be an i32 const_int, found {} ({})",
                            self.vname(o),
                            self.opname(o)
                        );
                        self.err(dec, msg);
                    }
                }
            }
            Opcode::INLINE_SCOPE => self.check_inline_scope(dec, owner),
            // Names are unique across definitions: checked once all are checked
            // (`check_export_names`).
            Opcode::EXPORT => self.exports.push((dec, owner)),
            _ => {}
        }
    }

    /// Export names are unique: each `export` of `decos` (well placed, in tree order, with its
    /// owner) names something no earlier one names, and one definition carries a name once.
    pub(super) fn check_export_names(&mut self, decos: &[(Inst, Inst)]) {
        let mut seen: HashMap<&str, Inst> = HashMap::new();
        for &(dec, owner) in decos {
            let Some(name) = self.live(dec).and_then(|d| d.payload.as_str()) else {
                continue;
            };
            match seen.get(name) {
                Some(&prev) if prev != owner => {
                    let msg = format!(
                        "export name {name:?} is already used by {}",
                        self.vname(prev)
                    );
                    self.err(dec, msg);
                }
                Some(_) => {
                    let msg = format!("export name {name:?} twice on one definition");
                    self.err(dec, msg);
                }
                None => {
                    seen.insert(name, owner);
                }
            }
        }
    }
}
