//! Bodies built on every core, in place: how a copier fills definitions
//! ([`Module::append_fragments`]; `irkit-format` copies every definition this way, one or
//! many at once). Each body belongs to an existing instruction of the module, its **owner** (a
//! definition's own instruction); the module reserves each body's arena slots at its end, in
//! order, and one [`Fragment`] per body fills them, all at once, each seeing only its own
//! slots and the instructions the module had before (pool values, the owners).
//!
//! A fragment is filled top-down: every instruction created and appended to its parent in
//! pre-order, decorations attached, then types and operands set once every instruction they
//! may name exists. Each call refuses what the module's own constructors refuse
//! ([`Module::new_inst`], [`Module::append_child`], [`Module::attach_decoration`],
//! [`Module::set_type`], [`Module::set_operands_from`]), with the same errors, by calling the
//! same checks (`module/checks.rs`); only which handles it may touch differs. What the owner
//! receives (its children, decorations, payload, type and operands) is given to it once every
//! body is built.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::module::checks::{
    check_attach, check_child_kind, check_decoration_kind, check_refs, follow, followed,
};
use crate::module::{InstData, Operands};
use crate::{CoreError, Inst, Module, Opcode, Payload};

/// One body being built in its reserved slots (see the module docs).
#[derive(Debug)]
pub struct Fragment<'a> {
    owner: Inst,
    /// The owner's opcode (a mutable instruction: checked before any body is built).
    owner_opcode: Opcode,
    /// The arena index of the first slot.
    base: u32,
    /// The reserved slots, `len` of them filled.
    slots: &'a mut [InstData],
    len: usize,
    /// How many instructions the module had before the bodies: what a body may name besides
    /// its own instructions.
    before: u32,
    forward: &'a HashMap<Inst, Inst>,
    /// What the owner receives.
    children: Vec<Inst>,
    decorations: Vec<Inst>,
    payload: Option<Payload>,
    typed: Option<(Option<Inst>, Operands)>,
}

impl Fragment<'_> {
    /// The instructions built so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no instruction was built.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The position of the fragment's instruction `i` among its slots, if `i` is one.
    fn own(&self, i: Inst) -> Option<usize> {
        let k = i.index().checked_sub(self.base)? as usize;
        (k < self.len).then_some(k)
    }

    /// Whether `i` names an instruction a type or an operand may refer to: one of the
    /// module's before the bodies, or this body's.
    fn names(&self, i: Inst) -> bool {
        i.index() < self.before || self.own(i).is_some()
    }

    /// `i` as a parent or an owner in this body: the owner, or one of its slots.
    fn host(&self, i: Inst) -> Result<Option<usize>, CoreError> {
        match self.own(i) {
            Some(k) => Ok(Some(k)),
            None if i == self.owner => Ok(None),
            None => Err(CoreError::BadHandle(i)),
        }
    }

    /// Creates a detached instruction without type or operands: [`Module::new_inst`]. Past
    /// the reserved slots, [`CoreError::TooManyInstructions`].
    pub fn new_inst(&mut self, opcode: Opcode, payload: Payload) -> Result<Inst, CoreError> {
        Module::check_creatable(opcode)?;
        let Some(slot) = self.slots.get_mut(self.len) else {
            return Err(CoreError::TooManyInstructions);
        };
        *slot = InstData::new(opcode, None, Operands::new(), payload);
        let inst = Inst::from_index(self.base + self.len as u32);
        self.len += 1;
        Ok(inst)
    }

    /// Creates an instruction and appends it as the last child of `parent` (the owner or an
    /// instruction of this body): [`Module::new_inst`] then [`Module::append_child`].
    pub fn append_new_child(
        &mut self,
        parent: Inst,
        opcode: Opcode,
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        let child = self.new_inst(opcode, payload)?;
        let at = self.host(parent)?;
        let k = self.len - 1;
        // A fresh instruction is neither the root, nor `parent`, nor an ancestor of it.
        check_attach(parent, child, &self.slots[k], false, || true)?;
        check_child_kind(parent, child, opcode)?;
        match at {
            Some(p) => self.slots[p].push_child(child),
            None => self.children.push(child),
        }
        self.slots[k].parent = Some(parent);
        Ok(child)
    }

    /// Whether `a` is `b` or one of its ancestors within the body (the owner's ancestors
    /// are outside it).
    fn is_ancestor(&self, a: Inst, b: Inst) -> bool {
        let mut cur = Some(b);
        // Bounded by the body's size: parent links only go up.
        for _ in 0..=self.len {
            match cur {
                Some(c) if c == a => return true,
                Some(c) => cur = self.own(c).and_then(|k| self.slots[k].parent),
                None => return false,
            }
        }
        false
    }

    /// Attaches a detached instruction of this body to `owner` (the fragment's owner or one
    /// of its instructions) as its last decoration: [`Module::attach_decoration`].
    pub fn attach_decoration(&mut self, owner: Inst, deco: Inst) -> Result<(), CoreError> {
        // Checked in the module's order: the owner, then the decoration.
        let at = self.host(owner)?;
        let Some(k) = self.own(deco) else {
            return Err(CoreError::BadHandle(deco));
        };
        check_attach(owner, deco, &self.slots[k], false, || {
            self.is_ancestor(deco, owner)
        })?;
        let owner_opcode = at.map_or(self.owner_opcode, |o| self.slots[o].opcode);
        check_decoration_kind(owner, owner_opcode, deco, self.slots[k].opcode)?;
        match at {
            Some(o) => self.slots[o].push_decoration(deco),
            None => self.decorations.push(deco),
        }
        self.slots[k].parent = Some(owner);
        Ok(())
    }

    /// Sets the type and operands of the owner or of an instruction of this body:
    /// [`Module::set_type`] then [`Module::set_operands_from`].
    pub fn set_type_and_operands(
        &mut self,
        inst: Inst,
        ty: Option<Inst>,
        operands: &[Inst],
    ) -> Result<(), CoreError> {
        let at = self.host(inst)?;
        check_refs(ty, operands, |i| self.names(i))?;
        let ty = ty.map(|t| follow(self.forward, t));
        let operands = followed(self.forward, operands);
        match at {
            Some(k) => {
                let d = &mut self.slots[k];
                d.ty = ty;
                d.operands = operands;
            }
            None => self.typed = Some((ty, operands)),
        }
        Ok(())
    }

    /// Sets the owner's payload: [`Module::set_payload`].
    pub fn set_owner_payload(&mut self, payload: Payload) {
        self.payload = Some(payload);
    }
}

/// Why [`Module::append_fragments`] appended nothing (one of the errors it returns).
#[derive(Debug)]
pub enum FragmentsError<E> {
    /// Body `index` cannot be appended: its owner is not a live, mutable instruction without
    /// children or decorations (or owns an earlier body too), its slots are past the arena's
    /// limit, or it filled fewer slots than it reserved.
    Module {
        /// The body.
        index: usize,
        /// Why.
        error: CoreError,
    },
    /// Building body `index` failed.
    Build {
        /// The body.
        index: usize,
        /// The builder's error.
        error: E,
    },
}

/// A free arena slot: what [`Module::append_fragments`] reserves before a body fills it.
fn slot() -> InstData {
    InstData::new(Opcode::MODULE, None, Operands::new(), Payload::None)
}

/// Arena slots made ahead of [`Module::append_fragments`], typically on a core that would
/// otherwise wait while the bodies are being planned. Making a slot is the first write to its
/// memory, so the kernel's zeroing of fresh pages is paid then, not while the bodies are
/// built. The room is reserved once (no slot is ever moved); slots are made up to it.
#[derive(Debug, Default)]
pub struct Slots {
    insts: Vec<InstData>,
}

impl Slots {
    /// Room for `n` slots, none made yet; `None` if the allocator refuses that much.
    pub fn with_room(n: usize) -> Option<Slots> {
        let mut insts = Vec::new();
        insts.try_reserve_exact(n).ok()?;
        Some(Slots { insts })
    }

    /// Makes slots until there are `n`, or as many as the room holds.
    pub fn fill_to(&mut self, n: usize) {
        let n = n.min(self.insts.capacity());
        while self.insts.len() < n {
            self.insts.push(slot());
        }
    }

    /// The slots made.
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// Whether no slot is made.
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }
}

impl Module {
    /// Appends one body per `(owner, count)` of `bodies`: `count` arena slots each, at the
    /// end of the arena in order, filled by `build(k, fragment)` for body `k`, every body on
    /// its own core (rayon); then gives each owner what its body gave it. The module is the
    /// same on any number of threads. On any error nothing is appended and no owner changes:
    /// a refused owner (checked before anything is built, the first reported; each owner gets
    /// one body), or bodies that fail to build or fill fewer slots than they reserved (every
    /// one reported, in order: every body is built).
    ///
    /// The arena slots come from `slots` (made ahead, see [`Slots`]; `Slots::default()` for
    /// none) where it holds enough: the module's instructions move to its front (same handles)
    /// and the bodies fill the slots after them; slots still missing are made here, extra ones
    /// dropped. The module is the same either way.
    pub fn append_fragments<E, F>(
        &mut self,
        slots: Slots,
        bodies: &[(Inst, u32)],
        build: F,
    ) -> Result<(), Vec<FragmentsError<E>>>
    where
        E: Send,
        F: Fn(usize, &mut Fragment<'_>) -> Result<(), E> + Sync,
    {
        let mut owners = std::collections::HashSet::with_capacity(bodies.len());
        for (index, &(owner, _)) in bodies.iter().enumerate() {
            let refused = |error| vec![FragmentsError::Module { index, error }];
            self.check_mutable(owner).map_err(refused)?;
            if !owners.insert(owner) {
                return Err(refused(CoreError::BadAttach {
                    parent: owner,
                    child: owner,
                    why: "it is given two bodies",
                }));
            }
            let d = self.data(owner);
            if !d.is_leaf() {
                return Err(refused(CoreError::BadAttach {
                    parent: owner,
                    child: owner,
                    why: "its body is built in place, for an instruction without one",
                }));
            }
        }
        let opcodes: Vec<Opcode> = bodies.iter().map(|&(o, _)| self.opcode(o)).collect();
        let before = self.insts.len();
        let total: u64 = bodies.iter().map(|&(_, n)| u64::from(n)).sum();
        if before as u64 + total > u64::from(Inst::MAX_INDEX) + 1 {
            return Err(vec![FragmentsError::Module {
                index: bodies.len().saturating_sub(1),
                error: CoreError::TooManyInstructions,
            }]);
        }
        let need = before + total as usize;
        let mut ahead = slots.insts;
        if ahead.capacity() >= need && ahead.len() >= before {
            for (slot, inst) in ahead.iter_mut().zip(self.insts.drain(..)) {
                *slot = inst;
            }
            ahead.truncate(need);
            self.insts = ahead;
        }
        // The slots still missing, written on every core before the bodies fill them.
        let missing = need - self.insts.len();
        self.insts
            .par_extend((0..missing).into_par_iter().map(|_| slot()));
        let Module { insts, forward, .. } = self;
        let mut tail = &mut insts[before..];
        let mut slices = Vec::with_capacity(bodies.len());
        let mut base = before as u32;
        for &(owner, n) in bodies {
            let (slots, rest) = tail.split_at_mut(n as usize);
            tail = rest;
            slices.push((owner, base, slots));
            base += n;
        }
        let forward = &*forward;
        let built: Vec<Result<Fragment<'_>, FragmentsError<E>>> = slices
            .into_par_iter()
            .enumerate()
            .map(|(index, (owner, base, slots))| {
                let mut f = Fragment {
                    owner,
                    owner_opcode: opcodes[index],
                    base,
                    slots,
                    len: 0,
                    before: before as u32,
                    forward,
                    children: Vec::new(),
                    decorations: Vec::new(),
                    payload: None,
                    typed: None,
                };
                build(index, &mut f).map_err(|error| FragmentsError::Build { index, error })?;
                if f.len != f.slots.len() {
                    return Err(FragmentsError::Module {
                        index,
                        error: CoreError::IndexOutOfRange {
                            inst: owner,
                            index: f.len,
                            len: f.slots.len(),
                        },
                    });
                }
                Ok(f)
            })
            .collect();
        let mut owners = Vec::with_capacity(built.len());
        let mut failed = Vec::new();
        for b in built {
            match b {
                Ok(f) => owners.push((f.owner, f.children, f.decorations, f.payload, f.typed)),
                Err(e) => failed.push(e),
            }
        }
        if !failed.is_empty() {
            self.insts.truncate(before);
            return Err(failed);
        }
        for (owner, children, decorations, payload, typed) in owners {
            let d = &mut self.insts[owner.idx()];
            d.set_subs(decorations, children);
            if let Some(p) = payload {
                d.payload = p.into();
            }
            if let Some((t, ops)) = typed {
                d.ty = t;
                d.operands = ops;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::checks::Fill;

    /// The errors of a refused `append_fragments` (none if it succeeded).
    fn errs<E>(r: &Result<(), Vec<FragmentsError<E>>>) -> &[FragmentsError<E>] {
        r.as_ref().err().map_or(&[], |v| v)
    }

    /// A module with two function definitions to fill, and the constant their bodies use.
    fn owners() -> (Module, [Inst; 2], Inst, Inst) {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let seven = m.const_int(i32t, 7).unwrap();
        let root = m.root();
        let f = m
            .append_new_child(root, Opcode::FUNC, Payload::None)
            .unwrap();
        let g = m
            .append_new_child(root, Opcode::FUNC, Payload::None)
            .unwrap();
        (m, [f, g], i32t, seven)
    }

    /// The body the fragment calls below build, through the module's own calls.
    fn body_by_module(m: &mut Module, owner: Inst, i32t: Inst, seven: Inst, other: Inst) {
        let b = m
            .append_new_child(owner, Opcode::BLOCK, Payload::None)
            .unwrap();
        let hint = m
            .new_inst(
                Opcode::NAME_HINT,
                None,
                vec![],
                Payload::Str("entry".into()),
            )
            .unwrap();
        let add = m.append_new_child(b, Opcode::IADD, Payload::None).unwrap();
        let ret = m.append_new_child(b, Opcode::RET, Payload::None).unwrap();
        m.attach_decoration(b, hint).unwrap();
        m.set_type_and_operands(add, Some(i32t), &[seven, seven])
            .unwrap();
        m.set_type_and_operands(ret, None, &[add, other]).unwrap();
        m.set_payload(owner, Payload::Str("p".into())).unwrap();
        m.set_type_and_operands(owner, Some(i32t), &[]).unwrap();
    }

    fn body_by_fragment(
        f: &mut Fragment<'_>,
        owner: Inst,
        i32t: Inst,
        seven: Inst,
        other: Inst,
    ) -> Result<(), CoreError> {
        let b = f.append_new_child(owner, Opcode::BLOCK, Payload::None)?;
        let hint = f.new_inst(Opcode::NAME_HINT, Payload::Str("entry".into()))?;
        let add = f.append_new_child(b, Opcode::IADD, Payload::None)?;
        let ret = f.append_new_child(b, Opcode::RET, Payload::None)?;
        f.attach_decoration(b, hint)?;
        f.set_type_and_operands(add, Some(i32t), &[seven, seven])?;
        f.set_type_and_operands(ret, None, &[add, other])?;
        f.set_owner_payload(Payload::Str("p".into()));
        f.set_type_and_operands(owner, Some(i32t), &[])
    }

    /// Bodies built in place, on any number of threads, are the bodies the module's calls
    /// build one instruction at a time.
    #[test]
    fn fragments_build_what_the_module_builds() {
        let (mut slow, [sf, sg], i32t, seven) = owners();
        body_by_module(&mut slow, sf, i32t, seven, sg);
        body_by_module(&mut slow, sg, i32t, seven, sf);
        for threads in [1, 3] {
            let (mut fast, [f, g], i32t, seven) = owners();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                fast.append_fragments(Slots::default(), &[(f, 4), (g, 4)], |k, frag| {
                    let (owner, other) = if k == 0 { (f, g) } else { (g, f) };
                    body_by_fragment(frag, owner, i32t, seven, other)
                })
            })
            .unwrap();
            crate::equiv::modules_equal(&slow, &fast).unwrap();
            assert_eq!(fast.arena_len(), slow.arena_len());
            assert_eq!(fast.children(f).len(), 1);
            let b = fast.children(f)[0];
            assert_eq!(fast.parent(b), Some(f));
            assert_eq!(fast.decorations(b).len(), 1);
        }
    }

    /// Types and operands naming a value merged away forward to the survivor, as the module's
    /// own calls do.
    #[test]
    fn operands_are_resolved() {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let i64t = m.ty_i64();
        let a = m.ty_array(i32t, 4).unwrap();
        let a64 = m.ty_array(i64t, 4).unwrap();
        let root = m.root();
        let g = m
            .append_new_child(root, Opcode::GLOBAL_VAR, Payload::None)
            .unwrap();
        m.replace_all_uses(&HashMap::from([(i32t, i64t)])).unwrap();
        m.append_fragments(Slots::default(), &[(g, 0)], |_, f| {
            f.set_type_and_operands(g, Some(a), &[a])
        })
        .unwrap();
        assert_eq!(m.resolve(a), a64);
        assert_eq!(m.ty(g), Some(a64));
        assert_eq!(m.operands(g), &[a64]);
    }

    /// Slots made ahead change nothing but where the arena's memory is first written: with
    /// more or fewer slots made than the bodies need, too little room, or fewer slots than
    /// the module has instructions, the module is the one `append_fragments` builds, and a
    /// refused body still appends nothing.
    #[test]
    fn slots_made_ahead_build_the_same_module() {
        let (mut slow, [sf, sg], i32t, seven) = owners();
        body_by_module(&mut slow, sf, i32t, seven, sg);
        body_by_module(&mut slow, sg, i32t, seven, sf);
        let before = owners().0.arena_len();
        let need = before + 8;
        for (room, made) in [
            (need, need),
            (need + 5, need + 5),
            (need + 5, need - 3),
            (need, 0),
            (need, before - 1),
            (need - 1, need - 1),
            (0, 0),
        ] {
            let (mut fast, [f, g], i32t, seven) = owners();
            let mut slots = Slots::with_room(room).unwrap();
            slots.fill_to(made);
            fast.append_fragments(slots, &[(f, 4), (g, 4)], |k, frag| {
                let (owner, other) = if k == 0 { (f, g) } else { (g, f) };
                body_by_fragment(frag, owner, i32t, seven, other)
            })
            .unwrap();
            crate::equiv::modules_equal(&slow, &fast).unwrap();
            assert_eq!(
                fast.arena_len(),
                slow.arena_len(),
                "room {room}, {made} made"
            );
            assert_eq!(fast.ty(f), Some(i32t));
        }
        let (mut fast, [f, _], ..) = owners();
        let mut slots = Slots::with_room(need).unwrap();
        slots.fill_to(need);
        assert!(
            fast.append_fragments(slots, &[(f, 2)], |_, frag| {
                frag.append_new_child(f, Opcode::CONST_INT, Payload::None)?;
                Ok::<(), CoreError>(())
            })
            .is_err()
        );
        assert_eq!(fast.arena_len(), before);
        assert!(fast.children(f).is_empty());
    }

    /// Refused alike, with the same errors: a hoistable or the root as a tree instruction, a
    /// decoration as a child, a handle outside the arena; and a refused body appends nothing.
    #[test]
    fn fragments_refuse_what_the_module_refuses() {
        for (opcode, parent_is_block) in [
            (Opcode::CONST_INT, false),
            (Opcode::MODULE, false),
            (Opcode::NAME_HINT, true),
        ] {
            let (mut slow, [sf, _], ..) = owners();
            let sb = slow
                .append_new_child(sf, Opcode::BLOCK, Payload::None)
                .unwrap();
            let parent = if parent_is_block { sb } else { sf };
            let expected = slow
                .append_new_child(parent, opcode, Payload::None)
                .unwrap_err()
                .to_string();
            let (mut fast, [f, _], ..) = owners();
            let len = fast.arena_len();
            let got = fast
                .append_fragments(Slots::default(), &[(f, 2)], |_, frag| {
                    let b = frag.append_new_child(f, Opcode::BLOCK, Payload::None)?;
                    let parent = if parent_is_block { b } else { f };
                    frag.append_new_child(parent, opcode, Payload::None)?;
                    Ok::<(), CoreError>(())
                })
                .unwrap_err();
            match &got[..] {
                [FragmentsError::Build { index: 0, error }] => {
                    assert_eq!(error.to_string(), expected, "{opcode}")
                }
                other => panic!("{opcode}: {other:?}"),
            }
            assert_eq!(fast.arena_len(), len, "{opcode}: nothing appended");
            assert!(fast.children(f).is_empty());
        }
        let (mut fast, [f, _], ..) = owners();
        let outside = Inst::from_index(1_000_000);
        let got = fast.append_fragments(Slots::default(), &[(f, 0)], |_, frag| {
            frag.set_type_and_operands(f, None, &[outside])
        });
        assert!(matches!(
            errs(&got),
            [FragmentsError::Build { error: CoreError::BadHandle(i), .. }] if *i == outside
        ));
        // Fewer instructions than reserved, or more, are refused too.
        let (mut fast, [f, _], ..) = owners();
        let got = fast.append_fragments(Slots::default(), &[(f, 2)], |_, frag| {
            frag.append_new_child(f, Opcode::BLOCK, Payload::None)
                .map(|_| ())
        });
        assert!(matches!(
            errs(&got),
            [FragmentsError::Module { index: 0, .. }]
        ));
        let got = fast.append_fragments(Slots::default(), &[(f, 0)], |_, frag| {
            frag.append_new_child(f, Opcode::BLOCK, Payload::None)
                .map(|_| ())
        });
        assert!(matches!(
            errs(&got),
            [FragmentsError::Build {
                error: CoreError::TooManyInstructions,
                ..
            }]
        ));
        // One owner, two bodies: refused before building.
        let (mut fast, [f, _], ..) = owners();
        let len = fast.arena_len();
        let got = fast.append_fragments(Slots::default(), &[(f, 1), (f, 1)], |_, frag| {
            frag.append_new_child(f, Opcode::BLOCK, Payload::None)
                .map(|_| ())
        });
        assert!(matches!(
            errs(&got),
            [FragmentsError::Module { index: 1, .. }]
        ));
        assert_eq!(fast.arena_len(), len);
        // An owner that already has a body, or a hoistable one, is refused before building.
        let (mut fast, [f, _], _, seven) = owners();
        fast.append_new_child(f, Opcode::BLOCK, Payload::None)
            .unwrap();
        for owner in [f, seven] {
            let got = fast.append_fragments(Slots::default(), &[(owner, 0)], |_, _| {
                Ok::<(), CoreError>(())
            });
            assert!(
                matches!(errs(&got), [FragmentsError::Module { .. }]),
                "{owner}"
            );
        }
    }
}
