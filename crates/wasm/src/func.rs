//! Translation of one function body: wasm's structured control flow to blocks with
//! parameters, the operand stack to SSA values, locals through [`Ssa`].
//!
//! Every wasm label has a target block: a `block` or `if` branches to its *end* block, whose
//! parameters are the label's results; a `loop` branches to its *header*, whose parameters
//! are the loop's parameters. Values on the operand stack are ordinary SSA values (structured
//! control flow makes every definition dominate its uses). Code after an unconditional branch
//! is unreachable in wasm's sense and is skipped, tracking only its nesting.
//!
//! The body was validated before translation, so the operand stack never underflows and every
//! operand has the type wasm says: instructions are built on the builder's typed path
//! ([`Builder::ins`]), which cannot fail on them, and a stack underflow would be a bug of this
//! translator (it panics, naming it). What fails is what a valid module may hold and this front
//! end refuses ([`WasmError::Unsupported`]).

use irkit_core::{Builder, Inst, IntCC, Opcode};
use wasmparser::{BlockType, FunctionBody, Operator, ValType};

use crate::assigned::Assigned;
use crate::cfg::{Edge, Term};
use crate::env::Env;
use crate::error::{At, Place, WasmError};
use crate::ssa::Ssa;
use crate::types;

/// What kind of construct a control frame is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// `block`, or the function body itself.
    Block,
    /// `loop`: branches go to `header`.
    Loop { header: Inst },
    /// `if`: `els` is the else arm's block until `else` is seen.
    If { els: Option<Inst> },
}

/// A control frame.
#[derive(Clone, Debug)]
struct Frame {
    kind: Kind,
    /// The block after the construct; its parameters are the results.
    end: Inst,
    /// The operand stack height below the construct's parameters.
    height: usize,
    /// The values of the construct's parameters when it was entered (for `else`).
    params: Vec<Inst>,
    /// The number of results.
    results: usize,
}

/// The translator of one function body.
pub(crate) struct FuncTranslator<'a, 'm> {
    pub(crate) b: Builder<'m>,
    pub(crate) env: &'a Env,
    pub(crate) ssa: Ssa,
    pub(crate) func: Inst,
    /// The wasm function index.
    pub(crate) index: u32,
    /// The byte offset of the operator being translated.
    pub(crate) offset: u64,
    /// The position of the operator being translated in the body (the first is 0), as
    /// [`crate::assigned`] numbers them.
    position: u32,
    pub(crate) stack: Vec<Inst>,
    frames: Vec<Frame>,
    /// Whether the current position is reachable (in wasm's sense).
    pub(crate) reachable: bool,
    /// Nesting depth of constructs inside unreachable code.
    skipped: u32,
    /// The block instructions are appended to.
    pub(crate) block: Inst,
    trap_blocks: Vec<(&'static str, Inst)>,
    results: Vec<Inst>,
    ret_ty: Inst,
}

impl<'a, 'm> FuncTranslator<'a, 'm> {
    /// Translates `body` into the blocks of `func`, wasm function `index`. With `marks`,
    /// pushes for each operator the module's arena length before its translation and its
    /// offset (`crate::lines::annotate` reads them).
    pub(crate) fn translate(
        b: Builder<'m>,
        env: &'a Env,
        (index, func): (u32, Inst),
        body: &FunctionBody<'_>,
        mut marks: Option<&mut Vec<(usize, u64)>>,
    ) -> Result<(), WasmError> {
        let place = Place::in_func(index, body.range().start);
        let invalid = |e: wasmparser::BinaryReaderError| WasmError::invalid(&e);
        let fty = env
            .funcs
            .get(index as usize)
            .ok_or_else(|| WasmError::unsupported(format!("function {index}"), place))?
            .ty
            .clone();
        let mut b = b;
        let m = b.module();
        let unsupported = |t: ValType| {
            WasmError::unsupported(format!("value type {}", types::val_type_name(t)), place)
        };
        let params = types::val_types(m, fty.params()).map_err(unsupported)?;
        let results = types::val_types(m, fty.results()).map_err(unsupported)?;
        let ret_ty = types::results_type(m, &results).at(place)?;
        let mut var_types = params.clone();
        let mut locals = body.get_locals_reader().map_err(invalid)?;
        let mut declared = Vec::new();
        for _ in 0..locals.get_count() {
            let (n, t) = locals.read().map_err(invalid)?;
            let ty = types::val_type(m, t).ok_or_else(|| unsupported(t))?;
            declared.push((n, ty));
            var_types.extend(std::iter::repeat_n(ty, n as usize));
        }
        // The operators are read once, before the translation: what each loop assigns is
        // known when the loop starts ([`Assigned`]).
        let mut reader = body.get_operators_reader().map_err(invalid)?;
        let mut ops = Vec::new();
        while !reader.eof() {
            ops.push(reader.read_with_offset().map_err(invalid)?);
        }
        let (entry, entry_params) = b.entry_block(func).at(place)?;
        let mut t = FuncTranslator {
            b,
            env,
            ssa: Ssa::new(var_types, Assigned::scan(ops.iter().map(|(op, _)| op))),
            func,
            index,
            offset: place.offset,
            position: 0,
            stack: Vec::new(),
            frames: Vec::new(),
            reachable: true,
            skipped: 0,
            block: entry,
            trap_blocks: Vec::new(),
            results: results.clone(),
            ret_ty,
        };
        t.ssa.cfg.add_block(entry);
        t.ssa.seal_block(entry);
        t.b.position_at_end(entry);
        let mut var = 0u32;
        for p in entry_params {
            t.ssa.def_var(var, entry, p);
            var += 1;
        }
        for (n, ty) in declared {
            let zero = t.b.module().const_zero(ty).at(place)?;
            for _ in 0..n {
                t.ssa.def_var(var, entry, zero);
                var += 1;
            }
        }
        let end = t.new_block(&results)?;
        t.frames.push(Frame {
            kind: Kind::Block,
            end,
            height: 0,
            params: Vec::new(),
            results: results.len(),
        });
        for (op, offset) in ops {
            t.offset = offset;
            if let Some(marks) = marks.as_mut() {
                marks.push((t.b.module().arena_len(), offset));
            }
            t.operator(op)?;
            t.position = t.position.saturating_add(1);
        }
        t.finish()
    }

    /// The place of the operator being translated.
    pub(crate) fn place(&self) -> Place {
        Place::in_func(self.index, self.offset)
    }

    /// A new block with parameters of the given types.
    pub(crate) fn new_block(&mut self, params: &[Inst]) -> Result<Inst, WasmError> {
        let place = self.place();
        let (blk, _) = self.b.block(self.func, params).at(place)?;
        self.ssa.cfg.add_block(blk);
        Ok(blk)
    }

    /// Moves the cursor to `block`.
    pub(crate) fn switch_to(&mut self, block: Inst) {
        self.block = block;
        self.b.position_at_end(block);
    }

    /// Ends the current block with `term`.
    pub(crate) fn terminate(&mut self, term: Term) {
        self.ssa.cfg.terminate(self.block, term);
    }

    /// The function's shared block that traps with `kind` (made on first use; one per kind).
    pub(crate) fn trap_block(&mut self, kind: &'static str) -> Result<Inst, WasmError> {
        if let Some(&(_, t)) = self.trap_blocks.iter().find(|(k, _)| *k == kind) {
            return Ok(t);
        }
        let t = self.new_block(&[])?;
        self.ssa.cfg.terminate(t, Term::Trap(kind));
        self.ssa.seal_block(t);
        self.trap_blocks.push((kind, t));
        Ok(t)
    }

    /// Continues in a new block if `cond` (an `i1`) is false; traps with the wasm trap
    /// message `kind` ([`crate::traps`]) if it is true.
    pub(crate) fn trap_if(&mut self, cond: Inst, kind: &'static str) -> Result<(), WasmError> {
        let trap = self.trap_block(kind)?;
        let cont = self.new_block(&[])?;
        self.terminate(Term::Br(cond, Edge::new(trap, &[]), Edge::new(cont, &[])));
        self.ssa.seal_block(cont);
        self.switch_to(cont);
        Ok(())
    }

    /// Pops one operand (validation proved it is there).
    pub(crate) fn pop(&mut self) -> Inst {
        match self.stack.pop() {
            Some(v) => v,
            None => self.underflow(),
        }
    }

    /// Pops `n` operands, in stack order (the deepest first).
    pub(crate) fn pop_n(&mut self, n: usize) -> Vec<Inst> {
        match self.stack.len().checked_sub(n) {
            Some(k) => self.stack.split_off(k),
            None => self.underflow(),
        }
    }

    /// The top `n` operands, in stack order, left on the stack.
    fn peek_n(&mut self, n: usize) -> Vec<Inst> {
        let v = self.pop_n(n);
        self.stack.extend_from_slice(&v);
        v
    }

    /// A pop from an empty operand stack, which a validated body never does: a bug of this
    /// translator.
    fn underflow(&self) -> ! {
        panic!(
            "{}: operand stack underflow translating a validated body (a bug of the wasm front end)",
            self.place()
        )
    }

    /// The parameter and result types of a block type.
    fn block_type(&mut self, bt: BlockType) -> Result<(Vec<Inst>, Vec<Inst>), WasmError> {
        let place = self.place();
        let unsupported = |t: ValType| {
            WasmError::unsupported(format!("value type {}", types::val_type_name(t)), place)
        };
        let env = self.env;
        let m = self.b.module();
        match bt {
            BlockType::Empty => Ok((Vec::new(), Vec::new())),
            BlockType::Type(t) => Ok((
                Vec::new(),
                vec![types::val_type(m, t).ok_or_else(|| unsupported(t))?],
            )),
            BlockType::FuncType(i) => {
                let ft = env
                    .types
                    .get(i as usize)
                    .ok_or_else(|| WasmError::unsupported(format!("block type {i}"), place))?;
                Ok((
                    types::val_types(m, ft.params()).map_err(unsupported)?,
                    types::val_types(m, ft.results()).map_err(unsupported)?,
                ))
            }
        }
    }

    /// The branch edge to the label `depth` levels out, taking its arguments from the stack.
    pub(crate) fn branch_edge(&mut self, depth: u32) -> Result<Edge, WasmError> {
        let place = self.place();
        let i = self
            .frames
            .len()
            .checked_sub(1 + depth as usize)
            .ok_or_else(|| WasmError::unsupported(format!("branch depth {depth}"), place))?;
        let f = &self.frames[i];
        let (target, n) = match f.kind {
            Kind::Loop { header } => (header, f.params.len()),
            _ => (f.end, f.results),
        };
        let args = self.peek_n(n);
        Ok(Edge::new(target, &args))
    }

    fn operator(&mut self, op: Operator<'_>) -> Result<(), WasmError> {
        if !self.reachable {
            return self.unreachable_operator(op);
        }
        match op {
            Operator::Nop => {}
            Operator::Unreachable => {
                self.terminate(Term::Unreachable);
                self.reachable = false;
            }
            Operator::Block { blockty } => {
                let (params, results) = self.block_type(blockty)?;
                let end = self.new_block(&results)?;
                let params = self.peek_n(params.len());
                self.frames.push(Frame {
                    kind: Kind::Block,
                    end,
                    height: self.stack.len() - params.len(),
                    params,
                    results: results.len(),
                });
            }
            Operator::Loop { blockty } => {
                let (params, results) = self.block_type(blockty)?;
                let header = self.new_block(&params)?;
                let end = self.new_block(&results)?;
                let args = self.pop_n(params.len());
                self.terminate(Term::Jump(Edge::new(header, &args)));
                self.ssa.enter_loop(header, self.block, self.position);
                self.switch_to(header);
                let hp = self.b.module().block_params(header).to_vec();
                let height = self.stack.len();
                self.stack.extend_from_slice(&hp);
                self.frames.push(Frame {
                    kind: Kind::Loop { header },
                    end,
                    height,
                    params: hp,
                    results: results.len(),
                });
            }
            Operator::If { blockty } => {
                let (params, results) = self.block_type(blockty)?;
                let c = self.pop();
                let cond = self.nonzero(c);
                let then = self.new_block(&[])?;
                let els = self.new_block(&[])?;
                let end = self.new_block(&results)?;
                self.terminate(Term::Br(cond, Edge::new(then, &[]), Edge::new(els, &[])));
                self.ssa.seal_block(then);
                self.ssa.seal_block(els);
                self.switch_to(then);
                let params = self.peek_n(params.len());
                self.frames.push(Frame {
                    kind: Kind::If { els: Some(els) },
                    end,
                    height: self.stack.len() - params.len(),
                    params,
                    results: results.len(),
                });
            }
            Operator::Else => self.else_()?,
            Operator::End => self.end()?,
            Operator::Br { relative_depth } => {
                let e = self.branch_edge(relative_depth)?;
                self.terminate(Term::Jump(e));
                self.reachable = false;
            }
            Operator::BrIf { relative_depth } => {
                let c = self.pop();
                let cond = self.nonzero(c);
                let e = self.branch_edge(relative_depth)?;
                let cont = self.new_block(&[])?;
                self.terminate(Term::Br(cond, e, Edge::new(cont, &[])));
                self.ssa.seal_block(cont);
                self.switch_to(cont);
            }
            Operator::BrTable { targets } => {
                let index = self.pop();
                let invalid = |e: wasmparser::BinaryReaderError| WasmError::invalid(&e);
                let default = self.branch_edge(targets.default())?;
                let mut cases = Vec::new();
                for (k, d) in targets.targets().enumerate() {
                    let d = d.map_err(invalid)?;
                    let e = self.branch_edge(d)?;
                    let kv = self.b.module().const_i32(k as i32);
                    cases.push((kv, e));
                }
                self.terminate(Term::Switch(index, default, cases));
                self.reachable = false;
            }
            Operator::Return => {
                self.ret()?;
            }
            Operator::Call { function_index } => self.call(function_index, false)?,
            Operator::ReturnCall { function_index } => self.call(function_index, true)?,
            Operator::CallIndirect {
                type_index,
                table_index,
            } => self.call_indirect(type_index, table_index, false)?,
            Operator::ReturnCallIndirect {
                type_index,
                table_index,
            } => self.call_indirect(type_index, table_index, true)?,
            Operator::Drop => {
                self.pop();
            }
            Operator::Select | Operator::TypedSelect { .. } => {
                let c = self.pop();
                let y = self.pop();
                let x = self.pop();
                let cond = self.nonzero(c);
                let r = self.b.ins().select(cond, x, y);
                self.stack.push(r);
            }
            Operator::LocalGet { local_index } => {
                let place = self.place();
                let v = self
                    .ssa
                    .use_var(&mut self.b, local_index, self.block)
                    .at(place)?;
                self.stack.push(v);
            }
            Operator::LocalSet { local_index } => {
                let v = self.pop();
                self.ssa.def_var(local_index, self.block, v);
            }
            Operator::LocalTee { local_index } => {
                let v = self.pop();
                self.ssa.def_var(local_index, self.block, v);
                self.stack.push(v);
            }
            Operator::GlobalGet { global_index } => {
                let g = self.global(global_index)?;
                let v = g.load(&mut self.b);
                self.stack.push(v);
            }
            Operator::GlobalSet { global_index } => {
                let g = self.global(global_index)?;
                let v = self.pop();
                g.store(&mut self.b, v);
            }
            op => {
                if !self.memory_operator(&op)?
                    && !self.numeric(&op)?
                    && !self.simd_operator(&op)?
                    && !self.simd_widen_operator(&op)?
                    && !self.table_operator(&op)?
                {
                    return Err(WasmError::unsupported(
                        format!("operator `{}`", operator_name(&op)),
                        self.place(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// An operator in unreachable code: only the nesting matters.
    fn unreachable_operator(&mut self, op: Operator<'_>) -> Result<(), WasmError> {
        match op {
            Operator::Block { .. } | Operator::Loop { .. } | Operator::If { .. } => {
                self.skipped += 1;
            }
            Operator::Else if self.skipped == 0 => self.else_()?,
            Operator::End if self.skipped == 0 => self.end()?,
            Operator::End => self.skipped -= 1,
            _ => {}
        }
        Ok(())
    }

    fn global(&self, index: u32) -> Result<crate::env::Global, WasmError> {
        self.env
            .globals
            .get(index as usize)
            .copied()
            .ok_or_else(|| WasmError::unsupported(format!("global {index}"), self.place()))
    }

    /// `x != 0` for an `i32` condition: the comparison itself when `x` is one made `i32`.
    pub(crate) fn nonzero(&mut self, x: Inst) -> Inst {
        let m = self.b.module();
        if m.opcode(x) == Opcode::ZEXT
            && let Some(&c) = m.operands(x).first()
            && m.value_type(c).is_some_and(|t| m.opcode(t) == Opcode::I1)
        {
            return c;
        }
        let zero = self.b.module().const_i32(0);
        self.b.ins().icmp(IntCC::Ne, x, zero)
    }

    fn else_(&mut self) -> Result<(), WasmError> {
        let place = self.place();
        let f = self
            .frames
            .last_mut()
            .ok_or_else(|| WasmError::unsupported("`else` outside `if`", place))?;
        let Kind::If { els } = &mut f.kind else {
            return Err(WasmError::unsupported("`else` outside `if`", place));
        };
        let els = els.take();
        let (end, height, results, params) = (f.end, f.height, f.results, f.params.clone());
        if self.reachable {
            let args = self.pop_n(results);
            self.terminate(Term::Jump(Edge::new(end, &args)));
        }
        self.stack.truncate(height);
        self.stack.extend_from_slice(&params);
        if let Some(els) = els {
            self.switch_to(els);
        }
        // The else arm is reachable whenever the `if` was (frames exist only for reachable
        // constructs).
        self.reachable = true;
        Ok(())
    }

    fn end(&mut self) -> Result<(), WasmError> {
        let place = self.place();
        let f = self
            .frames
            .pop()
            .ok_or_else(|| WasmError::unsupported("`end` without a construct", place))?;
        if self.reachable {
            let args = self.pop_n(f.results);
            self.terminate(Term::Jump(Edge::new(f.end, &args)));
        }
        if let Kind::If { els: Some(els) } = f.kind {
            // An `if` without `else`: the false edge passes the parameters through.
            self.switch_to(els);
            self.terminate(Term::Jump(Edge::new(f.end, &f.params)));
        }
        if let Kind::Loop { header } = f.kind {
            self.ssa.seal_block(header);
        }
        self.ssa.seal_block(f.end);
        self.switch_to(f.end);
        self.stack.truncate(f.height);
        let results = self.b.module().block_params(f.end).to_vec();
        self.stack.extend_from_slice(&results);
        self.reachable = !self.ssa.cfg.preds(f.end).is_empty();
        self.skipped = 0;
        if self.frames.is_empty() && self.reachable {
            self.ret()?;
        }
        Ok(())
    }

    /// `return`: the results from the stack.
    fn ret(&mut self) -> Result<(), WasmError> {
        let vals = self.pop_n(self.results.len());
        let v = match vals.as_slice() {
            [] => None,
            [v] => Some(*v),
            vs => {
                let place = self.place();
                let mut agg = self.b.module().const_zero(self.ret_ty).at(place)?;
                for (k, &v) in vs.iter().enumerate() {
                    agg = self.b.ins().insert(agg, k as u64, v);
                }
                Some(agg)
            }
        };
        self.terminate(Term::Ret(v));
        self.reachable = false;
        Ok(())
    }

    /// `call f`: arguments from the stack, results (several: `extract`ed) onto it; or, for
    /// `return_call f` (`tail`), irkit's `tail_call`, which ends the block.
    fn call(&mut self, index: u32, tail: bool) -> Result<(), WasmError> {
        let place = self.place();
        let f = self
            .env
            .funcs
            .get(index as usize)
            .ok_or_else(|| WasmError::unsupported(format!("function {index}"), place))?;
        let (callee, np, nr) = (f.inst, f.ty.params().len(), f.ty.results().len());
        let args = self.pop_n(np);
        if tail {
            self.terminate(Term::TailCall(callee, args));
            self.reachable = false;
            return Ok(());
        }
        let r = self.b.ins().call(callee, &args);
        self.push_results(r, nr);
        Ok(())
    }

    /// Pushes the `n` results of a call whose value is `r`.
    pub(crate) fn push_results(&mut self, r: Inst, n: usize) {
        match n {
            0 => {}
            1 => self.stack.push(r),
            _ => {
                for k in 0..n {
                    let v = self.b.ins().extract(r, k as u64);
                    self.stack.push(v);
                }
            }
        }
    }

    fn finish(mut self) -> Result<(), WasmError> {
        let place = self.place();
        for blk in self.ssa.cfg.blocks().to_vec() {
            self.ssa.seal_block(blk);
        }
        self.ssa.fill_pending(&mut self.b).at(place)?;
        self.ssa
            .remove_trivial_params(&mut self.b, self.func)
            .at(place)?;
        self.ssa.cfg.emit(&mut self.b);
        Ok(())
    }
}

/// The wasm text name of an operator (`F32Sqrt` is `f32.sqrt`), for messages.
pub(crate) fn operator_name(op: &Operator<'_>) -> String {
    let dbg = format!("{op:?}");
    let variant: String = dbg
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let mut words: Vec<String> = Vec::new();
    for c in variant.chars() {
        if c.is_ascii_uppercase() || words.is_empty() {
            words.push(c.to_ascii_lowercase().to_string());
        } else if let Some(w) = words.last_mut() {
            w.push(c);
        }
    }
    let prefixed = [
        "i32", "i64", "f32", "f64", "v128", "memory", "table", "ref", "local", "global", "elem",
        "data",
    ];
    match words.split_first() {
        Some((first, rest)) if prefixed.contains(&first.as_str()) && !rest.is_empty() => {
            format!("{first}.{}", rest.join("_"))
        }
        _ => words.join("_"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_names_are_wasm_text_names() {
        assert_eq!(operator_name(&Operator::F32Sqrt), "f32.sqrt");
        assert_eq!(
            operator_name(&Operator::I32TruncSatF64U),
            "i32.trunc_sat_f64_u"
        );
        assert_eq!(
            operator_name(&Operator::MemoryGrow { mem: 0 }),
            "memory.grow"
        );
        assert_eq!(
            operator_name(&Operator::CallIndirect {
                type_index: 0,
                table_index: 0
            }),
            "call_indirect"
        );
        assert_eq!(operator_name(&Operator::Nop), "nop");
    }
}
