//! `ir-wasm IN.wasm|IN.wat [-o OUT.irm|OUT.ir] [--name NAME] [--main FIELD] [--canonical-nans]`:
//! translates one WebAssembly module into an irkit module (spec/wasm.md), written atomically;
//! verified by debug builds and with `--verify`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use irkit_cli::output;
use irkit_cli::report::Problems;

/// Translate a WebAssembly module (.wasm binary or .wat text) into an irkit module.
#[derive(Parser)]
#[command(name = "ir-wasm", version)]
struct Args {
    /// The WebAssembly module (`-` reads stdin; then `--name` is required).
    input: PathBuf,
    /// The output: text if it ends in `.ir`, else binary (`-` is stdout, binary). Default: the
    /// input with extension `.irm`.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The module's name: its exports are `wasm:NAME:FIELD`, its initializer
    /// `wasm-init:NAME`. Default: the input's file stem.
    #[arg(long)]
    name: Option<String>,
    /// Add an entry point `main` that runs the module's initializer, then its exported
    /// function FIELD (of type [] -> [] or [] -> [i32]) and returns its result.
    #[arg(long, value_name = "FIELD")]
    main: Option<String>,
    /// Make every NaN a float operation returns the canonical one, as the IR does by default,
    /// instead of any NaN wasm allows (spec/wasm.md, "NaNs"): the same bits on every back end
    /// and host, at the cost of a check of each float result the program may see the bits of.
    #[arg(long)]
    canonical_nans: bool,
    /// Verify the translation before writing it (always done by debug builds). A front end's
    /// self-check: the tools that compile or run a module (`ir-link`, `ir-run`) verify it
    /// anyway, so a release build leaves it to them (as clang's release builds skip LLVM's
    /// verifier).
    #[arg(long)]
    verify: bool,
}

/// Reads all of `path` (`-` is stdin), at most [`irkit_format::MAX_INPUT`] bytes.
fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = irkit_format::MAX_INPUT;
    let n = if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)?
    } else {
        std::fs::File::open(path)?
            .take(limit + 1)
            .read_to_end(&mut bytes)?
    };
    if n as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("more than the {limit}-byte input limit"),
        ));
    }
    Ok(bytes)
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start();
    let stdin = args.input.as_os_str() == "-";
    let display = if stdin {
        "<stdin>".to_string()
    } else {
        args.input.display().to_string()
    };
    let name = match (&args.name, stdin) {
        (Some(n), _) => n.clone(),
        (None, false) => args
            .input
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        (None, true) => {
            eprintln!("error: reading stdin (`-`) needs `--name NAME`");
            return ExitCode::from(irkit_cli::EXIT_USAGE);
        }
    };
    let mut problems = Problems::new();
    let bytes = match read(&args.input) {
        Ok(b) => b,
        Err(e) => {
            problems.push(format!("{display}: cannot read: {e}"));
            return problems.finish();
        }
    };
    let opts = irkit_wasm::Options {
        nans: if args.canonical_nans {
            irkit_wasm::Nans::Canonical
        } else {
            irkit_wasm::Nans::Wasm
        },
        ..irkit_wasm::Options::default()
    };
    let translated = irkit_wasm::to_binary(&bytes).and_then(|wasm| {
        let mut m = irkit_wasm::translate_with_options(&wasm, &name, &opts)?;
        if let Some(field) = &args.main {
            irkit_wasm::add_main(&mut m, &name, field)?;
        }
        Ok(m)
    });
    let module = match translated {
        Ok(m) => m,
        Err(e) => {
            problems.push(format!("{display}: {e}"));
            return problems.finish();
        }
    };
    let verify = args.verify || cfg!(debug_assertions);
    if verify && let Err(errors) = irkit_core::verify::verify(&module) {
        for e in errors {
            problems.push(format!(
                "{display}: internal error: the translation does not verify: {e}"
            ));
        }
        return problems.finish();
    }
    let out = match (&args.output, stdin) {
        (Some(o), _) => o.clone(),
        (None, true) => PathBuf::from("-"),
        (None, false) => args.input.with_extension("irm"),
    };
    let encoded = if out.extension().is_some_and(|e| e == "ir") {
        Ok(irkit_text::print(&module).into_bytes())
    } else {
        irkit_format::write(&module).map_err(|e| e.to_string())
    };
    match encoded {
        Ok(bytes) => {
            output::write_or_report(&out, &bytes, &mut problems);
        }
        Err(e) => problems.push(format!("{display}: cannot encode: {e}")),
    }
    // The process ends here: freeing the module instruction by instruction would only cost
    // time (as ir-link does with the linked module).
    std::mem::forget(module);
    problems.finish()
}
