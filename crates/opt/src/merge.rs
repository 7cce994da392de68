//! Merging jump chains (spec/linking.md, "Optimization passes"): inlining leaves `jump ^a`
//! into a block `^a` that nothing else enters (the callee's entry block), and each `ret` of a
//! callee with one return becomes `jump ^cont` into a continuation nothing else enters.
//!
//! A block `B` is merged into block `A` when `A` ends with `jump ^B(args)`, that jump is the
//! only edge into `B` in the whole function, and `B` is not the entry block (nor `A` itself):
//! `B`'s parameters are replaced by the jump's arguments, and `B`'s instructions replace the
//! jump. The jump was `B`'s only way in, so `A` dominates `B` and every value stays defined
//! where it is used; the same instructions run in the same order, minus a jump. Chains merge
//! whole (`A → B → C` becomes one block), and the merged blocks are removed.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{CoreError, Inst, Module, Opcode};

/// What [`merge_jump_chains`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// Blocks merged into their only predecessor.
    pub blocks: u64,
}

/// Merges every block of every function of `m` into its only predecessor where that
/// predecessor ends in a plain `jump` to it. `m` must verify; it still does afterwards.
pub fn merge_jump_chains(m: &mut Module) -> Result<Merged, CoreError> {
    let mut done = Merged::default();
    for f in crate::rewrite::functions(m) {
        done.blocks += merge_in(m, f)?;
    }
    Ok(done)
}

/// Merges the chains of function `f`; returns how many blocks were merged.
fn merge_in(m: &mut Module, f: Inst) -> Result<u64, CoreError> {
    let Some(entry) = m.entry_block(f) else {
        return Ok(0);
    };
    let blocks: Vec<Inst> = m.blocks(f).collect();
    // Edges into each block, counted over every terminator of `f`.
    let mut into: HashMap<Inst, u32> = HashMap::default();
    for &b in &blocks {
        if let Some(&term) = m.children(b).last()
            && m.opcode(term).is_terminator()
        {
            for s in irkit_core::edges::successors(m, term) {
                *into.entry(s).or_default() += 1;
            }
        }
    }
    let mut subst: HashMap<Inst, Inst> = HashMap::default();
    let mut merged: Vec<Inst> = Vec::new();
    let mut gone: HashSet<Inst> = HashSet::default();
    for &a in &blocks {
        if gone.contains(&a) {
            continue;
        }
        // Follow the chain from `a` as long as its jump's target can be merged.
        while let Some(&jump) = m.children(a).last() {
            if m.opcode(jump) != Opcode::JUMP {
                break;
            }
            let Some(&b) = m.operands(jump).first() else {
                break;
            };
            if b == entry || b == a || into.get(&b) != Some(&1) || gone.contains(&b) {
                break;
            }
            let args: Vec<Inst> = m.operands(jump)[1..].to_vec();
            let params: Vec<Inst> = m.block_params(b).to_vec();
            if args.len() != params.len() {
                break;
            }
            for (&p, &v) in params.iter().zip(&args) {
                subst.insert(p, v);
            }
            // The jump's decorations (its source location) have nowhere to go: it disappears.
            m.remove(jump)?;
            let first = params.len();
            let at = m.children(a).len();
            m.move_children(b, first, a, at)?;
            for p in params {
                m.detach(p)?;
            }
            gone.insert(b);
            merged.push(b);
        }
    }
    crate::rewrite::replace_local_uses(m, f, &subst)?;
    let params: Vec<Inst> = subst.keys().copied().collect();
    m.remove_all(&params)?;
    m.remove_all(&merged)?;
    Ok(merged.len() as u64)
}
