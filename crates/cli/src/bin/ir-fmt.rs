//! `ir-fmt FILE`: prints a module in canonical form (`-o OUT` writes it atomically; `--check`
//! only reports whether the file already is canonical). Comments and blank lines are kept
//! (spec/text.md, "Comments and formatting").

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use irkit_cli::report::Problems;
use irkit_cli::{input, output};

/// Re-print an irkit module in canonical text form.
#[derive(Parser)]
#[command(name = "ir-fmt", version)]
struct Args {
    /// The module (`.ir` text or `.irm` binary; `-` reads stdin).
    file: PathBuf,
    /// Where to write the canonical text (`-` is stdout, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
    /// Write nothing; exit 1 if the file is not already in canonical form.
    #[arg(long, conflicts_with = "output")]
    check: bool,
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start();
    let mut problems = Problems::new();
    let Some(loaded) = input::load_keeping_comments(&args.file, &mut problems) else {
        return problems.finish();
    };
    if loaded.format == input::Format::Binary {
        return format_binary(&args, &loaded, problems);
    }
    let text = irkit_text::print_with_trivia(&loaded.module, &loaded.trivia);
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

/// A binary input: `--check` asks whether its bytes are those the writer produces (the
/// canonical encoding); otherwise the module is printed as canonical text.
fn format_binary(args: &Args, loaded: &input::Loaded, mut problems: Problems) -> ExitCode {
    if args.check {
        match irkit_format::write(&loaded.module) {
            Ok(bytes) if bytes == loaded.raw => {}
            Ok(_) => problems.push(format!(
                "{}: not in canonical binary form (run `ir-as {0} -o {0}`)",
                loaded.name
            )),
            Err(e) => problems.push(format!("{}: cannot re-encode: {e}", loaded.name)),
        }
        return problems.finish();
    }
    let text = irkit_text::print(&loaded.module);
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
