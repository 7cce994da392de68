//! What a random program with classes must compute, worked out from its plan and a trace of
//! what was built, by the rules of spec/ir.md and spec/linking.md ("Objects") rather than by
//! any back end: fields stored truncated and loaded sign-extended, the implementation a class
//! has for a selector by the class-wins rule, `is` against a class as membership of its
//! subtree and against a trait as extension, `as` of null passing, an object's constructor
//! run on its first `instance`, and the named traps.

use std::collections::HashMap;

use super::plan::Plan;

/// How a value is folded into the running one.
#[derive(Clone, Copy, Debug)]
pub(super) enum Mix {
    /// `acc * 31 + v`.
    Mul31,
    /// `acc ^ v`.
    Xor,
}

impl Mix {
    fn apply(self, acc: u64, v: u64) -> u64 {
        match self {
            Mix::Mul31 => acc.wrapping_mul(31).wrapping_add(v),
            Mix::Xor => acc ^ v,
        }
    }
}

/// A field: `(declaring class, index)`, and its scalar type (index into `SCALARS`).
pub(super) type Field = ((usize, usize), usize);

/// One step of a method body (receiver `this`, running value `acc`, first `x`).
#[derive(Clone, Debug)]
pub(super) enum BodyOp {
    Load(Field, Mix),
    Store(Field),
    Call(usize, Mix),
    Add(u64),
}

/// Whose body: a class's own method or a trait's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Owner {
    Class(usize),
    Trait(usize),
}

/// What `is` or `as` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    Class(usize),
    Trait(usize),
}

/// One step of `main`; objects are numbered in the order made.
#[derive(Clone, Debug)]
pub(super) enum MainOp {
    Alloc(usize, Vec<(Field, u64)>),
    Instance(usize),
    Method(usize, usize, Mix),
    Dyn(usize, usize, Mix),
    Load(usize, Field, Mix),
    Is(Target, Option<usize>, Mix),
    AsNull(Mix),
    /// Ends in `as` of object to a type it is not.
    BadCast,
    /// Ends with a null receiver.
    NullReceiver,
    /// Ends with a `dynmethod` of a selector the object's class lacks.
    Missing,
}

/// Everything built that the result depends on.
#[derive(Default)]
pub(super) struct Trace {
    pub bodies: HashMap<(Owner, usize), Vec<BodyOp>>,
    pub main: Vec<MainOp>,
}

/// An object: its class and field values (raw bits, as stored).
struct Obj {
    class: usize,
    fields: HashMap<(usize, usize), u64>,
}

/// The value of scalar type `t` (`i8`, `i16`, `i32`, `i64`) stored from `v` and loaded back
/// sign-extended.
fn through(t: usize, v: u64) -> u64 {
    let bits = 8u32 << t;
    if bits == 64 {
        v
    } else {
        let shift = 64 - bits;
        (((v << shift) as i64) >> shift) as u64
    }
}

/// The result `main` returns, or the kind of the trap it ends in.
pub(super) fn expected(p: &Plan, t: &Trace) -> Result<u32, &'static str> {
    let mut objs: Vec<Obj> = Vec::new();
    let mut acc: u64 = 17;
    for op in &t.main {
        match op {
            MainOp::Alloc(c, stores) => {
                let mut fields = HashMap::new();
                for &((f, ty), v) in stores {
                    fields.insert(f, through(ty, v));
                }
                objs.push(Obj { class: *c, fields });
            }
            MainOp::Instance(c) => {
                // The constructor adds 5 to the first field, an `i64`.
                let mut fields = HashMap::new();
                fields.insert((*c, 0), 5);
                objs.push(Obj { class: *c, fields });
            }
            MainOp::Method(o, s, mix) | MainOp::Dyn(o, s, mix) => {
                let r = call(p, t, &mut objs[*o], *s, acc);
                acc = mix.apply(acc, r);
            }
            MainOp::Load(o, (f, ty), mix) => {
                let v = through(*ty, objs[*o].fields.get(f).copied().unwrap_or(0));
                acc = mix.apply(acc, v);
            }
            MainOp::Is(target, o, mix) => {
                let v = o.is_some_and(|o| is(p, *target, objs[o].class));
                acc = mix.apply(acc, u64::from(v));
            }
            MainOp::AsNull(mix) => acc = mix.apply(acc, 1),
            MainOp::BadCast => return Err("invalid cast"),
            MainOp::NullReceiver => return Err("null receiver"),
            MainOp::Missing => return Err("method not found"),
        }
    }
    Ok(acc as u32)
}

/// Whether an object of class `c` is an instance of `target`.
pub(super) fn is(p: &Plan, target: Target, c: usize) -> bool {
    match target {
        Target::Class(k) => p.chain(c).contains(&k),
        Target::Trait(k) => p.traits_of(c).contains(&k),
    }
}

/// The body class `c` runs for selector `s`: its own, its parent's, or a trait's default.
fn implementation(p: &Plan, c: usize, s: usize) -> Option<Owner> {
    if p.classes[c].methods.contains(&s) {
        return Some(Owner::Class(c));
    }
    if let Some(q) = p.classes[c].parent
        && let Some(o) = implementation(p, q, s)
    {
        return Some(o);
    }
    p.traits_of(c)
        .into_iter()
        .find(|&k| p.traits[k].methods.iter().any(|&(x, d)| x == s && d))
        .map(Owner::Trait)
}

/// Runs method `s` of `obj` with argument `x`.
fn call(p: &Plan, t: &Trace, obj: &mut Obj, s: usize, x: u64) -> u64 {
    let owner = implementation(p, obj.class, s).expect("every class implements what it sees");
    let mut acc = x;
    for op in &t.bodies[&(owner, s)] {
        match op {
            BodyOp::Load((f, ty), mix) => {
                let v = through(*ty, obj.fields.get(f).copied().unwrap_or(0));
                acc = mix.apply(acc, v);
            }
            BodyOp::Store((f, _)) => {
                obj.fields.insert(*f, acc);
            }
            BodyOp::Call(s, mix) => {
                let r = call(p, t, obj, *s, acc);
                acc = mix.apply(acc, r);
            }
            BodyOp::Add(k) => acc = acc.wrapping_add(*k),
        }
    }
    acc
}
