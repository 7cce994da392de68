//! The NOIR evaluator: runs a `proc` (spec/ir.md, "NOIR: procs without blocks") directly, by
//! its iteration semantics.
//!
//! Every body instruction has a *state*: undefined, defined with a value, or defined with the
//! empty value (`event`, `cue`, `next`, `case`). Parameters are always defined. *Executing* an
//! instruction first checks its passive condition (every `when` operand defined, every
//! `unless` operand undefined; otherwise it becomes undefined and has no effect), then sets its
//! state by its opcode: a pure core operation is undefined if an operand it reads is, and
//! otherwise computes exactly what the block form computes, with the same code;
//! `cue` cues its event for the next iteration, `next` records a pending assignment of its
//! `var`, `var` takes its `%init`, `case`, `phi` and `coalesce` follow the spec's table.
//!
//! Iteration 0 executes every body instruction in the topological order of
//! [`irkit_core::noir::ProcGraph`]. Each later iteration runs only if the previous one cued an
//! event: it applies the pending assignments, then executes the *updated* instructions (the
//! cued events and everything that depends on one of them) in the same order; the others keep
//! their state. When an iteration cues nothing the proc ends (pending assignments of that
//! iteration are discarded) and the state of `result`'s operand is the outcome
//! ([`ProcResult`]). A `call` of a proc whose result ends undefined traps as if `unreachable`
//! had been executed.
//!
//! Each executed body instruction costs one unit of fuel, like an instruction of the block
//! form. Traps are located in the proc: `in @p, instruction N (op %name)`, where `N` is the
//! instruction's position among the proc's children, parameters excluded.

use irkit_core::noir::read_operands;
use irkit_core::{Inst, Module, Op, Opcode};

use crate::proc_info::{BodyInst, ProcInfo};
use crate::program::{Body, Program};
use crate::pure;
use crate::source::Src;
use crate::trap::{InterpError, Trap, TrapKind};
use crate::value::Value;
use crate::{FuncRef, Interpreter};
use irkit_core::place::verified_def_label;

/// How the evaluation of a proc ended: the state of its `result` operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProcResult {
    /// The operand is defined: its value, or `None` for a proc returning `void`.
    Defined(Option<Value>),
    /// The operand is undefined. A `call` of the proc traps with [`TrapKind::Unreachable`].
    Undefined,
}

impl ProcResult {
    /// The value, if the result is defined and not `void`.
    pub fn value(&self) -> Option<&Value> {
        match self {
            ProcResult::Defined(v) => v.as_ref(),
            ProcResult::Undefined => None,
        }
    }
}

/// Evaluates proc `proc_` of `m` with `args`, spending at most `fuel` units (one per executed
/// body instruction; `fuel` is left with what remains, and running out is
/// [`TrapKind::FuelExhausted`], located at the instruction that had none left).
///
/// A convenience over [`Interpreter::eval_proc`] for one evaluation: it builds an
/// [`Interpreter`] for `m` (which should be verified), so a module it cannot prepare is a
/// [`TrapKind::Malformed`] (or [`TrapKind::OutOfMemory`]) trap without location.
///
/// ```
/// use irkit_interp::{ProcResult, Value, eval_proc};
/// // 10 / %d when %d is not 0; otherwise the result stays undefined.
/// let src = "@p: fn(i32) -> i32 = proc {\n  %d: i32 = param\n  %nz: i1 = icmp ne %d, i32 0\n  \
///            %ok = case %nz, i1 true\n  #[when(%ok)] %q: i32 = sdiv i32 10, %d\n  result %q\n}\n";
/// let m = irkit_text::parse(src, "p.ir").unwrap();
/// irkit_core::verify::verify(&m).unwrap();
/// let p = m.find_named("p").unwrap();
/// let mut fuel = 100;
/// let two = eval_proc(&m, p, &[Value::i32(5)], &mut fuel);
/// assert_eq!(two, Ok(ProcResult::Defined(Some(Value::i32(2)))));
/// assert_eq!(fuel, 97); // three instructions executed, in one iteration
/// assert_eq!(eval_proc(&m, p, &[Value::i32(0)], &mut fuel), Ok(ProcResult::Undefined));
/// ```
pub fn eval_proc(
    m: &Module,
    proc_: Inst,
    args: &[Value],
    fuel: &mut u64,
) -> Result<ProcResult, Trap> {
    let mut it = Interpreter::new(m)
        .map_err(|e| {
            Trap::new(match e {
                InterpError::Malformed(why) => TrapKind::Malformed(why),
                InterpError::TooLarge(_) => TrapKind::OutOfMemory,
            })
        })?
        .with_fuel(*fuel);
    let r = it.eval_proc(proc_, args);
    *fuel = it.fuel().unwrap_or(0);
    r
}

impl Interpreter<'_> {
    /// Evaluates proc `proc_` with `args` and returns the state its result ended in, instead
    /// of trapping when it is undefined as a `call` does ([`Interpreter::run`] runs a proc
    /// like a `call`). Fuel is the interpreter's ([`Interpreter::with_fuel`]).
    ///
    /// The arguments must match the proc's parameter types, and `proc_` must be a `proc`
    /// ([`TrapKind::BadCall`] otherwise).
    pub fn eval_proc<'a>(
        &mut self,
        proc_: impl Into<FuncRef<'a>>,
        args: &[Value],
    ) -> Result<ProcResult, Trap> {
        let f = self.resolve(proc_.into())?;
        self.check_args(f, args)?;
        let Body::Proc(info) = &self.prog.funcs[f as usize].body else {
            return Err(Trap::new(TrapKind::BadCall(format!(
                "{} is not a proc",
                verified_def_label(self.module, self.prog.funcs[f as usize].inst)
            ))));
        };
        evaluate(self.module, &self.prog, &mut self.fuel, info, args)
    }
}

/// Calls proc `info` with `args` as a `call` does: an undefined result traps with
/// [`TrapKind::Unreachable`], located at the proc's `result`.
pub(crate) fn call(
    m: &Module,
    prog: &Program,
    fuel: &mut Option<u64>,
    info: &ProcInfo,
    args: &[Value],
) -> Result<Option<Value>, Trap> {
    match evaluate(m, prog, fuel, info, args)? {
        ProcResult::Defined(v) => Ok(v),
        ProcResult::Undefined => {
            let (r, index) = info.result;
            Err(info.trap(m, r, index, TrapKind::Unreachable))
        }
    }
}

/// The state of a body instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    /// Undefined.
    Undefined,
    /// Defined with the empty value (`event`, `cue`, `next`, `case`).
    Void,
    /// Defined with a value.
    Value(Value),
}

type Res<T> = Result<T, TrapKind>;

fn malformed(what: impl Into<String>) -> TrapKind {
    TrapKind::Malformed(what.into())
}

/// One evaluation of a proc.
struct Eval<'a> {
    m: &'a Module,
    prog: &'a Program,
    info: &'a ProcInfo,
    /// Per register slot, its state.
    states: Vec<State>,
    /// Per body position, whether that event was cued in the current iteration.
    cued: Vec<bool>,
    /// Whether anything was cued in the current iteration.
    any_cued: bool,
    /// The assignments of the current iteration's `next`s: slot of the `var`, value.
    pending: Vec<(usize, Value)>,
}

/// Evaluates proc `info` with `args` until it ends.
fn evaluate(
    m: &Module,
    prog: &Program,
    fuel: &mut Option<u64>,
    info: &ProcInfo,
    args: &[Value],
) -> Result<ProcResult, Trap> {
    if args.len() != info.nparams {
        let (r, index) = info.result;
        return Err(info.trap(
            m,
            r,
            index,
            malformed("argument count does not match the proc's parameters"),
        ));
    }
    let n = info.body.len();
    let mut states = Vec::with_capacity(info.nslots());
    states.extend(args.iter().cloned().map(State::Value));
    states.resize(info.nslots(), State::Undefined);
    let mut ev = Eval {
        m,
        prog,
        info,
        states,
        cued: vec![false; n],
        any_cued: false,
        pending: Vec::new(),
    };
    // Iteration 0: everything.
    for t in 0..n {
        ev.execute(fuel, t)?;
    }
    let mut updated = vec![false; n];
    while ev.any_cued {
        for (slot, v) in std::mem::take(&mut ev.pending) {
            ev.states[slot] = State::Value(v);
        }
        for &t in &info.dynamic {
            let b = &info.body[t];
            updated[t] =
                (b.op == Opcode::EVENT && ev.cued[t]) || b.deps.iter().any(|&d| updated[d]);
        }
        ev.cued.fill(false);
        ev.any_cued = false;
        for &t in &info.dynamic {
            if updated[t] {
                ev.execute(fuel, t)?;
            }
        }
    }
    let (r, index) = info.result;
    match info.result_value {
        None => Ok(ProcResult::Defined(None)),
        Some(v) => match ev.read(v) {
            Ok(State::Value(x)) => Ok(ProcResult::Defined(Some(x))),
            Ok(State::Undefined) => Ok(ProcResult::Undefined),
            Ok(State::Void) => Err(info.trap(m, r, index, malformed("result of no value"))),
            Err(k) => Err(info.trap(m, r, index, k)),
        },
    }
}

impl Eval<'_> {
    /// Executes the body instruction at position `t`, after taking one unit of fuel.
    fn execute(&mut self, fuel: &mut Option<u64>, t: usize) -> Result<(), Trap> {
        let info = self.info;
        let b = &info.body[t];
        if let Some(f) = fuel {
            if *f == 0 {
                return Err(info.trap(self.m, b.inst, b.index, TrapKind::FuelExhausted));
            }
            *f -= 1;
        }
        let state = self
            .state_after(b)
            .map_err(|k| info.trap(self.m, b.inst, b.index, k))?;
        self.states[info.nparams + t] = state;
        Ok(())
    }

    /// The state `b` takes when it executes, with its effects (cues, pending assignments).
    fn state_after(&mut self, b: &BodyInst) -> Res<State> {
        for &w in &b.when {
            if !self.defined(w)? {
                return Ok(State::Undefined);
            }
        }
        for &u in &b.unless {
            if self.defined(u)? {
                return Ok(State::Undefined);
            }
        }
        let ops = self.m.operands(b.inst);
        let operand = |k: usize| {
            ops.get(k)
                .copied()
                .ok_or_else(|| malformed(format!("{}: missing operand {k}", b.op)))
        };
        let cannot = || malformed(format!("{} cannot appear in a proc", b.op));
        let op = b.op.known().ok_or_else(cannot)?;
        // Every opcode of the registry has an arm: a new one fails to compile here until it is
        // evaluated or listed with those a proc's body cannot hold.
        Ok(match op {
            Op::Event => State::Void,
            Op::Cue => match self.read(operand(0)?)? {
                State::Undefined => State::Undefined,
                _ => {
                    if let Some(e) = b.target {
                        self.cued[e] = true;
                        self.any_cued = true;
                    }
                    State::Void
                }
            },
            Op::Var => self.value(operand(0)?)?,
            Op::Next => match self.value(operand(1)?)? {
                State::Value(v) => {
                    if let Some(var) = b.target {
                        self.pending.push((self.info.nparams + var, v));
                    }
                    State::Void
                }
                _ => State::Undefined,
            },
            Op::Case => match self.value(operand(0)?)? {
                State::Value(x) => {
                    let mut hit = false;
                    for &c in ops.get(1..).unwrap_or(&[]) {
                        hit |= matches!(self.read(c)?, State::Value(y) if y == x);
                    }
                    if hit { State::Void } else { State::Undefined }
                }
                _ => State::Undefined,
            },
            Op::Phi => {
                let mut only = None;
                let mut count = 0usize;
                for &v in ops {
                    if let State::Value(x) = self.value(v)? {
                        count += 1;
                        only = Some(x);
                    }
                }
                match only {
                    Some(x) if count == 1 => State::Value(x),
                    _ => State::Undefined,
                }
            }
            Op::Coalesce => {
                let mut first = State::Undefined;
                for &v in ops {
                    if let s @ State::Value(_) = self.value(v)? {
                        first = s;
                        break;
                    }
                }
                first
            }
            irkit_core::op_pure!() => {
                for &v in read_operands(self.m, b.inst) {
                    if !self.defined(v)? {
                        return Ok(State::Undefined);
                    }
                }
                State::Value(pure::eval(
                    self.m,
                    &self.prog.layouts,
                    b.inst,
                    |v| match self.value(v)? {
                        State::Value(x) => Ok(x),
                        _ => Err(malformed(format!("{v} read while undefined"))),
                    },
                )?)
            }
            // `proc` and `result` frame the body (the evaluator reads them, they do not
            // execute); effects and control have no place in a proc.
            Op::Proc
            | Op::Result
            | irkit_core::op_memory!()
            | irkit_core::op_linear_memory!()
            | irkit_core::op_calls!()
            | irkit_core::op_terminators!()
            | irkit_core::op_objects!()
            | irkit_core::op_existentials!()
            | irkit_core::op_outside_bodies!() => return Err(cannot()),
        })
    }

    /// The state of operand `v`: a parameter or body instruction's, or a constant's (always
    /// defined).
    fn read(&self, v: Inst) -> Res<State> {
        match self.prog.src(v) {
            Src::Local(s) => self
                .states
                .get(s as usize)
                .cloned()
                .ok_or_else(|| malformed(format!("{v} is not a value of this proc"))),
            Src::Const(i) => Ok(State::Value(self.prog.consts[i as usize].clone())),
            Src::TooLarge => Err(TrapKind::OutOfMemory),
            Src::None => Err(malformed(format!("{v} is not a value"))),
        }
    }

    /// The state of operand `v`, read as a value: an error if it is defined without a value.
    fn value(&self, v: Inst) -> Res<State> {
        match self.read(v)? {
            State::Void => Err(malformed(format!("{v} has no value and is read as one"))),
            s => Ok(s),
        }
    }

    /// Whether operand `v` is defined (a passive dependency, or an operand read).
    fn defined(&self, v: Inst) -> Res<bool> {
        match self.prog.src(v) {
            Src::Local(s) => self
                .states
                .get(s as usize)
                .map(|s| *s != State::Undefined)
                .ok_or_else(|| malformed(format!("{v} is not a value of this proc"))),
            Src::Const(_) | Src::TooLarge => Ok(true),
            Src::None => Err(malformed(format!("{v} is not a value"))),
        }
    }
}
