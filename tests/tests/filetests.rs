//! One test per case file under `tests/cases/` and per example under `examples/` (see the crate
//! docs for the formats). `IRKIT_BLESS=1` rewrites expectations.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else if p.extension().is_some_and(|e| e == "ir") {
            out.push(p);
        }
    }
}

fn case_trial(root: &Path, path: PathBuf) -> Trial {
    let name = path
        .strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string();
    Trial::test(
        format!("case::{name}"),
        move || match irkit_tests::run_case(&path) {
            Ok(None) => Ok(()),
            Ok(Some(blessed)) => {
                std::fs::write(&path, blessed)
                    .map_err(|e| Failed::from(format!("cannot bless: {e}")))?;
                Ok(())
            }
            Err(report) => Err(Failed::from(report)),
        },
    )
}

/// Every example must parse, verify, be a fixed point of `ir-fmt` (comments kept), and
/// round-trip.
fn example_trial(root: &Path, path: PathBuf) -> Trial {
    let name = path
        .strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string();
    Trial::test(format!("example::{name}"), move || {
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let m = irkit_text::parse(&text, &name).map_err(|e| format!("does not parse:\n{e}"))?;
        if let Err(errors) = irkit_core::verify::verify(&m) {
            let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            return Err(format!("does not verify:\n{}", lines.join("\n")).into());
        }
        let (_, trivia) = irkit_text::parse_with_trivia(&text, &name).map_err(|e| e.to_string())?;
        let formatted = irkit_text::print_with_trivia(&m, &trivia);
        if formatted != text {
            return Err(format!(
                "not a fixed point of ir-fmt:\n{}",
                irkit_tests::diff(&text, &formatted)
            )
            .into());
        }
        let printed = irkit_text::print(&m);
        let again = irkit_text::parse(&printed, &name).map_err(|e| e.to_string())?;
        irkit_core::equiv::modules_equal(&m, &again).map_err(|e| e.to_string())?;
        Ok(())
    })
}

fn main() {
    let args = Arguments::from_args();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf();
    let mut trials = Vec::new();
    let cases = repo.join("tests/cases");
    let mut files = Vec::new();
    files_under(&cases, &mut files);
    trials.extend(files.into_iter().map(|p| case_trial(&cases, p)));
    let examples = repo.join("examples");
    let mut files = Vec::new();
    files_under(&examples, &mut files);
    trials.extend(files.into_iter().map(|p| example_trial(&examples, p)));
    libtest_mimic::run(&args, trials).exit();
}
