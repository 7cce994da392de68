//! The precomputed form of a module: dense per-function tables of blocks and register slots,
//! the values of constants and definitions, and the initial memory image (globals laid out and
//! initialized, one address per function or proc).

use irkit_core::{Inst, Module, Opcode};

use crate::branch::Branch;
use crate::layout::{Layouts, MAX_CONST_CELLS, MAX_VALUE_CELLS, Scalar, Shape};
use crate::memory::{Kind, Memory};
use crate::proc_info::ProcInfo;
use crate::source::Src;
use crate::trap::{InterpError, TrapKind};
use crate::value::Value;

const NONE: u32 = u32::MAX;

/// One block of a function body.
#[derive(Debug)]
pub(crate) struct BlockInfo {
    /// The block instruction.
    pub(crate) inst: Inst,
    /// Register slots of its parameters, in order.
    pub(crate) params: Vec<u32>,
    /// Its non-parameter children, the terminator last.
    pub(crate) body: Vec<Inst>,
    /// Its terminator decoded, if it is a `jump`, `br` or `switch` (see [`crate::branch`]).
    pub(crate) branch: Option<Branch>,
}

/// What a function's body is.
#[derive(Debug)]
pub(crate) enum Body {
    /// A definition: its blocks, the entry first.
    Blocks(Vec<BlockInfo>),
    /// A C function provided by the interpreter (`extern("name")`, no blocks).
    Extern(String),
    /// A declaration imported from another module (unlinked), or a body-less function.
    Import(String),
    /// A NOIR proc (evaluated by [`crate::proc_eval`]).
    Proc(Box<ProcInfo>),
}

/// The return type of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ret {
    /// `void`.
    Void,
    /// A scalar type.
    Scalar(Scalar),
    /// An aggregate type (the instruction).
    Aggregate(Inst),
}

/// One function or proc.
#[derive(Debug)]
pub(crate) struct FuncInfo {
    /// The `func` or `proc` instruction.
    pub(crate) inst: Inst,
    /// Its `fn` type.
    pub(crate) fn_ty: Inst,
    /// Its parameter types.
    pub(crate) params: Vec<Inst>,
    /// Its return type.
    pub(crate) ret: Ret,
    /// Its body.
    pub(crate) body: Body,
    /// How many register slots an activation needs.
    pub(crate) nslots: u32,
}

/// A module prepared for execution.
#[derive(Debug)]
pub(crate) struct Program {
    /// Type layouts.
    pub(crate) layouts: Layouts,
    /// The functions and procs, in module order.
    pub(crate) funcs: Vec<FuncInfo>,
    /// Arena slot -> function index (for `func` and `proc` instructions).
    func_of: Vec<u32>,
    /// Arena slot -> block index within its function (for `block` instructions).
    block_of: Vec<u32>,
    /// Arena slot -> operand source.
    src: Vec<Src>,
    /// Values of constants and definitions.
    pub(crate) consts: Vec<Value>,
    /// How many top-level definitions were prepared (those of an extending module's prefix
    /// keep their addresses, see [`Program::extend`]).
    defs: usize,
    /// The cells constant values may still take ([`MAX_CONST_CELLS`] for the whole program).
    budget: u64,
}

fn malformed(what: String) -> InterpError {
    InterpError::Malformed(what)
}

impl Program {
    /// Prepares `m` and builds its initial memory in `mem`.
    pub(crate) fn build(m: &Module, mem: &mut Memory) -> Result<Program, InterpError> {
        let mut p = Program {
            layouts: Layouts::default(),
            funcs: Vec::new(),
            func_of: Vec::new(),
            block_of: Vec::new(),
            src: Vec::new(),
            consts: Vec::new(),
            defs: 0,
            budget: MAX_CONST_CELLS,
        };
        p.extend(m, mem)?;
        Ok(p)
    }

    /// Prepares what `m`, a module that extends the one this program was prepared for
    /// (`Module::extends`, checked by the caller), adds: its new definitions get addresses
    /// (and functions indices) and its new globals are allocated and initialized in `mem`
    /// (which holds the live objects); the live definitions keep theirs. The work is that of
    /// the new instructions (and one read of the pool's new end): nothing live is prepared
    /// again. On an error the program is as it was (objects allocated in `mem` stay).
    pub(crate) fn extend(&mut self, m: &Module, mem: &mut Memory) -> Result<(), InterpError> {
        let mark = (self.funcs.len(), self.consts.len(), self.defs, self.budget);
        let arena = self.src.len();
        let result = self.add(m, mem);
        if result.is_err() {
            let (funcs, consts, defs, budget) = mark;
            self.funcs.truncate(funcs);
            self.consts.truncate(consts);
            self.defs = defs;
            self.budget = budget;
            self.func_of.truncate(arena);
            self.block_of.truncate(arena);
            self.src.truncate(arena);
            self.layouts.truncate(arena);
        }
        result
    }

    fn add(&mut self, m: &Module, mem: &mut Memory) -> Result<(), InterpError> {
        let n = m.arena_len();
        let arena = self.src.len();
        if n < arena || m.top_level().len() < self.defs {
            return Err(malformed(
                "the module is smaller than the program prepared for it".into(),
            ));
        }
        self.layouts.extend(m, arena);
        self.func_of.resize(n, NONE);
        self.block_of.resize(n, NONE);
        self.src.resize(n, Src::None);
        let funcs = self.funcs.len();
        let mut globals = Vec::new();
        for &d in &m.top_level()[self.defs..] {
            let op = m.opcode(d);
            if op == Opcode::FUNC || op == Opcode::PROC {
                let idx = u32::try_from(self.funcs.len())
                    .map_err(|_| malformed("too many functions".into()))?;
                let addr = mem
                    .alloc(Kind::Func(idx), 0)
                    .map_err(|_| InterpError::TooLarge("too many functions".into()))?;
                self.set_const(d, Value::Ptr(addr))?;
                self.func_of[d.idx()] = idx;
                let f = self.func_info(m, d)?;
                self.funcs.push(f);
            } else if op == Opcode::GLOBAL_VAR || op == Opcode::GLOBAL_CONST {
                let ty = m
                    .ty(d)
                    .ok_or_else(|| malformed(format!("global {d} has no type")))?;
                let size = self
                    .layouts
                    .get(ty)
                    .ok_or_else(|| malformed(format!("global {d}: type {ty} has no layout")))?
                    .size;
                let kind = match m.decoration_str(d, Opcode::IMPORT) {
                    Some(name) => Kind::Unresolved(name.to_string()),
                    None => Kind::Global {
                        readonly: op == Opcode::GLOBAL_CONST,
                    },
                };
                let addr = mem
                    .alloc(kind, size)
                    .map_err(|_| InterpError::TooLarge(format!("global {d} of {size} bytes")))?;
                self.set_const(d, Value::Ptr(addr))?;
                globals.push((d, ty, addr));
            }
        }
        self.defs = m.top_level().len();
        self.constants(m, arena)?;
        self.decode_branches(m, funcs);
        for (d, ty, addr) in globals {
            if let Some(&init) = m.operands(d).first() {
                self.init_global(m, mem, init, ty, addr)?;
            }
        }
        Ok(())
    }

    fn set_const(&mut self, inst: Inst, v: Value) -> Result<(), InterpError> {
        let i =
            u32::try_from(self.consts.len()).map_err(|_| malformed("too many constants".into()))?;
        self.consts.push(v);
        if let Some(s) = self.src.get_mut(inst.idx()) {
            *s = Src::Const(i);
        }
        Ok(())
    }

    fn func_info(&mut self, m: &Module, f: Inst) -> Result<FuncInfo, InterpError> {
        let fn_ty = m
            .ty(f)
            .ok_or_else(|| malformed(format!("function {f} has no type")))?;
        let (ret_ty, params) = m
            .fn_signature(fn_ty)
            .ok_or_else(|| malformed(format!("function {f}: type is not a fn type")))?;
        let ret = if m.opcode(ret_ty) == Opcode::VOID {
            Ret::Void
        } else {
            match self.layouts.get(ret_ty).map(|l| &l.shape) {
                Some(Shape::Scalar(s)) => Ret::Scalar(*s),
                Some(_) => Ret::Aggregate(ret_ty),
                None => return Err(malformed(format!("function {f}: bad return type"))),
            }
        };
        if m.opcode(f) == Opcode::PROC {
            let info = ProcInfo::build(m, f)?;
            for (v, slot) in info.slots() {
                self.src[v.idx()] = Src::Local(
                    u32::try_from(slot).map_err(|_| malformed("too many values".into()))?,
                );
            }
            let nslots =
                u32::try_from(info.nslots()).map_err(|_| malformed("too many values".into()))?;
            return Ok(FuncInfo {
                inst: f,
                fn_ty,
                params: params.to_vec(),
                ret,
                body: Body::Proc(Box::new(info)),
                nslots,
            });
        }
        let mut blocks = Vec::new();
        let mut slot = 0u32;
        for (bi, b) in m.blocks(f).enumerate() {
            self.block_of[b.idx()] =
                u32::try_from(bi).map_err(|_| malformed("too many blocks".into()))?;
            let nparams = m.block_params(b).len();
            let mut info = BlockInfo {
                inst: b,
                params: Vec::with_capacity(nparams),
                body: m.children(b)[nparams..].to_vec(),
                branch: None,
            };
            for &c in m.children(b) {
                if m.opcode(c).is_terminator() {
                    continue;
                }
                self.src[c.idx()] = Src::Local(slot);
                if m.opcode(c) == Opcode::PARAM {
                    info.params.push(slot);
                }
                slot = slot
                    .checked_add(1)
                    .ok_or_else(|| malformed("too many values".into()))?;
            }
            if info
                .body
                .last()
                .is_none_or(|&t| !m.opcode(t).is_terminator())
            {
                return Err(malformed(format!(
                    "block {b} does not end with a terminator"
                )));
            }
            blocks.push(info);
        }
        let body = if !blocks.is_empty() {
            Body::Blocks(blocks)
        } else if let Some(name) = m.decoration_str(f, Opcode::EXTERN) {
            Body::Extern(name.to_string())
        } else {
            let name = m.decoration_str(f, Opcode::IMPORT).unwrap_or("?");
            Body::Import(name.to_string())
        };
        Ok(FuncInfo {
            inst: f,
            fn_ty,
            params: params.to_vec(),
            ret,
            body,
            nslots: slot,
        })
    }

    /// Decodes every block's branch of the functions from index `from` on, once every
    /// operand's source is known (constants and definitions included).
    fn decode_branches(&mut self, m: &Module, from: usize) {
        for fi in from..self.funcs.len() {
            let Body::Blocks(bs) = &self.funcs[fi].body else {
                continue;
            };
            let decoded: Vec<Option<Branch>> = bs
                .iter()
                .map(|b| {
                    let &term = b.body.last()?;
                    crate::branch::decode(
                        m,
                        |bi| bs.get(bi as usize).map(|b| (b.inst, &b.params[..])),
                        term,
                        |v| self.src(v),
                        |b| self.block_index(b),
                        &self.consts,
                    )
                })
                .collect();
            if let Body::Blocks(bs) = &mut self.funcs[fi].body {
                for (b, d) in bs.iter_mut().zip(decoded) {
                    b.branch = d;
                }
            }
        }
    }

    /// Values of the constants of the pool at arena slots from `from` on (those not prepared
    /// yet), in dependency order.
    fn constants(&mut self, m: &Module, from: usize) -> Result<(), InterpError> {
        let mut zeros = std::collections::HashMap::new();
        let mut budget = self.budget;
        // One read of the pool's handles: the new constants are new instructions.
        for &c in m.pool().iter().filter(|c| c.idx() >= from) {
            let op = m.opcode(c);
            if !op.is_constant() {
                continue;
            }
            let ty = m
                .ty(c)
                .ok_or_else(|| malformed(format!("constant {c} has no type")))?;
            let bad = || malformed(format!("constant {c} does not fit its type"));
            let v = match op {
                Opcode::CONST_INT => {
                    let w = m.int_width(ty).ok_or_else(bad)?;
                    Value::int(w, m.payload(c).as_int().ok_or_else(bad)?)
                }
                Opcode::CONST_FLOAT => {
                    let bits = m.payload(c).as_float_bits().ok_or_else(bad)?;
                    match m.float_width(ty) {
                        Some(32) => Some(Value::F32(bits as u32)),
                        Some(64) => Some(Value::F64(bits)),
                        _ => None,
                    }
                }
                Opcode::CONST_NULL => Some(Value::Ptr(0)),
                Opcode::CONST_ZERO => {
                    self.layouts.get(ty).ok_or_else(bad)?;
                    self.layouts.zero(ty, &mut zeros, &mut budget)
                }
                Opcode::CONST_BYTES => {
                    let b = m.payload(c).as_bytes().ok_or_else(bad)?;
                    (b.len() as u64 <= MAX_VALUE_CELLS.min(budget)).then(|| {
                        budget -= b.len() as u64;
                        Value::Aggregate(
                            b.iter()
                                .map(|&x| Value::I8(x.into()))
                                .collect::<Vec<_>>()
                                .into(),
                        )
                    })
                }
                Opcode::CONST_AGGREGATE => {
                    let cells = self.layouts.get(ty).ok_or_else(bad)?.cells;
                    let mut vs = Some(Vec::with_capacity(m.operands(c).len()));
                    for &o in m.operands(c) {
                        match (self.src(o), &mut vs) {
                            (Src::Const(i), Some(vs)) => vs.push(self.consts[i as usize].clone()),
                            (Src::TooLarge, _) => vs = None,
                            (_, None) => {}
                            _ => return Err(bad()),
                        }
                    }
                    vs.filter(|vs| cells <= MAX_VALUE_CELLS && vs.len() as u64 <= budget)
                        .map(|vs| {
                            budget -= vs.len() as u64;
                            Value::Aggregate(vs.into())
                        })
                }
                _ => return Err(malformed(format!("unknown constant opcode {op}"))),
            };
            match v {
                Some(v) => self.set_const(c, v)?,
                None if matches!(op, Opcode::CONST_INT | Opcode::CONST_FLOAT) => {
                    return Err(bad());
                }
                None => self.src[c.idx()] = Src::TooLarge,
            }
        }
        self.budget = budget;
        Ok(())
    }

    /// Writes initializer `init` (of type `ty`) at `addr`, without recursion.
    fn init_global(
        &self,
        m: &Module,
        mem: &mut Memory,
        init: Inst,
        ty: Inst,
        addr: u64,
    ) -> Result<(), InterpError> {
        let mut work = vec![(init, ty, addr)];
        while let Some((c, ty, addr)) = work.pop() {
            let bad = || malformed(format!("initializer {c} does not fit type {ty}"));
            let werr = |e: TrapKind| malformed(format!("initializer {c}: {e}"));
            let op = m.opcode(c);
            let layout = self.layouts.get(ty).ok_or_else(bad)?;
            if op.is_definition()
                || matches!(
                    op,
                    Opcode::CONST_INT | Opcode::CONST_FLOAT | Opcode::CONST_NULL
                )
            {
                let Some(Src::Const(i)) = self.src.get(c.idx()).copied() else {
                    return Err(bad());
                };
                let v = &self.consts[i as usize];
                let (bits, size) = v.scalar_bits().zip(v.scalar_size()).ok_or_else(bad)?;
                if size != layout.size {
                    return Err(bad());
                }
                mem.init(addr, &bits.to_le_bytes()[..size as usize])
                    .map_err(werr)?;
            } else if op == Opcode::CONST_ZERO {
                // Objects start zeroed.
            } else if op == Opcode::CONST_BYTES {
                let b = m.payload(c).as_bytes().ok_or_else(bad)?;
                mem.init(addr, b).map_err(werr)?;
            } else if op == Opcode::CONST_AGGREGATE {
                let ops = m.operands(c);
                match &layout.shape {
                    Shape::Array { elem, len } if *len == ops.len() as u64 => {
                        let esize = self.layouts.get(*elem).ok_or_else(bad)?.size;
                        for (i, &o) in ops.iter().enumerate() {
                            work.push((o, *elem, addr + esize * i as u64));
                        }
                    }
                    Shape::Struct { fields, offsets } if fields.len() == ops.len() => {
                        for ((&o, &f), &off) in ops.iter().zip(fields).zip(offsets) {
                            work.push((o, f, addr + off));
                        }
                    }
                    Shape::Vector { lane, lanes } if usize::from(*lanes) == ops.len() => {
                        let lane_ty = *m.operands(ty).first().ok_or_else(bad)?;
                        for (i, &o) in ops.iter().enumerate() {
                            work.push((o, lane_ty, addr + lane.size() * i as u64));
                        }
                    }
                    _ => return Err(bad()),
                }
            } else {
                return Err(bad());
            }
        }
        Ok(())
    }

    /// Where operand `v` comes from.
    #[inline]
    pub(crate) fn src(&self, v: Inst) -> Src {
        self.src.get(v.idx()).copied().unwrap_or(Src::None)
    }

    /// The function index of `func`.
    pub(crate) fn func_index(&self, func: Inst) -> Option<u32> {
        self.func_of.get(func.idx()).copied().filter(|&i| i != NONE)
    }

    /// The index of `block` within its function.
    pub(crate) fn block_index(&self, block: Inst) -> Option<u32> {
        self.block_of
            .get(block.idx())
            .copied()
            .filter(|&i| i != NONE)
    }
}
