//! Typed 32-bit handles into the module arena ([`Inst`]), and the macro that defines a typed
//! index for any other index space ([`entity_index!`](crate::entity_index)).

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

/// Defines a typed 32-bit index: a `#[repr(transparent)]` newtype of `u32` for one index space
/// (the inputs of a link, the definitions of one file, its pool entries, …), so that an index
/// of one space passed where another is expected fails to compile (Cranelift's `entity_impl!`
/// pattern; [`Inst`] is the arena's handle, made by hand for its `Option` niche). It costs
/// nothing at run time: the `u32`'s size, layout, hashing and order.
///
/// ```
/// irkit_core::entity_index! {
///     /// A row of some table.
///     pub struct Row = "row";
/// }
/// let r = Row::new(3);
/// assert_eq!((r.index(), r.idx(), r.to_string()), (3, 3, "row3".to_string()));
/// assert_eq!(std::mem::size_of::<Row>(), 4);
/// ```
#[macro_export]
macro_rules! entity_index {
    ($(#[$attr:meta])* $vis:vis struct $name:ident = $prefix:literal;) => {
        $(#[$attr])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(transparent)]
        $vis struct $name(u32);

        #[allow(dead_code)]
        impl $name {
            /// The index `index` of this space.
            #[inline]
            pub const fn new(index: u32) -> Self {
                Self(index)
            }

            /// The index as a `u32` (as files store it).
            #[inline]
            pub const fn index(self) -> u32 {
                self.0
            }

            /// The index as a `usize`, for indexing a table of this space.
            #[inline]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, "{}{}", $prefix, self.0)
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, "{}{}", $prefix, self.0)
            }
        }
    };
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
