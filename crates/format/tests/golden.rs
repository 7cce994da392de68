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
    // While the writer still writes 1.0, it must write exactly these bytes.
    if irkit_format::FORMAT_MINOR == 0 {
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(irkit_format::write(&common::sample()).unwrap(), bytes);
    }
}
