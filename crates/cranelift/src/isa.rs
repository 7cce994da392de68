//! The host target and the Cranelift settings every compilation uses, and the one choice made
//! per function: a large function is compiled without Cranelift's optimizations
//! ([`is_large`], [`for_function`]; spec/backends.md, "Code generation level").

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir;
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{CodegenError, CompiledCode};
use cranelift_module::{FuncId, Module as ClModule, ModuleReloc};
use irkit_backend::BackendError;

/// A function of more segments (blocks and calls, [`segments`]) than this whose segments
/// times instructions pass [`LARGE_EXTENT`] is large ([`is_large`]).
pub(crate) const LARGE_BLOCKS: usize = 1024;

/// The product of a function's segments and instructions above which it is large (with more
/// than [`LARGE_BLOCKS`] segments): 2^26, e.g. 2,000 blocks of 33,000 instructions, or about
/// 6,000 calls in one block (each call and its result's use two instructions or more).
///
/// Why a product: the optimizer (`opt_level = speed`) computes a pure value at its uses (the
/// e-graph's elaboration), so a value can be made live from its operands' definitions to a use
/// thousands of blocks or calls later; a chain `s1 = s0 + call(), s2 = s1 + call(), ...` ends
/// with every call's result live to the `ret`. The register allocators' work then grows with
/// values live times the blocks and calls (each clobbering the caller-saved registers) they
/// are live across, at most instructions times segments: quadratic (5,000 such calls took
/// 4 s, 10,000 47 s, 100,000 ran out of memory). Without the optimizer every value stays
/// where the function computes it, and the backtracking allocator's work is linear in the
/// function (10,000 calls: 5 s, 100,000: 40 s, in a debug build). Below the bound the
/// quadratic term is small whatever the shape; above it, the function is compiled at
/// [`large_isa`]'s settings.
pub(crate) const LARGE_EXTENT: u64 = 1 << 26;

/// How much work code generation puts into the code (`ir-link --codegen`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CodegenLevel {
    /// Cranelift's optimizations (`opt_level = speed`) and its backtracking register
    /// allocator: the default.
    #[default]
    Optimized,
    /// Compile quickly: no Cranelift optimizations (`opt_level = none`) and the single-pass
    /// register allocator; the same behaviour, slower code (more spills and moves). The
    /// counterpart of `llc -O0`.
    Fast,
}

/// The host ISA with irkit's settings: optimizing, position-independent code for object files
/// (executables are linked as PIE by default), and aggregates returned in as many registers as
/// needed (`enable_multi_ret_implicit_sret`).
pub(crate) fn host(pic: bool) -> Result<OwnedTargetIsa, BackendError> {
    host_at(pic, CodegenLevel::Optimized)
}

/// [`host`] at code generation level `level`.
pub(crate) fn host_at(pic: bool, level: CodegenLevel) -> Result<OwnedTargetIsa, BackendError> {
    match level {
        CodegenLevel::Optimized => build(pic, &[("opt_level", "speed")]),
        CodegenLevel::Fast => build(
            pic,
            &[("opt_level", "none"), ("regalloc_algorithm", "single_pass")],
        ),
    }
}

/// The host ISA with `level` (settings of the optimizer and the register allocator) and
/// irkit's other settings.
fn build(pic: bool, level: &[(&str, &str)]) -> Result<OwnedTargetIsa, BackendError> {
    let err = |e: &dyn std::fmt::Display| BackendError::Codegen(format!("target setup: {e}"));
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| err(&e));
    for (k, v) in level {
        set(&mut flags, k, v)?;
    }
    set(&mut flags, "is_pic", if pic { "true" } else { "false" })?;
    set(&mut flags, "enable_multi_ret_implicit_sret", "true")?;
    // Cranelift's tail calls (`return_call`: IR tail calls) rely on frame pointers.
    set(&mut flags, "preserve_frame_pointers", "true")?;
    // Cranelift's own verifier: debug builds only (tests catch lowering bugs; release is fast).
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    if pic {
        // Object files keep each thread's state in thread-local data (`runtime::Threads`);
        // an executable's linker turns the general-dynamic access into a thread-pointer load.
        let tls = if cfg!(target_os = "macos") {
            "macho"
        } else {
            "elf_gd"
        };
        set(&mut flags, "tls_model", tls)?;
    }
    if !pic {
        // The JIT places code anywhere in the address space: no short-range libcalls.
        set(&mut flags, "use_colocated_libcalls", "false")?;
    }
    let isa = cranelift_native::builder().map_err(|e| err(&e))?;
    isa.finish(settings::Flags::new(flags)).map_err(|e| err(&e))
}

/// The settings of a large function ([`is_large`]): no Cranelift optimizations
/// (`opt_level = none`) and the backtracking register allocator, at either
/// [`CodegenLevel`] (the single-pass allocator's work grows with the values live across each
/// block in layout order, quadratic in a function whose cold trap blocks, laid out at its end,
/// use values of the blocks they branch from). The other flags are [`host_at`]'s.
pub(crate) fn large_isa(pic: bool) -> Result<OwnedTargetIsa, BackendError> {
    build(
        pic,
        &[
            ("opt_level", "none"),
            ("regalloc_algorithm", "backtracking"),
        ],
    )
}

/// A function's segments: its blocks plus its calls (what a value the optimizer moves can be
/// made live across). Calls are counted only when they could matter: a function of at most
/// [`LARGE_BLOCKS`] instructions has no more calls than that.
fn segments(f: &ir::Function) -> usize {
    let blocks = f.layout.blocks().count();
    if blocks > LARGE_BLOCKS || f.dfg.num_insts() <= LARGE_BLOCKS {
        return blocks;
    }
    let calls = f
        .layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter(|&i| f.dfg.insts[i].opcode().is_call())
        .count();
    blocks + calls
}

/// Whether Cranelift function `f` is large: more than [`LARGE_BLOCKS`] segments (blocks and
/// calls), and segments times instructions above [`LARGE_EXTENT`]. Calls count since calls of
/// small leaves are not checked (spec/backends.md, "Call depth and the native stack"): before,
/// each call's check made blocks of its own. A pure function of the function's Cranelift IR,
/// itself a pure function of what the code cache's key covers (the irkit function and what it
/// refers to, `crate::fingerprint`): a key names one compilation either way, so the key needs
/// nothing for this choice (the key's ISA flags are the level's, which stays one key apart
/// from the other level's).
pub(crate) fn is_large(f: &ir::Function) -> bool {
    let segments = segments(f);
    let insts = f.dfg.num_insts();
    segments > LARGE_BLOCKS && (segments as u64).saturating_mul(insts as u64) > LARGE_EXTENT
}

/// The ISA to compile `f` with: `large` if [`is_large`], else `normal` (the level's).
pub(crate) fn for_function<'a>(
    f: &ir::Function,
    normal: &'a dyn TargetIsa,
    large: &'a dyn TargetIsa,
) -> &'a dyn TargetIsa {
    if is_large(f) { large } else { normal }
}

/// Compiles `code`'s function with `normal` (the level's target) or, if it is large
/// ([`is_large`]), `large`; returns the target whose settings lowered it, how, and the code.
/// What Cranelift's `Context::compile` does (verify in debug builds, optimize, lower), in
/// steps: at an optimizing level, a function whose loops Cranelift's e-graph pass lost track
/// of ([`crate::licm::cranelift_loses_loops`], replayed on the control-flow graph and
/// dominator tree the pass itself computed, so nothing is computed twice) gets
/// [`crate::licm::hoist_invariants`] and is lowered at `large`'s settings (the register
/// allocator is the same). The code is returned rather than kept in `code` (whose field for
/// it Cranelift keeps to itself): every caller takes it from here.
pub(crate) fn compile<'a>(
    code: &mut cranelift_codegen::Context,
    normal: &'a dyn TargetIsa,
    large: &'a dyn TargetIsa,
) -> Result<(&'a dyn TargetIsa, Compiled, CompiledCode), CodegenError> {
    let mut plane = ControlPlane::default();
    let isa = for_function(&code.func, normal, large);
    // `optimize` verifies the function first (in debug builds), as `Context::compile` does.
    code.optimize(isa, &mut plane)?;
    let lost = isa.flags().opt_level() != settings::OptLevel::None
        && crate::licm::may_loop(&code.func)
        && {
            // The e-graph pass changes no edge: the graph and tree it computed still hold.
            code.compute_loop_analysis();
            crate::licm::cranelift_loses_loops(&code.func, &code.domtree, &code.loop_analysis)
        };
    let mut how = Compiled::Plain;
    let lowering = if lost {
        if crate::licm::hoist_invariants(&mut code.func, &code.domtree, &code.loop_analysis) {
            how = Compiled::Hoisted;
            // A merged duplicate is an alias of the instruction it became; lowering takes
            // none (Cranelift resolves them at the end of its `optimize`).
            code.func.dfg.resolve_all_aliases();
            code.verify_if(isa)?;
        }
        large
    } else {
        isa
    };
    let stencil = REGALLOC.with_borrow_mut(|ra| {
        lowering.compile_function(&code.func, &code.domtree, ra, false, &mut plane)
    })?;
    Ok((isa, how, stencil.apply_params(&code.func.params)))
}

thread_local! {
    /// Each thread's register allocator state, reused from one function to the next (what a
    /// Cranelift `Context` keeps for its own compilations).
    static REGALLOC: std::cell::RefCell<regalloc2::Ctx> = Default::default();
}

/// How [`compile`] compiled a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compiled {
    /// As Cranelift alone compiles it.
    Plain,
    /// With loop invariants moved by [`crate::licm::hoist_invariants`].
    Hoisted,
}

/// Compiles `code` for function `id` of `cl` (named `place`, for errors) and defines it: with
/// the module's ISA or, if the function is large, `large` ([`compile`]). Returns the code.
pub(crate) fn define_function<M: ClModule>(
    cl: &mut M,
    (id, place): (FuncId, &str),
    code: &mut cranelift_codegen::Context,
    large: &dyn TargetIsa,
) -> Result<CompiledCode, BackendError> {
    let (_, _, compiled) =
        compile(code, cl.isa(), large).map_err(|e| crate::error::compile_error(place, e))?;
    define_compiled(cl, (id, place), &code.func, &compiled)?;
    Ok(compiled)
}

/// Defines function `id` of `cl` (named `place`, for errors) with `compiled`, the code of
/// `func`, its relocations as Cranelift gave them: what `cl.define_function` does after
/// compiling.
pub(crate) fn define_compiled<M: ClModule>(
    cl: &mut M,
    (id, place): (FuncId, &str),
    func: &ir::Function,
    compiled: &CompiledCode,
) -> Result<(), BackendError> {
    let alignment = u64::from(compiled.buffer.alignment);
    let relocs: Vec<ModuleReloc> = compiled
        .buffer
        .relocs()
        .iter()
        .map(|r| ModuleReloc::from_mach_reloc(r, func, id))
        .collect();
    cl.define_function_bytes(id, alignment, compiled.code_buffer(), &relocs)
        .map_err(|e| crate::error::cl_err(place, e))
}
