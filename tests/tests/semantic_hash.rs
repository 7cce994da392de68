//! The semantic hash of `spec/format.md` §3.2, §3.4 and §3.5 (the one 5.x files store, which
//! this writer writes): a definition's code together with everything it reaches privately,
//! compared by content, never by name or index.

use irkit_format::ModuleView;

/// `f` of the module `text`, written and opened, and its definition exported as `name`.
fn with_export<T>(text: &str, name: &str, f: impl FnOnce(&ModuleView, u32) -> T) -> T {
    let m = irkit_text::parse(text, "t.ir").unwrap_or_else(|e| panic!("{e}"));
    let bytes = irkit_format::write(&m).expect("encodes");
    let view = ModuleView::from_bytes(&bytes).expect("opens");
    let sym = view
        .try_find_export(name)
        .expect("symbols")
        .unwrap_or_else(|| panic!("no export {name}"));
    f(&view, sym.def)
}

/// The semantic hash of the definition exported as `name` in the module `text`.
fn hash_of(text: &str, name: &str) -> [u8; 32] {
    with_export(text, name, |view, d| view.semantic_hash(d).expect("hashes"))
}

const LOW7: &str = r#"
@lim: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = and %x, i32 MASK
  ret %r
}

#[export("low7"), linkonce]
@low7: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = call @lim(%x)
  ret %r
}
"#;

#[test]
fn a_private_callee_is_compared_by_content() {
    let a = hash_of(&LOW7.replace("MASK", "255"), "low7");
    let b = hash_of(&LOW7.replace("MASK", "127"), "low7");
    assert_ne!(a, b, "different private helpers, same hash");
}

#[test]
fn names_and_order_of_privates_do_not_matter() {
    let a = hash_of(&LOW7.replace("MASK", "127"), "low7");
    let renamed = r#"
#[export("low7"), linkonce]
@low7: fn(i32) -> i32 = func {
^b0(%v: i32):
  %w: i32 = call @helper(%v)
  ret %w
}

@unused: fn() -> i32 = func {
^entry:
  ret i32 9
}

@helper: fn(i32) -> i32 = func {
^start(%y: i32):
  %z: i32 = and %y, i32 127
  ret %z
}
"#;
    assert_eq!(a, hash_of(renamed, "low7"));
}

/// `f` calls private `p0`; the privates call each other in a ring of `n` (each adding its
/// constant), so every private is in one strongly connected component.
fn ring(n: usize, constant: impl Fn(usize) -> i64, order: impl Fn(usize) -> usize) -> String {
    let mut defs: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "@p{i}: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  %z: i1 = icmp eq %x, i32 0\n  \
                 br %z, ^done, ^more\n^done:\n  ret i32 {c}\n^more:\n  %y: i32 = isub %x, i32 1\n  \
                 %r: i32 = call @p{next}(%y)\n  ret %r\n}}\n",
                c = constant(i),
                next = (i + 1) % n
            )
        })
        .collect();
    let mut sorted: Vec<(usize, String)> = defs.drain(..).enumerate().collect();
    sorted.sort_by_key(|(i, _)| order(*i));
    let mut text: String = sorted.into_iter().map(|(_, d)| d + "\n").collect();
    text.push_str(
        "#[export(\"f\")]\n@f: fn(i32) -> i32 = func {\n^entry(%x: i32):\n  %r: i32 = call @p0(%x)\n  ret %r\n}\n",
    );
    text
}

#[test]
fn cycles_are_compared_by_content() {
    let base = hash_of(&ring(5, |i| i as i64, |i| i), "f");
    // The same ring, its definitions in another order: equal.
    assert_eq!(base, hash_of(&ring(5, |i| i as i64, |i| 4 - i), "f"));
    assert_eq!(base, hash_of(&ring(5, |i| i as i64, |i| (i * 3) % 5), "f"));
    // One constant deep in the ring differs: not equal.
    let deep = hash_of(&ring(5, |i| if i == 3 { 30 } else { i as i64 }, |i| i), "f");
    assert_ne!(base, deep);
    // A ring one longer, same pattern: not equal.
    assert_ne!(base, hash_of(&ring(6, |i| i as i64, |i| i), "f"));
}

#[test]
fn entering_a_cycle_elsewhere_is_another_hash() {
    // f calls p0 in both; here the ring's constants are rotated, so f enters at another
    // point of the same cycle: different behavior, different hash.
    let a = hash_of(&ring(4, |i| i as i64, |i| i), "f");
    let b = hash_of(&ring(4, |i| ((i + 1) % 4) as i64, |i| i), "f");
    assert_ne!(a, b);
}

#[test]
fn a_function_pointer_in_a_constant_reaches_its_function() {
    // The table is a pool constant naming private functions; one of them calls back into
    // the function reading the table (a cycle through the pool).
    let table = |k: i64| {
        format!(
            r#"
@inc: fn(i32) -> i32 = func {{
^entry(%x: i32):
  %r: i32 = iadd %x, i32 {k}
  ret %r
}}

@again: fn(i32) -> i32 = func {{
^entry(%x: i32):
  %r: i32 = call @t(%x)
  ret %r
}}

@table: [2 x ptr] = global_const [2 x ptr] [@inc, @again]

@t: fn(i32) -> i32 = func {{
^entry(%x: i32):
  %f: ptr = load @table
  %r: i32 = call_indirect fn(i32) -> i32, %f(%x)
  ret %r
}}

#[export("t")]
@entry: fn(i32) -> i32 = func {{
^entry(%x: i32):
  %r: i32 = call @t(%x)
  ret %r
}}
"#
        )
    };
    assert_ne!(hash_of(&table(1), "t"), hash_of(&table(2), "t"));
    assert_eq!(hash_of(&table(1), "t"), hash_of(&table(1), "t"));
}

#[test]
fn an_exported_callee_is_named_not_compared() {
    // A call to an export is resolved by name at link time: its body is not part of the
    // caller's hash.
    let m = |k: i64| {
        format!(
            "#[export(\"g\")]\n@g: fn() -> i32 = func {{\n^entry:\n  ret i32 {k}\n}}\n\n\
             #[export(\"f\")]\n@f: fn() -> i32 = func {{\n^entry:\n  %r: i32 = call @g()\n  ret %r\n}}\n"
        )
    };
    assert_eq!(hash_of(&m(1), "f"), hash_of(&m(2), "f"));
}

#[test]
fn a_huge_cycle_is_hashed_in_bounded_time() {
    // 3,000 privates in one component: beyond the budget, numbered by index (still sound).
    let text = ring(3000, |i| i as i64, |i| i);
    let a = hash_of(&text, "f");
    assert_eq!(a, hash_of(&text, "f"));
    let b = hash_of(
        &ring(3000, |i| if i == 2999 { 7 } else { i as i64 }, |i| i),
        "f",
    );
    assert_ne!(a, b);
}

/// The semantic and the linking hash (`spec/format.md` §3.3) of the definition exported as
/// `name` in the module `text`, written as a 4.0 file: its stored hash is §3.4's, the one the
/// linking hash is built on for files of every version, so the two differ only where the
/// linking hash keys names differently.
fn both_hashes(text: &str, name: &str) -> ([u8; 32], [u8; 32]) {
    let m = irkit_text::parse(text, "t.ir").unwrap_or_else(|e| panic!("{e}"));
    let bytes = irkit_hostile::write_v4_0(&m).expect("encodes");
    let view = ModuleView::from_bytes(&bytes).expect("opens");
    let d = view
        .try_find_export(name)
        .expect("symbols")
        .unwrap_or_else(|| panic!("no export {name}"))
        .def;
    (
        view.semantic_hash(d).expect("hashes"),
        view.linking_hash(d).expect("hashes"),
    )
}

/// `twice` calling `inc` through an import, directly (`inc` defined and exported here), or
/// privately (`inc` defined here, not exported).
fn twice(callee: &str) -> String {
    let inc = match callee {
        "import" => "#[import(\"inc\")]\n@inc: fn(i32) -> i32 = func\n".to_string(),
        kind => format!(
            "{}@inc: fn(i32) -> i32 = func {{\n^e(%x: i32):\n  %r: i32 = iadd %x, i32 1\n  ret %r\n}}\n",
            if kind == "export" {
                "#[export(\"inc\")]\n"
            } else {
                ""
            }
        ),
    };
    inc + r#"
#[export("twice"), linkonce]
@twice: fn(i32) -> i32 = func {
^entry(%x: i32):
  %a: i32 = call @inc(%x)
  %r: i32 = call @inc(%a)
  ret %r
}
"#
}

#[test]
fn the_linking_hash_keys_imported_and_exported_names_alike() {
    let (imported, imported_l) = both_hashes(&twice("import"), "twice");
    let (exported, exported_l) = both_hashes(&twice("export"), "twice");
    let (private, private_l) = both_hashes(&twice("private"), "twice");
    // Stored: the role is part of the key. Linking: the name alone, as resolution has it.
    assert_ne!(imported, exported);
    assert_eq!(imported_l, exported_l);
    // Without an import or export `inc` stands for itself, compared by content: another
    // definition than whatever exports `inc`, by either hash.
    assert_ne!(private, exported);
    assert_ne!(private_l, exported_l);
    // The linking hash keys one thing differently, nothing else.
    assert_eq!(private, private_l);
    assert_eq!(imported, imported_l);
}

/// §3.4 names each distinct target once and each reference by its target's rank: which
/// reference names which value still counts, and so does how often a value is named.
#[test]
fn which_reference_names_which_value_counts() {
    let f = |a: i64, b: i64, c: i64| {
        format!(
            "#[export(\"f\")]\n@f: fn(i32) -> i32 = func {{\n^e(%x: i32):\n  %a: i32 = iadd %x, i32 {a}\n  %b: i32 = iadd %a, i32 {b}\n  %c: i32 = iadd %b, i32 {c}\n  ret %c\n}}\n"
        )
    };
    let base = hash_of(&f(1, 2, 1), "f");
    // The same distinct constants, named in another order.
    assert_ne!(base, hash_of(&f(2, 1, 1), "f"));
    assert_ne!(base, hash_of(&f(1, 1, 2), "f"));
    // One more distinct constant.
    assert_ne!(base, hash_of(&f(1, 2, 3), "f"));
    // The same text gives the same hash.
    assert_eq!(base, hash_of(&f(1, 2, 1), "f"));
}

/// A 3.0 file stores the §3.2 hash, a 4.0 file the §3.4 one, a 5.x or 6.x file the §3.5 one: each
/// reader recomputes the hash of the file's own version, so every file validates, and their
/// stored hashes differ.
#[test]
fn each_version_stores_its_own_semantic_hash() {
    let text = LOW7.replace("MASK", "127");
    let m = irkit_text::parse(&text, "t.ir").unwrap_or_else(|e| panic!("{e}"));
    let v5 = ModuleView::from_bytes(&irkit_format::write(&m).unwrap()).unwrap();
    let v4 = ModuleView::from_bytes(&irkit_hostile::write_v4_0(&m).unwrap()).unwrap();
    let v3 = ModuleView::from_bytes(&irkit_hostile::write_v3_0(&m).unwrap()).unwrap();
    assert_eq!((v5.version().0, v4.version().0, v3.version().0), (6, 4, 3));
    let d = v5.try_find_export("low7").unwrap().unwrap().def;
    for v in [&v5, &v4, &v3] {
        v.validate_all().unwrap();
        assert_eq!(
            v.def_info(d).unwrap().content_hash,
            v.semantic_hash(d).unwrap()
        );
    }
    let hashes = [&v5, &v4, &v3].map(|v| v.semantic_hash(d).unwrap());
    assert!(hashes[0] != hashes[1] && hashes[1] != hashes[2] && hashes[0] != hashes[2]);
    // The linking hash is one for every version.
    assert_eq!(v5.linking_hash(d).unwrap(), v4.linking_hash(d).unwrap());
    assert_eq!(v4.linking_hash(d).unwrap(), v3.linking_hash(d).unwrap());
}

/// §3.5 takes a definition's label from its body's bytes, whose string payloads hold indices
/// into the file's string table: the label hashes each string's text instead, so a string
/// table laid out otherwise (another definition's names first) leaves the hash as it is, and
/// another text changes it.
#[test]
fn a_string_payload_is_hashed_by_its_text_not_its_index() {
    let f = |name: &str| {
        format!(
            "#[export(\"{name}\")]\n@f: fn(i32) -> i32 = func {{\n^e(%x: i32):\n  %a: i32 = iadd %x, i32 1\n  ret %a\n}}\n"
        )
    };
    let other =
        "#[export(\"aaa\"), export(\"bbb\")]\n@g: fn() -> i32 = func {\n^e:\n  ret i32 3\n}\n";
    let alone = hash_of(&f("f"), "f");
    let after = hash_of(&(other.to_string() + &f("f")), "f");
    assert_eq!(alone, after);
    assert_ne!(alone, hash_of(&f("h"), "h"));
    // The string indices do differ between the two files.
    let index_of_f = |text: &str| {
        let m = irkit_text::parse(text, "t.ir").unwrap_or_else(|e| panic!("{e}"));
        let bytes = irkit_format::write(&m).unwrap();
        let view = ModuleView::from_bytes(&bytes).unwrap();
        (0..view.string_count()).position(|i| view.string(i) == Some("f"))
    };
    assert_ne!(
        index_of_f(&f("f")),
        index_of_f(&(other.to_string() + &f("f")))
    );
}
