//! Random programs with classes ([`object_program`]): a small random hierarchy of traits
//! (required methods and defaults, supertraits), classes (a parent or none, traits, scalar
//! fields, some hiding a parent's, methods overriding what they inherit) and one `object` with
//! a constructor, split over two modules (a library `m1.irm` exporting the traits and the
//! first classes, and `m0.irm` importing them, subclassing them and holding the object and
//! `main`), so that a class's parent may live in another module. The hierarchy is drawn first
//! (`plan.rs`), then built, each body recorded so that `oracle.rs` works out what `main` must
//! give ([`ObjectProgram::expected`]).
//!
//! Every method has the signature `fn(ptr, i64) -> i64`. A method body reads and writes the
//! fields its class sees and calls, through `method` on its receiver, at most one selector
//! made before its own, so a call runs at most one method per selector. `main` allocates
//! objects of random classes, fills their fields, and folds into one `i64` what `method`
//! calls (through a class or a trait), `dynmethod` calls, field loads (some after an `as`
//! that holds), `is` tests (of classes, traits, the object and null), `as` of null, and the
//! object's `instance` give; it returns it truncated to `i32`. Some programs end instead with
//! a named trap: a failing `as` (`invalid cast`), a null receiver of `field` or `method`
//! (`null receiver`), or a `dynmethod` of a selector the class lacks (`method not found`).
//! Every class implements every selector it sees, so each may be allocated.

use irkit_core::{Builder, Inst, IntCC, Module};

use crate::{Config, Entropy, ModuleSet};

mod oracle;
mod plan;

use oracle::{BodyOp, MainOp, Mix, Owner, Target, Trace};
use plan::{Plan, SCALARS, plan};

/// The interned types of one module.
#[derive(Clone, Copy)]
struct Tys {
    i32: Inst,
    i64: Inst,
    ptr: Inst,
    sig: Inst,
    scalars: [Inst; SCALARS],
}

impl Tys {
    fn new(m: &mut Module) -> Tys {
        let i64t = m.ty_i64();
        let ptr = m.ty_ptr();
        Tys {
            i32: m.ty_i32(),
            i64: i64t,
            ptr,
            sig: m.ty_fn(i64t, &[ptr, i64t]).expect("fn types intern"),
            scalars: [m.ty_i8(), m.ty_i16(), m.ty_i32(), i64t],
        }
    }
}

/// One module being built: the definitions of the plan it holds or imports.
struct Unit {
    m: Module,
    /// The bodies made here (and `main`'s steps), for the oracle.
    trace: Trace,
    traits: Vec<Option<Inst>>,
    classes: Vec<Option<Inst>>,
}

/// A random program with classes: its modules, and what its `main` must give.
#[derive(Clone)]
pub struct ObjectProgram {
    /// `m0.irm` (which exports `main`) and `m1.irm`; they link as an executable.
    pub set: ModuleSet,
    /// `main`'s result, or the kind of the trap it ends in, worked out from the rules of
    /// spec/linking.md ("Objects") by the generator, not by a back end.
    pub expected: Result<u32, &'static str>,
}

/// Shows the modules as text, then the expectation.
impl std::fmt::Debug for ObjectProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}; expected: {:?}", self.set, self.expected)
    }
}

/// A random program with classes over two modules; see the module documentation (`irkit_testgen::objects`).
pub fn object_program(e: &mut Entropy<'_>, _cfg: &Config) -> ObjectProgram {
    let p = plan(e);
    let mut lib = Unit {
        m: Module::new(),
        traits: vec![None; p.traits.len()],
        classes: vec![None; p.classes.len()],
        trace: Trace::default(),
    };
    define(e, &p, &mut lib, 0..p.lib_traits, 0..p.lib_classes, true);
    let mut main = Unit {
        m: Module::new(),
        traits: vec![None; p.traits.len()],
        classes: vec![None; p.classes.len()],
        trace: Trace::default(),
    };
    {
        let mut b = Builder::new(&mut main.m);
        for t in 0..p.lib_traits {
            let d = b.trait_def(&p.traits[t].name, &[]).expect("traits");
            b.import(d, &p.traits[t].name).expect("imports");
            main.traits[t] = Some(d);
        }
        for c in 0..p.lib_classes {
            let d = b.class(&p.classes[c].name, &[]).expect("classes");
            b.import(d, &p.classes[c].name).expect("imports");
            main.classes[c] = Some(d);
        }
    }
    define(
        e,
        &p,
        &mut main,
        p.lib_traits..p.traits.len(),
        p.lib_classes..p.classes.len(),
        false,
    );
    gen_main(e, &p, &mut main);
    main.trace.bodies.extend(lib.trace.bodies);
    ObjectProgram {
        expected: oracle::expected(&p, &main.trace),
        set: ModuleSet {
            modules: vec![("m0.irm".into(), main.m), ("m1.irm".into(), lib.m)],
        },
    }
}

/// Defines traits `ts` and classes `cs` of the plan in `u`, with their method bodies;
/// `export`ed by name when `export`.
fn define(
    e: &mut Entropy<'_>,
    p: &Plan,
    u: &mut Unit,
    ts: std::ops::Range<usize>,
    cs: std::ops::Range<usize>,
    export: bool,
) {
    let ty = Tys::new(&mut u.m);
    for t in ts {
        let supers: Vec<Inst> = p.traits[t]
            .supers
            .iter()
            .map(|&s| u.traits[s].expect("supertraits come first"))
            .collect();
        let d = Builder::new(&mut u.m)
            .trait_def(&p.traits[t].name, &supers)
            .expect("traits");
        u.traits[t] = Some(d);
        for &(s, default) in &p.traits[t].methods {
            let body = default.then(|| {
                let callable: Vec<usize> = p
                    .trait_selectors(t)
                    .into_iter()
                    .filter(|&x| x < s)
                    .collect();
                method_body(e, p, u, ty, (Owner::Trait(t), s), d, &callable, &[])
            });
            Builder::new(&mut u.m)
                .method_def(d, &p.selectors[s], ty.sig, body)
                .expect("methods");
        }
        if export {
            Builder::new(&mut u.m)
                .export(d, &p.traits[t].name)
                .expect("exports");
        }
    }
    for c in cs {
        let k = &p.classes[c];
        let mut supers: Vec<Inst> = k
            .parent
            .iter()
            .map(|&q| u.classes[q].expect("parents come first"))
            .collect();
        supers.extend(k.traits.iter().map(|&t| u.traits[t].expect("traits first")));
        let mut b = Builder::new(&mut u.m);
        let d = if k.object {
            b.object(&k.name, &supers)
        } else {
            b.class(&k.name, &supers)
        }
        .expect("classes");
        u.classes[c] = Some(d);
        for (f, t) in &k.fields {
            Builder::new(&mut u.m)
                .field_def(d, f, ty.scalars[*t])
                .expect("fields");
        }
        let seen = p.class_selectors(c);
        let fields: Vec<(String, usize, (usize, usize))> = p
            .fields(c)
            .into_iter()
            .filter(|&x| p.nearest(c, x))
            .map(|(q, f)| {
                let (name, t) = p.classes[q].fields[f].clone();
                (name, t, (q, f))
            })
            .collect();
        for &s in &k.methods {
            let callable: Vec<usize> = seen.iter().copied().filter(|&x| x < s).collect();
            let body = method_body(e, p, u, ty, (Owner::Class(c), s), d, &callable, &fields);
            Builder::new(&mut u.m)
                .method_def(d, &p.selectors[s], ty.sig, Some(body))
                .expect("methods");
        }
        if k.object {
            let ctor = ctor_body(u, ty, d, &k.fields[0].0);
            Builder::new(&mut u.m).ctor_def(d, ctor).expect("ctors");
        }
        if export {
            Builder::new(&mut u.m).export(d, &k.name).expect("exports");
        }
    }
}

/// A method body of `owner` (a class or trait): folds its argument with loads of `fields`,
/// stores into some of them, and calls of the `callable` selectors on its receiver.
#[allow(clippy::too_many_arguments)]
fn method_body(
    e: &mut Entropy<'_>,
    p: &Plan,
    u: &mut Unit,
    ty: Tys,
    key: (Owner, usize),
    owner: Inst,
    callable: &[usize],
    fields: &[(String, usize, (usize, usize))],
) -> Inst {
    let name = match key.0 {
        Owner::Class(c) => &p.classes[c].name,
        Owner::Trait(t) => &p.traits[t].name,
    };
    let name = format!("{name}_{}", p.selectors[key.1]);
    let mut ops = Vec::new();
    let mut b = Builder::new(&mut u.m);
    let f = b.func(&name, ty.sig).expect("functions");
    let (entry, params) = b.entry_block(f).expect("entry blocks");
    b.position_at_end(entry);
    let (this, x) = (params[0], params[1]);
    let mut acc = x;
    // At most one call a body: a run makes at most one call per selector made before.
    let mut called = false;
    for _ in 0..e.range(1, 4) {
        acc = match e.below(3) {
            0 if !fields.is_empty() => {
                let (fname, t, at) = &fields[e.below(fields.len())];
                let field = b.ins().field(owner, fname, this);
                let v = b.ins().load(ty.scalars[*t], field);
                let v = widen(&mut b, ty, *t, v);
                let k = draw(e);
                ops.push(BodyOp::Load((*at, *t), k));
                mix(&mut b, ty, k, acc, v)
            }
            1 if !fields.is_empty() => {
                let (fname, t, at) = &fields[e.below(fields.len())];
                let field = b.ins().field(owner, fname, this);
                let v = narrow(&mut b, ty, *t, acc);
                b.ins().store(field, v);
                ops.push(BodyOp::Store((*at, *t)));
                acc
            }
            _ if !callable.is_empty() && !called => {
                called = true;
                let s = callable[e.below(callable.len())];
                let m = b.ins().method(this, owner, &p.selectors[s]);
                let r = b.ins().call_indirect(ty.sig, m, &[this, acc]);
                let k = draw(e);
                ops.push(BodyOp::Call(s, k));
                mix(&mut b, ty, k, acc, r)
            }
            _ => {
                let n = e.below(100) as u64;
                let k = b.module().const_int(ty.i64, n).expect("ints");
                ops.push(BodyOp::Add(n));
                b.ins().iadd(acc, k)
            }
        };
    }
    b.ins().ret(Some(acc));
    u.trace.bodies.insert(key, ops);
    f
}

/// The object's constructor: adds 5 to its first field (an `i64`), so a second run shows.
fn ctor_body(u: &mut Unit, ty: Tys, object: Inst, field: &str) -> Inst {
    let void = u.m.ty_void();
    let sig = u.m.ty_fn(void, &[ty.ptr]).expect("fn types intern");
    let mut b = Builder::new(&mut u.m);
    let f = b.func("Single_init", sig).expect("functions");
    let (entry, params) = b.entry_block(f).expect("entry blocks");
    b.position_at_end(entry);
    let at = b.ins().field(object, field, params[0]);
    let v = b.ins().load(ty.scalars[3], at);
    let five = b.module().const_int(ty.i64, 5).expect("ints");
    let v = b.ins().iadd(v, five);
    b.ins().store(at, v);
    b.ins().ret(None);
    f
}

/// How to fold the next value in.
fn draw(e: &mut Entropy<'_>) -> Mix {
    if e.chance(50) { Mix::Mul31 } else { Mix::Xor }
}

/// `acc * 31 + v` or `acc ^ v`.
fn mix(b: &mut Builder<'_>, ty: Tys, k: Mix, acc: Inst, v: Inst) -> Inst {
    match k {
        Mix::Mul31 => {
            let k = b.module().const_int(ty.i64, 31).expect("ints");
            let t = b.ins().imul(acc, k);
            b.ins().iadd(t, v)
        }
        Mix::Xor => b.ins().xor(acc, v),
    }
}

/// A field value of scalar `t` as an `i64` (sign-extended).
fn widen(b: &mut Builder<'_>, ty: Tys, t: usize, v: Inst) -> Inst {
    if t == 3 { v } else { b.ins().sext(ty.i64, v) }
}

/// An `i64` truncated to scalar `t`.
fn narrow(b: &mut Builder<'_>, ty: Tys, t: usize, v: Inst) -> Inst {
    if t == 3 {
        v
    } else {
        b.ins().trunc(ty.scalars[t], v)
    }
}

/// The supertypes of class `c` (itself included).
fn supertypes(p: &Plan, c: usize) -> Vec<Target> {
    let mut out: Vec<Target> = p.chain(c).into_iter().map(Target::Class).collect();
    out.extend(p.traits_of(c).into_iter().map(Target::Trait));
    out
}

/// `main`: allocates objects, folds what they answer into the result, maybe ends in a trap.
fn gen_main(e: &mut Entropy<'_>, p: &Plan, u: &mut Unit) {
    let ty = Tys::new(&mut u.m);
    let main_ty = u.m.ty_fn(ty.i32, &[]).expect("fn types intern");
    let null = u.m.const_null();
    let traits: Vec<Inst> = u
        .traits
        .iter()
        .map(|d| d.expect("defined or imported"))
        .collect();
    let classes: Vec<Inst> = u
        .classes
        .iter()
        .map(|d| d.expect("defined or imported"))
        .collect();
    let def = |t: Target| match t {
        Target::Trait(k) => traits[k],
        Target::Class(k) => classes[k],
    };
    let trace = &mut u.trace.main;
    let mut b = Builder::new(&mut u.m);
    let f = b.func("main", main_ty).expect("functions");
    b.export(f, "main").expect("exports");
    let (entry, _) = b.entry_block(f).expect("entry blocks");
    b.position_at_end(entry);
    let allocatable: Vec<usize> = (0..p.classes.len())
        .filter(|&c| !p.classes[c].object)
        .collect();
    let object = p.classes.iter().position(|k| k.object);
    // The objects: `(value, class)`, numbered as the trace numbers them.
    let mut objs: Vec<(Inst, usize)> = Vec::new();
    for _ in 0..e.range(1, 4) {
        let c = allocatable[e.below(allocatable.len())];
        let o = b.ins().classalloc(classes[c]);
        let mut stores = Vec::new();
        for (q, fi) in p.fields(c) {
            if e.chance(70) {
                let (fname, t) = &p.classes[q].fields[fi];
                let at = b.ins().field(classes[q], fname, o);
                let v = e.u64() % 1000;
                let k = b.module().const_int(ty.scalars[*t], v).expect("ints");
                b.ins().store(at, k);
                stores.push((((q, fi), *t), v));
            }
        }
        trace.push(MainOp::Alloc(c, stores));
        objs.push((o, c));
    }
    if let Some(c) = object {
        let o = b.ins().instance(classes[c]);
        trace.push(MainOp::Instance(c));
        objs.push((o, c));
    }
    let mut acc = b.module().const_int(ty.i64, 17).expect("ints");
    for _ in 0..e.range(2, 10) {
        let n = e.below(objs.len());
        let (o, c) = objs[n];
        let sups = supertypes(p, c);
        acc = match e.below(7) {
            // A virtual call through a class or trait that sees the selector.
            0 | 1 => {
                let view = sups[e.below(sups.len())];
                let sels: Vec<usize> = match view {
                    Target::Trait(k) => p.trait_selectors(k).into_iter().collect(),
                    Target::Class(k) => p.class_selectors(k).into_iter().collect(),
                };
                match e.pick(&sels) {
                    Some(&s) => {
                        let m = b.ins().method(o, def(view), &p.selectors[s]);
                        let r = b.ins().call_indirect(ty.sig, m, &[o, acc]);
                        let k = draw(e);
                        trace.push(MainOp::Method(n, s, k));
                        mix(&mut b, ty, k, acc, r)
                    }
                    None => acc,
                }
            }
            2 => {
                let sels: Vec<usize> = p.class_selectors(c).into_iter().collect();
                match e.pick(&sels) {
                    Some(&s) => {
                        let m = b.ins().dynmethod(o, &p.selectors[s]);
                        let r = b.ins().call_indirect(ty.sig, m, &[o, acc]);
                        let k = draw(e);
                        trace.push(MainOp::Dyn(n, s, k));
                        mix(&mut b, ty, k, acc, r)
                    }
                    None => acc,
                }
            }
            3 => {
                let fields = p.fields(c);
                match e.pick(&fields) {
                    Some(&(q, fi)) => {
                        let (fname, t) = &p.classes[q].fields[fi];
                        // Through the class that declares the field or the object's own,
                        // the latter after an `as` that holds.
                        let (view, o) = if !p.nearest(c, (q, fi)) || e.chance(50) {
                            (classes[q], o)
                        } else {
                            let cast = b.ins().cast(classes[c], o);
                            (classes[c], cast)
                        };
                        let at = b.ins().field(view, fname, o);
                        let v = b.ins().load(ty.scalars[*t], at);
                        let v = widen(&mut b, ty, *t, v);
                        let k = draw(e);
                        trace.push(MainOp::Load(n, ((q, fi), *t), k));
                        mix(&mut b, ty, k, acc, v)
                    }
                    None => acc,
                }
            }
            // `is` against any class, trait or the object, of an object or null.
            4 | 5 => {
                let all = p.traits.len() + p.classes.len();
                let x = e.below(all);
                let target = if x < p.traits.len() {
                    Target::Trait(x)
                } else {
                    Target::Class(x - p.traits.len())
                };
                let subject = if e.chance(15) { None } else { Some(n) };
                let t = b.ins().is(def(target), subject.map_or(null, |_| o));
                let v = b.ins().zext(ty.i64, t);
                let k = draw(e);
                trace.push(MainOp::Is(target, subject, k));
                mix(&mut b, ty, k, acc, v)
            }
            // `as` of null to anything passes.
            _ => {
                let view = sups[e.below(sups.len())];
                let cast = b.ins().cast(def(view), null);
                let same = b.ins().icmp(IntCC::Eq, cast, null);
                let v = b.ins().zext(ty.i64, same);
                let k = draw(e);
                trace.push(MainOp::AsNull(k));
                mix(&mut b, ty, k, acc, v)
            }
        };
    }
    // Some programs end in a named trap.
    let n = e.below(objs.len());
    let (o, c) = objs[n];
    match e.below(8) {
        0 => {
            let sups = supertypes(p, c);
            let others: Vec<Target> = (0..p.traits.len())
                .map(Target::Trait)
                .chain((0..p.classes.len()).map(Target::Class))
                .filter(|x| !sups.contains(x))
                .collect();
            if let Some(&x) = e.pick(&others) {
                let cast = b.ins().cast(def(x), o);
                let same = b.ins().icmp(IntCC::Eq, cast, o);
                let v = b.ins().zext(ty.i64, same);
                acc = b.ins().iadd(acc, v);
                trace.push(MainOp::BadCast);
            }
        }
        1 => {
            let sels: Vec<usize> = p.class_selectors(c).into_iter().collect();
            if let Some(&s) = e.pick(&sels) {
                let m = b.ins().method(null, classes[c], &p.selectors[s]);
                acc = b.ins().call_indirect(ty.sig, m, &[null, acc]);
                trace.push(MainOp::NullReceiver);
            }
        }
        2 => {
            if let Some(&(q, fi)) = e.pick(&p.fields(c)) {
                let (fname, t) = &p.classes[q].fields[fi];
                let at = b.ins().field(classes[q], fname, null);
                let v = b.ins().load(ty.scalars[*t], at);
                acc = widen(&mut b, ty, *t, v);
                trace.push(MainOp::NullReceiver);
            }
        }
        3 => {
            let seen = p.class_selectors(c);
            let missing: Vec<usize> = (0..p.selectors.len())
                .filter(|s| !seen.contains(s))
                .collect();
            if let Some(&s) = e.pick(&missing) {
                let m = b.ins().dynmethod(o, &p.selectors[s]);
                acc = b.ins().call_indirect(ty.sig, m, &[o, acc]);
                trace.push(MainOp::Missing);
            }
        }
        _ => {}
    }
    let r = b.ins().trunc(ty.i32, acc);
    b.ins().ret(Some(r));
}
