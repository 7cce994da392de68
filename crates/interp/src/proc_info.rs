//! A NOIR proc prepared for evaluation (the proc counterpart of [`crate::program`]'s
//! functions): its body instructions in the topological order of
//! [`irkit_core::noir::ProcGraph`], each with its dependencies, passive conditions and the
//! event or `var` it targets, and its register slots.

use std::collections::HashMap;

use irkit_core::noir::{ProcGraph, passive_deps};
use irkit_core::{Inst, Module, Opcode};

use crate::trap::{InterpError, Location, Trap, TrapKind};
use irkit_core::place::{verified_def_label, verified_source};

/// One body instruction of a proc, prepared.
#[derive(Debug)]
pub(crate) struct BodyInst {
    /// The instruction.
    pub(crate) inst: Inst,
    /// Its opcode.
    pub(crate) op: Opcode,
    /// Its position among the proc's children, parameters excluded (for trap locations).
    pub(crate) index: usize,
    /// The positions of the body instructions it depends on.
    pub(crate) deps: Vec<usize>,
    /// Operands of its `when` decorations.
    pub(crate) when: Vec<Inst>,
    /// Operands of its `unless` decorations.
    pub(crate) unless: Vec<Inst>,
    /// For `cue`, the position of its event; for `next`, the position of its `var`.
    pub(crate) target: Option<usize>,
}

/// A proc prepared for evaluation. Its parameters occupy register slots `0..nparams`, and the
/// body instruction at position `t` of the topological order slot `nparams + t`.
#[derive(Debug)]
pub(crate) struct ProcInfo {
    /// The proc.
    pub(crate) inst: Inst,
    /// Its parameters.
    pub(crate) params: Vec<Inst>,
    /// How many parameters it has.
    pub(crate) nparams: usize,
    /// Its body instructions, in topological order.
    pub(crate) body: Vec<BodyInst>,
    /// The positions of the instructions that depend on an event (the only ones that can
    /// execute after iteration 0), in order.
    pub(crate) dynamic: Vec<usize>,
    /// Its `result`: the instruction and its position among the children, parameters
    /// excluded.
    pub(crate) result: (Inst, usize),
    /// The operand of `result` (`None` for a proc returning `void`).
    pub(crate) result_value: Option<Inst>,
}

impl ProcInfo {
    /// Prepares proc `p` of `m`.
    pub(crate) fn build(m: &Module, p: Inst) -> Result<ProcInfo, InterpError> {
        let label = verified_def_label(m, p);
        let bad = |why: String| InterpError::Malformed(format!("proc {label}: {why}"));
        let g = ProcGraph::new(m, p).map_err(|e| bad(e.message))?;
        let nparams = g.params.len();
        let children = m.get(p).map_or(&[][..], |d| d.children());
        let child_index: HashMap<Inst, usize> = children
            .iter()
            .enumerate()
            .skip(nparams)
            .map(|(k, &c)| (c, k - nparams))
            .collect();
        let index_of = |i: Inst| child_index.get(&i).copied();
        let result = g.result.ok_or_else(|| bad("no `result`".into()))?;
        let result_value = m.get(result).and_then(|d| d.operands().first().copied());
        let mut body = Vec::with_capacity(g.order.len());
        for (t, &inst) in g.order.iter().enumerate() {
            let d = m
                .get(inst)
                .ok_or_else(|| bad(format!("dangling instruction {inst}")))?;
            let op = d.opcode();
            let (when, unless) = passive_deps(m, inst);
            let target = match op {
                Opcode::CUE | Opcode::NEXT => {
                    let want = if op == Opcode::CUE {
                        Opcode::EVENT
                    } else {
                        Opcode::VAR
                    };
                    let pos = d
                        .operands()
                        .first()
                        .and_then(|&v| g.pos(v))
                        .filter(|&k| m.get(g.order[k]).map(|d| d.opcode()) == Some(want))
                        .ok_or_else(|| bad(format!("{op}'s operand 0 is not a {want}")))?;
                    Some(pos)
                }
                _ => None,
            };
            body.push(BodyInst {
                inst,
                op,
                index: index_of(inst).unwrap_or(t),
                deps: g.deps[t].clone(),
                when,
                unless,
                target,
            });
        }
        let dynamic = (0..body.len()).filter(|&t| g.dynamic[t]).collect();
        Ok(ProcInfo {
            inst: p,
            params: g.params,
            nparams,
            body,
            dynamic,
            result: (result, index_of(result).unwrap_or(0)),
            result_value,
        })
    }

    /// The values of the proc (parameters, then body instructions) with their register slots.
    pub(crate) fn slots(&self) -> impl Iterator<Item = (Inst, usize)> + '_ {
        let body = self.body.iter().map(|b| b.inst);
        self.params.iter().copied().chain(body).zip(0..)
    }

    /// How many register slots an evaluation needs.
    pub(crate) fn nslots(&self) -> usize {
        self.nparams + self.body.len()
    }

    /// The location of the trap `kind` at `inst` (its position among the children, without
    /// the parameters, is `index`).
    pub(crate) fn trap(&self, m: &Module, inst: Inst, index: usize, kind: TrapKind) -> Trap {
        Trap {
            kind,
            location: Some(Box::new(Location {
                func: verified_def_label(m, self.inst),
                block: String::new(),
                index,
                opcode: m.opcode(inst).to_string(),
                name: m.name(inst).map(str::to_string),
                source: verified_source(m, inst),
            })),
        }
    }
}
