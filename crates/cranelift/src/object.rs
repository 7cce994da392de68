//! Object files through `cranelift-object`: the whole module, plus the runtime and a C `main`.
//! The function bodies are compiled on every core and may come from a code cache
//! (`crate::parallel`, `crate::cache`); the bytes are the same either way.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::Linkage;
use cranelift_object::{ObjectBuilder, ObjectModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Module};

use crate::cache::{CodeCache, RemoteLayer, RemoteOptions, RemoteStats};
use crate::context::{Ctx, LowerOptions};
use crate::error::cl_err;
use crate::fingerprint::{KeyPrefix, Trees};
pub use crate::isa::CodegenLevel;
use crate::lower::lower_with;
use crate::parallel::Plan;

/// Compiles `m` to the bytes of a relocatable object file for the host. If `m` exports a `main`
/// function, the object's global symbol `main` (C's `int main(void)`) runs it and returns its
/// exit code; without one (a library) there is no `main` symbol. `extern` functions without a
/// body are undefined symbols for the system linker to resolve; those with a body are global
/// symbols under their C names; everything else is local.
pub fn emit_object(m: &Module) -> Result<Vec<u8>, BackendError> {
    emit_object_with_entry(m, "main")
}

/// Like [`emit_object`], with the C `main` running the function exported as `entry` (the
/// linker's `--entry NAME`); without such an export there is no `main` symbol.
pub fn emit_object_with_entry(m: &Module, entry: &str) -> Result<Vec<u8>, BackendError> {
    emit_object_with(m, entry, None)
}

/// Like [`emit_object_with_entry`], with call depth limit `max_depth` (at least 1): a call made
/// while that many IR activations are live is the `stack overflow` trap, as in the interpreter.
/// With or without one, each thread running IR code may use its own stack (its bounds read
/// the first time it runs a check; at most 1 GiB) less a 256 KiB margin.
pub fn emit_object_with(
    m: &Module,
    entry: &str,
    max_depth: Option<usize>,
) -> Result<Vec<u8>, BackendError> {
    let opts = CodegenOptions {
        entry: entry.to_string(),
        max_depth,
        ..CodegenOptions::default()
    };
    compile_object(m, &opts).map(|(bytes, _)| bytes)
}

/// How native code is generated: the entry, the call depth limit, the threads, the code cache.
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    /// The export name of the function the C `main` runs (without such an export there is no
    /// `main` symbol).
    pub entry: String,
    /// The call depth limit (see [`emit_object_with`]); `None`: the stack alone.
    pub max_depth: Option<usize>,
    /// Threads compiling function bodies: `None` for rayon's global pool (every core, or
    /// `RAYON_NUM_THREADS`). The object file is the same whatever the number.
    pub jobs: Option<usize>,
    /// The code cache directory (spec/backends.md, "The code cache"), created if missing;
    /// `None` for no cache. The object file is the same with or without it.
    pub cache: Option<PathBuf>,
    /// A remote store behind the cache directory, or alone (spec/backends.md, "A remote code
    /// cache"); `None` for none. The object file is the same with or without it.
    pub remote: Option<RemoteOptions>,
    /// How much work goes into the code ([`CodegenLevel`]); part of every cache key.
    pub level: CodegenLevel,
    /// Libraries an executable is linked with besides the C library and `libm` (`-lNAME` for
    /// each, in order: `gc` for `ir-link --gc boehm`). Not used for an object file, and no
    /// part of any cache key: it changes no code.
    pub libraries: Vec<String>,
    /// Whether the object file carries debug information (spec/backends.md, "Debug
    /// information": DWARF and `.eh_frame`) when the module has source locations (`loc`
    /// decorations); without them it never does. Not part of any cache key: the cache keeps
    /// what either needs.
    pub debug_info: bool,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            entry: "main".into(),
            max_depth: None,
            jobs: None,
            cache: None,
            remote: None,
            level: CodegenLevel::Optimized,
            libraries: Vec::new(),
            debug_info: true,
        }
    }
}

/// What a native build did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodegenStats {
    /// Function bodies defined.
    pub functions: usize,
    /// Of those, compiled by this build.
    pub compiled: usize,
    /// Of those, taken from the code cache.
    pub cached: usize,
    /// Of those compiled, the functions whose loop invariants irkit moved out of loops that
    /// Cranelift's optimizer lost track of (spec/backends.md, "Code generation level").
    pub hoisted: usize,
    /// Cache entries found but rejected (damaged, foreign, not this function's): compiled
    /// again and rewritten.
    pub rejected: usize,
    /// Cache entries written.
    pub stored: usize,
    /// Time spent lowering the function bodies to Cranelift IR (those not taken from the
    /// cache), summed over the threads.
    pub lower_time: Duration,
    /// Time spent compiling the bodies (or keying them and taking them from the cache),
    /// summed over the threads.
    pub compile_time: Duration,
    /// Wall time of the whole object build.
    pub wall_time: Duration,
    /// Problems that did not stop the build, one line each (a code cache that cannot be
    /// written).
    pub warnings: Vec<String>,
    /// What the build did with the remote store, if there was one.
    pub remote: Option<RemoteStats>,
}

/// Compiles `m` to the bytes of a relocatable object file, as [`emit_object_with`] does,
/// with the function bodies compiled on `opts.jobs` threads and kept in (and taken from) the
/// code cache `opts.cache`. The bytes depend on neither.
pub fn compile_object(
    m: &Module,
    opts: &CodegenOptions,
) -> Result<(Vec<u8>, CodegenStats), BackendError> {
    compile_object_in_chunks(m, opts, crate::parallel::CHUNK)
}

/// [`compile_object`] of a module that has not been verified yet: `verify` (the caller's
/// verification of `m`) runs first, and nothing is compiled unless it passes. With a code
/// cache, what the cache keys take from the irkit module alone (each function's tree,
/// `crate::fingerprint`) is hashed beside it, on the cores verification's serial parts leave
/// idle; that hashing reads any module without failing, and its result is used only once
/// `verify` has passed. The object file is [`compile_object`]'s.
pub fn compile_object_verifying<E: Send>(
    m: &Module,
    opts: &CodegenOptions,
    verify: impl FnOnce() -> Result<(), E> + Send,
) -> Result<Result<(Vec<u8>, CodegenStats), BackendError>, E> {
    build_object(m, opts, crate::parallel::CHUNK, Some(verify))
}

/// [`compile_object`], lowering and compiling chunks of about `chunk` instructions at a time
/// (`crate::parallel::chunks`).
pub(crate) fn compile_object_in_chunks(
    m: &Module,
    opts: &CodegenOptions,
    chunk: usize,
) -> Result<(Vec<u8>, CodegenStats), BackendError> {
    type Verified = fn() -> Result<(), std::convert::Infallible>;
    match build_object(m, opts, chunk, None::<Verified>) {
        Ok(built) => built,
        Err(never) => match never {},
    }
}

/// The object build: `verify`, if given, first (beside the cache keys' trees).
fn build_object<E: Send>(
    m: &Module,
    opts: &CodegenOptions,
    chunk: usize,
    verify: Option<impl FnOnce() -> Result<(), E> + Send>,
) -> Result<Result<(Vec<u8>, CodegenStats), BackendError>, E> {
    let isa = match crate::isa::host_at(true, opts.level) {
        Ok(isa) => isa,
        Err(e) => return Ok(Err(e)),
    };
    let pool = match opts.jobs {
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
            Ok(pool) => Some(pool),
            Err(e) => return Ok(Err(cl_err("starting the compiling threads", e))),
        },
        None => None,
    };
    let cache = open_cache(opts);
    // Everything on the build's threads (verification and the module-wide passes before
    // the bodies too).
    let build = || {
        let trees = match verify {
            Some(verify) if cache.is_some() => {
                let (verified, trees) = rayon::join(verify, || Trees::prepare(m));
                verified?;
                trees
            }
            Some(verify) => {
                verify()?;
                Trees::default()
            }
            None => Trees::default(),
        };
        let start = Instant::now();
        let plan = Plan {
            isa: &*isa,
            pool: pool.as_ref(),
            cache: cache.as_ref().map(|c| (c, KeyPrefix::new(&*isa))),
            trees,
            chunk,
            functions: AtomicUsize::new(0),
            compiled: AtomicUsize::new(0),
            hoisted: AtomicUsize::new(0),
            lower_ns: AtomicU64::new(0),
            compile_ns: AtomicU64::new(0),
        };
        let bytes = emit(
            m,
            (&opts.entry, opts.max_depth, opts.debug_info),
            isa.clone(),
            |ctx, _, defs| crate::parallel::define_bodies(ctx, defs, &plan),
        );
        if bytes.is_ok()
            && let Some(c) = &cache
        {
            c.finish();
        }
        Ok(bytes.map(|bytes| (bytes, stats_of(&plan, cache.as_ref(), start))))
    };
    match &pool {
        Some(pool) => pool.install(build),
        None => build(),
    }
}

/// What the build of `plan`, started at `start`, did.
fn stats_of(plan: &Plan<'_>, cache: Option<&CodeCache>, start: Instant) -> CodegenStats {
    let functions = plan.functions.load(Ordering::Relaxed);
    let compiled = plan.compiled.load(Ordering::Relaxed);
    let mut stats = CodegenStats {
        functions,
        compiled,
        cached: functions.saturating_sub(compiled),
        hoisted: plan.hoisted.load(Ordering::Relaxed),
        lower_time: Duration::from_nanos(plan.lower_ns.load(Ordering::Relaxed)),
        compile_time: Duration::from_nanos(plan.compile_ns.load(Ordering::Relaxed)),
        wall_time: start.elapsed(),
        ..CodegenStats::default()
    };
    if let Some(c) = cache {
        stats.rejected = c.rejected.load(Ordering::Relaxed);
        stats.stored = c.stored.load(Ordering::Relaxed);
        stats.warnings.extend(c.warning());
        stats.remote = c.remote_stats();
    }
    stats
}

/// The code cache of `opts`: its directory, its remote store, both or none. A remote store
/// that cannot be opened (a URL its client refuses) is left out, and said in the warning.
fn open_cache(opts: &CodegenOptions) -> Option<CodeCache> {
    let mut refused = None;
    let remote = opts
        .remote
        .as_ref()
        .and_then(|r| RemoteLayer::open(r).map_err(|e| refused = Some(e)).ok());
    if opts.cache.is_none() && remote.is_none() {
        return None;
    }
    let cache = CodeCache::with(opts.cache.as_deref(), remote);
    if let Some(e) = refused {
        cache.note(&format!("remote code cache {e} (building without it)"));
    }
    Some(cache)
}

/// The object file of `m` with every body compiled as it is lowered, on this thread (the
/// reference the parallel build is tested against).
#[cfg(test)]
pub(crate) fn emit_object_serial(m: &Module, entry: &str) -> Result<Vec<u8>, BackendError> {
    let isa = crate::isa::host(true)?;
    emit(m, (entry, None, true), isa, |ctx, fctx, defs| {
        for &d in defs {
            crate::lower::lower_function(ctx, fctx, d)?;
        }
        Ok(())
    })
}

/// Lowers `m` into an object for `isa`, the bodies defined by `bodies`, and writes it.
fn emit(
    m: &Module,
    (entry, max_depth, debug_info): (&str, Option<usize>, bool),
    isa: OwnedTargetIsa,
    bodies: impl FnOnce(
        &mut Ctx<'_, ObjectModule>,
        &mut FunctionBuilderContext,
        &[Inst],
    ) -> Result<(), BackendError>,
) -> Result<Vec<u8>, BackendError> {
    let target = isa.clone();
    let builder = ObjectBuilder::new(isa, "irkit", cranelift_module::default_libcall_names())
        .map_err(|e| cl_err("object", e))?;
    let opts = LowerOptions {
        entry_symbol: "main",
        entry_linkage: Linkage::Export,
        entry_export: m.find_export(entry).map(|_| entry),
        flush_on_return: false,
        extern_available: &|_| true,
        zero_data: None,
        far_data: false,
        max_depth: max_depth.map(|d| d as u64),
        session: None,
        threads: crate::runtime::Threads::Tls,
        install_fault_handler: true,
        guard_memories: m.find_export(entry).is_some(),
        debug_info,
    };
    let (obj, defined) = lower_with(m, ObjectModule::new(builder), &opts, bodies)?;
    let mut product = obj.finish();
    if debug_info && defined.iter().any(|(d, _)| !d.lines.is_empty()) {
        crate::debug::write(&mut product, m, &defined, &*target)?;
    }
    product
        .emit()
        .map_err(|e| cl_err("writing the object file", e))
}
