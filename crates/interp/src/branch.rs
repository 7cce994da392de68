//! Branches decoded once per program: each block's `jump`, `br` or `switch` as the block
//! indices of its targets and the value sources of each edge's arguments, found with the
//! registry-driven walk ([`irkit_core::edges::branch`]) when the program is prepared, so
//! executing a branch walks no operand list and looks no target up.
//!
//! A branch that cannot be taken (a target that is not a block of the function, an argument
//! count that does not fit) is kept with the reason, and traps with it only when it executes,
//! exactly as if it had been decoded then.

use irkit_core::{Inst, Module, Opcode};

use crate::source::Src;
use crate::value::Value;

/// An operand: the instruction (named in messages) and where its value comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand {
    /// The operand instruction.
    pub(crate) inst: Inst,
    /// Its source.
    pub(crate) src: Src,
}

/// One edge: its target and its arguments.
#[derive(Debug)]
pub(crate) struct Edge {
    /// The target's index among the function's blocks, or why the edge cannot be taken.
    pub(crate) target: Result<u32, &'static str>,
    /// The arguments, in order.
    pub(crate) args: Box<[Operand]>,
    /// Whether each argument may be written to its parameter as soon as it is read: no
    /// argument reads the parameter of an earlier one (otherwise all are read first).
    pub(crate) direct: bool,
}

/// A `switch` case value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Case {
    /// A constant: its integer bits (`None` if it is not an integer: it matches nothing).
    Bits(Option<u64>),
    /// Anything else, read when the `switch` executes (an unverified module).
    Read(Operand),
}

/// A decoded `jump`, `br` or `switch`.
#[derive(Debug)]
pub(crate) enum Branch {
    /// `jump`: its edge, if it has one.
    Jump(Option<Edge>),
    /// `br`: the condition (if present) and the edges, `then` first.
    Br(Option<Operand>, Box<[Edge]>),
    /// `switch`: the scrutinee (if present), the case values, and the edges, the default
    /// first.
    Switch(Option<Operand>, Box<[Case]>, Box<[Edge]>),
}

/// Decodes the branch ending a block of a function whose `k`th block is `block(k)` (its
/// instruction and parameter slots), with `src`/`block_index`/`consts` the program's tables;
/// `None` if the block's last instruction is not a `jump`, `br` or `switch`.
pub(crate) fn decode<'b>(
    m: &Module,
    block: impl Fn(u32) -> Option<(Inst, &'b [u32])>,
    term: Inst,
    src: impl Fn(Inst) -> Src,
    block_index: impl Fn(Inst) -> Option<u32>,
    consts: &[Value],
) -> Option<Branch> {
    let op = m.opcode(term);
    let ops = m.operands(term);
    let branch = irkit_core::edges::branch(op, ops, |o| m.opcode(o) == Opcode::BLOCK)?;
    let operand = |inst: Inst| Operand {
        inst,
        src: src(inst),
    };
    let edges: Vec<Edge> = branch
        .edges
        .map(|e| {
            let args: Box<[Operand]> = ops
                .get(e.args)
                .unwrap_or(&[])
                .iter()
                .map(|&a| operand(a))
                .collect();
            let target = block_index(e.target)
                .ok_or("branch target is not a block")
                .and_then(|bi| {
                    block(bi)
                        .filter(|&(inst, _)| inst == e.target)
                        .ok_or("branch to a block of another function")
                        .map(|(_, params)| (bi, params))
                })
                .and_then(|(bi, params)| {
                    (params.len() == args.len())
                        .then_some((bi, params))
                        .ok_or("edge arguments do not match the target's parameters")
                });
            let direct = target.is_ok_and(|(_, params)| {
                args.iter().enumerate().all(|(k, a)| match a.src {
                    Src::Local(s) => !params[..k].contains(&s),
                    _ => true,
                })
            });
            Edge {
                target: target.map(|(bi, _)| bi),
                args,
                direct,
            }
        })
        .collect();
    let first = ops.first().map(|&o| operand(o));
    Some(match op {
        Opcode::JUMP => Branch::Jump(edges.into_iter().next()),
        Opcode::BR => Branch::Br(first, edges.into()),
        Opcode::SWITCH => {
            let cases = ops
                .get(branch.run)
                .unwrap_or(&[])
                .iter()
                .map(|&c| match src(c) {
                    Src::Const(i) => Case::Bits(
                        consts
                            .get(i as usize)
                            .and_then(Value::as_int)
                            .map(|(_, b)| b),
                    ),
                    _ => Case::Read(operand(c)),
                })
                .collect();
            Branch::Switch(first, cases, edges.into())
        }
        // An opcode with edges this interpreter does not know (the test
        // `every_branch_opcode_is_executed` below fails for one): it is not executed.
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use irkit_core::{Opcode, REGISTRY};

    /// Every opcode whose operand roles give it edges is one [`super::decode`] decodes and
    /// `exec` executes: a new branching terminator fails here until both handle it.
    #[test]
    fn every_branch_opcode_is_executed() {
        let with_edges: Vec<Opcode> = REGISTRY
            .iter()
            .filter(|i| i.signature.has_edges())
            .map(|i| i.opcode)
            .collect();
        assert_eq!(with_edges, [Opcode::JUMP, Opcode::BR, Opcode::SWITCH]);
    }
}
