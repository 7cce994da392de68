//! The generator's coverage table (`irkit_testgen::coverage`) says what random modules hold:
//! every opcode it marks generated appears in the modules of a few hundred seeds (single
//! modules, module sets, proc modules and programs with classes), and every opcode that appears is marked generated.

use std::collections::BTreeSet;

use irkit_core::{Inst, Module, Op};
use irkit_testgen::coverage::{Coverage, coverage};
use irkit_testgen::{Config, Entropy, module, module_set, object_program, proc_module};

/// Seeds per kind of module: enough that every generated opcode shows up (the rarest need
/// a few dozen).
const SEEDS: u64 = 300;

/// Adds the opcode of every instruction of `m` (the tree, the hoisted pool, and everything
/// they refer to) to `out`.
fn collect(m: &Module, out: &mut BTreeSet<Op>) {
    let mut work: Vec<Inst> = m.walk();
    work.extend(m.pool().iter().copied());
    let mut seen = BTreeSet::new();
    while let Some(i) = work.pop() {
        if !seen.insert(i) {
            continue;
        }
        if let Some(op) = m.opcode(i).known() {
            out.insert(op);
        }
        work.extend(m.operands(i).iter().copied());
        work.extend(m.ty(i));
    }
}

#[test]
fn the_coverage_table_matches_what_is_generated() {
    let cfg = Config::default();
    let mut seen = BTreeSet::new();
    for seed in 0..SEEDS {
        collect(&module(&mut Entropy::from_seed(seed), &cfg), &mut seen);
        for (_, m) in &module_set(&mut Entropy::from_seed(seed), &cfg).modules {
            collect(m, &mut seen);
        }
        collect(
            &proc_module(&mut Entropy::from_seed(seed), &cfg).module,
            &mut seen,
        );
        for (_, m) in &object_program(&mut Entropy::from_seed(seed), &cfg)
            .set
            .modules
        {
            collect(m, &mut seen);
        }
    }
    for &op in Op::ALL {
        match coverage(op) {
            Coverage::Generated => assert!(
                seen.contains(&op),
                "`{op}` is marked generated but {SEEDS} seeds never produce it"
            ),
            Coverage::NotGenerated(why) => assert!(
                !seen.contains(&op),
                "`{op}` is marked not generated ({why}) but appears"
            ),
        }
    }
}
