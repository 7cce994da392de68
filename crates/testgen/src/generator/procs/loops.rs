//! Loops of generated procs: each event drives a counter loop, which is what makes every
//! generated proc end.
//!
//! ## Why every generated proc ends
//!
//! Each event `%E` drives a counter loop:
//!
//! ```text
//! %c  = var %init            ; small and non-negative; %init never depends on %E
//! %t  = %E ? icmp ne %c, 0   ; or ugt, or `eq` with `case %t, false`, …
//! %k  = case %t, i1 true     ; or directly `%E ? case %c, 1, 3`: non-zero values only
//! %c1 = %k ? isub %c, 1
//! %k ? next %c, %c1
//! %k, … ? cue %E             ; every cue of %E names %k in a `when`
//! ```
//!
//! 1. The counter var (its `%init` and its passive dependencies) never depends on `%E` or on
//!    a later event: only a cue of an *earlier* event re-initializes it.
//! 2. `%k` is defined only when `%c ≠ 0`; `%c1` and the counter's `next` execute exactly when
//!    `%k` does (`%c1` depends on `%k` and `%c` only; the `next`'s other passive dependency,
//!    if any, is `%E`, `%t`, `%c` or a parameter: defined whenever `%k` is, and re-executed
//!    only with it), so each execution leaving `%k` defined makes `%c` one smaller for the
//!    next iteration, and between two re-initializations there are at most `%init` of them.
//! 3. A cue of `%E` needs `%k` defined, and after `%E` is cued, `%k` executes again: cues of
//!    `%E` in different iterations match distinct executions leaving `%k` defined. So `%E`
//!    is cued at most `%init + 1` times per initialization of its counter.
//!
//! By induction over the events in creation order, every event is cued finitely often, and
//! an iteration only runs after a cue: the proc ends. (A cue of `%E` may also run again
//! because of another event, with a `%k` left defined, as when an outer loop's cue waits
//! `unless` its inner loop's case: point 3 covers it.) An inner loop's `%init` usually depends
//! on the outer loop, so that each outer iteration re-initializes the inner counter; the
//! outer counter never depends on the inner event. `tests/procs.rs` runs generated procs
//! through an evaluator written from the spec and checks that they end.

use irkit_core::{Inst, Opcode, Payload};

use super::{Build, Deps};
use crate::generator::Gen;
use crate::ty::{INTS, Ty};

/// Loop tests on a counter `%c`: `(cc, counter first, case value)`. Each holds with the case
/// value exactly when `%c ≠ 0`: `icmp ne %c, 0` is true, `icmp eq %c, 0` false, and so on.
const COUNTER_TESTS: [(u64, bool, bool); 7] = [
    (6, true, true),   // ne %c, 0
    (6, false, true),  // ne 0, %c
    (2, true, true),   // ugt %c, 0
    (4, false, true),  // ult 0, %c
    (1, true, false),  // eq %c, 0
    (5, true, false),  // ule %c, 0
    (3, false, false), // uge 0, %c
];

/// The counter loop of one event.
#[derive(Clone)]
struct Loop {
    event: Inst,
    /// `%t`, when the loop tests its counter with an `icmp`.
    test: Option<Inst>,
    /// `%k`, the `case` every cue of the event depends on.
    guard: Inst,
    counter: Inst,
}

impl Gen<'_, '_> {
    /// No loop, one, two in sequence, or two nested.
    pub(super) fn p_loops(&mut self, b: &mut Build) {
        match self.e.below(4) {
            0 => {}
            1 => {
                let l = self.p_loop(b, None);
                self.p_loop_body(b, &l);
                self.p_cues(b, &l, None);
            }
            2 => {
                for _ in 0..2 {
                    let l = self.p_loop(b, None);
                    self.p_loop_body(b, &l);
                    self.p_cues(b, &l, None);
                    for _ in 0..self.e.range(0, 2) {
                        self.p_op(b, None);
                    }
                }
            }
            _ => {
                let outer = self.p_loop(b, None);
                self.p_loop_body(b, &outer);
                let inner = self.p_loop(b, Some(&outer));
                self.p_loop_body(b, &inner);
                self.p_cues(b, &inner, None);
                if self.e.chance(50) {
                    self.p_loop_body(b, &outer);
                }
                self.p_cues(b, &outer, Some(&inner));
            }
        }
    }

    /// An event and its counter loop (see the module doc); `outer`: the loop it is nested in,
    /// which re-initializes the counter (usually).
    fn p_loop(&mut self, b: &mut Build, outer: Option<&Loop>) -> Loop {
        // The event, maybe itself passively dependent on what exists (the outer loop's case:
        // an inner loop that only runs inside the outer one).
        let mut deps = Deps::default();
        if self.e.chance(15) {
            deps = self.p_random_deps(b, 0);
            if let Some(o) = outer
                && self.e.chance(50)
            {
                deps.require(o.guard);
            }
        }
        let event = self.p_emit(b, Opcode::EVENT, None, Vec::new(), Payload::None, deps);
        let forbid = 1u32 << (b.n_events - 1);
        // The counter: small, non-negative, independent of this event.
        let t = if self.e.chance(10) {
            Ty::I1
        } else {
            INTS[1 + self.e.below(4)].clone()
        };
        let init = self.p_counter_init(b, &t, forbid, outer);
        let deps = if self.e.chance(10) {
            self.p_random_deps(b, forbid)
        } else {
            Deps::default()
        };
        let counter = self.p_emit(b, Opcode::VAR, Some(&t), vec![init], Payload::None, deps);
        // The test and the case.
        let extra = |g: &mut Self, b: &Build| {
            if g.e.chance(15) {
                g.p_random_deps(b, 0)
            } else {
                Deps::default()
            }
        };
        let zero = self.int_const(&t, 0);
        let (test, guard) = if self.e.chance(70) {
            let (cc, counter_first, holds) = COUNTER_TESTS[self.e.below(COUNTER_TESTS.len())];
            let ops = if counter_first {
                vec![counter, zero]
            } else {
                vec![zero, counter]
            };
            let mut deps = extra(self, b);
            deps.require(event);
            let test = self.p_emit(b, Opcode::ICMP, Some(&Ty::I1), ops, Payload::Int(cc), deps);
            let c = self.int_const(&Ty::I1, u64::from(holds));
            let deps = extra(self, b);
            let guard = self.p_emit(b, Opcode::CASE, None, vec![test, c], Payload::None, deps);
            (Some(test), guard)
        } else {
            let mut ops = vec![counter];
            let max = if t == Ty::I1 { 1 } else { 3 };
            for _ in 0..self.e.range(1, max) {
                let v = self.e.range(1, 7) as u64;
                let c = self.int_const(&t, v);
                if !ops[1..].contains(&c) {
                    ops.push(c);
                }
            }
            let mut deps = extra(self, b);
            deps.require(event);
            let guard = self.p_emit(b, Opcode::CASE, None, ops, Payload::None, deps);
            (None, guard)
        };
        // The decrement, executed exactly when the case is.
        let dec = if self.e.chance(70) {
            let one = self.int_const(&t, 1);
            (Opcode::ISUB, vec![counter, one])
        } else {
            let minus_one = self.int_const(&t, u64::MAX);
            (Opcode::IADD, vec![counter, minus_one])
        };
        let c1 = self.p_emit(b, dec.0, Some(&t), dec.1, Payload::None, Deps::only(guard));
        // Its `next`: besides the case, only dependencies defined whenever the case is.
        let mut deps = Deps::only(guard);
        if self.e.chance(20) {
            let mut safe = vec![event, counter];
            safe.extend(test);
            safe.extend(b.params.iter().copied());
            if let Some(&s) = self.e.pick(&safe) {
                deps.when.push(s);
            }
        }
        self.p_emit(
            b,
            Opcode::NEXT,
            None,
            vec![counter, c1],
            Payload::None,
            deps,
        );
        Loop {
            event,
            test,
            guard,
            counter,
        }
    }

    /// The initial value of a counter of type `t`: a small non-negative value whose events
    /// avoid `forbid`; inside `outer`, usually recomputed in each of its iterations.
    fn p_counter_init(&mut self, b: &mut Build, t: &Ty, forbid: u32, outer: Option<&Loop>) -> Inst {
        let w = t.int_width().unwrap_or(64);
        let max = self.cfg.max_loop_trips.clamp(1, 7) as u64;
        let small = |g: &mut Self| g.e.below(max as usize + 1) as u64;
        let form = self.e.below(6);
        if form == 0 && (outer.is_none() || self.e.chance(20)) {
            let v = small(self);
            return self.int_const(t, v);
        }
        let mut deps = if self.e.chance(10) {
            self.p_random_deps(b, forbid)
        } else {
            Deps::default()
        };
        if let Some(o) = outer
            && self.e.chance(75)
        {
            let mut from = vec![o.event, o.guard, o.counter];
            from.extend(o.test);
            let g = *self.e.pick(&from).unwrap_or(&o.guard);
            deps.require(g);
        }
        let (op, ops) = match form {
            1 | 2 => {
                let v = self.p_value(b, t, forbid);
                let mask = small(self);
                let m = self.int_const(t, mask);
                (Opcode::AND, vec![v, m])
            }
            3 => {
                let v = self.p_value(b, t, forbid);
                let d = small(self) + 1;
                let d = self.int_const(t, d);
                (Opcode::UREM, vec![v, d])
            }
            4 if w >= 8 => {
                let v = self.p_value(b, t, forbid);
                let s = self.int_const(t, u64::from(w - 3));
                (Opcode::LSHR, vec![v, s])
            }
            4 => {
                let c = self.p_value(b, &Ty::I1, forbid);
                let (x, y) = (small(self), small(self));
                let (x, y) = (self.int_const(t, x), self.int_const(t, y));
                (Opcode::SELECT, vec![c, x, y])
            }
            _ => {
                let v = small(self);
                let v = self.int_const(t, v);
                (Opcode::COALESCE, vec![v])
            }
        };
        self.p_emit(b, op, Some(t), ops, Payload::None, deps)
    }

    /// A loop's body: random instructions, often under its case, and accumulators.
    fn p_loop_body(&mut self, b: &mut Build, l: &Loop) {
        let max = self.cfg.max_insts_per_block.max(1);
        for _ in 0..self.e.range(1, max) {
            if self.e.chance(30) {
                let t = self.p_int_ty(b);
                let init = self.p_value(b, &t, 0);
                let var = self.p_emit(
                    b,
                    Opcode::VAR,
                    Some(&t),
                    vec![init],
                    Payload::None,
                    Deps::default(),
                );
                b.accs.push((var, t.clone(), false));
                if self.e.chance(80) {
                    self.p_acc_next(b, var, &t, Some(l.guard));
                }
            } else {
                self.p_op(b, Some(l.guard));
            }
        }
    }

    /// 1–2 cues of the loop's event, each under its case; an outer loop's cue often waits
    /// until the `inner` loop is done (`unless` its case).
    fn p_cues(&mut self, b: &mut Build, l: &Loop, inner: Option<&Loop>) {
        let n = if self.e.chance(25) { 2 } else { 1 };
        for _ in 0..n {
            let mut deps = if self.e.chance(30) {
                self.p_random_deps(b, 0)
            } else {
                Deps::default()
            };
            deps.require(l.guard);
            if let Some(i) = inner
                && self.e.chance(60)
            {
                deps.unless.retain(|&v| v != i.guard);
                deps.unless.insert(0, i.guard);
                deps.unless.truncate(2);
            }
            self.p_emit(b, Opcode::CUE, None, vec![l.event], Payload::None, deps);
        }
    }
}
