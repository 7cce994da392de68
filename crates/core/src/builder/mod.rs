//! A builder for definitions and function bodies over [`Module`]'s primitive API.
//!
//! Two paths share one cursor (the end of a block, or before an instruction):
//!
//! * **the typed path**, for front ends: [`Builder::ins`] gives one method per operation
//!   (`iadd`, `fadd`, `icmp`, `zext`, `load`, `call`, `br`, `ret`, …; the arithmetic ones
//!   generated per opcode family from the registry's category enums), each returning the new
//!   instruction. The result type follows from the operands. Misuse (no current block, a type or
//!   a handle of another module passed as a value, operands of different types, a call or a
//!   branch with the wrong arguments) is a bug of the front end and **panics** at once with a
//!   message naming the operation and the operand, as Cranelift's `FunctionBuilder` does
//!   (see [`Ins`]);
//! * **the fallible path**, for tools that build from untrusted data (the text parser): the
//!   methods of [`Builder`] itself return a [`CoreError`] when the tree refuses a request and
//!   leave the typing to the verifier. (The wasm front end validates its input first, so it
//!   builds on the typed path.)
//!
//! Definitions, blocks and decorations (`func`, [`Builder::import_func`],
//! [`Builder::entry_block`], `export`, …) return `Result<_, CoreError>` on both paths: a front
//! end propagates them with `?` into [`crate::Error`], the one error of build, verify and write.
//!
//! ```
//! use irkit_core::{Builder, Module};
//!
//! # fn main() -> Result<(), irkit_core::Error> {
//! let mut m = Module::new();
//! let mut b = Builder::new(&mut m);
//! let i32t = b.module().ty_i32();
//! let sig = b.module().ty_fn(i32t, &[i32t])?;
//! let f = b.func("double", sig)?;
//! let (entry, params) = b.entry_block(f)?; // the parameters come from the signature
//! b.position_at_end(entry);
//! let y = b.ins().iadd(params[0], params[0]);
//! b.ins().ret(Some(y));
//! irkit_core::verify::verify(&m)?;
//! # Ok(())
//! # }
//! ```

use crate::module::Operands;
use crate::{CoreError, FloatCC, Inst, IntCC, Module, Opcode, Payload};

mod check;
mod generics;
mod ins;
mod objects;

pub use ins::Ins;

/// Builds definitions and appends instructions at a cursor (the end of a block).
pub struct Builder<'m> {
    m: &'m mut Module,
    block: Option<Inst>,
    /// With [`Builder::position_before`]: the instruction new ones go before, in `block`.
    before: Option<Inst>,
}

impl<'m> Builder<'m> {
    /// A builder over `m`, with no cursor.
    pub fn new(m: &'m mut Module) -> Builder<'m> {
        Builder {
            m,
            block: None,
            before: None,
        }
    }

    /// The module, for interning types and constants.
    pub fn module(&mut self) -> &mut Module {
        self.m
    }

    /// A new function definition named `name` (a name hint) with signature `sig`, appended to
    /// the module. It has no body until a block is added.
    pub fn func(&mut self, name: &str, sig: Inst) -> Result<Inst, CoreError> {
        self.definition(Opcode::FUNC, name, Some(sig), Vec::new())
    }

    /// A new global variable of type `ty`, optionally initialized.
    pub fn global_var(
        &mut self,
        name: &str,
        ty: Inst,
        init: Option<Inst>,
    ) -> Result<Inst, CoreError> {
        self.definition(
            Opcode::GLOBAL_VAR,
            name,
            Some(ty),
            init.into_iter().collect(),
        )
    }

    /// A new global constant of type `ty` with initializer `init`.
    pub fn global_const(&mut self, name: &str, ty: Inst, init: Inst) -> Result<Inst, CoreError> {
        self.definition(Opcode::GLOBAL_CONST, name, Some(ty), vec![init])
    }

    /// A global without an initial value: a `global_var` if `mutable`, else a `global_const`.
    /// Such a global is an import declaration once marked [`Builder::import`]; a variable that
    /// is not imported starts zeroed; a constant must be imported.
    pub fn global_decl(&mut self, name: &str, ty: Inst, mutable: bool) -> Result<Inst, CoreError> {
        let op = if mutable {
            Opcode::GLOBAL_VAR
        } else {
            Opcode::GLOBAL_CONST
        };
        self.definition(op, name, Some(ty), Vec::new())
    }

    fn definition(
        &mut self,
        op: Opcode,
        name: &str,
        ty: Option<Inst>,
        ops: Vec<Inst>,
    ) -> Result<Inst, CoreError> {
        let d = self.m.new_inst(op, ty, ops, Payload::None)?;
        let root = self.m.root();
        self.m.append_child(root, d)?;
        if !name.is_empty() {
            self.m.set_name(d, name)?;
        }
        Ok(d)
    }

    /// Adds a decoration to `owner`.
    pub fn decorate(
        &mut self,
        owner: Inst,
        op: Opcode,
        operands: Vec<Inst>,
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        self.m.add_decoration(owner, op, operands, payload)
    }

    /// Marks `def` exported as `name`.
    pub fn export(&mut self, def: Inst, name: &str) -> Result<Inst, CoreError> {
        self.decorate(def, Opcode::EXPORT, Vec::new(), Payload::Str(name.into()))
    }

    /// Marks `def` imported as `name`.
    pub fn import(&mut self, def: Inst, name: &str) -> Result<Inst, CoreError> {
        self.decorate(def, Opcode::IMPORT, Vec::new(), Payload::Str(name.into()))
    }

    /// Appends a block with parameters of the given types to `func`; returns it and its params.
    pub fn block(
        &mut self,
        func: Inst,
        param_types: &[Inst],
    ) -> Result<(Inst, Vec<Inst>), CoreError> {
        let b = self
            .m
            .new_inst(Opcode::BLOCK, None, Vec::new(), Payload::None)?;
        self.m.append_child(func, b)?;
        let mut params = Vec::with_capacity(param_types.len());
        for &t in param_types {
            let p = self
                .m
                .new_inst(Opcode::PARAM, Some(t), Vec::new(), Payload::None)?;
            self.m.append_child(b, p)?;
            params.push(p);
        }
        Ok((b, params))
    }

    /// The entry block of `func`, appended with one parameter per parameter of the function's
    /// signature: returns it and its parameters. `func` must be a `func` without blocks.
    pub fn entry_block(&mut self, func: Inst) -> Result<(Inst, Vec<Inst>), CoreError> {
        let not_a_func = CoreError::WrongKind {
            opcode: self.m.get(func).map_or(Opcode::MODULE, |d| d.opcode()),
            what: "is not a function with a signature: only a `func` has an entry block",
        };
        if self.m.get(func).map(|d| d.opcode()) != Some(Opcode::FUNC) {
            return Err(not_a_func);
        }
        if self.m.entry_block(func).is_some() {
            return Err(CoreError::WrongKind {
                opcode: Opcode::FUNC,
                what: "already has an entry block",
            });
        }
        let params = match self.m.ty(func).and_then(|sig| self.m.fn_signature(sig)) {
            Some((_, params)) => params.to_vec(),
            None => return Err(not_a_func),
        };
        self.block(func, &params)
    }

    /// Declares a function imported as `import` (a `func` named `name`, with signature `sig`
    /// and no body, decorated `import`), in one call.
    pub fn import_func(&mut self, name: &str, sig: Inst, import: &str) -> Result<Inst, CoreError> {
        let f = self.func(name, sig)?;
        self.import(f, import)?;
        Ok(f)
    }

    /// Appends a parameter of type `ty` to `block`, after its existing parameters and before
    /// its instructions. A front end that builds SSA form while it translates (Braun et al.)
    /// discovers a block's parameters after the block already has instructions; each edge into
    /// the block then needs one more argument, which is the front end's job.
    pub fn append_block_param(&mut self, block: Inst, ty: Inst) -> Result<Inst, CoreError> {
        if self.m.opcode(block) != Opcode::BLOCK {
            return Err(CoreError::WrongKind {
                opcode: self.m.opcode(block),
                what: "is not a block: only blocks have parameters",
            });
        }
        let n = self.m.block_params(block).len();
        let p = self
            .m
            .new_inst(Opcode::PARAM, Some(ty), Vec::new(), Payload::None)?;
        self.m.insert_child(block, n, p)?;
        Ok(p)
    }

    /// Moves the cursor to the end of `block`.
    pub fn position_at_end(&mut self, block: Inst) {
        self.block = Some(block);
        self.before = None;
    }

    /// Moves the cursor before `inst`, an instruction of a block: what is appended next goes
    /// right before it (each insertion finds `inst` among its block's children, a scan of the
    /// block). Panics if `inst` is not in a block of this module (a programming error).
    pub fn position_before(&mut self, inst: Inst) {
        let block = self
            .m
            .get(inst)
            .and_then(|d| d.parent())
            .filter(|&p| self.m.opcode(p) == Opcode::BLOCK);
        let Some(block) = block else {
            panic!(
                "position_before: {} is not an instruction in a block",
                crate::place::describe(self.m, inst)
            );
        };
        self.block = Some(block);
        self.before = Some(inst);
    }

    /// The block the cursor is in.
    pub fn current_block(&self) -> Option<Inst> {
        self.block
    }

    /// Appends any instruction at the cursor, its operands given as any slice-like list (an
    /// array, a `Vec`), copied.
    pub fn inst(
        &mut self,
        op: Opcode,
        ty: Option<Inst>,
        operands: impl AsRef<[Inst]>,
        payload: Payload,
    ) -> Result<Inst, CoreError> {
        let block = self.block.ok_or(CoreError::WrongKind {
            opcode: op,
            what: "needs a cursor block",
        })?;
        let i = self.m.new_inst(op, ty, operands, payload)?;
        let at = self
            .before
            .and_then(|b| self.m.children(block).iter().position(|&c| c == b));
        match at {
            Some(k) => self.m.insert_child(block, k, i)?,
            None => self.m.append_child(block, i)?,
        }
        Ok(i)
    }

    /// A binary operation whose result has the type of `lhs`.
    pub fn binary(&mut self, op: Opcode, lhs: Inst, rhs: Inst) -> Result<Inst, CoreError> {
        let ty = self.m.value_type(lhs);
        self.inst(op, ty, [lhs, rhs], Payload::None)
    }

    /// `icmp cc lhs, rhs`.
    pub fn icmp(&mut self, cc: IntCC, lhs: Inst, rhs: Inst) -> Result<Inst, CoreError> {
        let t = self.m.ty_i1();
        self.inst(Opcode::ICMP, Some(t), [lhs, rhs], Payload::Int(cc.code()))
    }

    /// `fcmp cc lhs, rhs`.
    pub fn fcmp(&mut self, cc: FloatCC, lhs: Inst, rhs: Inst) -> Result<Inst, CoreError> {
        let t = self.m.ty_i1();
        self.inst(Opcode::FCMP, Some(t), [lhs, rhs], Payload::Int(cc.code()))
    }

    /// A conversion of `value` to type `to`.
    pub fn convert(&mut self, op: Opcode, to: Inst, value: Inst) -> Result<Inst, CoreError> {
        self.inst(op, Some(to), [value], Payload::None)
    }

    /// A direct call; the result type is the callee's return type (none for `void`). Refused
    /// ([`CoreError::ArgumentCount`]) when the callee's signature takes another number of
    /// arguments.
    pub fn call(&mut self, callee: Inst, args: &[Inst]) -> Result<Inst, CoreError> {
        let sig = self.m.ty(callee).and_then(|sig| self.m.fn_signature(sig));
        if let Some((_, params)) = sig
            && params.len() != args.len()
        {
            return Err(CoreError::ArgumentCount {
                callee,
                expected: params.len(),
                given: args.len(),
            });
        }
        let ty = sig
            .map(|(r, _)| r)
            .filter(|&r| self.m.opcode(r) != Opcode::VOID);
        let mut ops: Operands = smallvec::smallvec![callee];
        ops.extend_from_slice(args);
        self.inst(Opcode::CALL, ty, ops, Payload::None)
    }

    /// A call through a function pointer with signature `sig`; refused like [`Builder::call`]
    /// when `sig` takes another number of arguments.
    pub fn call_indirect(
        &mut self,
        sig: Inst,
        callee: Inst,
        args: &[Inst],
    ) -> Result<Inst, CoreError> {
        let signature = self.m.fn_signature(sig);
        if let Some((_, params)) = signature
            && params.len() != args.len()
        {
            return Err(CoreError::ArgumentCount {
                callee: sig,
                expected: params.len(),
                given: args.len(),
            });
        }
        let ty = signature
            .map(|(r, _)| r)
            .filter(|&r| self.m.opcode(r) != Opcode::VOID);
        let mut ops: Operands = smallvec::smallvec![sig, callee];
        ops.extend_from_slice(args);
        self.inst(Opcode::CALL_INDIRECT, ty, ops, Payload::None)
    }

    /// `select cond, if_true, if_false`, of the type of `if_true`.
    pub fn select(&mut self, cond: Inst, if_true: Inst, if_false: Inst) -> Result<Inst, CoreError> {
        let ty = self.m.value_type(if_true);
        self.inst(Opcode::SELECT, ty, [cond, if_true, if_false], Payload::None)
    }

    /// `load T, ptr`: a scalar of type `ty` read at `ptr`.
    pub fn load(&mut self, ty: Inst, ptr: Inst) -> Result<Inst, CoreError> {
        self.inst(Opcode::LOAD, Some(ty), [ptr], Payload::None)
    }

    /// `store ptr, value`.
    pub fn store(&mut self, ptr: Inst, value: Inst) -> Result<Inst, CoreError> {
        self.inst(Opcode::STORE, None, [ptr, value], Payload::None)
    }

    /// `mem_load o @mem, addr`: a `ty` read at `zext(addr) + offset` of the linear memory
    /// `mem` (spec/ir.md, "Linear memories").
    pub fn mem_load(
        &mut self,
        ty: Inst,
        mem: Inst,
        addr: Inst,
        offset: u64,
    ) -> Result<Inst, CoreError> {
        self.inst(
            Opcode::MEM_LOAD,
            Some(ty),
            [mem, addr],
            Payload::Int(offset),
        )
    }

    /// `mem_store o @mem, addr, value`.
    pub fn mem_store(
        &mut self,
        mem: Inst,
        addr: Inst,
        value: Inst,
        offset: u64,
    ) -> Result<Inst, CoreError> {
        self.inst(
            Opcode::MEM_STORE,
            None,
            [mem, addr, value],
            Payload::Int(offset),
        )
    }

    /// `mem_grow @mem, pages`: the old size in pages, or -1.
    pub fn mem_grow(&mut self, mem: Inst, pages: Inst) -> Result<Inst, CoreError> {
        let i32t = self.m.ty_i32();
        self.inst(Opcode::MEM_GROW, Some(i32t), [mem, pages], Payload::None)
    }

    /// `elem T, base, indices…`: an address computed from `base` (see spec/ir.md, `elem`).
    pub fn elem(&mut self, ty: Inst, base: Inst, indices: &[Inst]) -> Result<Inst, CoreError> {
        let p = self.m.ty_ptr();
        let mut ops: Operands = smallvec::smallvec![ty, base];
        ops.extend_from_slice(indices);
        self.inst(Opcode::ELEM, Some(p), ops, Payload::None)
    }

    /// The type of field or element `k` of the aggregate type `agg_ty`.
    fn field_type(&self, agg_ty: Inst, k: u64) -> Result<Inst, CoreError> {
        let ops = self.m.operands(agg_ty);
        let field = match self.m.opcode(agg_ty) {
            Opcode::STRUCT | Opcode::NAMED_STRUCT => {
                usize::try_from(k).ok().and_then(|k| ops.get(k))
            }
            Opcode::ARRAY | Opcode::VEC => ops.first(),
            _ => None,
        };
        field.copied().ok_or(CoreError::WrongKind {
            opcode: self.m.opcode(agg_ty),
            what: "has no such field or element",
        })
    }

    /// `extract k agg`: field or element `k` of an aggregate value.
    pub fn extract(&mut self, agg: Inst, k: u64) -> Result<Inst, CoreError> {
        let agg_ty = self.m.value_type(agg).ok_or(CoreError::WrongKind {
            opcode: self.m.opcode(agg),
            what: "is not a value",
        })?;
        let ty = self.field_type(agg_ty, k)?;
        self.inst(Opcode::EXTRACT, Some(ty), [agg], Payload::Int(k))
    }

    /// `insert k agg, value`: the aggregate with field or element `k` replaced.
    pub fn insert(&mut self, agg: Inst, k: u64, value: Inst) -> Result<Inst, CoreError> {
        let ty = self.m.value_type(agg);
        self.inst(Opcode::INSERT, ty, [agg, value], Payload::Int(k))
    }

    /// `trap`.
    pub fn trap(&mut self) -> Result<Inst, CoreError> {
        self.inst(Opcode::TRAP, None, Vec::new(), Payload::None)
    }

    /// `trap_msg "kind"`: a trap reported with the kind `kind` (1 to
    /// [`MAX_TRAP_KIND`](crate::MAX_TRAP_KIND) printable ASCII characters; the verifier
    /// checks).
    pub fn trap_msg(&mut self, kind: &str) -> Result<Inst, CoreError> {
        self.inst(
            Opcode::TRAP_MSG,
            None,
            Vec::new(),
            Payload::Str(kind.into()),
        )
    }

    /// A unary operation (`clz` … `popcnt`, `fneg` … `fnearest`): the result has the
    /// operand's type.
    pub fn unary(&mut self, op: Opcode, x: Inst) -> Result<Inst, CoreError> {
        let ty = self.m.value_type(x);
        self.inst(op, ty, [x], Payload::None)
    }

    /// `unreachable`.
    pub fn unreachable(&mut self) -> Result<Inst, CoreError> {
        self.inst(Opcode::UNREACHABLE, None, Vec::new(), Payload::None)
    }

    /// `ret` (with or without a value).
    pub fn ret(&mut self, value: Option<Inst>) -> Result<Inst, CoreError> {
        self.inst(Opcode::RET, None, value.as_slice(), Payload::None)
    }

    /// `jump target(args…)`.
    pub fn jump(&mut self, target: Inst, args: &[Inst]) -> Result<Inst, CoreError> {
        let mut ops: Operands = smallvec::smallvec![target];
        ops.extend_from_slice(args);
        self.inst(Opcode::JUMP, None, ops, Payload::None)
    }

    /// `br cond, then(args…), else(args…)`.
    pub fn br(
        &mut self,
        cond: Inst,
        then: Inst,
        then_args: &[Inst],
        els: Inst,
        else_args: &[Inst],
    ) -> Result<Inst, CoreError> {
        let mut ops: Operands = smallvec::smallvec![cond, then];
        ops.extend_from_slice(then_args);
        ops.push(els);
        ops.extend_from_slice(else_args);
        self.inst(Opcode::BR, None, ops, Payload::None)
    }

    /// `switch value, case_values…, default(args…), case(args…)…`.
    pub fn switch(
        &mut self,
        value: Inst,
        default: (Inst, &[Inst]),
        cases: &[(Inst, Inst, &[Inst])],
    ) -> Result<Inst, CoreError> {
        let mut ops: Operands = smallvec::smallvec![value];
        ops.extend(cases.iter().map(|c| c.0));
        ops.push(default.0);
        ops.extend_from_slice(default.1);
        for (_, target, args) in cases {
            ops.push(*target);
            ops.extend_from_slice(args);
        }
        self.inst(Opcode::SWITCH, None, ops, Payload::None)
    }
}

#[cfg(test)]
mod tests;
