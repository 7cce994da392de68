//! Lowering one function body: blocks and their parameters, terminators, calls, aggregates
//! (`extract`, `insert`, `select`), constants and definition addresses, and trap paths. The
//! other opcodes are in their own files: arithmetic, comparisons and conversions in
//! [`super::arith`], memory in [`super::memory`], edges and `switch` in [`super::control`].
//!
//! Blocks are lowered in reverse post-order from the entry, so every value is defined before it
//! is used; blocks unreachable from the entry are not lowered. A trap is a branch to a cold
//! block that calls the trap routine with the trap line, located as the interpreter locates it.

use rustc_hash::FxHashMap as HashMap;
use smallvec::{SmallVec, smallvec};

use crate::runtime::{STOP, STOP_ARG, STOPPED_EXIT};
use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, TrapCode, Value, types as clt};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::Module as ClModule;
use irkit_backend::{BackendError, trap_kinds};
use irkit_core::{Inst, Op, Opcode};

use crate::context::{Callee, Ctx};
use crate::error::unsupported;
use crate::place::Place;
use crate::runtime::UNREACHABLE_AFTER_EXIT;
use crate::types::{ClifType, PTR, Scalar};
use irkit_core::place::verified_def_label;

/// The most a function's `stackalloc` objects may take together: Cranelift's limit on a frame
/// (`ABIMachineSpec::maximum_frame_size`, 1 GiB on every target), less room for the rest of
/// the frame.
pub(crate) const MAX_FRAME: u64 = (1 << 30) - (1 << 20);

/// Lowers function definition `f` and defines it in the Cranelift module (compiled here, on
/// this thread), its message table declared first.
pub(crate) fn lower_function<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    fctx: &mut FunctionBuilderContext,
    f: Inst,
) -> Result<(), BackendError> {
    let Some(mut built) = build_function(ctx, fctx, f, ctx.cl.make_context())? else {
        return Ok(());
    };
    let table = crate::names::declare_messages(ctx, &built.messages)?;
    crate::names::bind_messages(&mut built.code.func, table);
    let c = crate::isa::define_function(
        &mut ctx.cl,
        (built.id, &built.place),
        &mut built.code,
        &*ctx.large,
    )?;
    let size = u32::try_from(c.code_buffer().len()).unwrap_or(u32::MAX);
    ctx.code_sizes.push((f, built.id, size));
    if ctx.sites.is_some() {
        let rows = crate::debug::line_rows(&c);
        let traps = crate::sites::code_traps(&c);
        crate::site_table::note_function(
            ctx,
            (f, built.id),
            (table, &built.messages),
            &rows,
            &traps,
        );
    }
    ctx.keep_debug(built.id, Some(f), Some(&c));
    Ok(())
}

/// A function body lowered to Cranelift IR, not compiled yet.
pub(crate) struct Built {
    /// Its symbol.
    pub(crate) id: cranelift_module::FuncId,
    /// The Cranelift function (in its context).
    pub(crate) code: cranelift_codegen::Context,
    /// The function's name, for errors.
    pub(crate) place: String,
    /// Its trap messages, in first-use order: the code refers to them as offsets into their
    /// concatenation, the function's message table, named by the placeholder `MESSAGE_NS:0`
    /// (`crate::names`) and declared when the code is defined.
    pub(crate) messages: Vec<String>,
}

/// Lowers function definition `f` to Cranelift IR into `code` (a context made by the
/// Cranelift module, cleared here: one reused from a previous function keeps its allocations,
/// as Cranelift intends), without compiling it; `None` if `f` is not a function this module
/// defines. Only reads the shared state: any thread may lower any function.
pub(crate) fn build_function<M: ClModule>(
    ctx: &Ctx<'_, M>,
    fctx: &mut FunctionBuilderContext,
    f: Inst,
    code: cranelift_codegen::Context,
) -> Result<Option<Built>, BackendError> {
    let m = ctx.m;
    let Some(id) = defined_function(ctx, f)? else {
        return Ok(None);
    };
    let mut c = code;
    ctx.cl.clear_context(&mut c);
    c.func.signature = ctx
        .cl
        .declarations()
        .get_function_decl(id)
        .signature
        .clone();
    if ctx.internal.contains(&f) {
        // Its hidden first argument is the stack limit its prologue checks its whole frame
        // against, before making it (spec/backends.md, "Call depth and the native stack").
        let limit = c
            .func
            .create_global_value(cranelift_codegen::ir::GlobalValueData::VMContext);
        c.func.stack_limit = Some(limit);
    }
    let messages = {
        let b = FunctionBuilder::new(&mut c.func, fctx);
        let mut fl = FnLower {
            ctx,
            b,
            fname: verified_def_label(m, f).into(),
            values: HashMap::default(),
            blocks: HashMap::default(),
            data_refs: HashMap::default(),
            nan_observed: Default::default(),
            forwardable: Default::default(),
            latches: Default::default(),
            messages: Vec::new(),
            message_offsets: HashMap::default(),
            message_bytes: 0,
            state: None,
            limit: None,
            source: f,
        };
        fl.body(f)?;
        fl.b.seal_all_blocks();
        let cfg = fl.ctx.cl.target_config();
        fl.b.finalize(cfg);
        fl.messages
    };
    Ok(Some(Built {
        id,
        code: c,
        place: verified_def_label(m, f),
        messages,
    }))
}

/// The symbol of function definition `f` if this module defines it (`None` if it does not);
/// an error if it cannot be compiled because its `stackalloc` objects exceed a native frame
/// (checked before lowering, and before a cached function is taken).
pub(crate) fn defined_function<M: ClModule>(
    ctx: &Ctx<'_, M>,
    f: Inst,
) -> Result<Option<cranelift_module::FuncId>, BackendError> {
    let Some(Callee::Func(id)) = ctx.funcs.get(&f) else {
        return Ok(None);
    };
    let frame = ctx.frames.get(&f).copied().unwrap_or(0);
    if frame > MAX_FRAME {
        return Err(unsupported(
            verified_def_label(ctx.m, f),
            format!(
                "stack objects of {frame} bytes in one activation (a native frame holds at most {MAX_FRAME} bytes)"
            ),
        ));
    }
    Ok(Some(*id))
}

/// The leaves of one value: a scalar's one Cranelift value is kept inline.
pub(crate) type Vals = SmallVec<[Value; 1]>;

/// The state of one function's lowering.
pub(crate) struct FnLower<'c, 'm, 'f, M: ClModule> {
    pub(crate) ctx: &'c Ctx<'m, M>,
    pub(crate) b: FunctionBuilder<'f>,
    fname: std::rc::Rc<str>,
    /// The leaves of each local value (parameters and instruction results).
    values: HashMap<Inst, Vals>,
    /// The Cranelift block of each reachable IR block.
    pub(crate) blocks: HashMap<Inst, ir::Block>,
    /// The function's reference to each data object it addresses ([`FnLower::address_of`]).
    data_refs: HashMap<cranelift_module::DataId, cranelift_codegen::ir::GlobalValue>,
    /// The values whose NaN bits the program may observe: only float results among them are
    /// canonicalized ([`super::nan`]).
    pub(crate) nan_observed: rustc_hash::FxHashSet<Inst>,
    /// The blocks an edge may skip (`super::forward::forwardable`).
    pub(crate) forwardable: rustc_hash::FxHashSet<Inst>,
    /// The loops' latches (`super::forward::latches`).
    pub(crate) latches: rustc_hash::FxHashSet<Inst>,
    /// The trap messages, in first-use order.
    messages: Vec<String>,
    /// Each message's index in [`FnLower::messages`] and offset in the function's message
    /// table (their concatenation).
    message_offsets: HashMap<String, (usize, i64)>,
    /// The table's length so far.
    message_bytes: i64,
    /// The running thread's state ([`crate::routines::thread_state`]) as read by the first
    /// call of the IR block being lowered: its later calls reuse it (the value dominates the
    /// rest of the block), so a thread-local access (a host call, in the JIT) is made once per
    /// block with calls, not once per call.
    state: Option<Value>,
    /// In a function that gets it ([`Ctx::internal`]), the running thread's stack limit: its
    /// hidden first argument.
    pub(crate) limit: Option<Value>,
    /// The IR block being lowered (the source of its terminator's edges).
    pub(crate) source: Inst,
}

impl<M: ClModule> FnLower<'_, '_, '_, M> {
    fn body(&mut self, f: Inst) -> Result<(), BackendError> {
        let m = self.ctx.m;
        // Each block's position among the function's blocks (its label's number).
        let positions: HashMap<Inst, usize> =
            m.blocks(f).enumerate().map(|(i, blk)| (blk, i)).collect();
        // Each located instruction's Cranelift source location is its ordinal
        // (`crate::debug::locs`).
        let bases = crate::debug::locs::block_bases(m, f);
        let order = irkit_core::edges::reverse_postorder(m, f);
        // In a `relaxed_nan` function any NaN wasm's rules allow is a right result (spec/ir.md,
        // "Relaxed NaNs"), and the hardware's follow them: none is canonicalized.
        self.nan_observed = if m.find_decoration(f, Opcode::RELAXED_NAN).is_some() {
            Default::default()
        } else {
            super::nan::observed(m, &order)
        };
        self.forwardable = super::forward::forwardable(m, &order);
        self.latches = super::forward::latches(m, &order);
        for (i, &blk) in order.iter().enumerate() {
            let cb = self.b.create_block();
            if i == 0 {
                self.b.append_block_params_for_function_params(cb);
            } else {
                for &p in m.block_params(blk) {
                    let ty = m
                        .ty(p)
                        .ok_or_else(|| self.malformed("param without type"))?;
                    for s in self.leaves(ty, p)? {
                        self.b.append_block_param(cb, s.clif());
                    }
                }
            }
            self.blocks.insert(blk, cb);
        }
        for &blk in &order {
            let cb = self.blocks[&blk];
            self.source = blk;
            self.b.switch_to_block(cb);
            let params = self.b.block_params(cb).to_vec();
            let mut at = 0;
            if blk == order[0] && self.ctx.internal.contains(&f) {
                self.limit = params.first().copied();
                at = 1;
            }
            for &p in m.block_params(blk) {
                let ty = m
                    .ty(p)
                    .ok_or_else(|| self.malformed("param without type"))?;
                let n = self.leaves(ty, p)?.len();
                let vs = params
                    .get(at..at + n)
                    .ok_or_else(|| self.malformed("entry block parameters do not match"))?;
                self.values.insert(p, Vals::from_slice(vs));
                at += n;
            }
            self.state = None;
            if blk == order[0] && self.ctx.limit_known() && self.ctx.entered_from_c.contains(&f) {
                let state = self.thread_state();
                crate::routines::ensure_stack_limit(self.ctx, &mut self.b, state);
            }
            let body = &m.children(blk)[m.block_params(blk).len()..];
            let base = bases.get(&blk).copied().unwrap_or(u32::MAX);
            let position = positions.get(&blk).copied().unwrap_or(0);
            for (index, &inst) in body.iter().enumerate() {
                let ordinal = u32::try_from(index)
                    .ok()
                    .and_then(|i| base.checked_add(i))
                    .unwrap_or(u32::MAX);
                let mut loc = crate::debug::locs::srcloc(m, inst, ordinal);
                if loc.is_default()
                    && ordinal != u32::MAX
                    && crate::site_table::traps_by_itself(self.ctx, inst)
                {
                    // The fault handler finds an instruction whose code traps by itself by
                    // its code range (`crate::site_table::note_function`), located or not.
                    loc = cranelift_codegen::ir::SourceLoc::new(ordinal);
                }
                self.b.set_srcloc(loc);
                let place = Place {
                    func: self.fname.clone(),
                    block: (blk, position),
                    index,
                    inst,
                };
                self.inst(inst, &place)?;
            }
        }
        Ok(())
    }

    /// The running thread's state: the one the IR block read already, else read here.
    pub(crate) fn thread_state(&mut self) -> Value {
        match self.state {
            Some(s) => s,
            None => {
                let s = crate::routines::thread_state(self.ctx, &mut self.b);
                self.state = Some(s);
                s
            }
        }
    }

    pub(crate) fn malformed(&self, what: &str) -> BackendError {
        BackendError::Malformed(format!("{}: {what}", self.fname))
    }

    /// The scalar leaves of value type `ty`; `at` names the place in errors.
    pub(crate) fn leaves(&self, ty: Inst, at: Inst) -> Result<Vec<Scalar>, BackendError> {
        self.ctx
            .leaves(ty)
            .map_err(|what| unsupported(format!("{} ({at})", self.fname), what))
    }

    /// The leaves of operand `v` in the current block.
    pub(crate) fn val(&mut self, v: Inst) -> Result<Vals, BackendError> {
        if let Some(vs) = self.values.get(&v) {
            return Ok(vs.clone());
        }
        let m = self.ctx.m;
        let op = m.opcode(v);
        if op.is_definition() {
            return Ok(smallvec![self.address_of(v)?]);
        }
        if op.is_constant() {
            let mut out = Vals::new();
            let mut work = vec![v];
            while let Some(c) = work.pop() {
                if m.opcode(c).is_definition() {
                    out.push(self.address_of(c)?);
                    continue;
                }
                let ty = m
                    .ty(c)
                    .ok_or_else(|| self.malformed("constant without type"))?;
                match m.opcode(c) {
                    Opcode::CONST_INT => {
                        let bits = m.payload(c).as_int().unwrap_or(0);
                        let s = self.scalar(ty)?;
                        out.push(self.b.ins().iconst(s.clif(), bits as i64));
                    }
                    Opcode::CONST_FLOAT => {
                        let bits = m.payload(c).as_float_bits().unwrap_or(0);
                        let v = match self.scalar(ty)? {
                            Scalar::F32 => self
                                .b
                                .ins()
                                .f32const(ir::immediates::Ieee32::with_bits(bits as u32)),
                            _ => self
                                .b
                                .ins()
                                .f64const(ir::immediates::Ieee64::with_bits(bits)),
                        };
                        out.push(v);
                    }
                    Opcode::CONST_NULL | Opcode::CONST_ZERO => {
                        for s in self.leaves(ty, c)? {
                            out.push(self.zero(s));
                        }
                    }
                    Opcode::CONST_BYTES => {
                        let bytes = m.payload(c).as_bytes().unwrap_or(&[]);
                        if bytes.len() > crate::types::MAX_LEAVES {
                            return Err(unsupported(
                                self.fname.to_string(),
                                "a const_bytes value too large for registers",
                            ));
                        }
                        for &byte in bytes {
                            out.push(self.b.ins().iconst(clt::I8, i64::from(byte)));
                        }
                    }
                    Opcode::CONST_AGGREGATE if m.opcode(ty) == Opcode::VEC => {
                        let v = self.vector_const(c, ty)?;
                        out.push(v);
                    }
                    // Operands pushed in reverse so that they pop in order.
                    Opcode::CONST_AGGREGATE => work.extend(m.operands(c).iter().rev()),
                    other => return Err(self.malformed(&format!("{other} is not a constant"))),
                }
            }
            return Ok(out);
        }
        Err(self.malformed(&format!("{v} ({op}) used before it is defined")))
    }

    /// The single scalar of operand `v`.
    pub(crate) fn val1(&mut self, v: Inst) -> Result<Value, BackendError> {
        if let Some(&[x]) = self.values.get(&v).map(|vs| vs.as_slice()) {
            return Ok(x);
        }
        let vs = self.val(v)?;
        match vs.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.malformed(&format!("{v} is not a scalar"))),
        }
    }

    pub(crate) fn zero(&mut self, s: Scalar) -> Value {
        match s {
            Scalar::F32 => self.b.ins().f32const(0.0),
            Scalar::F64 => self.b.ins().f64const(0.0),
            Scalar::Vector(..) => self.vconst(s, &[0; 16]),
            s => self.b.ins().iconst(s.clif(), 0),
        }
    }

    /// The scalar kind of type `ty`.
    pub(crate) fn scalar(&self, ty: Inst) -> Result<Scalar, BackendError> {
        self.ctx
            .layouts
            .scalar(ty)
            .ok_or_else(|| self.malformed("a scalar type was expected"))
    }

    /// The address of a definition.
    fn address_of(&mut self, d: Inst) -> Result<Value, BackendError> {
        if let Some(&gid) = self.ctx.globals.get(&d) {
            // One global value per object and function, so that Cranelift sees every use of
            // the address as the same value (and merges the loads through it it may merge).
            let gv = match self.data_refs.get(&gid) {
                Some(&gv) => gv,
                None => {
                    let gv = self.ctx.data_in_func(gid, self.b.func);
                    self.data_refs.insert(gid, gv);
                    gv
                }
            };
            return Ok(self.b.ins().symbol_value(PTR, gv));
        }
        match self.ctx.funcs.get(&d).cloned() {
            Some(Callee::Func(fid) | Callee::Abort(fid)) => {
                let fr = self.ctx.func_in_func(fid, self.b.func);
                Ok(self.b.ins().func_addr(PTR, fr))
            }
            Some(Callee::Unavailable(name)) => Err(unsupported(
                self.fname.to_string(),
                format!("the address of extern \"{name}\", which this back end cannot call"),
            )),
            Some(Callee::SessionExit) => Err(unsupported(
                self.fname.to_string(),
                "the address of extern \"exit\" in a session (only direct calls of it)",
            )),
            None => Err(self.malformed(&format!("{d} is not a definition"))),
        }
    }

    pub(crate) fn set(&mut self, inst: Inst, vs: Vals) {
        self.values.insert(inst, vs);
    }

    /// The trap line of `kind` at `place` in the function's message table: its index there,
    /// its offset and its length.
    fn trap_line(&mut self, kind: &str, place: &Place) -> (usize, i64, i64) {
        let text = format!("trap: {kind} in {}\n", place.render(self.ctx.m));
        let len = text.len() as i64;
        let (index, offset) = match self.message_offsets.get(&text) {
            Some(&known) => known,
            None => {
                let known = (self.messages.len(), self.message_bytes);
                self.message_bytes += len;
                self.message_offsets.insert(text.clone(), known);
                self.messages.push(text);
                known
            }
        };
        (index, offset, len)
    }

    /// The site code of the trap line of `kind` at `place` (`crate::sites`), in a build whose
    /// checks are machine traps, while the function has codes left.
    pub(crate) fn site_code(&mut self, kind: &str, place: &Place) -> Option<TrapCode> {
        if !self.ctx.site_codes() {
            return None;
        }
        crate::sites::code_of_message(self.trap_line(kind, place).0)
    }

    /// Emits, in the current block, the trap `kind` at `place`: a machine trap with its site
    /// code, or a call of the trap routine; the block is then terminated.
    pub(crate) fn trap_here(&mut self, kind: &str, place: &Place) -> Result<(), BackendError> {
        if let Some(code) = self.site_code(kind, place) {
            self.b.ins().trap(code);
            return Ok(());
        }
        let (_, offset, len) = self.trap_line(kind, place);
        let gv = crate::names::message_in_func(self.b.func, offset, self.ctx.far_data);
        let p = self.b.ins().symbol_value(PTR, gv);
        let n = self.b.ins().iconst(clt::I64, len);
        let tr = self.ctx.func_in_func(self.ctx.rt.trap, self.b.func);
        self.b.ins().call(tr, &[p, n]);
        if self.ctx.session.is_some() {
            // The session's trap routine recorded the trap and returned: so does this
            // function, and every caller after it (spec/backends.md, "Sessions").
            self.return_zeros();
        } else {
            self.b.ins().trap(UNREACHABLE_AFTER_EXIT);
        }
        Ok(())
    }

    /// Session mode: returns zero values of the function's result type (the host ignores
    /// them: the call stopped).
    pub(crate) fn return_zeros(&mut self) {
        let tys: Vec<clt::Type> = self
            .b
            .func
            .signature
            .returns
            .iter()
            .map(|p| p.value_type)
            .collect();
        let vs: Vec<Value> = tys
            .into_iter()
            .map(|t| match t {
                clt::F32 => self.b.ins().f32const(0.0),
                clt::F64 => self.b.ins().f64const(0.0),
                t if t.is_vector() => {
                    let c = self
                        .b
                        .func
                        .dfg
                        .constants
                        .insert(ir::ConstantData::from(&[0u8; 16][..]));
                    self.b.ins().vconst(t, c)
                }
                t => self.b.ins().iconst(t, 0),
            })
            .collect();
        self.b.ins().return_(&vs);
    }

    /// Session mode, after a call: if the call stopped (a trap or `exit` below it), return at
    /// once. Nothing outside session mode.
    pub(crate) fn check_stop(&mut self) {
        if self.ctx.session.is_none() {
            return;
        }
        let gv = self.ctx.data_in_func(self.ctx.rt.state, self.b.func);
        let at = self.b.ins().symbol_value(PTR, gv);
        let stop = self
            .b
            .ins()
            .load(clt::I64, MemFlagsData::trusted(), at, STOP);
        let (cold, cont) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(cold);
        self.b.ins().brif(stop, cold, &[], cont, &[]);
        self.b.switch_to_block(cold);
        self.return_zeros();
        self.b.switch_to_block(cont);
    }

    /// Session mode: a call of C's `exit(code)` stops the session's call with `code`.
    pub(crate) fn session_exit(&mut self, args: &[Value]) {
        let gv = self.ctx.data_in_func(self.ctx.rt.state, self.b.func);
        let at = self.b.ins().symbol_value(PTR, gv);
        let flags = MemFlagsData::trusted();
        let code = match args.first() {
            Some(&c) if self.b.func.dfg.value_type(c) == clt::I64 => c,
            Some(&c) => self.b.ins().sextend(clt::I64, c),
            None => self.b.ins().iconst(clt::I64, 0),
        };
        self.b.ins().store(flags, code, at, STOP_ARG);
        let how = self.b.ins().iconst(clt::I64, STOPPED_EXIT);
        self.b.ins().store(flags, how, at, STOP);
        self.return_zeros();
    }

    /// Traps with `kind` at `place` when `cond` (an `I8` 0/1) is nonzero: a conditional
    /// machine trap with its site code, or a branch to a cold block calling the trap routine
    /// (the code goes on in a new block).
    pub(crate) fn trap_if(
        &mut self,
        cond: Value,
        kind: &str,
        place: &Place,
    ) -> Result<(), BackendError> {
        if let Some(code) = self.site_code(kind, place) {
            self.b.ins().trapnz(cond, code);
            return Ok(());
        }
        let cold = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(cold);
        self.b.ins().brif(cond, cold, &[], cont, &[]);
        self.b.switch_to_block(cold);
        self.trap_here(kind, place)?;
        self.b.switch_to_block(cont);
        Ok(())
    }

    /// After an unconditional trap in the middle of a block: continue in a fresh (unreachable)
    /// block so that the rest of the IR block still has somewhere to go.
    pub(crate) fn continue_unreachable(&mut self) {
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }

    fn inst(&mut self, inst: Inst, place: &Place) -> Result<(), BackendError> {
        let m = self.ctx.m;
        let opcode = m.opcode(inst);
        let ops = m.operands(inst);
        let unsupported_here =
            || unsupported(place.render(m), format!("unsupported opcode {opcode}"));
        let Some(op) = opcode.known() else {
            return Err(unsupported_here());
        };
        // Every opcode of the registry has an arm: a new one fails to compile here until it is
        // lowered or listed with those that never appear in a function body.
        match op {
            _ if self.is_vector_inst(inst, op) => {
                let r = self.vector(inst, op, place)?;
                self.set(inst, smallvec![r]);
            }
            irkit_core::op_lanes!() => return Err(self.malformed("a lane operation on scalars")),
            irkit_core::op_int_binary!()
            | irkit_core::op_float_binary!()
            | irkit_core::op_int_unary!()
            | irkit_core::op_float_unary!()
            | irkit_core::op_conversions!() => {
                let r = self.arith(inst, op, place)?;
                self.set(inst, smallvec![r]);
            }
            Op::Icmp | Op::Fcmp => {
                let r = self.compare(inst, op)?;
                self.set(inst, smallvec![r]);
            }
            Op::Select => {
                let c = self.val1(ops[0])?;
                let a = self.val(ops[1])?;
                let bv = self.val(ops[2])?;
                let r = a
                    .iter()
                    .zip(&bv)
                    .map(|(&x, &y)| self.b.ins().select(c, x, y))
                    .collect();
                self.set(inst, r);
            }
            Op::Stackalloc => {
                let p = self.stackalloc(ops[0], place)?;
                self.set(inst, smallvec![p]);
            }
            Op::Load => {
                let v = self.load(inst, ops[0])?;
                self.set(inst, smallvec![v]);
            }
            Op::Store => self.store(ops[0], ops[1])?,
            irkit_core::op_linear_memory!() => self.linear(inst, op, place)?,
            Op::Elem => {
                let r = self.elem(inst, ops)?;
                self.set(inst, smallvec![r]);
            }
            Op::Extract | Op::Insert => {
                let k = m.payload(inst).as_int().unwrap_or(u64::MAX);
                let aty = m
                    .value_type(ops[0])
                    .ok_or_else(|| self.malformed("aggregate without type"))?;
                let (range, _) = self
                    .ctx
                    .layouts
                    .field_leaves(aty, k)
                    .ok_or_else(|| unsupported(place.render(m), "field of a huge aggregate"))?;
                let agg = self.val(ops[0])?;
                if op == Op::Extract {
                    let r = agg
                        .get(range)
                        .ok_or_else(|| self.malformed("extract out of range"))?
                        .into();
                    self.set(inst, r);
                } else {
                    let v = self.val(ops[1])?;
                    let mut r = agg;
                    if r.len() < range.end || v.len() != range.len() {
                        return Err(self.malformed("insert out of range"));
                    }
                    r[range].copy_from_slice(&v);
                    self.set(inst, r);
                }
            }
            Op::Call | Op::CallIndirect => self.call(inst, op, ops, place)?,
            Op::TailCall | Op::TailCallIndirect => self.tail_call(op, ops, place)?,
            Op::Ret => {
                let vs = match ops.first() {
                    Some(&v) => self.val(v)?,
                    None => Vals::new(),
                };
                self.b.ins().return_(&vs);
            }
            Op::Jump => {
                let Some((target, args)) = self.edges(opcode, ops)?.1.into_iter().next() else {
                    return Err(self.malformed("jump without target"));
                };
                self.b.ins().jump(target, &args);
            }
            Op::Br => {
                let c = self.val1(ops[0])?;
                let mut edges = self.edges(opcode, ops)?.1.into_iter();
                let (Some((t, targs)), Some((e, eargs))) = (edges.next(), edges.next()) else {
                    return Err(self.malformed("br without two edges"));
                };
                self.b.ins().brif(c, t, &targs, e, &eargs);
            }
            Op::Switch => self.switch(ops)?,
            Op::Unreachable => self.trap_here(trap_kinds::UNREACHABLE, place)?,
            Op::Trap => self.trap_here(trap_kinds::TRAP, place)?,
            Op::TrapMsg => {
                let kind = m.payload(inst).as_str().unwrap_or_default();
                self.trap_here(kind, place)?;
            }
            // Never in a function body after linking: the module, types, constants and
            // definitions (operands, lowered where they are used), parameters (bound with their
            // block), decorations, generics (specialized away by the linker) and NOIR (procs
            // are lowered to functions before this).
            irkit_core::op_outside_bodies!() | irkit_core::op_noir!() => {
                return Err(unsupported_here());
            }
            // Lowered by a full link, which lays the classes out (spec/linking.md, "Objects").
            irkit_core::op_objects!() => {
                return Err(unsupported(
                    place.render(m),
                    format!(
                        "`{opcode}` is compiled only once a link has laid the classes out (ir-link and ir-run do)"
                    ),
                ));
            }
            // Lowered by a full link, which builds the witness tables (spec/linking.md,
            // "Existentials").
            irkit_core::op_existentials!() => {
                return Err(unsupported(
                    place.render(m),
                    format!(
                        "`{opcode}` is compiled only once a link has built the witness tables (ir-link and ir-run do)"
                    ),
                ));
            }
        }
        Ok(())
    }
}
