//! Whether a generic function can be shared, and what its shared version needs to know.
//!
//! The lowering handles a value of a type parameter `T` by pointer, so a generic can be shared
//! when its signature's parameters and result are each a type parameter or a type without
//! one, and its body does only these things with values of a type parameter: receive them
//! (parameters, block parameters), pass them to calls (through `lookup_witness` of a witness
//! parameter, or to an instance of a generic whose arguments are its own parameters or
//! concrete), return them, `select` between them, `load` and `store` them, address an element
//! of an array of `T` (`elem T, %p, %i`) and `stackalloc` one. Types built from a type
//! parameter (`struct {T, T}`, an instance of a generic type) need run-time layouts and are
//! not shared yet; nor is a generic witness table as an argument. Every refusal is a reason
//! for `--stats`; the generic is then cloned as before.

use irkit_core::{Inst, Module, Opcode};

use super::layout::{in_generic, is_dependent, is_type_param, layable};

/// What the lowering needs of a generic it shares.
#[derive(Clone, Debug)]
pub(crate) struct Info {
    /// The generic's function.
    pub(crate) func: Inst,
    /// Its parameters in order (`type_param` or `witness_param`).
    pub(crate) params: Vec<Inst>,
    /// The generics it calls with arguments made of its own parameters (they must be shared
    /// too).
    pub(crate) calls: Vec<Inst>,
}

impl Info {
    /// The type parameters, in order.
    pub(crate) fn type_params<'a>(&'a self, m: &'a Module) -> impl Iterator<Item = Inst> + 'a {
        self.params
            .iter()
            .copied()
            .filter(move |&p| m.opcode(p) == Opcode::TYPE_PARAM)
    }
}

/// Whether value `v` (an instruction of `g`'s body, or a `const_zero`) has a dependent type of
/// `g` (a type parameter, or a type built from one: [`layout`](super::layout)).
pub(crate) fn of_dependent(m: &Module, g: Inst, v: Inst) -> bool {
    let value = !m.opcode(v).is_hoistable() || m.opcode(v) == Opcode::CONST_ZERO;
    value && m.ty(v).is_some_and(|t| is_dependent(m, g, t))
}

/// Whether type `t` mentions `target` (bounded: a type's operands are hoistables, walked with
/// a visited set).
pub(crate) fn mentions(m: &Module, t: Inst, target: Inst) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![t];
    while let Some(x) = stack.pop() {
        if x == target {
            return true;
        }
        if seen.insert(x) && m.opcode(x).is_hoistable() {
            stack.extend(m.operands(x).iter().copied());
        }
    }
    false
}

/// The analysis of generic `g`, or why it cannot be shared.
pub(crate) fn analyze(m: &Module, g: Inst) -> Result<Info, String> {
    let func = match m.children(g) {
        [c] if m.opcode(*c) == Opcode::FUNC && m.entry_block(*c).is_some() => *c,
        _ => return Err("it defines no function body".to_string()),
    };
    let params = m.operands(g).to_vec();
    for &p in &params {
        match m.opcode(p) {
            Opcode::TYPE_PARAM => {}
            Opcode::WITNESS_PARAM => interface_ok(m, p)?,
            op => return Err(format!("a parameter is a `{op}`")),
        }
    }
    let sig = m.ty(func).and_then(|s| m.fn_signature(s));
    let Some((ret, args)) = sig else {
        return Err("its function has no signature".to_string());
    };
    let plain = |t: Inst| !in_generic(m, g, t) || layable(m, g, t);
    if !plain(ret) || !args.iter().all(|&a| plain(a)) {
        return Err("its signature has a type the lowering cannot lay out".to_string());
    }
    // The shape the lowering relies on (the link verifies its output, not yet its inputs'
    // types): the entry's parameters are the signature's, every branch stays in the function.
    let entry = m.entry_block(func).unwrap_or(func);
    if m.block_params(entry).len() != args.len() {
        return Err("its entry block's parameters are not its signature's".to_string());
    }
    let mut calls = Vec::new();
    for i in m.walk_from(func) {
        if i == func || m.opcode(i) == Opcode::BLOCK {
            continue;
        }
        check_arity(m, i)?;
        if m.opcode(i).is_terminator() {
            for t in irkit_core::edges::successors(m, i) {
                if m.parent(t) != Some(func) {
                    return Err("a branch leaves the function".to_string());
                }
            }
        }
        check_inst(m, g, i, &mut calls)?;
    }
    calls.sort_unstable();
    calls.dedup();
    Ok(Info {
        func,
        params,
        calls,
    })
}

/// A witness parameter's interface: every requirement a function whose parameters and result
/// are each the conforming type itself or a type without it.
fn interface_ok(m: &Module, w: Inst) -> Result<(), String> {
    let Some(iface) = m.ty(w) else {
        return Err("a witness parameter has no interface".to_string());
    };
    for &r in m.operands(iface) {
        let sig = m.ty(r).and_then(|t| m.fn_signature(t));
        let Some((ret, args)) = sig else {
            return Err("an interface requirement is not a function".to_string());
        };
        let plain = |t: Inst| t == iface || !mentions(m, t, iface);
        if !plain(ret) || !args.iter().all(|&a| plain(a)) {
            return Err(format!(
                "requirement {} has a type built from `Self`",
                m.name(r).unwrap_or("?")
            ));
        }
    }
    Ok(())
}

/// The operand counts the lowering reads by position.
fn check_arity(m: &Module, i: Inst) -> Result<(), String> {
    let n = m.operands(i).len();
    let ok = match m.opcode(i) {
        Opcode::CALL => n >= 1,
        Opcode::LOOKUP_WITNESS | Opcode::STORE => n == 2,
        Opcode::SELECT => n == 3,
        Opcode::STACKALLOC | Opcode::LOAD => n == 1,
        Opcode::ELEM => n >= 3,
        Opcode::RET => n <= 1,
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("a `{}` has {n} operands", m.opcode(i)))
    }
}

/// Checks one instruction of `g`'s body; records the generics it calls with `g`'s parameters.
fn check_inst(m: &Module, g: Inst, i: Inst, calls: &mut Vec<Inst>) -> Result<(), String> {
    let op = m.opcode(i);
    // A `lookup_witness` has the requirement's type with `Self` replaced: a function type
    // built from a type parameter, which the lowering replaces by the thunk's signature.
    if op != Opcode::LOOKUP_WITNESS
        && let Some(t) = m.ty(i)
        && in_generic(m, g, t)
        && !layable(m, g, t)
    {
        return Err(format!(
            "`{op}` has a type built from a type parameter that the lowering cannot lay out"
        ));
    }
    // Values of a dependent type are only made by these (the others would need it as a
    // scalar).
    if op != Opcode::LOOKUP_WITNESS
        && m.ty(i).is_some_and(|t| is_dependent(m, g, t))
        && !matches!(
            op,
            Opcode::PARAM | Opcode::CALL | Opcode::SELECT | Opcode::EXTRACT | Opcode::INSERT
        )
    {
        return Err(format!("`{op}` makes a value of a type parameter"));
    }
    for (k, &o) in m.operands(i).iter().enumerate() {
        if m.opcode(o) == Opcode::LOOKUP_WITNESS && !(op == Opcode::CALL && k == 0) {
            return Err(format!("a `lookup_witness` is used by `{op}`, not called"));
        }
        if of_dependent(m, g, o) {
            let allowed = match op {
                Opcode::CALL | Opcode::SELECT => k > 0,
                Opcode::EXTRACT => k == 0,
                Opcode::INSERT => k <= 1,
                Opcode::RET | Opcode::JUMP | Opcode::BR | Opcode::SWITCH => true,
                _ => false,
            };
            if !allowed {
                return Err(format!("`{op}` takes a value of a type parameter"));
            }
        } else if in_generic(m, g, o) {
            let allowed = match (op, k) {
                (Opcode::CALL, 0) if m.opcode(o) == Opcode::SPECIALIZE => {
                    calls.push(instance_ok(m, g, o)?);
                    true
                }
                (Opcode::STACKALLOC, 0) => is_type_param(m, g, o),
                (Opcode::ELEM, 0) => is_type_param(m, g, o) && m.operands(i).len() == 3,
                (Opcode::LOOKUP_WITNESS, 0) => m.opcode(o) == Opcode::WITNESS_PARAM,
                _ => false,
            };
            if !allowed {
                return Err(format!(
                    "`{op}` takes `{}`, built from a parameter, as operand {k}",
                    m.opcode(o)
                ));
            }
        }
    }
    Ok(())
}

/// An instance `specialize @h, args…` called in `g`'s body with `g`'s parameters: `h` must be
/// a generic function and each argument a parameter of `g` or concrete (a concrete witness a
/// `witness_table`, not an instance of a generic one). Returns `h`.
fn instance_ok(m: &Module, g: Inst, s: Inst) -> Result<Inst, String> {
    let Some((&h, args)) = m.operands(s).split_first() else {
        return Err("an empty `specialize`".to_string());
    };
    if m.opcode(h) != Opcode::GENERIC {
        return Err("it calls an instance of something not a generic".to_string());
    }
    for &a in args {
        let ok = match m.opcode(a) {
            Opcode::TYPE_PARAM | Opcode::WITNESS_PARAM => m.parent(a) == Some(g),
            Opcode::WITNESS_TABLE => true,
            op => op.is_type() && !in_generic(m, g, a),
        };
        if !ok {
            return Err(format!(
                "it calls {} with an argument built from a parameter",
                m.name(h).unwrap_or("a generic")
            ));
        }
    }
    Ok(h)
}
