//! Lowering a linked irkit module into a Cranelift [`cranelift_module::Module`] (a JIT or an
//! object file, the same code for both): declarations first (every function and global gets a
//! symbol, here), then global data ([`crate::data`]), the runtime routines
//! ([`crate::routines`]), every function body ([`func`]), and last the C-callable entry
//! wrapper. The state they share is [`Ctx`] ([`crate::context`]).

mod arith;
mod calls;
mod control;
mod forward;
mod func;
mod linear;
mod memory;
mod nan;
mod vector;

#[cfg(test)]
pub(crate) use func::lower_function;
pub(crate) use func::{build_function, defined_function};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use cranelift_codegen::ir::{AbiParam, ArgumentPurpose, Signature};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{FuncId, Linkage, Module as ClModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Module, Opcode};

use crate::context::{Callee, Carried, Ctx, LowerOptions};
use crate::error::{cl_err, unsupported};
use crate::routines::SessionEntry;
use crate::runtime::Runtime;
use crate::types::Layouts;
use irkit_core::place::verified_def_label;

/// Lowers `m` into `cl` (outside sessions), compiling each function as it is lowered;
/// returns the filled module, the entry wrapper's id (if one was asked for), the size of
/// each function's code and, if `opts.debug_info`, what the debug information of every
/// function defined needs, with its symbol's name.
#[allow(clippy::type_complexity)]
pub(crate) fn lower_module<M: ClModule>(
    m: &Module,
    cl: M,
    opts: &LowerOptions<'_>,
) -> Result<
    (
        M,
        Option<FuncId>,
        CodeSizes,
        Vec<(crate::debug::Defined, String)>,
    ),
    BackendError,
> {
    let l = lower_carried(m, cl, opts, Carried::default(), each)?;
    Ok((l.cl, l.entry, l.code_sizes, l.debug))
}

/// Each function compiled: its definition, its symbol and the size of its code.
pub(crate) type CodeSizes = Vec<(Inst, FuncId, u32)>;

/// What [`lower_carried`] made.
struct Lowered<M> {
    /// The filled module.
    cl: M,
    /// The entry wrapper, if one was asked for.
    entry: Option<FuncId>,
    /// The session wrappers of the new exported functions.
    wrappers: Vec<SessionEntry>,
    /// What the next lowering of a session needs.
    carried: Carried,
    /// The functions compiled as they were lowered.
    code_sizes: CodeSizes,
    /// What the debug information of each function defined needs, if it was collected.
    debug: Vec<(crate::debug::Defined, String)>,
}

/// Lowers the definitions of `m` that `opts.session` does not skip, in session mode: `carried`
/// holds the declarations and frames of the `live` definitions compiled already (what the
/// previous lowering returned; empty for the first), which are neither declared nor measured
/// again, so the work is the new definitions'. Returns the filled module, a wrapper for every
/// new exported function whose parameters are scalars, what to carry to the next lowering and,
/// if `opts.debug_info`, what the debug information of every function defined needs.
#[allow(clippy::type_complexity)]
pub(crate) fn lower_session<M: ClModule>(
    m: &Module,
    cl: M,
    opts: &LowerOptions<'_>,
    carried: Carried,
) -> Result<
    (
        M,
        Vec<SessionEntry>,
        Carried,
        Vec<(crate::debug::Defined, String)>,
    ),
    BackendError,
> {
    let l = lower_carried(m, cl, opts, carried, each)?;
    Ok((l.cl, l.wrappers, l.carried, l.debug))
}

/// Lowers each function of `defs` in turn.
fn each<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    fctx: &mut FunctionBuilderContext,
    defs: &[Inst],
) -> Result<(), BackendError> {
    for &d in defs {
        func::lower_function(ctx, fctx, d)?;
    }
    Ok(())
}

/// [`lower_module`], with the function bodies defined by `bodies`: given the shared state, a
/// builder context and the function definitions in module order, it defines each in the Cranelift
/// module, in that order ([`lower_module`] compiles each as it is lowered; `crate::parallel`
/// compiles them on every core). Returns the filled module and, if `opts.debug_info`, what the
/// debug information of every function defined needs, with its symbol's name, in definition order.
#[allow(clippy::type_complexity)]
pub(crate) fn lower_with<M: ClModule>(
    m: &Module,
    cl: M,
    opts: &LowerOptions<'_>,
    bodies: impl FnOnce(
        &mut Ctx<'_, M>,
        &mut FunctionBuilderContext,
        &[Inst],
    ) -> Result<(), BackendError>,
) -> Result<(M, Vec<(crate::debug::Defined, String)>), BackendError> {
    let l = lower_carried(m, cl, opts, Carried::default(), bodies)?;
    Ok((l.cl, l.debug))
}

/// [`lower_with`], the declarations and frames of the first `live` definitions (in session
/// mode) taken from `carried`, and all it made returned ([`Lowered`]).
fn lower_carried<M: ClModule>(
    m: &Module,
    cl: M,
    opts: &LowerOptions<'_>,
    carried: Carried,
    bodies: impl FnOnce(
        &mut Ctx<'_, M>,
        &mut FunctionBuilderContext,
        &[Inst],
    ) -> Result<(), BackendError>,
) -> Result<Lowered<M>, BackendError> {
    let live = opts.session.map_or(0, |s| s.live).min(m.top_level().len());
    let new = &m.top_level()[live..];
    // NOIR procs are lowered to functions before a native back end sees the module
    // (`irkit_noir::lower_procs`, an explicit pipeline step; spec/backends.md).
    if let Some(&p) = new
        .iter()
        .find(|&&d| m.opcode(d) == irkit_core::Opcode::PROC)
    {
        return Err(BackendError::Unsupported {
            backend: "cranelift",
            place: irkit_core::place::def_label(m, p),
            what: "a NOIR `proc`: lower procs to functions first (irkit_noir::lower_procs; \
                   ir-run and ir-link do)"
                .into(),
        });
    }
    let layouts = Layouts::new(m);
    let mut cl = cl;
    let rt = Runtime::declare(&mut cl, opts.session.map(|s| s.first), opts.threads)?;
    let large = crate::isa::large_isa(cl.isa().flags().is_pic())?;
    let mut ctx = Ctx {
        m,
        cl,
        layouts,
        funcs: carried.funcs,
        globals: carried.globals,
        rt,
        c_entries: Vec::new(),
        far_data: opts.far_data,
        max_depth: opts.max_depth.map(|d| d.max(1)),
        frames: carried.frames,
        max_frame: carried.max_frame,
        session: opts.session,
        large,
        code_sizes: Vec::new(),
        debug: opts.debug_info.then(Vec::new),
        guard: None,
        sites: None,
        entered_from_c: HashSet::default(),
        unchecked: HashSet::default(),
        internal: HashSet::default(),
        routines: None,
    };
    if opts.guard_memories {
        ctx.guard = Some(crate::guard::Guarded::declare(&mut ctx.cl, m)?);
        ctx.sites = Some(crate::sites::Sites::declare(&mut ctx.cl)?);
    }
    let Frames {
        frames,
        max_frame,
        small_leaves,
    } = frames(m, &ctx.layouts, new);
    if ctx.site_codes() {
        ctx.entered_from_c = address_taken(m, new);
        ctx.entered_from_c.extend(initializer_funcs(m, new));
    }
    if ctx.limit_known() {
        ctx.internal = internal(m, new, &ctx.entered_from_c, opts.entry_export);
    }
    if ctx.max_depth.is_none() && ctx.session.is_none() {
        ctx.unchecked = small_leaves;
    }
    ctx.frames.extend(frames);
    for (ty, most) in max_frame {
        let was = ctx.max_frame.entry(ty).or_insert(0);
        *was = (*was).max(most);
    }
    ctx.declare(new, opts)?;
    crate::data::define_all(&mut ctx, live)?;
    if opts.session.is_none_or(|s| s.first) {
        crate::routine::define_together(&mut ctx, |ctx| {
            crate::routines::define_trap_routine(ctx)?;
            crate::routines::define_fault_routine(ctx)?;
            crate::memories::define_mem_grow_routine(ctx)?;
            if matches!(opts.threads, crate::runtime::Threads::Tls) {
                crate::routines::define_stack_slow_routine(ctx)?;
            }
            Ok(())
        })?;
    }
    let mut fctx = FunctionBuilderContext::new();
    let defs: Vec<Inst> = new
        .iter()
        .copied()
        .filter(|&d| m.opcode(d) == Opcode::FUNC && m.entry_block(d).is_some())
        .collect();
    bodies(&mut ctx, &mut fctx, &defs)?;
    crate::site_table::define_sites(&mut ctx)?;
    for (d, id) in std::mem::take(&mut ctx.c_entries) {
        crate::routines::define_c_entry(&mut ctx, d, id)?;
    }
    let entry = match opts.entry_export {
        Some(export) => Some(crate::routines::define_entry_wrapper(
            &mut ctx, &mut fctx, opts, export,
        )?),
        None => None,
    };
    let mut wrappers = Vec::new();
    if opts.session.is_some() {
        for &d in new {
            if let Some(export) = m.decoration_str(d, Opcode::EXPORT)
                && m.opcode(d) == Opcode::FUNC
                && m.entry_block(d).is_some()
                && let Some(w) =
                    crate::routines::define_session_wrapper(&mut ctx, &mut fctx, d, export)?
            {
                wrappers.push(w);
            }
        }
    }
    let carried = Carried {
        funcs: ctx.funcs,
        globals: ctx.globals,
        frames: ctx.frames,
        max_frame: ctx.max_frame,
    };
    Ok(Lowered {
        cl: ctx.cl,
        entry,
        wrappers,
        carried,
        code_sizes: ctx.code_sizes,
        debug: ctx.debug.unwrap_or_default(),
    })
}

impl<M: ClModule> Ctx<'_, M> {
    /// Declares the functions and globals `defs` (top-level definitions of the module).
    fn declare(&mut self, defs: &[Inst], opts: &LowerOptions<'_>) -> Result<(), BackendError> {
        let m = self.m;
        for &d in defs {
            let op = m.opcode(d);
            let ext = m.decoration_str(d, Opcode::EXTERN);
            let local = || {
                let hint = m.name(d).unwrap_or("");
                format!("irkit.{}.{hint}", d.index())
            };
            if op == Opcode::FUNC {
                let has_body = m.entry_block(d).is_some();
                let sig = self.signature_of_func(d, ext.is_some())?;
                let callee = match (ext, has_body) {
                    (Some("exit"), false) if self.session.is_some() => Callee::SessionExit,
                    (Some("abort"), false) => Callee::Abort(
                        self.cl
                            .declare_function("abort", Linkage::Import, &sig)
                            .map_err(|e| cl_err(&verified_def_label(m, d), e))?,
                    ),
                    (Some(name), false) if !(opts.extern_available)(name) => {
                        Callee::Unavailable(name.to_string())
                    }
                    (Some(name), false) => Callee::Func(
                        self.cl
                            .declare_function(name, Linkage::Import, &sig)
                            .map_err(|e| cl_err(&verified_def_label(m, d), e))?,
                    ),
                    // A definition callable from C: its body has the IR functions' convention
                    // (`tail`), its C symbol a wrapper with C's (spec/backends.md, "Calling
                    // conventions").
                    (Some(name), true) => {
                        let c = self
                            .cl
                            .declare_function(name, Linkage::Export, &sig)
                            .map_err(|e| cl_err(&verified_def_label(m, d), e))?;
                        self.c_entries.push((d, c));
                        let body_sig = self.signature_of_func(d, false)?;
                        Callee::Func(
                            self.cl
                                .declare_function(&local(), Linkage::Local, &body_sig)
                                .map_err(|e| cl_err(&verified_def_label(m, d), e))?,
                        )
                    }
                    (None, true) => {
                        let mut sig = sig;
                        if self.internal.contains(&d) {
                            // Cranelift's prologue stack check reads it as the `vmctx`.
                            let limit =
                                AbiParam::special(crate::types::PTR, ArgumentPurpose::VMContext);
                            sig.params.insert(0, limit);
                        }
                        Callee::Func(
                            self.cl
                                .declare_function(&local(), Linkage::Local, &sig)
                                .map_err(|e| cl_err(&verified_def_label(m, d), e))?,
                        )
                    }
                    (None, false) => {
                        let name = m.decoration_str(d, Opcode::IMPORT).unwrap_or("?");
                        return Err(unsupported(
                            verified_def_label(m, d),
                            format!("unresolved import \"{name}\" (link the module first)"),
                        ));
                    }
                };
                self.funcs.insert(d, callee);
            } else if op == Opcode::GLOBAL_VAR || op == Opcode::GLOBAL_CONST {
                if m.find_decoration(d, Opcode::IMPORT).is_some() {
                    let name = m.decoration_str(d, Opcode::IMPORT).unwrap_or("?");
                    return Err(unsupported(
                        verified_def_label(m, d),
                        format!("unresolved import \"{name}\" (link the module first)"),
                    ));
                }
                let writable = op == Opcode::GLOBAL_VAR;
                let (name, linkage) = self.global_symbol(d, ext, opts)?;
                let id = self
                    .cl
                    .declare_data(&name, linkage, writable, false)
                    .map_err(|e| cl_err(&verified_def_label(m, d), e))?;
                self.globals.insert(d, id);
            } else {
                return Err(unsupported(
                    verified_def_label(m, d),
                    format!("top-level {} is not a definition", m.opcode(d)),
                ));
            }
        }
        Ok(())
    }

    /// The symbol and linkage of global `d` (`ext`: its `extern` name): a C data object
    /// declared without an initial value is imported (it is the C library's or another
    /// object's, never a new zero-filled one); a zero-initialized global in the JIT is imported
    /// from the lazily zeroed memory `zero_data` maps for it; every other global is defined,
    /// under its C name if `extern`, else a local one. Refuses a global larger than
    /// [`crate::data::MAX_GLOBAL_SIZE`].
    fn global_symbol(
        &self,
        d: Inst,
        ext: Option<&str>,
        opts: &LowerOptions<'_>,
    ) -> Result<(String, Linkage), BackendError> {
        let m = self.m;
        let place = verified_def_label(m, d);
        let (size, align) = crate::data::checked_layout(self, d)?;
        let has_init = !m.operands(d).is_empty();
        if let (Some(n), false) = (ext, has_init) {
            if !(opts.extern_available)(n) {
                return Err(unsupported(
                    place,
                    format!("extern global \"{n}\" is not a symbol of this process"),
                ));
            }
            return Ok((n.to_string(), Linkage::Import));
        }
        if let Some(place_zero) = opts.zero_data
            && crate::data::zero_initialized(m, d)
        {
            let name = format!("irkit.zero.{}", d.index());
            place_zero(&name, size, align, m.opcode(d) == Opcode::GLOBAL_VAR)
                .map_err(|why| unsupported(&place, why))?;
            return Ok((name, Linkage::Import));
        }
        Ok(match ext {
            Some(n) => (n.to_string(), Linkage::Export),
            None => (
                format!("irkit.{}.{}", d.index(), m.name(d).unwrap_or("")),
                Linkage::Local,
            ),
        })
    }

    /// The Cranelift signature of a `func` definition or declaration.
    fn signature_of_func(&self, f: Inst, c_abi: bool) -> Result<Signature, BackendError> {
        let m = self.m;
        let ty = m
            .ty(f)
            .filter(|&t| m.opcode(t) == Opcode::FN)
            .ok_or_else(|| {
                BackendError::Malformed(format!("{} has no fn type", verified_def_label(m, f)))
            })?;
        self.signature(ty, c_abi)
            .map_err(|what| unsupported(verified_def_label(m, f), what))
    }
}

/// What [`frames`] measures of the functions of a module.
#[derive(Default)]
pub(crate) struct Frames {
    /// The stack each function takes for its `stackalloc` objects (16-byte aligned).
    pub(crate) frames: HashMap<Inst, u64>,
    /// The largest of these by `fn` type (what an indirect call of that type reserves).
    pub(crate) max_frame: HashMap<Inst, u64>,
    /// The **small leaves**: functions that call no IR function (directly or indirectly, tail
    /// call or not; C functions they may call) and whose objects take at most
    /// [`crate::runtime::SMALL_LEAF_FRAME`] bytes. A call of one needs no stack check
    /// ([`Ctx::unchecked`]).
    pub(crate) small_leaves: HashSet<Inst>,
}

/// [`Frames`] of the functions among `defs` (top-level definitions of `m`).
pub(crate) fn frames(m: &Module, layouts: &Layouts, defs: &[Inst]) -> Frames {
    use rayon::prelude::*;
    // Each function's frame on every core (a read of every instruction of every block), then
    // the maxima by type in module order.
    let measured: Vec<(Inst, u64, bool)> = defs
        .par_iter()
        .filter(|&&f| m.opcode(f) == Opcode::FUNC)
        .map(|&f| {
            let (total, calls) = frame(m, layouts, f);
            (f, total, calls)
        })
        .collect();
    let mut out = Frames::default();
    out.frames.reserve(measured.len());
    for (f, total, calls) in measured {
        if let Some(ty) = m.ty(f) {
            let most = out.max_frame.entry(ty).or_insert(0);
            *most = (*most).max(total);
        }
        out.frames.insert(f, total);
        if !calls && total <= crate::runtime::SMALL_LEAF_FRAME {
            out.small_leaves.insert(f);
        }
    }
    out
}

/// The functions the initial values of the globals among `defs` hold the address of (the
/// definitions `crate::data` writes as relocations): C code may call them
/// ([`Ctx::entered_from_c`]), found before any function is declared.
fn initializer_funcs(m: &Module, defs: &[Inst]) -> Vec<Inst> {
    let mut found = Vec::new();
    let mut seen = HashSet::default();
    let mut stack: Vec<Inst> = defs
        .iter()
        .filter(|&&d| matches!(m.opcode(d), Opcode::GLOBAL_VAR | Opcode::GLOBAL_CONST))
        .filter_map(|&d| m.operands(d).first().copied())
        .collect();
    // A walk of the constants with a visited set: shared subterms are read once, and deep
    // nests cannot exhaust the stack.
    while let Some(c) = stack.pop() {
        if !seen.insert(c) {
            continue;
        }
        match m.opcode(c) {
            Opcode::FUNC => found.push(c),
            op if op.is_hoistable() => stack.extend_from_slice(m.operands(c)),
            _ => {}
        }
    }
    found
}

/// The functions among `defs` that get the stack limit as a hidden first argument
/// ([`Ctx::internal`]): defined (a body) without `extern`, not the entry function, and not
/// `entered` from C (address taken). (An exported IR function is no exception: its symbol is
/// local to the object, so only IR code calls it.)
fn internal(
    m: &Module,
    defs: &[Inst],
    entered: &HashSet<Inst>,
    entry: Option<&str>,
) -> HashSet<Inst> {
    let entry = entry.and_then(|e| m.find_export(e));
    defs.iter()
        .copied()
        .filter(|&d| {
            m.opcode(d) == Opcode::FUNC
                && m.entry_block(d).is_some()
                && m.find_decoration(d, Opcode::EXTERN).is_none()
                && Some(d) != entry
                && !entered.contains(&d)
        })
        .collect()
}

/// The functions among `defs` whose address the function bodies of `defs` take (an operand
/// of theirs other than a direct call's callee): C code may call them
/// ([`Ctx::entered_from_c`]; [`initializer_funcs`] adds the globals' initializers').
pub(crate) fn address_taken(m: &Module, defs: &[Inst]) -> HashSet<Inst> {
    use rayon::prelude::*;
    defs.par_iter()
        .filter(|&&f| m.opcode(f) == Opcode::FUNC)
        .map(|&f| {
            let mut taken = Vec::new();
            for blk in m.blocks(f) {
                for &i in m.children(blk) {
                    let direct = matches!(m.opcode(i), Opcode::CALL | Opcode::TAIL_CALL);
                    for (k, &o) in m.operands(i).iter().enumerate() {
                        if m.opcode(o) == Opcode::FUNC && !(direct && k == 0) {
                            taken.push(o);
                        }
                    }
                }
            }
            taken
        })
        .flatten_iter()
        .collect()
}

/// The stack function `f`'s `stackalloc` objects take, each 16-byte aligned, and whether it
/// calls an IR function: a direct call or tail call of a function with a body, or any indirect
/// one (its target may be one).
fn frame(m: &Module, layouts: &Layouts, f: Inst) -> (u64, bool) {
    let mut total = 0u64;
    let mut calls = false;
    for blk in m.blocks(f) {
        for &i in m.children(blk) {
            match m.opcode(i) {
                Opcode::STACKALLOC => {
                    let size = m
                        .operands(i)
                        .first()
                        .and_then(|&t| layouts.get(t))
                        .map_or(0, |l| l.size);
                    total = total.saturating_add(size.saturating_add(15) & !15);
                }
                Opcode::CALL | Opcode::TAIL_CALL => {
                    calls |= m
                        .operands(i)
                        .first()
                        .is_none_or(|&callee| m.entry_block(callee).is_some());
                }
                Opcode::CALL_INDIRECT | Opcode::TAIL_CALL_INDIRECT => calls = true,
                _ => {}
            }
        }
    }
    (total, calls)
}
