//! Calls: `call` and `call_indirect` of IR and C functions, with the checks before an IR
//! call (call depth, native stack) and the session's stop check after one; and the tail calls
//! `tail_call` and `tail_call_indirect`, lowered to Cranelift's `return_call` and
//! `return_call_indirect` (every IR function has the `tail` calling convention: spec/backends.md,
//! "Calling conventions"), so a chain of tail calls runs in one frame.

use crate::runtime::{DEPTH, LIMIT};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, SigRef, Value, types as clt};
use cranelift_module::Module as ClModule;
use irkit_backend::{BackendError, trap_kinds};
use irkit_core::{Inst, Op};

use super::func::{FnLower, Vals};
use crate::context::Callee;
use crate::error::unsupported;
use crate::place::Place;
use crate::types::PTR;

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    pub(crate) fn call(
        &mut self,
        inst: Inst,
        op: Op,
        ops: &[Inst],
        place: &Place,
    ) -> Result<(), BackendError> {
        let m = self.ctx.m;
        let args_from = if op == Op::Call { 1 } else { 2 };
        let mut args = Vec::new();
        for &a in &ops[args_from..] {
            args.extend(self.val(a)?);
        }
        let call = if op == Op::Call {
            match self.ctx.funcs.get(&ops[0]).cloned() {
                // An IR function: one more activation, checked (a C function is not), unless
                // it checks its own frame or is a small leaf (`unchecked_call`).
                Some(Callee::Func(fid)) if m.entry_block(ops[0]).is_some() => {
                    let frame = self.ctx.frames.get(&ops[0]).copied().unwrap_or(0);
                    let saved = if self.unchecked_call(ops[0]) {
                        None
                    } else {
                        self.enter_call(frame, place)?
                    };
                    let args = self.with_limit(ops[0], args);
                    let fr = self.ctx.func_in_func(fid, self.b.func);
                    let call = self.b.ins().call(fr, &args);
                    self.leave_call(saved);
                    self.check_stop();
                    call
                }
                // A C function: not an activation, but it may call back into IR code (a
                // `qsort` comparison calling `qsort`), so the stack is checked.
                Some(Callee::Func(fid)) => {
                    self.check_stack(place)?;
                    let fr = self.ctx.func_in_func(fid, self.b.func);
                    let call = self.b.ins().call(fr, &args);
                    self.check_stop();
                    call
                }
                Some(Callee::SessionExit) => {
                    self.session_exit(&args);
                    return self.after_trap(inst);
                }
                Some(Callee::Abort(_)) => {
                    self.trap_here(trap_kinds::ABORT, place)?;
                    return self.after_trap(inst);
                }
                Some(Callee::Unavailable(name)) => {
                    self.trap_here(&trap_kinds::unknown_extern(&name), place)?;
                    return self.after_trap(inst);
                }
                None => return Err(self.malformed("call of something that is not a func")),
            }
        } else {
            let (sr, callee, frame) = self.indirect_callee(ops[0], ops[1], place)?;
            let saved = self.enter_call(frame, place)?;
            let call = self.b.ins().call_indirect(sr, callee, &args);
            self.leave_call(saved);
            self.check_stop();
            call
        };
        let rs = Vals::from_slice(self.b.inst_results(call));
        if m.ty(inst).is_some() {
            self.set(inst, rs);
        }
        Ok(())
    }

    /// Before a call of an IR function whose `stackalloc` objects take `frame` bytes: the
    /// `stack overflow` trap at `place` if a call depth limit is set and that many activations
    /// are live (exactly the interpreter's rule), or if the stack below the caller's frame
    /// cannot hold `frame` bytes above the running thread's stack limit (checked here, before
    /// the callee's prologue moves the stack pointer, so no frame can jump over the guard
    /// page); else, with a depth limit, one more activation. Returns what
    /// [`FnLower::leave_call`] needs: the thread's state and the count before, when counted.
    fn enter_call(
        &mut self,
        frame: u64,
        place: &Place,
    ) -> Result<Option<(Value, Value)>, BackendError> {
        let (state, depth) = self.stack_check(frame, self.ctx.max_depth, place)?;
        Ok(depth.map(|depth| {
            let more = self.b.ins().iadd_imm_s(depth, 1);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), more, state, DEPTH);
            (state, depth)
        }))
    }

    /// The check before a call: the thread's stack must hold `frame` bytes above its limit
    /// (and, with `max_depth`, fewer than that many activations must be live). One branch on
    /// the hot path; the cold path traps on the depth, then asks `irkit.rt.stack_slow`, which
    /// finds the thread's stack limit on its first check. In a build whose checks are machine
    /// traps (`crate::sites`) without a depth limit, one conditional trap: the limit is known,
    /// found where IR code is entered from C ([`crate::routines::ensure_stack_limit`]).
    /// Returns the thread's state and, with `max_depth`, the activation count, in the block
    /// where the call goes on.
    fn stack_check(
        &mut self,
        frame: u64,
        max_depth: Option<u64>,
        place: &Place,
    ) -> Result<(Value, Option<Value>), BackendError> {
        if let Some(limit) = self.limit {
            // The hidden argument (`Ctx::internal`, only where the limit is known and no
            // depth is counted): no thread-local access.
            let need = self.b.ins().iadd_imm_u(limit, frame as i64);
            let sp = self.b.ins().get_stack_pointer(PTR);
            let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, need);
            self.trap_if(low, trap_kinds::NATIVE_STACK_EXHAUSTED, place)?;
            return Ok((limit, None));
        }
        let state = self.thread_state();
        let flags = MemFlagsData::trusted();
        let limit = self.b.ins().load(clt::I64, flags, state, LIMIT);
        let need = self.b.ins().iadd_imm_u(limit, frame as i64);
        let sp = self.b.ins().get_stack_pointer(PTR);
        let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, need);
        // Where the limit is known no depth is counted (`Ctx::limit_known`).
        if self.ctx.limit_known() {
            self.trap_if(low, trap_kinds::NATIVE_STACK_EXHAUSTED, place)?;
            return Ok((state, None));
        }
        let counted = max_depth.map(|max| {
            let depth = self.b.ins().load(clt::I64, flags, state, DEPTH);
            let full =
                self.b
                    .ins()
                    .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, depth, max as i64);
            (max, depth, full)
        });
        let bad = match counted {
            Some((_, _, full)) => self.b.ins().bor(full, low),
            None => low,
        };
        let (cold, cont) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(cold);
        self.b.ins().brif(bad, cold, &[], cont, &[]);
        self.b.switch_to_block(cold);
        if let Some((max, _, full)) = counted {
            let kind = trap_kinds::stack_overflow(usize::try_from(max).unwrap_or(usize::MAX));
            self.trap_if(full, &kind, place)?;
        }
        let fits = crate::routines::stack_fits_slow(self.ctx, &mut self.b, state, sp, frame);
        let exhausted = self.b.ins().icmp_imm_u(IntCC::Equal, fits, 0);
        self.trap_if(exhausted, trap_kinds::NATIVE_STACK_EXHAUSTED, place)?;
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        Ok((state, counted.map(|(_, depth, _)| depth)))
    }

    /// Whether a direct call of IR function `callee` is made without a check: a small leaf
    /// ([`Ctx::unchecked`](crate::context::Ctx::unchecked)), or a function that checks its own
    /// frame against the limit it is given, in its prologue
    /// ([`Ctx::internal`](crate::context::Ctx::internal)).
    fn unchecked_call(&self, callee: Inst) -> bool {
        self.ctx.unchecked.contains(&callee) || self.ctx.internal.contains(&callee)
    }

    /// The arguments of a direct call of IR function `callee`: `args`, after the running thread's
    /// stack limit if `callee` gets it ([`Ctx::internal`](crate::context::Ctx::internal)): this
    /// function's own hidden argument, or read from the thread's state (known: only functions in a
    /// build whose checks are machine traps get it).
    fn with_limit(&mut self, callee: Inst, args: Vec<Value>) -> Vec<Value> {
        if !self.ctx.internal.contains(&callee) {
            return args;
        }
        let limit = match self.limit {
            Some(l) => l,
            None => {
                let state = self.thread_state();
                self.b
                    .ins()
                    .load(clt::I64, MemFlagsData::trusted(), state, LIMIT)
            }
        };
        std::iter::once(limit).chain(args).collect()
    }

    /// Before a call of a C function: the `native stack exhausted` trap at `place` if the
    /// stack pointer is below the running thread's stack limit (C code and what it calls back
    /// have the margin below it).
    fn check_stack(&mut self, place: &Place) -> Result<(), BackendError> {
        self.stack_check(0, None, place).map(|_| ())
    }

    /// After a call of an IR function: the count is back to what it was before.
    fn leave_call(&mut self, saved: Option<(Value, Value)>) {
        if let Some((state, depth)) = saved {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), depth, state, DEPTH);
        }
    }

    /// What `call_indirect` and `tail_call_indirect` share: signature `sig` imported, the
    /// callee pointer `ptr` checked for null, and the most its possible callees' `stackalloc`
    /// objects take.
    fn indirect_callee(
        &mut self,
        sig: Inst,
        ptr: Inst,
        place: &Place,
    ) -> Result<(SigRef, Value, u64), BackendError> {
        let signature = self
            .ctx
            .signature(sig, false)
            .map_err(|what| unsupported(place.render(self.ctx.m), what))?;
        let sr = self.b.import_signature(signature);
        let callee = self.val1(ptr)?;
        // Null is the one bad function pointer native code checks (cheaply, and with the
        // interpreter's message: null is address 0 in both).
        let null = self.b.ins().icmp_imm_s(IntCC::Equal, callee, 0);
        self.trap_if(null, &trap_kinds::bad_function_pointer(0), place)?;
        let mut frame = self.ctx.max_frame.get(&sig).copied().unwrap_or(0);
        if self.ctx.session.is_some() {
            // Functions of this type compiled later may be called here too.
            frame = frame.max(crate::runtime::SESSION_INDIRECT_RESERVE);
        }
        Ok((sr, callee, frame))
    }

    /// After a call that always traps: its result (if any) is a placeholder in an unreachable
    /// block.
    fn after_trap(&mut self, inst: Inst) -> Result<(), BackendError> {
        self.continue_unreachable();
        if let Some(ty) = self.ctx.m.ty(inst) {
            let vs = self
                .leaves(ty, inst)?
                .into_iter()
                .map(|s| self.zero(s))
                .collect();
            self.set(inst, vs);
        }
        Ok(())
    }

    /// `tail_call @f, args` and `tail_call_indirect S, %p, args`: the callee's activation
    /// replaces this one. The native stack is checked as for a call (the callee's objects must
    /// fit below this frame, which is conservative: the frame goes away), the call depth is
    /// not (it does not change). A tail call of a C function (which has C's convention, not
    /// `tail`) is a call and a return of its result: C code cannot continue a chain of tail
    /// calls, so the frame it keeps is one.
    pub(crate) fn tail_call(
        &mut self,
        op: Op,
        ops: &[Inst],
        place: &Place,
    ) -> Result<(), BackendError> {
        let m = self.ctx.m;
        let args_from = if op == Op::TailCall { 1 } else { 2 };
        let mut args = Vec::new();
        for &a in &ops[args_from..] {
            args.extend(self.val(a)?);
        }
        if op == Op::TailCallIndirect {
            let (sr, callee, frame) = self.indirect_callee(ops[0], ops[1], place)?;
            self.stack_check(frame, None, place)?;
            self.b.ins().return_call_indirect(sr, callee, &args);
            return Ok(());
        }
        match self.ctx.funcs.get(&ops[0]).cloned() {
            Some(Callee::Func(fid)) if m.entry_block(ops[0]).is_some() => {
                if !self.unchecked_call(ops[0]) {
                    let frame = self.ctx.frames.get(&ops[0]).copied().unwrap_or(0);
                    self.stack_check(frame, None, place)?;
                }
                let args = self.with_limit(ops[0], args);
                let fr = self.ctx.func_in_func(fid, self.b.func);
                self.b.ins().return_call(fr, &args);
            }
            Some(Callee::Func(fid)) => {
                self.check_stack(place)?;
                let fr = self.ctx.func_in_func(fid, self.b.func);
                let call = self.b.ins().call(fr, &args);
                self.check_stop();
                let rs = Vals::from_slice(self.b.inst_results(call));
                self.b.ins().return_(&rs);
            }
            Some(Callee::SessionExit) => self.session_exit(&args),
            Some(Callee::Abort(_)) => self.trap_here(trap_kinds::ABORT, place)?,
            Some(Callee::Unavailable(name)) => {
                self.trap_here(&trap_kinds::unknown_extern(&name), place)?;
            }
            None => return Err(self.malformed("tail call of something that is not a func")),
        }
        Ok(())
    }
}
