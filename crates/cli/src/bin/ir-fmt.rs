//! `ir-fmt FILE`: prints a module in canonical form (`-o OUT` writes it atomically; `--check`
//! only reports whether the file already is canonical).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use irkit_cli::report::Problems;
use irkit_cli::{input, output};

/// Re-print an irkit module in canonical text form.
#[derive(Parser)]
#[command(name = "ir-fmt", version)]
struct Args {
    /// The module (`.ir` text; `-` reads stdin).
    file: PathBuf,
    /// Where to write the canonical text (`-` is stdout, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
    /// Write nothing; exit 1 if the file is not already in canonical form.
    #[arg(long, conflicts_with = "output")]
    check: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut problems = Problems::new();
    let Some(loaded) = input::load(&args.file, &mut problems) else {
        return problems.finish();
    };
    let text = irkit_text::print(&loaded.module);
    if args.check {
        if let Some(line) = first_difference(&loaded.source, &text) {
            problems.push(format!(
                "{}:{line}: not in canonical form (run `ir-fmt {0} -o {0}`)",
                loaded.name
            ));
        }
        return problems.finish();
    }
    if let Err(e) = output::write_output(&args.output, text.as_bytes()) {
        problems.push(format!("{}: cannot write: {e}", args.output.display()));
    }
    problems.finish()
}

/// The first line (1-based) where `a` and `b` differ, or `None` if they are equal.
fn first_difference(a: &str, b: &str) -> Option<usize> {
    if a == b {
        return None;
    }
    let mut la = a.lines();
    let mut lb = b.lines();
    let mut n = 1;
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            (None, None) => return Some(n), // differ only in the final newline
            _ => return Some(n),
        }
    }
}
