//! # irkit-tests: file-driven tests across crates
//!
//! Every case is a text file with its expectation beside the input, in comments, as
//! Cranelift's filetests do. The first line names the test kind:
//!
//! * `; test: verify` — the rest of the file is a module in canonical form, and the verifier's
//!   errors are written as `; error: …` comments on the line after the offending instruction.
//!   The case passes when the file equals its header followed by the module printed with the
//!   actual errors annotated (so a valid module is simply a file with no `; error:` lines).
//! * `; test: roundtrip` — the module is in canonical form: printing the parsed module gives
//!   the file back, and parsing that gives an equal module.
//! * `; test: parse` — the module does not parse; the expected errors are listed at the end as
//!   `; expect: LINE:COL: MESSAGE`, one per error, in order.
//!
//! Leading comment lines after the first are the case's description and are kept verbatim.
//! Run with `IRKIT_BLESS=1` to rewrite every case's expectations from the actual results.
//!
//! The semantics cases of `tests/semantics/` state per-call expectations instead, on `; run:`
//! lines ([`runtest`]), checked on every back end (`tests/tests/semantics.rs`, with the
//! executable's [`driver`]).

pub mod driver;
pub mod expect;
pub mod runtest;

use std::fmt::Write as _;
use std::path::Path;

/// The kinds of file-driven test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Verifier errors annotated inline.
    Verify,
    /// Canonical text round trip.
    Roundtrip,
    /// Expected parse errors.
    Parse,
}

/// A case file split into its parts.
pub struct Case {
    /// The test kind.
    pub kind: Kind,
    /// The header: the `; test:` line and the description comment lines that follow it.
    pub header: String,
    /// The module text after the header (with any `; expect:` lines removed).
    pub body: String,
}

/// Whether expectations should be rewritten instead of checked.
pub fn blessing() -> bool {
    std::env::var_os("IRKIT_BLESS").is_some_and(|v| v != "0")
}

/// Checks the outcome of a case in folder `dir` against its expectation: `expected.ir` for a
/// success (`Ok` with the output text), `expected.err` for a failure (`Err` with the error
/// lines); only one of the two exists. When [`blessing`], writes the one and removes the other.
/// `what` names what gave the outcome, in the message of a missing file.
pub fn check_outcome(
    dir: &Path,
    outcome: Result<String, String>,
    what: &str,
) -> Result<(), String> {
    let (file, other, actual) = match outcome {
        Ok(text) => ("expected.ir", "expected.err", text),
        Err(lines) => ("expected.err", "expected.ir", lines),
    };
    let path = dir.join(file);
    if blessing() {
        std::fs::write(&path, &actual).map_err(|e| format!("cannot bless: {e}"))?;
        let _ = std::fs::remove_file(dir.join(other));
        return Ok(());
    }
    let expected = std::fs::read_to_string(&path).map_err(|_| {
        format!(
            "{} is missing (IRKIT_BLESS=1 writes it); {what} gave:\n{actual}",
            path.display()
        )
    })?;
    if expected != actual {
        return Err(format!(
            "{} differs\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        ));
    }
    Ok(())
}

/// Splits a case file.
pub fn split_case(text: &str) -> Result<Case, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty case file")?;
    let kind = match first.trim().strip_prefix("; test:").map(str::trim) {
        Some("verify") => Kind::Verify,
        Some("roundtrip") => Kind::Roundtrip,
        Some("parse") => Kind::Parse,
        _ => {
            return Err(format!(
                "the first line must be `; test: verify|roundtrip|parse`, found `{first}`"
            ));
        }
    };
    let mut header = format!("{first}\n");
    let rest: Vec<&str> = lines.collect();
    let mut i = 0;
    while i < rest.len() && rest[i].starts_with(';') && !rest[i].starts_with("; error:") {
        header.push_str(rest[i]);
        header.push('\n');
        i += 1;
    }
    let mut body = String::new();
    for l in &rest[i..] {
        if l.starts_with("; expect:") {
            continue;
        }
        body.push_str(l);
        body.push('\n');
    }
    Ok(Case { kind, header, body })
}

/// Runs one case; `Ok(None)` if it passes, `Ok(Some(new))` with the blessed text when blessing
/// and it differs, `Err(report)` when it fails.
pub fn run_case(path: &Path) -> Result<Option<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let case = split_case(&text)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let actual = match case.kind {
        Kind::Verify => {
            let m = irkit_text::parse(&case.body, &name)
                .map_err(|e| format!("does not parse:\n{e}"))?;
            let notes: Vec<_> = match irkit_core::verify::verify(&m) {
                Ok(()) => Vec::new(),
                Err(errors) => errors.into_iter().map(|e| (e.inst, e.message)).collect(),
            };
            format!("{}{}", case.header, irkit_text::print_annotated(&m, &notes))
        }
        Kind::Roundtrip => {
            let m = irkit_text::parse(&case.body, &name)
                .map_err(|e| format!("does not parse:\n{e}"))?;
            let printed = irkit_text::print(&m);
            let again = irkit_text::parse(&printed, &name)
                .map_err(|e| format!("printed text does not parse:\n{e}"))?;
            irkit_core::equiv::modules_equal(&m, &again)
                .map_err(|e| format!("parse(print(m)) != m: {e}"))?;
            format!("{}{}", case.header, printed)
        }
        Kind::Parse => {
            let mut out = format!("{}{}", case.header, case.body);
            // The whole file is parsed (its comments are ignored), so that lines and columns,
            // in the expectations and inside messages alike, are those of the file.
            match irkit_text::parse(&text, &name) {
                Ok(_) => return Err("expected parse errors, but the module parsed".into()),
                Err(errors) => {
                    for e in errors.errors() {
                        let _ = writeln!(out, "; expect: {}:{}: {}", e.line, e.column, e.message);
                    }
                }
            }
            out
        }
    };
    if actual == text {
        Ok(None)
    } else if blessing() {
        Ok(Some(actual))
    } else {
        Err(format!(
            "expectation differs (run with IRKIT_BLESS=1 to accept the actual result)\n{}",
            diff(&text, &actual)
        ))
    }
}

/// A minimal line diff: the lines that differ, with their numbers.
pub fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        let (x, y) = (e.get(i), a.get(i));
        if x != y {
            let _ = writeln!(
                out,
                "line {}:\n  expected: {}\n  actual:   {}",
                i + 1,
                x.unwrap_or(&"<none>"),
                y.unwrap_or(&"<none>")
            );
        }
    }
    out
}

/// A `.ir` text input for the linker, as `ir-link` makes one: parsed, then encoded in memory
/// ([`irkit_link::Input::from_module`]). On failure, the problems as `error: …` lines (a parse
/// error as `error: FILE:LINE:COL: MESSAGE`).
pub fn text_input(name: &str, text: &str) -> Result<irkit_link::Input, Vec<String>> {
    let module = irkit_text::parse(text, name).map_err(|errs| {
        errs.errors()
            .iter()
            .map(|e| format!("error: {}:{}:{}: {}", e.file, e.line, e.column, e.message))
            .collect::<Vec<_>>()
    })?;
    irkit_link::Input::from_module(name, &module)
        .map_err(|e| e.errors().iter().map(|e| e.render()).collect())
}
