//! Per-instruction checks: the registry's shape (opcode known and accepted, arity, type
//! presence, payload kind) for every instruction, then operand and result typing per opcode.

use crate::opcode::Flags;
use crate::{Conversion, FloatCC, Inst, IntCC, Op, Opcode, Payload, PayloadKind, TypeRule};

use super::{Cx, Kind, VTy, plural};

/// Decorations whose string payload must not be empty.
const NONEMPTY_STR: [Opcode; 5] = [
    Opcode::EXPORT,
    Opcode::IMPORT,
    Opcode::EXTERN,
    Opcode::NAME_HINT,
    Opcode::INLINE_SCOPE,
];

impl<'m> Cx<'m> {
    /// Checks what the registry says about `i`; `false` if typing it further makes no sense.
    pub(super) fn check_registry(&mut self, i: Inst) -> bool {
        let Some(d) = self.live(i) else { return false };
        let op = d.opcode;
        let Some(info) = op.info() else {
            self.err(
                i,
                format!("unknown opcode #{}: this verifier does not know it", op.0),
            );
            return false;
        };
        let name = info.name;
        if info.flags.contains(Flags::RESERVED) {
            self.err(i, format!("`{name}` is reserved for a later version"));
            return false;
        }
        if op == Opcode::MODULE && i != self.m.root() {
            self.err(i, "only the root may be a `module`");
            return false;
        }
        let mut good = true;
        let n = d.operands.len();
        if !info.arity.accepts(n) {
            let takes = match info.arity {
                crate::Arity::Exact(k) => plural(k as usize, "operand"),
                crate::Arity::Range(lo, hi) => format!("{lo} to {hi} operands"),
                crate::Arity::AtLeast(lo) => format!("at least {}", plural(lo as usize, "operand")),
            };
            self.err(i, format!("`{name}` takes {takes}, found {n}"));
            good = false;
        }
        match (info.ty, d.ty) {
            (TypeRule::Required, None) => {
                self.err(i, format!("`{name}` needs a result type"));
                good = false;
            }
            (TypeRule::None, Some(_)) => {
                self.err(i, format!("`{name}` has no result type, but one is given"));
                good = false;
            }
            _ => {}
        }
        let payload_ok = match (info.payload, &*d.payload) {
            (PayloadKind::None, Payload::None)
            | (PayloadKind::Int, Payload::Int(_))
            | (PayloadKind::Float, Payload::Float(_))
            | (PayloadKind::Str, Payload::Str(_))
            | (PayloadKind::Bytes, Payload::Bytes(_)) => true,
            (kind @ (PayloadKind::IntCC | PayloadKind::FloatCC), Payload::Int(c)) => {
                let (valid, class) = if kind == PayloadKind::IntCC {
                    (IntCC::from_code(*c).is_some(), "integer")
                } else {
                    (FloatCC::from_code(*c).is_some(), "float")
                };
                if !valid {
                    let msg = format!("`{name}` has an invalid {class} condition code {c}");
                    self.err(i, msg);
                    good = false;
                }
                true
            }
            _ => false,
        };
        if !payload_ok {
            let want = match info.payload {
                PayloadKind::None => "no payload".to_owned(),
                PayloadKind::Int => "an integer payload".to_owned(),
                PayloadKind::Float => "a float payload".to_owned(),
                PayloadKind::Str if NONEMPTY_STR.contains(&op) => {
                    "a non-empty string payload".to_owned()
                }
                PayloadKind::Str => "a string payload".to_owned(),
                PayloadKind::Bytes => "a bytes payload".to_owned(),
                PayloadKind::IntCC => "an integer condition code payload".to_owned(),
                PayloadKind::FloatCC => "a float condition code payload".to_owned(),
            };
            let found = match &*d.payload {
                Payload::None => "none".to_owned(),
                p => format!("a {} payload", p.kind_name()),
            };
            if info.payload == PayloadKind::None {
                self.err(i, format!("`{name}` takes no payload, found {found}"));
            } else {
                self.err(i, format!("`{name}` needs {want}, found {found}"));
            }
            good = false;
        } else if NONEMPTY_STR.contains(&op) && d.payload.as_str().is_some_and(str::is_empty) {
            self.err(i, format!("`{name}` needs a non-empty string payload"));
            good = false;
        } else if op == Opcode::TRAP_MSG
            && let Some(why) = d.payload.as_str().and_then(crate::trap_kind_problem)
        {
            self.err(i, format!("`{name}`: {why}"));
            good = false;
        }
        if !info.flags.contains(Flags::PARENT) && !d.children().is_empty() {
            self.err(
                i,
                format!(
                    "`{name}` cannot have children (it has {})",
                    plural(d.children().len(), "child")
                ),
            );
            good = false;
        }
        if !d.decorations().is_empty() {
            // An inlining scope's call site is its own `loc` (rule A12).
            if op.is_decoration() && op != Opcode::INLINE_SCOPE {
                self.err(i, format!("decoration `{name}` cannot carry decorations"));
                good = false;
            } else if op.is_hoistable() {
                self.err(i, format!("hoistable `{name}` cannot carry decorations"));
                good = false;
            }
        }
        good
    }

    /// The result type of `i` as a value type; reports a result type that is not one.
    #[inline]
    pub(super) fn result(&mut self, i: Inst) -> Option<VTy> {
        let d = self.live(i)?;
        let t = d.ty?;
        match self.kind(t) {
            Kind::Value if !self.is_interface(t) => Some(VTy(Some(t))),
            Kind::Bad => None,
            _ => self.result_not_value(i, d.opcode, t),
        }
    }

    /// [`Cx::result`] for a result type `t` that is not a well-formed value type (reported
    /// unless `op` may have it).
    #[cold]
    #[inline(never)]
    fn result_not_value(&mut self, i: Inst, op: Opcode, t: Inst) -> Option<VTy> {
        match self.kind(t) {
            Kind::Value if self.is_interface(t) => self.no_type(
                i,
                format!(
                    "result type {} is an interface: an interface is a type only as `Self` in a requirement's type",
                    self.vname(t)
                ),
            ),
            Kind::Value => Some(VTy(Some(t))),
            Kind::Bad => None,
            Kind::Void if matches!(op, Opcode::CALL | Opcode::CALL_INDIRECT) => None,
            Kind::Fn if op == Opcode::LOOKUP_WITNESS => None,
            Kind::Void | Kind::Fn => {
                self.no_type(i, format!("result type {} is not a value type", self.ty_str(t)))
            }
            Kind::NotType => self.no_type(
                i,
                format!("result type names {} (inst {}), which is not a type", self.opname(t), t.index()),
            ),
        }
    }

    /// Reports `message` at `i`, a type position that holds no value type.
    fn no_type(&mut self, i: Inst, message: String) -> Option<VTy> {
        self.err(i, message);
        None
    }

    /// The value type of operand `k` of `i`; reports an operand that is not a value.
    #[inline]
    pub(super) fn val(&mut self, i: Inst, k: usize) -> Option<VTy> {
        let v = *self.live(i)?.operands.get(k)?;
        let d = self.live(v)?;
        let op = d.opcode;
        // One registry lookup (an opaque opcode has no flags).
        let info = op.info();
        let flags = info.map_or(Flags::NONE, |x| x.flags);
        if flags.contains(Flags::TYPE)
            || op == Opcode::BLOCK
            || flags.contains(Flags::DECORATION)
            || op == Opcode::MODULE
        {
            self.not_a_value(i, k, v);
            return None;
        }
        if info.is_none() || flags.contains(Flags::RESERVED) {
            return None;
        }
        if flags.contains(Flags::DEFINITION) {
            return Some(VTy(self.ptr));
        }
        // A specialized generic function and a witness lookup stand for a function (after
        // specialization, a `func`): used as a value, they are its address.
        if matches!(op, Opcode::SPECIALIZE | Opcode::LOOKUP_WITNESS)
            && d.ty.is_some_and(|t| self.kind(t) == Kind::Fn)
        {
            return Some(VTy(self.ptr));
        }
        match d.ty {
            None => {
                self.no_value(i, k, v);
                None
            }
            Some(t) => self.as_value_type(t),
        }
    }

    /// Reports operand `k` of `i`, `v`, a type, block, decoration or module: not a value.
    #[cold]
    #[inline(never)]
    fn not_a_value(&mut self, i: Inst, k: usize, v: Inst) {
        let what = match self.opc(v) {
            Some(op) if op.is_type() => format!("the type {}", self.ty_str(v)),
            Some(Opcode::BLOCK) => format!("block {}", self.vname(v)),
            _ => format!("the {} instruction (inst {})", self.opname(v), v.index()),
        };
        self.err(i, format!("operand {k} is {what}, not a value"));
    }

    /// Reports operand `k` of `i`, `v`, which has no result type.
    #[cold]
    #[inline(never)]
    fn no_value(&mut self, i: Inst, k: usize, v: Inst) {
        let msg = format!(
            "operand {k} ({}) has no value: {} has no result type",
            self.vname(v),
            self.opname(v)
        );
        self.err(i, msg);
    }

    /// Reports operand `k` of type `got` when `want` does not hold; `what` names `want`.
    #[inline]
    pub(super) fn need(&mut self, i: Inst, k: usize, got: VTy, ok: bool, what: &str) -> bool {
        if !ok {
            self.need_failed(i, k, got, what);
        }
        ok
    }

    #[cold]
    #[inline(never)]
    fn need_failed(&mut self, i: Inst, k: usize, got: VTy, what: &str) {
        let msg = format!(
            "operand {k} has type {}, expected {what}",
            self.vty_str(got)
        );
        self.err(i, msg);
    }

    /// Reports a result of type `got` when `ok` does not hold; `what` names what is expected.
    #[inline]
    pub(super) fn need_res(&mut self, i: Inst, got: VTy, ok: bool, what: &str) -> bool {
        if !ok {
            self.need_res_failed(i, got, what);
        }
        ok
    }

    #[cold]
    #[inline(never)]
    fn need_res_failed(&mut self, i: Inst, got: VTy, what: &str) {
        let msg = format!("result type is {}, expected {what}", self.vty_str(got));
        self.err(i, msg);
    }

    /// Operand `k` must have type `want`.
    #[inline]
    pub(super) fn need_eq(&mut self, i: Inst, k: usize, got: VTy, want: VTy) -> bool {
        if got == want {
            return true;
        }
        self.need_eq_failed(i, k, got, want);
        false
    }

    #[cold]
    #[inline(never)]
    fn need_eq_failed(&mut self, i: Inst, k: usize, got: VTy, want: VTy) {
        let w = self.vty_str(want);
        self.need_failed(i, k, got, &w);
    }

    /// The result must have type `want`.
    #[inline]
    pub(super) fn need_res_eq(&mut self, i: Inst, got: VTy, want: VTy) -> bool {
        if got == want {
            return true;
        }
        self.need_res_eq_failed(i, got, want);
        false
    }

    #[cold]
    #[inline(never)]
    fn need_res_eq_failed(&mut self, i: Inst, got: VTy, want: VTy) {
        let w = self.vty_str(want);
        self.need_res_failed(i, got, &w);
    }

    /// Typing of an instruction inside a block (or anywhere else a non-definition,
    /// non-hoistable, non-decoration instruction was found).
    pub(super) fn check_typed(&mut self, i: Inst) {
        let Some(d) = self.live(i) else { return };
        let op = d.opcode;
        let n = d.operands.len();
        let r = self.result(i);
        // An opaque opcode is reported by `check_registry`.
        let Some(known) = op.known() else { return };
        // Every opcode of the registry has an arm: a new one fails to compile here until its
        // typing rule is written (or it is listed with those checked elsewhere).
        match known {
            _ if self.vector_operand(i) => self.check_vector_op(i, known, r),
            op_int_binary!() => {
                self.same_class(i, r, |cx, v| cx.int_w(v).is_some(), "an integer type");
            }
            op_float_binary!() => {
                self.same_class(i, r, |cx, v| cx.float_w(v).is_some(), "a float type");
            }
            op_int_unary!() => {
                self.one_class(i, r, |cx, v| cx.int_w(v).is_some(), "an integer type");
            }
            op_float_unary!() => {
                self.one_class(i, r, |cx, v| cx.float_w(v).is_some(), "a float type");
            }
            Op::Splat => self.check_splat(i, r),
            Op::Shuffle => self.check_shuffle(i, r),
            Op::Swizzle => self.check_swizzle(i, r),
            Op::Icmp => {
                self.same_class(
                    i,
                    None,
                    |cx, v| cx.int_w(v).is_some() || cx.is_ptr(v),
                    "an integer or ptr type",
                );
                self.res_i1(i, r);
            }
            Op::Fcmp => {
                self.same_class(i, None, |cx, v| cx.float_w(v).is_some(), "a float type");
                self.res_i1(i, r);
            }
            op_conversions!() => {
                if let Some(c) = known.conversion() {
                    self.check_conversion(i, c, r);
                }
            }
            Op::Select => {
                if let Some(c) = self.val(i, 0) {
                    let ok = self.is_i1(c);
                    self.need(i, 0, c, ok, "i1");
                }
                let a = self.val(i, 1);
                let b = self.val(i, 2);
                if let (Some(a), Some(b)) = (a, b) {
                    self.need_eq(i, 2, b, a);
                }
                if let (Some(a), Some(r)) = (a, r) {
                    self.need_res_eq(i, r, a);
                }
            }
            Op::Stackalloc => {
                self.type_operand(i, 0);
                self.res_ptr(i, r);
            }
            Op::Load => {
                self.ptr_operand(i, 0);
                if let Some(r) = r {
                    let ok = self.is_scalar(r) || self.is_vec(r);
                    self.need_res(i, r, ok, "a scalar (int, float or ptr) or a vector");
                }
            }
            Op::Store => {
                self.ptr_operand(i, 0);
                if let Some(v) = self.val(i, 1) {
                    let ok = self.is_scalar(v) || self.is_vec(v);
                    self.need(i, 1, v, ok, "a scalar (int, float or ptr) or a vector");
                }
            }
            Op::MemLoad | Op::MemStore | Op::MemGrow => self.check_memory_inst(i, known, r),
            Op::Elem => self.check_elem(i, n, r),
            Op::Extract | Op::Insert => self.check_extract_insert(i, op, r),
            Op::Call => self.check_call(i, r),
            Op::LookupWitness => self.check_lookup_witness(i),
            Op::WitnessEntry => self.check_witness_entry(i),
            Op::CallIndirect => self.check_call_indirect(i, r),
            Op::Ret => self.check_ret(i),
            Op::TailCall => self.check_tail_call(i),
            Op::TailCallIndirect => self.check_tail_call_indirect(i),
            Op::Jump | Op::Br | Op::Switch => self.check_branch(i, op),
            Op::Event
            | Op::Cue
            | Op::Var
            | Op::Next
            | Op::Case
            | Op::Phi
            | Op::Coalesce
            | Op::Result => self.check_noir_inst(i, op),
            Op::FieldDef | Op::MethodDef | Op::CtorDef => self.check_member(i, known),
            op_objects!() => self.check_object_inst(i, known, r),
            op_existentials!() => self.check_existential(i, known, r),
            // Nothing to type: no operands and no result.
            Op::Unreachable | Op::Trap | Op::TrapMsg => {}
            // Checked by their own rules: the structure (structure.rs), types (types.rs),
            // constants (consts.rs), decorations (decorations.rs), generics (generics.rs),
            // procs (procs.rs), object definitions (objects.rs).
            Op::Proc
            | Op::Class
            | Op::Trait
            | Op::Object
            | Op::Generic
            | Op::WitnessParam
            | Op::Specialize
            | Op::Interface
            | Op::InterfaceReq
            | Op::WitnessTable
            | op_structure!()
            | op_types!()
            | op_constants!()
            | op_decorations!() => {}
        }
    }

    /// Operand 0 and 1 of one class and one type; the result (if given) of that type.
    fn same_class(
        &mut self,
        i: Inst,
        r: Option<VTy>,
        class: impl Fn(&Self, VTy) -> bool,
        what: &str,
    ) {
        let a = self.val(i, 0);
        let b = self.val(i, 1);
        let a = a.filter(|&a| self.need(i, 0, a, class(self, a), what));
        let b = b.filter(|&b| self.need(i, 1, b, class(self, b), what));
        let t = match (a, b) {
            (Some(a), Some(b)) => {
                self.need_eq(i, 1, b, a);
                Some(a)
            }
            (a, b) => a.or(b),
        };
        if let (Some(t), Some(r)) = (t, r) {
            self.need_res_eq(i, r, t);
        }
    }

    /// Operand 0 of one class; the result (if given) of its type.
    fn one_class(
        &mut self,
        i: Inst,
        r: Option<VTy>,
        class: impl Fn(&Self, VTy) -> bool,
        what: &str,
    ) {
        let a = self.val(i, 0);
        let a = a.filter(|&a| self.need(i, 0, a, class(self, a), what));
        if let (Some(a), Some(r)) = (a, r) {
            self.need_res_eq(i, r, a);
        }
    }

    pub(super) fn res_i1(&mut self, i: Inst, r: Option<VTy>) {
        if let Some(r) = r {
            let ok = self.is_i1(r);
            self.need_res(i, r, ok, "i1");
        }
    }

    pub(super) fn res_ptr(&mut self, i: Inst, r: Option<VTy>) {
        if let Some(r) = r {
            let ok = self.is_ptr(r);
            self.need_res(i, r, ok, "ptr");
        }
    }

    pub(super) fn ptr_operand(&mut self, i: Inst, k: usize) {
        if let Some(p) = self.val(i, k) {
            let ok = self.is_ptr(p);
            self.need(i, k, p, ok, "ptr");
        }
    }

    /// Operand `k` must be a value type (a type position); returns it.
    fn type_operand(&mut self, i: Inst, k: usize) -> Option<VTy> {
        let t = *self.live(i)?.operands.get(k)?;
        match self.kind(t) {
            Kind::Value => Some(VTy(Some(t))),
            Kind::Bad => None,
            Kind::Void | Kind::Fn => {
                let found = self.ty_str(t);
                self.no_type(
                    i,
                    format!("operand {k} must be a value type, found {found}"),
                )
            }
            Kind::NotType => {
                let (name, op) = (self.vname(t), self.opname(t));
                self.no_type(
                    i,
                    format!("operand {k} must be a type, found {name} ({op})"),
                )
            }
        }
    }

    fn check_conversion(&mut self, i: Inst, op: Conversion, r: Option<VTy>) {
        let Some(a) = self.val(i, 0) else { return };
        self.check_conversion_of(i, op, a, r);
    }

    /// The conversion `op` from a value of type `a` to `r` (lanes, for a vector conversion).
    pub(super) fn check_conversion_of(&mut self, i: Inst, op: Conversion, a: VTy, r: Option<VTy>) {
        let int = |cx: &Self, v| cx.int_w(v);
        let float = |cx: &Self, v| cx.float_w(v);
        // (operand class, result class) as (predicate, words).
        type Class = (fn(&Cx<'_>, VTy) -> bool, &'static str);
        let is_int: Class = (|cx, v| cx.int_w(v).is_some(), "an integer type");
        let is_float: Class = (|cx, v| cx.float_w(v).is_some(), "a float type");
        let is_ptr: Class = (|cx, v| cx.is_ptr(v), "ptr");
        let is_f32: Class = (|cx, v| cx.float_w(v) == Some(32), "f32");
        let is_f64: Class = (|cx, v| cx.float_w(v) == Some(64), "f64");
        let (from, to) = match op {
            Conversion::Trunc | Conversion::Zext | Conversion::Sext => (is_int, is_int),
            Conversion::Fptrunc => (is_f64, is_f32),
            Conversion::Fpext => (is_f32, is_f64),
            Conversion::Fptoui | Conversion::Fptosi => (is_float, is_int),
            Conversion::Uitofp | Conversion::Sitofp => (is_int, is_float),
            Conversion::Ptrtoint => (is_ptr, is_int),
            Conversion::Inttoptr => (is_int, is_ptr),
            Conversion::Bitcast => {
                let Some(r) = r else { return };
                let bits = |cx: &Self, v| match (int(cx, v), float(cx, v)) {
                    (Some(w @ (32 | 64)), _) | (_, Some(w)) => Some(w),
                    _ => None,
                };
                let ok = a == r || (bits(self, a).is_some() && bits(self, a) == bits(self, r));
                if !ok {
                    let msg = format!(
                        "`bitcast` from {} to {}: only a type to itself, i32 <-> f32 or i64 <-> f64",
                        self.vty_str(a),
                        self.vty_str(r)
                    );
                    self.err(i, msg);
                }
                return;
            }
        };
        let a_ok = self.need(i, 0, a, (from.0)(self, a), from.1);
        let Some(r) = r else { return };
        let r_ok = self.need_res(i, r, (to.0)(self, r), to.1);
        if a_ok && r_ok && matches!(op, Conversion::Trunc | Conversion::Zext | Conversion::Sext) {
            let (wa, wr) = (self.int_w(a).unwrap_or(0), self.int_w(r).unwrap_or(0));
            let (ok, verb) = if op == Conversion::Trunc {
                (wr < wa, "narrow")
            } else {
                (wr > wa, "widen")
            };
            if !ok {
                let msg = format!(
                    "`{op}` from {} to {} does not {verb}",
                    self.vty_str(a),
                    self.vty_str(r)
                );
                self.err(i, msg);
            }
        }
    }

    fn check_elem(&mut self, i: Inst, n: usize, r: Option<VTy>) {
        let base = self.type_operand(i, 0);
        self.ptr_operand(i, 1);
        let ops: &[Inst] = self.live(i).map_or(&[], |d| &d.operands);
        let mut cur = base;
        for (k, &o) in ops.iter().enumerate().take(n).skip(2) {
            let Some(ix) = self.val(i, k) else {
                cur = None;
                continue;
            };
            let ok = self.int_w(ix).is_some();
            if !self.need(i, k, ix, ok, "an integer type") {
                cur = None;
                continue;
            }
            if k == 2 {
                continue; // steps over whole objects of the base type
            }
            let Some(c) = cur else { continue };
            // A specialized generic type: its shape with the arguments substituted (when the
            // module has that type; otherwise the path is not checked further before link).
            let (c, sub) = match self.unfold_specialized(c) {
                Some((shape, sub)) => (shape, Some(sub)),
                None => (c, None),
            };
            // A field type of the shape, with the arguments substituted.
            let concrete = |cx: &Self, t: Inst| match &sub {
                Some(sub) => cx.subst_lookup(t, sub),
                None => Some(t),
            };
            let Some(cop) = c.0.and_then(|t| self.opc(t)) else {
                cur = None;
                continue;
            };
            match cop {
                Opcode::ARRAY => {
                    cur = self
                        .field(c, 0)
                        .ok()
                        .and_then(|e| concrete(self, e))
                        .and_then(|e| self.as_value_type(e));
                    if cur.is_none() {
                        // A zero-length array still has an element type.
                        cur =
                            c.0.and_then(|t| self.live(t))
                                .and_then(|d| d.operands.first().copied())
                                .and_then(|e| concrete(self, e))
                                .and_then(|e| self.as_value_type(e));
                    }
                }
                Opcode::STRUCT | Opcode::NAMED_STRUCT => {
                    let field = self
                        .live(o)
                        .filter(|d| d.opcode == Opcode::CONST_INT)
                        .and_then(|d| d.payload.as_int())
                        .map(|raw| {
                            let w = self.int_w(ix).unwrap_or(64);
                            crate::payload::sign_extend(raw, w)
                        });
                    match field {
                        None => {
                            let msg = format!(
                                "operand {k} must be a const_int to index into {}",
                                self.vty_str(c)
                            );
                            self.err(i, msg);
                            cur = None;
                        }
                        Some(f) => match u64::try_from(f).map(|f| self.field(c, f)) {
                            Ok(Ok(t)) => {
                                cur = concrete(self, t).and_then(|t| self.as_value_type(t))
                            }
                            _ => {
                                let count =
                                    self.live(c.0.unwrap_or(i)).map_or(0, |d| d.operands.len());
                                let msg = format!(
                                    "field index {f} is out of range for {} ({})",
                                    self.vty_str(c),
                                    plural(count, "field")
                                );
                                self.err(i, msg);
                                cur = None;
                            }
                        },
                    }
                }
                _ => {
                    let msg = format!(
                        "operand {k} indexes into {}, which has no fields or elements",
                        self.vty_str(c)
                    );
                    self.err(i, msg);
                    cur = None;
                }
            }
        }
        self.res_ptr(i, r);
    }

    fn check_extract_insert(&mut self, i: Inst, op: Opcode, r: Option<VTy>) {
        let Some(agg) = self.val(i, 0) else { return };
        if self.is_vec(agg) {
            return self.check_lane_access(i, op, agg, r);
        }
        // A specialized generic type is seen through: its fields with the arguments substituted.
        let (shape, sub) = match self.unfold_specialized(agg) {
            Some((shape, sub)) => (shape, Some(sub)),
            None => (agg, None),
        };
        let ok = self.is_aggregate(shape);
        if !self.need(i, 0, agg, ok, "an aggregate (struct or array)") {
            return;
        }
        let k = self
            .live(i)
            .and_then(|d| d.payload.as_int())
            .unwrap_or(u64::MAX);
        let field = match self.field(shape, k) {
            Ok(f) => f,
            Err(count) => {
                let count = count.unwrap_or(0);
                let what = if self.vop_is_array(agg) {
                    "element"
                } else {
                    "field"
                };
                let msg = format!(
                    "`{op}` index {k} is out of range for {} ({})",
                    self.vty_str(agg),
                    plural(usize::try_from(count).unwrap_or(usize::MAX), what)
                );
                self.err(i, msg);
                return;
            }
        };
        let field = match &sub {
            Some(sub) => match self.subst_lookup(field, sub) {
                Some(f) => f,
                None => {
                    let msg = format!(
                        "field {k} of {} has a type no value of this module has",
                        self.vty_str(agg)
                    );
                    self.err(i, msg);
                    return;
                }
            },
            None => field,
        };
        let Some(fv) = self.as_value_type(field) else {
            return;
        };
        if op == Opcode::EXTRACT {
            if let Some(r) = r {
                self.need_res_eq(i, r, fv);
            }
        } else {
            if let Some(v) = self.val(i, 1) {
                self.need_eq(i, 1, v, fv);
            }
            if let Some(r) = r {
                self.need_res_eq(i, r, agg);
            }
        }
    }

    fn vop_is_array(&self, v: VTy) -> bool {
        v.0.and_then(|t| self.opc(t)) == Some(Opcode::ARRAY)
    }
}
