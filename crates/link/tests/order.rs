//! Linking is independent of the order of the inputs: random multi-module programs (cross-module
//! calls, cycles, `weak` and `linkonce` definitions, pins, unreached code) link to the same
//! bytes for every permutation of their inputs, and on any number of threads.

use irkit_link::{Input, LinkOptions, link};
use proptest::prelude::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A random program of `n` modules as `.ir` texts (names `a.ir`, `b.ir`, ...).
fn program(seed: u64, n: usize) -> Vec<(String, String)> {
    let mut rng = Rng(seed);
    let per = 3;
    let name = |m: usize, f: usize| format!("m{m}_f{f}");
    let strong_hook = rng.below(n as u64 + 1) as usize; // == n: no strong hook
    let mut out = Vec::new();
    for m in 0..n {
        let mut text = String::new();
        let mut calls: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut imports = std::collections::BTreeSet::new();
        for _ in 0..per {
            let mut c = Vec::new();
            for _ in 0..rng.below(3) {
                let callee = (rng.below(n as u64) as usize, rng.below(per as u64) as usize);
                if callee.0 != m {
                    imports.insert(callee);
                }
                c.push(callee);
            }
            calls.push(c);
        }
        for &(cm, cf) in &imports {
            text += &format!(
                "#[import(\"{0}\")]\n@{0}: fn(i32) -> i32 = func\n\n",
                name(cm, cf)
            );
        }
        text += "#[import(\"hook\")]\n@hook_import: fn() -> void = func\n\n";
        for (f, c) in calls.iter().enumerate() {
            let pin = if rng.below(4) == 0 {
                format!(", pin(@{})", name(m, (f + 1) % per))
            } else {
                String::new()
            };
            text += &format!(
                "#[export(\"{}\"){pin}]\n@{}: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n",
                name(m, f),
                name(m, f)
            );
            let mut v = "%x".to_string();
            for (k, &(cm, cf)) in c.iter().enumerate() {
                text += &format!("  %c{k}: i32 = call @{}({v})\n", name(cm, cf));
                v = format!("%c{k}");
            }
            text +=
                &format!("  call @hook_import()\n  %r: i32 = call @shared({v})\n  ret %r\n}}\n\n");
        }
        text += "#[export(\"shared\"), linkonce]\n@shared: fn(i32) -> i32 = func {\n^entry(%x: i32):\n  %r: i32 = imul %x, i32 3\n  ret %r\n}\n\n";
        if m == strong_hook {
            text += &format!(
                "#[export(\"hook\")]\n@hook: fn() -> void = func {{\n^entry:\n  store @state, i32 {m}\n  ret\n}}\n\n"
            );
        } else {
            text += &format!(
                "#[export(\"hook\"), weak]\n@hook: fn() -> void = func {{\n^entry:\n  store @state, i32 {}\n  ret\n}}\n\n",
                100 + m
            );
        }
        text += &format!("@state: i32 = global_var i32 {m}\n\n");
        text +=
            "@dead: fn() -> i32 = func {\n^entry:\n  %r: i32 = call @shared(i32 1)\n  ret %r\n}\n";
        if m == 0 {
            text += &format!(
                "\n#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  %r: i32 = call @{}(i32 1)\n  ret %r\n}}\n",
                name(0, 0)
            );
        }
        let file = format!("{}.ir", (b'a' + m as u8) as char);
        out.push((file, text));
    }
    out
}

fn link_bytes(inputs: &[(String, String)], opts: &LinkOptions) -> Result<Vec<u8>, String> {
    let opened = inputs
        .iter()
        .map(|(n, t)| text_input(n, t).map_err(|e| format!("{e}\n{t}")))
        .collect::<Result<Vec<_>, _>>()?;
    let linked = link(opened, opts).map_err(|e| e.to_string())?;
    irkit_format::write(&linked.module).map_err(|e| e.to_string())
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_input_order_gives_the_same_bytes(seed in any::<u64>(), n in 2usize..=4, library in any::<bool>()) {
        let inputs = program(seed, n);
        let opts = LinkOptions { library, ..LinkOptions::default() };
        let first = link_bytes(&inputs, &opts);
        prop_assert!(first.is_ok(), "{:?}", first);
        for perm in permutations(n) {
            let shuffled: Vec<_> = perm.iter().map(|&i| inputs[i].clone()).collect();
            let again = link_bytes(&shuffled, &opts);
            prop_assert_eq!(&first, &again, "order {:?}", perm);
        }
        // Work split over threads (validation, verification, writing) gives the same bytes
        // whatever the number of threads.
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let again = pool.install(|| link_bytes(&inputs, &opts));
            prop_assert_eq!(&first, &again, "{} threads", threads);
        }
    }
}

#[test]
fn unreached_definitions_are_not_copied() {
    let inputs = program(7, 3);
    let opened: Vec<Input> = inputs
        .iter()
        .map(|(n, t)| text_input(n, t).unwrap())
        .collect();
    let linked = link(opened, &LinkOptions::default()).unwrap();
    let m = &linked.module;
    assert!(m.find_named("dead").is_none());
    assert!(linked.stats.defs_copied < linked.stats.defs_available);
    // One `shared` (linkonce collapsed) and one `hook`.
    let shared = m
        .top_level()
        .iter()
        .filter(|&&d| m.decoration_str(d, irkit_core::Opcode::EXPORT) == Some("shared"))
        .count();
    assert_eq!(shared, 1);
}

/// A `.ir` text input, parsed and encoded in memory as `ir-link` does.
fn text_input(name: &str, text: &str) -> Result<Input, String> {
    let module = irkit_text::parse(text, name).map_err(|e| e.to_string())?;
    Input::from_module(name, &module).map_err(|e| e.to_string())
}

/// What `ir-link -o OUT.irm` does (the link verified beside the encoding, the file written
/// after): the same bytes as a link verified first and written after, and a module that does
/// not verify is caught by `verify_linked` as `link` would have caught it.
#[test]
fn verifying_beside_the_encoding_writes_what_a_verified_link_writes() {
    for seed in 0..8 {
        let inputs = program(seed, 4);
        let opened = |inputs: &[(String, String)]| {
            inputs
                .iter()
                .map(|(n, t)| text_input(n, t).unwrap())
                .collect::<Vec<_>>()
        };
        let verified = link_bytes(&inputs, &LinkOptions::default()).unwrap();
        let opts = LinkOptions {
            verify: false,
            ..LinkOptions::default()
        };
        let linked = link(opened(&inputs), &opts).unwrap();
        let (checked, prepared) = rayon::join(
            || irkit_link::verify_linked(&linked.module),
            || irkit_format::prepare(&linked.module, irkit_core::verify::Nesting::Established),
        );
        checked.unwrap();
        let bytes = prepared
            .unwrap()
            .write_to(std::io::Cursor::new(Vec::new()))
            .unwrap()
            .into_inner();
        assert!(bytes == verified, "seed {seed}: other bytes");
    }
    // A linked module broken afterwards (an operand of the wrong type) does not verify.
    let inputs = program(1, 2);
    let opts = LinkOptions {
        verify: false,
        ..LinkOptions::default()
    };
    let mut linked = link(
        inputs
            .iter()
            .map(|(n, t)| text_input(n, t).unwrap())
            .collect(),
        &opts,
    )
    .unwrap();
    let m = &mut linked.module;
    let f = m
        .top_level()
        .iter()
        .copied()
        .find(|&d| m.entry_block(d).is_some())
        .unwrap();
    let block = m.entry_block(f).unwrap();
    let wrong = m.ty_i64();
    let zero = m.const_int(wrong, 0).unwrap();
    let ret = *m.children(block).last().unwrap();
    m.set_operands_from(ret, &[zero, zero]).unwrap();
    let errors = irkit_link::verify_linked(&linked.module).unwrap_err();
    assert!(!errors.errors().is_empty());
}
