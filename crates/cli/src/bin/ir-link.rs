//! `ir-link IN... -o OUT`: links modules (`.irm`, or `.ir` text) into one, lazily (only what
//! the roots reach is read and copied) and independently of the order of the inputs. The
//! output is verified and written atomically; on any problem nothing is written. See
//! `spec/linking.md`. `--emit obj` and `--emit exe` compile the linked module to native code
//! (spec/backends.md) on every core (`--jobs N`), keeping compiled functions in a code cache
//! with `--cache DIR` (a cache that cannot be written is a warning: the build goes on without
//! storing); `--lower-procs` rewrites NOIR procs into functions (irkit-noir).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use irkit_cli::output;
use irkit_cli::report::Problems;
use irkit_core::verify::Nesting;
use irkit_cranelift::{CodegenLevel, CodegenOptions, CodegenStats, RemoteOptions};
use irkit_link::{Gc, LinkErrors, LinkOptions, Stats};

/// The output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Emit {
    /// A binary module.
    Irm,
    /// The canonical text form.
    Ir,
    /// A native object file (Cranelift), whose C `main` runs the entry.
    Obj,
    /// A native executable: the object file linked by the system C compiler (`cc`, or `$CC`).
    Exe,
}

/// How objects (`classalloc`, `instance`) are allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum GcArg {
    /// The C allocator (`calloc`): nothing is ever collected.
    None,
    /// The Boehm-Demers-Weiser collector (`GC_malloc`); `--emit exe` links `-lgc`.
    Boehm,
}

/// How much work native code generation puts into the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Codegen {
    /// Cranelift's optimizations and its backtracking register allocator.
    Optimized,
    /// Compile quickly (no Cranelift optimizations, single-pass register allocation): the
    /// same behaviour, slower code; the counterpart of `llc -O0`.
    Fast,
}

/// Link irkit modules (.irm or .ir) into one module.
#[derive(Parser)]
#[command(name = "ir-link", version)]
struct Args {
    /// The input modules, binary or text, in any order.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The output file (`-` is stdout).
    #[arg(short, long)]
    output: PathBuf,
    /// The output format.
    #[arg(long, value_enum, default_value_t = Emit::Irm)]
    emit: Emit,
    /// The entry point's export name.
    #[arg(long, default_value = "main", value_name = "NAME")]
    entry: String,
    /// Also keep (and reach) the definition exported as NAME (repeatable).
    #[arg(long = "export", value_name = "NAME")]
    exports: Vec<String>,
    /// Partial link: keep every export, allow unresolved imports, no entry point needed.
    #[arg(long)]
    library: bool,
    /// Drop the export names not given with --export or --entry.
    #[arg(long)]
    internalize: bool,
    /// Link reached `stub` definitions instead of refusing them.
    #[arg(long)]
    link_stubs: bool,
    /// Do not copy name hints and source locations (and so, with `--emit obj|exe`, write no
    /// debug information).
    #[arg(long)]
    strip_debug: bool,
    /// With `--emit obj|exe`: write no debug information (DWARF, `.eh_frame`), even when
    /// the module has source locations; also spelled `-g0`.
    #[arg(long)]
    no_debug_info: bool,
    #[command(flatten)]
    text: irkit_cli::input::TextOptions,
    /// Rewrite every NOIR proc of the linked module into an ordinary function (irkit-noir's
    /// lowering) before writing it; native output (`--emit obj|exe`) always does.
    #[arg(long)]
    lower_procs: bool,
    /// Print counts and per-phase times to stderr.
    #[arg(long)]
    stats: bool,
    /// Run every link-time optimization pass (`--devirtualize`, `--inline`).
    #[arg(short = 'O')]
    optimize: bool,
    /// Inline each function into its only call site, fold what became constant, and remove
    /// the definitions nothing uses any more.
    #[arg(long)]
    inline: bool,
    /// Rewrite each indirect call that can only call one function as a direct call of it.
    #[arg(long)]
    devirtualize: bool,
    /// How deep generic specialization may nest before the link fails (polymorphic
    /// recursion).
    #[arg(long, value_name = "N", default_value_t = LinkOptions::default().max_instantiation_depth)]
    max_instantiation_depth: usize,
    /// With `--emit obj|exe`: a native call depth limit (a call made while N activations are
    /// live traps with `stack overflow`, as `ir-run --max-depth N` does); without it, each
    /// thread's stack is the limit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=irkit_backend::MAX_DEPTH as u64))]
    max_depth: Option<u64>,
    /// With `--emit obj|exe`: keep compiled functions in directory DIR (created if missing)
    /// and take them from it when their code cannot have changed; the output is the same
    /// with or without it. A cache that cannot be written is a warning. An
    /// `http(s)://HOST/PREFIX` (Bazel HTTP cache protocol) or `redis://HOST` URL instead
    /// names a remote store shared by many machines.
    #[arg(long, value_name = "DIR|URL")]
    cache: Option<PathBuf>,
    /// With `--emit obj|exe`: a remote store behind the `--cache` directory (read the
    /// directory, then the store; write both): `http(s)://HOST/PREFIX` or `redis://HOST`.
    /// A store that is down, slow or faulty only costs compile time.
    #[arg(long, value_name = "URL")]
    remote_cache: Option<String>,
    /// Authenticate the remote store's records with the key in FILE (keyed BLAKE3): records
    /// without a valid tag are ignored. Without it, anyone who can write to the store can
    /// make every machine reading it run their code.
    #[arg(long, value_name = "FILE")]
    cache_key: Option<PathBuf>,
    /// The longest one request to the remote store may take, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    remote_timeout: u64,
    /// With `--emit obj|exe`: compile on N threads (default: every core); the output is the
    /// same for every N.
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
    /// With `--emit obj|exe`: how much work goes into the native code.
    #[arg(long, value_enum, default_value_t = Codegen::Optimized)]
    codegen: Codegen,
    /// How objects are allocated: `none` (the C allocator, no collection) or `boehm` (the
    /// Boehm-Demers-Weiser collector; `--emit exe` links `-lgc`, an object file needs it
    /// at its own link). Executables only: see spec/linking.md.
    #[arg(long, value_enum, default_value_t = GcArg::None)]
    gc: GcArg,
    /// Which generic functions are compiled once, with dynamic dispatch, instead of cloned per
    /// instance: `specialize` (none), `dynamic` (every one that can be), `auto` (those with
    /// more than 16 instances) or `auto:N`. A `specialize_always` or `dynamic_dispatch`
    /// decoration decides for its generic. Executable links only (spec/linking.md).
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = irkit_cli::link::parse_generics)]
    generics: irkit_link::Generics,
}

fn main() -> ExitCode {
    let args: Args = irkit_cli::start_spelling("-g0", "--no-debug-info");
    let opts = LinkOptions {
        entry: args.entry.clone(),
        exports: args.exports.clone(),
        library: args.library,
        internalize: args.internalize,
        link_stubs: args.link_stubs,
        debug_info: !args.strip_debug,
        // Verified below, beside the encoding when the output is a `.irm` file, beside the
        // code cache's keys when it is native code built with a cache.
        verify: !overlapped(&args) && !keyed_beside(&args),
        max_instantiation_depth: args.max_instantiation_depth,
        devirtualize: args.devirtualize || args.optimize,
        inline: args.inline || args.optimize,
        gc: gc(args.gc),
        generics: args.generics,
    };
    let mut problems = Problems::new();
    let codegen = match codegen_options(&args) {
        Ok(codegen) => codegen,
        Err(e) => {
            problems.push(e);
            return problems.finish();
        }
    };
    let Some(mut linked) =
        irkit_cli::link::link_paths(&args.inputs, &opts, args.text, &mut problems)
    else {
        return problems.finish();
    };
    let t = Instant::now();
    let mut lowered = None;
    // Whether the linked module still needs verifying (beside the code cache's keys).
    let mut unverified = keyed_beside(&args);
    // Lowering procs needs a verified module: one with a proc is verified first, as the link
    // would have.
    if unverified && irkit_noir::has_procs(&linked.module) {
        if let Err(errors) = timed(&mut linked.stats.verify, &linked.module) {
            irkit_cli::link::report_link_errors(&args.inputs, &errors, &mut problems);
            return problems.finish();
        }
        unverified = false;
    }
    // Native code takes no procs: lowering them is a step of the pipeline, run here.
    if !unverified && (args.lower_procs || matches!(args.emit, Emit::Obj | Emit::Exe)) {
        match irkit_noir::lower_procs(&mut linked.module) {
            Ok(procs) => lowered = Some(procs),
            Err(e) => {
                problems.push(format!("error: lowering procs: {e}"));
                return problems.finish();
            }
        }
        // The link verified the module; only a rewrite needs verifying again.
        let rewritten = lowered.as_ref().is_some_and(|p| !p.is_empty());
        if rewritten && let Err(errs) = irkit_core::verify::verify(&linked.module) {
            for e in errs {
                problems.push(format!(
                    "error: internal error: lowered procs do not verify: {e}"
                ));
            }
            return problems.finish();
        }
    }
    if args.stats
        && let Some(procs) = &lowered
    {
        for p in procs {
            irkit_cli::note!(
                "lowered proc:        {} ({} instructions -> {})",
                p.name,
                p.proc_insts,
                p.func_insts
            );
        }
    }
    if matches!(args.emit, Emit::Irm) && args.output.as_os_str() != "-" {
        // Streamed from the encoding into a temporary file beside the output (never the
        // whole file in memory at once). The linked module is verified meanwhile, on the
        // cores the encoding and the writing leave idle (unless procs were rewritten: then it
        // was verified before), and the file put in place only if it verifies: a failed link
        // leaves the output as it was.
        let ((verified, verify_time), staged) = if overlapped(&args) {
            rayon::join(
                || {
                    let v = Instant::now();
                    (irkit_link::verify_linked(&linked.module), v.elapsed())
                },
                || {
                    irkit_format::prepare(&linked.module, Nesting::Established)
                        .and_then(|p| p.stage(&args.output))
                },
            )
        } else {
            let staged = irkit_format::prepare(&linked.module, Nesting::Check)
                .and_then(|p| p.stage(&args.output));
            ((Ok(()), Duration::ZERO), staged)
        };
        linked.stats.verify += verify_time;
        let written = match verified {
            // The staged file is dropped, and with it removed.
            Err(errors) => {
                irkit_cli::link::report_link_errors(&args.inputs, &errors, &mut problems);
                Ok(())
            }
            Ok(()) => staged.and_then(|s| {
                s.commit().map_err(|source| irkit_format::WriteError::Io {
                    path: args.output.display().to_string(),
                    source,
                })
            }),
        };
        match written {
            Ok(()) => {}
            Err(irkit_format::WriteError::Io { source, .. }) => problems.push(format!(
                "error: {}: cannot write: {source}",
                args.output.display()
            )),
            Err(e) => problems.push(format!(
                "error: internal error: cannot encode the linked module: {e}"
            )),
        }
        if args.stats {
            // Verification that ran beside the encoding counts once: the write is what the
            // output took beyond it, so that the phases add up to the time the link took.
            print_stats(&linked.stats, t.elapsed().saturating_sub(verify_time));
        }
        std::mem::forget(linked);
        return problems.finish();
    }
    // Verification that runs beside code generation counts once, as `time verify`: the
    // write is what the output took beyond it.
    let verified_before = linked.stats.verify;
    let write_time = |stats: &Stats| {
        t.elapsed()
            .saturating_sub(stats.verify.saturating_sub(verified_before))
    };
    let bytes = match args.emit {
        Emit::Ir => Ok(irkit_text::print(&linked.module).into_bytes()),
        Emit::Irm => irkit_format::write(&linked.module)
            .map_err(|e| format!("error: internal error: cannot encode the linked module: {e}")),
        Emit::Obj => {
            let opts = codegen.clone();
            let built = if unverified {
                let m = &linked.module;
                let verify_time = &mut linked.stats.verify;
                irkit_cranelift::compile_object_verifying(m, &opts, || timed(verify_time, m))
            } else {
                Ok(irkit_cranelift::compile_object(&linked.module, &opts))
            };
            match built {
                Ok(built) => built
                    .map(|(bytes, stats)| {
                        report_codegen(&stats, args.stats);
                        bytes
                    })
                    .map_err(|e| format!("error: {e}")),
                Err(errors) => {
                    irkit_cli::link::report_link_errors(&args.inputs, &errors, &mut problems);
                    return problems.finish();
                }
            }
        }
        Emit::Exe => {
            let opts = codegen.clone();
            let verify_time = &mut linked.stats.verify;
            let m = &linked.module;
            let verify = unverified.then_some(|| timed(verify_time, m));
            match write_executable(m, &opts, &args.output, verify) {
                Ok(stats) => report_codegen(&stats, args.stats),
                Err(ExeError::Line(e)) => problems.push(e),
                Err(ExeError::Link(errors)) => {
                    irkit_cli::link::report_link_errors(&args.inputs, &errors, &mut problems)
                }
            }
            if args.stats {
                print_stats(&linked.stats, write_time(&linked.stats));
            }
            // As below: the process ends here.
            std::mem::forget(linked);
            return problems.finish();
        }
    };
    match bytes {
        Ok(bytes) => {
            if let Err(e) = output::write_output(&args.output, &bytes) {
                problems.push(format!(
                    "error: {}: cannot write: {e}",
                    args.output.display()
                ));
            }
        }
        Err(e) => problems.push(e),
    }
    if args.stats {
        print_stats(&linked.stats, write_time(&linked.stats));
    }
    // The process ends here: freeing a million instructions one by one would only cost time.
    std::mem::forget(linked);
    problems.finish()
}

/// Builds the executable in a private temporary directory beside `out` (random name, created
/// exclusively; removed with everything in it, the object file included, on every path), then
/// moves it into place: renamed over a regular file (which keeps its permission bits), or
/// copied into a device or FIFO, which is never replaced.
///
/// With `verify` (a module not verified yet), it runs beside the code cache's keys, and
/// nothing is built or written unless it passes.
fn write_executable(
    m: &irkit_core::Module,
    opts: &CodegenOptions,
    out: &Path,
    verify: Option<impl FnOnce() -> Result<(), LinkErrors> + Send>,
) -> Result<CodegenStats, ExeError> {
    if out.as_os_str() == "-" {
        return Err(ExeError::Line(
            "error: --emit exe needs an output file, not stdout".into(),
        ));
    }
    let cannot = |e: &dyn std::fmt::Display| format!("error: {}: cannot write: {e}", out.display());
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(cannot(&format!("directory {} does not exist", dir.display())).into());
    }
    let work = tempfile::Builder::new()
        .prefix(".irkit-exe.")
        .tempdir_in(dir)
        .map_err(|e| cannot(&e))?;
    // Removed on a signal too (rebound after its registration, so removed before it goes).
    let _registered = irkit_io::Temporary::register(work.path());
    let work = work;
    let built = work.path().join("a.out");
    let stats = match verify {
        Some(verify) => irkit_cranelift::build_executable_verifying(m, opts, &built, verify)
            .map_err(ExeError::Link)?,
        None => irkit_cranelift::build_executable_with(m, opts, &built),
    }
    .map_err(|e| format!("error: {e}"))?;
    match std::fs::metadata(out) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => {
            let bytes = std::fs::read(&built).map_err(|e| cannot(&e))?;
            irkit_io::write_file(out, &bytes).map_err(|e| cannot(&e))?;
        }
        existing => {
            if let Ok(meta) = existing {
                std::fs::set_permissions(&built, meta.permissions()).map_err(|e| cannot(&e))?;
            }
            std::fs::rename(&built, out).map_err(|e| cannot(&e))?;
        }
    }
    Ok(stats)
}

/// Why an executable was not built.
enum ExeError {
    /// One line to report.
    Line(String),
    /// The linked program does not verify.
    Link(LinkErrors),
}

impl From<String> for ExeError {
    fn from(line: String) -> ExeError {
        ExeError::Line(line)
    }
}

/// Verifies linked module `m`, adding the time it took to `time`.
fn timed(time: &mut Duration, m: &irkit_core::Module) -> Result<(), LinkErrors> {
    let start = Instant::now();
    let verified = irkit_link::verify_linked(m);
    *time += start.elapsed();
    verified
}

/// Whether native code is built with a code cache: the linked module is then verified beside
/// the cache keys' first part (`irkit_cranelift::compile_object_verifying`), not by the link.
fn keyed_beside(args: &Args) -> bool {
    matches!(args.emit, Emit::Obj | Emit::Exe)
        && (args.cache.is_some() || args.remote_cache.is_some())
}

/// What the code generator needs of the command line: the entry, the call depth limit, the
/// threads and the code cache (an error line if the remote store's URL or the key file is
/// unusable).
fn codegen_options(args: &Args) -> Result<CodegenOptions, String> {
    let as_url = args
        .cache
        .as_deref()
        .and_then(|c| c.to_str())
        .filter(|c| irkit_store::Remote::is_url(c));
    let (cache, url) = match (as_url, &args.remote_cache) {
        (Some(_), Some(_)) => {
            return Err(
                "error: --remote-cache goes behind a --cache directory, not a --cache URL".into(),
            );
        }
        (Some(url), None) => (None, Some(url.to_string())),
        (None, url) => (args.cache.clone(), url.clone()),
    };
    if url.is_none() && args.cache_key.is_some() {
        return Err(
            "error: --cache-key needs a remote cache (--cache URL or --remote-cache URL)".into(),
        );
    }
    let remote = match url {
        Some(url) => {
            let policy = irkit_store::Policy {
                timeout: Duration::from_millis(args.remote_timeout),
                ..irkit_store::Policy::default()
            };
            irkit_store::Remote::open(&url, policy.clone())
                .map_err(|e| format!("error: remote cache {e}"))?;
            let key = match &args.cache_key {
                Some(file) => Some(cache_key(file)?),
                None => None,
            };
            Some(RemoteOptions { url, key, policy })
        }
        None => None,
    };
    Ok(CodegenOptions {
        entry: args.entry.clone(),
        max_depth: args
            .max_depth
            .map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
        jobs: args.jobs.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        cache,
        remote,
        level: match args.codegen {
            Codegen::Optimized => CodegenLevel::Optimized,
            Codegen::Fast => CodegenLevel::Fast,
        },
        libraries: match args.gc {
            GcArg::None => Vec::new(),
            GcArg::Boehm => vec!["gc".to_string()],
        },
        debug_info: !args.no_debug_info,
    })
}

/// The bytes of the key file `file` (`--cache-key`): a file that cannot be read, or is empty,
/// is an error (a build asked to authenticate never falls back to trusting the store).
fn cache_key(file: &Path) -> Result<Vec<u8>, String> {
    let bytes =
        std::fs::read(file).map_err(|e| format!("error: --cache-key {}: {e}", file.display()))?;
    if bytes.is_empty() {
        return Err(format!(
            "error: --cache-key {}: the key file is empty",
            file.display()
        ));
    }
    Ok(bytes)
}

/// The link option of `--gc`.
fn gc(arg: GcArg) -> Gc {
    match arg {
        GcArg::None => Gc::None,
        GcArg::Boehm => Gc::Boehm,
    }
}

/// Prints the code generator's warnings (always) and counts (with `--stats`) to stderr.
fn report_codegen(s: &CodegenStats, stats: bool) {
    for w in &s.warnings {
        irkit_cli::note!("warning: {w}");
    }
    if stats {
        irkit_cli::note!(
            "functions compiled:  {} of {} ({} from the code cache, {} cache entries rejected, {} stored)",
            s.compiled,
            s.functions,
            s.cached,
            s.rejected,
            s.stored
        );
        irkit_cli::note!(
            "loops completed:     {} functions (invariants moved out of loops Cranelift lost)",
            s.hoisted
        );
        if let Some(r) = &s.remote {
            let c = &r.counts;
            irkit_cli::note!(
                "remote cache:        {} functions fetched, {} requests, {} bytes down, {} bytes up, {} records written",
                r.fetched,
                c.requests,
                c.bytes_down,
                c.bytes_up,
                r.records_written
            );
            if let Some(fault) = &c.first_fault {
                irkit_cli::note!(
                    "remote cache {}: {} faults, the first: {fault} (compiled what could not be fetched)",
                    r.url,
                    c.faults
                );
            } else if r.refused > 0 {
                irkit_cli::note!(
                    "remote cache {}: {} records or blobs refused (compiled what they held)",
                    r.url,
                    r.refused
                );
            }
        }
        irkit_cli::note!("time codegen:        {}", ms(s.wall_time));
        irkit_cli::note!(
            "time lower bodies:   {} (summed over threads)",
            ms(s.lower_time)
        );
        irkit_cli::note!(
            "time compile bodies: {} (summed over threads)",
            ms(s.compile_time)
        );
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// Whether the output is a `.irm` file written from the linked module as it is: then the
/// link is verified beside the encoding, not before it (with `--lower-procs` the link and the
/// rewrite are verified before anything is encoded, and other outputs need a verified module
/// to start from).
fn overlapped(args: &Args) -> bool {
    matches!(args.emit, Emit::Irm) && args.output.as_os_str() != "-" && !args.lower_procs
}

fn print_stats(s: &Stats, write: Duration) {
    irkit_cli::note!("inputs:              {}", s.inputs);
    let (available, reached, copied) = (s.defs_available, s.defs_reached, s.defs_copied);
    irkit_cli::note!(
        "definitions:         {available} available, {reached} reached, {copied} copied"
    );
    irkit_cli::note!("instructions copied: {}", s.insts_copied);
    irkit_cli::note!("instantiations:      {}", s.instantiations);
    let sh = &s.shared;
    if sh.generics > 0 || !sh.fallbacks.is_empty() {
        let (g, i, w) = (sh.generics, sh.instances, sh.witness_calls);
        irkit_cli::note!(
            "generics shared:     {g} ({i} instances, {w} calls through witness tables)"
        );
        for why in &sh.fallbacks {
            irkit_cli::note!("note: {why}");
        }
    }
    if s.classes > 0 {
        let (classes, live, lowered) = (s.classes, s.classes_live, s.object_insts);
        irkit_cli::note!("classes laid out:    {classes} ({live} instantiated, {lowered} lowered)");
        let (reached, dropped) = (s.methods_reached, s.methods_dropped);
        let direct = s.methods_devirtualized;
        irkit_cli::note!(
            "methods:             {reached} reached, {dropped} dropped, {direct} direct"
        );
    }
    let (devirtualized, guarded) = (s.devirtualized, s.devirtualized_guarded);
    irkit_cli::note!("calls devirtualized: {devirtualized} ({guarded} guarded)");
    irkit_cli::note!("functions inlined:   {}", s.inlined);
    irkit_cli::note!("copies inlined:      {}", s.inlined_copies);
    irkit_cli::note!("blocks merged:       {}", s.blocks_merged);
    if s.insts_before_optimize > 0 {
        irkit_cli::note!(
            "instructions:        {} before the passes, {} after",
            s.insts_before_optimize,
            s.insts_after_optimize
        );
    }
    irkit_cli::note!("definitions removed: {}", s.removed);
    irkit_cli::note!("time open:           {}", ms(s.open));
    irkit_cli::note!("time resolve:        {}", ms(s.resolve));
    irkit_cli::note!("time reach+copy:     {}", ms(s.reach_copy));
    irkit_cli::note!("time specialize:     {}", ms(s.specialize));
    if s.classes > 0 {
        irkit_cli::note!("time objects:        {}", ms(s.objects));
    }
    irkit_cli::note!("time optimize:       {}", ms(s.optimize));
    irkit_cli::note!("time verify:         {}", ms(s.verify));
    irkit_cli::note!("time write:          {}", ms(write));
    let total = s.open
        + s.resolve
        + s.reach_copy
        + s.specialize
        + s.objects
        + s.optimize
        + s.verify
        + write;
    irkit_cli::note!("time total:          {}", ms(total));
    if let Some(kb) = peak_rss_kb() {
        irkit_cli::note!("peak rss:            {kb} kB");
    }
}

/// Peak resident set size from `/proc/self/status` (`VmHWM`), where available.
fn peak_rss_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
