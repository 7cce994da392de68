//! The copy of a definition in two steps, so that many can be copied on every core: a
//! **plan**, made where the copies are decided (serially, in their order), asks the
//! [`CopyMapper`] every question the copy has, in the order [`DefCopier::copy`] asks them
//! (which of the definition's own decorations are kept, then the constants of its
//! re-created source locations, then what each external reference becomes, in first-use
//! order); the **build** then makes the instructions from the plan and the body alone, into a
//! [`Fragment`] (its slots reserved in the destination), on any thread
//! ([`Module::append_fragments`]).
//!
//! What the build makes is what [`DefCopier::copy`] makes from the same answers: the same
//! instructions, lists, payloads, types and operands, through the same checks (the fragment's
//! calls check what the module's calls check), merging debug records by the same rule
//! ([`DefCopier::attach_decorations`]). Only compact (3.x) bodies are planned: their table of
//! external references lists, before any instruction is read, everything the mapper is asked
//! about. The plan asks [`CopyMapper::keep_decoration`] only about the definition's own
//! decorations; nested ones are kept (the linker's mapper keeps them all).
//!
//! A build can refuse a body that its plan accepted (an instruction that cannot be created, a
//! debug record out of place). The copy would have refused it too, possibly before asking the
//! mapper what the plan asked; a caller that must report exactly what the copy reports redoes
//! the work with [`DefCopier::copy`] when a plan or a build fails (the linker does).

use irkit_core::{Fragment, Inst, Module, Opcode, Payload};

use crate::copy::{CopyMapper, Decorate, DefCopier, Place, Placed, placed_records};
use crate::defview::{DefView, Ref};
use crate::error::ReadError;
use crate::schema::{DEBUG_LOC, DEBUG_NAME};

/// What the copy of one definition asked of its mapper: made by [`DefCopier::plan`], built by
/// [`DefCopier::build`].
pub struct CopyPlan<'v> {
    def: DefView<'v>,
    target: Inst,
    /// Local ranges not copied (the subtrees of the definition's decorations the mapper did
    /// not keep), in order.
    skipped: Vec<(u32, u32)>,
    /// What each external reference became (`None`: nothing copied uses it).
    external: Vec<Option<Inst>>,
    /// The operands of each re-created `loc` decoration, in debug record order.
    locs: Vec<[Inst; 2]>,
    /// Instructions the build creates (the definition's own exists already).
    count: u32,
}

impl CopyPlan<'_> {
    /// How many instructions the build creates: the definition's own instruction (which
    /// exists already) is not one of them.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The instruction the definition is copied as.
    pub fn target(&self) -> Inst {
        self.target
    }
}

impl<'v> DefCopier<'v> {
    /// Plans the copy of definition `d` (from [`ModuleView::def`](crate::ModuleView::def),
    /// so validated) as `target`, asking `map` what [`DefCopier::copy`] asks it, in the same
    /// order, except that [`CopyMapper::keep_decoration`] is asked only about the
    /// definition's own decorations (nested ones are kept: the result is the copy's for a
    /// mapper that keeps them, as the linker's does). `Ok(None)` (before asking anything) when
    /// the body is not compact or `target` does not have the definition's opcode: copy it with
    /// [`DefCopier::copy`].
    pub fn plan<M: CopyMapper>(
        &self,
        d: DefView<'v>,
        dst: &mut Module,
        target: Inst,
        map: &mut M,
    ) -> Result<Option<CopyPlan<'v>>, M::Error> {
        let (Some(c), Some(index)) = (d.compact(), d.index()) else {
            return Ok(None);
        };
        if dst.get(target).map(|t| t.opcode()) != Some(d.root().opcode()) {
            return Ok(None);
        }
        let place = self.place(index);
        let n = c.locals();
        // 1. The definition's own decorations, in order.
        let mut skipped: Vec<(u32, u32)> = Vec::new();
        // Locals copied besides the definition's own (`None`: subtree ends that do not nest,
        // only in bytes changed after validation).
        let mut count = Some(n - 1);
        for (is_deco, deco) in d.root().subs() {
            if !is_deco {
                break;
            }
            if !map.keep_decoration(dst, 0, deco)? {
                let (s, e) = (deco.local(), deco.subtree_end());
                count = count.and_then(|c| c.checked_sub(e.checked_sub(s)?));
                skipped.push((s, e));
            }
        }
        let Some(mut count) = count else {
            return Err(place
                .err(None, "the definition's decorations do not nest")
                .into());
        };
        let kept = |l: u32| l < n && !skipped.iter().any(|&(s, e)| (s..e).contains(&l));
        // 2. The constants of the source locations re-created on copied instructions.
        let mut locs = Vec::new();
        for r in self.debug_records(Some(index)).iter() {
            if !kept(r.local) || !matches!(r.kind, DEBUG_NAME | DEBUG_LOC) {
                continue;
            }
            count += 1;
            if r.kind == DEBUG_LOC {
                let i32t = dst.ty_i32();
                let line = dst.const_int(i32t, u64::from(r.line));
                let col = line.and_then(|l| Ok([l, dst.const_int(i32t, u64::from(r.col))?]));
                locs.push(col.map_err(|e| place.err(None, e))?);
            }
        }
        // 3. External references, in first-use order among the copied instructions.
        let k = c.external_count();
        let mut external: Vec<Option<Inst>> = vec![None; k as usize];
        let mut ask = |x: u32, dst: &mut Module| -> Result<(), M::Error> {
            let Some(slot) = external.get_mut(x as usize) else {
                return Err(place
                    .err(None, format_args!("external reference {x} out of range"))
                    .into());
            };
            if slot.is_none() {
                *slot = Some(match Ref::decode(c.external_ref(x)) {
                    Some(Ref::Pool(p)) => map.pool(dst, p)?,
                    Some(Ref::Def(i)) => map.def(dst, i)?,
                    _ => {
                        return Err(place
                            .err(None, format_args!("external reference {x} is not one"))
                            .into());
                    }
                });
            }
            Ok(())
        };
        if skipped.is_empty() {
            // Every entry is used, in first-use order (checked when the body was validated).
            for x in 0..k {
                ask(x, dst)?;
            }
        } else {
            for (rec, l) in d.records().zip(0u32..) {
                if !kept(l) {
                    continue;
                }
                let ty = c.ty_index(l as usize);
                for v in ty
                    .into_iter()
                    .chain(c.operand_indices(rec.ops_start, rec.ops_end))
                {
                    if v >= n {
                        ask(v - n, dst)?;
                    }
                }
            }
        }
        Ok(Some(CopyPlan {
            def: d,
            target,
            skipped,
            external,
            locs,
            count,
        }))
    }

    /// Builds planned copy `plan` into `frag`, a fragment of [`Module::append_fragments`]
    /// for the plan's target with [`CopyPlan::count`] slots (see the module docs). Errors
    /// name the file and the definition.
    pub fn build(&self, plan: &CopyPlan<'v>, frag: &mut Fragment<'_>) -> Result<(), ReadError> {
        let d = &plan.def;
        let index = d.index().unwrap_or(0);
        let place = self.place(index);
        let bad = |l: Option<u32>, msg: &dyn std::fmt::Display| place.err(l, msg);
        let Some(c) = d.compact() else {
            return Err(bad(None, &"a planned body is not compact"));
        };
        let target = plan.target;
        let n = d.len() as usize;
        let mut locals: Vec<Option<Inst>> = vec![None; n];
        let mut decos: Vec<(u32, Option<Inst>)> = Vec::new();
        let mut at_limit: Vec<bool> = vec![false; n];
        // Copied instructions: (local, copy, operands range).
        let mut copied: Vec<(u32, Inst, u32, u32)> = Vec::with_capacity(n);
        let mut skips = plan.skipped.iter().copied().peekable();
        let mut skip_until = 0u32;
        for p in placed_records(d) {
            let Placed {
                rec,
                local: l,
                owner,
                is_deco,
                ..
            } = p;
            if let Some(a) = at_limit.get_mut(l as usize) {
                *a = p.at_limit;
            }
            if l < skip_until {
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
            copied.push((l, inst, rec.ops_start, rec.ops_end));
        }
        if skips.next().is_some() {
            return Err(bad(None, &"a skipped range is not a decoration"));
        }
        let mut sink = FragmentSink {
            frag: &mut *frag,
            locs: plan.locs.iter(),
        };
        self.attach_all_decorations(
            &mut sink,
            &locals,
            &mut decos,
            &at_limit,
            Some(index),
            &place,
        )?;
        if sink.locs.next().is_some() {
            return Err(bad(None, &"a planned location was not re-created"));
        }
        // Types and operands: locals by their copies, external references by the plan.
        let nn = n as u32;
        let by_index = |v: u32, l: u32| -> Result<Inst, ReadError> {
            let found = if v < nn {
                locals.get(v as usize).copied().flatten()
            } else {
                plan.external.get((v - nn) as usize).copied().flatten()
            };
            found.ok_or_else(|| {
                bad(
                    Some(l),
                    &format_args!("reference {v}, which is not copied or not planned"),
                )
            })
        };
        let mut ops: Vec<Inst> = Vec::new();
        for (l, inst, start, end) in copied {
            ops.clear();
            let ty = match c.ty_index(l as usize) {
                Some(v) => Some(by_index(v, l)?),
                None => None,
            };
            for v in c.operand_indices(start, end) {
                ops.push(by_index(v, l)?);
            }
            if ty.is_some() || !ops.is_empty() {
                frag.set_type_and_operands(inst, ty, &ops)
                    .map_err(|e| bad(Some(l), &e))?;
            }
        }
        if frag.len() != plan.count as usize {
            return Err(bad(
                None,
                &format_args!("built {} instructions, {} planned", frag.len(), plan.count),
            ));
        }
        Ok(())
    }
}

/// Debug decorations into a fragment, their `loc` operands from the plan.
struct FragmentSink<'a, 'f, I> {
    frag: &'a mut Fragment<'f>,
    locs: I,
}

impl<'a, I: Iterator<Item = &'a [Inst; 2]>> Decorate for FragmentSink<'_, '_, I> {
    fn attach(&mut self, owner: Inst, deco: Inst) -> Result<(), irkit_core::CoreError> {
        self.frag.attach_decoration(owner, deco)
    }

    fn debug(
        &mut self,
        owner: Inst,
        opcode: Opcode,
        loc: Option<(u32, u32)>,
        text: &str,
        place: &Place,
        local: u32,
    ) -> Result<(), ReadError> {
        let ops: &[Inst] = match loc {
            Some(_) => self
                .locs
                .next()
                .ok_or_else(|| place.err(Some(local), "a location that was not planned"))?,
            None => &[],
        };
        let err = |e| place.err(Some(local), e);
        let deco = self
            .frag
            .new_inst(opcode, Payload::Str(text.into()))
            .map_err(err)?;
        if !ops.is_empty() {
            self.frag
                .set_type_and_operands(deco, None, ops)
                .map_err(err)?;
        }
        self.frag.attach_decoration(owner, deco).map_err(err)
    }
}
