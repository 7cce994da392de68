//! Emission into the function being built: new blocks with parameters, instructions appended
//! to the current block (`select`s folded when their condition is known are in `flags.rs`).

use std::collections::HashMap;

use irkit_core::noir::ProcGraph;
use irkit_core::{Inst, Module, Opcode, Payload};

use crate::LowerError;

/// The state of one proc's lowering: the module, the proc's graph, the function being built
/// and the block instructions are appended to.
pub(crate) struct Emit<'m> {
    /// The module being edited.
    pub(crate) m: &'m mut Module,
    /// The proc's dependency graph (positions index [`ProcGraph::order`]).
    pub(crate) g: ProcGraph,
    /// The function being built.
    pub(crate) f: Inst,
    /// The block instructions are appended to.
    pub(crate) block: Inst,
    /// The module's `i1` type.
    pub(crate) i1: Inst,
    /// The function's entry parameter standing for each of the proc's parameters.
    pub(crate) params: HashMap<Inst, Inst>,
}

impl Emit<'_> {
    /// Appends a new block with parameters of types `param_tys` to the function.
    pub(crate) fn new_block(
        &mut self,
        param_tys: &[Inst],
    ) -> Result<(Inst, Vec<Inst>), LowerError> {
        let b = self
            .m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)?;
        self.m.append_child(self.f, b)?;
        let mut ps = Vec::with_capacity(param_tys.len());
        for &t in param_tys {
            let p = self
                .m
                .new_inst(Opcode::PARAM, Some(t), vec![], Payload::None)?;
            self.m.append_child(b, p)?;
            ps.push(p);
        }
        Ok((b, ps))
    }

    /// Appends an instruction to the current block.
    pub(crate) fn emit(
        &mut self,
        op: Opcode,
        ty: Option<Inst>,
        ops: Vec<Inst>,
        payload: Payload,
    ) -> Result<Inst, LowerError> {
        let i = self.m.new_inst(op, ty, ops, payload)?;
        self.m.append_child(self.block, i)?;
        Ok(i)
    }
}
