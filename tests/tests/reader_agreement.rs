//! One definition of a valid file (spec/format.md §4, spec/linking.md §4): every reader accepts
//! or refuses the same crafted files.
//!
//! Each case in `tests/crafted/` is a module damaged the way a hostile writer would damage it
//! (a record-level edit, then every hash recomputed with `irkit_hostile::reseal`), next
//! to a `.expected` file naming the outcome. For each file:
//!
//! * the whole-module readers (`ir-info --validate`: `validate_all`; `ir-dis` and `ir-fmt`:
//!   `materialize` and the printer; `ir-verify`: `materialize`) all accept it or all refuse it;
//! * the lazy readers (`ir-link`, library and executable link, hence the copy path; `ir-run`:
//!   the interpreter on the executable link) either refuse it, or do exactly what they do on the
//!   undamaged module — unless the whole-module readers accept it, in which case it is simply
//!   another valid module.
//!
//! `IRKIT_BLESS=1` writes the crafted files and their expectations again.

use std::path::{Path, PathBuf};

use irkit_core::MAX_NESTING;
use irkit_format::ModuleView;
use irkit_hostile::{
    DEEP_OPCODE, FieldKind, deep_tree, deep_tree_file, deep_types_file, fields, reseal,
    write_any_depth,
};
use irkit_link::{Input, LinkOptions, link};

/// The undamaged module: an exported recursive function, a private helper called through a
/// function pointer in a constant table, `main`, and debug names.
const BASE: &str = r#"
@helper: fn(i32) -> i32 = func {
^entry(%v: i32):
  %r: i32 = iadd %v, i32 2
  ret %r
}

@table: [1 x ptr] = global_const [1 x ptr] [@helper]

#[export("count")]
@count: fn(i32) -> i32 = func {
^entry(%n: i32):
  %z: i1 = icmp eq %n, i32 0
  br %z, ^done, ^more
^done:
  ret i32 0
^more:
  %m: i32 = isub %n, i32 1
  %r: i32 = call @count(%m)
  %s: i32 = iadd %r, i32 1
  ret %s
}

#[export("main")]
@main: fn() -> i32 = func {
^entry:
  %a: i32 = call @count(i32 5)
  %p: ptr = load @table
  %b: i32 = call_indirect fn(i32) -> i32, %p(%a)
  ret %b
}
"#;

fn crafted_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crafted")
}

fn base_bytes() -> Vec<u8> {
    let m = irkit_text::parse(BASE, "base.ir").unwrap_or_else(|e| panic!("{e}"));
    irkit_format::write(&m).expect("the base module encodes")
}

/// The base module as a 2.1 file (rkyv bodies, every reference a tagged `u32`), whose
/// readers every release keeps.
fn base_v2_bytes() -> Vec<u8> {
    let m = irkit_text::parse(BASE, "base.ir").unwrap_or_else(|e| panic!("{e}"));
    irkit_hostile::write_v2_1(&m).expect("the base module encodes")
}

/// The byte range of the section named `name`.
fn section(bytes: &[u8], name: &str) -> std::ops::Range<usize> {
    let s = ModuleView::from_bytes(bytes)
        .expect("the base opens")
        .sections()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no section {name}"));
    s.offset as usize..(s.offset + s.size) as usize
}

fn read(bytes: &[u8], at: usize, len: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..len].copy_from_slice(&bytes[at..at + len]);
    u64::from_le_bytes(v)
}

fn write(bytes: &mut [u8], at: usize, len: usize, value: u64) {
    bytes[at..at + len].copy_from_slice(&value.to_le_bytes()[..len]);
}

/// Sets the `nth` field of kind `what` inside section `name` whose value satisfies `pick` to
/// `value`, then reseals.
fn edit(
    base: &[u8],
    name: &str,
    what: FieldKind,
    pick: impl Fn(u64) -> bool,
    nth: usize,
    value: impl Fn(u64) -> u64,
) -> Vec<u8> {
    let mut b = base.to_vec();
    let range = section(base, name);
    let f = fields(base)
        .into_iter()
        .filter(|f| f.what == what && range.contains(&f.at) && pick(read(base, f.at, f.len)))
        .nth(nth)
        .unwrap_or_else(|| panic!("no field {what:?} #{nth} in {name}"));
    let old = read(base, f.at, f.len);
    write(&mut b, f.at, f.len, value(old));
    reseal(&mut b);
    b
}

const TAG_DEF: u64 = 2 << 30;
const ANY: fn(u64) -> bool = |_| true;

/// The crafted cases: (name, what it is, the file).
fn cases() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let base = base_bytes();
    let base2 = base_v2_bytes();
    let def_of = |name: &str| {
        let v = ModuleView::from_bytes(&base).unwrap();
        v.find_export(name).unwrap().def as u64
    };
    let count = def_of("count");
    vec![
        (
            "self_reference",
            "@count calls itself by a definition reference instead of local 0 (a 2.1 file)",
            // The only operand word 0 (local 0: the function itself) is the recursive call.
            edit(
                &base2,
                "definitions",
                FieldKind::Operand,
                |v| v == 0,
                0,
                |_| TAG_DEF | count,
            ),
        ),
        (
            "unknown_debug_kind",
            "a debug record of a kind from a later version (skipped, its place kept)",
            edit(&base, "debug", FieldKind::DebugKind, ANY, 0, |_| 9),
        ),
        (
            "debug_position_gap",
            "a debug record at a decoration position past the end of its list",
            edit(&base, "debug", FieldKind::DebugPosition, ANY, 0, |_| 5),
        ),
        (
            "debug_in_dropped_decoration",
            "a name hint on a decoration the linker drops (a `pin_if`), after a body decoration",
            dropped_decoration_debug(),
        ),
        (
            "lying_definition_opcode",
            "the definition index says @count is a global_var",
            edit(
                &base,
                "definition-index",
                FieldKind::Opcode,
                |v| v == irkit_core::Opcode::FUNC.0 as u64,
                count as usize,
                |_| irkit_core::Opcode::GLOBAL_VAR.0 as u64,
            ),
        ),
        (
            "lying_index_definition",
            "the symbol index binds `count` to another definition",
            edit(
                &base,
                "symbol-index",
                FieldKind::SymbolDef,
                |v| v == count,
                0,
                |v| (v + 1) % 4,
            ),
        ),
        (
            "lying_index_role",
            "the symbol index lists the export of `count` as an import",
            edit(
                &base,
                "symbol-index",
                FieldKind::SymbolRole,
                |v| v == 0,
                0,
                |_| 1,
            ),
        ),
        (
            "lying_symbols_table",
            "the symbols section binds `count` to another definition (the index is right; a 2.1 \
             file: 3.x has no symbols section)",
            edit(
                &base2,
                "symbols",
                FieldKind::SymbolDef,
                |v| v == count,
                0,
                |v| (v + 1) % 4,
            ),
        ),
        (
            "local_out_of_range",
            "an operand naming a local past the end of its definition (and past its external \
             references)",
            edit(
                &base,
                "definitions",
                FieldKind::Operand,
                |v| v >> 30 == 0 && v > 0,
                0,
                |_| 1000,
            ),
        ),
        (
            "definition_out_of_range",
            "an external reference of a body naming definition 77 of 4",
            edit(
                &base,
                "definitions",
                FieldKind::ExternalRef,
                |v| v >> 30 == 2,
                0,
                |_| TAG_DEF | 77,
            ),
        ),
        (
            "definition_out_of_range_v2",
            "an operand naming definition 77 of 4 (a 2.1 file)",
            edit(
                &base2,
                "definitions",
                FieldKind::Operand,
                |v| v >> 30 == 2,
                0,
                |_| TAG_DEF | 77,
            ),
        ),
        (
            "local_out_of_range_v2",
            "an operand naming a local past the end of its definition (a 2.1 file)",
            edit(
                &base2,
                "definitions",
                FieldKind::Operand,
                |v| v >> 30 == 0 && v > 0,
                0,
                |_| 1000,
            ),
        ),
        (
            "subtree_overlap_v2",
            "an instruction's subtree reaching past its parent's (a 2.1 file)",
            edit(
                &base2,
                "definitions",
                FieldKind::SubtreeEnd,
                |v| v > 1,
                1,
                |v| v + 3,
            ),
        ),
        (
            "pool_cycle",
            "a pool entry naming itself (a cycle through the pool)",
            {
                // The `fn` type's operand: its result type, an earlier entry; make it the
                // last entry's own index.
                let v = ModuleView::from_bytes(&base).unwrap();
                let last = v.pool().unwrap().len() as u64 - 1;
                edit(
                    &base,
                    "pool",
                    FieldKind::Operand,
                    |v| v >> 30 == 1,
                    0,
                    |_| (1 << 30) | last,
                )
            },
        ),
        (
            "subtree_overlap",
            "an instruction's subtree reaching past its parent's",
            edit(
                &base,
                "definitions",
                FieldKind::SubtreeEnd,
                |v| v > 1,
                1,
                |v| v + 3,
            ),
        ),
        (
            "tree_too_deep",
            "a definition whose tree is one level deeper than the nesting limit",
            deep_tree_file(MAX_NESTING + 1).expect("writes"),
        ),
        (
            "pool_too_deep",
            "a pool value one level deeper than the nesting limit",
            deep_types_file(MAX_NESTING + 1).expect("writes"),
        ),
        (
            "debug_name_too_deep",
            "a name hint in the debug section for an instruction at the nesting limit",
            {
                let mut m = deep_tree(MAX_NESTING).expect("builds");
                let deepest = m
                    .walk()
                    .into_iter()
                    .rfind(|&i| m.opcode(i) == DEEP_OPCODE)
                    .expect("a chain");
                m.set_name(deepest, "bottom").expect("names");
                write_any_depth(&m).expect("writes")
            },
        ),
    ]
}

/// The base module with `#[pin_if(@helper, @main)]` on `@count`, which carries a body
/// decoration (`weak`) at position 0 and a name hint at position 1 (moved to the debug
/// section). The linker drops the `pin_if` (it re-creates it), so the copy skips its subtree;
/// the name hint's position still counts the `weak` before it (spec/format.md §2.3).
fn dropped_decoration_debug() -> Vec<u8> {
    use irkit_core::{Opcode, Payload};
    let mut m = irkit_text::parse(BASE, "base.ir").unwrap_or_else(|e| panic!("{e}"));
    let export = |m: &irkit_core::Module, name: &str| {
        m.children(m.root()).iter().copied().find(|&d| {
            m.decorations(d).iter().any(|&x| {
                m.opcode(x) == Opcode::EXPORT && *m.payload(x) == Payload::Str(name.into())
            })
        })
    };
    let count = export(&m, "count").expect("@count");
    let main = export(&m, "main").expect("@main");
    let helper = m
        .children(m.root())
        .iter()
        .copied()
        .find(|&d| m.name(d) == Some("helper"))
        .expect("@helper");
    let pin = m
        .add_decoration(count, Opcode::PIN_IF, vec![helper, main], Payload::None)
        .expect("pin_if");
    m.add_decoration(pin, Opcode::WEAK, Vec::new(), Payload::None)
        .expect("weak");
    m.add_decoration(
        pin,
        Opcode::NAME_HINT,
        Vec::new(),
        Payload::Str("pin".into()),
    )
    .expect("name");
    irkit_format::write(&m).expect("writes")
}

/// The two decoders (`materialize` and the linker's copy, `spec/format.md` §4) merge the debug
/// records of an instruction inside a decoration the copy drops by the same rule: both accept
/// the file (the copy used to count only the decorations it copied, and refused the name hint
/// as past the end of the `pin_if`'s list).
#[test]
fn both_decoders_merge_debug_records_by_one_rule() {
    let bytes = std::fs::read(crafted_dir().join("debug_in_dropped_decoration.irm")).unwrap();
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let m = view
        .materialize()
        .unwrap_or_else(|e| panic!("materialize: {e}"));
    let pins: Vec<_> = m
        .walk()
        .into_iter()
        .filter(|&i| m.opcode(i) == irkit_core::Opcode::PIN_IF)
        .collect();
    assert_eq!(pins.len(), 1);
    let decos: Vec<_> = m
        .decorations(pins[0])
        .iter()
        .map(|&d| m.opcode(d))
        .collect();
    assert_eq!(
        decos,
        [irkit_core::Opcode::WEAK, irkit_core::Opcode::NAME_HINT],
        "the name hint at position 1, after the body decoration"
    );
    for library in [true, false] {
        if let Err(e) = link_of(&bytes, library) {
            panic!("the copy refuses what materialize accepts (library {library}): {e}");
        }
    }
}

/// What one reader did.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Accepted,
    Refused(String),
}

impl Outcome {
    fn of<T, E: std::fmt::Display>(r: Result<T, E>) -> (Outcome, Option<T>) {
        match r {
            Ok(v) => (Outcome::Accepted, Some(v)),
            Err(e) => (Outcome::Refused(e.to_string()), None),
        }
    }
    fn word(&self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Refused(_) => "refused",
        }
    }
}

/// The written bytes of a link of `bytes` (as `crafted.irm`), and `main`'s result in the
/// interpreter for an executable link.
fn link_of(bytes: &[u8], library: bool) -> Result<(Vec<u8>, Option<String>), String> {
    let input = Input::from_bytes("crafted.irm", bytes).map_err(|e| e.to_string())?;
    let opts = LinkOptions {
        library,
        ..LinkOptions::default()
    };
    let linked = link(vec![input], &opts).map_err(|e| e.to_string())?;
    let out = irkit_format::write(&linked.module).map_err(|e| e.to_string())?;
    let run = (!library).then(|| match irkit_interp::Interpreter::new(&linked.module) {
        Ok(mut i) => format!("{:?}", i.run_main()),
        Err(e) => format!("{e}"),
    });
    Ok((out, run))
}

/// The outcome line of every reader, checking the agreement rules.
fn judge(name: &str, bytes: &[u8], base: &[u8]) -> Result<String, String> {
    let view = ModuleView::from_bytes_named(bytes, "crafted.irm");
    let (info, _) = Outcome::of(
        view.as_ref()
            .map_err(|e| e.to_string())
            .and_then(|v| v.validate_all().map_err(|e| e.to_string())),
    );
    let (mat, module) = Outcome::of(
        view.as_ref()
            .map_err(|e| e.to_string())
            .and_then(|v| v.materialize().map_err(|e| e.to_string())),
    );
    let dis = match &module {
        Some(m) => {
            let text = irkit_text::print(m);
            Outcome::of(irkit_text::parse(&text, "dis.ir").map_err(|e| e.to_string())).0
        }
        None => mat.clone(),
    };
    let whole = [
        ("info --validate", &info),
        ("materialize", &mat),
        ("dis", &dis),
    ];
    if whole.iter().any(|(_, o)| o.word() != info.word()) {
        return Err(format!(
            "{name}: the whole-module readers disagree: {}",
            whole
                .iter()
                .map(|(r, o)| format!("{r} {o:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut lines = vec![format!("whole-module readers: {}", info.word())];
    if let Outcome::Refused(why) = &info {
        println!("{name}: refused: {why}");
    }
    for library in [true, false] {
        let what = if library {
            "library link"
        } else {
            "executable link"
        };
        let got = link_of(bytes, library);
        let want = link_of(base, library).expect("the base links");
        let line = match (&got, &info) {
            (Err(e), _) => {
                println!("{name}: {what} refused: {e}");
                "refused".to_string()
            }
            (Ok(g), _) if *g == want => "same as the undamaged module".to_string(),
            (Ok(_), Outcome::Accepted) => "accepted (another valid module)".to_string(),
            (Ok(g), Outcome::Refused(_)) => {
                return Err(format!(
                    "{name}: {what} succeeded with a different program ({:?} vs {:?}) on a \
                     file the whole-module readers refuse: a silent change",
                    g.1, want.1
                ));
            }
        };
        lines.push(format!("{what}: {line}"));
    }
    Ok(lines.join("\n") + "\n")
}

#[test]
fn every_reader_agrees_on_every_crafted_file() {
    let bless = std::env::var_os("IRKIT_BLESS").is_some();
    let dir = crafted_dir();
    let base = base_bytes();
    let mut failures = Vec::new();
    let mut seen = 0;
    for (name, about, crafted) in cases() {
        let file = dir.join(format!("{name}.irm"));
        let expected_path = dir.join(format!("{name}.expected"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &crafted).unwrap();
        }
        let bytes = std::fs::read(&file)
            .unwrap_or_else(|_| panic!("{} is missing: run with IRKIT_BLESS=1", file.display()));
        assert_ne!(bytes, base, "{name}: the crafted file equals the base");
        match judge(name, &bytes, &base) {
            Err(e) => failures.push(e),
            Ok(lines) => {
                let text = format!("# {about}\n{lines}");
                if bless {
                    std::fs::write(&expected_path, &text).unwrap();
                }
                let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
                if want != text {
                    failures.push(format!(
                        "{name}: outcome differs from {}\n--- expected\n{want}--- actual\n{text}",
                        expected_path.display()
                    ));
                }
            }
        }
        seen += 1;
    }
    assert!(seen >= 10);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The crafted files still say what their names say: the edit is where it was meant to be.
#[test]
fn crafted_files_refused_for_their_own_reason() {
    let dir = crafted_dir();
    let reason = |name: &str| -> String {
        let bytes = std::fs::read(dir.join(format!("{name}.irm"))).unwrap();
        match ModuleView::from_bytes(&bytes).map(|v| v.validate_all()) {
            Ok(Ok(())) => "valid".to_string(),
            Ok(Err(e)) | Err(e) => e.to_string(),
        }
    };
    for (name, want) in [
        ("self_reference", "valid"),
        ("unknown_debug_kind", "valid"),
        ("debug_position_gap", "decoration position"),
        ("lying_definition_opcode", "the directory says"),
        ("lying_index_definition", "symbol-index"),
        ("lying_index_role", "symbol-index"),
        ("lying_symbols_table", "symbol"),
        ("local_out_of_range", "past the"),
        ("definition_out_of_range", "out of range"),
        ("local_out_of_range_v2", "out of range"),
        ("definition_out_of_range_v2", "out of range"),
        ("subtree_overlap_v2", "definition"),
        ("pool_cycle", "pool"),
        ("subtree_overlap", "definition"),
        (
            "tree_too_deep",
            "definition 0: instruction 257: nested deeper than 256 levels",
        ),
        (
            "pool_too_deep",
            "section pool: pool entry 511: nested deeper than 256 levels",
        ),
        (
            "debug_name_too_deep",
            "definition 0: debug decoration of instruction 256: nested deeper",
        ),
    ] {
        let got = reason(name);
        assert!(got.contains(want), "{name}: {got}");
    }
}
