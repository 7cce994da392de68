//! Linking the tools' inputs: opening each once (binary modules as the linker opens them,
//! `.ir` text parsed here), linking them, and reporting a failed link against the inputs
//! themselves.

use std::path::Path;

use rayon::prelude::*;

use crate::input::{TextOptions, load, parse_text, text_of, verify_error_lines};
use crate::report::Problems;

/// Opens the inputs of a link, each read once, in path order (so problems come in a fixed
/// order): a binary module as the linker opens it (a regular file is mapped), anything else as
/// `.ir` text, parsed here and handed to the linker encoded ([`irkit_link::Input::from_module`]).
/// Every problem of every input is reported; `None` if there was any. Also returns the time
/// spent, for `--stats`.
pub fn open_link_inputs(
    paths: &[std::path::PathBuf],
    text: TextOptions,
    problems: &mut Problems,
) -> Option<(Vec<irkit_link::Input>, std::time::Duration)> {
    use irkit_link::{Input, Opened};
    let start = std::time::Instant::now();
    let mut sorted: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    sorted.sort();
    let before = problems.len();
    // Each input is opened (and a text one parsed) on any core; the problems are reported in
    // the inputs' sorted order.
    let opened: Vec<Result<Input, Problems>> = sorted
        .par_iter()
        .map(|path| {
            let mut problems = Problems::new();
            let (name, bytes) = match Input::open(path) {
                Ok(Opened::Module(input)) => return Ok(*input),
                Ok(Opened::Other(name, bytes)) => (name, bytes),
                Err(errors) => {
                    errors
                        .errors()
                        .iter()
                        .for_each(|e| problems.push(e.render()));
                    return Err(problems);
                }
            };
            let Some(source) = text_of(&name, bytes, &mut problems) else {
                return Err(problems);
            };
            let parsed = parse_text(&source, &name, text).and_then(|module| {
                Input::from_module(&name, &module)
                    .map_err(|errors| errors.errors().iter().map(|e| e.render()).collect())
            });
            parsed.map_err(|lines: Vec<String>| {
                lines.into_iter().for_each(|l| problems.push(l));
                problems
            })
        })
        .collect();
    let mut inputs = Vec::with_capacity(opened.len());
    for o in opened {
        match o {
            Ok(input) => inputs.push(input),
            Err(mut p) => problems.append(&mut p),
        }
    }
    (problems.len() == before).then(|| (inputs, start.elapsed()))
}

/// Opens the inputs of `paths` ([`open_link_inputs`]) and links them: the linked program, or
/// `None` with every problem reported (link errors as
/// [`report_link_errors`] gives them).
pub fn link_paths(
    paths: &[std::path::PathBuf],
    opts: &irkit_link::LinkOptions,
    text: TextOptions,
    problems: &mut Problems,
) -> Option<irkit_link::Linked> {
    let (inputs, open_time) = open_link_inputs(paths, text, problems)?;
    match irkit_link::link(inputs, opts) {
        Ok(mut linked) => {
            linked.stats.open += open_time;
            Some(linked)
        }
        Err(errors) => {
            report_link_errors(paths, &errors, problems);
            None
        }
    }
}

/// Reports a failed link. When the linked program does not verify, each input that can be read
/// again (a file, not a pipe or stdin) is verified on its own, and its errors are reported the
/// way `ir-verify` reports them (file, line and column, place); the linked program's own errors
/// are reported only when no input is at fault.
pub fn report_link_errors(
    inputs: &[std::path::PathBuf],
    errors: &irkit_link::LinkErrors,
    problems: &mut Problems,
) {
    let verify_failed = errors
        .errors()
        .iter()
        .any(|e| matches!(e, irkit_link::LinkError::Verify(_)));
    if verify_failed {
        let mut blamed = false;
        for path in inputs {
            if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let mut quiet = Problems::new();
            let Some(loaded) = load(path, &mut quiet) else {
                continue;
            };
            if let Err(errs) = irkit_core::verify::verify(&loaded.module) {
                blamed = true;
                for line in verify_error_lines(&loaded, &errs) {
                    problems.push(line);
                }
            }
        }
        if blamed {
            for e in errors.errors() {
                if !matches!(e, irkit_link::LinkError::Verify(_)) {
                    problems.push(e.render());
                }
            }
            return;
        }
    }
    for e in errors.errors() {
        problems.push(e.render());
    }
}

/// The value of `--generics` (ir-link, ir-run): `specialize`, `dynamic`, `auto` (the default
/// threshold, [`irkit_link::Generics::DEFAULT_MAX_INSTANCES`]) or `auto:N`.
pub fn parse_generics(s: &str) -> Result<irkit_link::Generics, String> {
    use irkit_link::Generics;
    match s {
        "specialize" => Ok(Generics::Specialize),
        "dynamic" => Ok(Generics::Dynamic),
        "auto" => Ok(Generics::default()),
        _ => match s.strip_prefix("auto:").map(str::parse::<u64>) {
            Some(Ok(n)) => Ok(Generics::Auto { max_instances: n }),
            _ => Err(format!(
                "`{s}` is not specialize, dynamic, auto or auto:N (N a count of instances)"
            )),
        },
    }
}
