//! Objects across modules (spec/linking.md, "Objects"): the three modules of
//! `examples/objects` each verify on their own, link into a module without any object opcode
//! that verifies and runs; and the promise that makes separate compilation safe: the library
//! changed alone (`tests/objects/shapes_v2.ir`: a new field before the others, a new method,
//! the members in another order, another class) and relinked with the *same* compiled
//! `squares` and `main` gives the same result, with another layout, on the interpreter, the
//! JIT and an executable. Rapid type analysis
//! (`tests/link/objects_rta`): what no reached call can select is dropped, the counts say so,
//! and the program runs alike on the interpreter, the JIT and an executable.

use std::path::Path;

use irkit_core::Module;
use irkit_link::{Input, LinkOptions, link};

fn text(path: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The compiled bytes of a module, as a front end writes them once.
fn compiled(path: &str) -> Vec<u8> {
    let m = irkit_text::parse(&text(path), path).unwrap_or_else(|e| panic!("{path}: {e:?}"));
    irkit_core::verify::verify(&m).unwrap_or_else(|e| panic!("{path}: {e:?}"));
    irkit_format::write(&m).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn linked(files: &[(&str, &[u8])]) -> Module {
    linked_with_stats(files, &LinkOptions::default()).0
}

fn linked_with_stats(files: &[(&str, &[u8])], opts: &LinkOptions) -> (Module, irkit_link::Stats) {
    let inputs: Vec<Input> = files
        .iter()
        .map(|(name, bytes)| Input::from_bytes(name, bytes).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let out = link(inputs, opts).unwrap_or_else(|e| panic!("{e}"));
    (out.module, out.stats)
}

fn object_opcodes(m: &Module) -> usize {
    m.walk()
        .iter()
        .filter(|&&i| (0x0500..=0x050E).contains(&m.opcode(i).0))
        .count()
}

fn run(m: &Module) -> i32 {
    let mut it = irkit_interp::Interpreter::new(m).unwrap_or_else(|e| panic!("{e}"));
    it.run_main().unwrap_or_else(|t| panic!("{t}"))
}

/// The exit code of `m`'s `main` on the interpreter, the JIT and as an executable.
fn run_everywhere(m: &Module) -> [i32; 3] {
    use irkit_backend::Backend;
    let jit = irkit_cranelift::Jit
        .run(m, &irkit_backend::RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("program");
    irkit_cranelift::build_executable(m, "main", &exe).unwrap_or_else(|e| panic!("{e}"));
    let status = std::process::Command::new(&exe).status().unwrap();
    [run(m), jit.exit_code(), status.code().unwrap_or(-1)]
}

#[test]
fn a_library_class_changed_alone_relinks_right() {
    let squares = compiled("examples/objects/squares.ir");
    let main = compiled("examples/objects/main.ir");
    let v1 = compiled("examples/objects/shapes.ir");
    let v2 = compiled("tests/objects/shapes_v2.ir");
    let before = linked(&[
        ("shapes.irm", &v1),
        ("squares.irm", &squares),
        ("main.irm", &main),
    ]);
    let after = linked(&[
        ("shapes.irm", &v2),
        ("squares.irm", &squares),
        ("main.irm", &main),
    ]);
    for m in [&before, &after] {
        irkit_core::verify::verify(m).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(object_opcodes(m), 0, "{}", irkit_text::print(m));
        assert_eq!(run_everywhere(m), [246; 3]);
    }
    // Not the same program: Rect's fields and methods moved, so did Square's (its parent's
    // layout is a prefix of its own).
    let descriptor = |m: &Module, name: &str| {
        let text = irkit_text::print(m);
        let line = text.lines().find(|l| l.starts_with(&format!("@{name}:")));
        line.unwrap_or_else(|| panic!("no @{name} in\n{text}"))
            .to_owned()
    };
    for class in ["__irkit.class.Rect", "__irkit.class.Square"] {
        assert_ne!(
            descriptor(&before, class),
            descriptor(&after, class),
            "{class}"
        );
    }
}

#[test]
fn a_library_link_keeps_the_classes_for_a_later_link() {
    let v1 = compiled("examples/objects/shapes.ir");
    let squares = compiled("examples/objects/squares.ir");
    let inputs = vec![
        Input::from_bytes("shapes.irm", &v1).unwrap(),
        Input::from_bytes("squares.irm", &squares).unwrap(),
    ];
    let opts = LinkOptions {
        library: true,
        ..LinkOptions::default()
    };
    let lib = link(inputs, &opts).unwrap_or_else(|e| panic!("{e}")).module;
    assert!(object_opcodes(&lib) > 0, "{}", irkit_text::print(&lib));
    // And the later link lays them out.
    let lib = irkit_format::write(&lib).unwrap();
    let main = compiled("examples/objects/main.ir");
    let m = linked(&[("lib.irm", &lib), ("main.irm", &main)]);
    assert_eq!(object_opcodes(&m), 0);
    assert_eq!(run(&m), 246);
}

#[test]
fn rapid_type_analysis_drops_what_no_call_selects_on_every_back_end() {
    let lib = compiled("tests/link/objects_rta/lib.ir");
    let main = compiled("tests/link/objects_rta/main.ir");
    let files: [(&str, &[u8]); 2] = [("lib.irm", &lib), ("main.irm", &main)];
    let optimized = LinkOptions {
        devirtualize: true,
        inline: true,
        ..LinkOptions::default()
    };
    for opts in [LinkOptions::default(), optimized] {
        let (m, stats) = linked_with_stats(&files, &opts);
        irkit_core::verify::verify(&m).unwrap_or_else(|e| panic!("{e:?}"));
        // Dog, Puppy and Cat are copied (Bird is named by nothing reached); Cat is only
        // tested, never allocated.
        assert_eq!((stats.classes, stats.classes_live), (3, 2));
        // Kept: Dog's and Puppy's "speak". Dropped: "fetch", the default "volume", Cat's
        // "speak".
        assert_eq!((stats.methods_reached, stats.methods_dropped), (2, 3));
        let text = irkit_text::print(&m);
        for gone in [
            "@dog_fetch",
            "@fetch_helper",
            "@default_volume",
            "@cat_speak",
            "Cat",
        ] {
            assert!(!text.contains(gone), "{gone} is still in\n{text}");
        }
        assert_eq!(run_everywhere(&m), [103; 3]);
    }
}

/// A hierarchy whose tables would grow as the square of its size (a chain of classes each
/// adding a method: class N sees N methods) is refused with one error once its classes see
/// more than `2^21` members in all, before the tables are built.
#[test]
fn a_quadratic_hierarchy_is_refused_not_built() {
    let n = 2200;
    let mut text = String::new();
    for i in 0..n {
        let parent = if i > 0 {
            format!(" @C{}", i - 1)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "@C{i} = class{parent} {{\n  method_def \"m{i}\" fn(ptr) -> i64, @impl\n}}\n"
        ));
    }
    text.push_str("@impl: fn(ptr) -> i64 = func {\n^entry(%s: ptr):\n  ret i64 1\n}\n");
    text.push_str(&format!(
        "#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  %o: ptr = classalloc @C{}\n  ret i32 0\n}}\n",
        n - 1
    ));
    let m = irkit_text::parse(&text, "chain.ir").unwrap_or_else(|e| panic!("{e:?}"));
    let bytes = irkit_format::write(&m).unwrap();
    let input = Input::from_bytes("chain.irm", &bytes).unwrap();
    let errors = match link(vec![input], &LinkOptions::default()) {
        Ok(_) => panic!("a chain of {n} classes each adding a method linked"),
        Err(e) => e.to_string(),
    };
    assert!(
        errors.contains("the class hierarchy is too large"),
        "{errors}"
    );
    assert_eq!(errors.lines().count(), 1, "{errors}");
}
