//! The loops of a function, as the inliner's policy needs them: which of its blocks lie on a
//! cycle of its control flow (a strongly connected component of two or more blocks, or a block
//! that branches to itself). Found by Tarjan's algorithm, iteratively (any depth of nesting),
//! in time linear in the function's blocks and edges.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use irkit_core::{Inst, Module};

/// The blocks of function `f` reachable from its entry that lie on a cycle.
pub(crate) fn cyclic_blocks(m: &Module, f: Inst) -> HashSet<Inst> {
    let mut out = HashSet::default();
    let Some(entry) = m.entry_block(f) else {
        return out;
    };
    let succs = |b: Inst| -> Vec<Inst> {
        m.children(b)
            .last()
            .map(|&t| irkit_core::edges::successors(m, t))
            .unwrap_or_default()
    };
    // Tarjan: each block's discovery index and low link; the stack of open blocks.
    let mut index: HashMap<Inst, (u32, u32)> = HashMap::default();
    let mut open: Vec<Inst> = Vec::new();
    let mut on_open: HashSet<Inst> = HashSet::default();
    let mut next = 0u32;
    let mut work: Vec<(Inst, Vec<Inst>, usize)> = Vec::new();
    let mut enter = |b: Inst,
                     index: &mut HashMap<Inst, (u32, u32)>,
                     open: &mut Vec<Inst>,
                     on_open: &mut HashSet<Inst>|
     -> (Inst, Vec<Inst>, usize) {
        index.insert(b, (next, next));
        next += 1;
        open.push(b);
        on_open.insert(b);
        (b, succs(b), 0)
    };
    let first = enter(entry, &mut index, &mut open, &mut on_open);
    work.push(first);
    while let Some((b, ss, i)) = work.last_mut() {
        let b = *b;
        if let Some(&s) = ss.get(*i) {
            *i += 1;
            match index.get(&s).copied() {
                None => {
                    let frame = enter(s, &mut index, &mut open, &mut on_open);
                    work.push(frame);
                }
                Some((si, _)) if on_open.contains(&s) => {
                    if let Some(e) = index.get_mut(&b) {
                        e.1 = e.1.min(si);
                    }
                }
                Some(_) => {}
            }
            continue;
        }
        let self_loop = ss.contains(&b);
        work.pop();
        let Some(&(bi, bl)) = index.get(&b) else {
            continue;
        };
        if let Some((p, _, _)) = work.last()
            && let Some(e) = index.get_mut(p)
        {
            e.1 = e.1.min(bl);
        }
        if bl == bi {
            // `b` roots a component: the open blocks down to it.
            let at = open.iter().rposition(|&x| x == b).unwrap_or(0);
            let component: Vec<Inst> = open.drain(at..).collect();
            for x in &component {
                on_open.remove(x);
            }
            if component.len() > 1 || self_loop {
                out.extend(component);
            }
        }
    }
    out
}
