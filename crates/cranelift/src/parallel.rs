//! Generating the function bodies of an object file on every core, with the same bytes as a
//! serial build whatever the number of threads and with or without the code cache
//! (spec/backends.md, "Parallel code generation").
//!
//! Everything module-wide is declared before any body ([`Ctx`]: functions, globals, the runtime),
//! and lowering only reads it; the one thing lowering used to declare, trap messages, it names by
//! placeholder (`crate::names`). So each function is taken, on whichever thread, from the code
//! cache (its key computed from the irkit function, `crate::fingerprint`: a hit is neither lowered
//! nor compiled) or lowered and compiled with that thread's own Cranelift state. The functions go
//! in chunks of about [`CHUNK`] instructions, a fixed budget (never derived from the thread count;
//! [`chunks`]); once a chunk is done, its functions are defined in the object in module order, each
//! function's trap messages declared just before it, as the serial build does. What enters the
//! object, and in which order, is thus the same for every thread count and with or without a cache.
//! Errors are those of the serial build: the first failing function in module order.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{FuncId, Module as ClModule, ModuleReloc, ModuleRelocTarget};
use cranelift_object::ObjectModule;
use irkit_backend::BackendError;
use irkit_core::Inst;
use rayon::prelude::*;

use crate::cache::{CodeCache, Entry};
use crate::code::Code;
use crate::context::Ctx;
use crate::error::cl_err;
use crate::error::compile_error;
use crate::fingerprint::{Fingerprint, KeyPrefix, Keyer, Trees};
use crate::lower::{build_function, defined_function};
use crate::names;
use crate::site_table;
use irkit_core::place::verified_def_label;

/// The instructions of the functions generated together before they are defined: enough
/// for a module of a few hundred functions to be one chunk (each chunk ends with a wait for
/// its slowest function and a serial definition of all of them), few enough that the machine
/// code waiting to be defined stays small.
pub(crate) const CHUNK: usize = 1 << 16;

/// How the bodies are compiled.
pub(crate) struct Plan<'a> {
    /// The target.
    pub(crate) isa: &'a dyn TargetIsa,
    /// The pool to compile on (`None`: rayon's global pool).
    pub(crate) pool: Option<&'a rayon::ThreadPool>,
    /// The code cache and the key prefix of this target, if there is one.
    pub(crate) cache: Option<(&'a CodeCache, KeyPrefix)>,
    /// The functions' trees computed ahead (from the module being compiled), if any.
    pub(crate) trees: Trees,
    /// Instructions per chunk ([`CHUNK`]; smaller in tests).
    pub(crate) chunk: usize,
    /// Function bodies defined.
    pub(crate) functions: AtomicUsize,
    /// Of those, compiled (not taken from the cache).
    pub(crate) compiled: AtomicUsize,
    /// Of those, compiled with irkit's loop-invariant code motion (`crate::licm`).
    pub(crate) hoisted: AtomicUsize,
    /// Nanoseconds spent lowering to Cranelift IR, summed over the threads.
    pub(crate) lower_ns: AtomicU64,
    /// Nanoseconds spent compiling, keying and reading the cache, summed over the threads.
    pub(crate) compile_ns: AtomicU64,
}

/// What a thread keeps from one function to the next: Cranelift's builder and compilation
/// contexts, which keep their allocations when reused.
#[derive(Default)]
struct Scratch {
    /// The builder's state.
    fctx: FunctionBuilderContext,
    /// The last function's context, once compiled.
    code: Option<cranelift_codegen::Context>,
}

/// A function's code, ready to define.
struct Done {
    /// Its symbol.
    id: FuncId,
    /// Its definition.
    def: Inst,
    /// Its name, for errors.
    place: String,
    /// The code.
    code: Code,
    /// Its relocations in this build, its message table left at the placeholder
    /// (`names::resolve`).
    relocs: Vec<ModuleReloc>,
    /// Its trap messages.
    messages: Vec<String>,
    /// Its trap sites, found on the thread that generated it (`crate::site_table::find`), if
    /// the build has a site table.
    sites: Option<site_table::Found>,
}

/// Generates and defines the bodies `defs` (in module order) into `ctx`'s object.
pub(crate) fn define_bodies(
    ctx: &mut Ctx<'_, ObjectModule>,
    defs: &[Inst],
    plan: &Plan<'_>,
) -> Result<(), BackendError> {
    let mut run = || {
        let keyer = plan
            .cache
            .as_ref()
            .map(|(cache, prefix)| (*cache, Keyer::new(ctx, prefix.clone(), &plan.trees)));
        let keys = match (&keyer, &plan.cache) {
            (Some((cache, keyer)), Some((_, prefix))) if cache.has_remote() => {
                prefetched(ctx, defs, cache, keyer, prefix)
            }
            _ => Vec::new(),
        };
        for range in chunks(ctx.m, defs, plan.chunk) {
            let shared: &Ctx<'_, ObjectModule> = ctx;
            let keyer = keyer.as_ref().map(|(c, k)| (*c, k));
            let keys = keys.get(range.start..).unwrap_or_default();
            let first = range.start;
            let done: Vec<Result<Option<Done>, BackendError>> = defs[range]
                .par_iter()
                .enumerate()
                .map_init(Scratch::default, |scratch, (i, &d)| {
                    let order = u32::try_from(first + i).unwrap_or(u32::MAX);
                    let known = keys.get(i).map(Option::as_ref);
                    let mut done = generate(shared, scratch, (d, order), plan, keyer, known)?;
                    if let Some(d) = &mut done
                        && shared.sites.is_some()
                    {
                        let (code, messages) = (&d.code, &d.messages);
                        let found =
                            site_table::find(shared, d.def, messages, &code.lines, &code.traps);
                        d.sites = Some(found);
                    }
                    Ok(done)
                })
                .collect();
            for d in done {
                if let Some(d) = d? {
                    define(ctx, d)?;
                    plan.functions.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    };
    // Every thread that keyed a function keeps a numbering table the size of the module's
    // arena: freed when the build is over (also after an error), not when the threads end.
    let mut run = || {
        let result = run();
        if plan.cache.is_some() {
            crate::fingerprint::release_numbers();
        }
        result
    };
    match plan.pool {
        Some(pool) => pool.install(run),
        None => run(),
    }
}

/// `defs` split, in order, into chunks of at least one definition whose instructions (the
/// children of their blocks) add up to at most `budget` unless one definition alone has more:
/// a function of the module, so the same chunks for every thread count.
fn chunks(m: &irkit_core::Module, defs: &[Inst], budget: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut held) = (0, 0usize);
    for (i, &d) in defs.iter().enumerate() {
        let size: usize = m
            .blocks(d)
            .map(|b| m.children(b).len())
            .sum::<usize>()
            .max(1);
        if i > start && held.saturating_add(size) > budget {
            out.push(start..i);
            (start, held) = (i, 0);
        }
        held = held.saturating_add(size);
    }
    if start < defs.len() {
        out.push(start..defs.len());
    }
    out
}

/// The keys of the functions among `defs` (`None` for a definition that is not a function
/// or cannot be keyed), computed on every core before any is compiled, and what the remote
/// store behind `cache` holds of them fetched (`CodeCache::prefetch`).
fn prefetched(
    ctx: &Ctx<'_, ObjectModule>,
    defs: &[Inst],
    cache: &CodeCache,
    keyer: &Keyer<'_>,
    prefix: &KeyPrefix,
) -> Vec<Option<Fingerprint>> {
    let keys: Vec<Option<Fingerprint>> = defs
        .par_iter()
        .map(|&d| match defined_function(ctx, d) {
            Ok(Some(_)) => keyer.fingerprint(ctx, d),
            _ => None,
        })
        .collect();
    let functions: Vec<(String, crate::fingerprint::Key)> = defs
        .iter()
        .zip(&keys)
        .filter_map(|(&d, fp)| Some((verified_def_label(ctx.m, d), fp.as_ref()?.key)))
        .collect();
    cache.prefetch(&prefix.0, &functions);
    keys
}

/// Function definition `d`'s code: from the cache, or lowered and compiled here (and
/// stored); `None` if the module does not define it. `order` is its position among the
/// bodies defined (the module order the next pack keeps); `known`, its key if computed ahead
/// (`Some(None)`: it has none).
fn generate(
    ctx: &Ctx<'_, ObjectModule>,
    scratch: &mut Scratch,
    (d, order): (Inst, u32),
    plan: &Plan<'_>,
    keyer: Option<(&CodeCache, &Keyer<'_>)>,
    known: Option<Option<&Fingerprint>>,
) -> Result<Option<Done>, BackendError> {
    let Some(id) = defined_function(ctx, d)? else {
        return Ok(None);
    };
    let keyed = keyer.and_then(|(cache, keyer)| {
        let _time = Elapsed(Instant::now(), &plan.compile_ns);
        let fp = match known {
            Some(known) => known.cloned()?,
            None => keyer.fingerprint(ctx, d)?,
        };
        Some((cache, fp))
    });
    if let Some((cache, fp)) = &keyed
        && let Some(done) = cached(ctx, cache, fp, id, (d, order), plan)
    {
        return Ok(Some(done));
    }
    let built = {
        let _time = Elapsed(Instant::now(), &plan.lower_ns);
        let code = std::mem::take(&mut scratch.code).unwrap_or_else(|| ctx.cl.make_context());
        build_function(ctx, &mut scratch.fctx, d, code)?
    };
    let Some(mut built) = built else {
        return Ok(None);
    };
    let _time = Elapsed(Instant::now(), &plan.compile_ns);
    // The settings are the level's, or a large function's (`crate::isa::is_large`: a pure
    // function of the lowered body, so the cache key needs nothing for the choice).
    let (isa, how, compiled) = crate::isa::compile(&mut built.code, plan.isa, &*ctx.large)
        .map_err(|e| compile_error(&built.place, e))?;
    if how == crate::isa::Compiled::Hoisted {
        plan.hoisted.fetch_add(1, Ordering::Relaxed);
    }
    let code = Code::new(&compiled, isa);
    plan.compiled.fetch_add(1, Ordering::Relaxed);
    let refs = keyed.as_ref().map(|(_, fp)| &fp.refs[..]);
    let names = names::names_of(ctx, &built.code.func, refs);
    scratch.code = Some(built.code);
    let entry = Entry {
        code,
        names,
        messages: built.messages,
    };
    let relocs = relocs_of(ctx, &entry, refs.unwrap_or(&[]), id).ok_or_else(|| {
        BackendError::Codegen(format!(
            "{}: internal error: a relocation names no external name of the function",
            built.place
        ))
    })?;
    if let Some((cache, fp)) = &keyed {
        cache.put(order, &fp.key, &entry);
    }
    Ok(Some(Done {
        id,
        def: d,
        place: built.place,
        code: entry.code,
        relocs,
        messages: entry.messages,
        sites: None,
    }))
}

/// The relocations of `entry`'s code for function `id` in this build (`refs` its reference
/// list), its message table left at the placeholder; `None` if a name does not resolve.
fn relocs_of(
    ctx: &Ctx<'_, ObjectModule>,
    entry: &Entry,
    refs: &[Inst],
    id: FuncId,
) -> Option<Vec<ModuleReloc>> {
    let tables = names::message_tables(&entry.messages);
    names::resolve(ctx, &entry.names, refs, tables)
        .and_then(|targets: Vec<ModuleRelocTarget>| entry.code.module_relocs(&targets, id))
}

/// Function `d`'s code from the cache, if a valid entry of `fp`'s key is there and its names
/// resolve in this build (else counted as rejected).
fn cached(
    ctx: &Ctx<'_, ObjectModule>,
    cache: &CodeCache,
    fp: &Fingerprint,
    id: FuncId,
    (d, order): (Inst, u32),
    plan: &Plan<'_>,
) -> Option<Done> {
    let _time = Elapsed(Instant::now(), &plan.compile_ns);
    let (entry, held) = cache.get(&fp.key)?;
    let relocs = Some(&entry)
        .filter(|e| e.code.fits_target(plan.isa))
        .and_then(|e| relocs_of(ctx, e, &fp.refs, id));
    let Some(relocs) = relocs else {
        cache.reject();
        return None;
    };
    cache.keep(order, &fp.key, held);
    Some(Done {
        id,
        def: d,
        place: verified_def_label(ctx.m, d),
        code: entry.code,
        relocs,
        messages: entry.messages,
        sites: None,
    })
}

/// Declares `d`'s message table, then defines its code.
fn define(ctx: &mut Ctx<'_, ObjectModule>, mut d: Done) -> Result<(), BackendError> {
    let table = names::declare_messages(ctx, &d.messages)?;
    names::bind_message_relocs(&mut d.relocs, table);
    ctx.cl
        .define_function_bytes(d.id, d.code.alignment, &d.code.bytes, &d.relocs)
        .map_err(|e| cl_err(&d.place, e))?;
    if let Some(found) = d.sites.take() {
        site_table::note(ctx, d.id, (table, &d.messages), found);
    }
    if ctx.debug.is_some() {
        ctx.keep_defined(crate::debug::Defined {
            id: d.id,
            def: Some(d.def),
            size: u32::try_from(d.code.bytes.len()).unwrap_or(u32::MAX),
            lines: d.code.lines,
            cfa: d.code.cfa,
        });
    }
    Ok(())
}

/// Adds the time since its start to its counter when dropped.
struct Elapsed<'a>(Instant, &'a AtomicU64);

impl Drop for Elapsed<'_> {
    fn drop(&mut self) {
        let ns = u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.1.fetch_add(ns, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use crate::object::{compile_object_in_chunks, emit_object_serial};
    use crate::{CodegenOptions, CodegenStats};
    use irkit_core::Module;
    use irkit_testgen::{Config, Entropy, module};

    fn generated(seed: u64) -> Module {
        let cfg = Config {
            dangling_imports: false,
            generics: false,
            ..Config::default()
        };
        let mut m = module(&mut Entropy::from_seed(seed), &cfg);
        irkit_noir::lower_procs(&mut m).expect("generated procs lower");
        m
    }

    fn build(m: &Module, jobs: usize, chunk: usize) -> (Vec<u8>, CodegenStats) {
        let opts = CodegenOptions {
            jobs: Some(jobs),
            ..CodegenOptions::default()
        };
        compile_object_in_chunks(m, &opts, chunk).expect("compiles")
    }

    #[test]
    fn the_object_is_the_serial_builds_whatever_the_threads_and_chunks() {
        let mut functions = 0;
        for seed in 0..40 {
            let m = generated(seed);
            let serial = emit_object_serial(&m, "main").expect("compiles");
            // Budgets of one function per chunk, of several, and of the whole module.
            for (jobs, chunk) in [
                (1, super::CHUNK),
                (1, 1),
                (2, 2),
                (4, 60),
                (3, super::CHUNK),
            ] {
                let (bytes, stats) = build(&m, jobs, chunk);
                assert!(
                    bytes == serial,
                    "seed {seed}: {jobs} threads, chunks of {chunk}: another object"
                );
                assert_eq!(stats.compiled, stats.functions);
                functions = stats.functions.max(functions);
            }
        }
        // The modules had several chunks' worth of functions.
        assert!(functions > 3, "at most {functions} functions per module");
    }

    /// Random modules built cold into a cache, then warm (nothing lowered), then warm into
    /// another module sharing most functions: every object is the serial build's.
    #[test]
    fn the_object_is_the_serial_builds_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let with_cache = |m: &Module, jobs| {
            let opts = CodegenOptions {
                jobs: Some(jobs),
                cache: Some(dir.path().to_path_buf()),
                ..CodegenOptions::default()
            };
            compile_object_in_chunks(m, &opts, 3).expect("compiles")
        };
        let mut hits = 0;
        for seed in 0..24 {
            let m = generated(seed);
            let serial = emit_object_serial(&m, "main").expect("compiles");
            let (cold, _) = with_cache(&m, 2);
            let (warm, s) = with_cache(&m, 3);
            assert!(cold == serial && warm == serial, "seed {seed}");
            assert_eq!((s.compiled, s.rejected), (0, 0), "seed {seed}: {s:?}");
            hits += s.cached;
        }
        assert!(hits > 24, "{hits} functions from the cache");
    }

    /// Keys whose trees were hashed beside verification are the keys computed after it: a
    /// cache filled by one build serves every function of the other, and the objects agree.
    #[test]
    fn keys_hashed_beside_verification_are_the_same_keys() {
        for seed in 0..12 {
            let m = generated(seed);
            let dir = tempfile::tempdir().unwrap();
            let opts = CodegenOptions {
                jobs: Some(2),
                cache: Some(dir.path().to_path_buf()),
                ..CodegenOptions::default()
            };
            let (cold, _) = crate::compile_object(&m, &opts).expect("compiles");
            let verify = || irkit_core::verify::verify(&m).map_err(|_| ());
            let (warm, s) = crate::compile_object_verifying(&m, &opts, verify)
                .expect("verifies")
                .expect("compiles");
            assert!(cold == warm, "seed {seed}");
            assert_eq!(
                (s.compiled, s.cached),
                (0, s.functions),
                "seed {seed}: {s:?}"
            );
        }
    }

    /// A module that does not verify: the keys' trees are hashed beside verification without
    /// failing, then nothing is compiled or stored.
    #[test]
    fn a_module_that_does_not_verify_compiles_nothing() {
        // Each parses, and breaks a rule of spec/ir.md: a result of the wrong type; a call
        // without its argument.
        let texts = [
            "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %b: i32 = iadd i64 1, i64 2\n  ret %b\n}\n",
            "@f: fn(i32) -> i32 = func {\n^entry(%x: i32):\n  ret %x\n}\n\n#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i32 = call @f()\n  ret %r\n}\n",
        ];
        for text in texts {
            let m = irkit_text::parse(text, "t.ir").expect("parses");
            let errors = irkit_core::verify::verify(&m).err();
            assert!(errors.is_some(), "verifies: {text}");
            let dir = tempfile::tempdir().unwrap();
            let opts = CodegenOptions {
                cache: Some(dir.path().to_path_buf()),
                ..CodegenOptions::default()
            };
            let r = crate::compile_object_verifying(&m, &opts, || {
                irkit_core::verify::verify(&m).map_err(|_| ())
            });
            assert!(matches!(r, Err(())), "{text}");
            let stored = walk_files(dir.path());
            assert_eq!(stored, 0, "entries stored for {text}");
        }
    }

    fn walk_files(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() { walk_files(&p) } else { 1 }
                })
                .sum()
        })
    }

    #[test]
    fn chunks_hold_whole_functions_up_to_the_budget() {
        // Functions of 2, 4, 1 and 3 instructions (their blocks' children), a global between.
        let text = "@a: fn() -> i32 = func {\n^entry:\n  %x: i32 = iadd i32 1, i32 2\n  ret %x\n}\n\n\
            @b: fn(i32) -> i32 = func {\n^entry(%p: i32):\n  %x: i32 = iadd %p, i32 2\n  jump ^next\n\
            ^next:\n  ret %x\n}\n\n\
            @g: i32 = global_var i32 0\n\n\
            @c: fn() -> i32 = func {\n^entry:\n  ret i32 3\n}\n\n\
            @d: fn() -> i32 = func {\n^entry:\n  %x: i32 = iadd i32 1, i32 2\n  %y: i32 = iadd %x, %x\n  ret %y\n}\n";
        let m = irkit_text::parse(text, "t.ir").expect("parses");
        let defs = m.top_level().to_vec();
        assert_eq!(defs.len(), 5);
        let chunks = |budget| super::chunks(&m, &defs, budget);
        // Each function alone when none fits beside another; one over the budget stays whole.
        assert_eq!(chunks(1), vec![0..1, 1..2, 2..3, 3..4, 4..5]);
        assert_eq!(chunks(6), vec![0..2, 2..5]);
        assert_eq!(chunks(7), vec![0..3, 3..5]);
        assert_eq!(chunks(super::CHUNK), vec![0..5]);
        assert!(super::chunks(&m, &[], 8).is_empty());
    }

    #[test]
    fn the_first_error_is_the_serial_builds() {
        // A function whose frame is too large fails in lowering; the serial build reports it.
        let text = "@a: fn() -> i32 = func {\n^entry:\n  ret i32 1\n}\n\n\
            @big: fn() -> i32 = func {\n^entry:\n  %p: ptr = stackalloc [2147483648 x i8]\n  ret i32 2\n}\n\n\
            #[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  %r: i32 = call @a()\n  ret %r\n}\n";
        let m = irkit_text::parse(text, "t.ir").expect("parses");
        let serial = emit_object_serial(&m, "main").unwrap_err().to_string();
        for chunk in [1, 2, 64] {
            let opts = CodegenOptions {
                jobs: Some(2),
                ..CodegenOptions::default()
            };
            let e = compile_object_in_chunks(&m, &opts, chunk).unwrap_err();
            assert_eq!(e.to_string(), serial);
        }
        assert!(serial.contains("@big"), "{serial}");
    }
}
