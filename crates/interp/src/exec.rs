//! The execution loop: activations on an explicit frame stack (no Rust recursion, so deep IR
//! recursion is a [`TrapKind::StackOverflow`], never a crash), one instruction at a time.

use irkit_core::{FloatCC, Inst, IntCC, Module, Opcode};

use crate::Interpreter;
use crate::externs;
use crate::layout::{Scalar, Shape};
use crate::ops;
use crate::program::{Body, Ret, Src};
use crate::trap::{Location, Trap, TrapKind};
use crate::value::{Value, sext};

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
    /// Take an edge: target block instruction and argument values.
    Jump(Inst, Vec<Value>),
    /// Call function `func` with the arguments.
    Call(u32, Vec<Value>),
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
            Err(k) => Err(Trap::new(k)),
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
                Flow::Jump(target, vals) => {
                    if let Err(k) = self.take_edge(frame, target, vals) {
                        return Err(self.locate(stack, k));
                    }
                }
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
                    Err(k) => return Err(self.locate(stack, k)),
                },
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
                    let Some(caller) = stack.last_mut() else {
                        return Ok(v);
                    };
                    let call = match &self.prog.funcs[caller.func as usize].body {
                        Body::Blocks(bs) => bs[caller.block as usize].body[caller.ip],
                        _ => return Err(Trap::new(malformed("caller without body"))),
                    };
                    if let Some(v) = v {
                        set(caller, self.prog.src(call), v);
                    }
                    caller.ip += 1;
                }
            }
        }
    }

    /// Starts a call of `func`: pushes a frame (`Ok(None)`), or, for an extern, performs it at
    /// once (`Ok(Some(result))`).
    fn enter(
        &mut self,
        stack: &mut Vec<Frame>,
        func: u32,
        args: Vec<Value>,
    ) -> Res<Option<Option<Value>>> {
        let f = &self.prog.funcs[func as usize];
        match &f.body {
            Body::Extern(name) => {
                externs::call(name, &args, f.ret, &mut self.mem, &mut self.output).map(Some)
            }
            Body::Import(name) => Err(TrapKind::UnresolvedImport(name.clone())),
            Body::Blocks(bs) => {
                if stack.len() >= self.max_depth {
                    return Err(TrapKind::StackOverflow {
                        limit: self.max_depth,
                    });
                }
                let entry = &bs[0];
                if entry.params.len() != args.len() {
                    return Err(malformed("argument count does not match the entry block"));
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

    /// Assigns the edge arguments to `target`'s parameters (all were read already) and moves
    /// to its first instruction.
    fn take_edge(&self, frame: &mut Frame, target: Inst, vals: Vec<Value>) -> Res<()> {
        let bi = self
            .prog
            .block_index(target)
            .ok_or_else(|| malformed("branch target is not a block"))?;
        let Body::Blocks(bs) = &self.prog.funcs[frame.func as usize].body else {
            return Err(malformed("branch outside a body"));
        };
        let b = bs
            .get(bi as usize)
            .filter(|b| b.inst == target)
            .ok_or_else(|| malformed("branch to a block of another function"))?;
        if b.params.len() != vals.len() {
            return Err(malformed(
                "edge arguments do not match the target's parameters",
            ));
        }
        for (&slot, v) in b.params.iter().zip(vals) {
            frame.regs[slot as usize] = Some(v);
        }
        frame.block = bi;
        frame.ip = 0;
        Ok(())
    }

    /// The trap `kind` located at the current instruction of the innermost frame.
    fn locate(&self, stack: &[Frame], kind: TrapKind) -> Trap {
        let location = stack.last().map(|f| {
            let m = self.module;
            let info = &self.prog.funcs[f.func as usize];
            let func = m
                .name(info.inst)
                .or_else(|| m.decoration_str(info.inst, Opcode::EXPORT))
                .map_or_else(|| format!("@#{}", info.inst.index()), |n| format!("@{n}"));
            let (block, inst) = match &info.body {
                Body::Blocks(bs) => {
                    let b = &bs[f.block as usize];
                    let name = m
                        .name(b.inst)
                        .map_or_else(|| format!("^bb{}", f.block), |n| format!("^{n}"));
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
            })
        });
        Trap { kind, location }
    }

    /// The value of operand `v` in `frame`.
    fn val(&self, frame: &Frame, v: Inst) -> Res<Value> {
        match self.prog.src(v) {
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

    fn int_operand(&self, frame: &Frame, ops: &[Inst], i: usize) -> Res<(u32, u64)> {
        self.operand(frame, ops, i)?
            .as_int()
            .ok_or_else(|| malformed("operand is not an integer"))
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
        let op = m.opcode(inst);
        let ops = m.operands(inst);
        let v = match op {
            _ if op.is_int_binary() => {
                let (w, a) = self.int_operand(frame, ops, 0)?;
                let (wb, b) = self.int_operand(frame, ops, 1)?;
                if w != wb {
                    return Err(malformed("operands of different widths"));
                }
                let r = ops::int_binop(op, w, a, b)?;
                Value::int(w, r)
            }
            _ if op.is_float_binary() => {
                match (self.operand(frame, ops, 0)?, self.operand(frame, ops, 1)?) {
                    (Value::F32(a), Value::F32(b)) => Some(Value::F32(ops::f32_binop(op, a, b)?)),
                    (Value::F64(a), Value::F64(b)) => Some(Value::F64(ops::f64_binop(op, a, b)?)),
                    _ => None,
                }
            }
            Opcode::ICMP => {
                let cc = m.payload(inst).as_int().and_then(IntCC::from_code);
                let (a, b) = (self.operand(frame, ops, 0)?, self.operand(frame, ops, 1)?);
                match (
                    cc,
                    a.as_int().or(a.as_ptr().map(|p| (64, p))),
                    b.as_int().or(b.as_ptr().map(|p| (64, p))),
                ) {
                    (Some(cc), Some((w, a)), Some((wb, b))) if w == wb => {
                        Some(Value::bool(cc.eval(w, a, b)))
                    }
                    _ => None,
                }
            }
            Opcode::FCMP => {
                let cc = m.payload(inst).as_int().and_then(FloatCC::from_code);
                let (a, b) = (self.operand(frame, ops, 0)?, self.operand(frame, ops, 1)?);
                let same = std::mem::discriminant(&a) == std::mem::discriminant(&b);
                match (cc, ops::float_of(&a), ops::float_of(&b)) {
                    (Some(cc), Some(a), Some(b)) if same => Some(Value::bool(cc.eval(a, b))),
                    _ => None,
                }
            }
            _ if op.is_conversion() => {
                let x = self.operand(frame, ops, 0)?;
                if op == Opcode::BITCAST && matches!(x, Value::Aggregate(_)) {
                    Some(x)
                } else {
                    Some(ops::convert(op, &x, self.result_scalar(inst)?)?)
                }
            }
            Opcode::SELECT => {
                let (_, c) = self.int_operand(frame, ops, 0)?;
                Some(self.operand(frame, ops, if c & 1 == 1 { 1 } else { 2 })?)
            }
            Opcode::STACKALLOC => {
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
            Opcode::LOAD => {
                let p = self.ptr_operand(frame, ops, 0)?;
                let s = self.result_scalar(inst)?;
                Some(s.value(self.mem.read_uint(p, s.size())?))
            }
            Opcode::STORE => {
                let p = self.ptr_operand(frame, ops, 0)?;
                let x = self.operand(frame, ops, 1)?;
                let (bits, size) = x
                    .scalar_bits()
                    .zip(x.scalar_size())
                    .ok_or_else(|| malformed("store of an aggregate"))?;
                self.mem.write_uint(p, size, bits)?;
                return Ok(Flow::Next(None));
            }
            Opcode::ELEM => Some(Value::Ptr(self.elem(frame, ops)?)),
            Opcode::EXTRACT => {
                let k = m.payload(inst).as_int().unwrap_or(u64::MAX);
                match self.operand(frame, ops, 0)? {
                    Value::Aggregate(vs) => {
                        usize::try_from(k).ok().and_then(|k| vs.into_iter().nth(k))
                    }
                    _ => None,
                }
            }
            Opcode::INSERT => {
                let k = m.payload(inst).as_int().unwrap_or(u64::MAX);
                let x = self.operand(frame, ops, 1)?;
                match self.operand(frame, ops, 0)? {
                    Value::Aggregate(mut vs) => {
                        match usize::try_from(k).ok().and_then(|k| vs.get_mut(k)) {
                            Some(slot) => {
                                *slot = x;
                                Some(Value::Aggregate(vs))
                            }
                            None => None,
                        }
                    }
                    _ => None,
                }
            }
            Opcode::CALL => {
                let callee = *ops
                    .first()
                    .ok_or_else(|| malformed("call without callee"))?;
                let f = self
                    .prog
                    .func_index(callee)
                    .ok_or_else(|| malformed("call of a non-function"))?;
                let args = self.args(frame, &ops[1..])?;
                return Ok(Flow::Call(f, args));
            }
            Opcode::CALL_INDIRECT => {
                let sig = *ops
                    .first()
                    .ok_or_else(|| malformed("call_indirect without signature"))?;
                let p = self.ptr_operand(frame, ops, 1)?;
                let f = self
                    .mem
                    .func_at(p)
                    .filter(|&f| self.prog.funcs[f as usize].fn_ty == sig)
                    .ok_or(TrapKind::BadFunctionPointer { addr: p })?;
                let args = self.args(frame, &ops[2..])?;
                return Ok(Flow::Call(f, args));
            }
            Opcode::RET => {
                let r = match ops.first() {
                    Some(&v) => Some(self.val(frame, v)?),
                    None => None,
                };
                return Ok(Flow::Return(r));
            }
            Opcode::JUMP => return self.edge(frame, ops, 0),
            Opcode::BR => {
                let (_, c) = self.int_operand(frame, ops, 0)?;
                let first = 1;
                if c & 1 == 1 {
                    return self.edge(frame, ops, first);
                }
                let next = self
                    .next_block(ops, first + 1)
                    .ok_or_else(|| malformed("br without else"))?;
                return self.edge(frame, ops, next);
            }
            Opcode::SWITCH => {
                let (_, x) = self.int_operand(frame, ops, 0)?;
                let default = self
                    .next_block(ops, 1)
                    .ok_or_else(|| malformed("switch without default"))?;
                let mut case = None;
                for (i, &c) in ops[1..default].iter().enumerate() {
                    if self.val(frame, c)?.as_int().map(|(_, b)| b) == Some(x) {
                        case = Some(i);
                        break;
                    }
                }
                let mut at = default;
                if let Some(i) = case {
                    for _ in 0..=i {
                        at = self
                            .next_block(ops, at + 1)
                            .ok_or_else(|| malformed("switch with too few case edges"))?;
                    }
                }
                return self.edge(frame, ops, at);
            }
            Opcode::UNREACHABLE => return Err(TrapKind::Unreachable),
            Opcode::TRAP => return Err(TrapKind::Trap),
            _ => return Err(malformed(format!("{op} cannot be executed"))),
        };
        match v {
            Some(v) => Ok(Flow::Next(Some(v))),
            None => Err(malformed(format!("{op}: operands of the wrong types"))),
        }
    }

    fn args(&self, frame: &Frame, ops: &[Inst]) -> Res<Vec<Value>> {
        ops.iter().map(|&a| self.val(frame, a)).collect()
    }

    /// The position of the first block operand at or after `from`.
    fn next_block(&self, ops: &[Inst], from: usize) -> Option<usize> {
        (from..ops.len()).find(|&i| self.module.opcode(ops[i]) == Opcode::BLOCK)
    }

    /// The edge whose block operand is at `at`: reads all its arguments.
    fn edge(&self, frame: &Frame, ops: &[Inst], at: usize) -> Res<Flow> {
        let target = *ops
            .get(at)
            .ok_or_else(|| malformed("missing branch target"))?;
        if self.module.opcode(target) != Opcode::BLOCK {
            return Err(malformed("branch target is not a block"));
        }
        let end = self.next_block(ops, at + 1).unwrap_or(ops.len());
        let vals = self.args(frame, &ops[at + 1..end])?;
        Ok(Flow::Jump(target, vals))
    }

    /// `elem T, %p, %i0, ...`: the address, wrapping modulo 2^64.
    fn elem(&self, frame: &Frame, ops: &[Inst]) -> Res<u64> {
        let bad = || malformed("elem: bad type path");
        let mut ty = *ops.first().ok_or_else(bad)?;
        let mut addr = self.ptr_operand(frame, ops, 1)?;
        let layouts = &self.prog.layouts;
        for (n, i) in (2..ops.len()).enumerate() {
            let (w, bits) = self.int_operand(frame, ops, i)?;
            let idx = sext(bits, w);
            if n == 0 {
                let size = layouts.get(ty).ok_or_else(bad)?.size;
                addr = addr.wrapping_add((idx as u64).wrapping_mul(size));
                continue;
            }
            match &layouts.get(ty).ok_or_else(bad)?.shape {
                Shape::Array { elem, .. } => {
                    let size = layouts.get(*elem).ok_or_else(bad)?.size;
                    addr = addr.wrapping_add((idx as u64).wrapping_mul(size));
                    ty = *elem;
                }
                Shape::Struct { fields, offsets } => {
                    let k = usize::try_from(bits).map_err(|_| bad())?;
                    let (f, off) = fields.get(k).zip(offsets.get(k)).ok_or_else(bad)?;
                    addr = addr.wrapping_add(*off);
                    ty = *f;
                }
                Shape::Scalar(_) => return Err(bad()),
            }
        }
        Ok(addr)
    }
}

fn set(frame: &mut Frame, src: Src, v: Value) {
    if let Src::Local(s) = src
        && let Some(slot) = frame.regs.get_mut(s as usize)
    {
        *slot = Some(v);
    }
}
