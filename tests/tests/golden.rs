//! The binary format's promise (spec/versioning.md), tested.
//!
//! * Every golden file `tests/golden/vMAJOR.MINOR/*.irm` of every released version reads, and
//!   equals the module parsed from its `.ir` source. Golden files are never regenerated: a
//!   released version's bytes stay readable forever.
//! * For the version the writer currently writes, the writer's bytes for each golden source
//!   are the golden bytes: a writer change that alters bytes without a version bump fails here.
//! * A file from a newer minor version, holding an opcode this reader does not know and an
//!   optional section of a kind it does not know, loads, prints and re-serializes unchanged.
//!   That file is assembled here from spec/format.md alone, as an independent writer would.

use std::path::{Path, PathBuf};

use irkit_format::{FORMAT_MAJOR, FORMAT_MINOR, ModuleView};

fn golden_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

fn golden_dirs() -> Vec<(u16, u16, PathBuf)> {
    let mut dirs = Vec::new();
    for e in std::fs::read_dir(golden_root()).expect("tests/golden exists") {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let Some((major, minor)) = name.strip_prefix('v').and_then(|v| v.split_once('.')) else {
            panic!(
                "unexpected entry {} in tests/golden (want vMAJOR.MINOR)",
                p.display()
            )
        };
        dirs.push((major.parse().unwrap(), minor.parse().unwrap(), p));
    }
    dirs.sort();
    dirs
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    v.sort();
    v
}

fn parse_file(path: &Path) -> irkit_core::Module {
    let text = std::fs::read_to_string(path).unwrap();
    irkit_text::parse(&text, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_released_golden_file_reads_and_equals_its_source() {
    let dirs = golden_dirs();
    assert!(
        dirs.iter().any(|(ma, mi, _)| (*ma, *mi) == (1, 0)),
        "v1.0 golden files are kept forever"
    );
    let mut checked = 0;
    for (major, minor, dir) in dirs {
        for src in sources(&dir) {
            let irm = src.with_extension("irm");
            let view = ModuleView::open(&irm).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                view.version(),
                (major, minor),
                "{} is filed under v{major}.{minor}",
                irm.display()
            );
            view.validate_all().unwrap_or_else(|e| panic!("{e}"));
            let read = view.materialize().unwrap_or_else(|e| panic!("{e}"));
            irkit_core::equiv::modules_equal(&parse_file(&src), &read)
                .unwrap_or_else(|e| panic!("{}: {e}", irm.display()));
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} golden files");
}

/// Under `IRKIT_BLESS=1`, adds what is missing for the current version (never touching an
/// existing file): its folder, with the sources of the newest older version, and the `.irm`
/// of every source that lacks one.
fn bless_missing(dir: &Path) {
    if !irkit_tests::blessing() {
        return;
    }
    if !dir.is_dir() {
        let newest = golden_dirs().pop().expect("older golden files").2;
        std::fs::create_dir_all(dir).unwrap();
        for src in sources(&newest) {
            std::fs::copy(&src, dir.join(src.file_name().unwrap())).unwrap();
        }
    }
    for src in sources(dir) {
        let irm = src.with_extension("irm");
        if !irm.exists() {
            irkit_format::write_to_path(&parse_file(&src), &irm).unwrap();
        }
    }
}

#[test]
fn writer_bytes_change_only_with_the_version() {
    let dir = golden_root().join(format!("v{FORMAT_MAJOR}.{FORMAT_MINOR}"));
    bless_missing(&dir);
    assert!(
        dir.is_dir(),
        "no golden files for the current format version {FORMAT_MAJOR}.{FORMAT_MINOR}: add \
         tests/golden/v{FORMAT_MAJOR}.{FORMAT_MINOR}/ (IRKIT_BLESS=1 copies the newest \
         version's sources and writes them)"
    );
    for src in sources(&dir) {
        let irm = src.with_extension("irm");
        let golden = std::fs::read(&irm).unwrap();
        let written = irkit_format::write(&parse_file(&src)).unwrap();
        assert!(
            written == golden,
            "the writer's bytes for {} changed while the format version is still \
             {FORMAT_MAJOR}.{FORMAT_MINOR}: either the change is a bug, or bump the version \
             (spec/versioning.md) and add golden files for the new one",
            src.display()
        );
    }
}

/// The 2.1, 3.0 and 4.0 layouts stay writable for tests (`irkit_hostile::write_v2_1`,
/// `write_v3_0`, `write_v4_0`), and what they write is what the 2.1, 3.0 and 4.0 writers
/// wrote: the golden bytes.
#[test]
fn the_test_writers_of_older_layouts_give_the_golden_bytes() {
    type Writer = fn(&irkit_core::Module) -> Result<Vec<u8>, irkit_format::WriteError>;
    let writers: [(&str, Writer); 3] = [
        ("v2.1", irkit_hostile::write_v2_1),
        ("v3.0", irkit_hostile::write_v3_0),
        ("v4.0", irkit_hostile::write_v4_0),
    ];
    for (version, write) in writers {
        for src in sources(&golden_root().join(version)) {
            let golden = std::fs::read(src.with_extension("irm")).unwrap();
            let written = write(&parse_file(&src)).unwrap();
            assert!(written == golden, "{}", src.display());
        }
    }
}

#[test]
fn older_minor_golden_bytes_differ_from_the_writer_only_in_the_version_field() {
    // Minors are additive (spec/versioning.md): a module that uses nothing newer than an
    // older minor is written with that minor's bytes except the minor at header offset 10
    // (and, in 2.x, the header hash over it, spec/format.md §1.1).
    for (major, minor, dir) in golden_dirs() {
        if major != FORMAT_MAJOR || (major, minor) >= (FORMAT_MAJOR, FORMAT_MINOR) {
            continue;
        }
        for src in sources(&dir) {
            let mut golden = std::fs::read(src.with_extension("irm")).unwrap();
            golden[10..12].copy_from_slice(&FORMAT_MINOR.to_le_bytes());
            if major >= 2 {
                reseal_header(&mut golden);
            }
            let written = irkit_format::write(&parse_file(&src)).unwrap();
            assert!(
                written == golden,
                "{}: the {FORMAT_MAJOR}.{FORMAT_MINOR} writer changed bytes of a \
                 {major}.{minor} module beyond the version field",
                src.display()
            );
        }
    }
}

/// Recomputes a 2.x header hash (bytes 32..64): blake3 of bytes 0..32, then of the directory.
fn reseal_header(file: &mut [u8]) {
    let count = u32_at(file, 16) as usize;
    let entry = u32_at(file, 20) as usize;
    let mut h = blake3::Hasher::new();
    h.update(&file[..32]);
    h.update(&file[64..64 + count * entry]);
    file[32..64].copy_from_slice(h.finalize().as_bytes());
}

// ---- an independent writer for the container, from spec/format.md §1 ----------------------

struct Section {
    kind: u32,
    flags: u32,
    bytes: Vec<u8>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The header size of a major version (§1.1): 32 bytes in 1.x, 64 (with the header hash)
/// from 2.0 on.
fn header_size(major: u16) -> usize {
    if major == 1 { 32 } else { 64 }
}

/// Splits a file into its sections (header §1.1, directory §1.2).
fn split(file: &[u8]) -> (u16, u16, Vec<Section>) {
    assert_eq!(&file[..8], b"IRKMOD\0\x1a");
    let (major, minor) = (u16_at(file, 8), u16_at(file, 10));
    let count = u32_at(file, 16) as usize;
    let entry = u32_at(file, 20) as usize;
    assert_eq!(u64_at(file, 24), file.len() as u64);
    let head = header_size(major);
    if major >= 2 {
        let mut h = blake3::Hasher::new();
        h.update(&file[..32]);
        h.update(&file[head..head + count * entry]);
        assert_eq!(h.finalize().as_bytes(), &file[32..64], "header hash");
    }
    let sections = (0..count)
        .map(|i| {
            let e = head + i * entry;
            let (off, len) = (u64_at(file, e + 8) as usize, u64_at(file, e + 16) as usize);
            let bytes = file[off..off + len].to_vec();
            assert_eq!(blake3::hash(&bytes).as_bytes(), &file[e + 24..e + 56]);
            Section {
                kind: u32_at(file, e),
                flags: u32_at(file, e + 4),
                bytes,
            }
        })
        .collect();
    (major, minor, sections)
}

/// Lays sections out as §1 says: header, 56-byte entries, each section 16-aligned; from 2.0
/// on, the header hash over the first 32 bytes and the directory.
fn assemble(major: u16, minor: u16, sections: &[Section]) -> Vec<u8> {
    let align = |x: usize| x.div_ceil(16) * 16;
    let head = header_size(major);
    let mut offsets = Vec::new();
    let mut at = align(head + 56 * sections.len());
    for s in sections {
        offsets.push(at);
        at = align(at + s.bytes.len());
    }
    let total = offsets
        .last()
        .map_or(at, |&o| o + sections.last().unwrap().bytes.len());
    let mut out = vec![0u8; total];
    out[..8].copy_from_slice(b"IRKMOD\0\x1a");
    out[8..10].copy_from_slice(&major.to_le_bytes());
    out[10..12].copy_from_slice(&minor.to_le_bytes());
    out[16..20].copy_from_slice(&(sections.len() as u32).to_le_bytes());
    out[20..24].copy_from_slice(&56u32.to_le_bytes());
    out[24..32].copy_from_slice(&(total as u64).to_le_bytes());
    for (i, (s, &off)) in sections.iter().zip(&offsets).enumerate() {
        let e = head + 56 * i;
        out[e..e + 4].copy_from_slice(&s.kind.to_le_bytes());
        out[e + 4..e + 8].copy_from_slice(&s.flags.to_le_bytes());
        out[e + 8..e + 16].copy_from_slice(&(off as u64).to_le_bytes());
        out[e + 16..e + 24].copy_from_slice(&(s.bytes.len() as u64).to_le_bytes());
        out[e + 24..e + 56].copy_from_slice(blake3::hash(&s.bytes).as_bytes());
        out[off..off + s.bytes.len()].copy_from_slice(&s.bytes);
    }
    if major >= 2 {
        let mut h = blake3::Hasher::new();
        h.update(&out[..32]);
        h.update(&out[head..head + 56 * sections.len()]);
        let hash = *h.finalize().as_bytes();
        out[32..64].copy_from_slice(&hash);
    }
    out
}

const FUTURE_MODULE: &str = r#"#[#600("from a later version")]
@f: fn(i32) -> i32 = func {
^entry(%x: i32):
  %y: i32 = #4660 7 %x, %x
  ret %y
}
"#;

#[test]
fn a_newer_minor_with_unknown_opcode_and_section_loads_prints_and_reserializes() {
    let module = irkit_text::parse(FUTURE_MODULE, "future.ir").unwrap();
    let bytes = irkit_format::write(&module).unwrap();
    // The independent container writer reproduces the real writer exactly.
    let (major, minor, mut sections) = split(&bytes);
    assert_eq!(assemble(major, minor, &sections), bytes);

    // A file "from version 1.7": same content plus an optional section of an unknown kind.
    let future_minor = FORMAT_MINOR + 7;
    let last = sections.len() - 1; // `definitions` stays last
    sections.insert(
        last,
        Section {
            kind: 0x7777,
            flags: 1,
            bytes: b"an index of a later version".to_vec(),
        },
    );
    let future = assemble(FORMAT_MAJOR, future_minor, &sections);

    let view =
        ModuleView::from_bytes_named(&future, "future.irm").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(view.version(), (FORMAT_MAJOR, future_minor));
    let unknown: Vec<_> = view.sections().into_iter().filter(|s| !s.known).collect();
    assert_eq!(unknown.len(), 1);
    assert!(unknown[0].optional);
    view.validate_all().unwrap_or_else(|e| panic!("{e}"));

    // Loads: the unknown opcode and the unknown decoration are kept, opaque.
    let loaded = view.materialize().unwrap_or_else(|e| panic!("{e}"));
    irkit_core::equiv::modules_equal(&module, &loaded).unwrap();
    // Prints: exactly as the source, opaque opcodes by number.
    assert_eq!(irkit_text::print(&loaded), FUTURE_MODULE);
    // Re-serializes unchanged: this writer writes its own version, and drops the section it
    // cannot vouch for (spec/versioning.md), so the bytes are those of the original module.
    assert_eq!(irkit_format::write(&loaded).unwrap(), bytes);
    // And the verifier, not the reader, is where an unknown opcode is refused.
    let errors = irkit_core::verify::verify(&loaded).unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| e.message.contains("unknown opcode #4660"))
    );
}

#[test]
fn a_newer_major_is_refused_naming_the_file_and_both_versions() {
    let module = irkit_text::parse(FUTURE_MODULE, "future.ir").unwrap();
    let (_, minor, sections) = split(&irkit_format::write(&module).unwrap());
    let next = assemble(FORMAT_MAJOR + 1, minor, &sections);
    let err = ModuleView::from_bytes_named(&next, "next.irm")
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("next.irm"), "{err}");
    assert!(
        err.contains(&format!("{}.{minor}", FORMAT_MAJOR + 1)),
        "{err}"
    );
    assert!(err.contains(&format!("{FORMAT_MAJOR}.")), "{err}");
}
