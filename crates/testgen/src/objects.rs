//! Random programs with classes ([`object_program`]): a small random hierarchy of traits
//! (required methods and defaults, supertraits), classes (a parent or none, traits, scalar
//! fields, methods overriding what they inherit) and one `object` with a constructor, split
//! over two modules (a library `m1.irm` exporting the traits and the first classes, and
//! `m0.irm` importing them, subclassing them and holding the object and `main`), so that a
//! class's parent may live in another module.
//!
//! Every method has the signature `fn(ptr, i64) -> i64`. A method body reads and writes the
//! fields its class sees and calls, through `method` on its receiver, at most one selector
//! made before its own, so a call runs at most one method per selector. `main` allocates objects of random classes,
//! fills their fields, and folds into one `i64` what `method` calls (through a class or a
//! trait), `dynmethod` calls, field loads, `is` tests (of classes, traits, the object and
//! null), `as` casts that hold, and the object's `instance` give; it returns it truncated to
//! `i32`. Some programs end instead with a named trap: a failing `as` (`invalid cast`), a null
//! receiver of `field` or `method` (`null receiver`), or a `dynmethod` of a selector the class
//! lacks (`method not found`). Every class implements every selector it sees, so each may be
//! allocated.

use std::collections::BTreeSet;

use irkit_core::{Builder, Inst, IntCC, Module};

use crate::{Config, Entropy, ModuleSet};

/// A trait: its selectors (own) and its supertraits.
struct Trait {
    name: String,
    supers: Vec<usize>,
    /// `(selector, has a default body)`.
    methods: Vec<(usize, bool)>,
}

/// A class (or the object, the last one when there is one).
struct Class {
    name: String,
    parent: Option<usize>,
    traits: Vec<usize>,
    /// `(name, type index into SCALARS)`.
    fields: Vec<(String, usize)>,
    /// Selectors it implements itself.
    methods: Vec<usize>,
    object: bool,
}

/// The field types: `i8`, `i16`, `i32`, `i64`.
const SCALARS: usize = 4;

/// The shape of a program before it is built.
struct Plan {
    traits: Vec<Trait>,
    classes: Vec<Class>,
    /// Selector names, in the order made (a body calls only earlier ones).
    selectors: Vec<String>,
    /// Traits and classes below these indices live in the library.
    lib_traits: usize,
    lib_classes: usize,
}

impl Plan {
    /// Trait `t` and every supertrait of it (each once).
    fn trait_closure(&self, t: usize, out: &mut BTreeSet<usize>) {
        if out.insert(t) {
            for &s in &self.traits[t].supers {
                self.trait_closure(s, out);
            }
        }
    }

    /// Class `c`, its ancestors, nearest first.
    fn chain(&self, c: usize) -> Vec<usize> {
        let mut out = vec![c];
        let mut at = c;
        while let Some(p) = self.classes[at].parent {
            out.push(p);
            at = p;
        }
        out
    }

    /// Every trait class `c` extends.
    fn traits_of(&self, c: usize) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        for k in self.chain(c) {
            for &t in &self.classes[k].traits {
                self.trait_closure(t, &mut out);
            }
        }
        out
    }

    /// The selectors of trait `t` and its supertraits.
    fn trait_selectors(&self, t: usize) -> BTreeSet<usize> {
        let mut ts = BTreeSet::new();
        self.trait_closure(t, &mut ts);
        ts.iter()
            .flat_map(|&t| self.traits[t].methods.iter().map(|&(s, _)| s))
            .collect()
    }

    /// The selectors class `c` sees.
    fn class_selectors(&self, c: usize) -> BTreeSet<usize> {
        let mut out: BTreeSet<usize> = self
            .chain(c)
            .iter()
            .flat_map(|&k| self.classes[k].methods.iter().copied())
            .collect();
        for t in self.traits_of(c) {
            out.extend(self.traits[t].methods.iter().map(|&(s, _)| s));
        }
        out
    }

    /// Whether class `c` has an implementation of `s` without defining it itself.
    fn inherits_impl(&self, c: usize, s: usize) -> bool {
        let chain = self.chain(c);
        chain[1..]
            .iter()
            .any(|&k| self.classes[k].methods.contains(&s))
            || self.traits_of(c).iter().any(|&t| {
                self.traits[t]
                    .methods
                    .iter()
                    .any(|&(x, default)| x == s && default)
            })
    }

    /// The fields of class `c` and its ancestors: `(declaring class, field)`, nearest first
    /// (a hidden field too).
    fn fields(&self, c: usize) -> Vec<(usize, usize)> {
        self.chain(c)
            .iter()
            .flat_map(|&k| (0..self.classes[k].fields.len()).map(move |f| (k, f)))
            .collect()
    }

    /// Whether field `(q, f)` is the one `field` names through class `c` (the nearest of its
    /// name in `c`'s chain).
    fn nearest(&self, c: usize, (q, f): (usize, usize)) -> bool {
        let name = &self.classes[q].fields[f].0;
        self.fields(c)
            .into_iter()
            .find(|&(k, g)| &self.classes[k].fields[g].0 == name)
            == Some((q, f))
    }
}

/// Draws the hierarchy.
fn plan(e: &mut Entropy<'_>) -> Plan {
    let mut p = Plan {
        traits: Vec::new(),
        classes: Vec::new(),
        selectors: Vec::new(),
        lib_traits: 0,
        lib_classes: 0,
    };
    let traits = e.range(1, 3);
    for t in 0..traits {
        let supers = if t > 0 && e.chance(40) {
            vec![e.below(t)]
        } else {
            Vec::new()
        };
        let mut methods = Vec::new();
        for k in 0..e.range(1, 2) {
            let s = p.selectors.len();
            p.selectors.push(format!("t{t}_m{k}"));
            methods.push((s, e.chance(50)));
        }
        p.traits.push(Trait {
            name: format!("T{t}"),
            supers,
            methods,
        });
    }
    p.lib_traits = e.range(0, traits);
    let classes = e.range(2, 5);
    p.lib_classes = e.range(1, classes - 1);
    for c in 0..=classes {
        let object = c == classes;
        if object && e.chance(20) {
            break;
        }
        // A library class extends only library classes and traits.
        let (max_t, max_c) = if c < p.lib_classes {
            (p.lib_traits, c)
        } else {
            (traits, c)
        };
        let parent = (max_c > 0 && e.chance(60)).then(|| e.below(max_c));
        let mut ts = Vec::new();
        for t in 0..max_t {
            if e.chance(40) {
                ts.push(t);
            }
        }
        // The object's first field is the `i64` its constructor counts in. Some fields hide
        // one of the parent's (the same name, maybe another type).
        let inherited: Vec<String> = parent
            .map(|q| {
                p.fields(q)
                    .into_iter()
                    .map(|(k, f)| p.classes[k].fields[f].0.clone())
                    .collect()
            })
            .unwrap_or_default();
        let mut fields: Vec<(String, usize)> = Vec::new();
        for f in 0..e.range(usize::from(object), 3) {
            let t = if object && f == 0 {
                3
            } else {
                e.below(SCALARS)
            };
            let name = match e.pick(&inherited) {
                Some(n) if e.chance(25) && !fields.iter().any(|(x, _)| x == n) => n.clone(),
                _ => format!("c{c}_f{f}"),
            };
            fields.push((name, t));
        }
        p.classes.push(Class {
            name: if object {
                "Single".to_string()
            } else {
                format!("C{c}")
            },
            parent,
            traits: ts,
            fields,
            methods: Vec::new(),
            object,
        });
        // Overrides of what it sees, then selectors of its own, then whatever it must still
        // implement.
        let seen: Vec<usize> = p.class_selectors(c).into_iter().collect();
        let mut own = Vec::new();
        for &s in &seen {
            if !p.inherits_impl(c, s) || e.chance(30) {
                own.push(s);
            }
        }
        for k in 0..e.range(0, 2) {
            let s = p.selectors.len();
            p.selectors.push(format!("c{c}_m{k}"));
            own.push(s);
        }
        p.classes[c].methods = own;
    }
    p
}

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
    traits: Vec<Option<Inst>>,
    classes: Vec<Option<Inst>>,
}

/// A random program with classes over two modules; see the [module documentation](self).
/// `m0.irm` exports `main`; the set links as an executable.
pub fn object_program(e: &mut Entropy<'_>, _cfg: &Config) -> ModuleSet {
    let p = plan(e);
    let mut lib = Unit {
        m: Module::new(),
        traits: vec![None; p.traits.len()],
        classes: vec![None; p.classes.len()],
    };
    define(e, &p, &mut lib, 0..p.lib_traits, 0..p.lib_classes, true);
    let mut main = Unit {
        m: Module::new(),
        traits: vec![None; p.traits.len()],
        classes: vec![None; p.classes.len()],
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
    ModuleSet {
        modules: vec![("m0.irm".into(), main.m), ("m1.irm".into(), lib.m)],
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
                method_body(
                    e,
                    p,
                    u,
                    ty,
                    &format!("{}_{}", p.traits[t].name, p.selectors[s]),
                    d,
                    &callable,
                    &[],
                )
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
        let fields: Vec<(String, usize)> = p
            .fields(c)
            .into_iter()
            .filter(|&x| p.nearest(c, x))
            .map(|(q, f)| p.classes[q].fields[f].clone())
            .collect();
        for &s in &k.methods {
            let callable: Vec<usize> = seen.iter().copied().filter(|&x| x < s).collect();
            let name = format!("{}_{}", k.name, p.selectors[s]);
            let body = method_body(e, p, u, ty, &name, d, &callable, &fields);
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
    name: &str,
    owner: Inst,
    callable: &[usize],
    fields: &[(String, usize)],
) -> Inst {
    let mut b = Builder::new(&mut u.m);
    let f = b.func(name, ty.sig).expect("functions");
    let (entry, params) = b.entry_block(f).expect("entry blocks");
    b.position_at_end(entry);
    let (this, x) = (params[0], params[1]);
    let mut acc = x;
    // At most one call a body: a run makes at most one call per selector made before.
    let mut called = false;
    for _ in 0..e.range(1, 4) {
        acc = match e.below(3) {
            0 if !fields.is_empty() => {
                let (fname, t) = &fields[e.below(fields.len())];
                let at = b.ins().field(owner, fname, this);
                let v = b.ins().load(ty.scalars[*t], at);
                let v = widen(&mut b, ty, *t, v);
                mix(&mut b, ty, e, acc, v)
            }
            1 if !fields.is_empty() => {
                let (fname, t) = &fields[e.below(fields.len())];
                let at = b.ins().field(owner, fname, this);
                let v = narrow(&mut b, ty, *t, acc);
                b.ins().store(at, v);
                acc
            }
            _ if !callable.is_empty() && !called => {
                called = true;
                let s = callable[e.below(callable.len())];
                let m = b.ins().method(this, owner, &p.selectors[s]);
                let r = b.ins().call_indirect(ty.sig, m, &[this, acc]);
                mix(&mut b, ty, e, acc, r)
            }
            _ => {
                let k = b
                    .module()
                    .const_int(ty.i64, e.below(100) as u64)
                    .expect("ints");
                b.ins().iadd(acc, k)
            }
        };
    }
    b.ins().ret(Some(acc));
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

/// `acc * 31 + v` or `acc ^ v`.
fn mix(b: &mut Builder<'_>, ty: Tys, e: &mut Entropy<'_>, acc: Inst, v: Inst) -> Inst {
    if e.chance(50) {
        let k = b.module().const_int(ty.i64, 31).expect("ints");
        let t = b.ins().imul(acc, k);
        b.ins().iadd(t, v)
    } else {
        b.ins().xor(acc, v)
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

/// The supertypes of class `c` (itself included) as `(is a trait, index)`.
fn supertypes(p: &Plan, c: usize) -> Vec<(bool, usize)> {
    let mut out: Vec<(bool, usize)> = p.chain(c).into_iter().map(|k| (false, k)).collect();
    out.extend(p.traits_of(c).into_iter().map(|t| (true, t)));
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
    let def = |(is_trait, k): (bool, usize)| if is_trait { traits[k] } else { classes[k] };
    let mut b = Builder::new(&mut u.m);
    let f = b.func("main", main_ty).expect("functions");
    b.export(f, "main").expect("exports");
    let (entry, _) = b.entry_block(f).expect("entry blocks");
    b.position_at_end(entry);
    let allocatable: Vec<usize> = (0..p.classes.len())
        .filter(|&c| !p.classes[c].object)
        .collect();
    let object = p.classes.iter().position(|k| k.object);
    // The objects: `(value, class)`.
    let mut objs: Vec<(Inst, usize)> = Vec::new();
    for _ in 0..e.range(1, 4) {
        let c = allocatable[e.below(allocatable.len())];
        let o = b.ins().classalloc(classes[c]);
        for (q, fi) in p.fields(c) {
            if e.chance(70) {
                let (fname, t) = &p.classes[q].fields[fi];
                let at = b.ins().field(classes[q], fname, o);
                let v = b
                    .module()
                    .const_int(ty.scalars[*t], e.u64() % 1000)
                    .expect("ints");
                b.ins().store(at, v);
            }
        }
        objs.push((o, c));
    }
    if let Some(c) = object {
        let o = b.ins().instance(classes[c]);
        objs.push((o, c));
    }
    let mut acc = b.module().const_int(ty.i64, 17).expect("ints");
    for _ in 0..e.range(2, 10) {
        let (o, c) = objs[e.below(objs.len())];
        let sups = supertypes(p, c);
        acc = match e.below(7) {
            // A virtual call through a class or trait that sees the selector.
            0 | 1 => {
                let (is_trait, k) = sups[e.below(sups.len())];
                let sels: Vec<usize> = if is_trait {
                    p.trait_selectors(k).into_iter().collect()
                } else {
                    p.class_selectors(k).into_iter().collect()
                };
                match e.pick(&sels) {
                    Some(&s) => {
                        let m = b.ins().method(o, def((is_trait, k)), &p.selectors[s]);
                        let r = b.ins().call_indirect(ty.sig, m, &[o, acc]);
                        mix(&mut b, ty, e, acc, r)
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
                        mix(&mut b, ty, e, acc, r)
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
                        mix(&mut b, ty, e, acc, v)
                    }
                    None => acc,
                }
            }
            // `is` against any class, trait or the object, of an object or null.
            4 | 5 => {
                let n = p.traits.len() + p.classes.len();
                let k = e.below(n);
                let target = if k < p.traits.len() {
                    traits[k]
                } else {
                    classes[k - p.traits.len()]
                };
                let subject = if e.chance(15) { null } else { o };
                let t = b.ins().is(target, subject);
                let v = b.ins().zext(ty.i64, t);
                mix(&mut b, ty, e, acc, v)
            }
            // `as` of null to anything passes.
            _ => {
                let (is_trait, k) = sups[e.below(sups.len())];
                let cast = b.ins().cast(def((is_trait, k)), null);
                let same = b.ins().icmp(IntCC::Eq, cast, null);
                let v = b.ins().zext(ty.i64, same);
                mix(&mut b, ty, e, acc, v)
            }
        };
    }
    // Some programs end in a named trap.
    let (o, c) = objs[e.below(objs.len())];
    match e.below(8) {
        0 => {
            let sups = supertypes(p, c);
            let others: Vec<(bool, usize)> = (0..p.traits.len())
                .map(|t| (true, t))
                .chain((0..p.classes.len()).map(|k| (false, k)))
                .filter(|x| !sups.contains(x))
                .collect();
            if let Some(&x) = e.pick(&others) {
                let cast = b.ins().cast(def(x), o);
                let same = b.ins().icmp(IntCC::Eq, cast, o);
                let v = b.ins().zext(ty.i64, same);
                acc = b.ins().iadd(acc, v);
            }
        }
        1 => {
            let sels: Vec<usize> = p.class_selectors(c).into_iter().collect();
            if let Some(&s) = e.pick(&sels) {
                let m = b.ins().method(null, classes[c], &p.selectors[s]);
                acc = b.ins().call_indirect(ty.sig, m, &[null, acc]);
            }
        }
        2 => {
            if let Some(&(q, fi)) = e.pick(&p.fields(c)) {
                let at = b.ins().field(classes[q], &p.classes[q].fields[fi].0, null);
                let v = b.ins().load(ty.scalars[p.classes[q].fields[fi].1], at);
                acc = widen(&mut b, ty, p.classes[q].fields[fi].1, v);
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
            }
        }
        _ => {}
    }
    let r = b.ins().trunc(ty.i32, acc);
    b.ins().ret(Some(r));
}
