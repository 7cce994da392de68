//! Traps (run-time errors of the program) and load-time errors (of the module).

use irkit_backend::trap_kinds;
use thiserror::Error;

/// Why execution stopped abnormally. The kinds follow spec/ir.md, "Traps and memory errors",
/// plus the interpreter's resource limits and the misuse of its API. The kinds every back end
/// reports are spelled by [`irkit_backend::trap_kinds`]; the others are the interpreter's own.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TrapKind {
    /// `sdiv`, `udiv`, `srem` or `urem` with a zero divisor.
    #[error("{}", trap_kinds::DIVISION_BY_ZERO)]
    DivisionByZero,
    /// `sdiv` or `srem` of `MIN` by `-1`.
    #[error("{}", trap_kinds::INTEGER_OVERFLOW)]
    IntegerOverflow,
    /// `unreachable` executed.
    #[error("{}", trap_kinds::UNREACHABLE)]
    Unreachable,
    /// `trap` executed.
    #[error("{}", trap_kinds::TRAP)]
    Trap,
    /// `trap_msg` executed: its kind text.
    #[error("{0}")]
    Message(String),
    /// A load or store not inside one live object.
    #[error("out-of-bounds access of {size} bytes at 0x{addr:x}")]
    OutOfBounds {
        /// The address accessed.
        addr: u64,
        /// The number of bytes accessed.
        size: u64,
    },
    /// A load or store through null (or an address in the null object's range).
    #[error("null access at 0x{addr:x}")]
    NullAccess {
        /// The address accessed.
        addr: u64,
    },
    /// A load or store into an object that was released (`free`, or a returned activation).
    #[error("use after free at 0x{addr:x}")]
    UseAfterFree {
        /// The address accessed.
        addr: u64,
    },
    /// A store into the object of a `global_const`.
    #[error("store into read-only memory at 0x{addr:x}")]
    ReadOnlyStore {
        /// The address written.
        addr: u64,
    },
    /// A load or store through a function address.
    #[error("memory access through function address 0x{addr:x}")]
    FunctionAccess {
        /// The address accessed.
        addr: u64,
    },
    /// `free` of something that is not the start of a live `malloc` object.
    #[error("invalid free of 0x{addr:x}")]
    InvalidFree {
        /// The pointer passed to `free`.
        addr: u64,
    },
    /// `call_indirect` through a value that is not a function of the given signature.
    #[error("{}", trap_kinds::bad_function_pointer(*.addr))]
    BadFunctionPointer {
        /// The callee value.
        addr: u64,
    },
    /// The call depth limit was reached.
    #[error("{}", trap_kinds::stack_overflow(*.limit))]
    StackOverflow {
        /// The limit.
        limit: usize,
    },
    /// The memory limit was reached (stack, heap or a value too large).
    #[error("{}", trap_kinds::OUT_OF_MEMORY)]
    OutOfMemory,
    /// The fuel given with `with_fuel` ran out.
    #[error("fuel exhausted")]
    FuelExhausted,
    /// A call of an `extern` function the interpreter does not provide.
    #[error("{}", trap_kinds::unknown_extern(.0))]
    UnknownExtern(String),
    /// A provided extern called with a signature it cannot have.
    #[error("extern function \"{name}\": {why}")]
    BadExtern {
        /// The extern name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A use of an `import`ed definition: the module was not linked.
    #[error("unresolved import \"{0}\" (link the module first)")]
    UnresolvedImport(String),
    /// `abort()` was called.
    #[error("{}", trap_kinds::ABORT)]
    Abort,
    /// `exit(code)` was called. [`crate::Interpreter::run_main`] turns this into its exit code.
    #[error("exit({0}) called")]
    Exit(i32),
    /// The entry function or its arguments do not fit (unknown name, wrong arity or types).
    #[error("bad call: {0}")]
    BadCall(String),
    /// The module breaks a rule the verifier checks; it was not verified.
    #[error("malformed module: {0}")]
    Malformed(String),
}

/// Where a trap happened: the function, block and instruction. Inside a proc (which has no
/// blocks) `block` is empty and `index` is the instruction's position among the proc's
/// children, parameters excluded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// `@name` of the function (its name hint or export name, else `@#<inst index>`).
    pub func: String,
    /// `^name` of the block (its name hint, else `^bb<n>`); empty inside a proc.
    pub block: String,
    /// Position of the instruction in its block (parameters excluded).
    pub index: usize,
    /// The instruction's opcode name.
    pub opcode: String,
    /// `%name` of the instruction, if it has a name hint.
    pub name: Option<String>,
    /// `FILE:LINE:COL` of the instruction, if it has a source location (a `loc`).
    pub source: Option<String>,
}

/// A trap: its kind and, when it happened inside the program, where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trap {
    /// What happened.
    pub kind: TrapKind,
    /// Where (`None` for errors before the first instruction, such as a bad entry call).
    pub location: Option<Box<Location>>,
}

impl Trap {
    /// A trap without a location.
    pub fn new(kind: TrapKind) -> Trap {
        Trap {
            kind,
            location: None,
        }
    }
}

impl std::fmt::Display for Trap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trap: {}", self.kind)?;
        if let Some(l) = &self.location {
            write!(f, " in {}", l.func)?;
            if !l.block.is_empty() {
                write!(f, " {}", l.block)?;
            }
            write!(f, ", instruction {} ({}", l.index, l.opcode)?;
            if let Some(n) = &l.name {
                write!(f, " %{n}")?;
            }
            f.write_str(")")?;
            if let Some(s) = &l.source {
                write!(f, " at {s}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Trap {}

/// An error preparing a module for execution ([`crate::Interpreter::new`]): the module is not
/// one the verifier accepts, or it exceeds the interpreter's limits.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum InterpError {
    /// The module breaks a structural or typing rule (it was not verified).
    #[error("malformed module: {0}")]
    Malformed(String),
    /// The module's globals do not fit in the interpreter's memory limits.
    #[error("module too large: {0}")]
    TooLarge(String),
}
