//! The interpreter's [`Session`] (spec/backends.md, "Sessions"): one module instantiated
//! once, its exports called many times, its memory kept from call to call, and extending
//! modules loaded onto it.
//!
//! The session owns its module and the interpreter's state apart from it (the prepared
//! [`Program`], the [`Memory`], the captured output): each call assembles an [`Interpreter`]
//! borrowing the module from these parts and takes them back afterwards (moves of a few
//! words). A load of an extending module (or an extension in place, `load_in_place`) prepares
//! only what it adds, against the same memory (`Program::extend`): the live definitions keep
//! their addresses and function indices, the new ones get theirs, only the new globals are
//! allocated and initialized, and only the new instructions are checked against the nesting
//! limit and read for export names.

use std::collections::HashMap;

use irkit_backend::extension::{self, Grows, new_exports};
use irkit_backend::{BackendError, Call, RunOptions, Session, Val};
use irkit_core::{Inst, Module};

use crate::memory::Memory;
use crate::program::Program;
use crate::{DEFAULT_MEMORY_LIMIT, Interpreter, TrapKind, Value, externs};

/// The interpreter's state apart from its module.
pub(crate) struct Parts {
    pub(crate) prog: Program,
    pub(crate) mem: Memory,
    pub(crate) output: externs::Output,
}

/// A live program in the reference interpreter (`InterpBackend`'s [`irkit_backend::Backend::session`]). `putchar`
/// writes to the process's standard output.
pub struct InterpSession {
    module: Module,
    parts: Option<Parts>,
    exports: HashMap<String, Inst>,
    /// The value depth of each hoistable of the live program (the nesting limit's measure).
    depths: HashMap<Inst, u32>,
    /// The arena slots of the module prepared so far (the live program's).
    prepared: usize,
    fuel: Option<u64>,
    max_depth: usize,
}

impl InterpSession {
    /// A session with `opts`' fuel (per call) and call depth limit, before any load.
    pub fn new(opts: &RunOptions) -> InterpSession {
        InterpSession {
            module: Module::new(),
            parts: None,
            exports: HashMap::new(),
            depths: HashMap::new(),
            prepared: 0,
            fuel: opts.fuel,
            max_depth: opts
                .max_depth
                .unwrap_or(crate::DEFAULT_MAX_CALL_DEPTH)
                .max(1),
        }
    }
}

fn malformed(e: impl std::fmt::Display) -> BackendError {
    BackendError::Malformed(e.to_string())
}

impl InterpSession {
    /// Prepares what the module holds beyond the slots prepared so far (all of it at the first
    /// load): the work is the additions'. On an error nothing is prepared.
    fn prepare(&mut self) -> Result<(), BackendError> {
        let module = &self.module;
        let from = self.prepared;
        // The nesting limit bounds how deep values nest (see `Interpreter::new`): checked for
        // the whole module first, then for the new instructions of each extension only.
        let mut depths = HashMap::new();
        if self.parts.is_none() {
            if let Err(n) = irkit_core::check_nesting(module) {
                return Err(malformed(format!("{}: {n}", n.inst())));
            }
            let all = irkit_core::limits::value_depths(module);
            for &h in module.pool() {
                if let Some(&d) = all.get(h.idx()) {
                    depths.insert(h, d);
                }
            }
        } else if let Err(i) = crate::nesting::check_new(module, from, &self.depths, &mut depths) {
            return Err(malformed(format!(
                "{i}: nested deeper than {} levels (the nesting limit)",
                irkit_core::MAX_NESTING
            )));
        }
        let parts = match self.parts.take() {
            None => {
                let mut mem = Memory::new(DEFAULT_MEMORY_LIMIT);
                let prog = Program::build(module, &mut mem).map_err(malformed)?;
                Parts {
                    prog,
                    mem,
                    output: externs::Output {
                        passthrough: true,
                        ..Default::default()
                    },
                }
            }
            Some(mut parts) => {
                if let Err(e) = parts.prog.extend(module, &mut parts.mem) {
                    self.parts = Some(parts);
                    return Err(malformed(e));
                }
                parts
            }
        };
        self.exports.extend(new_exports(module, from));
        self.depths.extend(depths);
        self.prepared = module.arena_len();
        self.parts = Some(parts);
        Ok(())
    }
}

impl Grows for InterpSession {
    fn live(&mut self) -> &mut Module {
        &mut self.module
    }

    fn loaded(&self) -> bool {
        self.parts.is_some()
    }

    fn prepared(&self) -> usize {
        self.prepared
    }

    /// The interpreter prepares by arena slot: everything beyond what it prepared.
    fn grow(&mut self, _from: usize) -> Result<(), BackendError> {
        self.prepare()
    }
}

impl Session for InterpSession {
    fn module(&self) -> &Module {
        &self.module
    }

    fn load(&mut self, module: Module) -> Result<(), BackendError> {
        extension::load(self, module)
    }

    fn load_in_place(
        &mut self,
        append: &mut dyn FnMut(&mut Module) -> bool,
    ) -> Result<bool, BackendError> {
        extension::load_in_place(self, append)
    }

    fn call(&mut self, export: &str, args: &[Val]) -> Result<Call, BackendError> {
        let Some(&f) = self.exports.get(export) else {
            return Err(BackendError::Entry(format!(
                "no function is exported as {export}"
            )));
        };
        let Some(parts) = self.parts.take() else {
            return Err(BackendError::Entry("no module is loaded".into()));
        };
        let m = &self.module;
        let (ret, params) = m
            .ty(f)
            .and_then(|t| m.fn_signature(t))
            .map(|(r, p)| (Some(r), p.to_vec()))
            .unwrap_or_default();
        let args: Vec<Value> = args
            .iter()
            .enumerate()
            .map(|(k, &v)| to_value(m, params.get(k).copied(), v))
            .collect();
        let mut it = Interpreter::from_parts(&self.module, parts, self.fuel, self.max_depth);
        let result = it.run(f, &args);
        self.parts = Some(it.into_parts());
        Ok(match result {
            Ok(None) => Call::Returned(Vec::new()),
            Ok(Some(v)) => Call::Returned(leaves(&self.module, ret, &v)?),
            Err(t) => match t.kind {
                TrapKind::Exit(code) => Call::Exited(code),
                TrapKind::BadCall(why) => return Err(BackendError::Entry(why)),
                kind => Call::Trapped {
                    kind: kind.to_string(),
                    message: crate::Trap {
                        kind,
                        location: t.location,
                    }
                    .to_string(),
                },
            },
        })
    }
}

fn to_value(m: &Module, ty: Option<irkit_core::Inst>, v: Val) -> Value {
    match v {
        Val::I1(b) => Value::bool(b),
        Val::I8(x) => Value::I8(x.into()),
        Val::I16(x) => Value::I16(x.into()),
        Val::I32(x) => Value::I32(x.into()),
        Val::I64(x) => Value::I64(x),
        Val::F32(x) => Value::F32(x),
        Val::F64(x) => Value::F64(x),
        Val::Ptr(x) => Value::Ptr(x),
        // Its lanes as the parameter's type says (a bad argument fails the run's type check).
        Val::V128(b) => match ty.and_then(|t| lane_of(m, t)) {
            Some(lane) => crate::vector::from_bytes(lane, &b),
            None => Value::Aggregate(Vec::new().into()),
        },
    }
}

/// The lane type of vector type `t`.
fn lane_of(m: &Module, t: irkit_core::Inst) -> Option<irkit_core::scalar::Lane> {
    if m.opcode(t) != irkit_core::Opcode::VEC {
        return None;
    }
    irkit_core::scalar::Lane::of(m.opcode(*m.operands(t).first()?))
}

/// The scalar leaves of `v` (of type `ty`), in field order (without recursion); a 16-byte
/// vector is one leaf, [`Val::V128`].
fn leaves(m: &Module, ty: Option<irkit_core::Inst>, v: &Value) -> Result<Vec<Val>, BackendError> {
    let mut out = Vec::new();
    let mut work = vec![(ty, v)];
    while let Some((ty, v)) = work.pop() {
        if let Some(lane) = ty.and_then(|t| lane_of(m, t)) {
            let bytes = crate::vector::to_bytes(lane, v)
                .ok()
                .and_then(|b| <[u8; 16]>::try_from(b).ok())
                .ok_or_else(|| {
                    BackendError::Entry(
                        "a result vector that is not 16 bytes cannot cross a session's boundary"
                            .into(),
                    )
                })?;
            out.push(Val::V128(bytes));
            continue;
        }
        out.push(match v {
            Value::I1(b) => Val::I1(*b != 0),
            Value::I8(x) => Val::I8(*x as u8),
            Value::I16(x) => Val::I16(*x as u16),
            Value::I32(x) => Val::I32(*x as u32),
            Value::I64(x) => Val::I64(*x),
            Value::F32(x) => Val::F32(*x),
            Value::F64(x) => Val::F64(*x),
            Value::Ptr(x) => Val::Ptr(*x),
            Value::Aggregate(vs) => {
                // The field types, when `ty` is a struct or an array.
                let fields: Vec<Option<irkit_core::Inst>> = match ty {
                    Some(t) if m.opcode(t) == irkit_core::Opcode::ARRAY => {
                        vec![m.operands(t).first().copied(); vs.len()]
                    }
                    Some(t) => m.operands(t).iter().map(|&f| Some(f)).collect(),
                    None => Vec::new(),
                };
                work.extend(
                    vs.iter()
                        .enumerate()
                        .rev()
                        .map(|(k, x)| (fields.get(k).copied().flatten(), x)),
                );
                continue;
            }
        });
    }
    Ok(out)
}
