//! `ir-verify FILE…`: checks that each module is well formed; exit 0 if all are, 1 otherwise,
//! with every problem on its own line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use irkit_cli::input::verify_error_lines;
use irkit_cli::report::Problems;
use irkit_cli::{input, output};

/// Verify irkit modules: structure, types, dominance, hoistable invariants, decorations.
#[derive(Parser)]
#[command(name = "ir-verify", version)]
struct Args {
    /// Modules to verify (`.ir` text or `.irm` binary; `-` reads stdin).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print nothing for valid modules.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start();
    let mut problems = Problems::new();
    for path in &args.files {
        let Some(loaded) = input::load(path, &mut problems) else {
            continue;
        };
        match irkit_core::verify::verify(&loaded.module) {
            Ok(()) => {
                if !args.quiet {
                    output::print_stdout(&format!("{}: ok\n", loaded.name), &mut problems);
                }
            }
            Err(errors) => {
                for line in verify_error_lines(&loaded, &errors) {
                    problems.push(line);
                }
            }
        }
    }
    problems.finish()
}
