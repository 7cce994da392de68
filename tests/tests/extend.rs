//! Linking onto a live program (`irkit_link::extend`, spec/linking.md "Linking onto a live
//! program"), file-driven: one folder per case under `tests/extend/`, holding `base.ir` (the
//! live program, as parsed), the new modules (every other `*.ir`), and the expectation:
//! `expected.ir` (the extended module, printed) or `expected.err` (the error lines).
//! `IRKIT_BLESS=1` rewrites the expectations.
//!
//! Every successful result verifies and extends its base (`Module::extends`: the base's
//! instructions unchanged at the same handles). Further: extending an empty module equals a
//! library link of the same inputs, for every linker case that links as a library.

use std::path::{Path, PathBuf};

use irkit_core::Module;
use irkit_link::{LinkOptions, extend, link};
use libtest_mimic::{Arguments, Failed, Trial};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The `*.ir` files of `dir` but `skip`: (name, text), by name.
fn ir_files(dir: &Path, skip: &[&str]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.extension().is_some_and(|e| e == "ir") && !skip.contains(&name.as_str()) {
            out.push((
                name,
                std::fs::read_to_string(&p).map_err(|e| e.to_string())?,
            ));
        }
    }
    out.sort();
    Ok(out)
}

fn inputs(files: &[(String, String)]) -> Result<Vec<irkit_link::Input>, String> {
    files
        .iter()
        .map(|(n, t)| irkit_tests::text_input(n, t).map_err(|e| e.join("\n")))
        .collect()
}

fn run_case(dir: &Path) -> Result<(), Failed> {
    let base_text = std::fs::read_to_string(dir.join("base.ir")).map_err(|e| e.to_string())?;
    let base = irkit_text::parse(&base_text, "base.ir").map_err(|e| format!("{e:?}"))?;
    let files = ir_files(dir, &["base.ir", "expected.ir"])?;
    let result = extend(&base, inputs(&files)?, &LinkOptions::default());
    let outcome = match &result {
        Ok(l) => {
            irkit_core::verify::verify(&l.module).map_err(|e| format!("verify: {e:?}"))?;
            l.module
                .extends(&base)
                .map_err(|e| format!("does not extend its base: {e}"))?;
            Ok(irkit_text::print(&l.module))
        }
        Err(e) => Err(e.to_string() + "\n"),
    };
    Ok(irkit_tests::check_outcome(dir, outcome, "the extension")?)
}

/// Extending an empty module is a library link; extending a library link by nothing changes
/// nothing.
fn empty_base(dir: &Path) -> Result<(), Failed> {
    let list = dir.join("inputs");
    let files = if list.exists() {
        let text = std::fs::read_to_string(&list).map_err(|e| e.to_string())?;
        let mut v = Vec::new();
        for l in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let p = repo().join(l);
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            v.push((
                name,
                std::fs::read_to_string(&p).map_err(|e| e.to_string())?,
            ));
        }
        v
    } else {
        ir_files(dir, &["expected.ir"])?
    };
    if dir.join("args").exists() {
        return Ok(()); // options of their own: not a plain library link
    }
    let opts = LinkOptions {
        library: true,
        ..LinkOptions::default()
    };
    let Ok(ins) = inputs(&files) else {
        return Ok(());
    };
    let Ok(lib) = link(ins, &opts) else {
        return Ok(());
    };
    // What a library link leaves unresolved, an extension must resolve (against the base).
    let unresolved = lib.module.top_level().iter().any(|&d| {
        lib.module.children(d).is_empty()
            && lib
                .module
                .find_decoration(d, irkit_core::Opcode::IMPORT)
                .is_some()
    });
    if unresolved {
        return Ok(());
    }
    let ext = extend(&Module::new(), inputs(&files)?, &LinkOptions::default())
        .map_err(|e| format!("extend failed where a library link succeeds: {e}"))?;
    irkit_core::equiv::modules_equal(&lib.module, &ext.module)
        .map_err(|e| format!("extending an empty module differs from a library link: {e:?}"))?;
    let again = extend(&lib.module, Vec::new(), &LinkOptions::default())
        .map_err(|e| format!("extending by nothing failed: {e}"))?;
    again
        .module
        .extends(&lib.module)
        .map_err(|e| e.to_string())?;
    irkit_core::equiv::modules_equal(&lib.module, &again.module)
        .map_err(|e| format!("extending by nothing changed the module: {e:?}"))?;
    Ok(())
}

fn dirs(under: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join(under))
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for d in dirs("tests/extend") {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        trials.push(Trial::test(format!("extend::{name}"), move || run_case(&d)));
    }
    for d in dirs("tests/link") {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        trials.push(Trial::test(format!("empty_base::{name}"), move || {
            empty_base(&d)
        }));
    }
    libtest_mimic::run(&args, trials).exit_code();
}
