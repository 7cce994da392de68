//! The runtime routines generated into every module, in Cranelift IR: the trap routine (prints
//! the trap line to standard error with C's `write`, then `exit(70)`, which also flushes C's
//! `stdout`), the memory-fault handler of executables, and the C-callable entry wrapper that
//! sets the stack limit, calls the IR entry function and turns its result into an `int` exit
//! code. Their symbols are declared in `runtime.rs`.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module as ClModule};
use irkit_backend::{BackendError, EXIT_TRAP, trap_kinds};
use irkit_core::Opcode;

use crate::context::{Callee, Ctx, LowerOptions};
use crate::error::cl_err;
use crate::place::first_place;
use crate::runtime::{
    DEFAULT_STACK, DEPTH, MAX_MAIN_STACK, STACK_LIMIT, STACK_MARGIN, STOP, STOP_ARG, STOP_MSG,
    STOPPED_TRAP, StackBudget, UNREACHABLE_AFTER_EXIT,
};
use crate::types::{ClifType, PTR, Scalar};

/// Defines `irkit.rt.trap`: `write(2, msg, len); exit(70);`. In session mode it records the
/// trap in the state ([`STOP`], [`STOP_MSG`], [`STOP_ARG`]) and returns.
pub(crate) fn define_trap_routine<M: ClModule>(ctx: &mut Ctx<'_, M>) -> Result<(), BackendError> {
    if ctx.session.is_some() {
        return define_session_trap_routine(ctx);
    }
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

/// Session mode's `irkit.rt.trap(msg, len)`: `state.stop = TRAP; state.msg = msg; state.arg =
/// len; return`.
fn define_session_trap_routine<M: ClModule>(ctx: &mut Ctx<'_, M>) -> Result<(), BackendError> {
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
        let gv = ctx.data_in_func(rt.state, b.func);
        let at = b.ins().symbol_value(PTR, gv);
        let flags = MemFlagsData::trusted();
        b.ins().store(flags, msg, at, STOP_MSG);
        b.ins().store(flags, len, at, STOP_ARG);
        let how = b.ins().iconst(types::I64, STOPPED_TRAP);
        b.ins().store(flags, how, at, STOP);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(ctx.cl.target_config());
    }
    ctx.cl
        .define_function(rt.trap, &mut c)
        .map_err(|e| cl_err("runtime trap routine", e))
}

/// Session mode: defines the host-callable wrapper `void irkit.call.N(const u64 *args, u64
/// *results)` of exported function `f` (instruction N): sets the stack limit, clears the stop
/// word, checks that `f`'s stack objects fit, counts `f` as the one live activation, calls it
/// with the arguments read from `args` (one 8-byte slot per parameter, the value in its low
/// bytes), writes its result's leaves to `results` (one slot each), flushes C's `stdout` and
/// returns; the host then reads the stop word (spec/backends.md, "Sessions"). `None` when a
/// parameter is not a scalar (the function cannot be called through a session).
pub(crate) fn define_session_wrapper<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    fctx: &mut FunctionBuilderContext,
    opts: &LowerOptions<'_>,
    f: irkit_core::Inst,
    export: &str,
) -> Result<Option<crate::lower::SessionEntry>, BackendError> {
    let m = ctx.m;
    let Some(Callee::Func(fid)) = ctx.funcs.get(&f).cloned() else {
        return Ok(None);
    };
    let Some(fty) = m.ty(f) else {
        return Ok(None);
    };
    let Some((&ret, ps)) = m.operands(fty).split_first() else {
        return Ok(None);
    };
    let mut params = Vec::with_capacity(ps.len());
    for &p in ps {
        match ctx.layouts.scalar(p) {
            Some(s) => params.push(s),
            None => return Ok(None),
        }
    }
    let results = if m.opcode(ret) == Opcode::VOID {
        Vec::new()
    } else {
        match ctx.leaves(ret) {
            Ok(l) => l,
            Err(_) => return Ok(None),
        }
    };
    let mut sig = ctx.cl.make_signature();
    sig.params = vec![AbiParam::new(PTR), AbiParam::new(PTR)];
    let id = ctx
        .cl
        .declare_function(&format!("irkit.call.{}", f.index()), Linkage::Local, &sig)
        .map_err(|e| cl_err("session wrapper", e))?;
    let mut c = ctx.cl.make_context();
    c.func.signature = sig;
    {
        let mut b = FunctionBuilder::new(&mut c.func, fctx);
        let block = b.create_block();
        b.append_block_params_for_function_params(block);
        b.switch_to_block(block);
        let (args, outs) = (b.block_params(block)[0], b.block_params(block)[1]);
        set_stack_limit(ctx, &mut b, opts.stack_budget);
        let flags = MemFlagsData::trusted();
        let gv = ctx.data_in_func(ctx.rt.state, b.func);
        let at = b.ins().symbol_value(PTR, gv);
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().store(flags, zero, at, STOP);
        let frame = ctx.frames.get(&f).copied().unwrap_or(0);
        let limit = b.ins().load(types::I64, flags, at, STACK_LIMIT);
        let need = b.ins().iadd_imm_u(limit, frame as i64);
        let sp = b.ins().get_stack_pointer(PTR);
        let low = b.ins().icmp(IntCC::UnsignedLessThan, sp, need);
        let (cold, cont) = (b.create_block(), b.create_block());
        b.set_cold_block(cold);
        b.ins().brif(low, cold, &[], cont, &[]);
        b.switch_to_block(cold);
        let text = format!(
            "trap: {} in {}\n",
            trap_kinds::NATIVE_STACK_EXHAUSTED,
            first_place(m, f)
        );
        let msg = ctx.message(&text)?;
        let gv = ctx.data_in_func(msg, b.func);
        let p = b.ins().symbol_value(PTR, gv);
        let n = b.ins().iconst(types::I64, text.len() as i64);
        let tr = ctx.cl.declare_func_in_func(ctx.rt.trap, b.func);
        b.ins().call(tr, &[p, n]);
        b.ins().return_(&[]);
        b.switch_to_block(cont);
        let one = b.ins().iconst(types::I64, 1);
        b.ins().store(flags, one, at, DEPTH);
        let vals: Vec<_> = params
            .iter()
            .enumerate()
            .map(|(i, s)| b.ins().load(s.clif(), flags, args, 8 * i as i32))
            .collect();
        let callee = ctx.cl.declare_func_in_func(fid, b.func);
        let call = b.ins().call(callee, &vals);
        let rs = b.inst_results(call).to_vec();
        for (i, v) in rs.into_iter().enumerate() {
            b.ins().store(flags, v, outs, 8 * i as i32);
        }
        let fflush = ctx.cl.declare_func_in_func(ctx.rt.fflush, b.func);
        let null = b.ins().iconst(PTR, 0);
        b.ins().call(fflush, &[null]);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(ctx.cl.target_config());
    }
    ctx.cl
        .define_function(id, &mut c)
        .map_err(|e| cl_err("session wrapper", e))?;
    Ok(Some(crate::lower::SessionEntry {
        export: export.to_string(),
        id,
        params,
        results,
    }))
}

/// The line an executable prints when its code faults on memory (spec/backends.md, "What
/// native code does not check").
const FAULT_LINE: &str = "trap: memory fault (native code does not check memory accesses; \
     `ir-run --interp` reports the instruction)\n";

/// SIGBUS's number (SIGSEGV is 11 everywhere this runs).
const SIGBUS: i64 = if cfg!(target_os = "macos") { 10 } else { 7 };

/// Defines `irkit.rt.fault(sig)`: `write(2, FAULT_LINE); _exit(70);` (async-signal-safe).
pub(crate) fn define_fault_routine<M: ClModule>(ctx: &mut Ctx<'_, M>) -> Result<(), BackendError> {
    let rt = ctx.rt;
    let msg = ctx.message(FAULT_LINE)?;
    let mut c = ctx.cl.make_context();
    c.func.signature.params = vec![AbiParam::new(types::I32)];
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut c.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let write = ctx.cl.declare_func_in_func(rt.write, b.func);
        let exit_now = ctx.cl.declare_func_in_func(rt.exit_now, b.func);
        let gv = ctx.data_in_func(msg, b.func);
        let p = b.ins().symbol_value(PTR, gv);
        let n = b.ins().iconst(types::I64, FAULT_LINE.len() as i64);
        let fd = b.ins().iconst(types::I32, 2);
        b.ins().call(write, &[fd, p, n]);
        let code = b.ins().iconst(types::I32, i64::from(EXIT_TRAP));
        b.ins().call(exit_now, &[code]);
        b.ins().trap(UNREACHABLE_AFTER_EXIT);
        b.seal_all_blocks();
        b.finalize(ctx.cl.target_config());
    }
    ctx.cl
        .define_function(rt.fault, &mut c)
        .map_err(|e| cl_err("runtime fault routine", e))
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
        set_stack_limit(ctx, &mut b, opts.stack_budget);
        // The entry's own stack objects must fit too; a call cannot check what its callee's
        // prologue does, so the trap is located at the entry function's first instruction.
        let frame = ctx.frames.get(&f).copied().unwrap_or(0);
        let gv = ctx.data_in_func(ctx.rt.state, b.func);
        let at = b.ins().symbol_value(PTR, gv);
        let limit = b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), at, STACK_LIMIT);
        let need = b.ins().iadd_imm_u(limit, frame as i64);
        let sp = b.ins().get_stack_pointer(PTR);
        let low = b.ins().icmp(IntCC::UnsignedLessThan, sp, need);
        let (cold, cont) = (b.create_block(), b.create_block());
        b.set_cold_block(cold);
        b.ins().brif(low, cold, &[], cont, &[]);
        b.switch_to_block(cold);
        let text = format!(
            "trap: {} in {}\n",
            trap_kinds::NATIVE_STACK_EXHAUSTED,
            first_place(m, f)
        );
        let msg = ctx.message(&text)?;
        let gv = ctx.data_in_func(msg, b.func);
        let p = b.ins().symbol_value(PTR, gv);
        let n = b.ins().iconst(types::I64, text.len() as i64);
        let tr = ctx.cl.declare_func_in_func(ctx.rt.trap, b.func);
        b.ins().call(tr, &[p, n]);
        b.ins().trap(UNREACHABLE_AFTER_EXIT);
        b.switch_to_block(cont);
        if matches!(opts.stack_budget, StackBudget::MainThread) {
            // An executable: a memory fault is a trap line and exit 70, not a signal.
            let fault = ctx.cl.declare_func_in_func(ctx.rt.fault, b.func);
            let handler = b.ins().func_addr(PTR, fault);
            let signal = ctx.cl.declare_func_in_func(ctx.rt.signal, b.func);
            for sig in [11, SIGBUS] {
                let n = b.ins().iconst(types::I32, sig);
                b.ins().call(signal, &[n, handler]);
            }
        }
        let one = b.ins().iconst(types::I64, 1);
        b.ins().store(MemFlagsData::trusted(), one, at, DEPTH);
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

/// Sets the stack limit (in `irkit.rt.state`) to the current stack pointer less the `budget`'s bytes (0 if
/// that would be below 0).
fn set_stack_limit<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    b: &mut FunctionBuilder<'_>,
    budget: StackBudget,
) {
    let i64t = types::I64;
    let bytes = match budget {
        StackBudget::Fixed(n) => b.ins().iconst(i64t, n as i64),
        StackBudget::MainThread => {
            // struct rlimit { rlim_t cur, max; }, RLIMIT_STACK = 3 (Linux and macOS).
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
            let p = b.ins().stack_addr(PTR, slot, 0);
            let getrlimit = ctx.cl.declare_func_in_func(ctx.rt.getrlimit, b.func);
            let which = b.ins().iconst(types::I32, 3);
            let call = b.ins().call(getrlimit, &[which, p]);
            let r = b.inst_results(call)[0];
            let cur = b.ins().load(i64t, MemFlagsData::trusted(), p, 0);
            let fallback = b.ins().iconst(i64t, DEFAULT_STACK as i64);
            let failed = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
            let cur = b.ins().select(failed, fallback, cur);
            let cap = b.ins().iconst(i64t, MAX_MAIN_STACK as i64);
            let cur = b.ins().umin(cur, cap);
            let quarter = b.ins().ushr_imm_u(cur, 2);
            let usable = b.ins().isub(cur, quarter);
            let margin = b.ins().iconst(i64t, STACK_MARGIN as i64);
            let zero = b.ins().iconst(i64t, 0);
            let enough = b.ins().icmp(IntCC::UnsignedGreaterThan, usable, margin);
            let less = b.ins().isub(usable, margin);
            b.ins().select(enough, less, zero)
        }
    };
    let sp = b.ins().get_stack_pointer(PTR);
    let zero = b.ins().iconst(i64t, 0);
    let room = b.ins().icmp(IntCC::UnsignedGreaterThan, sp, bytes);
    let below = b.ins().isub(sp, bytes);
    let limit = b.ins().select(room, below, zero);
    let gv = ctx.data_in_func(ctx.rt.state, b.func);
    let at = b.ins().symbol_value(PTR, gv);
    b.ins()
        .store(MemFlagsData::trusted(), limit, at, STACK_LIMIT);
}
