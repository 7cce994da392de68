//! The shared version of one generic function (spec/linking.md, "Dynamic generics", "The
//! shared body"): the generic's body rebuilt, block by block in reverse post-order (so every
//! operand is translated before its uses), with each value of a type parameter kept by pointer.
//!
//! * A parameter of a type parameter arrives as a pointer to the caller's memory, which does
//!   not change during the call (values are immutable, and a callee writes only its own slots
//!   and its result pointer).
//! * The result of a `call`, a `load` or a `stackalloc` of a type parameter has a slot of its
//!   own, allocated once in the entry block; the call writes its result there (its last
//!   argument), the load copies into it.
//! * A block parameter of a type parameter has a slot too: each edge into the block copies its
//!   argument there (through temporary slots first when the block has several, so that
//!   arguments which are the block's own parameters are read before any is written). An edge
//!   of a `br` or `switch` that copies gets a block of its own.
//! * `select` chooses between pointers; `ret` copies into the result pointer; `store` copies to
//!   memory; `elem T, %p, %i` is `%p + sext(%i) * size`.
//! * `lookup_witness %w, @r` loads entry `k` (the requirement's position) of the table, and
//!   the call through it becomes a `call_indirect` of the thunk signature; a call of an
//!   instance of a shared generic made of the parameters calls its shared function with the
//!   descriptors and tables it was given (or those of the concrete arguments).

use std::collections::HashMap;

use irkit_core::edges::{edges_of, reverse_postorder};
use irkit_core::{Builder, CoreError, Inst, Opcode};

use super::analysis::{Info, of_dependent};
use super::glue::{Glue, stackalloc};
use super::internal;
use super::layout::{MAX_DEPTH, Shape, in_generic, is_dependent, is_type_param, shape};
use crate::error::LinkError;

fn err(e: CoreError) -> LinkError {
    internal("a shared body", e)
}

/// The state of one body's translation.
struct Body<'g, 'a> {
    gl: &'g mut Glue<'a>,
    g: Inst,
    f: Inst,
    /// Original value -> its translation (a pointer for a value of a type parameter).
    map: HashMap<Inst, Inst>,
    /// Type parameter -> its descriptor (a parameter of the shared function).
    desc_of: HashMap<Inst, Inst>,
    /// Dependent type -> its size, computed once in the entry block (a type parameter's
    /// loaded from its descriptor).
    size_of: HashMap<Inst, Inst>,
    /// Dependent type -> its alignment, likewise.
    align_of: HashMap<Inst, Inst>,
    /// Dependent structure type -> its fields' offsets, likewise.
    offsets: HashMap<Inst, Vec<Inst>>,
    /// Original block -> its translation.
    blocks: HashMap<Inst, Inst>,
    /// Original block -> its parameters' slots (`None` for a parameter kept as a value).
    param_slots: HashMap<Inst, Vec<Option<(Inst, Inst)>>>,
    /// Original block with several parameters of a type parameter -> temporary slots.
    temps: HashMap<Inst, Vec<Inst>>,
    /// The result pointer, when the result is of a type parameter.
    out: Option<Inst>,
    entry: Inst,
    cur: Inst,
    witness_calls: u64,
}

/// Builds the body of `g`'s shared function; returns the calls through witness tables made.
pub(crate) fn lower_body(gl: &mut Glue<'_>, g: Inst) -> Result<u64, LinkError> {
    let info: Info = gl.chosen[&g].clone();
    let f = gl.shared_fn[&g];
    let (entry, ps) = Builder::new(gl.m).entry_block(f).map_err(err)?;
    let mut body = Body {
        gl,
        g,
        f,
        map: HashMap::new(),
        desc_of: HashMap::new(),
        size_of: HashMap::new(),
        align_of: HashMap::new(),
        offsets: HashMap::new(),
        blocks: HashMap::new(),
        param_slots: HashMap::new(),
        temps: HashMap::new(),
        out: None,
        entry,
        cur: entry,
        witness_calls: 0,
    };
    body.run(&info, &ps)?;
    Ok(body.witness_calls)
}

impl Body<'_, '_> {
    fn b(&mut self) -> Builder<'_> {
        let mut b = Builder::new(self.gl.m);
        b.position_at_end(self.cur);
        b
    }

    fn v(&self, o: Inst) -> Inst {
        self.map.get(&o).copied().unwrap_or(o)
    }

    fn is_t(&self, v: Inst) -> bool {
        of_dependent(self.gl.m, self.g, v)
    }

    fn run(&mut self, info: &Info, ps: &[Inst]) -> Result<(), LinkError> {
        let m = &*self.gl.m;
        let n = info.params.len();
        for (k, &p) in info.params.iter().enumerate() {
            if m.opcode(p) == Opcode::TYPE_PARAM {
                self.desc_of.insert(p, ps[k]);
            } else {
                self.map.insert(p, ps[k]);
            }
        }
        let Some(orig_entry) = m.entry_block(info.func) else {
            return Err(internal("a shared body", "the generic has no entry block"));
        };
        let orig_params = m.block_params(orig_entry).to_vec();
        for (j, &p) in orig_params.iter().enumerate() {
            self.map.insert(p, ps[n + j]);
        }
        if ps.len() > n + orig_params.len() {
            self.out = ps.last().copied();
        }
        let order = reverse_postorder(m, info.func);
        // Layouts, then the blocks and their slots.
        let tps: Vec<Inst> = info.type_params(self.gl.m).collect();
        for p in tps {
            self.layout(p, 0)?;
        }
        let mut used: Vec<Inst> = Vec::new();
        for &ob in &order {
            for &i in self.gl.m.children(ob) {
                let m = &*self.gl.m;
                used.extend(m.ty(i).filter(|&t| is_dependent(m, self.g, t)));
                for &o in m.operands(i) {
                    used.extend(m.value_type(o).filter(|&t| is_dependent(m, self.g, t)));
                }
            }
        }
        for t in used {
            self.layout(t, 0)?;
        }
        // A zero of a dependent type is a zeroed slot.
        for &ob in &order {
            let insts: Vec<Inst> = self.gl.m.children(ob).to_vec();
            for i in insts {
                let ops = self.gl.m.operands(i).to_vec();
                for o in ops {
                    if self.gl.m.opcode(o) == Opcode::CONST_ZERO
                        && self.is_t(o)
                        && !self.map.contains_key(&o)
                    {
                        let t = self.dep(o)?;
                        let slot = self.slot(t)?;
                        let zero = self.gl.zero_fn()?;
                        let n = self.size_of[&t];
                        self.b().call(zero, &[slot, n]).map_err(err)?;
                        self.map.insert(o, slot);
                    }
                }
            }
        }
        self.blocks.insert(orig_entry, self.entry);
        for &ob in order.iter().skip(1) {
            self.make_block(ob)?;
        }
        for &ob in &order {
            let insts: Vec<Inst> = self.gl.m.children(ob).to_vec();
            for i in insts {
                let m = &*self.gl.m;
                if m.opcode(i) == Opcode::PARAM {
                    continue;
                }
                let tp = match m.opcode(i) {
                    Opcode::CALL | Opcode::INSERT if self.is_t(i) => self.dep(i)?,
                    Opcode::STACKALLOC if is_type_param(m, self.g, m.operands(i)[0]) => {
                        m.operands(i)[0]
                    }
                    _ => continue,
                };
                let slot = self.slot(tp)?;
                self.map.insert(i, slot);
            }
        }
        for &ob in &order {
            self.cur = self.blocks[&ob];
            let insts: Vec<Inst> = self.gl.m.children(ob).to_vec();
            for i in insts {
                if self.gl.m.opcode(i) != Opcode::PARAM {
                    self.translate(i)?;
                }
            }
        }
        Ok(())
    }

    /// The dependent type of value `v`.
    fn dep(&self, v: Inst) -> Result<Inst, LinkError> {
        self.gl
            .m
            .ty(v)
            .filter(|&t| is_dependent(self.gl.m, self.g, t))
            .ok_or_else(|| internal("a shared body", "a value has no dependent type"))
    }

    /// The size and alignment of type `t` as values in the entry block: constants for a
    /// concrete type, loads from the descriptor for a type parameter, and for a structure or
    /// array the arithmetic of spec/ir.md's "Layout" over its parts (memoized; every part's
    /// layout is emitted before its whole's).
    fn layout(&mut self, t: Inst, depth: usize) -> Result<(Inst, Inst), LinkError> {
        if let (Some(&s), Some(&a)) = (self.size_of.get(&t), self.align_of.get(&t)) {
            return Ok((s, a));
        }
        if depth > MAX_DEPTH {
            return Err(LinkError::Specialize(
                "a type nests too deeply to be laid out".into(),
            ));
        }
        let i64t = self.gl.m.ty_i64();
        if !is_dependent(self.gl.m, self.g, t) {
            let (s, a) = self.gl.layout_of(t)?;
            let (s, a) = (self.gl.m.const_i64(s as i64), self.gl.m.const_i64(a as i64));
            return Ok((s, a));
        }
        let Some(sh) = shape(self.gl.m, self.g, t) else {
            return Err(internal("a shared body", "a dependent type has no shape"));
        };
        let (size, align) = match sh {
            Shape::Param => {
                let d = self.desc_of[&t];
                let eight = self.gl.m.const_i64(8);
                let i8t = self.gl.m.ty_i8();
                let mut b = self.at_entry();
                let s = b.load(i64t, d).map_err(err)?;
                let ap = b.elem(i8t, d, &[eight]).map_err(err)?;
                let a = b.load(i64t, ap).map_err(err)?;
                (s, a)
            }
            Shape::Fields(fs) => {
                let mut parts = Vec::with_capacity(fs.len());
                for &f in &fs {
                    parts.push(self.layout(f, depth + 1)?);
                }
                let (zero, one) = (self.gl.m.const_i64(0), self.gl.m.const_i64(1));
                let mut b = self.at_entry();
                let (mut end, mut align) = (zero, one);
                let mut offs = Vec::with_capacity(parts.len());
                for (s, a) in parts {
                    let off = round_up(&mut b, end, a, one, zero)?;
                    offs.push(off);
                    end = b.binary(Opcode::IADD, off, s).map_err(err)?;
                    let wider = b.icmp(irkit_core::IntCC::Ugt, a, align).map_err(err)?;
                    align = b.select(wider, a, align).map_err(err)?;
                }
                let size = if fs.is_empty() {
                    zero
                } else {
                    round_up(&mut b, end, align, one, zero)?
                };
                self.offsets.insert(t, offs);
                (size, align)
            }
            Shape::Array(e, n) => {
                let (s, a) = self.layout(e, depth + 1)?;
                let n = self.gl.m.const_i64(n as i64);
                let size = self.at_entry().binary(Opcode::IMUL, s, n).map_err(err)?;
                (size, a)
            }
        };
        self.size_of.insert(t, size);
        self.align_of.insert(t, align);
        Ok((size, align))
    }

    /// A builder at the end of the entry block (where layouts and slots go, before the
    /// first translated instruction).
    fn at_entry(&mut self) -> Builder<'_> {
        let mut b = Builder::new(self.gl.m);
        b.position_at_end(self.entry);
        b
    }

    /// The offset of field or element `k` of dependent aggregate type `t`, and the field's
    /// type, at the cursor.
    fn field_at(&mut self, t: Inst, k: u64) -> Result<(Inst, Inst), LinkError> {
        match shape(self.gl.m, self.g, t) {
            Some(Shape::Fields(fs)) => {
                let f = *fs
                    .get(k as usize)
                    .ok_or_else(|| internal("a shared body", "no such field"))?;
                let off = *self
                    .offsets
                    .get(&t)
                    .and_then(|o| o.get(k as usize))
                    .ok_or_else(|| internal("a shared body", "a field without an offset"))?;
                Ok((off, f))
            }
            Some(Shape::Array(e, _)) => {
                let (s, _) = self.layout(e, 0)?;
                let k = self.gl.m.const_i64(k as i64);
                let off = self.b().binary(Opcode::IMUL, s, k).map_err(err)?;
                Ok((off, e))
            }
            _ => Err(internal(
                "a shared body",
                "`extract`/`insert` on a type parameter",
            )),
        }
    }

    /// A slot for a value of type parameter `tp`, at the end of the entry block: every slot is
    /// made before the first instruction is translated, so each dominates every use.
    fn slot(&mut self, tp: Inst) -> Result<Inst, LinkError> {
        let ty = self.gl.slot_type(self.g, tp)?;
        let mut b = Builder::new(self.gl.m);
        b.position_at_end(self.entry);
        stackalloc(&mut b, ty).map_err(err)
    }

    /// The translation of original block `ob` (not the entry): its parameters of a type
    /// parameter become slots, the others stay parameters.
    fn make_block(&mut self, ob: Inst) -> Result<(), LinkError> {
        let params = self.gl.m.block_params(ob).to_vec();
        let mut kept = Vec::new();
        let mut slots = Vec::new();
        for &p in &params {
            if self.is_t(p) {
                let tp = self.dep(p)?;
                let s = self.slot(tp)?;
                self.map.insert(p, s);
                slots.push(Some((s, tp)));
            } else {
                kept.push(p);
                slots.push(None);
            }
        }
        let types: Vec<Inst> = kept.iter().filter_map(|&p| self.gl.m.ty(p)).collect();
        let (nb, nps) = Builder::new(self.gl.m).block(self.f, &types).map_err(err)?;
        for (p, np) in kept.into_iter().zip(nps) {
            self.map.insert(p, np);
        }
        let in_slots: Vec<(Inst, Inst)> = slots.iter().flatten().copied().collect();
        if in_slots.len() > 1 {
            let mut t = Vec::with_capacity(in_slots.len());
            for &(_, tp) in &in_slots {
                t.push(self.slot(tp)?);
            }
            self.temps.insert(ob, t);
        }
        self.param_slots.insert(ob, slots);
        self.blocks.insert(ob, nb);
        Ok(())
    }

    fn copy(&mut self, dst: Inst, src: Inst, tp: Inst) -> Result<(), LinkError> {
        let copy = self.gl.copy_fn()?;
        let n = self.size_of[&tp];
        self.b().call(copy, &[dst, src, n]).map_err(err)?;
        Ok(())
    }

    fn translate(&mut self, i: Inst) -> Result<(), LinkError> {
        let m = &*self.gl.m;
        let op = m.opcode(i);
        let ops = m.operands(i).to_vec();
        let t_result = self.is_t(i);
        match op {
            Opcode::CALL => self.call(i, &ops, t_result),
            Opcode::LOOKUP_WITNESS => {
                let (w, r) = (self.v(ops[0]), ops[1]);
                let k = self.gl.requirement_index(r)?;
                let ptr = self.gl.m.ty_ptr();
                let idx = self.gl.m.const_i64(k as i64);
                let mut b = self.b();
                let at = b.elem(ptr, w, &[idx]).map_err(err)?;
                let fp = b.load(ptr, at).map_err(err)?;
                self.map.insert(i, fp);
                Ok(())
            }
            Opcode::EXTRACT if self.is_t(ops[0]) => {
                let t = self.dep(ops[0])?;
                let k = m.payload(i).as_int().unwrap_or(0);
                let (off, f) = self.field_at(t, k)?;
                let (i8t, agg) = (self.gl.m.ty_i8(), self.v(ops[0]));
                let at = self.b().elem(i8t, agg, &[off]).map_err(err)?;
                // A field of a dependent type is the aggregate's memory; another is loaded.
                let v = if is_dependent(self.gl.m, self.g, f) {
                    at
                } else {
                    let mut b = self.b();
                    super::glue::load_value(&mut b, f, at)?
                };
                self.map.insert(i, v);
                Ok(())
            }
            Opcode::INSERT if t_result => {
                let t = self.dep(i)?;
                let k = m.payload(i).as_int().unwrap_or(0);
                let (slot, agg, v) = (self.map[&i], self.v(ops[0]), self.v(ops[1]));
                self.copy(slot, agg, t)?;
                let (off, f) = self.field_at(t, k)?;
                let i8t = self.gl.m.ty_i8();
                let at = self.b().elem(i8t, slot, &[off]).map_err(err)?;
                if is_dependent(self.gl.m, self.g, f) {
                    self.copy(at, v, f)
                } else {
                    let mut b = self.b();
                    super::glue::store_value(&mut b, at, f, v)
                }
            }
            // Its slot was made with the others.
            Opcode::STACKALLOC if is_type_param(m, self.g, ops[0]) => Ok(()),
            Opcode::ELEM if is_type_param(m, self.g, ops[0]) => {
                let (p, idx) = (self.v(ops[1]), self.v(ops[2]));
                let size = self.size_of[&ops[0]];
                let (i64t, i8t) = (self.gl.m.ty_i64(), self.gl.m.ty_i8());
                let wide = self.gl.m.value_type(idx) == Some(i64t);
                let mut b = self.b();
                let idx = if wide {
                    idx
                } else {
                    b.convert(Opcode::SEXT, i64t, idx).map_err(err)?
                };
                let off = b.binary(Opcode::IMUL, idx, size).map_err(err)?;
                let at = b.elem(i8t, p, &[off]).map_err(err)?;
                self.map.insert(i, at);
                Ok(())
            }
            Opcode::RET if ops.first().is_some_and(|&v| self.is_t(v)) => {
                let tp = self.dep(ops[0])?;
                let out = self
                    .out
                    .ok_or_else(|| internal("a shared body", "no result pointer"))?;
                let src = self.v(ops[0]);
                self.copy(out, src, tp)?;
                self.b().ret(None).map_err(err)?;
                Ok(())
            }
            Opcode::JUMP | Opcode::BR | Opcode::SWITCH => self.terminator(i),
            _ => self.plain(i).map(|_| ()),
        }
    }

    /// Any other instruction: the same, operands translated (a `select` of values of a type
    /// parameter chooses between their pointers).
    fn plain(&mut self, i: Inst) -> Result<Inst, LinkError> {
        let m = &*self.gl.m;
        let d = m.data(i);
        let (op, payload) = (d.opcode(), d.payload().clone());
        let ty = match d.ty() {
            Some(t) => Some(self.gl.lower_ty(self.g, t)),
            None => None,
        };
        let ops: Vec<Inst> = self.gl.m.operands(i).iter().map(|&o| self.v(o)).collect();
        let decos: Vec<Inst> = self.gl.m.decorations(i).to_vec();
        let new = self.b().inst(op, ty, ops, payload).map_err(err)?;
        for dec in decos {
            let d = self.gl.m.data(dec);
            let (dop, dty, dops, dpay) = (
                d.opcode(),
                d.ty(),
                d.operands().to_vec(),
                d.payload().clone(),
            );
            let nd = self.gl.m.new_inst(dop, dty, dops, dpay).map_err(err)?;
            self.gl.m.attach_decoration(new, nd).map_err(err)?;
        }
        self.map.insert(i, new);
        Ok(new)
    }

    fn call(&mut self, i: Inst, ops: &[Inst], t_result: bool) -> Result<(), LinkError> {
        let callee = ops[0];
        let m = &*self.gl.m;
        let mut args: Vec<Inst> = ops[1..].iter().map(|&o| self.v(o)).collect();
        let slot = if t_result { Some(self.map[&i]) } else { None };
        if m.opcode(callee) == Opcode::LOOKUP_WITNESS {
            let r = m.operands(callee)[1];
            let sig = self.gl.thunk_sig(r)?;
            args.extend(slot);
            let fp = self.v(callee);
            let c = self.b().call_indirect(sig, fp, &args).map_err(err)?;
            self.witness_calls += 1;
            if slot.is_none() {
                self.map.insert(i, c);
            }
            return Ok(());
        }
        if m.opcode(callee) == Opcode::SPECIALIZE && in_generic(m, self.g, callee) {
            let sops = m.operands(callee).to_vec();
            let (h, sargs) = (sops[0], &sops[1..]);
            let shared = *self
                .gl
                .shared_fn
                .get(&h)
                .ok_or_else(|| internal("a shared body", "it calls a generic not shared"))?;
            let mut lead = Vec::with_capacity(sargs.len());
            for &a in sargs {
                let m = &*self.gl.m;
                lead.push(match m.opcode(a) {
                    Opcode::TYPE_PARAM => self.desc_of[&a],
                    Opcode::WITNESS_PARAM => self.v(a),
                    Opcode::WITNESS_TABLE => self.gl.table(a)?,
                    _ => self.gl.desc(a)?,
                });
            }
            lead.extend(args);
            lead.extend(slot);
            let c = self.b().call(shared, &lead).map_err(err)?;
            if slot.is_none() {
                self.map.insert(i, c);
            }
            return Ok(());
        }
        self.plain(i)?;
        Ok(())
    }

    /// A `jump`, `br` or `switch`: each edge's arguments of a type parameter are copied into
    /// the target's slots (on the edge), the others passed.
    fn terminator(&mut self, i: Inst) -> Result<(), LinkError> {
        let m = &*self.gl.m;
        let op = m.opcode(i);
        let payload = m.payload(i).clone();
        let ops = m.operands(i).to_vec();
        let (own, edges) = edges_of(m, i);
        let mut new_ops: Vec<Inst> = ops[own].iter().map(|&o| self.v(o)).collect();
        for e in edges {
            let target = self.blocks[&e.target];
            let slots = self.param_slots.get(&e.target).cloned().unwrap_or_default();
            let args = &ops[e.args.clone()];
            let mut kept = Vec::new();
            let mut copies = Vec::new();
            for (k, &a) in args.iter().enumerate() {
                match slots.get(k).copied().flatten() {
                    Some((slot, tp)) => copies.push((slot, self.v(a), tp)),
                    None => kept.push(self.v(a)),
                }
            }
            if copies.is_empty() {
                new_ops.push(target);
                new_ops.extend(kept);
                continue;
            }
            let here = self.cur;
            if op != Opcode::JUMP {
                let (eb, _) = Builder::new(self.gl.m).block(self.f, &[]).map_err(err)?;
                self.cur = eb;
            }
            match self.temps.get(&e.target).cloned() {
                Some(temps) => {
                    for (&(_, src, tp), &t) in copies.iter().zip(&temps) {
                        self.copy(t, src, tp)?;
                    }
                    for (&(slot, _, tp), &t) in copies.iter().zip(&temps) {
                        self.copy(slot, t, tp)?;
                    }
                }
                None => {
                    for &(slot, src, tp) in &copies {
                        self.copy(slot, src, tp)?;
                    }
                }
            }
            if op == Opcode::JUMP {
                new_ops.push(target);
                new_ops.extend(kept);
            } else {
                let eb = self.cur;
                self.b().jump(target, &kept).map_err(err)?;
                self.cur = here;
                new_ops.push(eb);
            }
        }
        self.b().inst(op, None, new_ops, payload).map_err(err)?;
        Ok(())
    }
}

/// `x` rounded up to a multiple of `a` (a power of two): `(x + a - 1) & -a`.
fn round_up(
    b: &mut Builder<'_>,
    x: Inst,
    a: Inst,
    one: Inst,
    zero: Inst,
) -> Result<Inst, LinkError> {
    let am1 = b.binary(Opcode::ISUB, a, one).map_err(err)?;
    let sum = b.binary(Opcode::IADD, x, am1).map_err(err)?;
    let mask = b.binary(Opcode::ISUB, zero, a).map_err(err)?;
    b.binary(Opcode::AND, sum, mask).map_err(err)
}
