//! Golden files: bytes written by released format versions. They stay here forever; every
//! later release must read them (spec/versioning.md). `IRKIT_BLESS=1` writes a missing one.

mod common;

use irkit_core::equiv::modules_equal;
use irkit_format::{FORMAT_MAJOR, FORMAT_MINOR, ModuleView};

fn golden(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// The sample as each released version wrote it: read and validated, the same module.
#[test]
fn released_samples_read_forever() {
    for (major, minor) in [(1, 0), (2, 0), (2, 1), (3, 0), (4, 0)] {
        let view = ModuleView::open(golden(&format!("v{major}.{minor}-sample.irm"))).unwrap();
        assert_eq!(view.version(), (major, minor));
        view.validate_all().unwrap();
        modules_equal(&common::sample(), &view.materialize().unwrap()).unwrap();
    }
}

/// The sample in the version this crate writes: read, and written again byte for byte (a
/// writer change that alters bytes without a version bump fails here).
#[test]
fn current_sample_reads_and_is_what_the_writer_writes() {
    let path = golden(&format!("v{FORMAT_MAJOR}.{FORMAT_MINOR}-sample.irm"));
    if std::env::var_os("IRKIT_BLESS").is_some() && !path.exists() {
        irkit_format::write_to_path(&common::sample(), &path).unwrap();
    }
    let view = ModuleView::open(&path).unwrap();
    assert_eq!(view.version(), (FORMAT_MAJOR, FORMAT_MINOR));
    view.validate_all().unwrap();
    modules_equal(&common::sample(), &view.materialize().unwrap()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        irkit_format::write(&common::sample()).unwrap() == bytes,
        "the writer's bytes differ from {}",
        path.display()
    );
}
