//! The verifier checks each definition on its own, on every core: what it reports does not
//! depend on the number of threads. Every verifier case (`tests/cases/verify/`), and all of
//! them together in one module (errors in many definitions at once, export names clashing
//! across them), give the same errors, in the same order, on one thread and on several.

use std::path::Path;

fn errors_on(threads: usize, m: &irkit_core::Module) -> Vec<String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    pool.install(|| match irkit_core::verify::verify(m) {
        Ok(()) => Vec::new(),
        Err(errs) => errs.iter().map(|e| e.to_string()).collect(),
    })
}

fn assert_same_on_any_thread_count(name: &str, m: &irkit_core::Module) -> usize {
    let one = errors_on(1, m);
    for threads in [2, 3, 8] {
        assert_eq!(one, errors_on(threads, m), "{name}: {threads} threads");
    }
    one.len()
}

#[test]
fn verifier_errors_do_not_depend_on_the_thread_count() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/verify");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/cases/verify")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ir"))
        .collect();
    paths.sort();
    let mut all = String::new();
    let mut checked = 0;
    for p in &paths {
        let text = std::fs::read_to_string(p).expect("a case");
        let Ok(m) = irkit_text::parse(&text, &p.display().to_string()) else {
            continue;
        };
        assert_same_on_any_thread_count(&p.display().to_string(), &m);
        checked += 1;
        all.push_str(&text);
        all.push('\n');
    }
    assert!(checked > 20, "only {checked} verifier cases parse");
    // Every case's definitions in one module, when their names do not clash in the text.
    if let Ok(m) = irkit_text::parse(&all, "all.ir") {
        let n = assert_same_on_any_thread_count("all cases together", &m);
        assert!(n > 1, "the combined module has {n} errors");
    }
}

#[test]
fn export_names_clash_across_definitions_the_same_way_on_any_thread_count() {
    let mut text = String::new();
    for k in 0..64 {
        // Every fourth definition reuses the name of the one before it.
        let name = if k % 4 == 3 { k - 1 } else { k };
        text += &format!(
            "#[export(\"f{name}\")]\n@f{k}: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  %y: i32 = iadd %x, %x\n  ret %y\n}}\n\n"
        );
    }
    let m = irkit_text::parse(&text, "clash.ir").expect("parses");
    let errors = errors_on(1, &m);
    assert_eq!(errors.len(), 16, "{errors:#?}");
    assert!(errors[0].contains("already used by"), "{}", errors[0]);
    assert_same_on_any_thread_count("clash.ir", &m);
}
