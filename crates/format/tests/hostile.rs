//! Hostile input: truncations, bit flips, wrong magic, other versions, absurd directory
//! entries. Every case ends in `Ok` or a `ReadError`, never a panic or a hang.

mod common;

use irkit_format::{ModuleView, ReadCause, ReadError, write};

/// Opens, validates everything and materializes.
fn full_read(bytes: &[u8]) -> Result<(), ReadError> {
    let view = ModuleView::from_bytes(bytes)?;
    for i in 0..view.def_count() {
        if let Ok(d) = view.def(i) {
            for inst in d.insts() {
                let _ = (inst.opcode(), inst.ty(), inst.payload());
                let _ = inst.operands().count();
                let _ = inst.subs().count();
            }
        }
    }
    let _ = view.symbols();
    view.validate_all()?;
    view.materialize().map(|_| ())
}

fn sample_bytes() -> Vec<u8> {
    write(&common::sample()).unwrap()
}

fn section_spans(bytes: &[u8]) -> Vec<(String, usize, usize)> {
    ModuleView::from_bytes(bytes)
        .unwrap()
        .sections()
        .into_iter()
        .map(|s| (s.name, s.offset as usize, (s.offset + s.size) as usize))
        .collect()
}

#[test]
fn truncation_at_every_offset() {
    let bytes = sample_bytes();
    let spans = section_spans(&bytes);
    for len in 0..bytes.len() {
        let e = full_read(&bytes[..len]).expect_err("a truncated file must be refused");
        assert!(e.to_string().starts_with("<memory>: "), "{e}");
    }
    // At each section boundary the error says the file is truncated.
    for (_, start, end) in spans {
        for cut in [start, end.saturating_sub(1)] {
            let e = full_read(&bytes[..cut]).unwrap_err();
            assert!(matches!(e.cause, ReadCause::Truncated(_)), "{e}");
        }
    }
}

#[test]
fn bit_flip_at_every_position() {
    let bytes = sample_bytes();
    let spans = section_spans(&bytes);
    for pos in 0..bytes.len() {
        for bit in [0u8, 3, 7] {
            let mut b = bytes.clone();
            b[pos] ^= 1 << bit;
            let r = full_read(&b);
            if let Some((name, _, _)) = spans.iter().find(|(_, s, e)| (*s..*e).contains(&pos)) {
                assert!(
                    ModuleView::from_bytes(&b).is_ok(),
                    "open must not look inside sections (flip at {pos} in {name})"
                );
                let e = r.expect_err("a flipped bit inside a section must be caught");
                assert!(
                    matches!(e.cause, ReadCause::HashMismatch),
                    "flip at {pos} in {name}: {e}"
                );
                assert!(e.to_string().contains("hash mismatch"), "{e}");
            }
        }
    }
}

#[test]
fn trailing_garbage_and_appended_bytes() {
    let mut bytes = sample_bytes();
    bytes.extend_from_slice(&[0; 16]);
    assert!(full_read(&bytes).is_err());
}

#[test]
fn wrong_magic() {
    let mut b = sample_bytes();
    b[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x00");
    let e = full_read(&b).unwrap_err();
    assert!(e.to_string().contains("not an irkit module"), "{e}");
    assert!(full_read(b"").is_err());
    assert!(full_read(b"IRKMOD").is_err());
}

#[test]
fn newer_major_is_refused_naming_both_versions() {
    let dir = std::env::temp_dir().join(format!("irkit-format-major-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("future.irm");
    let mut b = sample_bytes();
    let next = irkit_format::FORMAT_MAJOR + 1;
    b[8..10].copy_from_slice(&next.to_le_bytes());
    b[10..12].copy_from_slice(&3u16.to_le_bytes());
    irkit_format::header::seal(&mut b);
    std::fs::write(&path, &b).unwrap();
    let e = ModuleView::open(&path).err().unwrap();
    let msg = e.to_string();
    assert!(msg.contains("future.irm"), "{msg}");
    assert!(
        msg.contains(&format!("format version {next}.3 is not supported"))
            && msg.contains(&format!("1.x to {}.x", irkit_format::FORMAT_MAJOR))
            && msg.contains(&format!(
                "it writes {}.{}",
                irkit_format::FORMAT_MAJOR,
                irkit_format::FORMAT_MINOR
            )),
        "{msg}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn newer_minor_is_read() {
    let m = common::sample();
    let mut b = write(&m).unwrap();
    b[10..12].copy_from_slice(&9u16.to_le_bytes());
    // Without resealing, the header hash says the header changed.
    assert!(ModuleView::from_bytes(&b).is_err());
    irkit_format::header::seal(&mut b);
    let view = ModuleView::from_bytes(&b).unwrap();
    assert_eq!(view.version(), (irkit_format::FORMAT_MAJOR, 9));
    irkit_core::equiv::modules_equal(&m, &view.materialize().unwrap()).unwrap();
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Every byte of the header and the directory is covered by the header hash: any flip there
/// is refused at open.
#[test]
fn header_and_directory_flips_are_refused_at_open() {
    let bytes = sample_bytes();
    let n = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    for at in 0..irkit_format::header::HEADER_SIZE + n * 56 {
        for bit in 0..8 {
            let mut b = bytes.clone();
            b[at] ^= 1 << bit;
            assert!(
                ModuleView::from_bytes(&b).is_err(),
                "flip of byte {at} bit {bit}"
            );
        }
    }
}

/// Absurd values, with the header hash recomputed (as a hostile writer would): the
/// directory's own checks refuse them.
#[test]
fn absurd_directory_values() {
    let bytes = sample_bytes();
    let full_read = |b: &[u8]| {
        let mut b = b.to_vec();
        irkit_format::header::seal(&mut b);
        full_read(&b)
    };
    // section count
    for v in [u32::MAX, 1025, 100] {
        let mut b = bytes.clone();
        b[16..20].copy_from_slice(&v.to_le_bytes());
        assert!(full_read(&b).is_err());
    }
    // entry size
    for v in [0u32, 55, u32::MAX] {
        let mut b = bytes.clone();
        b[20..24].copy_from_slice(&v.to_le_bytes());
        assert!(full_read(&b).is_err());
    }
    // file length
    let mut b = bytes.clone();
    put_u64(&mut b, 24, u64::MAX);
    assert!(matches!(
        full_read(&b).unwrap_err().cause,
        ReadCause::Truncated(_)
    ));
    // every entry's offset and length
    let n = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    for i in 0..n {
        let at = irkit_format::header::HEADER_SIZE + i * 56;
        for (field, v) in [
            (8, u64::MAX),
            (8, u64::MAX - 15),
            (16, u64::MAX),
            (16, 1 << 40),
            (8, 0),
            (8, 16),
        ] {
            let mut b = bytes.clone();
            put_u64(&mut b, at + field, v);
            assert!(full_read(&b).is_err(), "entry {i} field {field} = {v}");
        }
        // An unknown kind: refused when required; an optional one (debug) is skipped.
        let optional = bytes[at + 4] & 1 == 1;
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&77u32.to_le_bytes());
        assert_eq!(full_read(&b).is_ok(), optional, "entry {i}");
    }
}

#[test]
fn random_multi_byte_corruption_never_panics() {
    // A small deterministic xorshift: many scattered corruptions, hashes not fixed.
    let bytes = sample_bytes();
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..2000 {
        let mut b = bytes.clone();
        for _ in 0..(next() % 8 + 1) {
            let pos = (next() % b.len() as u64) as usize;
            b[pos] = next() as u8;
        }
        let _ = full_read(&b);
    }
}

/// Opening checks the header and the directory only: a corrupt table is reported, naming its
/// section, by the first use that needs it (and always by `validate_all`).
#[test]
fn open_does_not_touch_the_tables() {
    let bytes = write(&common::chain(40, 3)).unwrap();
    let spans = section_spans(&bytes);
    let span = |name: &str| {
        let (_, s, e) = spans.iter().find(|(n, _, _)| n == name).unwrap();
        (*s, *e)
    };
    let flipped = |name: &str| {
        let (s, e) = span(name);
        let mut b = bytes.clone();
        b[(s + e) / 2] ^= 0x10;
        let view = ModuleView::from_bytes(&b).expect("open reads the header and directory only");
        let e = view.validate_all().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("<memory>: section {name}: hash mismatch")
        );
        b
    };
    let first_use = |b: &[u8], name: &str, f: &dyn Fn(&ModuleView) -> Result<(), ReadError>| {
        let view = ModuleView::from_bytes(b).unwrap();
        let e = f(&view).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("<memory>: section {name}: hash mismatch")
        );
    };
    let b = flipped("strings");
    first_use(&b, "strings", &|v| v.try_string_count().map(|_| ()));
    first_use(&b, "strings", &|v| v.def(0).map(|_| ()));
    // The first lookup checks the index's signatures against the pool, which needs the
    // strings (3.x has no symbols section to compare the index with).
    first_use(&b, "strings", &|v| v.try_find_symbols("f4").map(|_| ()));
    let b = flipped("definition-index");
    first_use(&b, "definition-index", &|v| v.def(0).map(|_| ()));
    let view = ModuleView::from_bytes(&b).unwrap();
    assert_eq!(view.def_info(0), None);
    assert_eq!(view.find_export("f2").unwrap().def, 2);
    let b = flipped("pool");
    first_use(&b, "pool", &|v| v.def(1).map(|_| ()));
    first_use(&b, "pool", &|v| v.try_find_symbols("f8").map(|_| ()));
    // The symbol index is checked in full, hash included, by the first lookup.
    let b = flipped("symbol-index");
    first_use(&b, "symbol-index", &|v| {
        v.try_find_symbols("f6").map(|_| ())
    });
    first_use(&b, "symbol-index", &|v| v.try_symbols().map(|_| ()));
    let _ = flipped("root");
    let _ = flipped("definitions");
}
