//! Where an operand's value comes from, as the prepared program records it for every
//! instruction: a register slot of the activation, an entry of the program's constants, or
//! neither.

/// Where an operand's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// Not a value (or not one the interpreter knows).
    None,
    /// Register slot of the current activation.
    Local(u32),
    /// Entry of [`Program::consts`](crate::program::Program::consts).
    Const(u32),
    /// A constant aggregate too large to be a register value.
    TooLarge,
}
