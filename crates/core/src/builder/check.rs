//! The typed path's checks ([`Ins`](super::Ins)): misuse of the builder is a programming error
//! of the front end, reported at once by a panic whose message names the operation and the
//! operand (`` `iadd`: operand 1 is the type `i32`, not a value ``), where the verifier would
//! report it later and further from its cause.

use crate::message::value_text;
use crate::place::describe;
use crate::{Inst, Module, Opcode};

use super::Builder;

/// An operand as a message shows it: a type or constant by its value (`i32`, `i32 7`), any
/// other instruction by its place.
pub(super) fn show(m: &Module, v: Inst) -> String {
    match m.get(v) {
        Some(d) if !d.is_dead() && d.opcode().is_hoistable() => format!("`{}`", value_text(m, v)),
        Some(d) if !d.is_dead() => describe(m, v),
        _ => format!("{v}"),
    }
}

/// Which class of type an operation needs.
#[derive(Clone, Copy)]
pub(super) enum Class {
    Int,
    Float,
    IntOrPtr,
    Ptr,
    I1,
}

impl Class {
    fn admits(self, m: &Module, ty: Inst) -> bool {
        match self {
            Class::Int => m.int_width(ty).is_some(),
            Class::Float => m.float_width(ty).is_some(),
            Class::IntOrPtr => m.int_width(ty).is_some() || m.opcode(ty) == Opcode::PTR,
            Class::Ptr => m.opcode(ty) == Opcode::PTR,
            Class::I1 => m.opcode(ty) == Opcode::I1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Class::Int => "an integer type",
            Class::Float => "a float type",
            Class::IntOrPtr => "an integer or ptr type",
            Class::Ptr => "ptr",
            Class::I1 => "i1",
        }
    }
}

impl Builder<'_> {
    /// The block the cursor is in; panics without one.
    pub(super) fn cursor(&self, op: &str) -> Inst {
        match self.block {
            Some(b) => b,
            None => panic!(
                "`{op}`: no current block (place the cursor with position_at_end or position_before)"
            ),
        }
    }

    /// The value type of operand `k` of `op`, `v`; panics if `v` is not a value of this
    /// module.
    pub(super) fn value(&mut self, op: &str, k: usize, v: Inst) -> Inst {
        let Some(d) = self.m.get(v).filter(|d| !d.is_dead()) else {
            panic!("`{op}`: operand {k} ({v}) is not an instruction of this module");
        };
        let opcode = d.opcode();
        if opcode.is_type() {
            panic!(
                "`{op}`: operand {k} is the type {}, not a value (a type passed as a value, or a handle from another module?)",
                show(self.m, v)
            );
        }
        if opcode.is_definition() {
            return self.m.ty_ptr();
        }
        match d.ty() {
            Some(t) => t,
            None => panic!(
                "`{op}`: operand {k} ({}) has no value (a handle from another module?)",
                show(self.m, v)
            ),
        }
    }

    /// The value type of operand `k`, which must be of `class`.
    pub(super) fn value_of(&mut self, op: &str, k: usize, v: Inst, class: Class) -> Inst {
        let t = self.value(op, k, v);
        if !class.admits(self.m, t) {
            panic!(
                "`{op}`: operand {k} has type {}, not {}",
                show(self.m, t),
                class.name()
            );
        }
        t
    }

    /// The common type of the operands `vs` of `op`, which must all be of `class`.
    pub(super) fn same(&mut self, op: &str, vs: &[Inst], class: Class) -> Inst {
        let t0 = self.value_of(op, 0, vs[0], class);
        for (k, &v) in vs.iter().enumerate().skip(1) {
            let t = self.value_of(op, k, v, class);
            if t != t0 {
                panic!(
                    "`{op}`: operands have different types: operand 0 is {}, operand {k} is {}",
                    show(self.m, t0),
                    show(self.m, t)
                );
            }
        }
        t0
    }

    /// `ty`, which must be a type of this module (operand `what` of `op`).
    pub(super) fn a_type(&self, op: &str, what: &str, ty: Inst) -> Inst {
        let ok = self
            .m
            .get(ty)
            .is_some_and(|d| !d.is_dead() && d.opcode().is_type());
        if !ok {
            panic!("`{op}`: the {what} {} is not a type", show(self.m, ty));
        }
        ty
    }

    /// Checks that `args` fit `params` one by one. `what` names the callee or the block for
    /// a message, and is called only to panic (naming a block scans its function's blocks: a
    /// cost per edge would make building a function quadratic in its blocks).
    pub(super) fn args_fit(
        &mut self,
        op: &str,
        what: impl Fn(&Module) -> String,
        params: &[Inst],
        args: &[Inst],
    ) {
        if params.len() != args.len() {
            panic!(
                "`{op}`: {} takes {}, given {}",
                what(self.m),
                crate::message::count(params.len(), "argument"),
                args.len()
            );
        }
        for (k, (&p, &a)) in params.iter().zip(args).enumerate() {
            let t = self.value(op, k, a);
            if t != p {
                panic!(
                    "`{op}`: argument {k} has type {}, but {} takes {} there",
                    show(self.m, t),
                    what(self.m),
                    show(self.m, p)
                );
            }
        }
    }

    /// Checks an edge: `target` is a block of the current function, `args` fit its
    /// parameters.
    pub(super) fn edge(&mut self, op: &str, target: Inst, args: &[Inst]) {
        let is_block = self
            .m
            .get(target)
            .is_some_and(|d| !d.is_dead() && d.opcode() == Opcode::BLOCK);
        if !is_block {
            panic!("`{op}`: the target {} is not a block", show(self.m, target));
        }
        let params: smallvec::SmallVec<[Inst; 8]> = self
            .m
            .block_params(target)
            .iter()
            .map(|&p| self.m.ty(p).unwrap_or(p))
            .collect();
        let what = |m: &Module| format!("the block {}", describe(m, target));
        self.args_fit(op, what, &params, args);
    }

    /// Panics with `op`'s name if the module refused what the checks let through.
    pub(super) fn done(op: &str, r: Result<Inst, crate::CoreError>) -> Inst {
        match r {
            Ok(i) => i,
            Err(e) => panic!("`{op}`: {e}"),
        }
    }
}
