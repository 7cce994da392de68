//! The runtime routines generated into every module, in Cranelift IR: the trap routine (prints
//! the trap line to standard error with C's `write`, then `exit(70)`, which also flushes C's
//! `stdout`), the memory-fault handler of executables, the slow path of the stack check (a
//! thread's first check finds the thread's stack bounds), and the C-callable entry wrapper that
//! checks the entry's frame, calls the IR entry function and turns its result into an `int`
//! exit code; in session mode, the host-callable wrapper of each exported function
//! ([`SessionEntry`]). Their symbols are declared in `runtime.rs`.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataId, FuncId, Linkage, Module as ClModule};
use irkit_backend::{BackendError, EXIT_TRAP, trap_kinds};
use irkit_core::Opcode;

use crate::context::{Callee, Ctx, LowerOptions};
use crate::error::cl_err;
use crate::place::first_place;
use crate::routine::define_routine;
use crate::runtime::{
    DEFAULT_STACK, DEPTH, LIMIT, MAX_STACK_USE, STACK_MARGIN, STOP, STOP_ARG, STOP_MSG,
    STOPPED_TRAP, ThreadState, UNKNOWN_LIMIT, UNREACHABLE_AFTER_EXIT,
};
use crate::types::{ClifType, PTR, Scalar};

/// Defines the C entry `id` of `extern` function definition `f` (its C symbol, with C's
/// calling convention): it calls `f`'s body, which has the IR functions' convention (`tail`),
/// with its arguments, and returns its result. Like C's call of it before IR functions had a
/// convention of their own, it counts no activation and checks nothing; in a build whose
/// stack checks need the limit known, it finds the thread's limit first
/// ([`ensure_stack_limit`]).
pub(crate) fn define_c_entry<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    f: irkit_core::Inst,
    id: FuncId,
) -> Result<(), BackendError> {
    let Some(Callee::Func(body)) = ctx.funcs.get(&f).cloned() else {
        return Ok(());
    };
    let sig = ctx
        .cl
        .declarations()
        .get_function_decl(id)
        .signature
        .clone();
    let what = irkit_core::place::verified_def_label(ctx.m, f);
    define_routine(
        ctx,
        id,
        (sig.params, sig.returns),
        &what,
        |ctx, b, entry| {
            let args = b.block_params(entry).to_vec();
            if ctx.limit_known() {
                let state = thread_state(ctx, b);
                ensure_stack_limit(ctx, b, state);
            }
            let callee = ctx.func_in_func(body, b.func);
            let call = b.ins().call(callee, &args);
            let rs = b.inst_results(call).to_vec();
            b.ins().return_(&rs);
            Ok(())
        },
    )
}

/// Defines `irkit.rt.trap(msg, len)`: `fflush(NULL); write(2, msg, len); _exit(70);`, as the
/// fault handler ends the program at a failed check that is a machine trap (`crate::sites`):
/// what the program printed is flushed first, and a trap, like C's `abort`, runs no function
/// the program registered with `atexit`. In session mode it records the trap in the state
/// instead (`state.stop = TRAP; state.msg = msg; state.arg =
/// len`: [`STOP`], [`STOP_MSG`], [`STOP_ARG`]) and returns.
pub(crate) fn define_trap_routine<M: ClModule>(ctx: &mut Ctx<'_, M>) -> Result<(), BackendError> {
    let rt = ctx.rt;
    let session = ctx.session.is_some();
    let sig = (
        vec![AbiParam::new(PTR), AbiParam::new(types::I64)],
        Vec::new(),
    );
    define_routine(
        ctx,
        rt.trap,
        sig,
        "runtime trap routine",
        |ctx, b, entry| {
            let (msg, len) = (b.block_params(entry)[0], b.block_params(entry)[1]);
            if session {
                let gv = ctx.data_in_func(rt.state, b.func);
                let at = b.ins().symbol_value(PTR, gv);
                let flags = MemFlagsData::trusted();
                b.ins().store(flags, msg, at, STOP_MSG);
                b.ins().store(flags, len, at, STOP_ARG);
                let how = b.ins().iconst(types::I64, STOPPED_TRAP);
                b.ins().store(flags, how, at, STOP);
                b.ins().return_(&[]);
            } else {
                let fflush = ctx.func_in_func(rt.fflush, b.func);
                let null = b.ins().iconst(PTR, 0);
                b.ins().call(fflush, &[null]);
                let write = ctx.func_in_func(rt.write, b.func);
                let exit_now = ctx.func_in_func(rt.exit_now, b.func);
                let fd = b.ins().iconst(types::I32, 2);
                b.ins().call(write, &[fd, msg, len]);
                let code = b.ins().iconst(types::I32, i64::from(EXIT_TRAP));
                b.ins().call(exit_now, &[code]);
                b.ins().trap(UNREACHABLE_AFTER_EXIT);
            }
            Ok(())
        },
    )
}

/// A session's host-callable wrapper of an exported function ([`define_session_wrapper`]).
#[derive(Clone, Debug)]
pub(crate) struct SessionEntry {
    /// The export name.
    pub(crate) export: String,
    /// The wrapper, `void(const u64 *args, u64 *results)`.
    pub(crate) id: FuncId,
    /// The function's parameters (scalars).
    pub(crate) params: Vec<Scalar>,
    /// Its result's leaves.
    pub(crate) results: Vec<Scalar>,
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
    f: irkit_core::Inst,
    export: &str,
) -> Result<Option<SessionEntry>, BackendError> {
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
        let flags = MemFlagsData::trusted();
        let gv = ctx.data_in_func(ctx.rt.state, b.func);
        let at = b.ins().symbol_value(PTR, gv);
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().store(flags, zero, at, STOP);
        entry_stack_check(ctx, &mut b, f, |b| {
            b.ins().return_(&[]);
        })?;
        // Each leaf at its word (a vector takes two).
        let mut at = 0i32;
        let mut vals = Vec::with_capacity(params.len());
        for s in &params {
            vals.push(b.ins().load(s.clif(), flags, args, at));
            at += 8 * crate::types::words(*s) as i32;
        }
        let callee = ctx.func_in_func(fid, b.func);
        let call = b.ins().call(callee, &vals);
        let rs = b.inst_results(call).to_vec();
        let mut at = 0i32;
        for (v, s) in rs.into_iter().zip(&results) {
            b.ins().store(flags, v, outs, at);
            at += 8 * crate::types::words(*s) as i32;
        }
        let fflush = ctx.func_in_func(ctx.rt.fflush, b.func);
        let null = b.ins().iconst(PTR, 0);
        b.ins().call(fflush, &[null]);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(ctx.cl.target_config());
    }
    ctx.cl
        .define_function(id, &mut c)
        .map_err(|e| cl_err("session wrapper", e))?;
    ctx.keep_debug(id, None, c.compiled_code());
    Ok(Some(SessionEntry {
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

/// The trap line of a fault inside a linear memory's reservation (an executable whose
/// memories have guard regions: spec/backends.md, "Linear memories").
const OOB_LINE: &str = "trap: out of bounds memory access (in the memory's guard region; \
     `ir-run` reports the instruction)\n";

/// Defines `irkit.rt.fault(sig, info, context)`, the SIGSEGV, SIGBUS and (in a build with
/// trap sites) SIGILL and SIGFPE handler of executables (async-signal-safe but for the flush, guarded as
/// follows):
///
/// * a signal the program raised itself (`si_code` ≤ 0: `raise`, `kill`) gets its default
///   action back and is raised again: the program ends by the signal, as a C program would;
/// * a fault: C's `stdout` is flushed (what the program printed is not lost), the trap line
///   written (a failed check's or a guarded access's, found by the program counter in the
///   trap sites, `crate::sites`), and the program ends with exit code 70; a SIGILL or SIGFPE
///   at no site is not irkit's: it gets its default action. The handler runs with the signal
///   unblocked and marks its first entry (`irkit.rt.fault_once`): a fault inside the flush
///   enters it again, which writes the line and ends the program at once.
pub(crate) fn define_fault_routine<M: ClModule>(ctx: &mut Ctx<'_, M>) -> Result<(), BackendError> {
    let rt = ctx.rt;
    let msg = ctx.message(FAULT_LINE)?;
    let oob = match ctx.guard {
        Some(_) => Some(ctx.message(OOB_LINE)?),
        None => None,
    };
    let sig = (
        vec![
            AbiParam::new(types::I32),
            AbiParam::new(PTR),
            AbiParam::new(PTR),
        ],
        Vec::new(),
    );
    define_routine(
        ctx,
        rt.fault,
        sig,
        "runtime fault routine",
        |ctx, b, entry| {
            let (sig, info) = (b.block_params(entry)[0], b.block_params(entry)[1]);
            let flags = MemFlagsData::trusted();
            let gv = ctx.data_in_func(rt.fault_once, b.func);
            let once = b.ins().symbol_value(PTR, gv);
            let again = b.ins().load(types::I64, flags, once, 0);
            let (first, report, again_block) =
                (b.create_block(), b.create_block(), b.create_block());
            b.ins().brif(again, again_block, &[], first, &[]);

            b.switch_to_block(first);
            let one = b.ins().iconst(types::I64, 1);
            b.ins().store(flags, one, once, 0);
            let code = b.ins().load(
                types::I32,
                flags,
                info,
                std::mem::offset_of!(libc::siginfo_t, si_code) as i32,
            );
            let raised = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, code, 0);
            let (resend, fault) = (b.create_block(), b.create_block());
            b.ins().brif(raised, resend, &[], fault, &[]);

            b.switch_to_block(resend);
            let signal = ctx.func_in_func(rt.signal, b.func);
            let default = b.ins().iconst(PTR, libc::SIG_DFL as i64);
            b.ins().call(signal, &[sig, default]);
            let raise = ctx.func_in_func(rt.raise, b.func);
            b.ins().call(raise, &[sig]);
            b.ins().return_(&[]);

            b.switch_to_block(fault);
            let fflush = ctx.func_in_func(rt.fflush, b.func);
            let null = b.ins().iconst(PTR, 0);
            b.ins().call(fflush, &[null]);
            let line = |b: &mut FunctionBuilder<'_>, id: DataId, len: usize| {
                let gv = ctx.data_in_func(id, b.func);
                let p = b.ins().symbol_value(PTR, gv);
                let n = b.ins().iconst(types::I64, len as i64);
                [p.into(), n.into()]
            };
            let fault_line = line(b, msg, FAULT_LINE.len());
            // The trap sites, searched by the program counter (`crate::sites`).
            let search = match (&ctx.sites, crate::sites::PC_IN_CONTEXT) {
                (Some(sites), Some(at)) => Some((sites.table, at, b.create_block())),
                _ => None,
            };
            let ill = b
                .ins()
                .icmp_imm_s(IntCC::Equal, sig, i64::from(libc::SIGILL));
            let fpe = b
                .ins()
                .icmp_imm_s(IntCC::Equal, sig, i64::from(libc::SIGFPE));
            let machine_trap = b.ins().bor(ill, fpe);
            let memory = b.create_block();
            match search {
                // A machine trap: a failed check's, found by its site.
                Some((_, _, found)) => b.ins().brif(machine_trap, found, &[], memory, &[]),
                None => b.ins().jump(memory, &[]),
            };

            b.switch_to_block(memory);
            match (&ctx.guard, oob) {
                (Some(guard), Some(oob)) => {
                    // A fault inside a linear memory's reservation is an access out of its
                    // bounds (its pages past the size have no access): the trap line of the
                    // guarded access whose code faulted, found by the program counter.
                    let addr = b.ins().load(PTR, flags, info, crate::guard::SI_ADDR);
                    let gv = ctx.data_in_func(guard.table, b.func);
                    let table = b.ins().symbol_value(PTR, gv);
                    let mut hit = b.ins().iconst(types::I8, 0);
                    for k in 0..guard.globals.len() {
                        let base = b.ins().load(PTR, flags, table, 8 * k as i32);
                        let off = b.ins().isub(addr, base);
                        let inside = b.ins().icmp_imm_u(
                            IntCC::UnsignedLessThan,
                            off,
                            crate::guard::RESERVATION as i64,
                        );
                        let set = b.ins().icmp_imm_u(IntCC::NotEqual, base, 0);
                        let both = b.ins().band(inside, set);
                        hit = b.ins().bor(hit, both);
                    }
                    match search {
                        Some((_, _, found)) => b.ins().brif(hit, found, &[], report, &fault_line),
                        None => {
                            let oob_line = line(b, oob, OOB_LINE.len());
                            b.ins().brif(hit, report, &oob_line, report, &fault_line)
                        }
                    };
                }
                _ => {
                    b.ins().jump(report, &fault_line);
                }
            }

            if let Some((sites, at, search_block)) = search {
                b.switch_to_block(search_block);
                let context = b.block_params(entry)[2];
                let pc = b.ins().load(PTR, flags, context, at);
                let gv = ctx.data_in_func(sites, b.func);
                let sites = b.ins().symbol_value(PTR, gv);
                let count = b.ins().load(types::I64, flags, sites, 0);
                let [head, body, found, next, missing] = std::array::from_fn(|_| b.create_block());
                let zero = b.ins().iconst(types::I64, 0);
                let first = b.ins().iadd_imm_u(sites, 8);
                b.ins().jump(head, &[zero.into(), first.into()]);

                b.switch_to_block(head);
                let i = b.append_block_param(head, types::I64);
                let e = b.append_block_param(head, PTR);
                let end = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, count);
                b.ins().brif(end, missing, &[], body, &[]);

                b.switch_to_block(body);
                let func = b.ins().load(PTR, flags, e, 0);
                let start = b.ins().load(types::I64, flags, e, 8);
                let stop = b.ins().load(types::I64, flags, e, 16);
                let off = b.ins().isub(pc, func);
                let from = b.ins().isub(off, start);
                let span = b.ins().isub(stop, start);
                let inside = b.ins().icmp(IntCC::UnsignedLessThan, from, span);
                b.ins().brif(inside, found, &[], next, &[]);

                b.switch_to_block(found);
                let line_p = b.ins().load(PTR, flags, e, 24);
                let len = b.ins().load(types::I64, flags, e, 32);
                b.ins().jump(report, &[line_p.into(), len.into()]);

                b.switch_to_block(next);
                let i1 = b.ins().iadd_imm_u(i, 1);
                let e1 = b.ins().iadd_imm_u(e, crate::sites::SITE_BYTES as i64);
                b.ins().jump(head, &[i1.into(), e1.into()]);

                // No site: a memory fault in a reservation is out of bounds (an access the
                // table does not name); any other machine trap is not irkit's (its default
                // action, as without the handler).
                b.switch_to_block(missing);
                let oob_line = match oob {
                    Some(oob) => line(b, oob, OOB_LINE.len()),
                    None => fault_line,
                };
                b.ins().brif(machine_trap, resend, &[], report, &oob_line);
            }

            b.switch_to_block(again_block);
            let gv = ctx.data_in_func(msg, b.func);
            let p = b.ins().symbol_value(PTR, gv);
            let n = b.ins().iconst(types::I64, FAULT_LINE.len() as i64);
            b.ins().jump(report, &[p.into(), n.into()]);

            b.switch_to_block(report);
            let write = ctx.func_in_func(rt.write, b.func);
            let exit_now = ctx.func_in_func(rt.exit_now, b.func);
            let p = b.append_block_param(report, PTR);
            let n = b.append_block_param(report, types::I64);
            let fd = b.ins().iconst(types::I32, 2);
            b.ins().call(write, &[fd, p, n]);
            let code = b.ins().iconst(types::I32, i64::from(EXIT_TRAP));
            b.ins().call(exit_now, &[code]);
            b.ins().trap(UNREACHABLE_AFTER_EXIT);
            Ok(())
        },
    )
}

/// Installs `irkit.rt.fault` for SIGSEGV and SIGBUS, and SIGILL and SIGFPE in a build with
/// trap sites,
/// with `sigaction` (`SA_SIGINFO`, and `SA_NODEFER` so that a fault inside the handler enters
/// it again).
fn install_fault_handler<M: ClModule>(ctx: &mut Ctx<'_, M>, b: &mut FunctionBuilder<'_>) {
    let size = std::mem::size_of::<libc::sigaction>() as u32;
    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4));
    let act = b.ins().stack_addr(PTR, slot, 0);
    let flags = MemFlagsData::trusted();
    let zero = b.ins().iconst(types::I64, 0);
    for offset in (0..size as i32).step_by(8) {
        b.ins().store(flags, zero, act, offset);
    }
    let fault = ctx.func_in_func(ctx.rt.fault, b.func);
    let handler = b.ins().func_addr(PTR, fault);
    b.ins().store(
        flags,
        handler,
        act,
        std::mem::offset_of!(libc::sigaction, sa_sigaction) as i32,
    );
    let how = b.ins().iconst(
        types::I32,
        i64::from(libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_ONSTACK),
    );
    b.ins().store(
        flags,
        how,
        act,
        std::mem::offset_of!(libc::sigaction, sa_flags) as i32,
    );
    let sigaction = ctx.func_in_func(ctx.rt.sigaction, b.func);
    let null = b.ins().iconst(PTR, 0);
    let sites = ctx.sites.is_some() && crate::sites::PC_IN_CONTEXT.is_some();
    let traps = if sites {
        &[libc::SIGILL, libc::SIGFPE][..]
    } else {
        &[]
    };
    for &sig in [libc::SIGSEGV, libc::SIGBUS].iter().chain(traps) {
        let n = b.ins().iconst(types::I32, i64::from(sig));
        b.ins().call(sigaction, &[n, act, null]);
    }
}

/// The running thread's state ([`crate::runtime::THREAD_STATE`] bytes: [`LIMIT`], [`DEPTH`]):
/// a thread-local object's address, or the host's `irkit.rt.thread()`.
pub(crate) fn thread_state<M: ClModule>(ctx: &Ctx<'_, M>, b: &mut FunctionBuilder<'_>) -> Value {
    match ctx.rt.thread {
        ThreadState::Tls(id) => {
            let gv = ctx.cl.declare_data_in_func(id, b.func);
            b.ins().tls_value(PTR, gv)
        }
        ThreadState::Host(id) => {
            let f = ctx.func_in_func(id, b.func);
            let call = b.ins().call(f, &[]);
            b.inst_results(call)[0]
        }
    }
}

/// The slow path of a stack check at `sp` for `frame` bytes: `irkit.rt.stack_slow(state, sp,
/// frame)`, nonzero when the frame fits.
pub(crate) fn stack_fits_slow<M: ClModule>(
    ctx: &Ctx<'_, M>,
    b: &mut FunctionBuilder<'_>,
    state: Value,
    sp: Value,
    frame: u64,
) -> Value {
    let f = ctx.func_in_func(ctx.rt.stack_slow, b.func);
    let frame = b.ins().iconst(types::I64, frame as i64);
    let call = b.ins().call(f, &[state, sp, frame]);
    b.inst_results(call)[0]
}

/// Where IR code may be entered from C (a C entry, a function whose address is taken), in a
/// build whose stack checks are conditional traps (`crate::lower::calls`): if the running
/// thread's stack limit is still unknown (the thread's first IR code), finds it
/// (`irkit.rt.stack_slow`), so that every check after it compares with the thread's limit.
pub(crate) fn ensure_stack_limit<M: ClModule>(
    ctx: &Ctx<'_, M>,
    b: &mut FunctionBuilder<'_>,
    state: Value,
) {
    let limit = b
        .ins()
        .load(types::I64, MemFlagsData::trusted(), state, LIMIT);
    let unknown = b
        .ins()
        .icmp_imm_u(IntCC::Equal, limit, UNKNOWN_LIMIT as i64);
    let (find, cont) = (b.create_block(), b.create_block());
    b.set_cold_block(find);
    b.ins().brif(unknown, find, &[], cont, &[]);
    b.switch_to_block(find);
    let sp = b.ins().get_stack_pointer(PTR);
    stack_fits_slow(ctx, b, state, sp, 0);
    b.ins().jump(cont, &[]);
    b.switch_to_block(cont);
}

/// In an entry wrapper: checks that the entry function `f`'s stack objects fit on this
/// thread's stack. When they do not, a cold block prints the trap line (located at `f`'s first
/// instruction: a call cannot check what its callee's prologue does) and `end` ends it after
/// the trap routine returns. Returns the thread's state, in the block where the wrapper goes
/// on.
fn entry_stack_check<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    b: &mut FunctionBuilder<'_>,
    f: irkit_core::Inst,
    end: impl FnOnce(&mut FunctionBuilder<'_>),
) -> Result<Value, BackendError> {
    let text = format!(
        "trap: {} in {}\n",
        trap_kinds::NATIVE_STACK_EXHAUSTED,
        first_place(ctx.m, f)
    );
    let msg = ctx.message(&text)?;
    let frame = ctx.frames.get(&f).copied().unwrap_or(0);
    let state = thread_state(ctx, b);
    let limit = b
        .ins()
        .load(types::I64, MemFlagsData::trusted(), state, LIMIT);
    let need = b.ins().iadd_imm_u(limit, frame as i64);
    let sp = b.ins().get_stack_pointer(PTR);
    let low = b.ins().icmp(IntCC::UnsignedLessThan, sp, need);
    let (slow, trap, cont) = (b.create_block(), b.create_block(), b.create_block());
    b.set_cold_block(slow);
    b.set_cold_block(trap);
    b.ins().brif(low, slow, &[], cont, &[]);
    b.switch_to_block(slow);
    let fits = stack_fits_slow(ctx, b, state, sp, frame);
    b.ins().brif(fits, cont, &[], trap, &[]);
    b.switch_to_block(trap);
    let gv = ctx.data_in_func(msg, b.func);
    let p = b.ins().symbol_value(PTR, gv);
    let n = b.ins().iconst(types::I64, text.len() as i64);
    let tr = ctx.func_in_func(ctx.rt.trap, b.func);
    b.ins().call(tr, &[p, n]);
    end(b);
    b.switch_to_block(cont);
    if ctx.max_depth.is_some() {
        // The entry is the one live activation.
        let one = b.ins().iconst(types::I64, 1);
        b.ins().store(MemFlagsData::trusted(), one, state, DEPTH);
    }
    Ok(state)
}

/// Defines `irkit.rt.stack_slow(state, sp, frame) -> i8` for thread-local state: on the
/// thread's first check (its limit is [`UNKNOWN_LIMIT`]) the limit becomes the lowest address
/// of the thread's stack (`pthread_getattr_np`, `pthread_attr_getstack`) plus
/// [`STACK_MARGIN`], and at most [`MAX_STACK_USE`] below `sp`; if the bounds cannot be read (a
/// main thread without `/proc`), three quarters of `getrlimit(RLIMIT_STACK)` below `sp` (8 MiB
/// if that fails too). Returns whether `sp` leaves `frame` bytes above the limit.
pub(crate) fn define_stack_slow_routine<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
) -> Result<(), BackendError> {
    let rt = ctx.rt;
    let i64t = types::I64;
    let flags = MemFlagsData::trusted();
    let sig = (
        vec![AbiParam::new(PTR), AbiParam::new(i64t), AbiParam::new(i64t)],
        vec![AbiParam::new(types::I8)],
    );
    define_routine(
        ctx,
        rt.stack_slow,
        sig,
        "runtime stack routine",
        |ctx, b, entry| {
            let (state, sp, frame) = (
                b.block_params(entry)[0],
                b.block_params(entry)[1],
                b.block_params(entry)[2],
            );
            let (find, bounds, rlimit, decide) = (
                b.create_block(),
                b.create_block(),
                b.create_block(),
                b.create_block(),
            );
            b.append_block_param(decide, i64t);
            let limit = b.ins().load(i64t, flags, state, LIMIT);
            let unknown = b
                .ins()
                .icmp_imm_u(IntCC::Equal, limit, UNKNOWN_LIMIT as i64);
            b.ins().brif(unknown, find, &[], decide, &[limit.into()]);

            // The thread's stack bounds.
            b.switch_to_block(find);
            let attr_size = std::mem::size_of::<libc::pthread_attr_t>() as u32;
            let attr = b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                attr_size,
                4,
            ));
            let out =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
            let attr = b.ins().stack_addr(PTR, attr, 0);
            let addr = b.ins().stack_addr(PTR, out, 0);
            let size = b.ins().stack_addr(PTR, out, 8);
            let me = ctx.func_in_func(rt.pthread_self, b.func);
            let call = b.ins().call(me, &[]);
            let me = b.inst_results(call)[0];
            let getattr = ctx.func_in_func(rt.pthread_getattr_np, b.func);
            let call = b.ins().call(getattr, &[me, attr]);
            let r = b.inst_results(call)[0];
            b.ins().brif(r, rlimit, &[], bounds, &[]);

            b.switch_to_block(bounds);
            let getstack = ctx
                .cl
                .declare_func_in_func(rt.pthread_attr_getstack, b.func);
            let call = b.ins().call(getstack, &[attr, addr, size]);
            let r = b.inst_results(call)[0];
            let destroy = ctx.func_in_func(rt.pthread_attr_destroy, b.func);
            b.ins().call(destroy, &[attr]);
            let low = b.ins().load(i64t, flags, addr, 0);
            let margin = b.ins().iconst(i64t, STACK_MARGIN as i64);
            let limit = b.ins().iadd(low, margin);
            let cap = b.ins().iconst(i64t, MAX_STACK_USE as i64);
            let floor = usub_sat(b, sp, cap);
            let limit = b.ins().umax(limit, floor);
            let good = b.ins().icmp_imm_s(IntCC::Equal, r, 0);
            b.ins().brif(good, decide, &[limit.into()], rlimit, &[]);

            // Three quarters of RLIMIT_STACK below `sp` (Linux lets arguments and environment
            // take up to a quarter of the main thread's stack).
            b.switch_to_block(rlimit);
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
            let p = b.ins().stack_addr(PTR, slot, 0);
            let getrlimit = ctx.func_in_func(rt.getrlimit, b.func);
            let which = b
                .ins()
                .iconst(types::I32, i64::from(libc::RLIMIT_STACK as i32));
            let call = b.ins().call(getrlimit, &[which, p]);
            let r = b.inst_results(call)[0];
            let cur = b.ins().load(i64t, flags, p, 0);
            let fallback = b.ins().iconst(i64t, DEFAULT_STACK as i64);
            let failed = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
            let cur = b.ins().select(failed, fallback, cur);
            let cap = b.ins().iconst(i64t, MAX_STACK_USE as i64);
            let cur = b.ins().umin(cur, cap);
            let quarter = b.ins().ushr_imm_u(cur, 2);
            let usable = b.ins().isub(cur, quarter);
            let margin = b.ins().iconst(i64t, STACK_MARGIN as i64);
            let usable = usub_sat(b, usable, margin);
            let limit = usub_sat(b, sp, usable);
            b.ins().jump(decide, &[limit.into()]);

            // Keep the limit; the frame fits if `sp` leaves it above the limit.
            b.switch_to_block(decide);
            let limit = b.block_params(decide)[0];
            b.ins().store(flags, limit, state, LIMIT);
            let need = b.ins().iadd(limit, frame);
            let fits = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, sp, need);
            b.ins().return_(&[fits]);
            Ok(())
        },
    )
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
        // The entry's own stack objects must fit too; a call cannot check what its callee's
        // prologue does, so the trap is located at the entry function's first instruction.
        entry_stack_check(ctx, &mut b, f, |b| {
            b.ins().trap(UNREACHABLE_AFTER_EXIT);
        })?;
        if opts.install_fault_handler {
            // An executable: a memory fault is a trap line and exit 70, not a signal.
            install_fault_handler(ctx, &mut b);
        }
        if let Some(guard) = &ctx.guard {
            // Every linear memory is reserved before any IR code runs (their accesses read a
            // base that never moves afterwards).
            crate::memories::reserve_all(ctx, guard, &mut b)?;
        }
        let callee = ctx.func_in_func(fid, b.func);
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
            let fflush = ctx.func_in_func(ctx.rt.fflush, b.func);
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
    ctx.keep_debug(id, None, c.compiled_code());
    Ok(id)
}

/// `a - b`, or 0 if `b` is larger (Cranelift's `usub_sat` is for vectors only).
fn usub_sat(b: &mut FunctionBuilder<'_>, x: Value, y: Value) -> Value {
    let above = b.ins().icmp(IntCC::UnsignedGreaterThan, x, y);
    let diff = b.ins().isub(x, y);
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().select(above, diff, zero)
}

#[cfg(test)]
mod tests {
    #![allow(unsafe_code)]

    /// The fault handler reads the faulting address at [`crate::guard::SI_ADDR`] of `siginfo_t`.
    #[test]
    fn si_addr_is_where_the_c_library_keeps_it() {
        // SAFETY: a zeroed `siginfo_t` is a valid value; the bytes written are inside it.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let at = (&mut info as *mut libc::siginfo_t).cast::<u8>();
            at.add(crate::guard::SI_ADDR as usize)
                .cast::<usize>()
                .write_unaligned(0x1234_5678);
            assert_eq!(info.si_addr() as usize, 0x1234_5678);
        }
    }
}
