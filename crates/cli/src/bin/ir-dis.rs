//! `ir-dis IN.irm [-o OUT.ir]`: prints a binary module as canonical text.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use irkit_cli::report::Problems;
use irkit_cli::{input, output};

/// Disassemble a binary irkit module (.irm) into canonical text (.ir).
#[derive(Parser)]
#[command(name = "ir-dis", version)]
struct Args {
    /// The binary module (`-` reads stdin). A text module is accepted too (re-printed).
    input: PathBuf,
    /// Where to write the text (`-` is stdout, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start();
    let mut problems = Problems::new();
    let Some(loaded) = input::load(&args.input, &mut problems) else {
        return problems.finish();
    };
    let text = irkit_text::print(&loaded.module);
    if let Err(e) = output::write_output(&args.output, text.as_bytes()) {
        problems.push(format!("{}: cannot write: {e}", args.output.display()));
    }
    problems.finish()
}
