//! The second step of a copy (`copy.rs`): the **build** of planned copies
//! ([`build_copies`]), each body from its plan and its archive alone, into the arena slots
//! reserved for it at the end of the destination ([`Module::append_fragments`]), every
//! body on its own core. A body is built top-down: every instruction created and appended to
//! its parent in pre-order (a dropped decoration's subtree skipped), then the decorations
//! attached, body and debug ones merged by the one rule ([`merge_list`]), then every type and
//! operand set, references by the plan's answers. The fragment's calls check what the
//! module's own constructors check, through the same functions. [`DefCopier::copy`] is the
//! plan and the build of one definition (here, so that the plan, in `plan.rs`, and the API, in
//! `copy.rs`, need not know the build).

use irkit_core::{Fragment, FragmentsError, Inst, Module, Opcode, Payload, Slots};

use crate::copy::{CopyMapper, CopySummary, DefCopier, Placed, placed_records};
use crate::defview::{DefView, Ref};
use crate::error::ReadError;
use crate::flat::FileStrings;
use crate::placed::DebugEntry;
use crate::plan::{CopyPlan, Slot, gap_error, merge_list};
use crate::schema::{DEBUG_LOC, DEBUG_NAME, DEBUG_SCOPED_LOC};

/// Builds the planned copies `plans` into `dst` (the module they were planned for), each body
/// into arena slots reserved at the end of the arena in order (taking slots made ahead from
/// `slots`), on every core: the module is the same on any number of threads. Returns the
/// instructions created (each definition's own counted, as [`crate::CopySummary`] counts
/// them). If any body is refused, nothing is built and every refused plan is returned, by
/// index, in order.
pub fn build_copies(
    dst: &mut Module,
    slots: Slots,
    plans: &[CopyPlan<'_>],
) -> Result<u64, Vec<(usize, ReadError)>> {
    let Some(first) = plans.first() else {
        return Ok(0);
    };
    let bodies: Vec<(Inst, u32)> = plans.iter().map(|p| (p.target, p.count)).collect();
    let built = dst.append_fragments(slots, &bodies, |k, frag| match plans.get(k) {
        Some(plan) => plan.build(frag),
        None => Ok(()),
    });
    match built {
        Ok(()) => Ok(bodies.iter().map(|&(_, n)| u64::from(n) + 1).sum()),
        Err(failed) => Err(failed
            .into_iter()
            .map(|e| match e {
                FragmentsError::Build { index, error } => (index, error),
                FragmentsError::Module { index, error } => {
                    // `index` names one of `bodies`: one per plan.
                    let p = plans.get(index).unwrap_or(first);
                    let target = p.target;
                    let msg = format_args!("copy target {target}: {error}");
                    (index, p.place().err(None, msg))
                }
            })
            .collect()),
    }
}

impl CopyPlan<'_> {
    /// Builds this plan into `frag`, a fragment of its target with [`CopyPlan::count`] slots.
    fn build(&self, frag: &mut Fragment<'_>) -> Result<(), ReadError> {
        let d = &self.def;
        let bad = |l: Option<u32>, msg: &dyn std::fmt::Display| self.place().err(l, msg);
        let target = self.target;
        let n = d.len() as usize;
        // Local index -> its copy (`None`: in a dropped decoration's subtree).
        let mut locals: Vec<Option<Inst>> = vec![None; n];
        // Decorations in pre-order: (owner local, the copy or `None` when dropped).
        let mut decos: Vec<(u32, Option<Inst>)> = Vec::new();
        // Copied instructions: (local, copy, raw type reference, operands range).
        let mut copied: Vec<(u32, Inst, u32, u32, u32)> = Vec::with_capacity(n);
        let mut skips = self.skipped.iter().copied().peekable();
        let mut skip_until = 0u32;
        for p in placed_records(d) {
            let Placed {
                rec,
                local: l,
                owner,
                is_deco,
                ..
            } = p;
            if l < skip_until {
                // Not copied, but it holds its place in its owner's decoration list, which
                // the owner's debug records count (spec/format.md §2.3).
                if is_deco {
                    decos.push((owner, None));
                }
                continue;
            }
            if let Some(&(start, end)) = skips.peek()
                && start == l
            {
                skips.next();
                if !(is_deco && owner == 0 && end == rec.end) {
                    return Err(bad(Some(l), &"a skipped range is not a decoration"));
                }
                decos.push((owner, None));
                skip_until = end;
                continue;
            }
            let payload = d.payload_of(&rec).to_payload();
            let inst = if l == 0 {
                if !payload.is_none() {
                    frag.set_owner_payload(payload);
                }
                target
            } else {
                let opcode = Opcode(rec.opcode);
                let made = if is_deco {
                    frag.new_inst(opcode, payload)
                } else {
                    let parent = locals.get(owner as usize).copied().flatten();
                    frag.append_new_child(parent.unwrap_or(target), opcode, payload)
                };
                let inst = made.map_err(|e| bad(Some(l), &e))?;
                if is_deco {
                    decos.push((owner, Some(inst)));
                }
                inst
            };
            if let Some(slot) = locals.get_mut(l as usize) {
                *slot = Some(inst);
            }
            copied.push((l, inst, rec.ty, rec.ops_start, rec.ops_end));
        }
        if skips.next().is_some() {
            return Err(bad(None, &"a skipped range is not a decoration"));
        }
        self.attach_decorations(frag, &locals, &mut decos)?;
        // Types and operands: locals by their copies, the rest by the plan's answers.
        let local = |x: u32, l: u32| -> Result<Inst, ReadError> {
            locals.get(x as usize).copied().flatten().ok_or_else(|| {
                bad(
                    Some(l),
                    &format_args!("reference to local {x}, which is not copied"),
                )
            })
        };
        let answer = |slot: Option<u32>, l: u32| -> Result<Inst, ReadError> {
            slot.and_then(|s| self.external.get(s as usize).copied().flatten())
                .ok_or_else(|| bad(Some(l), &"a reference that was not planned"))
        };
        let mut ops: Vec<Inst> = Vec::new();
        let compact = d.compact();
        for (l, inst, ty, start, end) in copied {
            ops.clear();
            let ty = if let Some(c) = &compact {
                let by_index = |v: u32| match v.checked_sub(c.locals()) {
                    None => local(v, l),
                    Some(x) => answer(Some(x), l),
                };
                for v in c.operand_indices(start, end) {
                    ops.push(by_index(v)?);
                }
                c.ty_index(l as usize).map(by_index).transpose()?
            } else {
                let by_ref = |r: Ref| match r {
                    Ref::Local(x) => local(x, l),
                    _ => answer(self.flat.as_ref().and_then(|f| f.get(&r).copied()), l),
                };
                for j in start..end {
                    ops.push(by_ref(d.operand(j).unwrap_or(Ref::Local(0)))?);
                }
                Ref::decode(ty).map(by_ref).transpose()?
            };
            if ty.is_some() || !ops.is_empty() {
                frag.set_type_and_operands(inst, ty, &ops)
                    .map_err(|e| bad(Some(l), &e))?;
            }
        }
        if frag.len() != self.count as usize {
            return Err(bad(
                None,
                &format_args!("built {} instructions, {} planned", frag.len(), self.count),
            ));
        }
        Ok(())
    }

    /// Attaches the body's decorations (`decos`, in pre-order) and re-creates the debug ones,
    /// merged by position by [`merge_list`], owner by owner in local order.
    fn attach_decorations(
        &self,
        frag: &mut Fragment<'_>,
        locals: &[Option<Inst>],
        decos: &mut [(u32, Option<Inst>)],
    ) -> Result<(), ReadError> {
        // Decorations of decorations (refused by the verifier, but representable) would
        // interleave owners: group by owner, keeping each owner's order.
        decos.sort_by_key(|&(owner, _)| owner);
        let dbg = self.copier.debug_records(self.def.index());
        let strings = self.copier.debug.map(|t| t.strings);
        let mut locs = self.locs.iter();
        let (mut bi, mut di) = (0usize, 0usize);
        loop {
            // The next owner in pre-order (local index order) with anything to attach.
            let owner = match (decos.get(bi), dbg.get(di)) {
                (Some(&(a, _)), Some(r)) => a.min(r.local),
                (Some(&(a, _)), None) => a,
                (None, Some(r)) => r.local,
                (None, None) if locs.next().is_some() => {
                    return Err(self
                        .place()
                        .err(None, "a planned location was not re-created"));
                }
                (None, None) => return Ok(()),
            };
            let body = decos
                .get(bi..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&(a, _)| a == owner)
                .count();
            let owner_inst = locals.get(owner as usize).copied().flatten();
            let err = |e: &dyn std::fmt::Display| self.place().err(Some(owner), e);
            let each = |slot: Slot| -> Result<(), ReadError> {
                match slot {
                    Slot::Body => {
                        let copy = decos.get(bi).and_then(|&(_, c)| c);
                        bi += 1;
                        if let (Some(o), Some(c)) = (owner_inst, copy) {
                            frag.attach_decoration(o, c).map_err(|e| err(&e))?;
                        }
                    }
                    Slot::Debug(r) => {
                        if let Some(o) = owner_inst {
                            let dbg = DebugCx {
                                strings,
                                locals,
                                err: &err,
                            };
                            debug_decoration(frag, o, &r, &dbg, &mut locs)?;
                        }
                    }
                }
                Ok(())
            };
            merge_list(owner, body, dbg, &mut di, each, |position, end| {
                gap_error(&self.place(), owner, position, end)
            })?;
        }
    }
}

/// What re-creating debug decorations reads: the debug section's strings, the copies of the
/// body's locals (a scope named by a kind-2 record), and how an error names its place.
struct DebugCx<'a, 's> {
    strings: Option<FileStrings<'s>>,
    locals: &'a [Option<Inst>],
    err: &'a dyn Fn(&dyn std::fmt::Display) -> ReadError,
}

/// Re-creates the decoration of debug record `r` on `owner` (a `loc` takes its line and column
/// from `locs`, the plan's, and, in an inlining scope, the copy of the scope's local as its
/// third operand: none if the scope was not copied); a kind from a newer minor version is
/// skipped (it held its place in the list).
fn debug_decoration<'a>(
    frag: &mut Fragment<'_>,
    owner: Inst,
    r: &DebugEntry,
    cx: &DebugCx<'_, '_>,
    locs: &mut impl Iterator<Item = &'a [Inst; 2]>,
) -> Result<(), ReadError> {
    let err = cx.err;
    let opcode = match r.kind {
        DEBUG_NAME => Opcode::NAME_HINT,
        DEBUG_LOC | DEBUG_SCOPED_LOC => Opcode::LOC,
        _ => return Ok(()),
    };
    let text = cx.strings.and_then(|s| s.str_at(r.text)).unwrap_or("");
    let mut ops: Vec<Inst> = Vec::new();
    if opcode == Opcode::LOC {
        let lc = locs
            .next()
            .ok_or_else(|| err(&"a location that was not planned"))?;
        ops.extend_from_slice(lc);
        if r.kind == DEBUG_SCOPED_LOC
            && let Some(scope) = cx.locals.get(r.scope as usize).copied().flatten()
        {
            ops.push(scope);
        }
    }
    let core = |e: irkit_core::CoreError| err(&e);
    let deco = frag
        .new_inst(opcode, Payload::Str(text.into()))
        .map_err(core)?;
    if !ops.is_empty() {
        frag.set_type_and_operands(deco, None, &ops).map_err(core)?;
    }
    frag.attach_decoration(owner, deco).map_err(core)
}

impl<'v> DefCopier<'v> {
    /// Copies definition `d` (from [`crate::ModuleView::def`], so already validated) into `dst`, as
    /// the already created instruction `target`, which must have the definition's opcode and
    /// no body yet (no children, no decorations; where it sits in `dst`'s tree is up to the
    /// caller): sets `target`'s payload, type and operands, and creates its decorations and
    /// children. The plan ([`DefCopier::plan`]) then the build ([`build_copies`]) of this one
    /// definition; see the module docs for what the mapper is asked, in which order, and what
    /// is refused. Errors name the file and the definition.
    pub fn copy<M: CopyMapper>(
        &self,
        d: DefView<'v>,
        dst: &mut Module,
        target: Inst,
        map: &mut M,
    ) -> Result<CopySummary, M::Error> {
        let plan = self.plan(d, dst, target, map)?;
        match build_copies(dst, Slots::default(), std::slice::from_ref(&plan)) {
            Ok(insts) => Ok(CopySummary { insts }),
            Err(mut failed) => Err(failed.swap_remove(0).1.into()),
        }
    }
}
