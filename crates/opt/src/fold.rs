//! Folding what inlining made constant (spec/linking.md, "Optimization passes"): a `select` on
//! a constant condition (or between one value twice) is that value; a `br` on a constant
//! condition is a `jump` along the edge it takes; then blocks the entry no longer reaches are
//! removed (nothing they define is used elsewhere: a value is used only where its definition
//! dominates, and no reachable block is dominated by an unreachable one).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{CoreError, Inst, Module, Opcode, Payload};

/// What [`fold_constants`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    /// `select`s replaced by one of their values.
    pub selects: u64,
    /// `br`s turned into `jump`s.
    pub branches: u64,
    /// Blocks removed because the entry no longer reached them.
    pub blocks: u64,
}

/// The value of `v` if it is a constant `i1`.
fn const_bool(m: &Module, v: Inst) -> Option<bool> {
    (m.opcode(v) == Opcode::CONST_INT)
        .then(|| m.payload(v).as_int())
        .flatten()
        .map(|b| b & 1 == 1)
}

/// Folds the constant `select`s and `br`s of every function of `m` and removes the blocks that
/// became unreachable. `m` must verify; it still does afterwards.
pub fn fold_constants(m: &mut Module) -> Result<Folded, CoreError> {
    let mut done = Folded::default();
    let funcs = crate::rewrite::functions(m);
    for &f in &funcs {
        let mut subst: HashMap<Inst, Inst> = HashMap::default();
        for b in m.blocks(f).collect::<Vec<_>>() {
            for i in m.children(b).to_vec() {
                match m.opcode(i) {
                    Opcode::SELECT => {
                        let ops = m.operands(i);
                        let (Some(&c), Some(&x), Some(&y)) = (ops.first(), ops.get(1), ops.get(2))
                        else {
                            continue;
                        };
                        let pick = if x == y {
                            Some(x)
                        } else {
                            const_bool(m, c).map(|t| if t { x } else { y })
                        };
                        if let Some(v) = pick {
                            subst.insert(i, v);
                        }
                    }
                    Opcode::BR => {
                        let Some(&c) = m.operands(i).first() else {
                            continue;
                        };
                        let Some(taken) = const_bool(m, c) else {
                            continue;
                        };
                        let (_, edges) = irkit_core::edges::edges_of(m, i);
                        let Some(e) = edges.get(usize::from(!taken)) else {
                            continue;
                        };
                        let ops = m.operands(i)[e.at..e.args.end].to_vec();
                        let jump = m.new_inst(Opcode::JUMP, None, ops, Payload::None)?;
                        crate::rewrite::move_decorations(m, i, jump)?;
                        m.remove(i)?;
                        m.append_child(b, jump)?;
                        done.branches += 1;
                    }
                    _ => {}
                }
            }
        }
        // A select is a local value: its uses are in `f` alone.
        crate::rewrite::replace_local_uses(m, f, &subst)?;
        let selects: Vec<Inst> = subst.keys().copied().collect();
        m.remove_all(&selects)?;
        done.selects += subst.len() as u64;
        done.blocks += remove_unreachable(m, f)?;
    }
    Ok(done)
}

/// Removes the blocks of `f` its entry block does not reach; returns how many.
fn remove_unreachable(m: &mut Module, f: Inst) -> Result<u64, CoreError> {
    let Some(entry) = m.entry_block(f) else {
        return Ok(0);
    };
    let mut seen: HashSet<Inst> = [entry].into_iter().collect();
    let mut work = vec![entry];
    while let Some(b) = work.pop() {
        let Some(&term) = m.children(b).last() else {
            continue;
        };
        for s in irkit_core::edges::successors(m, term) {
            if seen.insert(s) {
                work.push(s);
            }
        }
    }
    let dead: Vec<Inst> = m.blocks(f).filter(|b| !seen.contains(b)).collect();
    m.remove_all(&dead)?;
    Ok(dead.len() as u64)
}
