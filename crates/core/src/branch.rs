//! Building on several threads in copies of one module, then taking back what each built:
//! a **branch** is a clone of the module (`Module::clone`) made at a [`BranchPoint`], extended
//! on its own thread; [`Module::adopt`] moves the branch's additions into the module without
//! copying them through the checked constructors (the branch's own constructors checked them),
//! in time linear in what was added.
//!
//! A branch may only *add*: new instructions (hoistable values, and non-hoistable ones under
//! its **owners** or under new top-level definitions), the owners' children, decorations,
//! type and operands (each owner an instruction the module had at the branch point, given to
//! one branch only), and new top-level definitions at the end of the root. Pool values are
//! interned again in the module, so equal values built by different branches (or by the
//! module itself since the branch point) become one. A new top-level definition the caller
//! already has an equal of (a declaration every branch made on first use, say) is not
//! adopted: the caller maps it to its own (`same`), and references to it go there.
//!
//! What a module's file or text says depends on its tree (the order of definitions, children
//! and operands, and the values named), not on where the arena holds an instruction: a module
//! built by branches and adoptions, in the order a serial build would have made its
//! top-level definitions, is written with the same bytes (`irkit-wasm` translates function
//! bodies this way, and its tests compare both builds).

use std::collections::{HashMap, HashSet};

use crate::module::{InstData, Operands};
use crate::{CoreError, Inst, Module, Opcode, Payload};

/// Where a branch was taken: the module's arena length and number of top-level
/// definitions then ([`Module::branch_point`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchPoint {
    arena: usize,
    top: usize,
}

/// Where each of a branch's instructions went ([`Module::adopt`]).
#[derive(Debug)]
pub struct Adopted {
    /// The branch point's arena length: instructions below it keep their handle.
    base: usize,
    /// The handle in the module of each of the branch's later instructions (`None`: dead,
    /// or inside a top-level definition mapped by `same`).
    map: Vec<Option<Inst>>,
}

impl BranchPoint {
    /// The module's arena length at the branch point: a branch's instruction with a handle
    /// at least this was made by the branch.
    pub fn arena_len(&self) -> usize {
        self.arena
    }
}

impl Adopted {
    /// The module's handle of the branch's instruction `inst`: the same handle for an
    /// instruction the module had at the branch point; `None` for one that was not adopted.
    pub fn get(&self, inst: Inst) -> Option<Inst> {
        match inst.idx().checked_sub(self.base) {
            None => Some(inst),
            Some(k) => self.map.get(k).copied().flatten(),
        }
    }
}

impl Module {
    /// The point a branch cloned now is taken at, for [`Module::adopt`].
    pub fn branch_point(&self) -> BranchPoint {
        BranchPoint {
            arena: self.insts.len(),
            top: self.top_level().len(),
        }
    }

    /// Moves what `branch` (a clone of this module taken at `at`, extended since, see the
    /// module docs) added into this module: the bodies of `owners`, the top-level
    /// definitions it appended (after this module's own, in the branch's order) except those
    /// `same` maps to an equal definition of this module, and the pool values those name
    /// (interned here). This module may have grown since `at` (other branches adopted); the
    /// instructions it had at `at` must be the branch's, and `owners` unchanged here since.
    ///
    /// Returns where each of the branch's instructions went. The branch is checked first:
    /// an owner or a `same` key outside what the branch may have changed or made, or an
    /// adopted instruction naming one that is not adopted, is refused
    /// ([`CoreError::NotAdoptable`]); a pool value this module cannot intern (past the arena's
    /// limit) is its error. Either way this module is unchanged.
    pub fn adopt(
        &mut self,
        branch: Module,
        at: BranchPoint,
        owners: &[Inst],
        same: &HashMap<Inst, Inst>,
    ) -> Result<Adopted, CoreError> {
        let Module {
            insts: theirs,
            root,
            pool,
            intern: _,
            forward,
        } = branch;
        let base = at.arena;
        if root != self.root || theirs.len() < base || self.insts.len() < base {
            return Err(refuse(root, "it was not taken from this module"));
        }
        for &o in owners {
            if o.idx() >= base || o == root || theirs[o.idx()].dead {
                return Err(refuse(
                    o,
                    "an owner must be a live instruction of the branch point",
                ));
            }
        }
        let new_top: Vec<Inst> = theirs[root.idx()]
            .children()
            .get(at.top..)
            .unwrap_or_default()
            .to_vec();
        let mut a = Adoption {
            to: Adopted {
                base,
                map: vec![None; theirs.len() - base],
            },
            theirs,
            forward,
        };
        let skipped = a.map_same(self, same, &new_top)?;
        let roots = owners
            .iter()
            .chain(new_top.iter().filter(|t| !same.contains_key(t)));
        let kept = a.keep(self.insts.len(), roots, &skipped)?;
        // The kept instructions move, then the pool values are interned, then the kept
        // instructions' references are mapped. Anything naming what is not adopted undoes it
        // all: the kept instructions and the values interned so far are the arena's end, and
        // interning only added to the pool and its index.
        let first = self.insts.len();
        let owned = match a.move_into(self, &kept, &pool, owners) {
            Ok(owned) => owned,
            Err(e) => {
                self.insts.truncate(first);
                self.pool.retain(|p| p.idx() < first);
                self.intern.retain(|_, v| v.idx() < first);
                return Err(e);
            }
        };
        for (&o, d) in owners.iter().zip(owned) {
            let mine = &mut self.insts[o.idx()];
            mine.ty = d.ty;
            mine.operands = d.operands;
            mine.subs = d.subs;
            mine.n_decos = d.n_decos;
        }
        let appended = new_top
            .iter()
            .filter(|t| !same.contains_key(t))
            .filter_map(|&t| a.resolve(t));
        self.insts[root.idx()].subs.extend(appended);
        Ok(a.to)
    }
}

/// A refusal of [`Module::adopt`].
fn refuse(inst: Inst, why: &'static str) -> CoreError {
    CoreError::NotAdoptable { inst, why }
}

/// The refusal of an adopted instruction naming one that is not adopted.
fn not_adopted(inst: Inst) -> CoreError {
    refuse(inst, "it names an instruction that is not adopted")
}

/// A branch being adopted: its arena, and where each of its new instructions goes.
struct Adoption {
    /// The branch's arena (a kept instruction is taken out of it when it moves).
    theirs: Vec<InstData>,
    /// The branch's merged-away values.
    forward: HashMap<Inst, Inst>,
    /// Where each new instruction of the branch goes, once known.
    to: Adopted,
}

impl Adoption {
    /// The branch's instruction `r` as the module's, if it is adopted (or was there).
    fn resolve(&self, r: Inst) -> Option<Inst> {
        self.to.get(crate::module::checks::follow(&self.forward, r))
    }

    /// Maps `d`'s type, operands and children; `false` if one is not adopted.
    fn remap(&self, d: &mut InstData) -> bool {
        if let Some(t) = d.ty {
            match self.resolve(t) {
                Some(t) => d.ty = Some(t),
                None => return false,
            }
        }
        for r in d.operands.iter_mut().chain(d.subs.iter_mut()) {
            match self.resolve(*r) {
                Some(x) => *r = x,
                None => return false,
            }
        }
        true
    }

    /// Maps each new top-level definition `same` names to the module's, and returns which
    /// new instructions lie inside them (not adopted).
    fn map_same(
        &mut self,
        m: &Module,
        same: &HashMap<Inst, Inst>,
        new_top: &[Inst],
    ) -> Result<Vec<bool>, CoreError> {
        let base = self.to.base;
        let mut skipped = vec![false; self.to.map.len()];
        let top: HashSet<Inst> = new_top.iter().copied().collect();
        for (&b, &mine) in same {
            if b.idx() < base || !top.contains(&b) {
                return Err(refuse(
                    b,
                    "only a new top-level definition maps to the module's",
                ));
            }
            if !m.is_live(mine) {
                return Err(refuse(b, "it maps to no live instruction of the module"));
            }
            self.to.map[b.idx() - base] = Some(mine);
            let mut stack: Vec<Inst> = self.theirs[b.idx()].subs.to_vec();
            while let Some(s) = stack.pop() {
                if let Some(k) = s.idx().checked_sub(base) {
                    skipped[k] = true;
                    stack.extend_from_slice(&self.theirs[s.idx()].subs);
                }
            }
        }
        Ok(skipped)
    }

    /// The kept instructions: the new ones under `roots` (the owners, whose new children they
    /// are, and the new top-level definitions adopted, themselves included), in tree order,
    /// each given its handle in a module whose arena has `first` instructions.
    fn keep<'r>(
        &mut self,
        first: usize,
        roots: impl Iterator<Item = &'r Inst>,
        skipped: &[bool],
    ) -> Result<Vec<usize>, CoreError> {
        let base = self.to.base;
        let mut kept: Vec<usize> = Vec::new();
        let mut stack: Vec<Inst> = Vec::new();
        for &r in roots {
            if r.idx() >= base {
                stack.push(r);
            } else {
                let subs = self.theirs[r.idx()].subs.iter().rev();
                stack.extend(subs.filter(|s| s.idx() >= base));
            }
            while let Some(i) = stack.pop() {
                let k = i.idx() - base;
                let d = &self.theirs[i.idx()];
                if d.dead || skipped[k] || self.to.map[k].is_some() || d.opcode.is_hoistable() {
                    return Err(refuse(
                        i,
                        "a child that is dead, adopted twice or a pool value",
                    ));
                }
                let index = first + kept.len();
                if index > Inst::MAX_INDEX as usize {
                    return Err(CoreError::TooManyInstructions);
                }
                self.to.map[k] = Some(Inst::from_index(index as u32));
                kept.push(i.idx());
                for &s in d.subs.iter().rev() {
                    if s.idx() < base {
                        return Err(refuse(s, "an instruction of the branch point moved"));
                    }
                    stack.push(s);
                }
            }
        }
        Ok(kept)
    }

    /// Moves the `kept` instructions to the end of `m`'s arena (their parents mapped first: a
    /// value is hoisted to the scope its operands' parents give), interns the new values of
    /// `pool` (the branch's, in dependency order), then maps the kept instructions'
    /// references; returns the `owners`' data mapped, for the caller to give them. On an
    /// error `m` has the kept instructions and the values interned so far at its end.
    fn move_into(
        &mut self,
        m: &mut Module,
        kept: &[usize],
        pool: &[Inst],
        owners: &[Inst],
    ) -> Result<Vec<InstData>, CoreError> {
        let first = m.insts.len();
        let filler = || InstData::new(Opcode::MODULE, None, Operands::new(), Payload::None);
        m.insts.reserve(kept.len());
        let mut orphan = None;
        for &i in kept {
            let mut d = std::mem::replace(&mut self.theirs[i], filler());
            d.parent = d.parent.and_then(|p| self.resolve(p));
            orphan = orphan.or(d.parent.is_none().then(|| Inst::from_index(i as u32)));
            m.insts.push(d);
        }
        if let Some(at) = orphan {
            return Err(not_adopted(at));
        }
        for &p in pool.iter().filter(|p| p.idx() >= self.to.base) {
            let d = &self.theirs[p.idx()];
            if d.dead {
                continue;
            }
            let ty = match d.ty {
                Some(t) => Some(self.resolve(t).ok_or_else(|| not_adopted(p))?),
                None => None,
            };
            let ops = d
                .operands
                .iter()
                .map(|&o| self.resolve(o).ok_or_else(|| not_adopted(p)))
                .collect::<Result<Operands, CoreError>>()?;
            let mine = m.intern(d.opcode, ty, &ops, d.payload().clone())?;
            self.to.map[p.idx() - self.to.base] = Some(mine);
        }
        for (k, d) in m.insts[first..first + kept.len()].iter_mut().enumerate() {
            if !self.remap(d) {
                return Err(not_adopted(Inst::from_index(kept[k] as u32)));
            }
        }
        // The owners' additions, mapped before any owner changes.
        owners
            .iter()
            .map(|&o| {
                let mut d = self.theirs[o.idx()].clone();
                self.remap(&mut d)
                    .then_some(d)
                    .ok_or_else(|| not_adopted(o))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Builder, IntBinary};

    /// A module with two function declarations of `fn(i32) -> i32` to build bodies in.
    fn two_decls() -> (Module, Inst, Inst) {
        let mut m = Module::new();
        let mut b = Builder::new(&mut m);
        let i32t = b.module().ty_i32();
        let fty = b.module().ty_fn(i32t, &[i32t]).unwrap();
        let f = b.func("f", fty).unwrap();
        let g = b.func("g", fty).unwrap();
        (m, f, g)
    }

    /// `def`'s body: one block returning the sum of the two values `operands` makes from
    /// the builder and `def`'s parameter.
    fn sum_body(
        m: &mut Module,
        def: Inst,
        operands: impl FnOnce(&mut Builder<'_>, Inst) -> (Inst, Inst),
    ) {
        let mut b = Builder::new(m);
        let (entry, params) = b.entry_block(def).unwrap();
        b.position_at_end(entry);
        let (x, y) = operands(&mut b, params[0]);
        let s = b.ins().int_binary(IntBinary::Iadd, x, y);
        b.ins().ret(Some(s));
    }

    /// `def`'s body: its parameter plus `k`.
    fn add_body(m: &mut Module, def: Inst, k: i32) {
        sum_body(m, def, |b, param| (param, b.module().const_i32(k)));
    }

    /// Bodies built in two branches and adopted give the module a serial build gives.
    #[test]
    fn adopted_bodies_are_the_serial_build() {
        let (mut serial, f, g) = two_decls();
        add_body(&mut serial, f, 7);
        add_body(&mut serial, g, 7);
        let (mut m, f, g) = two_decls();
        let at = m.branch_point();
        let (mut bf, mut bg) = (m.clone(), m.clone());
        add_body(&mut bf, f, 7);
        add_body(&mut bg, g, 7);
        m.adopt(bf, at, &[f], &HashMap::new()).unwrap();
        m.adopt(bg, at, &[g], &HashMap::new()).unwrap();
        crate::verify::verify(&m).unwrap();
        crate::equiv::modules_equal(&m, &serial).unwrap();
        // The constant both made is one value.
        let sevens = m
            .pool()
            .iter()
            .filter(|&&p| m.opcode(p) == Opcode::CONST_INT)
            .count();
        assert_eq!(sevens, 1);
    }

    /// A definition each branch made on first use is adopted once: the later branch's maps
    /// to the module's, and references to it follow.
    #[test]
    fn a_definition_made_twice_is_adopted_once() {
        let (mut m, f, g) = two_decls();
        let at = m.branch_point();
        let made = |m: &mut Module, def: Inst| {
            let mut b = Builder::new(m);
            let i32t = b.module().ty_i32();
            let zero = b.module().const_i32(0);
            let cell = b.global_var("cell", i32t, Some(zero)).unwrap();
            sum_body(m, def, |b, param| (param, b.ins().load(i32t, cell)));
            cell
        };
        let (mut bf, mut bg) = (m.clone(), m.clone());
        let cell_f = made(&mut bf, f);
        let cell_g = made(&mut bg, g);
        let first = m.adopt(bf, at, &[f], &HashMap::new()).unwrap();
        let cell = first.get(cell_f).unwrap();
        let second = m
            .adopt(bg, at, &[g], &HashMap::from([(cell_g, cell)]))
            .unwrap();
        assert_eq!(second.get(cell_g), Some(cell));
        crate::verify::verify(&m).unwrap();
        let cells = m
            .top_level()
            .iter()
            .filter(|&&d| m.name(d) == Some("cell"))
            .count();
        assert_eq!(cells, 1);
    }

    /// What the branch may not have made is refused, and the module is unchanged.
    #[test]
    fn a_branch_naming_what_is_not_adopted_is_refused() {
        let (mut m, f, g) = two_decls();
        let at = m.branch_point();
        let mut bf = m.clone();
        add_body(&mut bf, f, 1);
        add_body(&mut bf, g, 2);
        let before = m.clone();
        // An owner made after the branch point, and a `same` key that is not a new
        // top-level definition, are refused.
        let late = {
            let mut b = Builder::new(&mut bf);
            let i32t = b.module().ty_i32();
            let fty = b.module().ty_fn(i32t, &[i32t]).unwrap();
            b.func("late", fty).unwrap()
        };
        let err = m
            .clone()
            .adopt(bf.clone(), at, &[late], &HashMap::new())
            .unwrap_err();
        assert!(matches!(err, CoreError::NotAdoptable { .. }), "{err}");
        let err = m
            .clone()
            .adopt(bf.clone(), at, &[f], &HashMap::from([(f, g)]))
            .unwrap_err();
        assert!(matches!(err, CoreError::NotAdoptable { .. }), "{err}");
        crate::equiv::modules_equal(&m, &before).unwrap();
        assert_eq!(m.arena_len(), before.arena_len());
        // g's body was built too, but only f is adopted: g's blocks are not kept.
        m.adopt(bf, at, &[f], &HashMap::new()).unwrap();
        assert!(m.entry_block(f).is_some() && m.entry_block(g).is_none());
    }

    /// A refusal found once adoption has begun (an adopted body naming a value of a body that
    /// is not adopted) undoes what was moved and interned: the module is as it was.
    #[test]
    fn a_refusal_midway_leaves_the_module_as_it_was() {
        let (mut m, f, g) = two_decls();
        let at = m.branch_point();
        let mut b = m.clone();
        add_body(&mut b, g, 5);
        let g_param = b.children(b.entry_block(g).unwrap())[0];
        // f returns g's parameter plus 1234: a value of a body only g's owner would adopt.
        sum_body(&mut b, f, |bb, _| (g_param, bb.module().const_i32(1234)));
        let before = m.clone();
        let err = m.adopt(b, at, &[f], &HashMap::new()).unwrap_err();
        assert!(matches!(err, CoreError::NotAdoptable { .. }), "{err}");
        crate::equiv::modules_equal(&m, &before).unwrap();
        assert_eq!(m.arena_len(), before.arena_len());
        assert_eq!(m.pool().len(), before.pool().len());
        assert!(
            m.pool()
                .iter()
                .all(|&p| m.payload(p).as_int() != Some(1234))
        );
    }
}
