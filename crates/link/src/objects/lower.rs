//! The lowering of the object instructions to ordinary instructions over the tables
//! (spec/linking.md, "Objects", step 6).
//!
//! Each block's object instructions are lowered last to first, so that splitting the block
//! before one (for a null check or a cast test) moves only the instructions up to the next
//! split, and the positions of the earlier ones stay as they were found: one pass over each
//! block, whatever it holds. The blocks split off are appended to their function (block order
//! carries no meaning but the entry's); each function gets at most one block per trap kind.
//! Within a block, an object whose null check passed (or which `classalloc` or `instance` made)
//! is not checked again.

use std::collections::{HashMap, HashSet};

use irkit_backend::trap_kinds;
use irkit_core::{CoreError, Inst, IntCC, Module, Op, Opcode, Payload};

use super::hierarchy::{Hierarchy, Kind};
use super::tables::{DESC_ID, DESC_VTABLE, Tables, Types};

// The type id is the descriptor's first word: read through the descriptor's address itself.
const _: () = assert!(DESC_ID == 0);
use crate::error::LinkError;

/// What [`lower`] did.
pub(super) struct Lowered {
    /// The problems found (a member a class lacks, an abstract class allocated).
    pub errors: Vec<LinkError>,
    /// `method` instructions that became their one possible implementation.
    pub devirtualized: u64,
}

/// Lowers every object instruction of `m`'s functions. With `devirtualize`, a `method` whose
/// receiver can only be of live classes sharing one implementation is that implementation.
pub(super) fn lower(
    m: &mut Module,
    h: &Hierarchy,
    t: &Tables,
    ty: Types,
    devirtualize: bool,
) -> Result<Lowered, CoreError> {
    let mut l = Lowering {
        h,
        t,
        ty,
        replaced: HashMap::new(),
        removed: Vec::new(),
        errors: Vec::new(),
        traps: HashMap::new(),
        devirtualize: devirtualize.then(HashMap::new),
        devirtualized: 0,
    };
    let funcs: Vec<Inst> = m
        .top_level()
        .iter()
        .copied()
        .filter(|&f| m.opcode(f) == Opcode::FUNC)
        .collect();
    for f in funcs {
        l.traps.clear();
        let blocks: Vec<Inst> = m.blocks(f).collect();
        for b in blocks {
            l.block(m, f, b)?;
        }
    }
    if !l.replaced.is_empty() {
        m.replace_all_uses(&l.replaced)?;
    }
    m.remove_all(&l.removed)?;
    Ok(Lowered {
        errors: l.errors,
        devirtualized: l.devirtualized,
    })
}

struct Lowering<'a> {
    h: &'a Hierarchy,
    t: &'a Tables,
    ty: Types,
    /// Each lowered instruction's result -> the value standing for it.
    replaced: HashMap<Inst, Inst>,
    removed: Vec<Inst>,
    errors: Vec<LinkError>,
    /// The function's trap blocks, by kind.
    traps: HashMap<&'static str, Inst>,
    /// With devirtualization: the one implementation of each (definition, selector) called,
    /// if there is one.
    devirtualize: Option<HashMap<(usize, String), Option<Inst>>>,
    devirtualized: u64,
}

/// Where the next instruction goes: a block and a position in it.
struct At {
    block: Inst,
    pos: usize,
}

impl At {
    fn emit(
        &mut self,
        m: &mut Module,
        op: Opcode,
        ty: Option<Inst>,
        ops: Vec<Inst>,
    ) -> Result<Inst, CoreError> {
        let i = m.new_inst(op, ty, ops, Payload::None)?;
        self.put(m, i)
    }

    /// `icmp cc a, b` (an `i1` of type `i1`).
    fn icmp(
        &mut self,
        m: &mut Module,
        i1: Inst,
        cc: IntCC,
        a: Inst,
        b: Inst,
    ) -> Result<Inst, CoreError> {
        let i = m.new_inst(Opcode::ICMP, Some(i1), vec![a, b], Payload::Int(cc.code()))?;
        self.put(m, i)
    }

    /// Inserts the new instruction `i` here, and moves past it.
    fn put(&mut self, m: &mut Module, i: Inst) -> Result<Inst, CoreError> {
        m.insert_child(self.block, self.pos, i)?;
        self.pos += 1;
        Ok(i)
    }
}

impl Lowering<'_> {
    fn block(&mut self, m: &mut Module, f: Inst, b: Inst) -> Result<(), CoreError> {
        let mut checked: HashSet<Inst> = HashSet::new();
        let mut work = Vec::new();
        for (p, &i) in m.children(b).iter().enumerate() {
            let Some(op) = m.opcode(i).known() else {
                continue;
            };
            match op {
                Op::Classalloc | Op::Instance => {
                    checked.insert(i);
                    work.push((p, i, false));
                }
                Op::Field | Op::Method | Op::Dynmethod => {
                    let k = usize::from(op == Op::Field);
                    let o = m.operands(i).get(k).copied().unwrap_or(i);
                    work.push((p, i, checked.insert(o)));
                }
                Op::Is | Op::As => work.push((p, i, false)),
                _ => {}
            }
        }
        let reported = self.errors.len();
        for (p, i, check) in work.into_iter().rev() {
            self.one(m, f, b, p, i, check)?;
        }
        // Found last to first: reported in program order.
        self.errors[reported..].reverse();
        Ok(())
    }

    /// The place an error names: the function and the instruction's opcode.
    fn at_text(m: &Module, f: Inst, i: Inst) -> String {
        let name = m
            .name(f)
            .map_or_else(|| format!("#{}", f.index()), str::to_owned);
        format!("@{name}: `{}`", m.opcode(i))
    }

    fn def_of(&self, m: &Module, d: Inst) -> Option<usize> {
        self.h.get(m.resolve(d))
    }

    /// Lowers instruction `i`, child `p` of block `b` of function `f`; `check`: null-check its
    /// object first.
    fn one(
        &mut self,
        m: &mut Module,
        f: Inst,
        b: Inst,
        p: usize,
        i: Inst,
        check: bool,
    ) -> Result<(), CoreError> {
        let Some(op) = m.opcode(i).known() else {
            return Ok(());
        };
        let ops = m.operands(i).to_vec();
        let name = m.payload(i).as_str().unwrap_or("").to_owned();
        let ty = self.ty;
        let target = match op {
            Op::Method => ops.get(1),
            Op::Dynmethod => None,
            _ => ops.first(),
        };
        let k = target.and_then(|&d| self.def_of(m, d));
        if op != Op::Dynmethod && k.is_none() {
            self.errors.push(LinkError::Objects(format!(
                "{}: names no class, trait or object of the program",
                Self::at_text(m, f, i)
            )));
            return Ok(());
        }
        // What the verifier checks (rule O6) is checked again here: the link lowers before it
        // verifies, and its inputs may come from anyone.
        let (object, want) = match op {
            Op::Classalloc => (None, Some(Kind::Class)),
            Op::Instance => (None, Some(Kind::Object)),
            Op::Method | Op::Dynmethod => (ops.first().copied(), None),
            _ => (ops.get(1).copied(), None),
        };
        let kind_ok = want.is_none_or(|w| k.is_some_and(|k| self.h.defs[k].kind == w));
        let object_ok = object.is_some() || matches!(op, Op::Classalloc | Op::Instance);
        if !kind_ok || !object_ok {
            self.errors.push(LinkError::Objects(format!(
                "{}: malformed (names another kind of definition, or has no object operand)",
                Self::at_text(m, f, i)
            )));
            return Ok(());
        }
        let o = object.unwrap_or(i);
        let def = k.map(|k| &self.h.defs[k]);
        let mut at = At { block: b, pos: p };
        let value = match op {
            Op::Classalloc => {
                let (k, d) = (k.unwrap_or(0), def.expect("checked above"));
                if let Some(s) = d.unimplemented() {
                    self.errors.push(LinkError::Objects(format!(
                        "{}: class @{} is allocated but has no implementation of method \"{s}\"",
                        Self::at_text(m, f, i),
                        d.name
                    )));
                }
                let n = m.const_int(ty.i64, d.size)?;
                let r = at.emit(m, Opcode::CALL, Some(ty.ptr), vec![self.t.alloc, n])?;
                let desc = self.t.desc.get(&k).copied().unwrap_or(self.t.null_object);
                at.emit(m, Opcode::STORE, None, vec![r, desc])?;
                r
            }
            Op::Instance => {
                let Some(&f) = self.t.instance.get(&k.unwrap_or(0)) else {
                    return Ok(());
                };
                at.emit(m, Opcode::CALL, Some(ty.ptr), vec![f])?
            }
            Op::Field => {
                let d = def.expect("checked above");
                let Some(&(off, _)) = d.field_at.get(name.as_str()) else {
                    self.errors.push(LinkError::Objects(format!(
                        "{}: @{} has no field \"{name}\"",
                        Self::at_text(m, f, i),
                        d.name
                    )));
                    return Ok(());
                };
                if check {
                    at = self.null_check(m, f, at, o)?;
                }
                let off = m.const_int(ty.i64, off)?;
                at.emit(m, Opcode::ELEM, Some(ty.ptr), vec![ty.i8, o, off])?
            }
            Op::Method => {
                let d = def.expect("checked above");
                if !d.sees.contains_key(name.as_str()) {
                    self.errors.push(LinkError::Objects(format!(
                        "{}: @{} has no method \"{name}\"",
                        Self::at_text(m, f, i),
                        d.name
                    )));
                    return Ok(());
                }
                if check {
                    at = self.null_check(m, f, at, o)?;
                }
                if let Some(only) = self.only_implementation(k.unwrap_or(0), &name) {
                    self.devirtualized += 1;
                    self.replaced.insert(i, only);
                    self.removed.push(i);
                    return Ok(());
                }
                let desc = at.emit(m, Opcode::LOAD, Some(ty.ptr), vec![o])?;
                let entry = if d.kind == Kind::Trait {
                    let (Some(table), Some(&row)) = (self.t.itable, self.t.row.get(&name)) else {
                        return Err(CoreError::WrongKind {
                            opcode: Opcode::METHOD,
                            what: "calls through a trait, but the trait table has no row for it",
                        });
                    };
                    let id = at.emit(m, Opcode::LOAD, Some(ty.i64), vec![desc])?;
                    let x = if row == 0 {
                        id
                    } else {
                        let row = m.const_int(ty.i64, row)?;
                        at.emit(m, Opcode::IADD, Some(ty.i64), vec![id, row])?
                    };
                    at.emit(m, Opcode::ELEM, Some(ty.ptr), vec![ty.ptr, table, x])?
                } else {
                    let slot = d.slot_of.get(name.as_str()).copied().unwrap_or(0) as u64;
                    let off = m.const_int(ty.i64, DESC_VTABLE + 8 * slot)?;
                    at.emit(m, Opcode::ELEM, Some(ty.ptr), vec![ty.i8, desc, off])?
                };
                at.emit(m, Opcode::LOAD, Some(ty.ptr), vec![entry])?
            }
            Op::Dynmethod => {
                if check {
                    at = self.null_check(m, f, at, o)?;
                }
                let Some(search) = self.t.dynmethod else {
                    return Err(CoreError::WrongKind {
                        opcode: Opcode::DYNMETHOD,
                        what: "is lowered, but no selector search was made for it",
                    });
                };
                let desc = at.emit(m, Opcode::LOAD, Some(ty.ptr), vec![o])?;
                let n = self.t.selector.get(&name).copied().unwrap_or(u64::MAX);
                let n = m.const_int(ty.i64, n)?;
                let r = at.emit(m, Opcode::CALL, Some(ty.ptr), vec![search, desc, n])?;
                let null = m.const_null();
                let missing = at.icmp(m, ty.i1, IntCC::Eq, r, null)?;
                let trap = self.trap(m, f, trap_kinds::METHOD_NOT_FOUND)?;
                self.split_branch(m, f, &at, missing, trap, true)?;
                r
            }
            Op::Is => {
                let (_, r) = self.test(m, &mut at, k.unwrap_or(0), o)?;
                r
            }
            Op::As => {
                let (null, is) = self.test(m, &mut at, k.unwrap_or(0), o)?;
                let ok = at.emit(m, Opcode::OR, Some(ty.i1), vec![null, is])?;
                let trap = self.trap(m, f, trap_kinds::INVALID_CAST)?;
                self.split_branch(m, f, &at, ok, trap, false)?;
                o
            }
            _ => return Ok(()),
        };
        self.replaced.insert(i, value);
        self.removed.push(i);
        Ok(())
    }

    /// With devirtualization, the implementation of `s` that every live class below `k` has,
    /// when they all have the same one (an object of another class cannot exist).
    fn only_implementation(&mut self, k: usize, s: &str) -> Option<Inst> {
        let h = self.h;
        let memo = self.devirtualize.as_mut()?;
        *memo.entry((k, s.to_owned())).or_insert_with(|| {
            let d = &h.defs[k];
            // A class's subclasses are its id range; a trait's, anywhere.
            let candidates = match d.kind {
                Kind::Trait => &h.by_id[..],
                Kind::Class | Kind::Object => {
                    h.by_id.get(d.id as usize..=d.last as usize).unwrap_or(&[])
                }
            };
            let mut only = None;
            for &c in candidates.iter().filter(|&&c| h.live[c] && h.below(c, k)) {
                let f = h.implementation(c, s)?;
                if only.is_some_and(|g| g != f) {
                    return None;
                }
                only = Some(f);
            }
            only
        })
    }

    /// `is @k, %o` at `at`: returns (`%o` is null, the test).
    fn test(
        &mut self,
        m: &mut Module,
        at: &mut At,
        k: usize,
        o: Inst,
    ) -> Result<(Inst, Inst), CoreError> {
        let ty = self.ty;
        let null = m.const_null();
        let is_null = at.icmp(m, ty.i1, IntCC::Eq, o, null)?;
        let s = at.emit(
            m,
            Opcode::SELECT,
            Some(ty.ptr),
            vec![is_null, self.t.null_object, o],
        )?;
        let desc = at.emit(m, Opcode::LOAD, Some(ty.ptr), vec![s])?;
        let id = at.emit(m, Opcode::LOAD, Some(ty.i64), vec![desc])?;
        let d = &self.h.defs[k];
        let r = if d.kind == Kind::Trait {
            let Some(&table) = self.t.members.get(&k) else {
                return Err(CoreError::WrongKind {
                    opcode: Opcode::IS,
                    what: "tests a trait without a membership table",
                });
            };
            let e = at.emit(m, Opcode::ELEM, Some(ty.ptr), vec![ty.i8, table, id])?;
            let byte = at.emit(m, Opcode::LOAD, Some(ty.i8), vec![e])?;
            let zero = m.const_int(ty.i8, 0)?;
            at.icmp(m, ty.i1, IntCC::Ne, byte, zero)?
        } else {
            let lo = m.const_int(ty.i64, d.id)?;
            let span = m.const_int(ty.i64, d.last - d.id)?;
            let x = at.emit(m, Opcode::ISUB, Some(ty.i64), vec![id, lo])?;
            at.icmp(m, ty.i1, IntCC::Ule, x, span)?
        };
        Ok((is_null, r))
    }

    /// Checks `%o` against null at `at`: what follows moves to a new block, entered when `%o`
    /// is not null; returns the place at its start.
    fn null_check(&mut self, m: &mut Module, f: Inst, at: At, o: Inst) -> Result<At, CoreError> {
        let null = m.const_null();
        let mut here = at;
        let is_null = here.icmp(m, self.ty.i1, IntCC::Eq, o, null)?;
        let trap = self.trap(m, f, trap_kinds::NULL_RECEIVER)?;
        let cont = self.split_branch(m, f, &here, is_null, trap, true)?;
        Ok(At {
            block: cont,
            pos: 0,
        })
    }

    /// Moves what follows `at` in its block to a new block of `f` and ends the block with a
    /// branch on `cond`: to `trap` when `cond` is `to_trap_if`, else to the new block.
    fn split_branch(
        &mut self,
        m: &mut Module,
        f: Inst,
        at: &At,
        cond: Inst,
        trap: Inst,
        to_trap_if: bool,
    ) -> Result<Inst, CoreError> {
        let cont = m.new_inst(Opcode::BLOCK, None, Vec::new(), Payload::None)?;
        m.append_child(f, cont)?;
        m.move_children(at.block, at.pos, cont, 0)?;
        let ops = if to_trap_if {
            vec![cond, trap, cont]
        } else {
            vec![cond, cont, trap]
        };
        let br = m.new_inst(Opcode::BR, None, ops, Payload::None)?;
        m.append_child(at.block, br)?;
        Ok(cont)
    }

    /// The block of `f` that traps with `kind` (made on first use).
    fn trap(&mut self, m: &mut Module, f: Inst, kind: &'static str) -> Result<Inst, CoreError> {
        if let Some(&b) = self.traps.get(kind) {
            return Ok(b);
        }
        let b = m.new_inst(Opcode::BLOCK, None, Vec::new(), Payload::None)?;
        m.append_child(f, b)?;
        let t = m.new_inst(
            Opcode::TRAP_MSG,
            None,
            Vec::new(),
            Payload::Str(kind.into()),
        )?;
        m.append_child(b, t)?;
        self.traps.insert(kind, b);
        Ok(b)
    }
}
