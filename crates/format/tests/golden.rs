//! Golden files: bytes written by released format versions. They stay here forever; every
//! later release must read them (spec/versioning.md). `IRKIT_BLESS=1` writes a missing one.

mod common;

use irkit_core::equiv::modules_equal;
use irkit_format::ModuleView;

fn golden(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

#[test]
fn v1_0_sample_reads_forever() {
    let path = golden("v1.0-sample.irm");
    if std::env::var_os("IRKIT_BLESS").is_some() && !path.exists() {
        irkit_format::write_to_path(&common::sample(), &path).unwrap();
    }
    let view = ModuleView::open(&path).unwrap();
    assert_eq!(view.version(), (1, 0));
    view.validate_all().unwrap();
    modules_equal(&common::sample(), &view.materialize().unwrap()).unwrap();
    // A later minor writes the same module with the same bytes but for the version field
    // (header offset 10, u16 little-endian): minors are additive (spec/versioning.md).
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[10..12].copy_from_slice(&irkit_format::FORMAT_MINOR.to_le_bytes());
    assert_eq!(irkit_format::write(&common::sample()).unwrap(), bytes);
}
