//! The linker's index spaces, one type each ([`irkit_core::entity_index!`]), so that an index
//! of one space passed where another is expected fails to compile: an input of the link, a
//! definition of one input and an entry of one input's pool (the format's [`DefIndex`] and
//! [`PoolIndex`], as its references and its copier give them), and a node (a definition of
//! the output, in first-reached order). A definition of an input is named by both:
//! [`SrcDef`]. The reader's other methods (`ModuleView::def` and the like) take a `u32`: the
//! index is converted where the linker calls them.

use irkit_format::Ref;
pub(crate) use irkit_format::{DefIndex, PoolIndex};

irkit_core::entity_index! {
    /// An input of the link: its place among the inputs sorted by name.
    pub(crate) struct InputId = "input";
}

irkit_core::entity_index! {
    /// A definition of the output: its place in the walk's first-reached order.
    pub(crate) struct NodeId = "node";
}

/// A definition of an input: which input, and which of its definitions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub(crate) struct SrcDef {
    pub(crate) input: InputId,
    pub(crate) def: DefIndex,
}

impl SrcDef {
    pub(crate) const fn new(input: InputId, def: DefIndex) -> SrcDef {
        SrcDef { input, def }
    }
}

impl InputId {
    /// Every input of a link of `count` inputs, in order.
    pub(crate) fn all(
        count: usize,
    ) -> impl DoubleEndedIterator<Item = InputId> + ExactSizeIterator {
        (0..count).map(|m| InputId::new(m as u32))
    }
}

/// A reference of an input's definition to another definition of the same input, if `r` is
/// one.
pub(crate) fn def_of(r: Ref) -> Option<DefIndex> {
    match r {
        Ref::Def(d) => Some(d),
        _ => None,
    }
}
