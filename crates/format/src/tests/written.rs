//! Tests of written files: the symbol index and its fallback, unknown sections, record sizes,
//! the pinned header, archive error messages, streaming, and refusals on any number of threads.

use super::*;

/// The sections of a written file, as `assemble` takes them.
fn sections_of(bytes: &[u8]) -> Vec<(SectionKind, u32, Vec<u8>)> {
    ModuleView::from_bytes(bytes)
        .unwrap()
        .sections()
        .into_iter()
        .map(|s| {
            (
                s.kind,
                if s.optional { SECTION_OPTIONAL } else { 0 },
                bytes[s.offset as usize..(s.offset + s.size) as usize].to_vec(),
            )
        })
        .collect()
}

fn exporting(n: usize) -> irkit_core::Module {
    let mut m = irkit_core::Module::new();
    let mut b = irkit_core::Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    for k in 0..n {
        let f = b.func(&format!("f{k}"), sig).unwrap();
        b.export(f, &format!("f{k}")).unwrap();
        if k % 3 == 0 {
            b.import(f, &format!("f{k}")).unwrap();
        }
        let (entry, p) = b.block(f, &[i32t]).unwrap();
        b.position_at_end(entry);
        b.ret(Some(p[0])).unwrap();
    }
    m
}

/// A module of one-block functions `fn(i32) -> i32`, each exported under its own name.
fn exports_named(names: &[&str]) -> irkit_core::Module {
    let mut m = irkit_core::Module::new();
    let mut b = irkit_core::Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    for &name in names {
        let f = b.func(name, sig).unwrap();
        b.export(f, name).unwrap();
        let (entry, p) = b.block(f, &[i32t]).unwrap();
        b.position_at_end(entry);
        b.ret(Some(p[0])).unwrap();
    }
    m
}

/// Where the section of `kind` lies in the file `bytes`.
fn section_range(bytes: &[u8], kind: SectionKind) -> std::ops::Range<usize> {
    let view = ModuleView::from_bytes(bytes).unwrap();
    let s = view
        .sections()
        .into_iter()
        .find(|s| s.kind == kind)
        .unwrap();
    s.offset as usize..(s.offset + s.size) as usize
}

#[test]
fn a_file_without_symbol_index_falls_back_to_the_symbol_table() {
    // A 1.x file may lack the index (it was introduced late in 1.0): take the 1.0 golden
    // sample, drop its index.
    let bytes = include_bytes!("../../tests/golden/v1.0-sample.irm");
    let with = ModuleView::from_bytes(bytes).unwrap();
    assert!(with.has_symbol_index());
    let sections: Vec<_> = sections_of(bytes)
        .into_iter()
        .filter(|s| s.0 != SectionKind::SYMBOL_INDEX)
        .collect();
    let old = assemble_version(sections.clone(), 1, 0);
    let view = ModuleView::from_bytes(&old).unwrap();
    assert!(!view.has_symbol_index());
    view.validate_all().unwrap();
    assert_eq!(view.content_hash(), with.content_hash());
    let all = with.symbols();
    assert!(!all.is_empty());
    for s in &all {
        assert_eq!(
            view.find_symbols(s.name),
            with.find_symbols(s.name),
            "{}",
            s.name
        );
    }
    assert!(view.find_symbols("nope").is_empty() && with.find_symbols("nope").is_empty());
    assert_eq!(view.symbols(), all);
    // Re-writing an old file gives a current file, with the index.
    let again = ModuleView::from_bytes(&write(&view.materialize().unwrap()).unwrap()).unwrap();
    assert!(again.has_symbol_index());
    assert_eq!(again.version(), (crate::FORMAT_MAJOR, crate::FORMAT_MINOR));
    assert_eq!(again.symbols().len(), all.len());
    // In 2.x the index is required.
    let e = ModuleView::from_bytes(&assemble_version(sections.clone(), 2, 1))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("required section symbol-index is missing"),
        "{e}"
    );
    // 3.x and later have the index only: a symbols section is refused at open.
    let e = ModuleView::from_bytes(&assemble(sections)).err().unwrap();
    assert!(
        e.to_string()
            .contains("entry 1 (symbols): a 6.x file has no symbols section"),
        "{e}"
    );
}

#[test]
fn a_corrupt_symbol_table_fails_the_first_lookup() {
    // A 2.x file: 3.x has no symbol table.
    let bytes = crate::write::write_version(&exporting(10), 2).unwrap();
    let mut sections = sections_of(&bytes);
    // A symbol table that is not even an archive (its hash fixed up by `assemble`): the
    // index repeats it, and the first lookup compares both, so no reader acts on either.
    for s in &mut sections {
        if s.0 == SectionKind::SYMBOLS {
            s.2 = vec![0xAB; s.2.len()];
        }
    }
    let view = ModuleView::from_bytes(&assemble_version(sections, 2, 1)).unwrap();
    let e = view.try_find_export("f7").unwrap_err();
    assert!(e.to_string().contains("section symbols"), "{e}");
    assert!(view.try_symbols().is_err());
    assert!(view.validate_all().is_err());
}

#[test]
fn a_symbol_index_disagreeing_with_the_table_is_caught() {
    let bytes = write(&exporting(10)).unwrap();
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut sections = sections_of(&bytes);
        for s in &mut sections {
            if s.0 == SectionKind::SYMBOL_INDEX {
                f(&mut s.2);
            }
        }
        ModuleView::from_bytes(&assemble(sections)).unwrap()
    };
    let rec = |k: usize| SYMIX_HEADER + k * SYMIX_RECORD;
    // A definition out of range: refused at lookup, naming the section.
    let view = edit(&|b| b[rec(0) + 8..rec(0) + 12].copy_from_slice(&999u32.to_le_bytes()));
    let e = view.try_find_symbols("f0").unwrap_err();
    assert_eq!(
        e.to_string(),
        "<memory>: section symbol-index: definition index 999 out of range (10 entries)"
    );
    assert!(view.validate_all().is_err());
    // A name outside the blob.
    let view = edit(&|b| b[rec(3)..rec(3) + 4].copy_from_slice(&u32::MAX.to_le_bytes()));
    assert!(view.try_find_symbols("f3").is_err());
    assert!(view.find_symbols("f3").is_empty());
    // A plausible but wrong definition: lookups believe it, validate_all does not.
    let view = edit(&|b| b[rec(1) + 8..rec(1) + 12].copy_from_slice(&2u32.to_le_bytes()));
    let e = view.validate_all().unwrap_err();
    assert!(
        e.to_string()
            .contains("section symbol-index: definition 0 declares export(\"f0\"), import"),
        "{e}"
    );
    // Absurd header values.
    for (at, v) in [(0, u32::MAX), (4, 0), (4, u32::MAX), (4, 53), (0, 11)] {
        let view = edit(&|b| b[at..at + 4].copy_from_slice(&v.to_le_bytes()));
        let _ = view.try_find_symbols("f5");
        assert!(view.validate_all().is_err(), "{at} {v}");
    }
    let view = edit(&|b| b.truncate(7));
    assert!(view.try_find_symbols("f5").is_err());
}

#[test]
fn unknown_optional_sections_are_skipped_required_ones_refused() {
    let m = irkit_core::Module::new();
    let good = write(&m).unwrap();
    let view = ModuleView::from_bytes(&good).unwrap();
    let mut sections: Vec<(SectionKind, u32, Vec<u8>)> = view
        .sections()
        .into_iter()
        .map(|s| {
            let e = &good[s.offset as usize..(s.offset + s.size) as usize];
            (
                s.kind,
                if s.optional { SECTION_OPTIONAL } else { 0 },
                e.to_vec(),
            )
        })
        .collect();
    sections.push((SectionKind(99), SECTION_OPTIONAL, b"future stuff".to_vec()));
    let with_optional = assemble(sections.clone());
    let view = ModuleView::from_bytes(&with_optional).unwrap();
    view.validate_all().unwrap();
    let s = view.sections();
    assert!(s.iter().any(|s| s.name == "kind#99" && !s.known));
    // Re-serializing drops what this version does not understand.
    assert_eq!(write(&view.materialize().unwrap()).unwrap(), good);
    sections.last_mut().unwrap().1 = 0;
    let e = ModuleView::from_bytes(&assemble(sections)).err().unwrap();
    assert!(e.to_string().contains("unknown section kind 99"), "{e}");
}

#[test]
fn archived_record_sizes_match_the_spec() {
    use std::mem::{align_of, size_of};
    assert_eq!(
        (size_of::<ArchivedInstRec>(), align_of::<ArchivedInstRec>()),
        (28, 4)
    );
    assert_eq!(
        (size_of::<ArchivedPoolRec>(), align_of::<ArchivedPoolRec>()),
        (20, 4)
    );
    assert_eq!(
        (
            size_of::<ArchivedSymbolRec>(),
            align_of::<ArchivedSymbolRec>()
        ),
        (48, 4)
    );
    assert_eq!(
        (
            size_of::<ArchivedDefEntry>(),
            align_of::<ArchivedDefEntry>()
        ),
        (88, 8)
    );
    assert_eq!(
        (
            size_of::<ArchivedDebugRec>(),
            align_of::<ArchivedDebugRec>()
        ),
        (28, 4)
    );
    assert_eq!(size_of::<ArchivedStringTable>(), 16);
    assert_eq!(size_of::<ArchivedBody>(), 24);
    assert_eq!(size_of::<ArchivedPoolTable>(), 24);
    assert_eq!(size_of::<ArchivedDebugTable>(), 24);
    assert_eq!(size_of::<ArchivedDefIndex>(), 8);
    assert_eq!(size_of::<ArchivedSymbolTable>(), 8);
}

/// The first bytes of a known module, pinned: any change to the writer's output is a format
/// change and must be deliberate (golden files of released versions live in tests/golden).
#[test]
fn header_of_the_empty_module_is_stable() {
    let b = write(&irkit_core::Module::new()).unwrap();
    assert_eq!(&b[..8], b"IRKMOD\0\x1a");
    assert_eq!(&b[8..12], &[6, 0, 5, 0]);
    assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 6);
    assert_eq!(
        u64::from_le_bytes(b[24..32].try_into().unwrap()),
        b.len() as u64
    );
}

/// rkyv names memory addresses in its validation errors; messages must not (they differed from
/// run to run): an archive damaged by a hostile writer, hashes resealed, gives the same message
/// from two buffers at different addresses, with offsets instead of addresses.
#[test]
fn archive_errors_name_offsets_not_addresses() {
    use irkit_core::{Module, Opcode, Payload};
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let fty = m.ty_fn(i32t, &[i32t]).unwrap();
    let f = m
        .new_inst(Opcode::FUNC, Some(fty), vec![], Payload::None)
        .unwrap();
    let root = m.root();
    m.append_child(root, f).unwrap();
    m.set_name(f, "g").unwrap();
    let b = m
        .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
        .unwrap();
    m.append_child(f, b).unwrap();
    let x = m
        .new_inst(Opcode::PARAM, Some(i32t), vec![], Payload::None)
        .unwrap();
    m.append_child(b, x).unwrap();
    let y = m
        .new_inst(Opcode::IADD, Some(i32t), vec![x, x], Payload::None)
        .unwrap();
    m.append_child(b, y).unwrap();
    let r = m
        .new_inst(Opcode::RET, None, vec![y], Payload::None)
        .unwrap();
    m.append_child(b, r).unwrap();
    let good = crate::write(&m).unwrap();
    let mut seen = 0;
    // Damage each byte of the file in turn (resealed), until some give an archive error.
    for k in 64..good.len() {
        let mut bytes = good.clone();
        bytes[k] ^= 0x5a;
        irkit_hostile::reseal(&mut bytes);
        let message = |b: &[u8]| {
            ModuleView::from_bytes(b)
                .and_then(|v| v.validate_all())
                .err()
                .map(|e| e.to_string())
        };
        let Some(one) = message(&bytes) else { continue };
        if !one.contains("archive") && !one.contains("ptr") && !one.contains("pointer") {
            continue;
        }
        // The same bytes at another address.
        let mut shifted = vec![0u8; 64];
        shifted.extend_from_slice(&bytes);
        let two = message(&shifted[64..]).unwrap_or_default();
        assert_eq!(one, two, "byte {k}");
        let long_hex = one
            .split("0x")
            .skip(1)
            .any(|h| h.chars().take_while(char::is_ascii_hexdigit).count() >= 8);
        assert!(!long_hex, "byte {k}: {one}");
        seen += 1;
    }
    assert!(seen > 0, "no damage reached rkyv's validation");
}

/// `write_to_path` streams into a temporary file and renames it: the same bytes as `write`,
/// with more definitions than one chunk of archives (so several chunks, and the definition
/// index written back at its place).
#[test]
fn a_streamed_file_has_the_bytes_of_write() {
    let m = exporting(crate::write::CHUNK * 2 + 7);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.irm");
    crate::write_to_path(&m, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), write(&m).unwrap());
    let view = ModuleView::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    view.validate_all().unwrap();
}

/// A module the writer refuses leaves an existing output untouched and no temporary file.
#[test]
fn a_refused_module_leaves_the_output_as_it_was() {
    let deep = irkit_hostile::deep_tree(irkit_core::MAX_NESTING + 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.irm");
    std::fs::write(&path, b"before").unwrap();
    let e = crate::write_to_path(&deep, &path).unwrap_err();
    assert!(matches!(e, crate::WriteError::TooDeep { .. }), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"before");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// The writer walks and encodes definitions on every core; a module it refuses gets the
/// error of the first definition (in module order) that has one, on any number of threads.
#[test]
fn the_first_refused_definition_is_reported_on_any_number_of_threads() {
    let mut m = exporting(300);
    let funcs: Vec<irkit_core::Inst> = m.top_level().to_vec();
    // Each `ret` of these functions returns a value that was removed: a block parameter of
    // another function's removed entry block.
    let mut broken = Vec::new();
    for (user, victim) in [(250usize, 251usize), (40, 41), (120, 121)] {
        let ret = m
            .walk_from(funcs[user])
            .into_iter()
            .find(|&i| m.opcode(i) == irkit_core::Opcode::RET)
            .unwrap();
        let block = m.children(funcs[victim])[0];
        let param = m.block_params(block)[0];
        m.set_operand(ret, 0, param).unwrap();
        m.remove(block).unwrap();
        broken.push(ret);
    }
    let errors: Vec<String> = [1, 2, 3]
        .into_iter()
        .map(|threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| write(&m)).unwrap_err().to_string()
        })
        .collect();
    // Definition 40's is the first.
    assert!(errors[0].contains(&broken[1].to_string()), "{}", errors[0]);
    assert!(errors.iter().all(|e| *e == errors[0]), "{errors:?}");
}

/// The symbol index's records are checked one by one on the first lookup: each name within
/// the blob, laid out once, UTF-8 (also when the blob as a whole is UTF-8 but a name starts
/// or ends inside a character), and the records sorted. Every damaged file is resealed, as
/// someone who can compute blake3 would.
#[test]
fn damaged_symbol_index_records_are_refused_at_the_first_lookup() {
    let bytes = write(&exports_named(&["a\u{e9}", "b", "c"])).unwrap();
    let at = section_range(&bytes, SectionKind::SYMBOL_INDEX).start;
    let rec = |k: usize| at + SYMIX_HEADER + k * SYMIX_RECORD;
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let blob = rec(3);
    assert_eq!(&bytes[blob..blob + 5], "a\u{e9}bc".as_bytes());
    let refused = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = bytes.clone();
        edit(&mut b);
        irkit_hostile::reseal(&mut b);
        let view = ModuleView::from_bytes(&b).unwrap();
        view.try_find_symbols("b").unwrap_err().to_string()
    };
    let put = |b: &mut Vec<u8>, i: usize, v: u32| b[i..i + 4].copy_from_slice(&v.to_le_bytes());
    // A byte that is no UTF-8 anywhere.
    let e = refused(&|b| b[blob + 2] = 0xff);
    assert!(e.contains("record 0: name is not UTF-8"), "{e}");
    // The blob is UTF-8, but `a\xc3` ends inside `é` and `\xa9b` starts there.
    let e = refused(&|b| {
        put(b, rec(0) + 4, 2);
        put(b, rec(1), 2);
        put(b, rec(1) + 4, 2);
    });
    assert!(e.contains("record 0: name is not UTF-8"), "{e}");
    // A name that does not start where the previous one ended.
    let e = refused(&|b| put(b, rec(1), 4));
    assert!(
        e.contains("record 1: name at 4, the name blob continues at 3"),
        "{e}"
    );
    // A name past the blob.
    let e = refused(&|b| put(b, rec(2) + 4, 9));
    assert!(e.contains("record 2: name bytes 4..+9 outside"), "{e}");
    // Records out of order: `c` before `b`.
    let e = refused(&|b| {
        b.swap(blob + 3, blob + 4);
    });
    assert!(e.contains("record 2: records are not sorted"), "{e}");
    // The same name laid out twice.
    let e = refused(&|b| {
        let (o, l) = (u32_at(b, rec(1)), u32_at(b, rec(1) + 4));
        b[blob + 4] = b'b';
        put(b, rec(2), o + l);
    });
    assert!(e.contains("record 2: its name is stored twice"), "{e}");
}

/// A 3.x symbol index lists only names of the strings section. A strings section damaged where
/// a definition's `import`/`export` name lives (resealed, as someone who can compute blake3
/// would) is refused by the first lookup, before any definition is read: a lazy reader would
/// otherwise read the change where it looks and never see what it contradicts (found by the
/// `agree` fuzz target: a shifted string end renamed an unreached import).
#[test]
fn a_symbol_name_missing_from_the_strings_section_is_refused_at_the_first_lookup() {
    let m = exporting(3);
    let mut bytes = write(&m).unwrap();
    let range = section_range(&bytes, SectionKind::STRINGS);
    // Renames the string `name` (its first byte to `to`) and reseals the file.
    let rename = |bytes: &mut Vec<u8>, name: &[u8], to: u8| {
        let at = bytes[range.clone()]
            .windows(name.len())
            .position(|w| w == name)
            .unwrap();
        bytes[range.start + at] = to;
        irkit_hostile::reseal(bytes);
    };
    rename(&mut bytes, b"f1", b'g');
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let e = view.try_find_symbols("f0").unwrap_err();
    assert!(
        e.to_string()
            .contains("its name `f1` is not a string of the strings section"),
        "{e}"
    );
    assert!(view.validate_all().is_err());
    // With two names gone, the first record (in the index's order) is named.
    rename(&mut bytes, b"f2", b'h');
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let e = view.try_find_symbols("f0").unwrap_err().to_string();
    assert!(e.contains("its name `f1` is not a string"), "{e}");
}

/// Names longer than eight bytes that share their first eight are told apart by their bytes:
/// each found in the strings section passes, and one renamed there (the last byte of a name
/// among several with its prefix) is refused by name.
#[test]
fn symbol_names_sharing_a_prefix_are_each_looked_up_in_the_strings_section() {
    let names = [
        "function_a",
        "function_b",
        "function_c",
        "functionXd",
        "fun",
    ];
    let mut bytes = write(&exports_named(&names)).unwrap();
    let view = ModuleView::from_bytes(&bytes).unwrap();
    for name in names {
        assert_eq!(view.try_find_symbols(name).unwrap().len(), 1, "{name}");
    }
    drop(view);
    let range = section_range(&bytes, SectionKind::STRINGS);
    let at = bytes[range.clone()]
        .windows(10)
        .position(|w| w == b"function_b")
        .unwrap();
    bytes[range.start + at + 9] = b'z';
    irkit_hostile::reseal(&mut bytes);
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let e = view.try_find_symbols("fun").unwrap_err().to_string();
    assert!(
        e.contains("its name `function_b` is not a string of the strings section"),
        "{e}"
    );
}

/// The definition index is read in place, entry by entry, each time a definition is asked
/// for: an entry rewritten in the file after the index was validated (same length, so the
/// truncation guard sees nothing) gives an error naming the definition, never a read outside
/// the definitions section or a panic.
#[test]
fn an_index_entry_rewritten_after_validation_is_an_error_not_a_panic() {
    use std::io::{Seek, SeekFrom, Write as _};
    let bytes = write(&exports_named(&["f", "g"])).unwrap();
    let index = section_range(&bytes, SectionKind::DEF_INDEX);
    let entries = crate::placed::DefEntries::new(&bytes[index]).range_in(&bytes);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.irm");
    std::fs::write(&path, &bytes).unwrap();
    let view = ModuleView::open(&path).unwrap();
    view.def(0).unwrap();
    let rewrite = |at: usize, value: &[u8]| {
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(SeekFrom::Start(at as u64)).unwrap();
        f.write_all(value).unwrap();
    };
    for (field, value) in [(0, u64::MAX - 3), (8, u64::MAX), (0, 1 << 40)] {
        let at = entries.start + field;
        rewrite(at, &value.to_le_bytes());
        let e = view.def(0).err().expect("the rewritten entry is refused");
        assert!(e.to_string().contains("definition 0"), "{e}");
        rewrite(at, &bytes[at..at + 8]);
        view.def(0).unwrap();
    }
}

/// Validating definitions ahead, many at a time (`ModuleView::validate_defs`), caches the
/// verdicts `def` gives on its own: good definitions, one whose body no longer has its hash,
/// one with a bad index, in a file whose bodies are of several lengths.
#[test]
fn definitions_validated_many_at_a_time_get_defs_verdicts() {
    let mut bodies: Vec<Body> = (0..40u32)
        .map(|k| func_body(vec![pack_ref(TAG_LOCAL, 1); k as usize % 7]))
        .collect();
    bodies[17] = func_body(vec![pack_ref(TAG_LOCAL, 9999)]);
    let mut bytes = craft(StringTable::default(), sig_pool(), bodies);
    // A byte of definition 30's body changed after the file was sealed.
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let section = view
        .sections()
        .into_iter()
        .find(|s| s.kind == SectionKind::DEFINITIONS)
        .unwrap();
    let at = (section.offset + view.def_meta(30).unwrap().offset) as usize;
    drop(view);
    bytes[at + 8] ^= 0x40;
    let verdicts = |view: &ModuleView| -> Vec<Result<(), String>> {
        (0..41)
            .map(|i| view.def(i).map(drop).map_err(|e| e.to_string()))
            .collect()
    };
    let alone = verdicts(&ModuleView::from_bytes(&bytes).unwrap());
    let ahead = ModuleView::from_bytes(&bytes).unwrap();
    ahead.validate_defs(0..41);
    assert_eq!(verdicts(&ahead), alone);
    assert!(alone[17].is_err() && alone[30].is_err() && alone[40].is_err());
    assert_eq!(alone.iter().filter(|v| v.is_ok()).count(), 38);
}
