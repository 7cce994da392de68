//! `ir-run FILES...`: links the modules (`.irm` or `.ir`), then runs the function exported as
//! `main`, natively through the Cranelift JIT, or with `--interp` in the reference interpreter.
//!
//! Exit code: `main`'s return value (as the OS truncates it, to 8 bits), or `n` if the program
//! calls `exit(n)`; 70 if it traps, after one line on stderr naming the trap kind, function,
//! block and instruction; 1 if the inputs do not link or the back end cannot compile them; 2 for
//! usage errors. See spec/backends.md.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use irkit_backend::{Outcome, RunOptions};
use irkit_cli::backends::{self, BACKENDS};
use irkit_cli::report::Problems;
use irkit_link::LinkOptions;

/// Link irkit modules and run their `main`.
#[derive(Parser)]
#[command(name = "ir-run", version)]
struct Args {
    /// The input modules, binary or text, in any order.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Run in the reference interpreter instead of native code (`--backend interp`).
    #[arg(long, conflicts_with = "backend")]
    interp: bool,
    /// The back end: `jit` (native code, the default) or `interp`.
    #[arg(long, default_value = "jit", value_parser = clap::builder::PossibleValuesParser::new(BACKENDS))]
    backend: String,
    /// The entry point's export name.
    #[arg(long, default_value = "main", value_name = "NAME")]
    entry: String,
    /// Link reached `stub` definitions instead of refusing them.
    #[arg(long)]
    link_stubs: bool,
    #[command(flatten)]
    text: irkit_cli::input::TextOptions,
    /// Run every link-time optimization pass before running (as `ir-link -O`).
    #[arg(short = 'O')]
    optimize: bool,
    /// With the interpreter: stop after N executed instructions, with the trap `fuel
    /// exhausted` (exit 70), so that a program that does not end cannot hang the tool.
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,
    /// A call depth limit for every back end: a call made while N activations are live is
    /// the trap `stack overflow (call depth limit N)` (exit 70) at the same call everywhere.
    /// Without it, native code is limited by each thread's stack (`stack overflow (native
    /// stack exhausted)`) and the interpreter by 1,000,000 frames.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=irkit_backend::MAX_DEPTH as u64))]
    max_depth: Option<u64>,
    /// With the JIT: append each compiled function's address, size and name to
    /// `/tmp/perf-PID.map`, so that `perf report` names the program's functions.
    #[arg(long)]
    perf_map: bool,
    /// How objects are allocated: only `none` (the C allocator) runs here; `boehm` is refused
    /// (the collector would not see the JIT's globals and thread: build an executable with
    /// `ir-link --gc boehm --emit exe`).
    #[arg(long, default_value = "none", value_parser = clap::builder::PossibleValuesParser::new(["none", "boehm"]))]
    gc: String,
    /// Which generic functions are compiled once, with dynamic dispatch, instead of cloned per
    /// instance: `specialize`, `dynamic`, `auto` or `auto:N` (as `ir-link --generics`).
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = irkit_cli::link::parse_generics)]
    generics: irkit_link::Generics,
}

fn main() -> ExitCode {
    irkit_cli::threads::use_main_thread();
    irkit_cli::signals::guard_inputs();
    let args = Args::parse();
    if args.gc == "boehm" {
        irkit_cli::note!(
            "error: --gc boehm is for executables (ir-link --gc boehm --emit exe): the collector \
             does not scan the JIT's globals or the thread it runs the program on, nor the \
             interpreter's memory"
        );
        return ExitCode::from(2);
    }
    let opts = LinkOptions {
        entry: args.entry.clone(),
        link_stubs: args.link_stubs,
        devirtualize: args.optimize,
        inline: args.optimize,
        verify: true,
        generics: args.generics,
        ..LinkOptions::default()
    };
    let mut problems = Problems::new();
    let Some(mut linked) =
        irkit_cli::link::link_paths(&args.inputs, &opts, args.text, &mut problems)
    else {
        return problems.finish();
    };
    let name = if args.interp { "interp" } else { &args.backend };
    let Some(backend) = backends::backend(name) else {
        problems.push(format!("error: no back end called {name}"));
        return problems.finish();
    };
    // A back end that does not run procs (native code) gets them lowered to functions first:
    // an explicit step of the pipeline (spec/backends.md).
    if !backend.runs_procs()
        && let Err(e) = irkit_noir::lower_procs(&mut linked.module)
    {
        problems.push(format!("error: lowering procs: {e}"));
        return problems.finish();
    }
    let run = RunOptions {
        entry: args.entry,
        fuel: args.fuel,
        max_depth: args
            .max_depth
            .map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
        perf_map: args.perf_map,
    };
    let outcome = backend.run(&linked.module, &run);
    let _ = std::io::stdout().flush();
    match outcome {
        Ok(Outcome::Exited(code)) => std::process::exit(code),
        Ok(t @ Outcome::Trapped { .. }) => {
            if let Outcome::Trapped { message, .. } = &t {
                irkit_cli::note!("{message}");
            }
            std::process::exit(t.exit_code())
        }
        Err(e) => {
            problems.push(format!("error: {} back end: {e}", backend.name()));
            problems.finish()
        }
    }
}
