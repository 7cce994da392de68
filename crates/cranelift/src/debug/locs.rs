//! Source locations of a function's instructions as its machine code refers to them.
//!
//! Lowering gives each IR instruction that has a `loc` decoration a Cranelift source location
//! ([`srcloc`]): its **ordinal**, the position of the instruction among the bodies of the
//! function's blocks in definition order (block parameters not counted). The compiled code
//! keeps the ranges of machine code each ordinal produced (`crate::code::Code::lines`), which
//! the code cache stores as they are: an ordinal names an instruction of the IR function, and
//! the function's tree (its `loc` decorations among it) is part of the cache key, so the
//! table of [`table`], rebuilt from the IR function of any later build, gives the same
//! locations. Nothing here depends on where the code is placed.

use cranelift_codegen::ir::SourceLoc;
use irkit_core::{Inst, Module, Opcode};
use rustc_hash::FxHashMap as HashMap;

/// A source position: file, line, column, as the `loc` decoration gives them, and the
/// inlining scope it is in (spec/ir.md, "Inlining scopes"), if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Loc<'m> {
    pub(crate) file: &'m str,
    pub(crate) line: u32,
    pub(crate) col: u32,
    pub(crate) scope: Option<Inst>,
}

/// The `loc` decoration of `inst`, read as `irkit_core::place::verified_source` reads it.
pub(crate) fn loc_of(m: &Module, inst: Inst) -> Option<Loc<'_>> {
    let loc = m.find_decoration(inst, Opcode::LOC)?;
    let p = irkit_core::scope::position(m, loc)?;
    Some(Loc {
        file: p.file,
        line: p.line,
        col: p.col,
        scope: m.operands(loc).get(2).copied(),
    })
}

/// The ordinal of the first body instruction of each block of function `f`.
pub(crate) fn block_bases(m: &Module, f: Inst) -> HashMap<Inst, u32> {
    let mut next = 0u32;
    m.blocks(f)
        .map(|b| {
            let base = next;
            let body = m.children(b).len().saturating_sub(m.block_params(b).len());
            next = next.saturating_add(u32::try_from(body).unwrap_or(u32::MAX));
            (b, base)
        })
        .collect()
}

/// The Cranelift source location of `inst`, body instruction `ordinal` of its function: the
/// ordinal if the instruction has a location, else none.
pub(crate) fn srcloc(m: &Module, inst: Inst, ordinal: u32) -> SourceLoc {
    if ordinal != u32::MAX && m.find_decoration(inst, Opcode::LOC).is_some() {
        SourceLoc::new(ordinal)
    } else {
        SourceLoc::default()
    }
}

/// The location of each body instruction of function `f`, by ordinal.
pub(crate) fn table(m: &Module, f: Inst) -> Vec<Option<Loc<'_>>> {
    let mut out = Vec::new();
    for b in m.blocks(f) {
        let body = &m.children(b)[m.block_params(b).len()..];
        out.extend(body.iter().map(|&i| loc_of(m, i)));
    }
    out
}

/// The first location in `table` of the function's own code, outside any inlining scope (for
/// its declaration), else the first location.
pub(crate) fn first<'m>(table: &[Option<Loc<'m>>]) -> Option<Loc<'m>> {
    let mut all = table.iter().flatten();
    all.clone()
        .find(|l| l.scope.is_none())
        .or_else(|| all.next())
        .copied()
}
