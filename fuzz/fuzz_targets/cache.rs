//! Code cache entries written by someone who can compute BLAKE3 (spec/backends.md, "Never
//! trusted, never fatal"). Each input makes the payload of one entry of a small program's
//! cache (its `main`), sealed with that entry's header and the entry's right checksum:
//! after a first byte that is even, the rest of the input is the payload; after an odd one,
//! the rest is a list of edits of the real entry's fields (relocations, names, alignment),
//! so that a well-formed entry with a lying field is one mutation away. The sealed entry goes
//! in `main`'s entry file, or (when the first byte's second bit is set) in the cache's pack,
//! `main`'s file then removed. When the third bit is set, the payload is padded with zeros
//! past 1 MiB before it is sealed, so that the file is hashed in pieces before it is read
//! (spec/backends.md, "Reading is bounded"). A build taking the cache must succeed without a panic. When
//! it refuses the entry (compiling the function again), its object is the one a build
//! without a cache writes; an entry it takes is code it trusts (the cache is as trusted as
//! the output), so that object may differ.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use irkit_cranelift::{CodegenOptions, compile_object};
use libfuzzer_sys::fuzz_target;

/// The entry's header: magic, version, key, payload length, checksum (of the fields before
/// it and the payload).
const HEADER: usize = 84;

/// A payload this long makes a file read only after its header and checksum were checked.
const LARGE: usize = (1 << 20) + 1;

/// A program whose functions have calls, trap lines and a global.
const PROGRAM: &str = "\
#[extern(\"putchar\")]
@putchar: fn(i32) -> i32 = func

@g: i32 = global_var i32 7

@div: fn(i32, i32) -> i32 = func {
^entry(%a: i32, %b: i32):
  %q: i32 = sdiv %a, %b
  %r: i32 = srem %q, %b
  ret %r
}

#[export(\"main\")]
@main: fn() -> i32 = func {
^entry:
  %o: i32 = call @putchar(i32 111)
  %v: i32 = load @g
  %r: i32 = call @div(%v, i32 2)
  ret %r
}
";

struct Setup {
    module: irkit_core::Module,
    dir: tempfile::TempDir,
    /// The entry rewritten by each input: `main`'s (the largest).
    entry: PathBuf,
    /// The cache's pack.
    pack: PathBuf,
    /// Its header (the key and the format version).
    header: Vec<u8>,
    /// Its payload.
    payload: Vec<u8>,
    /// The object a build without a cache writes.
    plain: Vec<u8>,
}

fn options(cache: Option<&Path>) -> CodegenOptions {
    CodegenOptions {
        cache: cache.map(Path::to_path_buf),
        jobs: Some(1),
        ..CodegenOptions::default()
    }
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let module = irkit_text::parse(PROGRAM, "cache.ir").expect("the program parses");
        irkit_core::verify::verify(&module).expect("the program verifies");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (plain, _) = compile_object(&module, &options(None)).expect("compiles");
        compile_object(&module, &options(Some(dir.path()))).expect("compiles into the cache");
        let pack = dir
            .path()
            .join(format!(
                "irkit-code-v{}",
                irkit_cranelift::CODE_CACHE_VERSION
            ))
            .join("pack");
        std::fs::remove_file(&pack).expect("the build wrote a pack");
        let mut files = Vec::new();
        let mut stack = vec![dir.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("the cache is readable") {
                let p = e.expect("an entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        let entry = files
            .into_iter()
            .max_by_key(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
            .expect("the cache has an entry");
        let bytes = std::fs::read(&entry).expect("the entry is readable");
        Setup {
            module,
            dir,
            header: bytes[..HEADER].to_vec(),
            payload: bytes[HEADER..].to_vec(),
            entry,
            pack,
            plain,
        }
    })
}

/// The real payload with `edits` applied: 6 bytes each, a field selector, an index (of a
/// relocation or a name, modulo their count) and a 4-byte value. The payload's layout is the
/// entry format's (spec/backends.md, "Entry format").
fn edited(payload: &[u8], edits: &[u8]) -> Vec<u8> {
    const RELOC: usize = 18;
    const NAME: usize = 5;
    let mut p = payload.to_vec();
    let u32_at =
        |p: &[u8], at: usize| u32::from_le_bytes(p[at..at + 4].try_into().unwrap()) as usize;
    let code = u32_at(&p, 8);
    let relocs_at = 12 + code + 4;
    let relocs = u32_at(&p, 12 + code);
    let names_at = relocs_at + relocs * RELOC + 4;
    let names = u32_at(&p, names_at - 4);
    for e in edits.chunks_exact(6) {
        let index = usize::from(e[1]);
        let value = u32::from_le_bytes([e[2], e[3], e[4], e[5]]);
        let bytes = value.to_le_bytes();
        let reloc = (relocs > 0).then(|| relocs_at + index % relocs * RELOC);
        let name = (names > 0).then(|| names_at + index % names * NAME);
        match (e[0] % 8, reloc, name) {
            (0, Some(r), _) => p[r..r + 4].copy_from_slice(&bytes),
            (1, Some(r), _) => p[r + 4] = bytes[0] % 32,
            (2, Some(r), _) => p[r + 5] = bytes[0] % 8,
            (3, Some(r), _) => p[r + 6..r + 10].copy_from_slice(&bytes),
            (4, Some(r), _) => {
                p[r + 10..r + 18].copy_from_slice(&i64::from(value as i32).to_le_bytes())
            }
            (5, _, Some(n)) => p[n] = bytes[0] % 8,
            (6, _, Some(n)) => p[n + 1..n + 5].copy_from_slice(&bytes),
            (7, _, _) => p[..8].copy_from_slice(&(1u64 << (value % 24)).to_le_bytes()),
            _ => {}
        }
    }
    p
}

fuzz_target!(|data: &[u8]| {
    let s = setup();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut payload = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        edited(&s.payload, rest)
    };
    if mode & 4 != 0 {
        payload.resize(payload.len().max(LARGE), 0);
    }
    let mut bytes = s.header.clone();
    bytes[44..52].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    // The checksum covers the header's fields before it, then the payload.
    let mut sum = blake3::Hasher::new();
    sum.update(&bytes[..52]);
    sum.update(&payload);
    bytes[52..84].copy_from_slice(sum.finalize().as_bytes());
    bytes.extend_from_slice(&payload);
    // A build that compiled `main` may have written a pack of the real entries.
    let _ = std::fs::remove_file(&s.pack);
    if mode & 2 == 0 {
        std::fs::write(&s.entry, &bytes).expect("the entry is writable");
    } else {
        // The pack's header (spec/backends.md, "The pack"), then the one entry; `main`'s
        // file gone, so that a refused pack entry is counted and its object checked. The
        // pack's hash covers the entry's bytes: its own checksum is not checked there.
        let mut hashed = s.header[8..12].to_vec();
        hashed.extend_from_slice(&1u32.to_le_bytes());
        hashed.extend_from_slice(&bytes);
        let mut pack = b"IRKPACK\0".to_vec();
        pack.extend_from_slice(blake3::hash(&hashed).as_bytes());
        pack.extend_from_slice(&hashed);
        std::fs::write(&s.pack, &pack).expect("the pack is writable");
        let _ = std::fs::remove_file(&s.entry);
    }
    let (object, stats) = compile_object(&s.module, &options(Some(s.dir.path())))
        .unwrap_or_else(|e| panic!("a cache entry stopped the build: {e}"));
    if stats.rejected > 0 {
        assert!(object == s.plain, "a refused entry changed the object");
    }
});
