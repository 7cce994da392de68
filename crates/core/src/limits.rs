//! The nesting limit ([`MAX_NESTING`]) and its linear check ([`check_nesting`]).
//!
//! A module has two kinds of depth, and one limit bounds both (`spec/ir.md`, Limits):
//!
//! * **tree depth**: the number of ancestors of an instruction of the tree (the root is at 0,
//!   a top-level definition at 1, a block at 2, its instructions at 3; a decoration is one
//!   deeper than its owner);
//! * **value depth**: of a hoistable value, 1 + the largest value depth among its type and
//!   operands that are hoistable (`i32` is 1 deep, `struct {i32}` 2, `i32 0` 2); definitions
//!   and other non-hoistable operands count 0.
//!
//! They are the two ways an input nests (ownership and hash-consed use), both written as
//! nesting in the text form (bodies and decorations; inline types and constants), and every
//! reader bounds both with the same number: the text parser, the binary reader (per definition
//! and for the pool) and the verifier. Everything behind a reader may therefore rely on depth at
//! most [`MAX_NESTING`]; the check itself is linear and never recurses.

use crate::{Inst, Module};

/// The deepest an instruction may be nested in the tree, and the deepest a hoistable value may
/// be (see the module documentation). Well above what front ends write (C99 asks compilers to
/// accept at least 127 nested blocks), low enough that per-level work stays small.
pub const MAX_NESTING: u32 = 256;

/// Which depth went over [`MAX_NESTING`], and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// An instruction of the tree with more than [`MAX_NESTING`] ancestors: the first one found
    /// in pre-order.
    Tree(Inst),
    /// A hoistable value more than [`MAX_NESTING`] values deep: the first one of the pool.
    Value(Inst),
}

impl Nesting {
    /// The instruction that is too deep.
    pub fn inst(self) -> Inst {
        match self {
            Nesting::Tree(i) | Nesting::Value(i) => i,
        }
    }
}

impl std::fmt::Display for Nesting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Nesting::Tree(_) => write!(
                f,
                "nested deeper than {MAX_NESTING} levels (the nesting limit)"
            ),
            Nesting::Value(_) => write!(
                f,
                "a type or constant nested deeper than {MAX_NESTING} levels (the nesting limit)"
            ),
        }
    }
}

/// Checks both depths of `m` against [`MAX_NESTING`], in time linear in the module (an explicit
/// stack, a memo per slot). Dangling handles and cycles among hoistables are ignored (they are
/// the verifier's to report): a value on a cycle counts its way around the cycle once.
pub fn check_nesting(m: &Module) -> Result<(), Nesting> {
    if let Some(i) = too_deep_in_tree(m) {
        return Err(Nesting::Tree(i));
    }
    let depths = value_depths(m);
    for &h in m.pool() {
        if depths.get(h.idx()).copied().unwrap_or(0) > MAX_NESTING {
            return Err(Nesting::Value(h));
        }
    }
    Ok(())
}

/// The first instruction in pre-order with more than [`MAX_NESTING`] ancestors.
fn too_deep_in_tree(m: &Module) -> Option<Inst> {
    let mut seen = vec![false; m.arena_len()];
    let mut stack = vec![(m.root(), 0u32)];
    while let Some((i, depth)) = stack.pop() {
        let Some(d) = m.get(i) else { continue };
        if std::mem::replace(&mut seen[i.idx()], true) {
            continue;
        }
        if depth > MAX_NESTING {
            return Some(i);
        }
        for &c in d.children().iter().rev() {
            stack.push((c, depth + 1));
        }
        for &c in d.decorations().iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    None
}

/// The value depth of every hoistable reachable from the pool (0 for other slots), computed
/// once per slot in post-order with an explicit stack.
pub fn value_depths(m: &Module) -> Vec<u32> {
    const OPEN: u32 = u32::MAX;
    let mut depth = vec![0u32; m.arena_len()];
    let hoistable = |i: Inst| m.get(i).is_some_and(|d| d.opcode().is_hoistable());
    let deps = |i: Inst| {
        let d = m.data(i);
        d.ty().into_iter().chain(d.operands().iter().copied())
    };
    let mut stack: Vec<(Inst, bool)> = Vec::new();
    for &p in m.pool() {
        if !hoistable(p) || depth[p.idx()] != 0 {
            continue;
        }
        stack.push((p, false));
        while let Some((x, ready)) = stack.pop() {
            if ready {
                let mut deepest = 0u32;
                for o in deps(x) {
                    if hoistable(o) && depth[o.idx()] != OPEN {
                        deepest = deepest.max(depth[o.idx()]);
                    }
                }
                depth[x.idx()] = deepest.saturating_add(1).min(OPEN - 1);
                continue;
            }
            if depth[x.idx()] != 0 {
                continue;
            }
            depth[x.idx()] = OPEN;
            stack.push((x, true));
            for o in deps(x) {
                if hoistable(o) && depth[o.idx()] == 0 {
                    stack.push((o, false));
                }
            }
        }
    }
    depth
}

/// The longest kind text a `trap_msg` may carry, in bytes (`spec/ir.md`, `trap_msg`).
pub const MAX_TRAP_KIND: usize = 64;

/// Why `text` cannot be a `trap_msg` kind (`None` if it can): it must be 1 to
/// [`MAX_TRAP_KIND`] printable ASCII characters (space to `~`), not starting or ending with a
/// space, so that it prints on the trap line as is.
pub fn trap_kind_problem(text: &str) -> Option<String> {
    if text.is_empty() {
        Some("the trap kind is empty".to_owned())
    } else if text.len() > MAX_TRAP_KIND {
        Some(format!(
            "the trap kind is {} bytes long, more than {MAX_TRAP_KIND}",
            text.len()
        ))
    } else if let Some(c) = text.chars().find(|c| !(' '..='~').contains(c)) {
        Some(format!(
            "the trap kind holds {c:?}, not printable ASCII (space to `~`)"
        ))
    } else if text.starts_with(' ') || text.ends_with(' ') {
        Some("the trap kind starts or ends with a space".to_owned())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Opcode, Payload};

    #[test]
    fn value_depth_at_and_over_the_limit() {
        let mut m = Module::new();
        let mut t = m.ty_i32();
        for _ in 1..MAX_NESTING {
            t = m.ty_struct(&[t]).unwrap();
        }
        assert_eq!(value_depths(&m)[t.idx()], MAX_NESTING);
        assert_eq!(check_nesting(&m), Ok(()));
        let over = m.ty_array(t, 2).unwrap();
        assert_eq!(check_nesting(&m), Err(Nesting::Value(over)));
    }

    /// Attaching a fresh instruction below a deep one does not walk its ancestors, so a tree
    /// built top-down (as readers do) costs linear time whatever its depth, and the check is
    /// linear too.
    #[test]
    fn deep_trees_build_and_check_in_linear_time() {
        let t = std::time::Instant::now();
        let mut m = Module::new();
        let mut bottom = m.root();
        for _ in 0..300_000 {
            let c = m
                .new_inst(Opcode(0x7F00), None, Vec::new(), Payload::None)
                .unwrap();
            m.append_child(bottom, c).unwrap();
            bottom = c;
        }
        assert!(matches!(check_nesting(&m), Err(Nesting::Tree(_))));
        // Still refused: attaching an ancestor below its descendant.
        let top = m.top_level()[0];
        m.detach(top).unwrap();
        assert!(m.append_child(bottom, top).is_err());
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn tree_depth_at_and_over_the_limit() {
        let mut m = Module::new();
        let mut top = m
            .new_inst(Opcode(0x7F00), None, Vec::new(), Payload::None)
            .unwrap();
        let bottom = top;
        for _ in 1..MAX_NESTING {
            let p = m
                .new_inst(Opcode(0x7F00), None, Vec::new(), Payload::None)
                .unwrap();
            m.append_child(p, top).unwrap();
            top = p;
        }
        let root = m.root();
        m.append_child(root, top).unwrap();
        assert_eq!(check_nesting(&m), Ok(()));
        let deco = m
            .add_decoration(bottom, Opcode::EXPORT, Vec::new(), Payload::Str("x".into()))
            .unwrap();
        assert_eq!(check_nesting(&m), Err(Nesting::Tree(deco)));
    }

    #[test]
    fn trap_kinds_are_short_printable_ascii() {
        use super::{MAX_TRAP_KIND, trap_kind_problem};
        assert_eq!(trap_kind_problem("out of bounds memory access"), None);
        assert_eq!(trap_kind_problem(&"x".repeat(MAX_TRAP_KIND)), None);
        assert!(trap_kind_problem(&"x".repeat(MAX_TRAP_KIND + 1)).is_some());
        assert!(trap_kind_problem("").is_some());
        assert!(trap_kind_problem("caf\u{e9}").is_some());
        assert!(trap_kind_problem("a\tb").is_some());
        assert!(trap_kind_problem("end ").is_some());
    }
}
