//! The spec and the code agree: `spec/ir.md`'s opcode table is the registry, row for row (the
//! operand and roles columns are the registry's operand signatures), and its condition-code
//! tables are `IntCC`/`FloatCC`.

use std::path::Path;

use irkit_core::{Flags, FloatCC, IntCC, OpInfo, PayloadKind, REGISTRY, Role, TypeRule};

fn spec_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/ir.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows of the first markdown table whose header row is `header` (cells trimmed).
fn table(text: &str, header: &[&str]) -> Vec<Vec<String>> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with('|') && cells(l) == header)
        .unwrap_or_else(|| panic!("spec/ir.md has no table with header {header:?}"));
    lines[start + 2..]
        .iter()
        .take_while(|l| l.trim_start().starts_with('|'))
        .map(|l| cells(l))
        .collect()
}

fn unquote(cell: &str) -> String {
    cell.trim_matches('`').to_string()
}

fn expected_row(info: &OpInfo) -> Vec<String> {
    let ty = match info.ty {
        TypeRule::None => "none",
        TypeRule::Required => "required",
        TypeRule::Optional => "optional",
    };
    let payload = match info.payload {
        PayloadKind::None => "none",
        PayloadKind::Int => "int",
        PayloadKind::Float => "float",
        PayloadKind::Str => "str",
        PayloadKind::Bytes => "bytes",
        PayloadKind::IntCC => "intcc",
        PayloadKind::FloatCC => "floatcc",
    };
    let arity = info.arity.to_string();
    vec![
        format!("{:#06x}", info.opcode.0),
        info.name.to_string(),
        info.signature.to_string(),
        info.signature.roles().to_string(),
        arity,
        ty.to_string(),
        payload.to_string(),
        info.flags.to_string(),
    ]
}

#[test]
fn opcode_table_matches_the_registry() {
    let text = spec_text();
    let rows = table(
        &text,
        &[
            "id", "name", "operands", "roles", "arity", "type", "payload", "flags",
        ],
    );
    let mut problems = Vec::new();
    for (i, info) in REGISTRY.iter().enumerate() {
        let want = expected_row(info);
        match rows.get(i) {
            None => problems.push(format!("spec is missing row for `{}`", info.name)),
            Some(row) => {
                let got: Vec<String> = row.iter().map(|c| unquote(c)).collect();
                if got != want {
                    problems.push(format!(
                        "row {}: spec {:?}, registry {:?}",
                        i + 1,
                        got,
                        want
                    ));
                }
            }
        }
    }
    for row in rows.iter().skip(REGISTRY.len()) {
        problems.push(format!("spec has a row the registry lacks: {row:?}"));
    }
    assert!(
        problems.is_empty(),
        "spec/ir.md and the registry disagree:\n{}",
        problems.join("\n")
    );
    // The flags column spells flags exactly as `Flags::ALL` does.
    assert_eq!(Flags::ALL.len(), 12);
}

/// The role table of "Operand roles" lists every role, by the name the roles column uses.
#[test]
fn role_table_matches() {
    let text = spec_text();
    let got: Vec<String> = table(&text, &["role", "the operand is"])
        .iter()
        .map(|r| unquote(&r[0]))
        .collect();
    let want: Vec<String> = Role::ALL.iter().map(|r| r.name().to_string()).collect();
    assert_eq!(got, want, "role table in spec/ir.md");
}

#[test]
fn condition_code_tables_match() {
    let text = spec_text();
    let check = |name: &str, rows: Vec<Vec<String>>, codes: Vec<(u64, &str)>| {
        let got: Vec<(String, String)> = rows
            .iter()
            .map(|r| (unquote(&r[0]), unquote(&r[1])))
            .collect();
        let want: Vec<(String, String)> = codes
            .iter()
            .map(|(c, n)| (c.to_string(), n.to_string()))
            .collect();
        assert_eq!(got, want, "{name} table in spec/ir.md");
    };
    check(
        "IntCC",
        table(&text, &["intcc", "name", "meaning"]),
        IntCC::ALL.iter().map(|c| (c.code(), c.name())).collect(),
    );
    check(
        "FloatCC",
        table(&text, &["floatcc", "name", "meaning"]),
        FloatCC::ALL.iter().map(|c| (c.code(), c.name())).collect(),
    );
}

/// Released opcode ids are forever (`spec/opcode-ids.txt`, append-only): every id of the table
/// is still in the registry under the same name, every registry opcode is in the table, and the
/// table only grows at its end (versions never decrease down the file). `IRKIT_BLESS=1` appends
/// the registry's new opcodes, tagged with the current format version, and edits nothing else.
#[test]
fn released_opcode_ids_never_change() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/opcode-ids.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let version = |v: &str| -> (u16, u16) {
        let (a, b) = v
            .split_once('.')
            .unwrap_or_else(|| panic!("bad version `{v}`"));
        (a.parse().unwrap(), b.parse().unwrap())
    };
    let mut released: Vec<(u16, String, (u16, u16))> = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(parts.len(), 3, "spec/opcode-ids.txt:{}: `{line}`", k + 1);
        let id = u16::from_str_radix(parts[0].trim_start_matches("0x"), 16)
            .unwrap_or_else(|e| panic!("spec/opcode-ids.txt:{}: {e}", k + 1));
        released.push((id, parts[1].to_string(), version(parts[2])));
    }
    let mut problems = Vec::new();
    let mut seen_ids = std::collections::HashSet::new();
    let mut seen_names = std::collections::HashSet::new();
    let mut last = (0, 0);
    for (id, name, v) in &released {
        if !seen_ids.insert(*id) || !seen_names.insert(name.clone()) {
            problems.push(format!("{id:#06x} {name}: listed twice"));
        }
        if *v < last {
            problems.push(format!(
                "{id:#06x} {name}: version {}.{} after {}.{}: the table only grows at its end",
                v.0, v.1, last.0, last.1
            ));
        }
        last = last.max(*v);
        match REGISTRY.iter().find(|i| i.opcode.0 == *id) {
            None => problems.push(format!(
                "released opcode {id:#06x} `{name}` is gone from the registry: ids are forever"
            )),
            Some(info) if info.name != name => problems.push(format!(
                "released opcode {id:#06x} `{name}` is now called `{}`: ids are forever",
                info.name
            )),
            Some(_) => {}
        }
    }
    let current = format!(
        "{}.{}",
        irkit_format::FORMAT_MAJOR,
        irkit_format::FORMAT_MINOR
    );
    let new: Vec<String> = REGISTRY
        .iter()
        .filter(|i| !seen_ids.contains(&i.opcode.0))
        .map(|i| format!("{:#06x}  {:<20}{current}\n", i.opcode.0, i.name))
        .collect();
    if !new.is_empty() {
        if std::env::var_os("IRKIT_BLESS").is_some() && problems.is_empty() {
            let mut text = text.clone();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.extend(new);
            std::fs::write(&path, text).unwrap();
        } else {
            for line in &new {
                problems.push(format!(
                    "opcode `{}` is not in spec/opcode-ids.txt: append it (IRKIT_BLESS=1)",
                    line.trim_end()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// spec/README.md lists every document of `spec/`, and nothing that is not there.
#[test]
fn the_spec_index_lists_every_spec_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let index = std::fs::read_to_string(dir.join("README.md")).expect("spec/README.md");
    let listed: std::collections::BTreeSet<String> = index
        .lines()
        .filter_map(|l| l.strip_prefix("| [`"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect();
    let present: std::collections::BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("spec/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    assert_eq!(
        listed, present,
        "spec/README.md's table against the files of spec/"
    );
}

/// No document refers to the design documents by a path: they are not in the repository, so
/// they are cited by name.
#[test]
fn design_documents_are_cited_by_name_not_by_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stack = vec![
        root.join("spec"),
        root.join("crates"),
        root.join("examples"),
    ];
    stack.push(root.join("README.md"));
    let mut offenders = Vec::new();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            for e in std::fs::read_dir(&p).expect("a directory").flatten() {
                stack.push(e.path());
            }
        } else if p
            .extension()
            .is_some_and(|x| x == "md" || x == "rs" || x == "ir")
        {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if text.contains("shared/seeds") || text.contains("seeds/") {
                offenders.push(p.display().to_string());
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "paths to the design documents in {offenders:?}"
    );
}
