//! Typed 32-bit handles into the module arena.

use std::fmt;
use std::num::NonZeroU32;

/// A handle to one instruction of a [`Module`](crate::Module).
///
/// Every entity of the IR (module, function, block, parameter, type, constant, decoration, …)
/// is an instruction, so this one handle names all of them. It is a 32-bit index stored as
/// `index + 1` in a `NonZeroU32`, so `Option<Inst>` is also four bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(NonZeroU32);

impl Inst {
    /// The largest index an `Inst` can hold.
    pub const MAX_INDEX: u32 = u32::MAX - 1;

    /// The handle of arena slot `index`. Panics only if `index > Inst::MAX_INDEX`, which the
    /// arena never hands out.
    #[inline]
    pub fn from_index(index: u32) -> Inst {
        assert!(index <= Self::MAX_INDEX, "instruction index out of range");
        Inst(NonZeroU32::new(index + 1).expect("index + 1 is non-zero"))
    }

    /// The arena slot of this handle.
    #[inline]
    pub fn index(self) -> u32 {
        self.0.get() - 1
    }

    /// The arena slot as a `usize`, for indexing.
    #[inline]
    pub fn idx(self) -> usize {
        self.index() as usize
    }
}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "inst{}", self.index())
    }
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "inst{}", self.index())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_inst_is_four_bytes() {
        assert_eq!(std::mem::size_of::<Option<Inst>>(), 4);
    }

    #[test]
    fn index_round_trips() {
        for i in [0, 1, 17, Inst::MAX_INDEX] {
            assert_eq!(Inst::from_index(i).index(), i);
        }
    }
}
