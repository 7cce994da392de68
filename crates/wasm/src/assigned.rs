//! Which locals each loop of a function body assigns, read from its operators before the body
//! is translated.
//!
//! SSA construction ([`crate::ssa`]) reads locals inside a loop before the loop's back edges
//! are known. Knowing nothing more, such a read makes a parameter at the loop's header, its
//! arguments filled once every back edge is there, and removed at the end if every edge
//! passes the same value (a trivial parameter: Braun et al.'s trivial phi). A local that no
//! `local.set` or `local.tee` between the `loop` and its `end` assigns has, everywhere in the
//! loop, the value it had when the loop was entered: the read looks it up before the loop and
//! no parameter is made. Most locals a loop reads are of that kind (a loop reads its bounds,
//! base addresses and constants kept in locals), so this saves making, filling and removing
//! most of the parameters the construction would otherwise make.
//!
//! Operators are numbered by their position in the body (the first is 0), the numbering
//! `FuncTranslator` ([`crate::func`]) keeps while it reads the same operators.

use wasmparser::Operator;

/// The loops of one body and its assignments to locals.
#[derive(Debug, Default)]
pub struct Assigned {
    /// Each loop: the position of its `loop` operator and of its `end`, ordered by the first.
    loops: Vec<(u32, u32)>,
    /// Each assignment: the local and the position of the `local.set` or `local.tee`, ordered.
    sets: Vec<(u32, u32)>,
}

impl Assigned {
    /// Reads the operators of a body in order (a body wasmparser validated: every `end`
    /// closes a construct, the last one the body).
    pub fn scan<'o, 'b: 'o>(ops: impl IntoIterator<Item = &'o Operator<'b>>) -> Assigned {
        let mut out = Assigned::default();
        // Each open construct: the position of its `loop`, or `None` for a `block` or `if`.
        let mut open: Vec<Option<u32>> = Vec::new();
        let mut at = 0u32;
        for op in ops {
            match *op {
                Operator::Block { .. } | Operator::If { .. } => open.push(None),
                Operator::Loop { .. } => open.push(Some(at)),
                Operator::End => {
                    if let Some(Some(start)) = open.pop() {
                        out.loops.push((start, at));
                    }
                }
                Operator::LocalSet { local_index } | Operator::LocalTee { local_index } => {
                    out.sets.push((local_index, at));
                }
                _ => {}
            }
            at = at.saturating_add(1);
        }
        out.loops.sort_unstable();
        out.sets.sort_unstable();
        out
    }

    /// The position of the `end` of the loop whose `loop` operator is at `start`, if one is.
    pub fn loop_end(&self, start: u32) -> Option<u32> {
        let i = self.loops.binary_search_by_key(&start, |&(s, _)| s).ok()?;
        Some(self.loops[i].1)
    }

    /// Whether local `var` is assigned by an operator between positions `start` and `end`.
    pub fn assigns(&self, var: u32, (start, end): (u32, u32)) -> bool {
        let i = self.sets.partition_point(|&s| s < (var, start));
        self.sets
            .get(i)
            .is_some_and(|&(v, at)| v == var && at < end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body of the first function of `wat`.
    fn scanned(wat: &str) -> Assigned {
        let bytes = wat::parse_str(wat).unwrap();
        for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
            if let wasmparser::Payload::CodeSectionEntry(body) = payload.unwrap() {
                let reader = body.get_operators_reader().unwrap();
                let ops: Vec<Operator<'_>> = reader.into_iter().map(Result::unwrap).collect();
                return Assigned::scan(&ops);
            }
        }
        panic!("no body");
    }

    #[test]
    fn a_loop_assigns_what_its_body_and_nested_loops_set() {
        // Positions: 0 loop, 1 local.get 0, 2 local.set 1, 3 block, 4 loop, 5 i32.const,
        // 6 local.tee 2, 7 drop, 8 end, 9 end, 10 end, 11 i32.const, 12 local.set 3, 13 end.
        let a = scanned(
            "(module (func (local i32 i32 i32 i32)
               (loop (local.set 1 (local.get 0))
                 (block (loop (drop (local.tee 2 (i32.const 1))))))
               (local.set 3 (i32.const 0))))",
        );
        let outer = (0, a.loop_end(0).unwrap());
        let inner = (4, a.loop_end(4).unwrap());
        assert_eq!((outer, inner), ((0, 10), (4, 8)));
        assert_eq!(a.loop_end(3), None);
        assert!(!a.assigns(0, outer), "local 0 is only read");
        assert!(a.assigns(1, outer) && !a.assigns(1, inner));
        assert!(a.assigns(2, outer) && a.assigns(2, inner));
        assert!(!a.assigns(3, outer), "set after the loop");
    }
}
