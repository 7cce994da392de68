//! The execution loop: activations on an explicit frame stack (no Rust recursion, so deep IR
//! recursion is a [`TrapKind::StackOverflow`], never a crash), one instruction at a time.

use irkit_core::{Inst, Module, Op};

use crate::Interpreter;
use crate::branch::{Branch, Case, Edge, Operand};
use crate::externs;
use crate::layout::{Scalar, ScalarValue};
use crate::proc_eval;
use crate::program::{BlockInfo, Body, Ret};
use crate::pure;
use crate::source::Src;
use crate::trap::{Location, Trap, TrapKind};
use crate::value::Value;
use crate::vector;
use irkit_core::place::{verified_block_label, verified_def_label, verified_source};

/// One activation.
struct Frame {
    /// Function index.
    func: u32,
    /// Current block index.
    block: u32,
    /// Index of the next instruction in the block body.
    ip: usize,
    /// Register slots.
    regs: Vec<Option<Value>>,
    /// Objects to release on return.
    allocs: Vec<u64>,
}

/// What an instruction does to control.
enum Flow {
    /// Go on with the next instruction, after writing the result (if any).
    Next(Option<Value>),
    /// An edge was taken: the frame is at the target block's first instruction.
    Moved,
    /// Call function `func` with the arguments.
    Call(u32, Vec<Value>),
    /// Replace the activation by a call of function `func` with the arguments (`tail_call`).
    TailCall(u32, Vec<Value>),
    /// Return from the activation.
    Return(Option<Value>),
}

type Res<T> = Result<T, TrapKind>;

fn malformed(what: impl Into<String>) -> TrapKind {
    TrapKind::Malformed(what.into())
}

impl Interpreter<'_> {
    /// Runs function `func` with `args` (already checked against its signature).
    pub(crate) fn execute(&mut self, func: u32, args: Vec<Value>) -> Result<Option<Value>, Trap> {
        let mut stack: Vec<Frame> = Vec::new();
        let result = match self.enter(&mut stack, func, args) {
            Ok(None) => self.run_frames(&mut stack),
            Ok(Some(r)) => Ok(r),
            Err(t) => Err(t),
        };
        // After a trap, release the stack objects of the activations it abandoned, so that a
        // later run sees them as dangling, like those of returned activations.
        for frame in stack {
            for a in frame.allocs {
                let _ = self.mem.release(a, false);
            }
        }
        result
    }

    /// Runs until the frame stack is empty (the result of the outermost call) or a trap.
    fn run_frames(&mut self, stack: &mut Vec<Frame>) -> Result<Option<Value>, Trap> {
        loop {
            let Some(frame) = stack.last_mut() else {
                return Err(Trap::new(malformed("empty call stack")));
            };
            let (fi, bi, ip) = (frame.func as usize, frame.block as usize, frame.ip);
            let inst = match &self.prog.funcs[fi].body {
                Body::Blocks(bs) => bs.get(bi).and_then(|b| b.body.get(ip).copied()),
                _ => None,
            };
            let Some(inst) = inst else {
                return Err(self.locate(stack, malformed("fell off the end of a block")));
            };
            if let Some(fuel) = &mut self.fuel {
                if *fuel == 0 {
                    return Err(self.locate(stack, TrapKind::FuelExhausted));
                }
                *fuel -= 1;
            }
            let flow = match self.step(frame, inst) {
                Ok(f) => f,
                Err(k) => return Err(self.locate(stack, k)),
            };
            match flow {
                Flow::Next(v) => {
                    if let Some(v) = v {
                        set(frame, self.prog.src(inst), v);
                    }
                    frame.ip += 1;
                }
                Flow::Moved => {}
                Flow::Call(callee, vals) => match self.enter(stack, callee, vals) {
                    Ok(None) => {}
                    Ok(Some(r)) => {
                        // An extern call: completed at once.
                        if let Some(frame) = stack.last_mut() {
                            if let Some(v) = r {
                                set(frame, self.prog.src(inst), v);
                            }
                            frame.ip += 1;
                        }
                    }
                    // A trap inside a proc is located there already; any other at the call.
                    Err(t) if t.location.is_some() => return Err(t),
                    Err(t) => return Err(self.locate(stack, t.kind)),
                },
                Flow::TailCall(callee, vals) => {
                    // The activation ends before the callee's begins (its stack objects are
                    // released, its frame popped), so a chain of tail calls takes one frame.
                    let Some(mut done) = stack.pop() else {
                        return Err(Trap::new(malformed("empty call stack")));
                    };
                    for a in std::mem::take(&mut done.allocs) {
                        let _ = self.mem.release(a, false);
                    }
                    match self.enter(stack, callee, vals) {
                        Ok(None) => {}
                        // An extern or a proc, completed at once: its result is the ended
                        // activation's.
                        Ok(Some(r)) => {
                            if let Some(v) = self.give_back(stack, r)? {
                                return Ok(v);
                            }
                        }
                        Err(t) if t.location.is_some() => return Err(t),
                        Err(t) => {
                            // Located at the tail call, in the activation it would have ended.
                            stack.push(done);
                            return Err(self.locate(stack, t.kind));
                        }
                    }
                }
                Flow::Return(v) => {
                    let ret = self.prog.funcs[frame.func as usize].ret;
                    if matches!(ret, Ret::Void) != v.is_none() {
                        let k = malformed("ret does not match the function's return type");
                        return Err(self.locate(stack, k));
                    }
                    if let Some(done) = stack.pop() {
                        for a in done.allocs {
                            // Only objects this activation allocated and still live: cannot fail.
                            let _ = self.mem.release(a, false);
                        }
                    }
                    if let Some(v) = self.give_back(stack, v)? {
                        return Ok(v);
                    }
                }
            }
        }
    }

    /// After the innermost activation ended (popped already) with result `v`: the result of
    /// the caller's call, which goes on with its next instruction, or, with no caller left, the
    /// result of the run (`Some`).
    fn give_back(
        &self,
        stack: &mut [Frame],
        v: Option<Value>,
    ) -> Result<Option<Option<Value>>, Trap> {
        let Some(caller) = stack.last_mut() else {
            return Ok(Some(v));
        };
        let call = match &self.prog.funcs[caller.func as usize].body {
            Body::Blocks(bs) => bs[caller.block as usize].body[caller.ip],
            _ => return Err(Trap::new(malformed("caller without body"))),
        };
        if let Some(v) = v {
            set(caller, self.prog.src(call), v);
        }
        caller.ip += 1;
        Ok(None)
    }

    /// Starts a call of `func`: pushes a frame (`Ok(None)`), or, for an extern or a proc,
    /// performs it at once (`Ok(Some(result))`). A trap inside a proc has its location; any
    /// other has none (it belongs to the caller's `call`).
    fn enter(
        &mut self,
        stack: &mut Vec<Frame>,
        func: u32,
        args: Vec<Value>,
    ) -> Result<Option<Option<Value>>, Trap> {
        let f = &self.prog.funcs[func as usize];
        match &f.body {
            Body::Extern(name) => {
                externs::call(name, &args, f.ret, &mut self.mem, &mut self.output)
                    .map(Some)
                    .map_err(Trap::new)
            }
            Body::Import(name) => Err(Trap::new(TrapKind::UnresolvedImport(name.clone()))),
            Body::Proc(p) => {
                proc_eval::call(self.module, &self.prog, &mut self.fuel, p, &args).map(Some)
            }
            Body::Blocks(bs) => {
                if stack.len() >= self.max_depth {
                    return Err(Trap::new(TrapKind::StackOverflow {
                        limit: self.max_depth,
                    }));
                }
                let entry = &bs[0];
                if entry.params.len() != args.len() {
                    return Err(Trap::new(malformed(
                        "argument count does not match the entry block",
                    )));
                }
                let mut regs = vec![None; f.nslots as usize];
                for (&slot, a) in entry.params.iter().zip(args) {
                    regs[slot as usize] = Some(a);
                }
                stack.push(Frame {
                    func,
                    block: 0,
                    ip: 0,
                    regs,
                    allocs: Vec::new(),
                });
                Ok(None)
            }
        }
    }

    /// The trap `kind` located at the current instruction of the innermost frame.
    fn locate(&self, stack: &[Frame], kind: TrapKind) -> Trap {
        let location = stack.last().map(|f| {
            let m = self.module;
            let info = &self.prog.funcs[f.func as usize];
            let func = verified_def_label(m, info.inst);
            let (block, inst) = match &info.body {
                Body::Blocks(bs) => {
                    let b = &bs[f.block as usize];
                    let name = verified_block_label(m, b.inst, f.block as usize);
                    (name, b.body.get(f.ip).copied())
                }
                _ => (String::from("^?"), None),
            };
            Box::new(Location {
                func,
                block,
                index: f.ip,
                opcode: inst.map_or_else(|| "?".into(), |i| m.opcode(i).to_string()),
                name: inst.and_then(|i| m.name(i)).map(str::to_string),
                source: inst.and_then(|i| verified_source(m, i)),
            })
        });
        Trap { kind, location }
    }

    /// The value of operand `v` in `frame`.
    fn val(&self, frame: &Frame, v: Inst) -> Res<Value> {
        self.src_val(
            frame,
            Operand {
                inst: v,
                src: self.prog.src(v),
            },
        )
    }

    /// The value of an operand whose source is known.
    fn src_val(&self, frame: &Frame, Operand { inst: v, src }: Operand) -> Res<Value> {
        match src {
            Src::Local(s) => frame
                .regs
                .get(s as usize)
                .cloned()
                .flatten()
                .ok_or_else(|| malformed(format!("{v} used before it is defined"))),
            Src::Const(i) => Ok(self.prog.consts[i as usize].clone()),
            Src::TooLarge => Err(TrapKind::OutOfMemory),
            Src::None => Err(malformed(format!("{v} is not a value"))),
        }
    }

    fn operand(&self, frame: &Frame, ops: &[Inst], i: usize) -> Res<Value> {
        let v = *ops.get(i).ok_or_else(|| malformed("missing operand"))?;
        self.val(frame, v)
    }

    fn ptr_operand(&self, frame: &Frame, ops: &[Inst], i: usize) -> Res<u64> {
        self.operand(frame, ops, i)?
            .as_ptr()
            .ok_or_else(|| malformed("operand is not a ptr"))
    }

    fn result_scalar(&self, inst: Inst) -> Res<Scalar> {
        self.module
            .ty(inst)
            .and_then(|t| self.prog.layouts.scalar(t))
            .ok_or_else(|| malformed("result type is not a scalar"))
    }

    /// Executes one instruction (other than a call's completion).
    fn step(&mut self, frame: &mut Frame, inst: Inst) -> Res<Flow> {
        let m: &Module = self.module;
        let opcode = m.opcode(inst);
        let ops = m.operands(inst);
        let cannot = || malformed(format!("{opcode} cannot be executed"));
        let Some(op) = opcode.known() else {
            return Err(cannot());
        };
        // Every opcode of the registry has an arm: a new one fails to compile here until it is
        // executed or listed with those that never appear in a block.
        let v = match op {
            irkit_core::op_pure!() => {
                return Ok(Flow::Next(Some(pure::eval(
                    m,
                    &self.prog.layouts,
                    inst,
                    |v| self.val(frame, v),
                )?)));
            }
            Op::Stackalloc => {
                let ty = *ops
                    .first()
                    .ok_or_else(|| malformed("stackalloc without type"))?;
                let size = self
                    .prog
                    .layouts
                    .get(ty)
                    .ok_or_else(|| malformed("stackalloc of a type without layout"))?
                    .size;
                let p = self.mem.alloc(crate::memory::Kind::Stack, size)?;
                frame.allocs.push(p);
                Some(Value::Ptr(p))
            }
            Op::Load => {
                let p = self.ptr_operand(frame, ops, 0)?;
                Some(self.load_at(inst, p)?)
            }
            Op::Store => {
                let p = self.ptr_operand(frame, ops, 0)?;
                self.store_at(frame, ops, 1, p)?;
                return Ok(Flow::Next(None));
            }
            Op::MemLoad => {
                let t = m
                    .ty(inst)
                    .ok_or_else(|| malformed("mem_load without type"))?;
                let p = self.linear_operand(frame, inst, t)?;
                Some(self.load_at(inst, p)?)
            }
            Op::MemStore => {
                let t = ops
                    .get(2)
                    .and_then(|&v| m.value_type(v))
                    .ok_or_else(|| malformed("mem_store of no value"))?;
                let p = self.linear_operand(frame, inst, t)?;
                self.store_at(frame, ops, 2, p)?;
                return Ok(Flow::Next(None));
            }
            Op::MemGrow => {
                let record = self.ptr_operand(frame, ops, 0)?;
                let delta = self.u32_operand(frame, ops, 1)?;
                Some(Value::i32(self.linear_grow(record, delta)?))
            }
            Op::Call | Op::CallIndirect => {
                let (f, args) = self.callee(frame, op, ops)?;
                return Ok(Flow::Call(f, args));
            }
            Op::TailCall | Op::TailCallIndirect => {
                let (f, args) = self.callee(frame, op, ops)?;
                return Ok(Flow::TailCall(f, args));
            }
            Op::Ret => {
                let r = match ops.first() {
                    Some(&v) => Some(self.val(frame, v)?),
                    None => None,
                };
                return Ok(Flow::Return(r));
            }
            Op::Jump | Op::Br | Op::Switch => {
                self.branch(frame)?;
                return Ok(Flow::Moved);
            }
            Op::Unreachable => return Err(TrapKind::Unreachable),
            Op::Trap => return Err(TrapKind::Trap),
            Op::TrapMsg => {
                let kind = m.payload(inst).as_str().unwrap_or_default();
                return Err(TrapKind::Message(kind.to_owned()));
            }
            // Not instructions of a block: the module, types, constants and definitions
            // (operand values, read by `val`), parameters (bound on entry), decorations,
            // generics (specialized away by the linker) and NOIR (run by `proc_eval`).
            irkit_core::op_outside_bodies!() | irkit_core::op_noir!() => return Err(cannot()),
            // Lowered by a full link, which lays the classes out (spec/linking.md, "Objects").
            irkit_core::op_objects!() => {
                return Err(malformed(format!(
                    "`{opcode}` runs only once a link has laid the classes out (ir-run and ir-link do)"
                )));
            }
            // Lowered by a full link, which builds the witness tables (spec/linking.md,
            // "Existentials").
            irkit_core::op_existentials!() => {
                return Err(malformed(format!(
                    "`{opcode}` runs only once a link has built the witness tables (ir-run and ir-link do)"
                )));
            }
        };
        match v {
            Some(v) => Ok(Flow::Next(Some(v))),
            None => Err(malformed(format!("{op}: operands of the wrong types"))),
        }
    }

    /// The value of type `inst`'s result read at `p` (`load`, `mem_load`).
    fn load_at(&self, inst: Inst, p: u64) -> Res<Value> {
        if let Some((lane, n)) = self
            .module
            .ty(inst)
            .and_then(|t| vector::shape(&self.prog.layouts, t))
        {
            let bytes = self.mem.read(p, lane.size() * n as u64)?;
            return Ok(vector::from_bytes(lane, bytes));
        }
        let s = self.result_scalar(inst)?;
        Ok(s.value(self.mem.read_uint(p, s.size())?))
    }

    /// Writes operand `k` of `ops` at `p` (`store`, `mem_store`).
    fn store_at(&mut self, frame: &Frame, ops: &[Inst], k: usize, p: u64) -> Res<()> {
        let x = self.operand(frame, ops, k)?;
        let vty = ops.get(k).and_then(|&v| self.module.value_type(v));
        if let Some((lane, _)) = vty.and_then(|t| vector::shape(&self.prog.layouts, t)) {
            let bytes = vector::to_bytes(lane, &x)?;
            return self.mem.write(p, &bytes);
        }
        let (bits, size) = x
            .scalar_bits()
            .zip(x.scalar_size())
            .ok_or_else(|| malformed("store of an aggregate"))?;
        self.mem.write_uint(p, size, bits)
    }

    /// Operand `k`, an `i32`.
    fn u32_operand(&self, frame: &Frame, ops: &[Inst], k: usize) -> Res<u32> {
        match self.operand(frame, ops, k)? {
            Value::I32(bits) => Ok(bits as u32),
            _ => Err(malformed("operand is not an i32")),
        }
    }

    /// The checked address of `mem_load`'s or `mem_store`'s access `inst` of a `ty`.
    fn linear_operand(&self, frame: &Frame, inst: Inst, ty: Inst) -> Res<u64> {
        let ops = self.module.operands(inst);
        let record = self.ptr_operand(frame, ops, 0)?;
        let addr = self.u32_operand(frame, ops, 1)?;
        let offset = self.module.payload(inst).as_int().unwrap_or(0);
        let n = self
            .prog
            .layouts
            .get(ty)
            .ok_or_else(|| malformed("an access of a type without layout"))?
            .size;
        self.linear_address(record, addr, offset, n)
    }

    /// The function a call of any kind (`op`: `call`, `call_indirect` or their tail forms)
    /// calls, and its arguments.
    fn callee(&self, frame: &Frame, op: Op, ops: &[Inst]) -> Res<(u32, Vec<Value>)> {
        if matches!(op, Op::Call | Op::TailCall) {
            let callee = *ops
                .first()
                .ok_or_else(|| malformed(format!("{op} without callee")))?;
            let f = self
                .prog
                .func_index(callee)
                .ok_or_else(|| malformed(format!("{op} of a non-function")))?;
            return Ok((f, self.args(frame, &ops[1..])?));
        }
        let sig = *ops
            .first()
            .ok_or_else(|| malformed(format!("{op} without signature")))?;
        let p = self.ptr_operand(frame, ops, 1)?;
        let f = self
            .mem
            .func_at(p)
            .filter(|&f| self.prog.funcs[f as usize].fn_ty == sig)
            .ok_or(TrapKind::BadFunctionPointer { addr: p })?;
        Ok((f, self.args(frame, &ops[2..])?))
    }

    fn args(&self, frame: &Frame, ops: &[Inst]) -> Res<Vec<Value>> {
        ops.iter().map(|&a| self.val(frame, a)).collect()
    }

    /// Executes the `jump`, `br` or `switch` ending the current block, decoded when the
    /// program was prepared ([`crate::branch`]): picks the edge and takes it.
    fn branch(&self, frame: &mut Frame) -> Res<()> {
        let Body::Blocks(bs) = &self.prog.funcs[frame.func as usize].body else {
            return Err(malformed("branch outside a body"));
        };
        let branch = bs
            .get(frame.block as usize)
            .filter(|b| frame.ip + 1 == b.body.len())
            .and_then(|b| b.branch.as_ref())
            .ok_or_else(|| malformed("a branch before the end of its block"))?;
        let edge = match branch {
            Branch::Jump(e) => e.as_ref().ok_or_else(|| malformed("jump without target"))?,
            Branch::Br(c, edges) => {
                let (_, c) = self.int_of(frame, *c)?;
                edges
                    .get(if c & 1 == 1 { 0 } else { 1 })
                    .ok_or_else(|| malformed("br without target"))?
            }
            Branch::Switch(v, cases, edges) => {
                let (_, x) = self.int_of(frame, *v)?;
                let mut case = None;
                for (i, c) in cases.iter().enumerate() {
                    let bits = match *c {
                        Case::Bits(b) => b,
                        Case::Read(o) => self.src_val(frame, o)?.as_int().map(|(_, b)| b),
                    };
                    if bits == Some(x) {
                        case = Some(i);
                        break;
                    }
                }
                // Edge 0 is the default; case `i` takes edge `i + 1`.
                edges
                    .get(case.map_or(0, |i| i + 1))
                    .ok_or_else(|| malformed("switch with too few edges"))?
            }
        };
        self.take(frame, bs, edge)
    }

    /// The integer value of a branch's first operand.
    fn int_of(&self, frame: &Frame, o: Option<Operand>) -> Res<(u32, u64)> {
        let o = o.ok_or_else(|| malformed("missing operand"))?;
        self.src_val(frame, o)?
            .as_int()
            .ok_or_else(|| malformed("operand is not an integer"))
    }

    /// Takes `edge`: assigns its arguments to the target's parameters as if simultaneously
    /// (all read before any is written, unless no argument reads an earlier parameter) and
    /// moves to the target's first instruction.
    fn take(&self, frame: &mut Frame, bs: &[BlockInfo], edge: &Edge) -> Res<()> {
        let target = match (edge.direct, edge.target) {
            (true, Ok(bi)) => {
                let b = bs
                    .get(bi as usize)
                    .ok_or_else(|| malformed("branch to a missing block"))?;
                for (&a, &slot) in edge.args.iter().zip(&b.params) {
                    frame.regs[slot as usize] = Some(self.src_val(frame, a)?);
                }
                bi
            }
            (_, target) => {
                let vals = edge
                    .args
                    .iter()
                    .map(|&a| self.src_val(frame, a))
                    .collect::<Res<Vec<Value>>>()?;
                let bi = target.map_err(malformed)?;
                let b = bs
                    .get(bi as usize)
                    .ok_or_else(|| malformed("branch to a missing block"))?;
                for (&slot, v) in b.params.iter().zip(vals) {
                    frame.regs[slot as usize] = Some(v);
                }
                bi
            }
        };
        frame.block = target;
        frame.ip = 0;
        Ok(())
    }
}

fn set(frame: &mut Frame, src: Src, v: Value) {
    if let Src::Local(s) = src
        && let Some(slot) = frame.regs.get_mut(s as usize)
    {
        *slot = Some(v);
    }
}
