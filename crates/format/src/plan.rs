//! The first step of a copy (`copy.rs`): the **plan** of one definition, made where the
//! copies are decided (serially, in their order). It asks the [`CopyMapper`] every question
//! the copy has, in the order the module docs of `copy.rs` give (the definition's own
//! decorations, then the interned constants of re-created source locations, then each pool
//! value or definition its copied instructions name, at first use), and refuses what the
//! debug section makes impossible, so that the build (`build.rs`) needs nothing but the plan
//! and the body and can run on any thread.
//!
//! A compact (3.x) body lists what it names in its table of external references, in
//! first-use order: when no decoration is dropped, the plan asks about each entry in table
//! order without reading an instruction. A flat (1.x, 2.x) body names pool values and
//! definitions in place: the plan scans the copied instructions for them, asking about each
//! distinct one once.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use irkit_core::{Inst, MAX_NESTING, Module, Opcode};

use crate::copy::{CopyMapper, DefCopier, Place, Reader, placed_records, root_is_not_a_definition};
use crate::defview::{DefView, Ref};
use crate::error::ReadError;
use crate::placed::{DebugEntry, DebugRecs};
use crate::schema::{DEBUG_LOC, DEBUG_NAME, DEBUG_SCOPED_LOC};

/// What the copy of one definition asked of its mapper, and everything else its build needs
/// besides the body: made by [`DefCopier::plan`], built by [`crate::build_copies`].
pub struct CopyPlan<'v> {
    pub(crate) copier: DefCopier<'v>,
    pub(crate) def: DefView<'v>,
    pub(crate) target: Inst,
    pub(crate) reader: Reader,
    /// Local ranges not copied (the subtrees of the definition's decorations the mapper did
    /// not keep), in order.
    pub(crate) skipped: Vec<(u32, u32)>,
    /// What each external reference became, by its index in the compact body's table, or by
    /// its slot in `flat` for a flat body (`None`: nothing copied uses it).
    pub(crate) external: Vec<Option<Inst>>,
    /// A flat body's pool values and definitions: their slots in `external`.
    pub(crate) flat: Option<HashMap<Ref, u32>>,
    /// The operands of each re-created `loc` decoration, in debug record order.
    pub(crate) locs: Vec<[Inst; 2]>,
    /// Instructions the build creates (the definition's own exists already).
    pub(crate) count: u32,
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

    /// Where the errors of this copy point.
    pub(crate) fn place(&self) -> Place {
        self.copier.place_of(self.reader, self.def.index())
    }
}

/// One item of an instruction's merged decoration list.
pub(crate) enum Slot {
    /// The position of a debug record.
    Debug(DebugEntry),
    /// The next of the instruction's body decorations (copied or not).
    Body,
}

/// The merge rule of the decoration list of local `owner` (`spec/format.md` §2.3), the one
/// rule of the plan's check and the build: its debug records (`dbg` from `*di` on, while they
/// name `owner`, sorted by position) take their positions; its `body` body decorations fill
/// the others, in order; a record past the end of the merged list (a gap) is refused with
/// `gap(position, end)`. Calls `each` for every item, in list order, and moves `*di` past
/// the owner's records.
pub(crate) fn merge_list<E>(
    owner: u32,
    body: usize,
    dbg: DebugRecs<'_>,
    di: &mut usize,
    mut each: impl FnMut(Slot) -> Result<(), E>,
    gap: impl FnOnce(u32, u32) -> E,
) -> Result<(), E> {
    let mut pos = 0u32;
    let mut left = body;
    loop {
        if let Some(r) = dbg
            .get(*di)
            .filter(|r| r.local == owner && r.position == pos)
        {
            *di += 1;
            pos += 1;
            each(Slot::Debug(r))?;
        } else if left > 0 {
            left -= 1;
            pos += 1;
            each(Slot::Body)?;
        } else {
            return match dbg.get(*di).filter(|r| r.local == owner) {
                Some(r) => Err(gap(r.position, pos)),
                None => Ok(()),
            };
        }
    }
}

/// The error of a debug record past the end of its instruction's decoration list.
pub(crate) fn gap_error(place: &Place, owner: u32, position: u32, end: u32) -> ReadError {
    place.err(
        None,
        format_args!(
            "debug entry for instruction {owner} at decoration position {position}, but the \
             decoration list ends at {end}"
        ),
    )
}

/// The local of the first debug record of `dbg` on an instruction of `d` at the nesting
/// limit (its decoration, once re-inserted, would nest too deep), if any.
fn first_too_deep(d: &DefView<'_>, dbg: DebugRecs<'_>) -> Option<u32> {
    // Local `l` has at most `l` ancestors (each comes before it), and the definition is at
    // depth 1: only a local from `MAX_NESTING - 1` on can be at the limit.
    let from = MAX_NESTING - 1;
    let last = dbg.iter().map(|r| r.local).filter(|&l| l >= from).max()?;
    let at_limit: Vec<bool> = placed_records(d)
        .take(last as usize + 1)
        .skip(from as usize)
        .map(|p| p.at_limit)
        .collect();
    dbg.iter().map(|r| r.local).find(|&l| {
        l.checked_sub(from)
            .and_then(|k| at_limit.get(k as usize))
            .is_some_and(|&a| a)
    })
}

impl<'v> DefCopier<'v> {
    /// Where the errors of a copy by `reader` of archive `index` (`None`: the root) point.
    pub(crate) fn place_of(&self, reader: Reader, index: Option<u32>) -> Place {
        Place {
            file: self.view.file().into(),
            reader,
            index,
        }
    }

    /// Plans the copy of definition `d` (from [`ModuleView::def`](crate::ModuleView::def),
    /// so validated) as `target`, an instruction of `dst` with the definition's opcode and no
    /// body yet: asks `map` the copy's questions (see the module docs of `copy.rs`), interns
    /// the constants of its source locations in `dst`, and refuses what the debug section
    /// makes impossible. Build it with [`crate::build_copies`] ([`DefCopier::copy`] does
    /// both).
    pub fn plan<M: CopyMapper>(
        &self,
        d: DefView<'v>,
        dst: &mut Module,
        target: Inst,
        map: &mut M,
    ) -> Result<CopyPlan<'v>, M::Error> {
        if d.index().is_none() {
            return Err(root_is_not_a_definition(self.view).into());
        }
        self.plan_as(d, dst, target, map, Reader::Copy)
    }

    /// [`DefCopier::plan`] of a definition or (for `materialize`) the root archive, its
    /// errors named for `reader`.
    pub(crate) fn plan_as<M: CopyMapper>(
        &self,
        d: DefView<'v>,
        dst: &mut Module,
        target: Inst,
        map: &mut M,
        reader: Reader,
    ) -> Result<CopyPlan<'v>, M::Error> {
        let place = || self.place_of(reader, d.index());
        if d.index().is_none()
            && (d.root().opcode() != Opcode::MODULE || d.root().subs().any(|(deco, _)| !deco))
        {
            return Err(place()
                .err(
                    None,
                    "the root archive must hold the `module` instruction and only its decorations",
                )
                .into());
        }
        if dst.get(target).map(|t| t.opcode()) != Some(d.root().opcode()) {
            return Err(place()
                .err(
                    None,
                    format_args!(
                        "copy target {target} is not a `{}` instruction",
                        d.root().opcode()
                    ),
                )
                .into());
        }
        let n = d.len();
        // 1. The definition's own decorations, in order.
        let mut skipped: Vec<(u32, u32)> = Vec::new();
        // Locals copied besides the definition's own (`None`: subtree ends that do not nest,
        // only in bytes changed after validation).
        let mut count = n.checked_sub(1);
        for (is_deco, deco) in d.root().subs() {
            if !is_deco {
                break;
            }
            if !map.keep_decoration(dst, deco)? {
                let (s, e) = (deco.local(), deco.subtree_end());
                count = count.and_then(|c| c.checked_sub(e.checked_sub(s)?));
                skipped.push((s, e));
            }
        }
        let Some(mut count) = count else {
            return Err(place()
                .err(None, "the definition's decorations do not nest")
                .into());
        };
        let kept = |l: u32| l < n && !skipped.iter().any(|&(s, e)| (s..e).contains(&l));
        // 2. The debug records: none on an instruction at the nesting limit, none past the end
        // of its decoration list; the constants of the locations re-created on copied
        // instructions interned, in record order.
        let dbg = self.debug_records(d.index());
        let mut locs = Vec::new();
        if dbg.len() > 0 {
            if let (Some(index), Some(local)) = (d.index(), first_too_deep(&d, dbg)) {
                let file = self.view.file().into();
                return Err(crate::validate::debug_too_deep(&file, index, local).into());
            }
            // The records of one instruction are consecutive, by position: (its local, the
            // index of its first record, whether it is copied, whether its list is checked).
            let mut group: Option<(u32, usize, bool, bool)> = None;
            let mut k = 0;
            while let Some(r) = dbg.get(k) {
                let owner = r.local;
                let (_, first, copied, checked) = match group {
                    Some(g) if g.0 == owner => g,
                    _ => (owner, k, kept(owner), false),
                };
                // Records at the positions before any body decoration always fit; once a body
                // decoration comes first, the merged list must reach the record: the rule
                // decides (`merge_list`), once for the instruction.
                let checked = checked || {
                    if r.position as usize > k - first {
                        let body = d.inst(owner).map_or(0, |i| i.decoration_count() as usize);
                        let mut at = first;
                        merge_list(
                            owner,
                            body,
                            dbg,
                            &mut at,
                            |_| Ok(()),
                            |position, end| gap_error(&place(), owner, position, end),
                        )?;
                    }
                    r.position as usize > k - first
                };
                group = Some((owner, first, copied, checked));
                if copied && matches!(r.kind, DEBUG_NAME | DEBUG_LOC | DEBUG_SCOPED_LOC) {
                    count += 1;
                    if r.kind != DEBUG_NAME {
                        let i32t = dst.ty_i32();
                        let line = dst.const_int(i32t, u64::from(r.line));
                        let both =
                            line.and_then(|l| Ok([l, dst.const_int(i32t, u64::from(r.col))?]));
                        locs.push(both.map_err(|e| place().err(None, e))?);
                    }
                }
                k += 1;
            }
        }
        // 3. What the copied instructions name, in first-use order.
        let mut external: Vec<Option<Inst>> = Vec::new();
        let mut flat = None;
        if let Some(c) = d.compact() {
            let k = c.external_count();
            external = vec![None; k as usize];
            let mut ask = |x: u32, dst: &mut Module| -> Result<(), M::Error> {
                let Some(slot) = external.get_mut(x as usize) else {
                    return Err(place()
                        .err(None, format_args!("external reference {x} out of range"))
                        .into());
                };
                if slot.is_none() {
                    *slot = Some(match Ref::decode(c.external_ref(x)) {
                        Some(Ref::Pool(p)) => map.pool(dst, p)?,
                        Some(Ref::Def(i)) => map.def(dst, i)?,
                        _ => {
                            return Err(place()
                                .err(None, format_args!("external reference {x} is not one"))
                                .into());
                        }
                    });
                }
                Ok(())
            };
            if skipped.is_empty() {
                // Every entry is used, in first-use order (checked when the body was
                // validated).
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
                        if let Some(x) = v.checked_sub(c.locals()) {
                            ask(x, dst)?;
                        }
                    }
                }
            }
        } else {
            let mut slots: HashMap<Ref, u32> = HashMap::new();
            for (rec, l) in d.records().zip(0u32..) {
                if !kept(l) {
                    continue;
                }
                let ty = Ref::decode(rec.ty);
                let ops =
                    (rec.ops_start..rec.ops_end).map(|j| d.operand(j).unwrap_or(Ref::Local(0)));
                for r in ty.into_iter().chain(ops) {
                    if matches!(r, Ref::Local(_)) {
                        continue;
                    }
                    let Entry::Vacant(e) = slots.entry(r) else {
                        continue;
                    };
                    let inst = match r {
                        Ref::Pool(p) => map.pool(dst, p)?,
                        Ref::Def(x) => map.def(dst, x)?,
                        Ref::Local(_) => continue,
                    };
                    e.insert(external.len() as u32);
                    external.push(Some(inst));
                }
            }
            flat = Some(slots);
        }
        Ok(CopyPlan {
            copier: *self,
            def: d,
            target,
            reader,
            skipped,
            external,
            flat,
            locs,
            count,
        })
    }
}
