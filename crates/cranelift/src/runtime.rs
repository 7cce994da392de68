//! The small runtime generated into every module, in Cranelift IR: the trap routine (prints the
//! trap line to standard error with C's `write`, then `exit(70)`, which also flushes C's
//! `stdout`), and the C-callable entry wrapper that calls the IR entry function and turns its
//! result into an `int` exit code. Also the C functions the generated code imports.

use cranelift_codegen::ir::{AbiParam, InstBuilder, TrapCode, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module as ClModule};
use irkit_backend::{BackendError, EXIT_TRAP};
use irkit_core::Opcode;

use crate::error::cl_err;
use crate::lower::types::Scalar;
use crate::lower::{Callee, Ctx, LowerOptions, PTR};

/// The trap code of the `trap` instruction that follows every call of the trap routine (never
/// reached: the routine does not return).
pub(crate) const UNREACHABLE_AFTER_EXIT: TrapCode = TrapCode::unwrap_user(1);

/// The functions generated code calls that are not IR functions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Runtime {
    /// `irkit.rt.trap(msg: ptr, len: i64)`: prints and exits with [`EXIT_TRAP`].
    pub(crate) trap: FuncId,
    /// C `ssize_t write(int, const void *, size_t)`.
    write: FuncId,
    /// C `void exit(int)`.
    exit: FuncId,
    /// C `int fflush(FILE *)`.
    fflush: FuncId,
    /// C `double fmod(double, double)`.
    pub(crate) fmod: FuncId,
    /// C `float fmodf(float, float)`.
    pub(crate) fmodf: FuncId,
}

impl Runtime {
    /// Declares the runtime's functions in `cl`.
    pub(crate) fn declare<M: ClModule>(cl: &mut M) -> Result<Runtime, BackendError> {
        let mut decl = |name: &str, linkage, params: &[types::Type], ret: Option<types::Type>| {
            let mut sig = cl.make_signature();
            sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
            sig.returns.extend(ret.map(AbiParam::new));
            cl.declare_function(name, linkage, &sig)
                .map_err(|e| cl_err("runtime", e))
        };
        Ok(Runtime {
            trap: decl("irkit.rt.trap", Linkage::Local, &[PTR, types::I64], None)?,
            write: decl(
                "write",
                Linkage::Import,
                &[types::I32, PTR, types::I64],
                Some(types::I64),
            )?,
            exit: decl("exit", Linkage::Import, &[types::I32], None)?,
            fflush: decl("fflush", Linkage::Import, &[PTR], Some(types::I32))?,
            fmod: decl(
                "fmod",
                Linkage::Import,
                &[types::F64, types::F64],
                Some(types::F64),
            )?,
            fmodf: decl(
                "fmodf",
                Linkage::Import,
                &[types::F32, types::F32],
                Some(types::F32),
            )?,
        })
    }
}

/// Defines `irkit.rt.trap`: `write(2, msg, len); exit(70);`.
pub(crate) fn define_trap_routine<M: ClModule>(ctx: &mut Ctx<'_, M>) -> Result<(), BackendError> {
    let rt = ctx.rt;
    let mut c = ctx.cl.make_context();
    c.func.signature.params = vec![AbiParam::new(PTR), AbiParam::new(types::I64)];
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut c.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (msg, len) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let write = ctx.cl.declare_func_in_func(rt.write, b.func);
        let exit = ctx.cl.declare_func_in_func(rt.exit, b.func);
        let fd = b.ins().iconst(types::I32, 2);
        b.ins().call(write, &[fd, msg, len]);
        let code = b.ins().iconst(types::I32, i64::from(EXIT_TRAP));
        b.ins().call(exit, &[code]);
        b.ins().trap(UNREACHABLE_AFTER_EXIT);
        b.seal_all_blocks();
        b.finalize(ctx.cl.target_config());
    }
    ctx.cl
        .define_function(rt.trap, &mut c)
        .map_err(|e| cl_err("runtime trap routine", e))
}

/// Defines the entry wrapper `int <entry_symbol>(void)`: calls the IR function exported as
/// `export`, converts its result to the exit code (as the interpreter's
/// `run_main` does), optionally flushes C's `stdout`, and returns it.
pub(crate) fn define_entry_wrapper<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    fctx: &mut FunctionBuilderContext,
    opts: &LowerOptions<'_>,
    export: &str,
) -> Result<FuncId, BackendError> {
    let m = ctx.m;
    let entry_err = |why: String| BackendError::Entry(why);
    let f = m
        .find_export(export)
        .filter(|&f| m.opcode(f) == Opcode::FUNC)
        .ok_or_else(|| entry_err(format!("no function is exported as {}", export)))?;
    let Some(Callee::Func(fid)) = ctx.funcs.get(&f).cloned() else {
        return Err(entry_err(format!(
            "{} has no body the back end can call",
            export
        )));
    };
    let fty = m
        .ty(f)
        .ok_or_else(|| BackendError::Malformed("entry without type".into()))?;
    let ops = m.operands(fty);
    if ops.len() != 1 {
        return Err(entry_err(format!(
            "{} takes {}; an entry takes none",
            export,
            irkit_core::message::count(ops.len().saturating_sub(1), "parameter")
        )));
    }
    let ret = ops[0];
    let ret_scalar = if m.opcode(ret) == Opcode::VOID {
        None
    } else {
        match ctx.layouts.scalar(ret) {
            Some(s @ Scalar::Int(_)) => Some(s),
            _ => {
                return Err(entry_err(format!(
                    "{} must return an integer or void",
                    export
                )));
            }
        }
    };
    let mut sig = ctx.cl.make_signature();
    sig.returns.push(AbiParam::new(types::I32));
    let id = ctx
        .cl
        .declare_function(opts.entry_symbol, opts.entry_linkage, &sig)
        .map_err(|e| cl_err("entry wrapper", e))?;
    let mut c = ctx.cl.make_context();
    c.func.signature = sig;
    {
        let mut b = FunctionBuilder::new(&mut c.func, fctx);
        let block = b.create_block();
        b.switch_to_block(block);
        let callee = ctx.cl.declare_func_in_func(fid, b.func);
        let call = b.ins().call(callee, &[]);
        let code = match ret_scalar {
            None => b.ins().iconst(types::I32, 0),
            Some(s) => {
                let v = b.inst_results(call)[0];
                match s {
                    Scalar::Int(1) => b.ins().uextend(types::I32, v),
                    Scalar::Int(8 | 16) => b.ins().sextend(types::I32, v),
                    Scalar::Int(64) => b.ins().ireduce(types::I32, v),
                    _ => v,
                }
            }
        };
        if opts.flush_on_return {
            let fflush = ctx.cl.declare_func_in_func(ctx.rt.fflush, b.func);
            let null = b.ins().iconst(PTR, 0);
            b.ins().call(fflush, &[null]);
        }
        b.ins().return_(&[code]);
        b.seal_all_blocks();
        b.finalize(ctx.cl.target_config());
    }
    ctx.cl
        .define_function(id, &mut c)
        .map_err(|e| cl_err("entry wrapper", e))?;
    Ok(id)
}
