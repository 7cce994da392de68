//! Unit tests of the proc analysis: order, cycles, dynamic instructions, `next` merging.

use super::*;
use crate::verify::verify;

/// Builds `@p: fn(i32) -> i32 = proc { … }` with the given body; returns (module, proc, param).
struct P {
    m: Module,
    p: Inst,
    n: Inst,
    i32t: Inst,
}

impl P {
    fn new() -> P {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let sig = m.ty_fn(i32t, &[i32t]).unwrap();
        let p = m
            .new_inst(Opcode::PROC, Some(sig), vec![], Payload::None)
            .unwrap();
        let root = m.root();
        m.append_child(root, p).unwrap();
        m.set_name(p, "p").unwrap();
        let n = m
            .new_inst(Opcode::PARAM, Some(i32t), vec![], Payload::None)
            .unwrap();
        m.append_child(p, n).unwrap();
        m.set_name(n, "n").unwrap();
        P { m, p, n, i32t }
    }

    fn add(&mut self, name: &str, op: Opcode, ty: Option<Inst>, ops: Vec<Inst>) -> Inst {
        let i = self.m.new_inst(op, ty, ops, Payload::None).unwrap();
        self.m.append_child(self.p, i).unwrap();
        if !name.is_empty() {
            self.m.set_name(i, name).unwrap();
        }
        i
    }

    fn when(&mut self, i: Inst, deps: Vec<Inst>) {
        self.m
            .add_decoration(i, Opcode::WHEN, deps, Payload::None)
            .unwrap();
    }

    fn c(&mut self, v: u64) -> Inst {
        let t = self.i32t;
        self.m.const_int(t, v).unwrap()
    }

    fn result(&mut self, v: Inst) -> Inst {
        self.add("", Opcode::RESULT, None, vec![v])
    }
}

#[test]
fn order_follows_dependencies_not_child_order() {
    let mut p = P::new();
    let (n, t) = (p.n, p.i32t);
    // %b uses %a, but is written first.
    let b_slot = p.add("b", Opcode::IADD, Some(t), vec![n, n]);
    let a = p.add("a", Opcode::IADD, Some(t), vec![n, n]);
    p.m.set_operand(b_slot, 1, a).unwrap();
    p.result(b_slot);
    let g = ProcGraph::new(&p.m, p.p).unwrap();
    assert_eq!(g.order, vec![a, b_slot]);
    assert_eq!(g.deps[1], vec![0]);
    assert_eq!(g.params, vec![n]);
    assert!(g.dynamic.iter().all(|&d| !d));
    verify(&p.m).unwrap();
}

#[test]
fn a_cycle_is_named_instruction_by_instruction() {
    let mut p = P::new();
    let (n, t) = (p.n, p.i32t);
    let a = p.add("a", Opcode::IADD, Some(t), vec![n, n]);
    let b = p.add("b", Opcode::IADD, Some(t), vec![a, n]);
    p.m.set_operand(a, 1, b).unwrap();
    p.result(b);
    let e = ProcGraph::new(&p.m, p.p).unwrap_err();
    assert!(
        e.message == "dependency cycle: %a -> %b -> %a"
            || e.message == "dependency cycle: %b -> %a -> %b",
        "{}",
        e.message
    );
    let errs = verify(&p.m).unwrap_err();
    assert!(
        errs.iter()
            .any(|e| e.message.starts_with("dependency cycle")),
        "{errs:?}"
    );
}

#[test]
fn a_passive_cycle_is_a_cycle_too() {
    let mut p = P::new();
    let (n, t) = (p.n, p.i32t);
    let a = p.add("a", Opcode::IADD, Some(t), vec![n, n]);
    let b = p.add("b", Opcode::IADD, Some(t), vec![a, n]);
    p.when(a, vec![b]);
    p.result(b);
    assert!(ProcGraph::new(&p.m, p.p).is_err());
}

/// The seed's fibonacci, with %x0 as the result.
fn fib() -> (P, Inst, Inst, Inst) {
    let mut p = P::new();
    let (n, t) = (p.n, p.i32t);
    let i1 = p.m.ty_i1();
    let zero = p.c(0);
    let one = p.c(1);
    let tru = p.m.const_int(i1, 1).unwrap();
    let l = p.add("L", Opcode::EVENT, None, vec![]);
    let x0 = p.add("x0", Opcode::VAR, Some(t), vec![zero]);
    let x1 = p.add("x1", Opcode::VAR, Some(t), vec![one]);
    let i = p.add("i", Opcode::VAR, Some(t), vec![n]);
    let c2 =
        p.m.new_inst(Opcode::ICMP, Some(i1), vec![i, zero], Payload::Int(6))
            .unwrap();
    p.m.append_child(p.p, c2).unwrap();
    p.when(c2, vec![l]);
    let c3 = p.add("c3", Opcode::CASE, None, vec![c2, tru]);
    let s8 = p.add("s8", Opcode::IADD, Some(t), vec![x0, x1]);
    p.when(s8, vec![c3]);
    let s5 = p.add("s5", Opcode::ISUB, Some(t), vec![i, one]);
    p.when(s5, vec![c3]);
    for (var, v) in [(x0, x1), (x1, s8), (i, s5)] {
        let nx = p.add("", Opcode::NEXT, None, vec![var, v]);
        p.when(nx, vec![c3]);
    }
    let cue = p.add("", Opcode::CUE, None, vec![l]);
    p.when(cue, vec![c3]);
    p.result(x0);
    (p, l, x0, c3)
}

#[test]
fn the_seed_fibonacci_verifies_and_its_loop_is_dynamic() {
    let (p, l, _, _) = fib();
    verify(&p.m).unwrap();
    let g = ProcGraph::new(&p.m, p.p).unwrap();
    assert_eq!(g.order.len(), 12);
    let dynamic: Vec<String> = g
        .order
        .iter()
        .zip(&g.dynamic)
        .filter(|(_, d)| **d)
        .map(|(&i, _)| describe(&p.m, i))
        .collect();
    assert!(dynamic.contains(&"%L".to_owned()));
    assert!(dynamic.contains(&"%s8".to_owned()));
    // The vars' inits are constants and a parameter: they run in the first iteration only.
    for v in ["%x0", "%x1", "%i"] {
        assert!(!dynamic.contains(&v.to_owned()), "{v} {dynamic:?}");
    }
    assert_eq!(g.next_of.len(), 3);
    assert_eq!(g.pos(l), Some(0));
}

#[test]
fn two_nexts_of_one_var_are_refused_then_merged() {
    let (mut p, _, x0, c3) = fib();
    let n = p.n;
    let extra = p.add("", Opcode::NEXT, None, vec![x0, n]);
    // Move the `result` back to the end.
    let res =
        p.m.children(p.p)
            .iter()
            .copied()
            .find(|&c| p.m.opcode(c) == Opcode::RESULT)
            .unwrap();
    p.m.detach(res).unwrap();
    p.m.append_child(p.p, res).unwrap();
    p.m.add_decoration(extra, Opcode::UNLESS, vec![c3], Payload::None)
        .unwrap();
    let errs = verify(&p.m).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].message.contains("written by 2 `next`s"),
        "{}",
        errs[0]
    );
    assert_eq!(merge_nexts(&mut p.m, p.p).unwrap(), 1);
    verify(&p.m).unwrap();
    let g = ProcGraph::new(&p.m, p.p).unwrap();
    let nexts_of_x0: Vec<Inst> = g
        .order
        .iter()
        .copied()
        .filter(|&i| p.m.opcode(i) == Opcode::NEXT && p.m.operands(i)[0] == x0)
        .collect();
    assert_eq!(nexts_of_x0.len(), 1);
    // next %x0, coalesce(%w_extra, %w_first): the later `next` comes first.
    let merged = p.m.operands(nexts_of_x0[0])[1];
    assert_eq!(p.m.opcode(merged), Opcode::COALESCE);
    let ws = p.m.operands(merged).to_vec();
    assert_eq!(ws.len(), 2);
    assert_eq!(p.m.operands(ws[0]), &[n]);
    let (_, unless) = passive_deps(&p.m, ws[0]);
    assert_eq!(unless, vec![c3]);
    let (when, _) = passive_deps(&p.m, ws[1]);
    assert_eq!(when, vec![c3]);
    assert_eq!(merge_nexts(&mut p.m, p.p).unwrap(), 0);
}
