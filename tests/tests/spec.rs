//! The spec and the code agree: `spec/ir.md`'s opcode table is the registry, row for row, and
//! its condition-code tables are `IntCC`/`FloatCC`.

use std::path::Path;

use irkit_core::{Flags, FloatCC, IntCC, OpInfo, PayloadKind, REGISTRY, TypeRule};

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
        if info.operands.is_empty() {
            "-".to_string()
        } else {
            info.operands.to_string()
        },
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
            "id", "name", "operands", "arity", "type", "payload", "flags",
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
    assert_eq!(Flags::ALL.len(), 10);
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
