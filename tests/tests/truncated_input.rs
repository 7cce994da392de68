//! An input cut short while it is mapped (spec/format.md §4, "Mapped inputs"): with the
//! truncation guard on, reading past the new end gives zeros instead of SIGBUS, and the linker
//! refuses the input as changed, naming the file, instead of linking what it read.

use irkit_link::{Input, LinkOptions, Opened, link};

/// A module large enough that its definitions lie on pages past the first one.
fn program() -> String {
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!(
            "@f{i}: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  %y: i32 = iadd %x, i32 {i}\n  ret %y\n}}\n"
        ));
    }
    text.push_str("#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n");
    for i in 0..400 {
        text.push_str(&format!("  %r{i}: i32 = call @f{i}(i32 1)\n"));
    }
    text.push_str("  ret %r399\n}\n");
    text
}

#[test]
fn a_module_truncated_while_mapped_is_refused_as_changed() {
    irkit_io::guard_truncation().unwrap();
    let module = irkit_text::parse(&program(), "p.ir").unwrap();
    let bytes = irkit_format::write(&module).unwrap();
    assert!(bytes.len() > 3 * 4096, "{} bytes", bytes.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.irm");
    std::fs::write(&path, &bytes).unwrap();

    let input = Input::open(&path).and_then(Opened::module).unwrap();
    // Cut the file to its first page: header and directory were read at open; everything the
    // link reads next is gone.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let errors = link(vec![input], &LinkOptions::default()).unwrap_err();
    let text = errors.to_string();
    assert!(text.contains("cut.irm"), "{text}");
    assert!(text.contains("changed"), "{text}");
}

#[test]
fn an_untouched_module_links_under_the_guard() {
    irkit_io::guard_truncation().unwrap();
    let module = irkit_text::parse(&program(), "p.ir").unwrap();
    let bytes = irkit_format::write(&module).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("whole.irm");
    std::fs::write(&path, &bytes).unwrap();
    let input = Input::open(&path).and_then(Opened::module).unwrap();
    let linked = link(vec![input], &LinkOptions::default()).unwrap();
    assert!(linked.stats.defs_copied >= 401);
}
