//! The opcode registry: the single source of truth for every instruction kind.
//!
//! Each opcode has a text name, a **stable numeric id** (what the binary format stores; never
//! reused, never renumbered), an operand shape, a result-type rule, a payload kind and flags.
//! Everything else (parser, printer, verifier, writer, reader) reads this table; nothing else
//! lists opcodes. An id the table does not know is kept as an *opaque* opcode: it loads, prints
//! and re-serializes losslessly, and only the verifier and back ends reject it.
//!
//! `spec/ir.md` carries the same table; a test checks that the two agree.

use std::fmt;

/// An opcode, named by its stable numeric id. Ids the registry does not know are allowed
/// ([`Opcode::info`] returns `None` for them) so that newer modules stay readable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub u16);

/// How many operands an instruction takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Exact(u8),
    /// At least `min`, at most `max`.
    Range(u8, u8),
    /// At least this many.
    AtLeast(u8),
}

impl Arity {
    /// Whether `n` operands fit this shape.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exact(k) => n == k as usize,
            Arity::Range(lo, hi) => (lo as usize..=hi as usize).contains(&n),
            Arity::AtLeast(lo) => n >= lo as usize,
        }
    }
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arity::Exact(k) => write!(f, "{k}"),
            Arity::Range(lo, hi) => write!(f, "{lo}..{hi}"),
            Arity::AtLeast(lo) => write!(f, "{lo}+"),
        }
    }
}

/// Whether an instruction carries a result type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeRule {
    /// Never has a type (types themselves, decorations, stores, terminators, blocks).
    None,
    /// Always has a type.
    Required,
    /// May have one (`call`: absent when the callee returns `void`).
    Optional,
}

/// The kind of literal payload an opcode carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadKind {
    /// No payload.
    None,
    /// An integer (`const_int` value, `array` length, `extract` index).
    Int,
    /// A float, stored as the IEEE bits of the value in its own format.
    Float,
    /// A UTF-8 string (symbol names, file names).
    Str,
    /// A byte string.
    Bytes,
    /// An integer condition code (see [`IntCC`](crate::IntCC)), spelled by name in text.
    IntCC,
    /// A float condition code (see [`FloatCC`](crate::FloatCC)), spelled by name in text.
    FloatCC,
}

/// Opcode flags, a small bit set.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u16);

impl Flags {
    /// No flags.
    pub const NONE: Flags = Flags(0);
    /// A deduplicated value (types, constants, `specialize`): one instruction per distinct
    /// (opcode, type, operands, payload), at the outermost scope its operands allow.
    pub const HOISTABLE: Flags = Flags(1 << 0);
    /// Ends a block; only allowed as a block's last child.
    pub const TERMINATOR: Flags = Flags(1 << 1);
    /// Has children.
    pub const PARENT: Flags = Flags(1 << 2);
    /// Is a decoration: lives in its owner's decoration list, not among children.
    pub const DECORATION: Flags = Flags(1 << 3);
    /// Has an effect beyond its result (memory, control, I/O); never removed as dead.
    pub const SIDE_EFFECTS: Flags = Flags(1 << 4);
    /// Is a type.
    pub const TYPE: Flags = Flags(1 << 5);
    /// Is a constant value.
    pub const CONSTANT: Flags = Flags(1 << 6);
    /// Is a module-level definition (function, global); its value as an operand is its address.
    pub const DEFINITION: Flags = Flags(1 << 7);
    /// May trap at run time (division, `trap`).
    pub const MAY_TRAP: Flags = Flags(1 << 8);
    /// Stable id reserved for a later version; not yet accepted by the verifier.
    pub const RESERVED: Flags = Flags(1 << 9);
    /// A core operation without effect on memory or control (arithmetic, comparisons,
    /// conversions, `select`, aggregate access): it may appear in a NOIR proc's body.
    pub const IN_PROC: Flags = Flags(1 << 10);
    /// A NOIR body instruction (`event` … `coalesce`; not `proc`, `result` or the
    /// passive-dependency decorations).
    pub const NOIR: Flags = Flags(1 << 11);

    /// All flags with their spec spelling, in table order.
    pub const ALL: [(Flags, &'static str); 12] = [
        (Flags::HOISTABLE, "hoistable"),
        (Flags::TERMINATOR, "terminator"),
        (Flags::PARENT, "parent"),
        (Flags::DECORATION, "decoration"),
        (Flags::SIDE_EFFECTS, "side-effects"),
        (Flags::TYPE, "type"),
        (Flags::CONSTANT, "constant"),
        (Flags::DEFINITION, "definition"),
        (Flags::MAY_TRAP, "may-trap"),
        (Flags::RESERVED, "reserved"),
        (Flags::IN_PROC, "in-proc"),
        (Flags::NOIR, "noir"),
    ];

    /// Whether every flag of `other` is set here.
    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The union of two sets.
    #[inline]
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// The raw bits.
    pub const fn bits(self) -> u16 {
        self.0
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (flag, name) in Flags::ALL {
            if self.contains(flag) {
                if !first {
                    f.write_str(" ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("-")?;
        }
        Ok(())
    }
}

/// Everything the registry knows about one opcode.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The opcode.
    pub opcode: Opcode,
    /// Its text name.
    pub name: &'static str,
    /// Operand count.
    pub arity: Arity,
    /// Operand signature as the spec writes it (e.g. `%lhs, %rhs`).
    pub operands: &'static str,
    /// Whether it has a result type.
    pub ty: TypeRule,
    /// Its payload kind.
    pub payload: PayloadKind,
    /// Its flags.
    pub flags: Flags,
}

macro_rules! registry {
    ($( $konst:ident = $id:literal, $name:literal, $arity:expr, $ops:literal, $ty:ident, $payload:ident, [$($flag:ident)*]; )*) => {
        impl Opcode {
            $(
                #[doc = concat!("`", $name, "` (stable id ", stringify!($id), ").")]
                pub const $konst: Opcode = Opcode($id);
            )*

            /// Looks an opcode up by its text name.
            pub fn from_name(name: &str) -> Option<Opcode> {
                match name {
                    $( $name => Some(Opcode::$konst), )*
                    _ => None,
                }
            }
        }

        /// The registry, sorted by stable id.
        pub static REGISTRY: &[OpInfo] = &[
            $(
                OpInfo {
                    opcode: Opcode($id),
                    name: $name,
                    arity: $arity,
                    operands: $ops,
                    ty: TypeRule::$ty,
                    payload: PayloadKind::$payload,
                    flags: Flags(0 $( | Flags::$flag.0 )*),
                },
            )*
        ];
    };
}

use Arity::{AtLeast, Exact, Range};

/// Ids below this bound are looked up in [`SLOTS`]; every registry id must be below it.
const SLOT_IDS: usize = 0x500;

/// Marks an id of [`SLOTS`] that the registry does not know.
const NO_SLOT: u8 = u8::MAX;

/// Id -> position in [`REGISTRY`] (or [`NO_SLOT`]), so that [`Opcode::info`] is one load
/// instead of a binary search; built from the registry at compile time.
static SLOTS: [u8; SLOT_IDS] = {
    assert!(
        REGISTRY.len() < NO_SLOT as usize,
        "registry too large for SLOTS"
    );
    let mut slots = [NO_SLOT; SLOT_IDS];
    let mut k = 0;
    while k < REGISTRY.len() {
        let id = REGISTRY[k].opcode.0 as usize;
        assert!(id < SLOT_IDS, "opcode id too large for SLOTS");
        slots[id] = k as u8;
        k += 1;
    }
    slots
};

registry! {
    // -- the root ---------------------------------------------------------------------------
    MODULE          = 0x0001, "module",          Exact(0), "", None, None, [PARENT];
    // -- types --------------------------------------------------------------------------------
    VOID            = 0x0010, "void",            Exact(0), "", None, None, [HOISTABLE TYPE];
    I1              = 0x0011, "i1",              Exact(0), "", None, None, [HOISTABLE TYPE];
    I8              = 0x0012, "i8",              Exact(0), "", None, None, [HOISTABLE TYPE];
    I16             = 0x0013, "i16",             Exact(0), "", None, None, [HOISTABLE TYPE];
    I32             = 0x0014, "i32",             Exact(0), "", None, None, [HOISTABLE TYPE];
    I64             = 0x0015, "i64",             Exact(0), "", None, None, [HOISTABLE TYPE];
    F32             = 0x0016, "f32",             Exact(0), "", None, None, [HOISTABLE TYPE];
    F64             = 0x0017, "f64",             Exact(0), "", None, None, [HOISTABLE TYPE];
    PTR             = 0x0018, "ptr",             Exact(0), "", None, None, [HOISTABLE TYPE];
    ARRAY           = 0x0019, "array",           Exact(1), "elem", None, Int, [HOISTABLE TYPE];
    STRUCT          = 0x001A, "struct",          AtLeast(0), "field*", None, None, [HOISTABLE TYPE];
    NAMED_STRUCT    = 0x001B, "named_struct",    AtLeast(0), "field*", None, Str, [HOISTABLE TYPE];
    FN              = 0x001C, "fn",              AtLeast(1), "ret, param*", None, None, [HOISTABLE TYPE];
    // -- constants ----------------------------------------------------------------------------
    CONST_INT       = 0x0030, "const_int",       Exact(0), "", Required, Int, [HOISTABLE CONSTANT];
    CONST_FLOAT     = 0x0031, "const_float",     Exact(0), "", Required, Float, [HOISTABLE CONSTANT];
    CONST_NULL      = 0x0032, "const_null",      Exact(0), "", Required, None, [HOISTABLE CONSTANT];
    CONST_ZERO      = 0x0033, "const_zero",      Exact(0), "", Required, None, [HOISTABLE CONSTANT];
    CONST_AGGREGATE = 0x0034, "const_aggregate", AtLeast(0), "elem*", Required, None, [HOISTABLE CONSTANT];
    CONST_BYTES     = 0x0035, "const_bytes",     Exact(0), "", Required, Bytes, [HOISTABLE CONSTANT];
    // -- definitions and structure ------------------------------------------------------------
    FUNC            = 0x0050, "func",            Exact(0), "", Required, None, [PARENT DEFINITION];
    GLOBAL_VAR      = 0x0051, "global_var",      Range(0, 1), "init?", Required, None, [DEFINITION];
    GLOBAL_CONST    = 0x0052, "global_const",    Range(0, 1), "init?", Required, None, [DEFINITION];
    BLOCK           = 0x0058, "block",           Exact(0), "", None, None, [PARENT];
    PARAM           = 0x0059, "param",           Exact(0), "", Required, None, [];
    // -- integer and float arithmetic (NIR's `bin`) ---------------------------------------------
    IADD            = 0x0100, "iadd",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    ISUB            = 0x0101, "isub",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    IMUL            = 0x0102, "imul",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    SDIV            = 0x0103, "sdiv",            Exact(2), "lhs, rhs", Required, None, [MAY_TRAP IN_PROC];
    UDIV            = 0x0104, "udiv",            Exact(2), "lhs, rhs", Required, None, [MAY_TRAP IN_PROC];
    SREM            = 0x0105, "srem",            Exact(2), "lhs, rhs", Required, None, [MAY_TRAP IN_PROC];
    UREM            = 0x0106, "urem",            Exact(2), "lhs, rhs", Required, None, [MAY_TRAP IN_PROC];
    SHL             = 0x0107, "shl",             Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    LSHR            = 0x0108, "lshr",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    ASHR            = 0x0109, "ashr",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    AND             = 0x010A, "and",             Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    OR              = 0x010B, "or",              Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    XOR             = 0x010C, "xor",             Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    FADD            = 0x010D, "fadd",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    FSUB            = 0x010E, "fsub",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    FMUL            = 0x010F, "fmul",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    FDIV            = 0x0110, "fdiv",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    FREM            = 0x0111, "frem",            Exact(2), "lhs, rhs", Required, None, [IN_PROC];
    // -- comparisons (Ark's ICMP/FCMP condition codes) ------------------------------------------
    ICMP            = 0x0120, "icmp",            Exact(2), "lhs, rhs", Required, IntCC, [IN_PROC];
    FCMP            = 0x0121, "fcmp",            Exact(2), "lhs, rhs", Required, FloatCC, [IN_PROC];
    // -- conversions (NIR's `conv`) -------------------------------------------------------------
    TRUNC           = 0x0130, "trunc",           Exact(1), "value", Required, None, [IN_PROC];
    ZEXT            = 0x0131, "zext",            Exact(1), "value", Required, None, [IN_PROC];
    SEXT            = 0x0132, "sext",            Exact(1), "value", Required, None, [IN_PROC];
    FPTRUNC         = 0x0133, "fptrunc",         Exact(1), "value", Required, None, [IN_PROC];
    FPEXT           = 0x0134, "fpext",           Exact(1), "value", Required, None, [IN_PROC];
    FPTOUI          = 0x0135, "fptoui",          Exact(1), "value", Required, None, [IN_PROC];
    FPTOSI          = 0x0136, "fptosi",          Exact(1), "value", Required, None, [IN_PROC];
    UITOFP          = 0x0137, "uitofp",          Exact(1), "value", Required, None, [IN_PROC];
    SITOFP          = 0x0138, "sitofp",          Exact(1), "value", Required, None, [IN_PROC];
    PTRTOINT        = 0x0139, "ptrtoint",        Exact(1), "value", Required, None, [IN_PROC];
    INTTOPTR        = 0x013A, "inttoptr",        Exact(1), "value", Required, None, [IN_PROC];
    BITCAST         = 0x013B, "bitcast",         Exact(1), "value", Required, None, [IN_PROC];
    SELECT          = 0x0140, "select",          Exact(3), "cond, if_true, if_false", Required, None, [IN_PROC];
    // -- memory ---------------------------------------------------------------------------------
    STACKALLOC      = 0x0150, "stackalloc",      Exact(1), "type", Required, None, [SIDE_EFFECTS];
    LOAD            = 0x0151, "load",            Exact(1), "ptr", Required, None, [SIDE_EFFECTS MAY_TRAP];
    STORE           = 0x0152, "store",           Exact(2), "ptr, value", None, None, [SIDE_EFFECTS MAY_TRAP];
    ELEM            = 0x0153, "elem",            AtLeast(3), "type, ptr, index+", Required, None, [IN_PROC];
    EXTRACT         = 0x0154, "extract",         Exact(1), "aggregate", Required, Int, [IN_PROC];
    INSERT          = 0x0155, "insert",          Exact(2), "aggregate, value", Required, Int, [IN_PROC];
    // -- calls ----------------------------------------------------------------------------------
    CALL            = 0x0160, "call",            AtLeast(1), "callee, arg*", Optional, None, [SIDE_EFFECTS MAY_TRAP];
    CALL_INDIRECT   = 0x0161, "call_indirect",   AtLeast(2), "signature, callee, arg*", Optional, None, [SIDE_EFFECTS MAY_TRAP];
    // -- terminators ----------------------------------------------------------------------------
    RET             = 0x0180, "ret",             Range(0, 1), "value?", None, None, [TERMINATOR SIDE_EFFECTS];
    JUMP            = 0x0181, "jump",            AtLeast(1), "target, arg*", None, None, [TERMINATOR SIDE_EFFECTS];
    BR              = 0x0182, "br",              AtLeast(3), "cond, then, arg*, else, arg*", None, None, [TERMINATOR SIDE_EFFECTS];
    SWITCH          = 0x0183, "switch",          AtLeast(2), "value, case_value*, default, arg*, (case, arg*)*", None, None, [TERMINATOR SIDE_EFFECTS];
    UNREACHABLE     = 0x0184, "unreachable",     Exact(0), "", None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    TRAP            = 0x0185, "trap",            Exact(0), "", None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    // -- decorations ----------------------------------------------------------------------------
    EXPORT          = 0x0200, "export",          Exact(0), "", None, Str, [DECORATION];
    IMPORT          = 0x0201, "import",          Exact(0), "", None, Str, [DECORATION];
    PIN             = 0x0202, "pin",             Exact(1), "def", None, None, [DECORATION];
    PIN_IF          = 0x0203, "pin_if",          Exact(2), "def, cond", None, None, [DECORATION];
    PIN_WEAK        = 0x0204, "pin_weak",        Exact(1), "def", None, None, [DECORATION];
    STUB            = 0x0205, "stub",            Exact(0), "", None, None, [DECORATION];
    EXTERN          = 0x0206, "extern",          Exact(0), "", None, Str, [DECORATION];
    WEAK            = 0x0207, "weak",            Exact(0), "", None, None, [DECORATION];
    LINKONCE        = 0x0208, "linkonce",        Exact(0), "", None, None, [DECORATION];
    INLINE_HINT     = 0x0209, "inline_hint",     Exact(0), "", None, None, [DECORATION];
    INLINE_ALWAYS   = 0x020A, "inline_always",   Exact(0), "", None, None, [DECORATION];
    INLINE_NEVER    = 0x020B, "inline_never",    Exact(0), "", None, None, [DECORATION];
    PURE            = 0x020C, "pure",            Exact(0), "", None, None, [DECORATION];
    NAME_HINT       = 0x020D, "name_hint",       Exact(0), "", None, Str, [DECORATION];
    LOC             = 0x020E, "loc",             Exact(2), "line, column", None, Str, [DECORATION];
    // -- generics (format 1.1): validated before link, specialized after ---------------------
    GENERIC         = 0x0300, "generic",         AtLeast(0), "param*", Optional, None, [PARENT DEFINITION];
    TYPE_PARAM      = 0x0301, "type_param",      Exact(1), "generic", None, Int, [HOISTABLE TYPE];
    WITNESS_PARAM   = 0x0302, "witness_param",   Exact(2), "generic, type_param", Required, Int, [HOISTABLE];
    SPECIALIZE      = 0x0303, "specialize",      AtLeast(1), "generic, arg*", Optional, None, [HOISTABLE];
    INTERFACE       = 0x0304, "interface",       AtLeast(0), "requirement*", None, None, [DEFINITION];
    INTERFACE_REQ   = 0x0305, "interface_req",   Exact(0), "", Required, None, [DEFINITION];
    WITNESS_TABLE   = 0x0306, "witness_table",   Exact(1), "type", Required, None, [PARENT DEFINITION];
    WITNESS_ENTRY   = 0x0307, "witness_entry",   Exact(2), "requirement, impl", None, None, [];
    LOOKUP_WITNESS  = 0x0308, "lookup_witness",  Exact(2), "witness, requirement", Required, None, [];
    // -- NOIR (format 1.2): the blockless function form, shared/seeds/noir.txt --------------
    PROC            = 0x0400, "proc",            Exact(0), "", Required, None, [PARENT DEFINITION];
    EVENT           = 0x0401, "event",           Exact(0), "", None, None, [NOIR];
    CUE             = 0x0402, "cue",             Exact(1), "event", None, None, [SIDE_EFFECTS NOIR];
    VAR             = 0x0403, "var",             Exact(1), "init", Required, None, [NOIR];
    NEXT            = 0x0404, "next",            Exact(2), "var, value", None, None, [SIDE_EFFECTS NOIR];
    CASE            = 0x0405, "case",            AtLeast(2), "value, case_value+", None, None, [NOIR];
    PHI             = 0x0406, "phi",             AtLeast(1), "value+", Required, None, [NOIR];
    COALESCE        = 0x0407, "coalesce",        AtLeast(1), "value+", Required, None, [NOIR];
    RESULT          = 0x0408, "result",          Range(0, 1), "value?", None, None, [];
    WHEN            = 0x0410, "when",            AtLeast(1), "dep+", None, None, [DECORATION];
    UNLESS          = 0x0411, "unless",          AtLeast(1), "dep+", None, None, [DECORATION];
}

/// Defines an opcode group: a constant array and a predicate that matches the same list (a
/// `matches!`, so the test costs what a `match` arm costs).
macro_rules! opcode_groups {
    ($( $(#[$doc:meta])* $konst:ident, $pred:ident, [$($op:ident),* $(,)?]; )*) => {
        impl Opcode {
            $(
                $(#[$doc])*
                pub const $konst: [Opcode; [$(Opcode::$op),*].len()] = [$(Opcode::$op),*];

                #[doc = concat!("Whether this is one of [`Opcode::", stringify!($konst), "`].")]
                #[inline]
                pub fn $pred(self) -> bool {
                    matches!(self, $(Opcode::$op)|*)
                }
            )*
        }
    };
}

opcode_groups! {
    /// The integer binary operations (NIR's `bin` on integers): both operands and the result
    /// have one integer type.
    INT_BINARY, is_int_binary,
        [IADD, ISUB, IMUL, SDIV, UDIV, SREM, UREM, SHL, LSHR, ASHR, AND, OR, XOR];
    /// The float binary operations: both operands and the result have one float type.
    FLOAT_BINARY, is_float_binary, [FADD, FSUB, FMUL, FDIV, FREM];
    /// The conversions (NIR's `conv`): one operand, the result type is the target.
    CONVERSIONS, is_conversion,
        [TRUNC, ZEXT, SEXT, FPTRUNC, FPEXT, FPTOUI, FPTOSI, UITOFP, SITOFP, PTRTOINT, INTTOPTR, BITCAST];
}

impl Opcode {
    /// The registry entry, or `None` for an opaque (unknown) opcode.
    #[inline]
    pub fn info(self) -> Option<&'static OpInfo> {
        let slot = *SLOTS.get(usize::from(self.0))?;
        REGISTRY.get(usize::from(slot))
    }

    /// Whether the registry knows this opcode.
    #[inline]
    pub fn is_known(self) -> bool {
        self.info().is_some()
    }

    /// The text name; `None` for an opaque opcode.
    #[inline]
    pub fn name(self) -> Option<&'static str> {
        self.info().map(|i| i.name)
    }

    /// The flags; empty for an opaque opcode.
    #[inline]
    pub fn flags(self) -> Flags {
        self.info().map_or(Flags::NONE, |i| i.flags)
    }

    /// The payload kind; `None` for an opaque opcode (its payload is kept as read).
    #[inline]
    pub fn payload_kind(self) -> Option<PayloadKind> {
        self.info().map(|i| i.payload)
    }

    /// Whether instructions of this opcode are deduplicated.
    #[inline]
    pub fn is_hoistable(self) -> bool {
        self.flags().contains(Flags::HOISTABLE)
    }

    /// Whether this opcode is a type.
    #[inline]
    pub fn is_type(self) -> bool {
        self.flags().contains(Flags::TYPE)
    }

    /// Whether this opcode is a constant.
    #[inline]
    pub fn is_constant(self) -> bool {
        self.flags().contains(Flags::CONSTANT)
    }

    /// Whether this opcode ends a block.
    #[inline]
    pub fn is_terminator(self) -> bool {
        self.flags().contains(Flags::TERMINATOR)
    }

    /// Whether this opcode is a decoration.
    #[inline]
    pub fn is_decoration(self) -> bool {
        self.flags().contains(Flags::DECORATION)
    }

    /// Whether this opcode is a module-level definition.
    #[inline]
    pub fn is_definition(self) -> bool {
        self.flags().contains(Flags::DEFINITION)
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// Known opcodes print their name; opaque ones print `#<id>`, the spelling the text format
/// uses for them.
impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "#{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The dense id table answers exactly what a search of the registry would.
    #[test]
    fn slots_agree_with_registry() {
        for id in 0..=u16::MAX {
            let searched = REGISTRY.iter().find(|info| info.opcode.0 == id);
            assert_eq!(
                Opcode(id).info().map(|i| i.opcode),
                searched.map(|i| i.opcode),
                "id {id:#x}"
            );
        }
    }

    #[test]
    fn registry_sorted_and_unique() {
        let mut names = HashSet::new();
        for pair in REGISTRY.windows(2) {
            assert!(
                pair[0].opcode.0 < pair[1].opcode.0,
                "{} not sorted",
                pair[1].name
            );
        }
        for info in REGISTRY {
            assert!(names.insert(info.name), "duplicate name {}", info.name);
            assert_eq!(Opcode::from_name(info.name), Some(info.opcode));
            assert_eq!(info.opcode.info().unwrap().name, info.name);
        }
    }

    #[test]
    fn decorations_and_hoistables_are_exclusive() {
        for info in REGISTRY {
            let f = info.flags;
            assert!(!(f.contains(Flags::DECORATION) && f.contains(Flags::HOISTABLE)));
            assert!(!(f.contains(Flags::TERMINATOR) && f.contains(Flags::HOISTABLE)));
            if f.contains(Flags::TYPE) {
                assert_eq!(
                    info.ty,
                    TypeRule::None,
                    "{} is a type and has a type",
                    info.name
                );
            }
        }
    }

    #[test]
    fn groups_agree_with_the_registry() {
        for op in Opcode::INT_BINARY.iter().chain(&Opcode::FLOAT_BINARY) {
            assert_eq!(op.info().unwrap().arity, Arity::Exact(2), "{op}");
            assert!(op.is_int_binary() != op.is_float_binary(), "{op}");
        }
        for op in Opcode::CONVERSIONS {
            assert_eq!(op.info().unwrap().arity, Arity::Exact(1), "{op}");
            assert!(op.is_conversion() && !op.is_int_binary() && !op.is_float_binary());
        }
        let members = REGISTRY.iter().filter(|i| {
            let op = i.opcode;
            op.is_int_binary() || op.is_float_binary() || op.is_conversion()
        });
        assert_eq!(members.count(), 13 + 5 + 12);
    }

    #[test]
    fn unknown_opcodes_are_opaque() {
        let op = Opcode(0x7777);
        assert!(!op.is_known());
        assert_eq!(op.to_string(), "#30583");
        assert_eq!(op.flags(), Flags::NONE);
    }
}
