//! Debug information in object files (spec/backends.md, "Debug information"): written when
//! the module has source locations and not asked away, the same bytes whatever the threads
//! and with or without the code cache, and right for a function taken from the cache after
//! the code before it changed size (it moved).

use std::path::Path;

use irkit_cranelift::{CodegenOptions, CodegenStats, compile_object};

/// Two functions; `f`'s body computes `op` (its size changes with it, on one line).
fn program(op: &str) -> String {
    format!(
        "@f: fn(i64) -> i64 = func {{\n^entry(%x: i64):\n  %y: i64 = {op}\n  ret %y\n}}\n\n\
         @g: fn(i64) -> i64 = func {{\n^entry(%x: i64):\n  %a: i64 = call @f(%x)\n  %b: i64 = imul %a, %x\n  ret %b\n}}\n\n\
         #[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  %r: i64 = call @g(i64 3)\n  %t: i32 = trunc %r\n  ret %t\n}}\n"
    )
}

/// `text` parsed as `t.ir`, with source locations if `located`.
fn module(text: &str, located: bool) -> irkit_core::Module {
    let (mut m, map) = irkit_text::parse_with_source_map(text, "t.ir").expect("parses");
    if located {
        irkit_text::attach_locations(&mut m, &map, "t.ir").expect("locates");
    }
    irkit_core::verify::verify(&m).expect("verifies");
    m
}

fn build(
    m: &irkit_core::Module,
    jobs: usize,
    cache: Option<&Path>,
    debug: bool,
) -> (Vec<u8>, CodegenStats) {
    let opts = CodegenOptions {
        jobs: Some(jobs),
        cache: cache.map(Path::to_path_buf),
        debug_info: debug,
        ..CodegenOptions::default()
    };
    compile_object(m, &opts).expect("compiles")
}

fn has(bytes: &[u8], name: &[u8]) -> bool {
    bytes.windows(name.len()).any(|w| w == name)
}

#[test]
fn an_object_has_debug_information_when_its_module_has_locations() {
    let text = program("iadd %x, i64 1");
    let located = module(&text, true);
    let (with, _) = build(&located, 1, None, true);
    for section in [
        &b".debug_info"[..],
        b".debug_line",
        b".debug_abbrev",
        b".debug_str",
        b".eh_frame",
    ] {
        assert!(
            has(&with, section),
            "no {}",
            String::from_utf8_lossy(section)
        );
    }
    // Asked away, or no locations: none.
    let (without, _) = build(&located, 1, None, false);
    let (plain, _) = build(&module(&text, false), 1, None, true);
    for bytes in [&without, &plain] {
        assert!(!has(bytes, b".debug_") && !has(bytes, b".eh_frame"));
    }
    assert!(with.len() > without.len());
}

#[test]
fn debug_information_is_the_same_whatever_the_threads_and_the_cache() {
    let m = module(&program("sdiv %x, i64 7"), true);
    let (serial, _) = build(&m, 1, None, true);
    let (parallel, _) = build(&m, 3, None, true);
    assert!(serial == parallel, "threads changed the object");
    let dir = tempfile::tempdir().unwrap();
    let (cold, _) = build(&m, 2, Some(dir.path()), true);
    let (warm, s) = build(&m, 2, Some(dir.path()), true);
    assert_eq!(s.compiled, 0, "{s:?}");
    assert!(
        cold == serial && warm == serial,
        "the cache changed the object"
    );
}

/// `g` and `main` come from the cache at other addresses (`f` before them changed size):
/// their line rows and frames are still theirs, the object a fresh build's.
#[test]
fn a_function_from_the_cache_moved_elsewhere_keeps_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let small = module(&program("iadd %x, i64 1"), true);
    build(&small, 2, Some(dir.path()), true);
    let large = module(&program("sdiv %x, i64 7"), true);
    let (fresh, _) = build(&large, 2, None, true);
    let (warm, s) = build(&large, 2, Some(dir.path()), true);
    assert_eq!((s.compiled, s.cached), (1, 2), "{s:?}");
    assert!(
        warm == fresh,
        "a moved cached function changed the debug information"
    );
    let (small_code, _) = build(&small, 1, None, false);
    let (large_code, _) = build(&large, 1, None, false);
    assert!(
        small_code.len() != large_code.len(),
        "f did not change size"
    );
}
