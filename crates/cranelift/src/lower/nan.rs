//! Which float results must be made the canonical NaN: only those whose NaN bits the program
//! can see.
//!
//! spec/ir.md ("Canonical NaN") makes every NaN that float arithmetic produces the canonical
//! one, so that a program's results are the same bits on every back end. The hardware does not
//! (x86 gives a NaN operand's payload, or a negative "default" NaN), so the lowering compares
//! each result with itself and selects the canonical NaN: three instructions and a dependency
//! on every `fadd` of a loop. Most of them are invisible: when a result is only an operand of
//! more arithmetic (whose own NaN result is canonicalized in turn, or not seen either), of a
//! comparison, or of a conversion to an integer, no bit of a NaN it might be reaches anything
//! the program observes. Arithmetic gives a NaN for a NaN operand whatever its payload
//! (`fmin`/`fmax` included, with Cranelift's wasm semantics), a comparison is unordered, a
//! conversion saturates or traps the same way.
//!
//! So a result is canonicalized only if it *reaches an observer*: any use other than those,
//! such as a `store`, a `bitcast`, a call or return, an `insert` into an aggregate, or the
//! sign operand of `fcopysign` (whose result is a number whose sign is the NaN's). Values pass
//! through `select`, block parameters, `fneg`, `fabs` and `fcopysign`'s magnitude operand
//! unchanged (bit operations and moves keep a NaN a NaN), so a result flowing through them
//! reaches what their result reaches. This is a least fixed point over the function: the
//! results that need canonicalizing are those from which an observer is reachable backwards.
//! The program computes exactly the bits the spec says; only invisible work is left out.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{Conversion, FloatBinary, FloatUnary, Inst, Module, Op};

/// The values of `f` (over its blocks `order`, those lowered) whose NaN bits may be observed:
/// a float arithmetic result in this set must be canonicalized, one outside it need not be.
pub(crate) fn observed(m: &Module, order: &[Inst]) -> HashSet<Inst> {
    // Only a float or vector result is ever looked up (the lowering canonicalizes nothing
    // else): a function without any (most integer code) needs no analysis.
    let floats = order.iter().any(|&blk| {
        m.children(blk)
            .iter()
            .any(|&u| m.ty(u).is_some_and(|t| may_be_nan(m, t)))
    });
    if !floats {
        return HashSet::default();
    }
    // What each pass-through value (a `select`, a bit operation, a block parameter) is made
    // of: if it is observed, so are they.
    let mut sources: HashMap<Inst, Vec<Inst>> = HashMap::default();
    let mut seen: Vec<Inst> = Vec::new();
    for &blk in order {
        for &u in &m.children(blk)[m.block_params(blk).len()..] {
            let ops = m.operands(u);
            match use_kind(m, u) {
                Use::Insensitive => {}
                Use::PassThrough(range) => {
                    let from = ops.get(range).unwrap_or(&[]);
                    sources.entry(u).or_default().extend(from);
                }
                Use::CopySign => {
                    sources.entry(u).or_default().push(ops[0]);
                    seen.extend(ops.get(1));
                }
                Use::Branch => {
                    let (own, edges) = irkit_core::edges::edges_of(m, u);
                    seen.extend(&ops[own]);
                    for e in edges {
                        let params = m.block_params(e.target);
                        for (&p, &a) in params.iter().zip(&ops[e.args.clone()]) {
                            sources.entry(p).or_default().push(a);
                        }
                        // Arguments beyond the parameters (refused by the verifier) count as
                        // observed, to be safe.
                        seen.extend(ops[e.args].iter().skip(params.len()));
                    }
                }
                Use::Observer => seen.extend(ops),
            }
        }
    }
    let mut out: HashSet<Inst> = HashSet::default();
    while let Some(v) = seen.pop() {
        if out.insert(v)
            && let Some(from) = sources.get(&v)
        {
            seen.extend(from);
        }
    }
    out
}

/// Whether a value of type `ty` can be a NaN or hold one: a float, or a vector (whatever its
/// lanes: the question is only asked to skip work, so it may say yes too often).
fn may_be_nan(m: &Module, ty: Inst) -> bool {
    m.float_width(ty).is_some() || m.opcode(ty) == irkit_core::Opcode::VEC
}

/// How instruction `u` uses its operands' NaN bits.
enum Use {
    /// Not at all: arithmetic, comparison, conversion to an integer or between float widths.
    Insensitive,
    /// The operands in this range become the result, bits unchanged.
    PassThrough(std::ops::Range<usize>),
    /// `fcopysign`: the magnitude passes through, the sign operand is observed.
    CopySign,
    /// A terminator: its edges' arguments become the target's parameters, its own operands
    /// are observed.
    Branch,
    /// Every operand is observed.
    Observer,
}

fn use_kind(m: &Module, u: Inst) -> Use {
    let opcode = m.opcode(u);
    let Some(op) = opcode.known() else {
        return Use::Observer;
    };
    if opcode.is_terminator() {
        return Use::Branch;
    }
    if let Some(f) = op.float_unary() {
        return match f {
            FloatUnary::Fneg | FloatUnary::Fabs => Use::PassThrough(0..1),
            _ => Use::Insensitive,
        };
    }
    if let Some(f) = op.float_binary() {
        return match f {
            FloatBinary::Fcopysign => Use::CopySign,
            _ => Use::Insensitive,
        };
    }
    match (op, op.conversion()) {
        (Op::Fcmp, _) => Use::Insensitive,
        (Op::Select, _) => Use::PassThrough(1..3),
        (
            _,
            Some(Conversion::Fptrunc | Conversion::Fpext | Conversion::Fptosi | Conversion::Fptoui),
        ) => Use::Insensitive,
        _ => Use::Observer,
    }
}
