//! `ir-as IN.ir -o OUT.irm`: assembles a text module into a binary module (verified first,
//! unless `--no-verify`), written atomically.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use irkit_cli::input::verify_error_lines;
use irkit_cli::report::Problems;
use irkit_cli::{input, output};

/// Assemble an irkit text module (.ir) into a binary module (.irm).
#[derive(Parser)]
#[command(name = "ir-as", version)]
struct Args {
    /// The text module (`-` reads stdin). A binary module is accepted too (re-written).
    input: PathBuf,
    /// The binary output (`-` is stdout). Default: the input with extension `.irm`.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write the module even if it does not verify.
    #[arg(long)]
    no_verify: bool,
    #[command(flatten)]
    text: irkit_cli::input::TextOptions,
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start();
    let mut problems = Problems::new();
    let Some(loaded) = input::load_with(&args.input, args.text, &mut problems) else {
        return problems.finish();
    };
    if !args.no_verify
        && let Err(errors) = irkit_core::verify::verify(&loaded.module)
    {
        for line in verify_error_lines(&loaded, &errors) {
            problems.push(line);
        }
        return problems.finish();
    }
    let out = match (&args.output, args.input.as_os_str() == "-") {
        (Some(o), _) => o.clone(),
        (None, true) => PathBuf::from("-"),
        (None, false) => args.input.with_extension("irm"),
    };
    match irkit_format::write(&loaded.module) {
        Ok(bytes) => {
            output::write_or_report(&out, &bytes, &mut problems);
        }
        Err(e) => problems.push(format!("{}: cannot encode: {e}", loaded.name)),
    }
    problems.finish()
}
