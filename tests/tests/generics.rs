//! Generics end to end: the three example modules (`examples/generics`: a library with
//! `max<T: Ord>` and `Pair<T>`, the witness tables of `Ord` for `i32` and `f64`, and `main`)
//! each verify on their own (validation before link), link into a module without any generics
//! opcode that verifies and runs (the interpreter as oracle), and every distinct `specialize`
//! is instantiated exactly once.

use std::path::{Path, PathBuf};

use irkit_core::{Module, Opcode};
use irkit_link::{Input, LinkOptions, link};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/generics")
        .join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(example(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn inputs() -> Vec<Input> {
    ["lib.ir", "algo.ir", "ord.ir", "main.ir"]
        .iter()
        .map(|n| irkit_tests::text_input(n, &text(n)).unwrap_or_else(|e| panic!("{n}: {e:?}")))
        .collect()
}

fn generics_opcodes(m: &Module) -> usize {
    m.walk()
        .iter()
        .chain(m.pool())
        .filter(|&&i| (0x0300..=0x0308).contains(&m.opcode(i).0))
        .count()
}

#[test]
fn each_module_verifies_before_link() {
    for n in ["lib.ir", "algo.ir", "ord.ir", "main.ir"] {
        let m = irkit_text::parse(&text(n), n).unwrap_or_else(|e| panic!("{n}: {e:?}"));
        irkit_core::verify::verify(&m).unwrap_or_else(|e| panic!("{n}: {e:?}"));
    }
}

#[test]
fn linked_has_no_generics_verifies_and_runs() {
    let linked = link(inputs(), &LinkOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let m = &linked.module;
    irkit_core::verify::verify(m).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(generics_opcodes(m), 0, "{}", irkit_text::print(m));
    // max at i32, f64 and the point type (the last made by max_in's clone), Pair<i32>,
    // sort and max_in at the three types, rotate<i64>.
    assert_eq!(linked.stats.instantiations, 11);
    let clones = m
        .top_level()
        .iter()
        .filter(|&&d| {
            m.opcode(d) == Opcode::FUNC && m.name(d).is_some_and(|n| n.starts_with("max<"))
        })
        .count();
    assert_eq!(clones, 3);
    let mut interp = irkit_interp::Interpreter::new(m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(interp.run_main().unwrap_or_else(|e| panic!("{e}")), 99);
}

/// Links the example with `generics`; returns the module's result and the link's stats.
fn run_with(generics: irkit_link::Generics) -> (i64, irkit_link::Stats) {
    let opts = LinkOptions {
        generics,
        ..LinkOptions::default()
    };
    let linked = link(inputs(), &opts).unwrap_or_else(|e| panic!("{e}"));
    let m = &linked.module;
    irkit_core::verify::verify(m).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(generics_opcodes(m), 0, "{}", irkit_text::print(m));
    let mut interp = irkit_interp::Interpreter::new(m).unwrap_or_else(|e| panic!("{e}"));
    let r = interp.run_main().unwrap_or_else(|e| panic!("{e}"));
    (r as i64, linked.stats)
}

#[test]
fn shared_generics_give_the_same_result() {
    use irkit_link::Generics;
    let (r, s) = run_with(Generics::Dynamic);
    assert_eq!(r, 99);
    // max, sort, max_in and rotate, each compiled once; the module-level instances (max at
    // i32 and f64, sort and max_in at three types, rotate at i64) become wrappers; max at
    // the point type is only called from max_in's shared version, with its own parameters.
    assert_eq!(s.shared.generics, 4, "{s:?}");
    assert_eq!(s.shared.instances, 9, "{s:?}");
    // sort: less once, get and put twice each; max_in: get twice; max: less once.
    assert_eq!(s.shared.witness_calls, 8, "{s:?}");
    // Only Pair<i32> is still cloned.
    assert_eq!(s.instantiations, 1);
}

#[test]
fn auto_shares_the_generics_with_many_instances() {
    use irkit_link::Generics;
    // max: 2 instances of its own and one per instance of max_in (3): 5; sort and max_in: 3;
    // rotate: 1. Shared: sort and max_in, and max with max_in (which calls it).
    let (r, s) = run_with(Generics::Auto { max_instances: 2 });
    assert_eq!(r, 99);
    assert_eq!(s.shared.generics, 3, "{s:?}");
    // max has more than 3, but a body of four instructions: cloning it is cheaper.
    let (r, s) = run_with(Generics::Auto { max_instances: 3 });
    assert_eq!(r, 99);
    assert_eq!(s.shared.generics, 0, "{s:?}");
    let (r, s) = run_with(Generics::default());
    assert_eq!(r, 99);
    assert_eq!(s.shared.generics, 0, "{s:?}");
}

#[test]
fn library_link_keeps_exported_generics() {
    let opts = LinkOptions {
        library: true,
        ..LinkOptions::default()
    };
    let linked = link(inputs(), &opts).unwrap_or_else(|e| panic!("{e}"));
    let m = &linked.module;
    irkit_core::verify::verify(m).unwrap_or_else(|e| panic!("{e:?}"));
    for name in ["max", "Pair", "Ord", "ord_i32", "main"] {
        assert!(m.find_export(name).is_some(), "{name} lost");
    }
}

#[test]
fn memoized_one_clone_per_distinct_instantiation() {
    // Many call sites of few distinct instantiations, some written twice (equal specialize
    // values are one instruction).
    let mut main = String::from(
        "#[import(\"Ord\")]\n@Ord = interface @Ord.less\n#[import(\"Ord.less\")]\n\
         @Ord.less: fn(@Ord, @Ord) -> i1 = interface_req\n#[import(\"ord_i32\")]\n\
         @ord_i32: @Ord = witness_table i32\n#[import(\"ord_f64\")]\n@ord_f64: @Ord = witness_table f64\n\
         #[import(\"max\")]\n@max = generic %T, %w {\n  %T = type_param 0 @max\n  \
         %w: @Ord = witness_param 1 @max, %T\n  %fn: fn(%T, %T) -> %T = func\n}\n\
         @a: fn(i32, i32) -> i32 = specialize @max, i32, @ord_i32\n\
         @b: fn(i32, i32) -> i32 = specialize @max, i32, @ord_i32\n\
         @c: fn(f64, f64) -> f64 = specialize @max, f64, @ord_f64\n\
         #[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n",
    );
    for k in 0..50 {
        let f = ["a", "b"][k % 2];
        main.push_str(&format!("  %x{k}: i32 = call @{f}(i32 {k}, i32 7)\n"));
        main.push_str(&format!("  %y{k}: f64 = call @c(f64 1.0, f64 2.0)\n"));
    }
    main.push_str("  ret %x49\n}\n");
    let mut ins = inputs();
    ins.pop();
    ins.push(irkit_tests::text_input("main.ir", &main).unwrap_or_else(|e| panic!("{e:?}")));
    let linked = link(ins, &LinkOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(linked.stats.instantiations, 2);
    let m = &linked.module;
    assert_eq!(generics_opcodes(m), 0);
    let mut interp = irkit_interp::Interpreter::new(m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(interp.run_main().unwrap_or_else(|e| panic!("{e}")), 49);
}

#[test]
fn generic_witness_table_specializes_and_runs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/generic_witness_table/main.ir");
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let input = irkit_tests::text_input("main.ir", &src).unwrap_or_else(|e| panic!("{e:?}"));
    let linked = link(vec![input], &LinkOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    // Pair<i32>, ord_pair<i32, ord_i32>, pair_less<i32, ord_i32>, max<Pair<i32>, …>.
    assert_eq!(linked.stats.instantiations, 4);
    let m = &linked.module;
    assert_eq!(generics_opcodes(m), 0);
    let mut interp = irkit_interp::Interpreter::new(m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(interp.run_main().unwrap_or_else(|e| panic!("{e}")), 5);
}

#[test]
fn generic_calling_generic_with_a_generic_struct_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/generics_nested");
    let inputs: Vec<Input> = ["lib.ir", "main.ir"]
        .iter()
        .map(|n| {
            let src = std::fs::read_to_string(dir.join(n)).unwrap_or_else(|e| panic!("{e}"));
            irkit_tests::text_input(n, &src).unwrap_or_else(|e| panic!("{n}: {e:?}"))
        })
        .collect();
    let linked = link(inputs, &LinkOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    // Pair<i64>, make_pair<i64>, max_of<i64, ord_i64>, max<i64, ord_i64>.
    assert_eq!(linked.stats.instantiations, 4);
    let m = &linked.module;
    assert_eq!(generics_opcodes(m), 0);
    let mut interp = irkit_interp::Interpreter::new(m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(interp.run_main().unwrap_or_else(|e| panic!("{e}")), 9);
}

/// Specialization is a public pass of its own: a module with generics and their uses (here one
/// file, no link) is specialized by `irkit_link::specialize` directly, with the same result as
/// inside a link.
#[test]
fn specialization_is_a_pass_of_its_own() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/generic_witness_table/main.ir");
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut m = irkit_text::parse(&src, "main.ir").unwrap_or_else(|e| panic!("{e}"));
    irkit_core::verify::verify(&m).unwrap_or_else(|e| panic!("{e:?}"));
    let report =
        irkit_link::specialize(&mut m, 64, &|_, _| false).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.instantiations, 4);
    assert_eq!(generics_opcodes(&m), 0);
    irkit_core::verify::verify(&m).unwrap_or_else(|e| panic!("{e:?}"));
    let mut interp = irkit_interp::Interpreter::new(&m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(interp.run_main().unwrap_or_else(|e| panic!("{e}")), 5);
}

/// The program whose generic `max` is used at `n` types, linked with `generics`: its result
/// and its stats.
fn many_types(n: usize, generics: irkit_link::Generics) -> (i64, irkit_link::Stats) {
    let (mods, _) = irkit_testgen::many_types_program(n);
    let inputs: Vec<Input> = mods
        .iter()
        .map(|(name, text)| {
            irkit_tests::text_input(name, text).unwrap_or_else(|e| panic!("{name}: {e:?}"))
        })
        .collect();
    let opts = LinkOptions {
        generics,
        ..LinkOptions::default()
    };
    let linked = link(inputs, &opts).unwrap_or_else(|e| panic!("{e}"));
    let m = &linked.module;
    assert_eq!(generics_opcodes(m), 0);
    let mut interp = irkit_interp::Interpreter::new(m).unwrap_or_else(|e| panic!("{e}"));
    let r = interp.run_main().unwrap_or_else(|e| panic!("{e}"));
    (r as i64, linked.stats)
}

#[test]
fn a_generic_used_at_a_thousand_types_is_shared_by_default() {
    use irkit_link::Generics;
    let (_, expected) = irkit_testgen::many_types_program(1000);
    let (r, s) = many_types(1000, Generics::default());
    assert_eq!(r, expected);
    assert_eq!(s.shared.generics, 1, "{s:?}");
    assert_eq!(s.shared.instances, 1000, "{s:?}");
    assert_eq!(s.instantiations, 0, "{s:?}");
    let (r, s) = many_types(1000, Generics::Specialize);
    assert_eq!(r, expected);
    assert_eq!(s.instantiations, 1000, "{s:?}");
    assert_eq!(s.shared.generics, 0, "{s:?}");
    // A few types stay cloned under the default: their clones are the program.
    let (r, s) = many_types(10, Generics::default());
    assert_eq!(
        (r, s.shared.generics, s.instantiations),
        (irkit_testgen::many_types_program(10).1, 0, 10)
    );
}

#[test]
fn a_generic_heapsort_sorts_the_same_shared_or_cloned() {
    use irkit_link::Generics;
    let text = irkit_testgen::heapsort_program(300);
    let mut results = Vec::new();
    for generics in [Generics::Specialize, Generics::Dynamic] {
        let input =
            irkit_tests::text_input("heapsort.ir", &text).unwrap_or_else(|e| panic!("{e:?}"));
        let opts = LinkOptions {
            generics,
            ..LinkOptions::default()
        };
        let linked = link(vec![input], &opts).unwrap_or_else(|e| panic!("{e}"));
        let mut interp =
            irkit_interp::Interpreter::new(&linked.module).unwrap_or_else(|e| panic!("{e}"));
        results.push((
            interp.run_main().unwrap_or_else(|e| panic!("{e}")),
            linked.stats.shared.generics,
        ));
    }
    // Sorted both ways (100 would say it is not), and shared: heapsort, sift, swap.
    assert_eq!((results[0].0, results[1].0), (0, 0), "{results:?}");
    assert_eq!((results[0].1, results[1].1), (0, 3));
}
