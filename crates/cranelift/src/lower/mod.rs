//! Lowering a linked irkit module into a Cranelift [`cranelift_module::Module`] (a JIT or an
//! object file, the same code for both): declarations first (every function and global gets a
//! symbol), then global data ([`crate::data`]), the trap routine ([`crate::runtime`]), every
//! function body ([`func`]), and last the C-callable entry wrapper.

mod arith;
mod control;
mod func;
mod memory;
pub(crate) mod types;

use std::collections::HashMap;

use cranelift_codegen::ir::{self, AbiParam, ArgumentExtension, Signature, types as clt};
use cranelift_module::{DataId, FuncId, Linkage, Module as ClModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Module, Opcode};

use crate::error::{cl_err, unsupported};
use crate::runtime::Runtime;
use types::{ClifType, Layouts, Scalar};

/// How a module is lowered: what differs between the JIT and an object file.
pub(crate) struct LowerOptions<'a> {
    /// The symbol of the C-callable entry wrapper (`main` for an object file).
    pub(crate) entry_symbol: &'a str,
    /// Linkage of the entry wrapper.
    pub(crate) entry_linkage: Linkage,
    /// The export name of the IR entry function; `None` for no entry wrapper (a library).
    pub(crate) entry_export: Option<&'a str>,
    /// Whether the wrapper calls `fflush(NULL)` before returning (the JIT: the process goes on).
    pub(crate) flush_on_return: bool,
    /// Whether an `extern` C function of this name can be called; a call of one that cannot is
    /// lowered to the "unknown extern function" trap, as the interpreter reports it.
    pub(crate) extern_available: &'a dyn Fn(&str) -> bool,
    /// Where zero-initialized globals live. `None`: in the Cranelift module, as zero-fill data
    /// (`.bss` in an object file). `Some(place)`: the JIT; `place(symbol, size, align, writable)` maps
    /// lazily zeroed memory for the global and makes `symbol` resolve to it, and the global is
    /// an imported symbol of the Cranelift module (never touched, never copied).
    pub(crate) zero_data: Option<&'a ZeroData<'a>>,
    /// Whether code refers to data through absolute 64-bit addresses (the JIT: its data may lie
    /// anywhere in the address space) instead of PC-relative ones (object files).
    pub(crate) far_data: bool,
    /// The call depth limit (at least 1).
    pub(crate) max_depth: u64,
    /// The native stack the program may use.
    pub(crate) stack_budget: crate::runtime::StackBudget,
}

/// Maps lazily zeroed memory for a zero-initialized global: `(symbol, size, align,
/// writable)`.
pub(crate) type ZeroData<'a> = dyn Fn(&str, u64, u64, bool) -> Result<(), String> + 'a;

/// What a function definition or declaration lowers to.
#[derive(Clone, Debug)]
pub(crate) enum Callee {
    /// A symbol that can be called.
    Func(FuncId),
    /// An `extern` the back end cannot call (its C name): calling it traps.
    Unavailable(String),
    /// C's `abort`: calling it is the "abort called" trap.
    Abort(FuncId),
}

/// Module-wide state shared by every function's lowering.
pub(crate) struct Ctx<'m, M: ClModule> {
    /// The IR module.
    pub(crate) m: &'m Module,
    /// The Cranelift module being filled.
    pub(crate) cl: M,
    /// Type layouts.
    pub(crate) layouts: Layouts,
    /// Each `func` definition or declaration.
    pub(crate) funcs: HashMap<Inst, Callee>,
    /// Each global.
    pub(crate) globals: HashMap<Inst, DataId>,
    /// The runtime routines and C imports the generated code calls.
    pub(crate) rt: Runtime,
    /// Trap messages already emitted, by text.
    pub(crate) messages: HashMap<String, DataId>,
    /// Whether data is referred to through absolute addresses ([`LowerOptions::far_data`]).
    pub(crate) far_data: bool,
    /// The call depth limit ([`LowerOptions::max_depth`]).
    pub(crate) max_depth: u64,
    /// The stack each function's `stackalloc` objects take (16-byte aligned), by function.
    pub(crate) frames: HashMap<Inst, u64>,
    /// The largest of [`Ctx::frames`] by `fn` type: what an indirect call of that type
    /// reserves (only a function of the call's type may be called through it).
    pub(crate) max_frame: HashMap<Inst, u64>,
}

/// Lowers `m` into `cl`; returns the filled module and the entry wrapper's id (if one was
/// asked for).
pub(crate) fn lower_module<M: ClModule>(
    m: &Module,
    cl: M,
    opts: &LowerOptions<'_>,
) -> Result<(M, Option<FuncId>), BackendError> {
    // NOIR procs are lowered to functions before a native back end sees the module
    // (`irkit_noir::lower_procs`, an explicit pipeline step; spec/backends.md).
    if let Some(&p) = m
        .top_level()
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
    let rt = Runtime::declare(&mut cl)?;
    let mut ctx = Ctx {
        m,
        cl,
        layouts,
        funcs: HashMap::new(),
        globals: HashMap::new(),
        rt,
        messages: HashMap::new(),
        far_data: opts.far_data,
        max_depth: opts.max_depth.max(1),
        frames: HashMap::new(),
        max_frame: HashMap::new(),
    };
    ctx.measure_frames();
    ctx.declare_all(opts)?;
    crate::data::define_all(&mut ctx)?;
    crate::runtime::define_trap_routine(&mut ctx)?;
    crate::runtime::define_fault_routine(&mut ctx)?;
    let mut fctx = cranelift_frontend::FunctionBuilderContext::new();
    for &d in m.top_level() {
        if m.opcode(d) == Opcode::FUNC && m.entry_block(d).is_some() {
            func::lower_function(&mut ctx, &mut fctx, d)?;
        }
    }
    let entry = match opts.entry_export {
        Some(export) => Some(crate::runtime::define_entry_wrapper(
            &mut ctx, &mut fctx, opts, export,
        )?),
        None => None,
    };
    Ok((ctx.cl, entry))
}

impl<M: ClModule> Ctx<'_, M> {
    /// Declares every function and global of the module.
    fn declare_all(&mut self, opts: &LowerOptions<'_>) -> Result<(), BackendError> {
        let m = self.m;
        for &d in m.top_level() {
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
                    (Some("abort"), false) => Callee::Abort(
                        self.cl
                            .declare_function("abort", Linkage::Import, &sig)
                            .map_err(|e| cl_err(&def_place(m, d), e))?,
                    ),
                    (Some(name), false) if !(opts.extern_available)(name) => {
                        Callee::Unavailable(name.to_string())
                    }
                    (Some(name), false) => Callee::Func(
                        self.cl
                            .declare_function(name, Linkage::Import, &sig)
                            .map_err(|e| cl_err(&def_place(m, d), e))?,
                    ),
                    (Some(name), true) => Callee::Func(
                        self.cl
                            .declare_function(name, Linkage::Export, &sig)
                            .map_err(|e| cl_err(&def_place(m, d), e))?,
                    ),
                    (None, true) => Callee::Func(
                        self.cl
                            .declare_function(&local(), Linkage::Local, &sig)
                            .map_err(|e| cl_err(&def_place(m, d), e))?,
                    ),
                    (None, false) => {
                        let name = m.decoration_str(d, Opcode::IMPORT).unwrap_or("?");
                        return Err(unsupported(
                            def_place(m, d),
                            format!("unresolved import \"{name}\" (link the module first)"),
                        ));
                    }
                };
                self.funcs.insert(d, callee);
            } else if op == Opcode::GLOBAL_VAR || op == Opcode::GLOBAL_CONST {
                if m.find_decoration(d, Opcode::IMPORT).is_some() {
                    let name = m.decoration_str(d, Opcode::IMPORT).unwrap_or("?");
                    return Err(unsupported(
                        def_place(m, d),
                        format!("unresolved import \"{name}\" (link the module first)"),
                    ));
                }
                let writable = op == Opcode::GLOBAL_VAR;
                let (name, linkage) = self.global_symbol(d, ext, opts)?;
                let id = self
                    .cl
                    .declare_data(&name, linkage, writable, false)
                    .map_err(|e| cl_err(&def_place(m, d), e))?;
                self.globals.insert(d, id);
            } else {
                return Err(unsupported(
                    def_place(m, d),
                    format!("top-level {} is not a definition", m.opcode(d)),
                ));
            }
        }
        Ok(())
    }

    /// Fills [`Ctx::frames`] and [`Ctx::max_frame`].
    fn measure_frames(&mut self) {
        let m = self.m;
        for &f in m.top_level() {
            if m.opcode(f) != Opcode::FUNC {
                continue;
            }
            let mut total = 0u64;
            for blk in m.blocks(f) {
                for &i in m.children(blk) {
                    if m.opcode(i) == Opcode::STACKALLOC {
                        let size = m
                            .operands(i)
                            .first()
                            .and_then(|&t| self.layouts.get(t))
                            .map_or(0, |l| l.size);
                        total = total.saturating_add(size.saturating_add(15) & !15);
                    }
                }
            }
            if let Some(ty) = m.ty(f) {
                let most = self.max_frame.entry(ty).or_insert(0);
                *most = (*most).max(total);
            }
            self.frames.insert(f, total);
        }
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
        let place = def_place(m, d);
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

    /// A reference to data object `id` in function `func`: PC-relative (colocated) for data
    /// this module defines, unless [`Ctx::far_data`]; absolute otherwise.
    pub(crate) fn data_in_func(&self, id: DataId, func: &mut ir::Function) -> ir::GlobalValue {
        let gv = self.cl.declare_data_in_func(id, func);
        if self.far_data
            && let ir::GlobalValueData::Symbol { colocated, .. } = &mut func.global_values[gv]
        {
            *colocated = false;
        }
        gv
    }

    /// The Cranelift signature of a `func` definition or declaration.
    fn signature_of_func(&self, f: Inst, c_abi: bool) -> Result<Signature, BackendError> {
        let m = self.m;
        let ty = m
            .ty(f)
            .filter(|&t| m.opcode(t) == Opcode::FN)
            .ok_or_else(|| {
                BackendError::Malformed(format!("{} has no fn type", def_place(m, f)))
            })?;
        self.signature(ty, c_abi)
            .map_err(|what| unsupported(def_place(m, f), what))
    }

    /// The Cranelift signature of `fn` type `ty`: aggregates are passed as their leaves.
    /// For C functions, narrow integers are extended as the C ABI expects.
    pub(crate) fn signature(&self, ty: Inst, c_abi: bool) -> Result<Signature, String> {
        let m = self.m;
        let mut sig = self.cl.make_signature();
        let ops = m.operands(ty);
        let Some((&ret, params)) = ops.split_first() else {
            return Err("fn type without a return type".into());
        };
        for &p in params {
            self.push_leaves(&mut sig.params, p, c_abi)?;
        }
        if m.opcode(ret) != Opcode::VOID {
            self.push_leaves(&mut sig.returns, ret, c_abi)?;
        }
        Ok(sig)
    }

    fn push_leaves(&self, out: &mut Vec<AbiParam>, t: Inst, c_abi: bool) -> Result<(), String> {
        for s in self.leaves(t)? {
            let mut p = AbiParam::new(s.clif());
            if c_abi {
                p.extension = match s {
                    Scalar::Int(1) => ArgumentExtension::Uext,
                    Scalar::Int(8 | 16) => ArgumentExtension::Sext,
                    _ => ArgumentExtension::None,
                };
            }
            out.push(p);
        }
        Ok(())
    }

    /// The scalar leaves of value type `t`.
    pub(crate) fn leaves(&self, t: Inst) -> Result<Vec<Scalar>, String> {
        let l = self
            .layouts
            .get(t)
            .ok_or_else(|| format!("{} is not a value type", self.m.opcode(t)))?;
        let leaves = l.leaves.as_ref().ok_or_else(|| {
            format!(
                "a value of this type has more than {} scalars (keep it in memory)",
                types::MAX_LEAVES
            )
        })?;
        Ok(leaves.iter().map(|&(s, _)| s).collect())
    }

    /// The read-only data object holding `text`, defined once.
    pub(crate) fn message(&mut self, text: &str) -> Result<DataId, BackendError> {
        if let Some(&id) = self.messages.get(text) {
            return Ok(id);
        }
        let id = self
            .cl
            .declare_anonymous_data(false, false)
            .map_err(|e| cl_err("trap message", e))?;
        let mut d = cranelift_module::DataDescription::new();
        d.define(text.as_bytes().to_vec().into_boxed_slice());
        self.cl
            .define_data(id, &d)
            .map_err(|e| cl_err("trap message", e))?;
        self.messages.insert(text.to_string(), id);
        Ok(id)
    }
}

/// `@name` of a definition as the interpreter spells it: its name hint or export name, else
/// `@#<index>`.
pub(crate) fn def_name(m: &Module, d: Inst) -> String {
    m.name(d)
        .or_else(|| m.decoration_str(d, Opcode::EXPORT))
        .map_or_else(|| format!("@#{}", d.index()), |n| format!("@{n}"))
}

/// `@f ^b, instruction 0 (op …)`: the first instruction of function `f`'s entry block, as a
/// trap there is located (`@f` alone if it has none).
pub(crate) fn first_place(m: &Module, f: Inst) -> String {
    let name = def_name(m, f);
    let Some(entry) = m.entry_block(f) else {
        return name;
    };
    let block = m
        .name(entry)
        .map_or_else(|| "^bb0".to_string(), |n| format!("^{n}"));
    let Some(&inst) = m.children(entry).get(m.block_params(entry).len()) else {
        return format!("{name} {block}");
    };
    func::Place::new(name, block, 0, inst).render(m)
}

fn def_place(m: &Module, d: Inst) -> String {
    def_name(m, d)
}

/// The pointer type.
pub(crate) const PTR: ir::Type = clt::I64;
