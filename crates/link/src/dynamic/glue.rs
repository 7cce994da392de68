//! What shared generics are called with and through: descriptors of concrete types, witness
//! tables of thunks, the copy routine, the slot sizes, the shared functions' declarations, and
//! the wrapper that stands for each instance (spec/linking.md, "Dynamic generics").
//!
//! * A **descriptor** is `global_const {i64, i64}`: the type's size and alignment.
//! * A **witness table** for a concrete `witness_table T` of interface `@I` is
//!   `global_const [n x ptr]`: entry `k` is the thunk of requirement `k` of `@I` (in the
//!   interface's order). A thunk has the requirement's type with each `Self` parameter a
//!   pointer to a `T` and a `Self` result written through a last pointer parameter; it loads,
//!   calls the table's implementation, and stores.
//! * A **slot** for a value of type parameter `P` is `[n x i64]`, `n` words enough for the
//!   largest type the program gives `P`: the arguments of every instance of its generic, and,
//!   through the calls of shared generics with their own parameters, every type those reach
//!   (a fixed point over the calls, by size and alignment).
//! * The **copy routine** `__irkit.generic.copy(dst, src, n)` copies `n` bytes, eight at a time
//!   then one at a time (values never overlap: a slot is copied to another slot or to memory).

use std::collections::{HashMap, HashSet};

use irkit_core::layout::Layouts;
use irkit_core::{Builder, Inst, Module, Opcode, Payload};

use super::analysis::Info;
use super::internal;
use super::layout::{MAX_DEPTH, Shape, is_dependent, is_type_param, shape};
use crate::error::LinkError;

/// The glue of one lowering.
pub(crate) struct Glue<'a> {
    pub(crate) m: &'a mut Module,
    pub(crate) chosen: &'a HashMap<Inst, Info>,
    /// Each shared generic's function.
    pub(crate) shared_fn: HashMap<Inst, Inst>,
    /// Each type parameter of a shared generic -> the largest size and alignment of the
    /// types the program gives it.
    most: HashMap<Inst, (u64, u64)>,
    descs: HashMap<Inst, Inst>,
    tables: HashMap<Inst, Inst>,
    thunk_sigs: HashMap<Inst, Inst>,
    copy: Option<Inst>,
    zero: Option<Inst>,
    layouts: Layouts,
    /// Requirement -> (its interface, its position there).
    requirements: HashMap<Inst, (Inst, u64)>,
}

impl<'a> Glue<'a> {
    /// Sizes the slots and declares the shared functions.
    pub(crate) fn new(
        m: &'a mut Module,
        chosen: &'a HashMap<Inst, Info>,
        opened: &HashSet<Inst>,
    ) -> Result<Glue<'a>, LinkError> {
        let layouts = Layouts::new(m);
        // Each requirement's interface and position, from one pass over the interfaces.
        let mut requirements = HashMap::new();
        for &i in m.top_level() {
            if m.opcode(i) == Opcode::INTERFACE {
                for (k, &r) in m.operands(i).iter().enumerate() {
                    requirements.entry(r).or_insert((i, k as u64));
                }
            }
        }
        let mut g = Glue {
            m,
            chosen,
            shared_fn: HashMap::new(),
            most: HashMap::new(),
            descs: HashMap::new(),
            tables: HashMap::new(),
            thunk_sigs: HashMap::new(),
            copy: None,
            zero: None,
            layouts,
            requirements,
        };
        g.size_slots(opened)?;
        let mut order: Vec<Inst> = chosen.keys().copied().collect();
        order.sort_unstable();
        for generic in order {
            let sig = g.shared_sig(generic)?;
            let name = format!("{}.dyn", g.m.name(generic).unwrap_or("generic"));
            let f = Builder::new(g.m)
                .func(&name, sig)
                .map_err(|e| internal("declaring", e))?;
            g.shared_fn.insert(generic, f);
        }
        Ok(g)
    }

    pub(crate) fn layout_of(&self, t: Inst) -> Result<(u64, u64), LinkError> {
        self.layouts
            .get(t)
            .map(|l| (l.size, l.align))
            .ok_or_else(|| {
                LinkError::Specialize(format!(
                    "{} has no layout: it cannot be a type argument",
                    crate::label::label(self.m, t)
                ))
            })
    }

    /// The fixed point of the slot sizes (see the module doc); `opened` are the generics an
    /// `exists_open` calls.
    fn size_slots(&mut self, opened: &HashSet<Inst>) -> Result<(), LinkError> {
        let m = &*self.m;
        let root = m.root();
        // (size, align) per type parameter.
        let mut most: HashMap<Inst, (u64, u64)> = HashMap::new();
        // (from type parameter, to type parameter): the call passes one as the other.
        let mut flows: Vec<(Inst, Inst)> = Vec::new();
        let mut concrete: Vec<(Inst, Inst)> = Vec::new();
        for &s in m.pool() {
            if m.opcode(s) != Opcode::SPECIALIZE {
                continue;
            }
            let Some((&h, args)) = m.operands(s).split_first() else {
                continue;
            };
            let Some(info) = self.chosen.get(&h) else {
                continue;
            };
            let caller = m.parent(s).filter(|&p| p != root);
            for (&p, &a) in info.params.iter().zip(args) {
                if m.opcode(p) != Opcode::TYPE_PARAM {
                    continue;
                }
                match caller {
                    Some(c) if is_type_param(m, c, a) => flows.push((a, p)),
                    Some(c) if !self.chosen.contains_key(&c) => {}
                    _ => concrete.push((a, p)),
                }
            }
        }
        // A generic an `exists_open` calls gets the type inside an existential of its
        // witness parameter's interface: any type with a witness table of it.
        for g in opened {
            let Some(info) = self.chosen.get(g) else {
                continue;
            };
            let (Some(&t), Some(iface)) = (
                info.params.first(),
                info.params.get(1).and_then(|&w| m.ty(w)),
            ) else {
                continue;
            };
            for &w in m.top_level() {
                if m.opcode(w) == Opcode::WITNESS_TABLE
                    && m.ty(w) == Some(iface)
                    && let Some(&c) = m.operands(w).first()
                {
                    concrete.push((c, t));
                }
            }
        }
        for (t, p) in concrete {
            let (size, align) = self.layout_of(t)?;
            let e = most.entry(p).or_insert((0, 1));
            *e = (e.0.max(size), e.1.max(align));
        }
        // Each round carries sizes one call further; a chain is at most as long as the
        // number of parameters.
        for _ in 0..=flows.len() {
            let mut changed = false;
            for &(from, to) in &flows {
                let Some(&(s, a)) = most.get(&from) else {
                    continue;
                };
                let e = most.entry(to).or_insert((0, 1));
                if s > e.0 || a > e.1 {
                    *e = (e.0.max(s), e.1.max(a));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        self.most = most;
        Ok(())
    }

    /// The largest size and alignment dependent type `t` of `g` has in the program (an upper
    /// bound: [`layout`](super::layout)), or the layout of a concrete `t`.
    pub(crate) fn max_layout(
        &self,
        g: Inst,
        t: Inst,
        depth: usize,
    ) -> Result<(u64, u64), LinkError> {
        if !is_dependent(self.m, g, t) {
            return self.layout_of(t);
        }
        if depth > MAX_DEPTH {
            return Err(LinkError::Specialize(
                "a type nests too deeply to be laid out".into(),
            ));
        }
        let too_big = || LinkError::Specialize("a type's size overflows".into());
        match shape(self.m, g, t) {
            Some(Shape::Param) => Ok(self.most.get(&t).copied().unwrap_or((0, 1))),
            Some(Shape::Fields(fs)) => {
                let (mut end, mut align) = (0u64, 1u64);
                for f in &fs {
                    let (s, a) = self.max_layout(g, *f, depth + 1)?;
                    let off = end.checked_next_multiple_of(a).ok_or_else(too_big)?;
                    end = off.checked_add(s).ok_or_else(too_big)?;
                    align = align.max(a);
                }
                let size = if fs.is_empty() {
                    0
                } else {
                    end.checked_next_multiple_of(align).ok_or_else(too_big)?
                };
                Ok((size, align))
            }
            Some(Shape::Array(e, n)) => {
                let (s, a) = self.max_layout(g, e, depth + 1)?;
                Ok((s.checked_mul(n).ok_or_else(too_big)?, a))
            }
            None => Err(internal(
                "a slot",
                "a type the analysis let through has no shape",
            )),
        }
    }

    /// `[n x i64]` for a slot of dependent type `t` of `g`.
    pub(crate) fn slot_type(&mut self, g: Inst, t: Inst) -> Result<Inst, LinkError> {
        let (size, _) = self.max_layout(g, t, 0)?;
        let i64t = self.m.ty_i64();
        self.m
            .ty_array(i64t, size.div_ceil(8).max(1))
            .map_err(|e| internal("a slot type", e))
    }

    /// `t` as the shared version of generic `g` sees it: a dependent type becomes `ptr`.
    pub(crate) fn lower_ty(&mut self, g: Inst, t: Inst) -> Inst {
        if is_dependent(self.m, g, t) {
            self.m.ty_ptr()
        } else {
            t
        }
    }

    /// The signature of `g`'s shared function: a descriptor per type parameter, a table per
    /// witness parameter, the parameters (by pointer for a type parameter), and a result
    /// pointer when the result is of a type parameter.
    fn shared_sig(&mut self, g: Inst) -> Result<Inst, LinkError> {
        let info = &self.chosen[&g];
        let sig = self.m.ty(info.func).and_then(|s| self.m.fn_signature(s));
        let Some((ret, params)) = sig.map(|(r, p)| (r, p.to_vec())) else {
            return Err(internal("a signature", "the generic's function has none"));
        };
        let ptr = self.m.ty_ptr();
        let mut out = vec![ptr; info.params.len()];
        for p in params {
            out.push(self.lower_ty(g, p));
        }
        let ret = if is_dependent(self.m, g, ret) {
            out.push(ptr);
            self.m.ty_void()
        } else {
            ret
        };
        self.m
            .ty_fn(ret, &out)
            .map_err(|e| internal("a signature", e))
    }

    /// The thunk signature of requirement `r` (see the module doc).
    pub(crate) fn thunk_sig(&mut self, r: Inst) -> Result<Inst, LinkError> {
        if let Some(&s) = self.thunk_sigs.get(&r) {
            return Ok(s);
        }
        let iface = self.interface_of(r)?;
        let Some((ret, params)) = self
            .m
            .ty(r)
            .and_then(|t| self.m.fn_signature(t))
            .map(|(r, p)| (r, p.to_vec()))
        else {
            return Err(internal(
                "a thunk signature",
                "the requirement is no function",
            ));
        };
        let ptr = self.m.ty_ptr();
        let mut out: Vec<Inst> = params
            .iter()
            .map(|&p| if p == iface { ptr } else { p })
            .collect();
        let ret = if ret == iface {
            out.push(ptr);
            self.m.ty_void()
        } else {
            ret
        };
        let s = self
            .m
            .ty_fn(ret, &out)
            .map_err(|e| internal("a thunk signature", e))?;
        self.thunk_sigs.insert(r, s);
        Ok(s)
    }

    /// The interface requirement `r` belongs to.
    fn interface_of(&self, r: Inst) -> Result<Inst, LinkError> {
        self.requirements
            .get(&r)
            .map(|&(i, _)| i)
            .ok_or_else(|| internal("a requirement", "no interface lists it"))
    }

    /// The position of requirement `r` in its interface.
    pub(crate) fn requirement_index(&self, r: Inst) -> Result<u64, LinkError> {
        self.requirements
            .get(&r)
            .map(|&(_, k)| k)
            .ok_or_else(|| internal("a requirement", "no interface lists it"))
    }

    /// The descriptor of concrete type `t`.
    pub(crate) fn desc(&mut self, t: Inst) -> Result<Inst, LinkError> {
        if let Some(&d) = self.descs.get(&t) {
            return Ok(d);
        }
        let (size, align) = self.layout_of(t)?;
        let name = format!(
            "__irkit.type.{}",
            crate::label::label(self.m, t).trim_start_matches('@')
        );
        let err = |e| internal("a descriptor", e);
        let i64t = self.m.ty_i64();
        let st = self.m.ty_struct(&[i64t, i64t]).map_err(err)?;
        let (s, a) = (
            self.m.const_i64(size as i64),
            self.m.const_i64(align as i64),
        );
        let init = self.m.const_aggregate(st, &[s, a]).map_err(err)?;
        let d = Builder::new(self.m)
            .global_const(&name, st, init)
            .map_err(err)?;
        self.descs.insert(t, d);
        Ok(d)
    }

    /// The table of concrete witness table `w`.
    pub(crate) fn table(&mut self, w: Inst) -> Result<Inst, LinkError> {
        if let Some(&t) = self.tables.get(&w) {
            return Ok(t);
        }
        let err = |e| internal("a witness table", e);
        if self.m.opcode(w) != Opcode::WITNESS_TABLE {
            return Err(internal("a witness table", "the witness is not a table"));
        }
        let Some(iface) = self.m.ty(w) else {
            return Err(internal("a witness table", "it has no interface"));
        };
        let Some(&conforming) = self.m.operands(w).first() else {
            return Err(internal("a witness table", "it has no type"));
        };
        let reqs = self.m.operands(iface).to_vec();
        let wname = self.m.name(w).unwrap_or("witness").to_string();
        let mut cells = Vec::with_capacity(reqs.len());
        for r in reqs {
            let imp = self
                .m
                .children(w)
                .iter()
                .find_map(|&e| match *self.m.operands(e) {
                    [req, imp] if req == r => Some(imp),
                    _ => None,
                });
            let Some(imp) = imp else {
                return Err(internal("a witness table", "a requirement has no entry"));
            };
            let rname = self.m.name(r).unwrap_or("req").to_string();
            cells.push(self.thunk(&format!("{wname}.{rname}"), r, iface, conforming, imp)?);
        }
        let ptr = self.m.ty_ptr();
        let arr = self.m.ty_array(ptr, cells.len() as u64).map_err(err)?;
        let init = self.m.const_aggregate(arr, &cells).map_err(err)?;
        let t = Builder::new(self.m)
            .global_const(&format!("__irkit.witness.{wname}"), arr, init)
            .map_err(err)?;
        self.tables.insert(w, t);
        Ok(t)
    }

    /// The thunk of requirement `r` implemented by `imp` for type `conforming`.
    fn thunk(
        &mut self,
        name: &str,
        r: Inst,
        iface: Inst,
        conforming: Inst,
        imp: Inst,
    ) -> Result<Inst, LinkError> {
        let sig = self.thunk_sig(r)?;
        let req_params: Vec<Inst> = self
            .m
            .ty(r)
            .and_then(|t| self.m.fn_signature(t))
            .map(|(_, p)| p.to_vec())
            .unwrap_or_default();
        let self_ret = self
            .m
            .ty(r)
            .and_then(|t| self.m.fn_signature(t))
            .is_some_and(|(ret, _)| ret == iface);
        let err = |e| internal("a thunk", e);
        let mut b = Builder::new(self.m);
        let f = b.func(&format!("__irkit.thunk.{name}"), sig).map_err(err)?;
        let (entry, ps) = b.entry_block(f).map_err(err)?;
        b.position_at_end(entry);
        let mut args = Vec::with_capacity(req_params.len());
        for (&p, &v) in req_params.iter().zip(&ps) {
            args.push(if p == iface {
                load_value(&mut b, conforming, v)?
            } else {
                v
            });
        }
        let r = b.call(imp, &args).map_err(err)?;
        match ps.last() {
            Some(&out) if self_ret => {
                store_value(&mut b, out, conforming, r)?;
                b.ret(None).map_err(err)?;
            }
            _ => {
                let has_value = b.module().ty(r).is_some();
                b.ret(has_value.then_some(r)).map_err(err)?;
            }
        }
        Ok(f)
    }

    /// The copy routine (built on first use).
    pub(crate) fn copy_fn(&mut self) -> Result<Inst, LinkError> {
        if let Some(c) = self.copy {
            return Ok(c);
        }
        let err = |e| internal("the copy routine", e);
        let m = &mut *self.m;
        let (ptr, i64t, i8t, void) = (m.ty_ptr(), m.ty_i64(), m.ty_i8(), m.ty_void());
        let sig = m.ty_fn(void, &[ptr, ptr, i64t]).map_err(err)?;
        let (zero, one, eight) = (m.const_i64(0), m.const_i64(1), m.const_i64(8));
        let mut b = Builder::new(m);
        let f = b.func("__irkit.generic.copy", sig).map_err(err)?;
        let (entry, ps) = b.entry_block(f).map_err(err)?;
        let (dst, src, n) = (ps[0], ps[1], ps[2]);
        let (words, wi) = b.block(f, &[i64t]).map_err(err)?;
        let (word, _) = b.block(f, &[]).map_err(err)?;
        let (bytes, bi) = b.block(f, &[i64t]).map_err(err)?;
        let (byte, _) = b.block(f, &[]).map_err(err)?;
        let (done, _) = b.block(f, &[]).map_err(err)?;
        b.position_at_end(entry);
        b.jump(words, &[zero]).map_err(err)?;
        // words(i): while n - i >= 8, copy the word at i.
        b.position_at_end(words);
        let left = b.binary(Opcode::ISUB, n, wi[0]).map_err(err)?;
        let more = b.icmp(irkit_core::IntCC::Uge, left, eight).map_err(err)?;
        b.br(more, word, &[], bytes, &[wi[0]]).map_err(err)?;
        b.position_at_end(word);
        let s = b.elem(i8t, src, &[wi[0]]).map_err(err)?;
        let d = b.elem(i8t, dst, &[wi[0]]).map_err(err)?;
        let v = b.load(i64t, s).map_err(err)?;
        b.store(d, v).map_err(err)?;
        let next = b.binary(Opcode::IADD, wi[0], eight).map_err(err)?;
        b.jump(words, &[next]).map_err(err)?;
        // bytes(i): while i < n, copy the byte at i.
        b.position_at_end(bytes);
        let more = b.icmp(irkit_core::IntCC::Ult, bi[0], n).map_err(err)?;
        b.br(more, byte, &[], done, &[]).map_err(err)?;
        b.position_at_end(byte);
        let s = b.elem(i8t, src, &[bi[0]]).map_err(err)?;
        let d = b.elem(i8t, dst, &[bi[0]]).map_err(err)?;
        let v = b.load(i8t, s).map_err(err)?;
        b.store(d, v).map_err(err)?;
        let next = b.binary(Opcode::IADD, bi[0], one).map_err(err)?;
        b.jump(bytes, &[next]).map_err(err)?;
        b.position_at_end(done);
        b.ret(None).map_err(err)?;
        self.copy = Some(f);
        Ok(f)
    }

    /// The zeroing routine `__irkit.generic.zero(dst, n)` (built on first use): `n` zero
    /// bytes at `dst`, for a `const_zero` of a type built from a type parameter.
    pub(crate) fn zero_fn(&mut self) -> Result<Inst, LinkError> {
        if let Some(z) = self.zero {
            return Ok(z);
        }
        let err = |e| internal("the zeroing routine", e);
        let m = &mut *self.m;
        let (ptr, i64t, i8t, void) = (m.ty_ptr(), m.ty_i64(), m.ty_i8(), m.ty_void());
        let sig = m.ty_fn(void, &[ptr, i64t]).map_err(err)?;
        let (zero, one, byte0) = (
            m.const_i64(0),
            m.const_i64(1),
            m.const_int(i8t, 0).map_err(err)?,
        );
        let mut b = Builder::new(m);
        let f = b.func("__irkit.generic.zero", sig).map_err(err)?;
        let (entry, ps) = b.entry_block(f).map_err(err)?;
        let (dst, n) = (ps[0], ps[1]);
        let (head, hi) = b.block(f, &[i64t]).map_err(err)?;
        let (body, _) = b.block(f, &[]).map_err(err)?;
        let (done, _) = b.block(f, &[]).map_err(err)?;
        b.position_at_end(entry);
        b.jump(head, &[zero]).map_err(err)?;
        b.position_at_end(head);
        let more = b.icmp(irkit_core::IntCC::Ult, hi[0], n).map_err(err)?;
        b.br(more, body, &[], done, &[]).map_err(err)?;
        b.position_at_end(body);
        let at = b.elem(i8t, dst, &[hi[0]]).map_err(err)?;
        b.store(at, byte0).map_err(err)?;
        let next = b.binary(Opcode::IADD, hi[0], one).map_err(err)?;
        b.jump(head, &[next]).map_err(err)?;
        b.position_at_end(done);
        b.ret(None).map_err(err)?;
        self.zero = Some(f);
        Ok(f)
    }

    /// Replaces every instance `specialize @g, A…` of a shared generic at module level by a
    /// wrapper of the instance's type; returns how many.
    pub(crate) fn wrap_instances(&mut self) -> Result<u64, LinkError> {
        let root = self.m.root();
        let instances: Vec<Inst> = self
            .m
            .pool()
            .iter()
            .copied()
            .filter(|&s| {
                self.m.opcode(s) == Opcode::SPECIALIZE
                    && self.m.parent(s) == Some(root)
                    && self
                        .m
                        .operands(s)
                        .first()
                        .is_some_and(|g| self.chosen.contains_key(g))
            })
            .collect();
        let mut rauw = HashMap::with_capacity(instances.len());
        for &s in &instances {
            let g = self.m.operands(s)[0];
            if self.m.operands(s).len() != self.chosen[&g].params.len() + 1 {
                return Err(LinkError::Specialize(format!(
                    "{} does not pass one argument per parameter",
                    crate::label::label(self.m, s)
                )));
            }
            rauw.insert(s, self.wrapper(s)?);
        }
        if !rauw.is_empty() {
            self.m
                .replace_all_uses(&rauw)
                .map_err(|e| internal("replacing instances", e))?;
        }
        Ok(instances.len() as u64)
    }

    /// The wrapper of instance `s`: stores the arguments of a type parameter in slots of
    /// their concrete types, calls the shared function, loads the result.
    fn wrapper(&mut self, s: Inst) -> Result<Inst, LinkError> {
        let ops = self.m.operands(s).to_vec();
        let (g, args) = (ops[0], &ops[1..]);
        let info = &self.chosen[&g];
        let params = info.params.clone();
        let shared = self.shared_fn[&g];
        let orig: Option<(Inst, Vec<Inst>)> = self
            .m
            .ty(info.func)
            .and_then(|t| self.m.fn_signature(t))
            .map(|(r, p)| (r, p.to_vec()));
        let Some((orig_ret, orig_params)) = orig else {
            return Err(internal(
                "a wrapper",
                "the generic's function has no signature",
            ));
        };
        let Some(sig) = self.m.ty(s) else {
            return Err(internal("a wrapper", "the instance has no type"));
        };
        let inst_sig: Option<(Inst, Vec<Inst>)> =
            self.m.fn_signature(sig).map(|(r, p)| (r, p.to_vec()));
        let Some((inst_ret, inst_params)) = inst_sig else {
            return Err(internal(
                "a wrapper",
                "the instance's type is not a function type",
            ));
        };
        // A parameter (or the result) of a dependent type goes by pointer: its concrete type
        // is the instance's.
        let m = &*self.m;
        let by_pointer: Vec<Option<Inst>> = orig_params
            .iter()
            .zip(&inst_params)
            .map(|(&t, &c)| is_dependent(m, g, t).then_some(c))
            .collect();
        let ret_by_pointer = is_dependent(m, g, orig_ret).then_some(inst_ret);
        let mut lead = Vec::with_capacity(args.len());
        for (&p, &a) in params.iter().zip(args) {
            lead.push(if self.m.opcode(p) == Opcode::TYPE_PARAM {
                self.desc(a)?
            } else {
                self.table(a)?
            });
        }
        let name = crate::label::label(self.m, s)
            .trim_start_matches('@')
            .to_string();
        let err = |e| internal("a wrapper", e);
        let mut b = Builder::new(self.m);
        let f = b.func(&name, sig).map_err(err)?;
        let (entry, ps) = b.entry_block(f).map_err(err)?;
        b.position_at_end(entry);
        let mut call_args = lead;
        for (&c, &v) in by_pointer.iter().zip(&ps) {
            match c {
                Some(c) => {
                    let slot = stackalloc(&mut b, c).map_err(err)?;
                    store_value(&mut b, slot, c, v)?;
                    call_args.push(slot);
                }
                None => call_args.push(v),
            }
        }
        let out = match ret_by_pointer {
            Some(c) => {
                let slot = stackalloc(&mut b, c).map_err(err)?;
                call_args.push(slot);
                Some((slot, c))
            }
            None => None,
        };
        let r = b.call(shared, &call_args).map_err(err)?;
        match out {
            Some((slot, c)) => {
                let v = load_value(&mut b, c, slot)?;
                b.ret(Some(v)).map_err(err)?;
            }
            None => {
                let has_value = b.module().ty(r).is_some();
                b.ret(has_value.then_some(r)).map_err(err)?;
            }
        }
        Ok(f)
    }
}

/// `stackalloc ty` at the builder's cursor.
pub(crate) fn stackalloc(b: &mut Builder<'_>, ty: Inst) -> Result<Inst, irkit_core::CoreError> {
    let ptr = b.module().ty_ptr();
    b.inst(Opcode::STACKALLOC, Some(ptr), vec![ty], Payload::None)
}

/// The most scalar leaves a value passed to or from a shared generic may have: its wrapper and
/// thunks load and store it leaf by leaf (`load` and `store` take scalars).
const MAX_LEAVES: usize = 4096;

/// The leaves of value type `ty`: (path of field or element indices, scalar type), in
/// order. Iterative; fails beyond [`MAX_LEAVES`].
fn leaves(m: &Module, ty: Inst) -> Result<Vec<(Vec<u64>, Inst)>, LinkError> {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<u64>, Inst)> = vec![(Vec::new(), ty)];
    while let Some((path, t)) = stack.pop() {
        let parts: Vec<Inst> = match m.opcode(t) {
            Opcode::STRUCT | Opcode::NAMED_STRUCT => m.operands(t).to_vec(),
            Opcode::ARRAY => {
                let len = m.payload(t).as_int().unwrap_or(0);
                let elem = m.operands(t).first().copied().unwrap_or(t);
                if len > MAX_LEAVES as u64 {
                    return Err(too_large(m, ty));
                }
                vec![elem; len as usize]
            }
            _ => {
                out.push((path, t));
                if out.len() > MAX_LEAVES {
                    return Err(too_large(m, ty));
                }
                continue;
            }
        };
        for (k, &p) in parts.iter().enumerate().rev() {
            let mut q = path.clone();
            q.push(k as u64);
            stack.push((q, p));
        }
        if stack.len() > MAX_LEAVES {
            return Err(too_large(m, ty));
        }
    }
    Ok(out)
}

fn too_large(m: &Module, ty: Inst) -> LinkError {
    LinkError::Specialize(format!(
        "{} has more than {MAX_LEAVES} scalars: too large to pass to a shared generic",
        crate::label::label(m, ty)
    ))
}

/// The address of leaf `path` of a `ty` at `p`.
fn leaf_addr(b: &mut Builder<'_>, ty: Inst, p: Inst, path: &[u64]) -> Result<Inst, LinkError> {
    if path.is_empty() {
        return Ok(p);
    }
    let m = b.module();
    let mut idx = vec![m.const_i64(0)];
    for &k in path {
        idx.push(m.const_i32(k as i32));
    }
    b.elem(ty, p, &idx)
        .map_err(|e| internal("a leaf address", e))
}

/// Loads a value of type `ty` from `p`, leaf by leaf.
pub(crate) fn load_value(b: &mut Builder<'_>, ty: Inst, p: Inst) -> Result<Inst, LinkError> {
    let err = |e| internal("loading a value", e);
    let parts = leaves(b.module(), ty)?;
    if parts.len() == 1 && parts[0].0.is_empty() {
        return b.load(ty, p).map_err(err);
    }
    let mut agg = b.module().const_zero(ty).map_err(err)?;
    for (path, leaf) in parts {
        let at = leaf_addr(b, ty, p, &path)?;
        let v = b.load(leaf, at).map_err(err)?;
        agg = insert_at(b, agg, &path, v)?;
    }
    Ok(agg)
}

/// `agg` with the leaf at `path` replaced by `v` (extract down, insert up).
fn insert_at(b: &mut Builder<'_>, agg: Inst, path: &[u64], v: Inst) -> Result<Inst, LinkError> {
    let err = |e| internal("building a value", e);
    let mut chain = vec![agg];
    for &k in &path[..path.len() - 1] {
        let inner = *chain.last().unwrap_or(&agg);
        chain.push(b.extract(inner, k).map_err(err)?);
    }
    let mut cur = v;
    for (depth, &k) in path.iter().enumerate().rev() {
        cur = b.insert(chain[depth], k, cur).map_err(err)?;
    }
    Ok(cur)
}

/// Stores value `v` of type `ty` at `p`, leaf by leaf.
pub(crate) fn store_value(
    b: &mut Builder<'_>,
    p: Inst,
    ty: Inst,
    v: Inst,
) -> Result<(), LinkError> {
    let err = |e| internal("storing a value", e);
    let parts = leaves(b.module(), ty)?;
    for (path, _) in parts {
        let at = leaf_addr(b, ty, p, &path)?;
        let mut leaf = v;
        for &k in &path {
            leaf = b.extract(leaf, k).map_err(err)?;
        }
        b.store(at, leaf).map_err(err)?;
    }
    Ok(())
}
