//! `ir-wast FILE.wast… [--backend jit|interp]`: runs WebAssembly scripts (the official
//! testsuite's format) through the front end, the linker and a back end (spec/wasm.md,
//! "Scripts"). Prints each failed command (`file:line: command: expected …, got …`) and ends
//! with `N passed, M failed, K skipped` (on standard output). Exit 0 when nothing failed, 1
//! otherwise, or when a file cannot be read (one `error:` line on standard error), 2 on usage
//! errors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use irkit_backend::RunOptions;
use irkit_cli::backends::{self, BACKENDS};
use irkit_wast::{Counts, run_script_with};

/// Run WebAssembly scripts (.wast) on an irkit back end.
#[derive(Parser)]
#[command(name = "ir-wast", version)]
struct Args {
    /// The scripts.
    #[arg(required = true)]
    scripts: Vec<PathBuf>,
    /// The back end: `jit` (native code, the default) or `interp`.
    #[arg(long, default_value = "jit", value_parser = clap::builder::PossibleValuesParser::new(BACKENDS))]
    backend: String,
    /// With the interpreter: each call stops after N executed instructions, with the trap
    /// `fuel exhausted`, so that a script that does not end cannot hang the tool.
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,
    /// The call depth limit: a call made while N activations are live is the trap `stack
    /// overflow`, which `assert_exhaustion` expects (10,000 by default, so that both back
    /// ends trap at the same call, and soon).
    #[arg(long, value_name = "N", default_value_t = irkit_wast::SCRIPT_MAX_DEPTH as u64, value_parser = clap::value_parser!(u64).range(1..=irkit_backend::MAX_DEPTH as u64))]
    max_depth: u64,
    /// Validate modules as WebAssembly 2.0 does (what the official `wasm-v1` and `wasm-v2`
    /// scripts expect: a second memory, say, is malformed there) instead of with everything
    /// `ir-wasm` translates.
    #[arg(long = "wasm-2.0")]
    wasm_2_0: bool,
}

/// The text of the script at `path` ([`irkit_wast::read_script`]: any text, NUL bytes
/// included, within the script size limit), as the testsuite test reads its scripts.
fn read(path: &Path) -> Result<String, String> {
    std::fs::File::open(path)
        .and_then(irkit_wast::read_script)
        .map_err(|e| format!("cannot read: {e}"))
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start();
    let Some(backend) = backends::backend(&args.backend) else {
        eprintln!("error: unknown back end `{}`", args.backend);
        return ExitCode::from(irkit_cli::EXIT_USAGE);
    };
    let opts = RunOptions {
        fuel: args.fuel,
        max_depth: Some(args.max_depth as usize),
        ..RunOptions::default()
    };
    let mut all = Counts::default();
    let mut unreadable = false;
    for path in &args.scripts {
        let display = path.display().to_string();
        let text = match read(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {display}: {e}");
                unreadable = true;
                continue;
            }
        };
        let features = if args.wasm_2_0 {
            irkit_wasm::features_2_0()
        } else {
            irkit_wasm::features()
        };
        let report = run_script_with(&text, &display, backend, &opts, features);
        for line in report.failures() {
            println!("{line}");
        }
        all.add(report.counts());
    }
    println!("{all}");
    if all.failed > 0 || unreadable {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
