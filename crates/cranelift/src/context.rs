//! Module-wide state of one lowering, shared by the declarations, the global data, the
//! runtime routines and every function body: the Cranelift module being filled, the symbol of
//! every definition ([`Callee`], data ids), type layouts, the runtime's ids, and the helpers
//! that build signatures, leaves and trap-message data from them.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::{self, AbiParam, ArgumentExtension, Signature};
use cranelift_codegen::isa::CallConv;
use cranelift_module::{DataId, FuncId, Linkage, Module as ClModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Module, Opcode};

use crate::error::cl_err;
use crate::runtime::{Runtime, Threads};
use crate::types::{self, ClifType, Layouts, Scalar};

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
    /// The call depth limit (at least 1), or `None`: only the stack is checked.
    pub(crate) max_depth: Option<u64>,
    /// How code finds the running thread's state (its stack limit and call depth).
    pub(crate) threads: Threads,
    /// Whether the entry wrapper installs the memory-fault handler (executables; the JIT's
    /// host installs its own).
    pub(crate) install_fault_handler: bool,
    /// Whether the code runs under irkit's fault handler (an executable with an IR entry, a
    /// JIT run): linear memories are reserved with guard regions and accesses within reach of
    /// the guard are not compared (spec/backends.md, "Linear memories"), and checks are
    /// machine traps ("Checks as machine traps"); else every access is compared with the
    /// memory's size and every check branches to the trap routine.
    pub(crate) guard_memories: bool,
    /// Session mode (the JIT's sessions, spec/backends.md "Sessions"): traps and `exit` return
    /// to the host instead of ending the process, and only the definitions the Cranelift
    /// module does not hold yet are compiled. `None` for a run or an object file.
    pub(crate) session: Option<SessionLower>,
    /// Whether every function defined keeps what its debug information needs
    /// ([`Ctx::debug`]; object files).
    pub(crate) debug_info: bool,
}

/// What a session's lowering of an extending module skips.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SessionLower {
    /// The first `live` top-level definitions are compiled already (declared again, with the
    /// same symbols, never defined again).
    pub(crate) live: usize,
    /// Whether this is the session's first lowering (which defines the runtime's routines and
    /// state).
    pub(crate) first: bool,
}

/// What a session's lowering carries to the next one: the declarations and frames of the
/// definitions compiled so far (their `Inst`s stay those of every extending module), so that an
/// extending lowering declares and measures only the new definitions.
#[derive(Debug, Default)]
pub(crate) struct Carried {
    /// [`Ctx::funcs`].
    pub(crate) funcs: HashMap<Inst, Callee>,
    /// [`Ctx::globals`].
    pub(crate) globals: HashMap<Inst, DataId>,
    /// [`Ctx::frames`].
    pub(crate) frames: HashMap<Inst, u64>,
    /// [`Ctx::max_frame`].
    pub(crate) max_frame: HashMap<Inst, u64>,
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
    /// C's `exit` in session mode: calling it stops the session's call with the exit code.
    SessionExit,
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
    /// The C entry of each `extern` function definition declared by this lowering (its C
    /// symbol, with C's calling convention), defined after the bodies
    /// ([`crate::routines::define_c_entry`]).
    pub(crate) c_entries: Vec<(Inst, FuncId)>,
    /// Whether data is referred to through absolute addresses ([`LowerOptions::far_data`]).
    pub(crate) far_data: bool,
    /// The call depth limit ([`LowerOptions::max_depth`]).
    pub(crate) max_depth: Option<u64>,
    /// The stack each function's `stackalloc` objects take (16-byte aligned), by function.
    pub(crate) frames: HashMap<Inst, u64>,
    /// The largest of [`Ctx::frames`] by `fn` type: what an indirect call of that type
    /// reserves (only a function of the call's type may be called through it).
    pub(crate) max_frame: HashMap<Inst, u64>,
    /// Session mode ([`LowerOptions::session`]).
    pub(crate) session: Option<SessionLower>,
    /// The target at the settings of a large function (`crate::isa::large_isa`, with the
    /// module's position independence): what a function `crate::isa::is_large` judges large
    /// is compiled with.
    pub(crate) large: cranelift_codegen::isa::OwnedTargetIsa,
    /// The functions compiled as they were lowered (`lower::func::lower_function`):
    /// the definition, its symbol and the size of its code, for a perf map.
    pub(crate) code_sizes: Vec<(Inst, FuncId, u32)>,
    /// With [`LowerOptions::debug_info`], every function defined, in definition order, with
    /// its symbol's name: what its debug information needs (`crate::debug`).
    pub(crate) debug: Option<Vec<(crate::debug::Defined, String)>>,
    /// The linear memories reserved with guard regions ([`LowerOptions::guard_memories`]):
    /// `None` when every access is compared.
    pub(crate) guard: Option<crate::guard::Guarded>,
    /// The trap sites the fault handler searches (`crate::sites`), in a build with
    /// [`LowerOptions::guard_memories`].
    pub(crate) sites: Option<crate::sites::Sites>,
    /// Where checks are machine traps ([`Ctx::site_codes`]; empty elsewhere), the functions C
    /// code may call although they have no C entry: those whose address is taken
    /// (`crate::lower::address_taken`, and global initializers, `initializer_funcs`). Their stack checks need the
    /// thread's limit known: they find it first (`crate::routines::ensure_stack_limit`).
    pub(crate) entered_from_c: rustc_hash::FxHashSet<Inst>,
    /// The IR functions whose calls are not checked: the small leaves
    /// (`crate::lower::Frames::small_leaves`), without a call depth limit and outside
    /// sessions (empty otherwise). A leaf cannot recurse and its whole frame stays within the
    /// margin below the caller's checked frame (spec/backends.md, "Call depth and the native
    /// stack").
    pub(crate) unchecked: rustc_hash::FxHashSet<Inst>,
    /// The IR functions that get the running thread's stack limit as a hidden first argument
    /// (`crate::lower::internal`): defined here and only ever called directly by IR code, in
    /// a build whose checks are machine traps without a call depth limit. Their calls' stack
    /// checks compare with it, reading no thread-local data (spec/backends.md, "Calling
    /// conventions").
    pub(crate) internal: rustc_hash::FxHashSet<Inst>,
    /// The runtime routines built and not yet compiled, while they are defined together
    /// (`crate::routine::define_together`); `None` otherwise.
    pub(crate) routines: Option<Vec<BuiltRoutine>>,
}

/// A runtime routine built and not yet compiled (`crate::routine::define_together`).
pub(crate) struct BuiltRoutine {
    /// Its symbol.
    pub(crate) id: FuncId,
    /// Its Cranelift function.
    pub(crate) code: cranelift_codegen::Context,
    /// Its name, for errors.
    pub(crate) what: String,
}

impl<M: ClModule> Ctx<'_, M> {
    /// Keeps what the debug information of function `id` (definition `def`, `None` for a
    /// routine), compiled to `compiled`, needs, if it is collected.
    pub(crate) fn keep_debug(
        &mut self,
        id: FuncId,
        def: Option<Inst>,
        compiled: Option<&cranelift_codegen::CompiledCode>,
    ) {
        if self.debug.is_none() {
            return;
        }
        let Some(compiled) = compiled else { return };
        let d = crate::debug::Defined::of(id, def, compiled, self.cl.isa());
        self.keep_defined(d);
    }

    /// Keeps `d` (see [`Ctx::keep_debug`]), if debug information is collected.
    pub(crate) fn keep_defined(&mut self, d: crate::debug::Defined) {
        let name = self
            .cl
            .declarations()
            .get_function_decl(d.id)
            .linkage_name(d.id);
        if let Some(all) = &mut self.debug {
            all.push((d, name.into_owned()));
        }
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

    /// A reference to function `id` in function `func`: what `cranelift-module`'s
    /// `declare_func_in_func` makes (near for a symbol this module defines, unless
    /// [`Ctx::far_data`]: the JIT places each function's code anywhere in the address space,
    /// and a program whose compilation took gigabytes had code more than 2 GiB apart), from
    /// the declarations alone (it needs no mutable module: any thread may lower a function).
    pub(crate) fn func_in_func(&self, id: FuncId, func: &mut ir::Function) -> ir::FuncRef {
        let decl = self.cl.declarations().get_function_decl(id);
        let signature = func.import_signature(decl.signature.clone());
        let name = func.declare_imported_user_function(ir::UserExternalName::new(0, id.as_u32()));
        func.import_function(ir::ExtFuncData {
            name: ir::ExternalName::user(name),
            signature,
            colocated: decl.linkage.is_final() && !self.far_data,
            patchable: false,
        })
    }

    /// The Cranelift signature of `fn` type `ty`: aggregates are passed as their leaves.
    /// For C functions (`c_abi`), the host's C calling convention, narrow integers extended as
    /// it expects; for IR functions and indirect calls, the `tail` convention, which
    /// `return_call` needs on both sides (spec/backends.md, "Calling conventions").
    pub(crate) fn signature(&self, ty: Inst, c_abi: bool) -> Result<Signature, String> {
        let m = self.m;
        let mut sig = self.cl.make_signature();
        if !c_abi {
            sig.call_conv = CallConv::Tail;
        }
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
        if let (crate::types::Shape::Vector { lane, lanes }, None) = (&l.shape, &l.leaves) {
            return Err(format!(
                "a vector of {lanes} {} lanes ({} bytes): Cranelift holds 128-bit vectors only \
                 (i8x16, i16x8, i32x4, i64x2, f32x4, f64x2)",
                lane.scalar().clif(),
                l.size
            ));
        }
        let leaves = l.leaves.as_ref().ok_or_else(|| {
            format!(
                "a value of this type has more than {} scalars (keep it in memory)",
                types::MAX_LEAVES
            )
        })?;
        Ok(leaves.iter().map(|&(s, _)| s).collect())
    }

    /// Whether a check that fails here is a machine trap with a site code (`crate::sites`):
    /// in a build whose fault handler reads the site table and can read the interrupted
    /// program counter, outside sessions.
    pub(crate) fn site_codes(&self) -> bool {
        self.sites.is_some() && crate::sites::PC_IN_CONTEXT.is_some() && self.session.is_none()
    }

    /// Whether the running thread's stack limit is known wherever IR code runs, so that a
    /// stack check is one conditional trap: in a build whose checks are machine traps
    /// ([`Ctx::site_codes`]) without a call depth limit, where IR code entered from C finds the
    /// limit first (`crate::routines::ensure_stack_limit`).
    pub(crate) fn limit_known(&self) -> bool {
        self.site_codes() && self.max_depth.is_none()
    }

    /// A new read-only data object holding `text`: trap messages (a function's message
    /// table, `crate::names`, or a routine's message).
    pub(crate) fn message(&mut self, text: &str) -> Result<DataId, BackendError> {
        let id = self
            .cl
            .declare_anonymous_data(false, false)
            .map_err(|e| cl_err("trap message", e))?;
        let mut d = cranelift_module::DataDescription::new();
        d.define(text.as_bytes().into());
        self.cl
            .define_data(id, &d)
            .map_err(|e| cl_err("trap message", e))?;
        Ok(id)
    }
}
