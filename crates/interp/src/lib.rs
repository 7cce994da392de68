//! # irkit-interp: the reference interpreter
//!
//! This crate owns the execution of a **verified** module with exactly the semantics of
//! `spec/ir.md`: it is the oracle every back end is tested against. It interprets integer
//! arithmetic (wrapping, masked shifts, trapping division including `MIN / -1`), IEEE floats
//! with canonical NaN results, saturating float-to-integer conversions, block parameters with
//! simultaneous assignment, direct and checked indirect calls, and a byte-addressed memory of
//! separate objects where every load and store is checked (out of bounds, null, use after
//! free, stores into `global_const`): a memory error is a [`Trap`], never a crash.
//!
//! What it does **not** do: link (use `irkit-link` first: an unresolved `import` traps when
//! used) or verify (run `irkit_core::verify::verify` first). It *assumes* a verified module;
//! on one that is not, [`Interpreter::new`] and [`Interpreter::run`] report errors
//! ([`InterpError::Malformed`], [`TrapKind::Malformed`]) and never panic.
//!
//! Design:
//!
//! * [`Interpreter::new`] precomputes everything once, in private tables: type
//!   layouts, dense per-function block and register-slot indices, the values of constants,
//!   one address per function, and the initial memory image of the globals.
//! * Calls use an explicit frame stack, so IR recursion is bounded by
//!   [`Interpreter::with_max_call_depth`] and reported as [`TrapKind::StackOverflow`].
//! * Optional fuel ([`Interpreter::with_fuel`]): one unit per executed instruction.
//! * `extern` functions without a body are provided by [`externs`]: `putchar` (captured in
//!   memory by default, see [`Interpreter::output`]), `malloc`, `free`, `memcpy`, `memmove`,
//!   `memset`, `exit`, `abort`; any other is [`TrapKind::UnknownExtern`].
//!
//! * NOIR procs (spec/ir.md, "NOIR: procs without blocks") are evaluated directly by their
//!   iteration semantics ([`proc_eval`]): a `call` of a proc, or a run of one
//!   ([`Interpreter::run`], `main` included), evaluates it, and [`Interpreter::eval_proc`] /
//!   [`eval_proc`] also report an undefined result instead of trapping. Procs have function
//!   addresses like `func`s, so `call_indirect` reaches them too.
//!
//! [`InterpBackend`] is the interpreter as an `irkit_backend::Backend` (name `interp`).
//!
//! ```
//! let src = "#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n  ret i32 7\n}\n";
//! let m = irkit_text::parse(src, "t.ir").unwrap();
//! irkit_core::verify::verify(&m).unwrap();
//! let mut it = irkit_interp::Interpreter::new(&m).unwrap();
//! assert_eq!(it.run_main(), Ok(7));
//! ```

mod backend;
mod branch;
mod exec;
pub mod externs;
mod layout;
mod linear;
mod memory;
mod nesting;
pub mod ops;
pub mod proc_eval;
mod proc_info;
mod program;
mod pure;
mod session;
mod source;
mod trap;
mod value;
mod vector;

pub use backend::InterpBackend;
pub use proc_eval::{ProcResult, eval_proc};
pub use session::InterpSession;
pub use trap::{InterpError, Location, Trap, TrapKind};
pub use value::Value;

use irkit_core::{Inst, Module};

use crate::layout::{Scalar, Shape};
use crate::memory::Memory;
use crate::program::Program;

/// The default call depth limit ([`irkit_backend::DEFAULT_INTERP_DEPTH`]): frames live on the
/// interpreter's heap, so it reaches at least as deep as native code on its usual stack; a
/// limit given to every back end makes them trap at the same call.
pub const DEFAULT_MAX_CALL_DEPTH: usize = irkit_backend::DEFAULT_INTERP_DEPTH;

/// The default limit on memory held by live objects (globals, stack and heap), in bytes.
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;

/// The function to run: a `func` or `proc` instruction, or a name (an export name, else a
/// name hint).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncRef<'a> {
    /// A `func` or `proc` instruction of the module.
    Inst(Inst),
    /// An export name, or else a name hint.
    Name(&'a str),
}

impl From<Inst> for FuncRef<'_> {
    fn from(i: Inst) -> Self {
        FuncRef::Inst(i)
    }
}

impl<'a> From<&'a str> for FuncRef<'a> {
    fn from(n: &'a str) -> Self {
        FuncRef::Name(n)
    }
}

/// An interpreter for one module. Memory (globals, heap) persists from one run to the next;
/// build a new interpreter for a fresh start.
#[derive(Debug)]
pub struct Interpreter<'m> {
    module: &'m Module,
    prog: Program,
    mem: Memory,
    output: externs::Output,
    fuel: Option<u64>,
    max_depth: usize,
}

impl<'m> Interpreter<'m> {
    /// Prepares `module` for execution: lays out and initializes its globals, gives every
    /// function and proc an address, and indexes every function body and proc.
    ///
    /// `module` should be verified (`irkit_core::verify::verify`); on a module that is not, this
    /// returns an error or a later run traps with [`TrapKind::Malformed`]; it never panics. A
    /// module over the nesting limit ([`irkit_core::MAX_NESTING`]) is an error here.
    pub fn new(module: &'m Module) -> Result<Interpreter<'m>, InterpError> {
        Self::with_memory_limit(module, DEFAULT_MEMORY_LIMIT)
    }

    /// Like [`Interpreter::new`], with a limit on the bytes live objects may hold together
    /// (exceeding it at run time is [`TrapKind::OutOfMemory`]; `malloc` returns null).
    pub fn with_memory_limit(
        module: &'m Module,
        limit: u64,
    ) -> Result<Interpreter<'m>, InterpError> {
        // Values nest as deeply as their types: over the nesting limit (a module no reader
        // accepts) they are refused here, so no value is deep enough to overflow the stack
        // when it is printed or dropped.
        if let Err(n) = irkit_core::check_nesting(module) {
            return Err(InterpError::Malformed(format!("{}: {n}", n.inst())));
        }
        let mut mem = Memory::new(limit);
        let prog = Program::build(module, &mut mem)?;
        Ok(Interpreter {
            module,
            prog,
            mem,
            output: externs::Output::default(),
            fuel: None,
            max_depth: DEFAULT_MAX_CALL_DEPTH,
        })
    }

    /// Limits the instructions later runs may execute, all together: one unit of fuel per
    /// executed instruction. Running out is [`TrapKind::FuelExhausted`], located at the
    /// instruction that had no fuel left.
    pub fn with_fuel(mut self, fuel: u64) -> Self {
        self.fuel = Some(fuel);
        self
    }

    /// Sets the call depth limit ([`DEFAULT_MAX_CALL_DEPTH`] by default); a call beyond it is
    /// [`TrapKind::StackOverflow`].
    pub fn with_max_call_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth.max(1);
        self
    }

    /// Makes `putchar` write to the process's standard output instead of capturing.
    pub fn with_stdout(mut self, passthrough: bool) -> Self {
        self.output.passthrough = passthrough;
        self
    }

    /// The fuel left, if fuel is limited.
    pub fn fuel(&self) -> Option<u64> {
        self.fuel
    }

    /// The bytes written by `putchar` so far (when not passed through to stdout).
    pub fn output(&self) -> &[u8] {
        &self.output.captured
    }

    /// Takes the captured output, leaving it empty.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.output.captured)
    }

    /// Runs function `func` with `args` and returns its result (`None` for `void`).
    ///
    /// The arguments must match the function's parameter types ([`TrapKind::BadCall`]
    /// otherwise). A call of `exit(n)` ends the run with [`TrapKind::Exit`]`(n)`. A proc runs
    /// as a `call` of it does: an undefined result is [`TrapKind::Unreachable`].
    pub fn run<'a>(
        &mut self,
        func: impl Into<FuncRef<'a>>,
        args: &[Value],
    ) -> Result<Option<Value>, Trap> {
        let f = self.resolve(func.into())?;
        self.check_args(f, args)?;
        self.execute(f, args.to_vec())
    }

    /// Checks `args` against the parameter types of function `f` ([`TrapKind::BadCall`]).
    fn check_args(&self, f: u32, args: &[Value]) -> Result<(), Trap> {
        let info = &self.prog.funcs[f as usize];
        if info.params.len() != args.len() {
            return Err(Trap::new(TrapKind::BadCall(format!(
                "expected {}, got {}",
                irkit_core::message::count(info.params.len(), "argument"),
                args.len()
            ))));
        }
        for (i, (&ty, a)) in info.params.iter().zip(args).enumerate() {
            if !self.fits(ty, a) {
                return Err(Trap::new(TrapKind::BadCall(format!(
                    "argument {i} ({a}) does not have the parameter's type"
                ))));
            }
        }
        Ok(())
    }

    /// Runs the function exported as `main` without arguments and returns the exit code: its
    /// result truncated (`i64`) or extended (`i8`, `i16` sign-extended, `i1` zero-extended) to
    /// `i32`, 0 for `void`, or `n` if it called `exit(n)`.
    pub fn run_main(&mut self) -> Result<i32, Trap> {
        let main = self.module.find_export("main").ok_or_else(|| {
            Trap::new(TrapKind::BadCall("no function is exported as main".into()))
        })?;
        match self.run(main, &[]) {
            Ok(None) => Ok(0),
            Ok(Some(v)) => match v.as_int() {
                Some((1, b)) => Ok(b as i32),
                Some(_) => Ok(v.as_signed().unwrap_or(0) as i32),
                None => Err(Trap::new(TrapKind::BadCall(format!(
                    "main returned {v}, not an integer"
                )))),
            },
            Err(Trap {
                kind: TrapKind::Exit(code),
                ..
            }) => Ok(code),
            Err(t) => Err(t),
        }
    }

    fn resolve(&self, f: FuncRef<'_>) -> Result<u32, Trap> {
        let m = self.module;
        let inst = match f {
            FuncRef::Inst(i) => Some(i),
            FuncRef::Name(n) => m.find_export(n).or_else(|| m.find_named(n)),
        };
        inst.and_then(|i| self.prog.func_index(i)).ok_or_else(|| {
            Trap::new(TrapKind::BadCall(format!(
                "{f:?} is not a function of the module"
            )))
        })
    }

    /// Whether `v` is a value of type `ty` (without recursion).
    fn fits(&self, ty: Inst, v: &Value) -> bool {
        let mut work = vec![(ty, v)];
        while let Some((ty, v)) = work.pop() {
            let Some(l) = self.prog.layouts.get(ty) else {
                return false;
            };
            let ok = match (&l.shape, v) {
                (Shape::Scalar(s), v) => match (s, v) {
                    (Scalar::Int(w), v) => v
                        .as_int()
                        .is_some_and(|(vw, b)| vw == *w && value::mask(b, vw) == b),
                    (Scalar::F32, Value::F32(_))
                    | (Scalar::F64, Value::F64(_))
                    | (Scalar::Ptr, Value::Ptr(_)) => true,
                    _ => false,
                },
                (Shape::Array { elem, len }, Value::Aggregate(vs)) => {
                    work.extend(vs.iter().map(|x| (*elem, x)));
                    vs.len() as u64 == *len
                }
                (Shape::Vector { lane, lanes }, Value::Aggregate(vs)) => {
                    vs.len() == usize::from(*lanes)
                        && vs.iter().all(|x| vector::lane_fits(*lane, x))
                }
                (Shape::Struct { fields, .. }, Value::Aggregate(vs)) => {
                    work.extend(fields.iter().copied().zip(vs.iter()));
                    vs.len() == fields.len()
                }
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// An interpreter for `module` from the state of another (a session's, see
    /// [`InterpSession`]), with fuel and depth limit for the next run.
    pub(crate) fn from_parts(
        module: &'m Module,
        parts: session::Parts,
        fuel: Option<u64>,
        max_depth: usize,
    ) -> Interpreter<'m> {
        Interpreter {
            module,
            prog: parts.prog,
            mem: parts.mem,
            output: parts.output,
            fuel,
            max_depth,
        }
    }

    /// The state apart from the module (see [`Interpreter::from_parts`]).
    pub(crate) fn into_parts(self) -> session::Parts {
        session::Parts {
            prog: self.prog,
            mem: self.mem,
            output: self.output,
        }
    }

    /// The module being run.
    pub fn module(&self) -> &'m Module {
        self.module
    }
}
