//! Round-trip and linking properties over generated modules (issue 7, part 2).
//!
//! Each property runs `PROPTEST_CASES` cases (48 by default; set the variable to run more).

use std::collections::{BTreeMap, BTreeSet};

use irkit_core::equiv::modules_equal;
use irkit_core::verify::verify;
use irkit_core::{Module, Opcode, Payload};
use irkit_format::ModuleView;
use irkit_link::{Input, LinkOptions, link};
use irkit_testgen::strategy::{module_sets, modules, proc_modules};
use irkit_testgen::{Config, ModuleSet};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // A property that needs a module with an exported body (about one in three) rejects
        // the others: allow that many rejections for any number of cases.
        max_global_rejects: cases().saturating_mul(8).max(1024),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn write(m: &Module) -> Vec<u8> {
    irkit_format::write(m).expect("a valid module writes")
}

/// Content hash of every definition, by name hint (every generated definition has one).
fn hashes(bytes: &[u8]) -> BTreeMap<String, [u8; 32]> {
    let view = ModuleView::from_bytes(bytes).expect("written bytes open");
    (0..view.def_count())
        .map(|i| {
            let info = view.def_info(i).expect("definition index is valid");
            (
                info.name.expect("generated definitions are named"),
                info.content_hash,
            )
        })
        .collect()
}

/// The printed text of each top-level statement (definition or type, with its decorations),
/// keyed by its name.
fn statements(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut decos = String::new();
    let mut cur: Option<(String, String)> = None;
    let mut in_body = false;
    for line in text.lines() {
        if in_body {
            if let Some((_, s)) = &mut cur {
                s.push_str(line);
                s.push('\n');
            }
            in_body = line != "}";
        } else if line.starts_with("#[") {
            out.extend(cur.take());
            decos.push_str(line);
            decos.push('\n');
        } else if line.starts_with('@') {
            out.extend(cur.take());
            let name = line.split([':', ' ']).next().unwrap_or(line).to_string();
            cur = Some((name, std::mem::take(&mut decos) + line + "\n"));
            in_body = line.ends_with('{');
        } else {
            out.extend(cur.take());
        }
    }
    out.extend(cur);
    out
}

/// `m` without its `pin_if` decorations, and those as (owner, target, condition) names.
fn split_pin_ifs(m: &Module) -> (Module, BTreeSet<(String, String, String)>) {
    let mut m = m.clone();
    let name = |m: &Module, i| m.name(i).unwrap_or("?").to_string();
    let mut pins = BTreeSet::new();
    for &d in m.top_level() {
        for &p in m.decorations(d) {
            if m.opcode(p) == Opcode::PIN_IF {
                let ops = m.operands(p);
                pins.insert((name(&m, d), name(&m, ops[0]), name(&m, ops[1])));
            }
        }
    }
    let all: Vec<_> = m
        .walk()
        .into_iter()
        .filter(|&i| m.opcode(i) == Opcode::PIN_IF)
        .collect();
    for p in all {
        m.remove(p).expect("decorations are removable");
    }
    (m, pins)
}

fn link_set(set: &ModuleSet, order: &[usize], opts: &LinkOptions) -> Result<Module, String> {
    let inputs = order
        .iter()
        .map(|&i| {
            let (name, m) = &set.modules[i];
            Input::from_bytes(name, &write(m)).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    link(inputs, opts)
        .map(|l| l.module)
        .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_modules_verify(g in modules(Config::default())) {
        prop_assert!(verify(&g.0).is_ok(), "{:?}", verify(&g.0).err());
    }

    #[test]
    fn print_parse_is_the_identity(g in modules(Config::default())) {
        let m = &g.0;
        let text = irkit_text::print(m);
        let parsed = irkit_text::parse(&text, "generated.ir");
        prop_assert!(parsed.is_ok(), "{}", parsed.err().map(|e| e.to_string()).unwrap_or_default());
        let parsed = parsed.unwrap();
        let eq = modules_equal(m, &parsed);
        prop_assert!(eq.is_ok(), "{:?}", eq);
        prop_assert_eq!(irkit_text::print(&parsed), text, "printing is a fixed point");
    }

    #[test]
    fn write_read_is_the_identity(g in modules(Config::default())) {
        let m = &g.0;
        let bytes = write(m);
        let read = irkit_format::read(&bytes);
        prop_assert!(read.is_ok(), "{:?}", read.err());
        let read = read.unwrap();
        let eq = modules_equal(m, &read);
        prop_assert!(eq.is_ok(), "{:?}", eq);
        prop_assert!(write(&read) == bytes, "re-writing what was read changes the bytes");
        let view = ModuleView::from_bytes(&bytes).unwrap();
        prop_assert!(view.validate_all().is_ok(), "{:?}", view.validate_all());
    }

    #[test]
    fn writing_is_deterministic(g in modules(Config::default())) {
        let m = &g.0;
        let bytes = write(m);
        prop_assert!(write(m) == bytes, "two writes differ");
        prop_assert!(write(&m.clone()) == bytes, "a clone writes other bytes");
        // The pool is written in the module's own order (spec/format.md, "Writing"), and
        // compact() rebuilds it in first-use order: a compacted module is a canonical form,
        // so compacting again, or re-reading it, gives the same bytes.
        let compacted = m.compact().expect("a valid module compacts");
        let canonical = write(&compacted);
        let again = write(&compacted.compact().expect("a compacted module compacts"));
        prop_assert!(again == canonical, "compacting twice changes the bytes");
        let reread = irkit_format::read(&canonical).expect("written bytes read back");
        prop_assert!(write(&reread.compact().unwrap()) == canonical, "compact(read(b)) writes other bytes");
        // Content hashes are structural: equal for every rebuild of the module.
        let reparsed = irkit_text::parse(&irkit_text::print(m), "generated.ir").unwrap();
        let expected = hashes(&bytes);
        prop_assert_eq!(&hashes(&canonical), &expected);
        prop_assert_eq!(&hashes(&write(&reparsed)), &expected);
    }

    #[test]
    fn a_definition_hash_ignores_unrelated_edits(g in modules(Config::default()), pick in any::<prop::sample::Index>()) {
        let mut m = g.0;
        let before = hashes(&write(&m));
        // An exported function: other definitions name it by its export (spec/format.md
        // §3.2), so editing its body changes no other hash. (A module-private one is part of
        // the hash of every definition that reaches it: tests/tests/semantic_hash.rs.)
        let bodies: Vec<_> = m
            .top_level()
            .iter()
            .copied()
            .filter(|&d| m.opcode(d) == Opcode::FUNC && m.entry_block(d).is_some())
            .filter(|&d| m.decoration_str(d, Opcode::EXPORT).is_some())
            .collect();
        prop_assume!(!bodies.is_empty());
        let f = *pick.get(&bodies);
        let name = m.name(f).unwrap().to_string();
        // Edit the body: a new (unused) instruction on new constants before the entry's
        // terminator. The signature, hence the interface other definitions see, is unchanged.
        let entry = m.entry_block(f).unwrap();
        let i64t = m.ty_i64();
        let a = m.const_i64(0x0123_4567_89ab_cdef);
        let b = m.const_i64(-77);
        let add = m.new_inst(Opcode::IADD, Some(i64t), vec![a, b], Payload::None).unwrap();
        let at = m.children(entry).len() - 1;
        m.insert_child(entry, at, add).unwrap();
        prop_assert!(verify(&m).is_ok(), "{:?}", verify(&m).err());
        let after = hashes(&write(&m));
        prop_assert_eq!(before.len(), after.len());
        for (def, hash) in &before {
            if *def == name {
                prop_assert_ne!(after[def], *hash, "the edited definition's hash did not change");
            } else {
                prop_assert_eq!(after[def], *hash, "editing @{} changed the hash of @{}", name, def);
            }
        }
    }

    #[test]
    fn a_library_link_keeps_what_it_reaches(g in modules(Config::default())) {
        let m = &g.0;
        let opts = LinkOptions { library: true, ..LinkOptions::default() };
        let input = Input::from_bytes("generated.irm", &write(m)).unwrap();
        let linked = link(vec![input], &opts);
        prop_assert!(linked.is_ok(), "{}", linked.err().map(|e| e.to_string()).unwrap_or_default());
        let linked = linked.unwrap().module;
        prop_assert!(verify(&linked).is_ok(), "{:?}", verify(&linked).err());
        for &d in m.top_level() {
            if let Some(name) = m.decoration_str(d, Opcode::EXPORT) {
                prop_assert!(linked.find_export(name).is_some(), "export {} was dropped", name);
            }
        }
        // The linker re-attaches a `pin_if` last, and only once its condition is reached
        // (spec/linking.md): compare those apart, everything else statement by statement.
        let (original, original_pins) = split_pin_ifs(m);
        let (linked, linked_pins) = split_pin_ifs(&linked);
        let kept: BTreeSet<_> = original_pins
            .into_iter()
            .filter(|(owner, _, cond)| linked.find_named(owner).is_some() && linked.find_named(cond).is_some())
            .collect();
        prop_assert_eq!(linked_pins, kept);
        let original = statements(&irkit_text::print(&original));
        let reached = statements(&irkit_text::print(&linked));
        for (name, text) in &reached {
            let orig = original.get(name);
            prop_assert!(orig.is_some(), "{} is not in the input", name);
            prop_assert_eq!(orig.unwrap(), text, "{} changed through the link", name);
        }
    }

    #[test]
    fn proc_modules_print_parse_and_write_read(pm in proc_modules(Config::default())) {
        let m = &pm.module;
        prop_assert!(verify(m).is_ok(), "{:?}", verify(m).err());
        let text = irkit_text::print(m);
        let parsed = irkit_text::parse(&text, "procs.ir");
        prop_assert!(parsed.is_ok(), "{}", parsed.err().map(|e| e.to_string()).unwrap_or_default());
        let parsed = parsed.unwrap();
        let eq = modules_equal(m, &parsed);
        prop_assert!(eq.is_ok(), "{:?}", eq);
        prop_assert_eq!(irkit_text::print(&parsed), text, "printing is a fixed point");
        let bytes = write(m);
        let read = irkit_format::read(&bytes);
        prop_assert!(read.is_ok(), "{:?}", read.err());
        let read = read.unwrap();
        let eq = modules_equal(m, &read);
        prop_assert!(eq.is_ok(), "{:?}", eq);
        prop_assert!(write(&read) == bytes, "re-writing what was read changes the bytes");
        prop_assert!(write(&parsed) == bytes, "the re-parsed module writes other bytes");
    }

    #[test]
    fn module_sets_link_in_any_order(set in module_sets(Config::default())) {
        let n = set.modules.len();
        let forward: Vec<usize> = (0..n).collect();
        let backward: Vec<usize> = (0..n).rev().collect();
        let mut rotated = forward.clone();
        rotated.rotate_left(1);
        for opts in [LinkOptions::default(), LinkOptions { library: true, ..LinkOptions::default() }] {
            let first = link_set(&set, &forward, &opts);
            prop_assert!(first.is_ok(), "{}", first.err().unwrap_or_default());
            let first = first.unwrap();
            prop_assert!(verify(&first).is_ok(), "{:?}", verify(&first).err());
            prop_assert!(first.find_export("main").is_some());
            let bytes = write(&first);
            for order in [&backward, &rotated] {
                let again = link_set(&set, order, &opts).map(|m| write(&m));
                prop_assert!(again.as_ref() == Ok(&bytes), "order {:?} links differently", order);
            }
        }
    }
}

/// Equal modules write equal bytes: the writer orders the pool canonically (first use in a
/// walk of the tree), so a module rebuilt by `compact()`, or re-parsed from its text, writes
/// exactly the bytes of the original.
#[test]
fn equal_modules_write_the_same_bytes() {
    for seed in 0..64 {
        let m = irkit_testgen::module(
            &mut irkit_testgen::Entropy::from_seed(seed),
            &Config::default(),
        );
        let bytes = write(&m);
        let c = m.compact().unwrap();
        assert!(
            bytes == write(&c),
            "seed {seed}: compact() changes the bytes"
        );
        let text = irkit_text::print(&m);
        let reparsed = irkit_text::parse(&text, "m.ir").unwrap();
        assert!(
            bytes == write(&reparsed),
            "seed {seed}: re-parsing changes the bytes"
        );
    }
}

/// Generated NOIR procs (seeded: 300 proc modules) verify, print and parse back to equal
/// modules whose printing is a fixed point, and write and read back to the same bytes.
#[test]
fn proc_modules_round_trip() {
    for seed in 0..300 {
        let pm = irkit_testgen::proc_module(
            &mut irkit_testgen::Entropy::from_seed(seed),
            &Config::default(),
        );
        let m = &pm.module;
        if let Err(errs) = verify(m) {
            panic!("seed {seed}: {errs:?}\n{pm:?}");
        }
        let text = irkit_text::print(m);
        let parsed = irkit_text::parse(&text, "procs.ir")
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        if let Err(e) = modules_equal(m, &parsed) {
            panic!("seed {seed}: print/parse: {e:?}\n{text}");
        }
        assert_eq!(irkit_text::print(&parsed), text, "seed {seed}");
        let bytes = write(m);
        let read = irkit_format::read(&bytes).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if let Err(e) = modules_equal(m, &read) {
            panic!("seed {seed}: write/read: {e:?}\n{text}");
        }
        assert!(
            write(&read) == bytes,
            "seed {seed}: re-writing changes the bytes"
        );
        assert!(
            write(&parsed) == bytes,
            "seed {seed}: the re-parsed module writes other bytes"
        );
    }
}
