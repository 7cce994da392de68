//! Copying definitions out of a [`ModuleView`] into an existing core [`Module`], with the
//! caller deciding what pool values and other definitions map to (the linker's lazy copy:
//! only the definitions it reaches are validated and copied, and their references to other
//! definitions and to the pool are remapped on the fly).
//!
//! This is the one archive-to-module decoder. A copy is always made in two steps, whatever
//! the body's layout (3.x compact bodies, and the flat bodies of 1.x and 2.x files):
//!
//! 1. the **plan** ([`DefCopier::plan`], `plan.rs`) asks the [`CopyMapper`] every question the
//!    copy has and refuses what the debug section makes impossible, before any instruction
//!    is made;
//! 2. the **build** ([`crate::build_copies`], `build.rs`) makes the instructions from the plan and the
//!    body alone, each body into arena slots reserved at the end of the destination
//!    ([`irkit_core::Fragment`], whose calls check what the module's own constructors check,
//!    through the same functions), many bodies at once on every core.
//!
//! [`DefCopier::copy`] (in `build.rs`) is both steps for one definition; the linker plans each definition
//! as its walk reaches it and builds them all once the walk is done; [`ModuleView::materialize`]
//! plans every definition and the root archive with the identity mapping, then builds them all.
//!
//! **The mapper's questions**, for one definition, in this order (and nothing else, so a
//! caller may rely on them):
//!
//! 1. [`CopyMapper::keep_decoration`] for each of the definition's own decorations, in order
//!    (never for nested ones, which are always kept);
//! 2. then (without the mapper) the constants of the source locations re-created on copied
//!    instructions are interned in the destination, in debug-record order;
//! 3. then what each pool value or definition the copied instructions name becomes
//!    ([`CopyMapper::pool`], [`CopyMapper::def`]), each once, at its first use in local order
//!    (an instruction's type before its operands), a dropped decoration's subtree not
//!    counted. A compact body lists these in its table of external references, in that
//!    order; a flat body is scanned for them.
//!
//! **Errors.** The plan refuses a target that is not an instruction with the definition's
//! opcode, a mapper's error (stopping there), and what the debug section makes impossible (a
//! record on an instruction at the nesting limit, a record past the end of its decoration
//! list: `spec/format.md` §2.3); the build refuses a body the module cannot hold (an
//! instruction no body may hold, a decoration among children, …). Errors name the file and
//! the definition.

use std::sync::Arc;

use irkit_core::{Inst, Module, Opcode};

use crate::defview::{DefIndex, DefView, InstView, PoolIndex};
use crate::error::{Location, ReadCause, ReadError};
use crate::placed::{DebugBytes, DebugRecs};
use crate::view::ModuleView;

/// Decides what the outside references of a copied definition become in the destination
/// module, and which of its own decorations are copied (see the module docs for the order of
/// the questions).
///
/// Within one copy, the answer for a pool entry or a definition must not change: the copy asks
/// for each once, at its first use, and reuses the answer for every later use.
pub trait CopyMapper {
    /// The caller's error type; read and build failures of the copy convert into it.
    type Error: From<ReadError>;

    /// The destination value for pool entry `index` of the source file.
    fn pool(&mut self, dst: &mut Module, index: PoolIndex) -> Result<Inst, Self::Error>;

    /// The destination instruction standing for top-level definition `index` of the source
    /// file (used as an operand: its address).
    fn def(&mut self, dst: &mut Module, index: DefIndex) -> Result<Inst, Self::Error>;

    /// Whether to copy `deco`, one of the definition's own decorations (asked before any
    /// reference is mapped, so a skipped decoration's references are never passed to
    /// [`CopyMapper::def`] or [`CopyMapper::pool`]). The default keeps everything.
    fn keep_decoration(
        &mut self,
        dst: &mut Module,
        deco: InstView<'_>,
    ) -> Result<bool, Self::Error> {
        let _ = (dst, deco);
        Ok(true)
    }
}

/// What [`ModuleView::copy_def`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopySummary {
    /// Instructions created in the destination (the definition's own included, name hints and
    /// locations from the debug section included, pool values not counted).
    pub insts: u64,
}

impl ModuleView {
    /// The opcode of definition `i`, from the definitions directory (nothing is validated).
    pub fn def_opcode(&self, i: u32) -> Option<Opcode> {
        self.def_entry_opcode(i).map(Opcode)
    }

    /// A copier for this file's definitions; with `debug`, it re-creates name hints and
    /// source locations from the debug section (validated here, once).
    pub fn copier(&self, debug: bool) -> Result<DefCopier<'_>, ReadError> {
        let debug = if debug { self.debug()? } else { None };
        Ok(DefCopier { view: self, debug })
    }

    /// Copies definition `index` into `dst` (see [`DefCopier::copy`]; this convenience
    /// makes a copier each time).
    pub fn copy_def<M: CopyMapper>(
        &self,
        index: u32,
        dst: &mut Module,
        target: Inst,
        debug: bool,
        map: &mut M,
    ) -> Result<CopySummary, M::Error> {
        let d = self.def(index)?;
        self.copier(debug)?.copy(d, dst, target, map)
    }
}

/// Copies definitions of one file into core modules (made by [`ModuleView::copier`]; cheap
/// to keep and to copy: it holds the file's validated debug section, if any).
#[derive(Clone, Copy)]
pub struct DefCopier<'v> {
    pub(crate) view: &'v ModuleView,
    pub(crate) debug: Option<DebugBytes<'v>>,
}

impl<'v> DefCopier<'v> {
    /// The debug records of definition `index`: none for the root archive (`None`, whose
    /// decorations stay in it, spec/format.md §2.3) or without debug info.
    pub(crate) fn debug_records(&self, index: Option<u32>) -> DebugRecs<'v> {
        match (self.debug, index) {
            (Some(t), Some(index)) => t.entries.of_def(index),
            _ => DebugRecs::default(),
        }
    }
}

/// A record of a body with where it sits in the tree, as a pre-order walk meets it.
pub(crate) struct Placed {
    pub rec: crate::flat::Rec,
    pub local: u32,
    /// The instruction it is a sub-instruction of (0 for local 0 itself).
    pub owner: u32,
    /// Whether it is one of its owner's decorations (they come before the children).
    pub is_deco: bool,
    /// Whether it is at the nesting limit (the definition being at depth 1): a debug
    /// decoration re-inserted on it would be too deep.
    pub at_limit: bool,
}

/// Every record of `d` in pre-order, placed (one sequential pass, an explicit stack).
pub(crate) fn placed_records<'a>(d: &'a DefView<'_>) -> impl Iterator<Item = Placed> + 'a {
    // Open subtrees: (local, end, decorations left).
    let mut stack: Vec<(u32, u32, u32)> = Vec::new();
    d.records().zip(0u32..).map(move |(rec, l)| {
        while stack.last().is_some_and(|&(_, end, _)| end <= l) {
            stack.pop();
        }
        let mut is_deco = false;
        let mut owner = 0;
        if let Some(top) = stack.last_mut() {
            owner = top.0;
            if top.2 > 0 {
                top.2 -= 1;
                is_deco = true;
            }
        }
        stack.push((l, rec.end, rec.n_decos));
        Placed {
            rec,
            local: l,
            owner,
            is_deco,
            at_limit: stack.len() as u32 >= irkit_core::MAX_NESTING,
        }
    })
}

/// Who copies, for the place its errors name: `copy` names the definition
/// (`section definitions: definition 3: instruction 7: …`), `materialize` the whole module
/// (`materialize: definition 3, instruction 7: …`, `materialize: root archive, …`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    Copy,
    Materialize,
}

/// Builds the errors of one copied archive (`index`: the definition, `None` for the root).
pub(crate) struct Place {
    pub file: Arc<str>,
    pub reader: Reader,
    pub index: Option<u32>,
}

impl Place {
    /// A malformed input at instruction `local` of the archive (or at the archive).
    pub(crate) fn err(&self, local: Option<u32>, msg: impl std::fmt::Display) -> ReadError {
        let (location, msg) = match (self.reader, self.index, local) {
            (Reader::Copy, Some(i), Some(l)) => {
                (Location::Definition(i), format!("instruction {l}: {msg}"))
            }
            (Reader::Copy, Some(i), None) => (Location::Definition(i), msg.to_string()),
            (_, Some(i), Some(l)) => (
                Location::Materialize,
                format!("definition {i}, instruction {l}: {msg}"),
            ),
            (_, None, Some(l)) => (
                Location::Materialize,
                format!("root archive, instruction {l}: {msg}"),
            ),
            (_, _, None) => (Location::Materialize, msg.to_string()),
        };
        ReadError::new(&self.file, location, ReadCause::Malformed(msg))
    }
}

/// The error of asking to copy the root archive as a definition.
pub(crate) fn root_is_not_a_definition(view: &ModuleView) -> ReadError {
    ReadError::new(
        &view.file().into(),
        Location::Section("root".into()),
        ReadCause::Malformed("the root archive is not a definition".into()),
    )
}
