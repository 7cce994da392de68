//! The code cache (spec/backends.md, "The code cache"): a build with a cache writes the same
//! object as one without; a warm build compiles nothing; an edit recompiles only the edited
//! function; damaged, foreign and hostile entries are rebuilt, never trusted; two builds may
//! share the directory at once. The pack (one file holding a build's entries) serves a warm
//! build alone, is never trusted more than the entry files, and is left as it is by a
//! one-function edit.

use std::path::{Path, PathBuf};

use irkit_cranelift::{CodegenLevel, CodegenOptions, CodegenStats, compile_object};

/// `n` small functions calling each other in a chain, and `main`; function `edited` adds
/// `k` instead of its index.
fn program(n: usize, edited: usize, k: i64, prefix: &str) -> String {
    let mut s = String::from(prefix);
    for i in 0..n {
        let add = if i == edited { k } else { i as i64 };
        let next = if i + 1 < n {
            format!("  %r: i64 = call @f{}(%y)\n  ret %r\n", i + 1)
        } else {
            "  ret %y\n".into()
        };
        s += &format!(
            "@f{i}: fn(i64) -> i64 = func {{\n^entry(%x: i64):\n  %y: i64 = iadd %x, i64 {add}\n{next}}}\n\n"
        );
    }
    s += "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i64 = call @f0(i64 1)\n  %t: i32 = trunc %r\n  ret %t\n}\n";
    s
}

fn module(text: &str) -> irkit_core::Module {
    let m = irkit_text::parse(text, "t.ir").expect("parses");
    irkit_core::verify::verify(&m).expect("verifies");
    m
}

fn build(m: &irkit_core::Module, cache: Option<&Path>) -> (Vec<u8>, CodegenStats) {
    let opts = CodegenOptions {
        cache: cache.map(Path::to_path_buf),
        jobs: Some(2),
        ..CodegenOptions::default()
    };
    compile_object(m, &opts).expect("compiles")
}

/// The pack of the cache in `dir`.
fn pack(dir: &Path) -> PathBuf {
    dir.join(format!(
        "irkit-code-v{}",
        irkit_cranelift::CODE_CACHE_VERSION
    ))
    .join("pack")
}

/// Removes the pack of the cache in `dir`, so that a build reads the entry files.
fn unpack(dir: &Path) {
    std::fs::remove_file(pack(dir)).expect("the build wrote a pack");
}

/// Every entry file under `dir` (every file but the pack).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let pack = pack(dir);
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p != pack {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_warm_build_compiles_nothing_and_writes_the_same_object() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(&program(100, 0, 0, ""));
    let (plain, s0) = build(&m, None);
    let (cold, s1) = build(&m, Some(dir.path()));
    let (warm, s2) = build(&m, Some(dir.path()));
    assert!(
        cold == plain && warm == plain,
        "the cache changed the object"
    );
    assert_eq!(s0.functions, 101);
    assert_eq!((s1.compiled, s1.cached, s1.stored), (101, 0, 101));
    assert_eq!((s2.compiled, s2.cached, s2.stored), (0, 101, 0));
    assert!(s1.warnings.is_empty() && s2.warnings.is_empty());
    assert_eq!(entries(dir.path()).len(), 101);
}

#[test]
fn an_edit_recompiles_only_the_edited_function() {
    let dir = tempfile::tempdir().unwrap();
    build(&module(&program(100, 50, 50, "")), Some(dir.path()));
    // Function 50 edited, and a new function first, which renumbers every definition (and so
    // renames every local symbol).
    let extra = "@extra: fn() -> i32 = func {\n^entry:\n  ret i32 9\n}\n\n";
    let edited = module(&program(100, 50, 1234, extra));
    let (bytes, s) = build(&edited, Some(dir.path()));
    assert_eq!((s.functions, s.compiled, s.cached), (102, 2, 100));
    assert!(bytes == build(&edited, None).0);
}

/// A pack (spec/backends.md, "The pack") holding `entries`.
fn pack_of(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut hashed = irkit_cranelift::CODE_CACHE_VERSION.to_le_bytes().to_vec();
    hashed.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    entries.iter().for_each(|e| hashed.extend_from_slice(e));
    let mut p = b"IRKPACK\0".to_vec();
    p.extend_from_slice(blake3::hash(&hashed).as_bytes());
    p.extend_from_slice(&hashed);
    p
}

/// Where a test puts the entries it damaged.
#[derive(Clone, Copy, Debug)]
enum Damaged {
    /// In their files (no pack).
    Files,
    /// In the pack (no entry file).
    Pack,
}

/// Builds `m` cold into a new cache, then rewrites each entry with `damage` (given the entry
/// and the next one's bytes; `None` leaves it as it is) where `place` says; returns the
/// cache and how many entries were damaged.
fn damaged_cache(
    m: &irkit_core::Module,
    place: Damaged,
    damage: impl Fn(&[u8], &[u8]) -> Option<Vec<u8>>,
) -> (tempfile::TempDir, usize) {
    let dir = tempfile::tempdir().unwrap();
    build(m, Some(dir.path()));
    unpack(dir.path());
    let files = entries(dir.path());
    let contents: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let mut damaged = 0;
    let mut packed = Vec::new();
    for (i, f) in files.iter().enumerate() {
        // Some damages use another entry's bytes.
        let other = &contents[(i + 1) % contents.len()];
        let bytes = match damage(&contents[i], other) {
            Some(b) => {
                damaged += 1;
                b
            }
            None => contents[i].clone(),
        };
        match place {
            Damaged::Files => std::fs::write(f, bytes).unwrap(),
            Damaged::Pack => {
                std::fs::remove_file(f).unwrap();
                packed.push(bytes);
            }
        }
    }
    if let Damaged::Pack = place {
        std::fs::write(pack(dir.path()), pack_of(&packed)).unwrap();
    }
    (dir, damaged)
}

/// Builds cold, damages every entry with `damage` (in the files, then in a pack), builds
/// again: the same object, every entry rejected and rewritten, and then a clean warm build.
fn survives(damage: impl Fn(&[u8], &[u8]) -> Option<Vec<u8>>) {
    survives_in(&[Damaged::Files, Damaged::Pack], damage);
}

/// [`survives`], with the damaged entries in each of `places`.
fn survives_in(places: &[Damaged], damage: impl Fn(&[u8], &[u8]) -> Option<Vec<u8>>) {
    let m = module(&program(20, 0, 0, ""));
    let (plain, _) = build(&m, None);
    for &place in places {
        let (dir, damaged) = damaged_cache(&m, place, &damage);
        assert_eq!(damaged, 21);
        let (bytes, s) = build(&m, Some(dir.path()));
        assert!(
            bytes == plain,
            "a damaged cache changed the object ({place:?})"
        );
        assert_eq!((s.compiled, s.stored), (21, 21), "{place:?}");
        // In a pack, an entry whose frame is damaged (a length past the end, no header) hides
        // itself and the entries after it: those are not found at all, hence not counted.
        match place {
            Damaged::Files => assert_eq!(s.rejected, 21),
            Damaged::Pack => assert!(s.rejected <= 21),
        }
        let (bytes, s) = build(&m, Some(dir.path()));
        assert!(bytes == plain);
        assert_eq!((s.compiled, s.cached, s.rejected), (0, 21, 0), "{place:?}");
    }
}

#[test]
fn truncated_entries_are_rebuilt() {
    survives(|b, _| Some(b[..b.len() / 2].to_vec()));
}

#[test]
fn entries_with_a_flipped_bit_are_rebuilt() {
    // (A pack's hash covers its entries, whose own checksums are then not checked: a pack
    // sealed over a changed entry is one written on purpose, trusted as the cache is. A bit
    // flipped in a pack is a_damaged_pack_is_ignored_whole.)
    survives_in(&[Damaged::Files], |b, _| {
        let mut b = b.to_vec();
        let at = b.len() - 3;
        b[at] ^= 0x10;
        Some(b)
    });
}

#[test]
fn another_functions_entry_is_not_taken() {
    // Each file holds another key's entry (intact, with its own key): a wrong key. (In a
    // pack an entry names its key itself: there, that is no damage.)
    survives_in(&[Damaged::Files], |_, other| Some(other.to_vec()));
}

#[test]
fn another_functions_entry_with_its_key_field_rewritten_is_not_taken() {
    // The checksum covers the key: rewriting it (32 bytes) makes the entry a damaged one.
    survives_in(&[Damaged::Files], |own, other| {
        let mut b = other.to_vec();
        b[12..44].copy_from_slice(&own[12..44]);
        Some(b)
    });
}

/// An entry of another program (the same function, another constant in it), copied over the
/// entry of this program's function with its key field rewritten, is refused: the function
/// is compiled and the object is the one without a cache.
#[test]
fn an_entry_copied_from_another_program_with_its_key_rewritten_is_not_taken() {
    let this = module(&program(20, 5, 5, ""));
    let that = module(&program(20, 5, 999, ""));
    let (here, there) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    build(&this, Some(here.path()));
    build(&that, Some(there.path()));
    unpack(here.path());
    let name = |p: &PathBuf, dir: &Path| p.strip_prefix(dir).unwrap().to_path_buf();
    let ours: Vec<PathBuf> = entries(here.path())
        .iter()
        .map(|p| name(p, here.path()))
        .collect();
    let theirs: Vec<PathBuf> = entries(there.path())
        .iter()
        .map(|p| name(p, there.path()))
        .filter(|p| !p.ends_with("pack"))
        .collect();
    // Only function 5 differs: one key each.
    let mine: Vec<&PathBuf> = ours.iter().filter(|p| !theirs.contains(p)).collect();
    let other: Vec<&PathBuf> = theirs.iter().filter(|p| !ours.contains(p)).collect();
    assert_eq!((mine.len(), other.len()), (1, 1));
    let own = std::fs::read(here.path().join(mine[0])).unwrap();
    let mut copied = std::fs::read(there.path().join(other[0])).unwrap();
    copied[12..44].copy_from_slice(&own[12..44]);
    std::fs::write(here.path().join(mine[0]), &copied).unwrap();
    let (bytes, s) = build(&this, Some(here.path()));
    assert!(bytes == build(&this, None).0, "the copied entry was taken");
    assert_eq!((s.compiled, s.cached, s.rejected), (1, 20, 1), "{s:?}");
}

#[test]
fn entries_with_bytes_after_their_payload_are_rebuilt() {
    // (In a pack an entry's length delimits it: bytes after it are the next entry's frame,
    // which then does not frame; a_damaged_pack_is_ignored_whole covers that.)
    survives_in(&[Damaged::Files], |b, _| {
        let mut b = b.to_vec();
        b.extend_from_slice(&[0; 7]);
        Some(b)
    });
}

#[test]
fn huge_lengths_are_rejected() {
    survives(|b, _| {
        let mut b = b.to_vec();
        b[44..52].copy_from_slice(&(1u64 << 62).to_le_bytes());
        Some(b)
    });
}

#[test]
fn empty_and_garbage_entries_are_rebuilt() {
    survives(|b, _| {
        let n = b.len();
        Some(if n % 2 == 0 {
            Vec::new()
        } else {
            vec![0xA5; 100]
        })
    });
}

/// Makes a FIFO at `path`: a reader that opened it would block forever.
#[cfg(unix)]
fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo").arg(path).status();
    assert!(st.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn an_entry_that_is_not_a_regular_file_is_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(&program(3, 0, 0, ""));
    let (plain, _) = build(&m, Some(dir.path()));
    unpack(dir.path());
    for f in entries(dir.path()) {
        std::fs::remove_file(&f).unwrap();
        mkfifo(&f);
    }
    let (bytes, s) = build(&m, Some(dir.path()));
    assert!(bytes == plain);
    assert_eq!((s.compiled, s.stored), (4, 4), "{s:?}");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn builds_sharing_the_directory_at_once_agree() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(&program(200, 0, 0, ""));
    let (plain, _) = build(&m, None);
    let outs: Vec<Vec<u8>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| build(&m, Some(dir.path())).0))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(outs.iter().all(|o| *o == plain));
    // No temporary file is left, and every entry is whole.
    let files = entries(dir.path());
    assert_eq!(files.len(), 201, "{files:?}");
    let (_, s) = build(&m, Some(dir.path()));
    assert_eq!((s.cached, s.rejected), (201, 0));
}

#[test]
fn a_cache_that_cannot_be_written_is_a_warning_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let m = module(&program(5, 0, 0, ""));
    let (bytes, s) = build(&m, Some(&file));
    assert!(bytes == build(&m, None).0);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].contains("cannot write"), "{}", s.warnings[0]);
}

/// Code of the fast level is other code: it is keyed apart (the ISA flags are in the key), so
/// neither level ever takes the other's functions, and each level's warm build is its own.
#[test]
fn the_fast_level_never_takes_optimized_code_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(&program(24, 0, 0, ""));
    let at = |level| {
        let opts = CodegenOptions {
            cache: Some(dir.path().to_path_buf()),
            jobs: Some(2),
            level,
            ..CodegenOptions::default()
        };
        compile_object(&m, &opts).expect("compiles")
    };
    let (optimized, _) = at(CodegenLevel::Optimized);
    let (fast, cold) = at(CodegenLevel::Fast);
    assert_eq!(cold.cached, 0, "{cold:?}");
    assert_eq!(cold.compiled, cold.functions);
    assert_ne!(optimized, fast);
    let (again, warm) = at(CodegenLevel::Fast);
    assert_eq!(warm.compiled, 0, "{warm:?}");
    assert_eq!(again, fast);
}

/// A program whose functions trap (their trap lines name them, their blocks and their
/// instructions), call an extern C function and a callee whose signature and frame vary.
fn variant(name: &str, c_name: &str, callee_param: &str, frame: usize, block: &str) -> String {
    format!(
        "#[extern(\"{c_name}\")]\n@c: fn(i32) -> i32 = func\n\n\
         @callee: fn({callee_param}) -> i32 = func {{\n^entry(%x: {callee_param}):\n  \
         %p: ptr = stackalloc [{frame} x i8]\n  ret i32 3\n}}\n\n\
         @{name}: fn(i32) -> i32 = func {{\n^{block}(%x: i32):\n  %q: i32 = sdiv i32 7, %x\n  \
         %r: i32 = call @c(%q)\n  ret %r\n}}\n\n\
         @other: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  %q: i32 = udiv i32 9, %x\n  \
         %s: i32 = call @callee({callee_param} 0)\n  %r: i32 = call @{name}(%q)\n  \
         %t: i32 = iadd %r, %s\n  ret %t\n}}\n\n\
         #[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  %r: i32 = call @other(i32 1)\n  ret %r\n}}\n"
    )
}

/// Variants built one after the other into one cache: each object is the one built without
/// a cache, though most functions come from entries of the other variants (a function
/// renamed, a block renamed, an extern bound to another C name, a callee's signature or
/// frame changed, another call depth limit: each changes only the functions whose code,
/// symbols or trap lines it changes).
#[test]
fn entries_are_taken_only_where_the_code_and_its_trap_lines_are_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let variants = [
        (variant("f", "abs", "i32", 16, "entry"), 10_000, 4),
        (variant("g", "abs", "i32", 16, "entry"), 10_000, 1),
        (variant("g", "labs", "i32", 16, "entry"), 10_000, 1),
        (variant("g", "labs", "i32", 16, "start"), 10_000, 1),
        (variant("g", "labs", "i64", 16, "start"), 10_000, 2),
        (variant("g", "labs", "i64", 64, "start"), 10_000, 2),
        (variant("g", "labs", "i64", 64, "start"), 77, 4),
        (variant("f", "abs", "i32", 16, "entry"), 10_000, 0),
    ];
    for (i, (text, depth, compiled)) in variants.iter().enumerate() {
        let m = module(text);
        let opts = |cache: Option<&Path>| CodegenOptions {
            cache: cache.map(Path::to_path_buf),
            jobs: Some(2),
            max_depth: Some(*depth),
            ..CodegenOptions::default()
        };
        let (plain, _) = compile_object(&m, &opts(None)).expect("compiles");
        let (cached, s) = compile_object(&m, &opts(Some(dir.path()))).expect("compiles");
        assert!(cached == plain, "variant {i}: the cache changed the object");
        assert_eq!(
            (s.compiled, s.rejected),
            (*compiled, 0),
            "variant {i}: {s:?}"
        );
    }
}

/// Variants (a module's text, how many functions it compiles) built one after the other into
/// one cache: each object is the one built without a cache.
fn build_one_after_the_other(variants: &[(String, usize)]) {
    let dir = tempfile::tempdir().unwrap();
    for (i, (t, compiled)) in variants.iter().enumerate() {
        let m = module(t);
        let (plain, _) = build(&m, None);
        let (cached, s) = build(&m, Some(dir.path()));
        assert!(cached == plain, "variant {i}: the cache changed the object");
        assert_eq!(
            (s.compiled, s.rejected),
            (*compiled, 0),
            "variant {i}: {s:?}"
        );
    }
}

/// A caller's entry is taken only while its callee is still what it was when the entry was
/// written: a call of a small leaf is not checked (spec/backends.md, "Call depth and the
/// native stack"), so a callee that starts calling another function, with the same signature
/// and frame, recompiles its callers (without the key's byte, `main` would keep its unchecked
/// call and the object would differ from the one built without a cache). The callee is
/// exported: a function not given the stack limit, whose callers check its calls.
#[test]
fn a_callers_entry_is_not_taken_once_its_callee_is_no_longer_a_small_leaf() {
    let text = |callee_body: &str| {
        format!(
            "@g: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  ret %x\n}}\n\n\
             #[export(\"callee\")]\n@callee: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n{callee_body}}}\n\n\
             #[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  \
             %r: i32 = call @callee(i32 1)\n  ret %r\n}}\n"
        )
    };
    let variants = [
        // `callee` is a small leaf; every function is compiled.
        (text("  %y: i32 = iadd %x, i32 1\n  ret %y\n"), 3),
        // It calls `g`: it and `main` are compiled again, `g` is taken.
        (text("  %y: i32 = call @g(%x)\n  ret %y\n"), 2),
    ];
    build_one_after_the_other(&variants);
}

/// A function's entry is taken only while it is given the stack limit as it was when the
/// entry was written (spec/backends.md, "Call depth and the native stack"): `@g`, the same
/// tree both times, is called by name only, then its address is taken too, so it is compiled
/// again (its key's bytes for both say so; with neither, it would keep its hidden argument
/// and prologue check, and the object would differ from the one built without a cache).
#[test]
fn an_entry_is_not_taken_once_its_function_is_no_longer_given_the_stack_limit() {
    let text = |call: &str| {
        format!(
            "@g: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  %y: i32 = iadd %x, i32 1\n  \
             ret %y\n}}\n\n\
             #[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  {call}\n  \
             ret %r\n}}\n"
        )
    };
    let variants = [
        (text("%r: i32 = call @g(i32 1)"), 2),
        (text("%r: i32 = call_indirect fn(i32) -> i32, @g(i32 1)"), 2),
    ];
    build_one_after_the_other(&variants);
}

/// Rewrites `entry`'s first relocation with `edit` (its 18 bytes: offset, kind, target tag,
/// target value, addend) and seals it again, as someone who can compute BLAKE3 would; `None`
/// for an entry without relocations.
fn resealed_reloc(entry: &[u8], edit: impl Fn(&mut [u8], u32)) -> Option<Vec<u8>> {
    const HEADER: usize = 84;
    let mut b = entry.to_vec();
    let payload = &mut b[HEADER..];
    let n = u32::from_le_bytes(payload[8..12].try_into().ok()?);
    let count_at = 12 + n as usize;
    let count = u32::from_le_bytes(payload.get(count_at..count_at + 4)?.try_into().ok()?);
    if count == 0 {
        return None;
    }
    edit(&mut payload[count_at + 4..count_at + 4 + 18], n);
    seal(&mut b);
    Some(b)
}

/// Seals `entry` again: its checksum (bytes 52 to 83) made the BLAKE3 hash of its first 52
/// bytes, then its payload (spec/backends.md, "Entry format").
fn seal(entry: &mut [u8]) {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&entry[..52]);
    hasher.update(&entry[84..]);
    let sum = *hasher.finalize().as_bytes();
    entry[52..84].copy_from_slice(&sum);
}

/// Builds cold, rewrites the first relocation of every entry that has one with `edit` (see
/// [`resealed_reloc`]), builds again: the same object, each rewritten entry rejected and
/// its function compiled.
fn rebuilds_resealed_relocs(edit: impl Fn(&mut [u8], u32)) {
    let m = module(&program(20, 0, 0, ""));
    let (plain, _) = build(&m, None);
    for place in [Damaged::Files, Damaged::Pack] {
        let (dir, damaged) = damaged_cache(&m, place, |b, _| resealed_reloc(b, &edit));
        assert!(damaged > 10, "{damaged} entries with relocations");
        let (bytes, s) = build(&m, Some(dir.path()));
        assert!(
            bytes == plain,
            "a damaged cache changed the object ({place:?})"
        );
        assert_eq!((s.compiled, s.rejected), (damaged, damaged), "{place:?}");
    }
}

/// Each of irkit's relocation kinds that x86-64 code never has (32-bit Arm's, AArch64's,
/// s390x's, RISC-V's), in turn: `cranelift-object` cannot write them for this target (the
/// 32-bit Arm call was a panic).
#[cfg(target_arch = "x86_64")]
#[test]
fn well_sealed_relocations_of_another_target_are_rebuilt() {
    for kind in [7u8, 8, 9, 11, 15] {
        rebuilds_resealed_relocs(|r, _| r[4] = kind);
    }
}

/// An 8-byte relocation (`Abs8`, kind 1) 4 bytes before the end of the code: the entry
/// format's own bound holds, the relocation's width does not.
#[test]
fn well_sealed_relocations_past_the_code_are_rebuilt() {
    rebuilds_resealed_relocs(|r, n| {
        r[..4].copy_from_slice(&(n - 4).to_le_bytes());
        r[4] = 1;
    });
}

/// The pack alone serves a warm build: every entry file removed, nothing is compiled.
#[test]
fn a_warm_build_reads_the_pack_alone() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(&program(60, 0, 0, ""));
    let (plain, _) = build(&m, None);
    build(&m, Some(dir.path()));
    for f in entries(dir.path()) {
        std::fs::remove_file(f).unwrap();
    }
    let (bytes, s) = build(&m, Some(dir.path()));
    assert!(bytes == plain);
    assert_eq!((s.compiled, s.cached, s.rejected, s.stored), (0, 61, 0, 0));
}

/// A one-function edit of a large enough program reads the new entry from its file and
/// leaves the pack as it is; many edits rewrite it.
#[test]
fn a_pack_is_rewritten_only_when_many_functions_changed() {
    let dir = tempfile::tempdir().unwrap();
    build(&module(&program(100, 0, 0, "")), Some(dir.path()));
    let before = std::fs::read(pack(dir.path())).unwrap();
    let edited = module(&program(100, 50, 777, ""));
    let (bytes, s) = build(&edited, Some(dir.path()));
    assert_eq!((s.compiled, s.cached), (1, 100));
    assert!(bytes == build(&edited, None).0);
    assert!(
        std::fs::read(pack(dir.path())).unwrap() == before,
        "the pack was rewritten"
    );
    let (_, s) = build(&edited, Some(dir.path()));
    assert_eq!((s.compiled, s.cached), (0, 101));
    // Another program: most of its functions are not in the pack, which is rewritten.
    let other = module(
        &program(100, 0, 0, "@extra: i32 = global_var i32 1\n\n")
            .replace("iadd %x, i64", "isub %x, i64"),
    );
    build(&other, Some(dir.path()));
    let after = std::fs::read(pack(dir.path())).unwrap();
    assert!(after != before, "the pack was kept");
    let (_, s) = build(&other, Some(dir.path()));
    assert_eq!(s.compiled, 0);
}

/// A pack damaged in any byte (its header, its hash, its version or count, an entry), cut
/// short or replaced is ignored whole: with the entry files gone, every function is compiled,
/// nothing is taken or refused, and the object is the one without a cache.
#[test]
fn a_damaged_pack_is_ignored_whole() {
    let m = module(&program(20, 0, 0, ""));
    let (plain, _) = build(&m, None);
    type Damage = dyn Fn(&mut Vec<u8>);
    let damages: [&Damage; 9] = [
        &|p| p.truncate(p.len() / 3),
        &|p| p.truncate(p.len() - 1),
        &|p| *p = p[7..].to_vec(),
        &|p| p[20] ^= 1,
        &|p| p[40] ^= 1,
        &|p| p[44] ^= 1,
        &|p| p.iter_mut().skip(48).step_by(97).for_each(|b| *b ^= 0x40),
        &|p| *p = vec![0xA5; p.len()],
        &|p| p.clear(),
    ];
    for (i, damage) in damages.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        build(&m, Some(dir.path()));
        for f in entries(dir.path()) {
            std::fs::remove_file(f).unwrap();
        }
        let mut p = std::fs::read(pack(dir.path())).unwrap();
        damage(&mut p);
        std::fs::write(pack(dir.path()), p).unwrap();
        let (bytes, s) = build(&m, Some(dir.path()));
        assert!(bytes == plain, "damage {i} changed the object");
        assert_eq!((s.compiled, s.cached, s.rejected), (21, 0, 0), "damage {i}");
        // The pack was rewritten: the next build takes everything from it.
        let (_, s) = build(&m, Some(dir.path()));
        assert_eq!((s.compiled, s.cached), (0, 21), "damage {i}");
    }
}

#[cfg(unix)]
#[test]
fn a_pack_that_is_not_a_regular_file_is_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let m = module(&program(3, 0, 0, ""));
    let (plain, _) = build(&m, Some(dir.path()));
    unpack(dir.path());
    mkfifo(&pack(dir.path()));
    let (bytes, s) = build(&m, Some(dir.path()));
    assert!(bytes == plain);
    assert_eq!((s.compiled, s.cached), (0, 4), "{s:?}");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}
