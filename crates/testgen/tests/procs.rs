//! Generated NOIR procs end, and their results are deterministic: every proc of a few hundred
//! generated proc modules (and of modules from `module`) runs, on each suggested argument
//! tuple, through a small evaluator written from spec/ir.md ("NOIR: procs without blocks")
//! within a bounded number of iterations (`IRKIT_PROC_SEEDS` sets how many seeds, 300 by
//! default). The evaluator is a test oracle for the generator
//! only; the reference one is the interpreter's.

use std::collections::{HashMap, HashSet};

use irkit_core::noir::{ProcGraph, passive_deps, procs};
use irkit_core::payload::mask_to_width;
use irkit_core::{FloatCC, Inst, IntCC, Module, Opcode, Payload};
use irkit_testgen::{Config, Entropy, ProcModule, module, proc_module};

/// How a call of a proc ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Value(u64),
    Trap(&'static str),
}

/// How many seeds each test runs (`IRKIT_PROC_SEEDS` to change it).
fn seeds() -> u64 {
    std::env::var("IRKIT_PROC_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
}

/// Iterations after which a proc counts as not ending (generated counters start at 7 at
/// most, and loops nest two deep).
const MAX_ITERATIONS: usize = 1000;

struct Eval<'m> {
    m: &'m Module,
    g: ProcGraph,
    args: &'m [u64],
    /// Per body instruction (by position in `g.order`): `None` while undefined.
    st: Vec<Option<u64>>,
    cued: HashSet<usize>,
    pending: HashMap<usize, u64>,
}

fn width(m: &Module, v: Inst) -> u32 {
    m.ty(v).and_then(|t| m.int_width(t)).unwrap_or(64)
}

fn sext(v: u64, w: u32) -> i64 {
    let s = 64 - w;
    ((v << s) as i64) >> s
}

impl Eval<'_> {
    fn get(&self, v: Inst) -> Option<u64> {
        if let Some(t) = self.g.pos(v) {
            return self.st[t];
        }
        if let Some(k) = self.g.param_pos(v) {
            return Some(self.args[k]);
        }
        match self.m.payload(v) {
            Payload::Int(x) | Payload::Float(x) => Some(*x),
            _ => Some(0), // const_zero
        }
    }

    /// Executes body instruction `t`; `Err` is a trap.
    fn exec(&mut self, t: usize) -> Result<(), &'static str> {
        let (m, i) = (self.m, self.g.order[t]);
        let (when, unless) = passive_deps(m, i);
        if when.iter().any(|&d| self.get(d).is_none())
            || unless.iter().any(|&d| self.get(d).is_some())
        {
            self.st[t] = None;
            return Ok(());
        }
        let ops = m.operands(i);
        let vals: Vec<Option<u64>> = ops.iter().map(|&v| self.get(v)).collect();
        let op = m.opcode(i);
        self.st[t] = match op {
            Opcode::EVENT => Some(0),
            Opcode::CUE => vals[0].map(|_| {
                self.cued
                    .insert(self.g.pos(ops[0]).expect("a proc's event"));
                0
            }),
            Opcode::VAR => vals[0],
            Opcode::NEXT => vals[1].map(|x| {
                self.pending
                    .insert(self.g.pos(ops[0]).expect("a proc's var"), x);
                0
            }),
            Opcode::CASE => vals[0].filter(|x| vals[1..].contains(&Some(*x))).map(|_| 0),
            Opcode::PHI => {
                let defined: Vec<u64> = vals.iter().flatten().copied().collect();
                (defined.len() == 1).then(|| defined[0])
            }
            Opcode::COALESCE => vals.iter().flatten().next().copied(),
            _ => {
                let Some(xs) = vals.into_iter().collect::<Option<Vec<u64>>>() else {
                    self.st[t] = None;
                    return Ok(());
                };
                Some(pure(m, i, op, &xs)?)
            }
        };
        Ok(())
    }

    fn run(m: &Module, p: Inst, args: &[u64]) -> Result<(Outcome, usize), String> {
        let g = ProcGraph::new(m, p).map_err(|e| e.message)?;
        let n = g.order.len();
        let mut ev = Eval {
            m,
            g,
            args,
            st: vec![None; n],
            cued: HashSet::new(),
            pending: HashMap::new(),
        };
        let mut updated = vec![true; n];
        let mut iterations = 0;
        loop {
            for (t, _) in updated.iter().enumerate().filter(|(_, u)| **u) {
                if let Err(trap) = ev.exec(t) {
                    return Ok((Outcome::Trap(trap), iterations));
                }
            }
            if ev.cued.is_empty() {
                break;
            }
            iterations += 1;
            if iterations > MAX_ITERATIONS {
                return Err(format!("no end after {MAX_ITERATIONS} iterations"));
            }
            for (v, x) in ev.pending.drain() {
                ev.st[v] = Some(x);
            }
            let cued = std::mem::take(&mut ev.cued);
            for t in 0..n {
                updated[t] = cued.contains(&t) || ev.g.deps[t].iter().any(|&d| updated[d]);
            }
        }
        let r = ev.g.result.expect("a proc has a result");
        let out = match m.operands(r).first() {
            Some(&v) => match ev.get(v) {
                Some(x) => Outcome::Value(x),
                None => Outcome::Trap("unreachable executed"),
            },
            None => Outcome::Value(0),
        };
        Ok((out, iterations))
    }
}

/// A pure core operation on defined operands.
fn pure(m: &Module, i: Inst, op: Opcode, xs: &[u64]) -> Result<u64, &'static str> {
    let ops = m.operands(i);
    let w = width(m, i);
    let sw = ops.first().map_or(64, |&v| width(m, v));
    let f = |k: usize| f64::from_bits(xs[k]);
    let shift = |k: usize| (xs[k] & u64::from(w - 1)) as u32;
    let min = 1u64 << (sw - 1);
    let all = mask_to_width(u64::MAX, sw);
    let r = match op {
        Opcode::IADD => xs[0].wrapping_add(xs[1]),
        Opcode::ISUB => xs[0].wrapping_sub(xs[1]),
        Opcode::IMUL => xs[0].wrapping_mul(xs[1]),
        Opcode::AND => xs[0] & xs[1],
        Opcode::OR => xs[0] | xs[1],
        Opcode::XOR => xs[0] ^ xs[1],
        Opcode::SHL => xs[0] << shift(1),
        Opcode::LSHR => xs[0] >> shift(1),
        Opcode::ASHR => (sext(xs[0], w) >> shift(1)) as u64,
        Opcode::ROTL | Opcode::ROTR => {
            // Rotate left by n (right by n is left by w - n), n the amount modulo the width.
            let x = mask_to_width(xs[0], w);
            let n = if op == Opcode::ROTL {
                shift(1)
            } else {
                (w - shift(1)) % w
            };
            if n == 0 { x } else { (x << n) | (x >> (w - n)) }
        }
        Opcode::SDIV | Opcode::UDIV | Opcode::SREM | Opcode::UREM => {
            if xs[1] == 0 {
                return Err("integer division by zero");
            }
            let signed = matches!(op, Opcode::SDIV | Opcode::SREM);
            if signed && xs[0] == min && xs[1] == all {
                return Err("integer overflow");
            }
            let (a, b) = (sext(xs[0], w), sext(xs[1], w));
            match op {
                Opcode::SDIV => a.wrapping_div(b) as u64,
                Opcode::SREM => a.wrapping_rem(b) as u64,
                Opcode::UDIV => xs[0] / xs[1],
                _ => xs[0] % xs[1],
            }
        }
        Opcode::ICMP => {
            let cc = IntCC::from_code(m.payload(i).as_int().unwrap_or(0)).expect("int cc");
            u64::from(cc.eval(sw, xs[0], xs[1]))
        }
        Opcode::FCMP => {
            let cc = FloatCC::from_code(m.payload(i).as_int().unwrap_or(0)).expect("float cc");
            u64::from(cc.eval(f(0), f(1)))
        }
        Opcode::SELECT => {
            if xs[0] & 1 == 1 {
                xs[1]
            } else {
                xs[2]
            }
        }
        Opcode::TRUNC | Opcode::ZEXT | Opcode::BITCAST => xs[0],
        Opcode::SEXT => sext(xs[0], sw) as u64,
        Opcode::SITOFP => (sext(xs[0], sw) as f64).to_bits(),
        Opcode::UITOFP => (xs[0] as f64).to_bits(),
        Opcode::FADD => (f(0) + f(1)).to_bits(),
        Opcode::FSUB => (f(0) - f(1)).to_bits(),
        Opcode::FMUL => (f(0) * f(1)).to_bits(),
        Opcode::FDIV => (f(0) / f(1)).to_bits(),
        Opcode::FPTOSI => {
            let lo = -(1i128 << (w - 1));
            let hi = (1i128 << (w - 1)) - 1;
            (f(0) as i128).clamp(lo, hi) as u64
        }
        Opcode::FPTOUI => (f(0) as u128).min((1u128 << w) - 1) as u64,
        _ => panic!("the generator made `{op}` in a proc"),
    };
    if m.ty(i).and_then(|t| m.float_width(t)).is_some() {
        return Ok(r);
    }
    Ok(mask_to_width(r, w))
}

/// What running many generated procs gave.
#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    values: usize,
    undefined: usize,
    other_traps: usize,
    looped: usize,
    max_iterations: usize,
}

impl Tally {
    fn run(&mut self, m: &Module, p: Inst, args: &[u64], what: &str) {
        let first = Eval::run(m, p, args);
        let (out, iterations) = match &first {
            Ok(r) => r.clone(),
            Err(e) => panic!("{what}: {e}, args {args:?}\n{}", irkit_text::print(m)),
        };
        assert_eq!(Eval::run(m, p, args), first, "{what}: two runs differ");
        self.runs += 1;
        match out {
            Outcome::Value(_) => self.values += 1,
            Outcome::Trap("unreachable executed") => self.undefined += 1,
            Outcome::Trap(_) => self.other_traps += 1,
        }
        self.looped += usize::from(iterations > 1);
        self.max_iterations = self.max_iterations.max(iterations);
    }
}

fn run_proc_module(pm: &ProcModule, tally: &mut Tally, what: &str) {
    for case in &pm.procs {
        let p = pm
            .module
            .find_export(&case.name)
            .expect("procs are exported");
        for args in &case.args {
            tally.run(&pm.module, p, args, what);
        }
    }
}

#[test]
fn generated_procs_end() {
    let mut tally = Tally::default();
    for seed in 0..seeds() {
        let pm = proc_module(&mut Entropy::from_seed(seed), &Config::default());
        run_proc_module(&pm, &mut tally, &format!("seed {seed}"));
    }
    // The generator makes procs worth running: most return a value, many loop.
    eprintln!("{tally:?}");
    assert!(tally.values * 2 > tally.runs, "{tally:?}");
    assert!(tally.looped * 5 > tally.runs, "{tally:?}");
    assert!(tally.other_traps * 10 < tally.runs, "{tally:?}");
}

#[test]
fn byte_driven_procs_end() {
    let mut e = Entropy::from_seed(3);
    let mut tally = Tally::default();
    for len in 0..seeds() * 2 / 3 {
        let bytes: Vec<u8> = (0..len * 3).map(|_| e.byte()).collect();
        let pm = proc_module(&mut Entropy::new(&bytes), &Config::default());
        run_proc_module(&pm, &mut tally, &format!("{bytes:?}"));
    }
}

#[test]
fn procs_of_modules_end() {
    let mut tally = Tally::default();
    for seed in 0..seeds() * 2 / 3 {
        let m = module(&mut Entropy::from_seed(seed), &Config::default());
        for p in procs(&m) {
            let args: Vec<u64> = m
                .children(p)
                .iter()
                .take_while(|&&c| m.opcode(c) == Opcode::PARAM)
                .map(|&q| mask_to_width(seed.wrapping_mul(0x9E37_79B9), width(&m, q)))
                .collect();
            tally.run(&m, p, &args, &format!("module seed {seed}"));
        }
    }
    assert!(tally.runs > 50, "{tally:?}");
}
