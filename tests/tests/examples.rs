//! Every example program (`examples/`: a file, or a directory of modules linked together) gives
//! the result and output its own `; expect:` lines state (see `irkit_tests::expect`; in a
//! directory, the module that states them), run by the reference interpreter after linking as
//! `ir-run` does. `IRKIT_BLESS=1` rewrites the expectations from the actual run. The native
//! back ends are held to the same lines by `crates/cli/tests/backends.rs`.

use std::path::PathBuf;

use irkit_interp::Interpreter;
use irkit_link::{LinkOptions, link};
use irkit_tests::expect::{Example, Expect, examples};
use libtest_mimic::{Arguments, Failed, Trial};

/// Links `files` and runs the entry in the interpreter: its result and output.
fn run(files: &[PathBuf]) -> Result<Expect, String> {
    let mut inputs = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        inputs.push(irkit_tests::text_input(&name, &text).map_err(|e| e.join("\n"))?);
    }
    let linked = link(inputs, &LinkOptions::default()).map_err(|e| e.to_string())?;
    let mut it = Interpreter::new(&linked.module).map_err(|e| e.to_string())?;
    let ran = it.run_main();
    let stdout = Some(String::from_utf8_lossy(&it.take_output()).into_owned());
    Ok(match ran {
        Ok(code) => Expect {
            result: Some(i64::from(code)),
            stdout,
            ..Expect::default()
        },
        Err(t) => Expect {
            trap: Some(t.kind.to_string()),
            stdout,
            ..Expect::default()
        },
    })
}

fn check(ex: &Example) -> Result<(), Failed> {
    let (name, files) = (&ex.name, &ex.files);
    // A new example without expectations is blessed into the module that exports `main`.
    let file = match &ex.stating {
        Ok(f) => f.clone(),
        Err(_) if irkit_tests::blessing() => files
            .iter()
            .find(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("#[export(\"main\")]")))
            .or(files.first())
            .cloned()
            .ok_or("no files")?,
        Err(e) => return Err(e.clone().into()),
    };
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let expected = Expect::parse(&text)?;
    let actual = run(files)?;
    let actual = Expect {
        stdout: actual.stdout.filter(|s| !s.is_empty()),
        ..actual
    };
    let expected_norm = Expect {
        stdout: expected.stdout.clone().filter(|s| !s.is_empty()),
        exit: None,
        stderr: None,
        ..expected.clone()
    };
    if actual == expected_norm {
        return Ok(());
    }
    if irkit_tests::blessing() {
        let blessed = Expect {
            exit: expected.exit,
            stderr: expected.stderr,
            ..actual
        };
        return std::fs::write(&file, blessed.rewrite(&text))
            .map_err(|e| format!("cannot bless: {e}").into());
    }
    Err(format!(
        "examples/{name}: expected {:?}, got {:?} (IRKIT_BLESS=1 accepts the actual run)",
        expected_norm.lines(),
        actual.lines()
    )
    .into())
}

fn main() {
    let args = Arguments::from_args();
    let trials = examples()
        .into_iter()
        .map(|ex| Trial::test(format!("example::{}", ex.name), move || check(&ex)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
