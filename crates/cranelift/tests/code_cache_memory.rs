//! A damaged code cache costs a build no more memory than a clean one (spec/backends.md,
//! "Reading is bounded"): entry files and a pack planted in the cache, sparse and far larger
//! than any entry, are refused by their header, their length or their checksum before they are
//! read into memory. The build's heap is counted here (a test binary of its own: the counting
//! allocator is process-wide), and its peak compared with a build into an empty cache, which
//! compiles the same functions.

use std::io::Write;
use std::path::{Path, PathBuf};

use irkit_cranelift::{CodegenOptions, CodegenStats, compile_object};
use irkit_testkit::{Counting, Heap};

#[global_allocator]
static ALLOC: Counting = Counting;

/// `n` functions calling each other in a chain, each with a trap line, and `main`.
fn program(n: usize) -> irkit_core::Module {
    let mut s = String::new();
    for i in 0..n {
        let next = if i + 1 < n {
            format!("  %r: i64 = call @f{}(%q)\n  ret %r\n", i + 1)
        } else {
            "  ret %q\n".into()
        };
        s += &format!(
            "@f{i}: fn(i64) -> i64 = func {{\n^entry(%x: i64):\n  %y: i64 = iadd %x, i64 {i}\n  \
             %q: i64 = sdiv i64 1000, %y\n{next}}}\n\n"
        );
    }
    s += "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i64 = call @f0(i64 1)\n  %t: i32 = trunc %r\n  ret %t\n}\n";
    let m = irkit_text::parse(&s, "t.ir").expect("parses");
    irkit_core::verify::verify(&m).expect("verifies");
    m
}

/// The object of `m`, the build's statistics and the most heap bytes it held at once beyond
/// what was live before.
fn build(m: &irkit_core::Module, cache: Option<&Path>) -> (Vec<u8>, CodegenStats, usize) {
    let opts = CodegenOptions {
        cache: cache.map(Path::to_path_buf),
        jobs: Some(4),
        ..CodegenOptions::default()
    };
    let ((object, stats), heap) = Heap::of(|| compile_object(m, &opts).expect("compiles"));
    (object, stats, heap.peak)
}

/// The cache's versioned directory.
fn root(dir: &Path) -> PathBuf {
    dir.join(format!(
        "irkit-code-v{}",
        irkit_cranelift::CODE_CACHE_VERSION
    ))
}

/// Every entry file of the cache in `dir`, with its key (its path's hexadecimal digits).
fn entries(dir: &Path) -> Vec<(PathBuf, [u8; 32])> {
    let mut out = Vec::new();
    for sub in std::fs::read_dir(root(dir)).unwrap() {
        let sub = sub.unwrap().path();
        if !sub.is_dir() {
            continue;
        }
        for e in std::fs::read_dir(&sub).unwrap() {
            let path = e.unwrap().path();
            let hex = format!(
                "{}{}",
                sub.file_name().unwrap().to_str().unwrap(),
                path.file_name().unwrap().to_str().unwrap()
            );
            let mut key = [0u8; 32];
            for (i, k) in key.iter_mut().enumerate() {
                *k = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
            }
            out.push((path, key));
        }
    }
    out.sort();
    out
}

/// Makes `path` a sparse file of `len` bytes that starts with `head`.
fn plant(path: &Path, head: &[u8], len: u64) {
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(head).unwrap();
    file.set_len(len).unwrap();
}

/// An entry header (spec/backends.md, "Entry format") of `key` with payload length `len`
/// and a checksum that is not the payload's.
fn entry_header(key: &[u8; 32], len: u64) -> Vec<u8> {
    let mut h = b"IRKCODE\0".to_vec();
    h.extend_from_slice(&irkit_cranelift::CODE_CACHE_VERSION.to_le_bytes());
    h.extend_from_slice(key);
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&[0x5a; 32]);
    h
}

const MIB: u64 = 1 << 20;

/// Each entry file, and the pack, replaced by a sparse file of a few hundred MiB (today's
/// limit was 1 GiB and each was read whole, by each of the build's threads at once): zeros;
/// a header of the right key whose length is the rest of the file, beyond the entry bound; a
/// header of another key; a header whose length is within the bound but not the rest of the
/// file; a header whose length is within the bound and the rest of the file, but whose
/// checksum is wrong (hashed, never held); and a pack whose header is right but whose hash is
/// not. The build compiles every function, writes the object a build without a cache writes,
/// and holds at most a little more heap than a build into an empty cache.
#[test]
fn planted_huge_files_cost_a_build_no_memory() {
    let m = program(12);
    let (plain, _, _) = build(&m, None);
    let empty = tempfile::tempdir().unwrap();
    let (cold, stats, clean) = build(&m, Some(empty.path()));
    assert!(cold == plain);
    let dir = tempfile::tempdir().unwrap();
    build(&m, Some(dir.path()));
    let files = entries(dir.path());
    assert_eq!(files.len(), 13);
    let within = 48 * MIB;
    for (i, (path, key)) in files.iter().enumerate() {
        let (head, len) = match i % 5 {
            0 => (Vec::new(), 256 * MIB),
            1 => (entry_header(key, 256 * MIB - 84), 256 * MIB),
            2 => (entry_header(&[7; 32], 256 * MIB - 84), 256 * MIB),
            3 => (entry_header(key, within), 256 * MIB),
            _ => (entry_header(key, within), 84 + within),
        };
        plant(path, &head, len);
    }
    let mut pack = b"IRKPACK\0".to_vec();
    pack.extend_from_slice(&[0x5a; 32]);
    pack.extend_from_slice(&irkit_cranelift::CODE_CACHE_VERSION.to_le_bytes());
    pack.extend_from_slice(&13u32.to_le_bytes());
    plant(&root(dir.path()).join("pack"), &pack, 256 * MIB);
    let (object, damaged, peak) = build(&m, Some(dir.path()));
    assert!(object == plain, "a planted cache changed the object");
    assert_eq!(
        (damaged.compiled, damaged.cached, damaged.rejected),
        (13, 0, 13),
        "{damaged:?}"
    );
    assert_eq!(stats.compiled, 13);
    assert!(
        peak <= clean + clean / 2,
        "a build with planted files held {peak} heap bytes at most, one with an empty cache {clean}"
    );
}
