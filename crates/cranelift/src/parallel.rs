//! Compiling the function bodies of an object file on every core, with the same bytes as a
//! serial build whatever the number of threads (spec/backends.md, "Parallel code
//! generation").
//!
//! Lowering to Cranelift IR needs the module-wide state ([`Ctx`]: declarations, trap
//! messages) and stays on one thread, in module order. The functions are taken in chunks of
//! [`CHUNK`], a fixed number (never derived from the thread count): while the pool compiles
//! chunk *k* (each function on whichever thread, with that thread's own Cranelift state, or
//! taken from the code cache), chunk *k + 1* is lowered; then chunk *k*'s code is defined in
//! the object, in module order. What enters the object, and in which order, is thus the same
//! for every thread count, and at most two chunks of Cranelift functions are held at once.
//! Errors are those of the serial build: the first failing function in module order.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{FuncId, Module as ClModule, ModuleReloc};
use cranelift_object::ObjectModule;
use irkit_backend::BackendError;
use irkit_core::Inst;
use rayon::prelude::*;

use crate::cache::CodeCache;
use crate::code::Code;
use crate::context::Ctx;
use crate::error::cl_err;
use crate::fingerprint::{self, KeyPrefix};
use crate::lower::{Built, build_function, compile_error};

/// Functions lowered (and then compiled) together.
pub(crate) const CHUNK: usize = 64;

/// How the bodies are compiled.
pub(crate) struct Plan<'a> {
    /// The target.
    pub(crate) isa: &'a dyn TargetIsa,
    /// The pool to compile on (`None`: rayon's global pool).
    pub(crate) pool: Option<&'a rayon::ThreadPool>,
    /// The code cache and the key prefix of this target, if there is one.
    pub(crate) cache: Option<(&'a CodeCache, KeyPrefix)>,
    /// Functions per chunk ([`CHUNK`]; smaller in tests).
    pub(crate) chunk: usize,
    /// Function bodies defined.
    pub(crate) functions: AtomicUsize,
    /// Of those, compiled (not taken from the cache).
    pub(crate) compiled: AtomicUsize,
    /// Nanoseconds spent lowering to Cranelift IR (one thread).
    pub(crate) lower_ns: AtomicU64,
    /// Nanoseconds spent compiling or reading the cache, summed over the threads.
    pub(crate) compile_ns: AtomicU64,
}

/// A compiled function ready to define: its code and relocations for `cranelift-module`.
struct Ready {
    alignment: u64,
    bytes: Vec<u8>,
    relocs: Vec<ModuleReloc>,
}

/// Lowers, compiles and defines the bodies `defs` (in module order) into `ctx`'s object.
pub(crate) fn define_bodies(
    ctx: &mut Ctx<'_, ObjectModule>,
    fctx: &mut FunctionBuilderContext,
    defs: &[Inst],
    plan: &Plan<'_>,
) -> Result<(), BackendError> {
    let mut run = || {
        let mut chunks = defs.chunks(plan.chunk.max(1));
        let (mut pending, mut lower_err) =
            lower_chunk(ctx, fctx, chunks.next().unwrap_or(&[]), plan);
        loop {
            let next = if lower_err.is_none() {
                chunks.next()
            } else {
                None
            };
            let (ready, lowered) = rayon::join(
                || compile_chunk(plan, &mut pending),
                || next.map(|c| lower_chunk(ctx, fctx, c, plan)),
            );
            for (b, r) in pending.iter().zip(ready) {
                let r = r?;
                ctx.cl
                    .define_function_bytes(b.id, r.alignment, &r.bytes, &r.relocs)
                    .map_err(|e| cl_err(&b.place, e))?;
            }
            plan.functions.fetch_add(pending.len(), Ordering::Relaxed);
            if let Some(e) = lower_err {
                return Err(e);
            }
            match lowered {
                Some((p, e)) => (pending, lower_err) = (p, e),
                None => return Ok(()),
            }
        }
    };
    match plan.pool {
        Some(pool) => pool.install(run),
        None => run(),
    }
}

/// Lowers `defs` in order, stopping at the first error (returned beside what was lowered
/// before it, which is still compiled and defined first, as a serial build would).
fn lower_chunk(
    ctx: &mut Ctx<'_, ObjectModule>,
    fctx: &mut FunctionBuilderContext,
    defs: &[Inst],
    plan: &Plan<'_>,
) -> (Vec<Built>, Option<BackendError>) {
    let _time = Elapsed(Instant::now(), &plan.lower_ns);
    let mut out = Vec::with_capacity(defs.len());
    for &d in defs {
        match build_function(ctx, fctx, d) {
            Ok(Some(b)) => out.push(b),
            Ok(None) => {}
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

/// Compiles (or finds in the cache) every function of `chunk`, in parallel; the results are
/// in `chunk`'s order. Each Cranelift function is cleared once compiled.
fn compile_chunk(plan: &Plan<'_>, chunk: &mut [Built]) -> Vec<Result<Ready, BackendError>> {
    chunk
        .par_iter_mut()
        .map(|b| {
            let _time = Elapsed(Instant::now(), &plan.compile_ns);
            let r = compile_one(plan, b);
            b.code.clear();
            r
        })
        .collect()
}

fn compile_one(plan: &Plan<'_>, b: &mut Built) -> Result<Ready, BackendError> {
    let key = plan
        .cache
        .as_ref()
        .map(|(cache, prefix)| (*cache, fingerprint::key(prefix, &b.code.func)));
    if let Some((cache, key)) = &key
        && let Some(code) = cache.get(key)
    {
        match ready(code, b, b.id) {
            Some(r) => return Ok(r),
            None => cache.reject(),
        }
    }
    let compiled = b
        .code
        .compile(plan.isa, &mut ControlPlane::default())
        .map_err(|e| compile_error(&b.place, e.inner))?;
    let code = Code::new(compiled);
    plan.compiled.fetch_add(1, Ordering::Relaxed);
    if let Some((cache, key)) = &key {
        cache.put(key, &code);
    }
    ready(code, b, b.id).ok_or_else(|| {
        BackendError::Codegen(format!(
            "{}: internal error: a relocation names no external name of the function",
            b.place
        ))
    })
}

/// Adds the time since its start to its counter when dropped.
struct Elapsed<'a>(Instant, &'a AtomicU64);

impl Drop for Elapsed<'_> {
    fn drop(&mut self) {
        let ns = u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.1.fetch_add(ns, Ordering::Relaxed);
    }
}

/// `code` as function `id` of `b` defines it; `None` if its relocations do not fit `b`'s
/// name table.
fn ready(code: Code, b: &Built, id: FuncId) -> Option<Ready> {
    let relocs = code.module_relocs(&b.code.func, id)?;
    Some(Ready {
        alignment: code.alignment,
        bytes: code.bytes,
        relocs,
    })
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
            for (jobs, chunk) in [(1, super::CHUNK), (1, 1), (2, 2), (4, 3), (3, super::CHUNK)] {
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
