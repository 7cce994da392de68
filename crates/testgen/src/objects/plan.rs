//! The shape of a random program with classes, drawn before anything is built: traits, classes
//! and the object, their fields and the selectors each implements, and what the class-wins
//! rule makes of them (spec/linking.md, "Objects", step 2).

use std::collections::BTreeSet;

use crate::Entropy;

/// A trait: its selectors (own) and its supertraits.
pub(super) struct Trait {
    pub(super) name: String,
    pub(super) supers: Vec<usize>,
    /// `(selector, has a default body)`.
    pub(super) methods: Vec<(usize, bool)>,
}

/// A class (or the object, the last one when there is one).
pub(super) struct Class {
    pub(super) name: String,
    pub(super) parent: Option<usize>,
    pub(super) traits: Vec<usize>,
    /// `(name, type index into SCALARS)`.
    pub(super) fields: Vec<(String, usize)>,
    /// Selectors it implements itself.
    pub(super) methods: Vec<usize>,
    pub(super) object: bool,
}

/// The field types: `i8`, `i16`, `i32`, `i64`.
pub(super) const SCALARS: usize = 4;

/// The shape of a program before it is built.
pub(super) struct Plan {
    pub(super) traits: Vec<Trait>,
    pub(super) classes: Vec<Class>,
    /// Selector names, in the order made (a body calls only earlier ones).
    pub(super) selectors: Vec<String>,
    /// Traits and classes below these indices live in the library.
    pub(super) lib_traits: usize,
    pub(super) lib_classes: usize,
}

impl Plan {
    /// Trait `t` and every supertrait of it (each once).
    pub(super) fn trait_closure(&self, t: usize, out: &mut BTreeSet<usize>) {
        if out.insert(t) {
            for &s in &self.traits[t].supers {
                self.trait_closure(s, out);
            }
        }
    }

    /// Class `c`, its ancestors, nearest first.
    pub(super) fn chain(&self, c: usize) -> Vec<usize> {
        let mut out = vec![c];
        let mut at = c;
        while let Some(p) = self.classes[at].parent {
            out.push(p);
            at = p;
        }
        out
    }

    /// Every trait class `c` extends.
    pub(super) fn traits_of(&self, c: usize) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        for k in self.chain(c) {
            for &t in &self.classes[k].traits {
                self.trait_closure(t, &mut out);
            }
        }
        out
    }

    /// The selectors of trait `t` and its supertraits.
    pub(super) fn trait_selectors(&self, t: usize) -> BTreeSet<usize> {
        let mut ts = BTreeSet::new();
        self.trait_closure(t, &mut ts);
        ts.iter()
            .flat_map(|&t| self.traits[t].methods.iter().map(|&(s, _)| s))
            .collect()
    }

    /// The selectors class `c` sees.
    pub(super) fn class_selectors(&self, c: usize) -> BTreeSet<usize> {
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
    pub(super) fn inherits_impl(&self, c: usize, s: usize) -> bool {
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
    pub(super) fn fields(&self, c: usize) -> Vec<(usize, usize)> {
        self.chain(c)
            .iter()
            .flat_map(|&k| (0..self.classes[k].fields.len()).map(move |f| (k, f)))
            .collect()
    }

    /// Whether field `(q, f)` is the one `field` names through class `c` (the nearest of its
    /// name in `c`'s chain).
    pub(super) fn nearest(&self, c: usize, (q, f): (usize, usize)) -> bool {
        let name = &self.classes[q].fields[f].0;
        self.fields(c)
            .into_iter()
            .find(|&(k, g)| &self.classes[k].fields[g].0 == name)
            == Some((q, f))
    }
}

/// Draws the hierarchy.
pub(super) fn plan(e: &mut Entropy<'_>) -> Plan {
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
