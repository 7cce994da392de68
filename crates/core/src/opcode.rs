//! The opcode registry: the single source of truth for every instruction kind.
//!
//! Each opcode has a text name, a **stable numeric id** (what the binary format stores; never
//! reused, never renumbered), an operand signature (the [`Role`] of each operand, from which
//! its arity follows), a result-type rule, a payload kind and flags.
//! Everything else (parser, printer, verifier, writer, reader) reads this table; nothing else
//! lists opcodes. An id the table does not know is kept as an *opaque* opcode: it loads, prints
//! and re-serializes losslessly, and only the verifier and back ends reject it.
//!
//! `spec/ir.md` carries the same table; a test checks that the two agree.

use std::fmt;

use crate::roles::{Arity, Role, Signature, Slot};

/// An opcode, named by its stable numeric id. Ids the registry does not know are allowed
/// ([`Opcode::info`] returns `None` for them) so that newer modules stay readable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub u16);

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
    /// Operand count, computed from [`OpInfo::signature`].
    pub arity: Arity,
    /// What each operand stands for ([`Role`]), slot by slot; its `Display` is the spec's
    /// operand column (`cond, then, arg*, else, arg*`).
    pub signature: Signature,
    /// Whether it has a result type.
    pub ty: TypeRule,
    /// Its payload kind.
    pub payload: PayloadKind,
    /// Its flags.
    pub flags: Flags,
}

macro_rules! registry {
    ($( $konst:ident = $id:literal, $name:literal, [$($role:ident $slot:literal),*], $ty:ident, $payload:ident, [$($flag:ident)*]; )*) => {
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
                    arity: Signature(&[$(Slot::new(Role::$role, $slot)),*]).arity(),
                    signature: Signature(&[$(Slot::new(Role::$role, $slot)),*]),
                    ty: TypeRule::$ty,
                    payload: PayloadKind::$payload,
                    flags: Flags(0 $( | Flags::$flag.0 )*),
                },
            )*
        ];
    };
}

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
    MODULE          = 0x0001, "module",          [], None, None, [PARENT];
    // -- types --------------------------------------------------------------------------------
    VOID            = 0x0010, "void",            [], None, None, [HOISTABLE TYPE];
    I1              = 0x0011, "i1",              [], None, None, [HOISTABLE TYPE];
    I8              = 0x0012, "i8",              [], None, None, [HOISTABLE TYPE];
    I16             = 0x0013, "i16",             [], None, None, [HOISTABLE TYPE];
    I32             = 0x0014, "i32",             [], None, None, [HOISTABLE TYPE];
    I64             = 0x0015, "i64",             [], None, None, [HOISTABLE TYPE];
    F32             = 0x0016, "f32",             [], None, None, [HOISTABLE TYPE];
    F64             = 0x0017, "f64",             [], None, None, [HOISTABLE TYPE];
    PTR             = 0x0018, "ptr",             [], None, None, [HOISTABLE TYPE];
    ARRAY           = 0x0019, "array",           [Type "elem"], None, Int, [HOISTABLE TYPE];
    STRUCT          = 0x001A, "struct",          [Type "field*"], None, None, [HOISTABLE TYPE];
    NAMED_STRUCT    = 0x001B, "named_struct",    [Type "field*"], None, Str, [HOISTABLE TYPE];
    FN              = 0x001C, "fn",              [Type "ret", Type "param*"], None, None, [HOISTABLE TYPE];
    // -- constants ----------------------------------------------------------------------------
    CONST_INT       = 0x0030, "const_int",       [], Required, Int, [HOISTABLE CONSTANT];
    CONST_FLOAT     = 0x0031, "const_float",     [], Required, Float, [HOISTABLE CONSTANT];
    CONST_NULL      = 0x0032, "const_null",      [], Required, None, [HOISTABLE CONSTANT];
    CONST_ZERO      = 0x0033, "const_zero",      [], Required, None, [HOISTABLE CONSTANT];
    CONST_AGGREGATE = 0x0034, "const_aggregate", [Value "elem*"], Required, None, [HOISTABLE CONSTANT];
    CONST_BYTES     = 0x0035, "const_bytes",     [], Required, Bytes, [HOISTABLE CONSTANT];
    // -- definitions and structure ------------------------------------------------------------
    FUNC            = 0x0050, "func",            [], Required, None, [PARENT DEFINITION];
    GLOBAL_VAR      = 0x0051, "global_var",      [Value "init?"], Required, None, [DEFINITION];
    GLOBAL_CONST    = 0x0052, "global_const",    [Value "init?"], Required, None, [DEFINITION];
    BLOCK           = 0x0058, "block",           [], None, None, [PARENT];
    PARAM           = 0x0059, "param",           [], Required, None, [];
    // -- integer and float arithmetic (NIR's `bin`) ---------------------------------------------
    IADD            = 0x0100, "iadd",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    ISUB            = 0x0101, "isub",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    IMUL            = 0x0102, "imul",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    SDIV            = 0x0103, "sdiv",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    UDIV            = 0x0104, "udiv",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    SREM            = 0x0105, "srem",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    UREM            = 0x0106, "urem",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    SHL             = 0x0107, "shl",             [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    LSHR            = 0x0108, "lshr",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    ASHR            = 0x0109, "ashr",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    AND             = 0x010A, "and",             [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    OR              = 0x010B, "or",              [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    XOR             = 0x010C, "xor",             [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FADD            = 0x010D, "fadd",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FSUB            = 0x010E, "fsub",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FMUL            = 0x010F, "fmul",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FDIV            = 0x0110, "fdiv",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FREM            = 0x0111, "frem",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    // -- comparisons (Ark's ICMP/FCMP condition codes) ------------------------------------------
    ICMP            = 0x0120, "icmp",            [Value "lhs", Value "rhs"], Required, IntCC, [IN_PROC];
    FCMP            = 0x0121, "fcmp",            [Value "lhs", Value "rhs"], Required, FloatCC, [IN_PROC];
    // -- conversions (NIR's `conv`) -------------------------------------------------------------
    TRUNC           = 0x0130, "trunc",           [Value "value"], Required, None, [IN_PROC];
    ZEXT            = 0x0131, "zext",            [Value "value"], Required, None, [IN_PROC];
    SEXT            = 0x0132, "sext",            [Value "value"], Required, None, [IN_PROC];
    FPTRUNC         = 0x0133, "fptrunc",         [Value "value"], Required, None, [IN_PROC];
    FPEXT           = 0x0134, "fpext",           [Value "value"], Required, None, [IN_PROC];
    FPTOUI          = 0x0135, "fptoui",          [Value "value"], Required, None, [IN_PROC];
    FPTOSI          = 0x0136, "fptosi",          [Value "value"], Required, None, [IN_PROC];
    UITOFP          = 0x0137, "uitofp",          [Value "value"], Required, None, [IN_PROC];
    SITOFP          = 0x0138, "sitofp",          [Value "value"], Required, None, [IN_PROC];
    PTRTOINT        = 0x0139, "ptrtoint",        [Value "value"], Required, None, [IN_PROC];
    INTTOPTR        = 0x013A, "inttoptr",        [Value "value"], Required, None, [IN_PROC];
    BITCAST         = 0x013B, "bitcast",         [Value "value"], Required, None, [IN_PROC];
    SELECT          = 0x0140, "select",          [Value "cond", Value "if_true", Value "if_false"], Required, None, [IN_PROC];
    // -- memory ---------------------------------------------------------------------------------
    STACKALLOC      = 0x0150, "stackalloc",      [Type "type"], Required, None, [SIDE_EFFECTS];
    LOAD            = 0x0151, "load",            [Value "ptr"], Required, None, [SIDE_EFFECTS MAY_TRAP];
    STORE           = 0x0152, "store",           [Value "ptr", Value "value"], None, None, [SIDE_EFFECTS MAY_TRAP];
    ELEM            = 0x0153, "elem",            [Type "type", Value "ptr", Value "index+"], Required, None, [IN_PROC];
    EXTRACT         = 0x0154, "extract",         [Value "aggregate"], Required, Int, [IN_PROC];
    INSERT          = 0x0155, "insert",          [Value "aggregate", Value "value"], Required, Int, [IN_PROC];
    // -- calls ----------------------------------------------------------------------------------
    CALL            = 0x0160, "call",            [Def "callee", Value "arg*"], Optional, None, [SIDE_EFFECTS MAY_TRAP];
    CALL_INDIRECT   = 0x0161, "call_indirect",   [Type "signature", Value "callee", Value "arg*"], Optional, None, [SIDE_EFFECTS MAY_TRAP];
    // -- terminators ----------------------------------------------------------------------------
    RET             = 0x0180, "ret",             [Value "value?"], None, None, [TERMINATOR SIDE_EFFECTS];
    JUMP            = 0x0181, "jump",            [Edge "target"], None, None, [TERMINATOR SIDE_EFFECTS];
    BR              = 0x0182, "br",              [Value "cond", Edge "then", Edge "else"], None, None, [TERMINATOR SIDE_EFFECTS];
    SWITCH          = 0x0183, "switch",          [Value "value", Const "case_value*", Edge "default", Edge "case*"], None, None, [TERMINATOR SIDE_EFFECTS];
    UNREACHABLE     = 0x0184, "unreachable",     [], None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    TRAP            = 0x0185, "trap",            [], None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    TRAP_MSG        = 0x0186, "trap_msg",        [], None, Str, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    // -- bit counts, rotates and float unary operations (format 2.1) --------------------------
    CLZ             = 0x0190, "clz",             [Value "value"], Required, None, [IN_PROC];
    CTZ             = 0x0191, "ctz",             [Value "value"], Required, None, [IN_PROC];
    POPCNT          = 0x0192, "popcnt",          [Value "value"], Required, None, [IN_PROC];
    ROTL            = 0x0193, "rotl",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    ROTR            = 0x0194, "rotr",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FNEG            = 0x0195, "fneg",            [Value "value"], Required, None, [IN_PROC];
    FABS            = 0x0196, "fabs",            [Value "value"], Required, None, [IN_PROC];
    FCOPYSIGN       = 0x0197, "fcopysign",       [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FMIN            = 0x0198, "fmin",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FMAX            = 0x0199, "fmax",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FSQRT           = 0x019A, "fsqrt",           [Value "value"], Required, None, [IN_PROC];
    FCEIL           = 0x019B, "fceil",           [Value "value"], Required, None, [IN_PROC];
    FFLOOR          = 0x019C, "ffloor",          [Value "value"], Required, None, [IN_PROC];
    FTRUNC          = 0x019D, "ftrunc",          [Value "value"], Required, None, [IN_PROC];
    FNEAREST        = 0x019E, "fnearest",        [Value "value"], Required, None, [IN_PROC];
    // -- decorations ----------------------------------------------------------------------------
    EXPORT          = 0x0200, "export",          [], None, Str, [DECORATION];
    IMPORT          = 0x0201, "import",          [], None, Str, [DECORATION];
    PIN             = 0x0202, "pin",             [Def "def"], None, None, [DECORATION];
    PIN_IF          = 0x0203, "pin_if",          [Def "def", Def "cond"], None, None, [DECORATION];
    PIN_WEAK        = 0x0204, "pin_weak",        [Def "def"], None, None, [DECORATION];
    STUB            = 0x0205, "stub",            [], None, None, [DECORATION];
    EXTERN          = 0x0206, "extern",          [], None, Str, [DECORATION];
    WEAK            = 0x0207, "weak",            [], None, None, [DECORATION];
    LINKONCE        = 0x0208, "linkonce",        [], None, None, [DECORATION];
    INLINE_HINT     = 0x0209, "inline_hint",     [], None, None, [DECORATION];
    INLINE_ALWAYS   = 0x020A, "inline_always",   [], None, None, [DECORATION];
    INLINE_NEVER    = 0x020B, "inline_never",    [], None, None, [DECORATION];
    PURE            = 0x020C, "pure",            [], None, None, [DECORATION];
    NAME_HINT       = 0x020D, "name_hint",       [], None, Str, [DECORATION];
    LOC             = 0x020E, "loc",             [Const "line", Const "column"], None, Str, [DECORATION];
    // -- generics (format 1.1): validated before link, specialized after ---------------------
    GENERIC         = 0x0300, "generic",         [Any "param*"], Optional, None, [PARENT DEFINITION];
    TYPE_PARAM      = 0x0301, "type_param",      [Def "generic"], None, Int, [HOISTABLE TYPE];
    WITNESS_PARAM   = 0x0302, "witness_param",   [Def "generic", Type "type_param"], Required, Int, [HOISTABLE];
    SPECIALIZE      = 0x0303, "specialize",      [Def "generic", Any "arg*"], Optional, None, [HOISTABLE];
    INTERFACE       = 0x0304, "interface",       [Def "requirement*"], None, None, [DEFINITION];
    INTERFACE_REQ   = 0x0305, "interface_req",   [], Required, None, [DEFINITION];
    WITNESS_TABLE   = 0x0306, "witness_table",   [Type "type"], Required, None, [PARENT DEFINITION];
    WITNESS_ENTRY   = 0x0307, "witness_entry",   [Def "requirement", Def "impl"], None, None, [];
    LOOKUP_WITNESS  = 0x0308, "lookup_witness",  [Any "witness", Def "requirement"], Required, None, [];
    // -- NOIR (format 1.2): the blockless function form of the design document *NOIR* ---
    PROC            = 0x0400, "proc",            [], Required, None, [PARENT DEFINITION];
    EVENT           = 0x0401, "event",           [], None, None, [NOIR];
    CUE             = 0x0402, "cue",             [State "event"], None, None, [SIDE_EFFECTS NOIR];
    VAR             = 0x0403, "var",             [Value "init"], Required, None, [NOIR];
    NEXT            = 0x0404, "next",            [Var "var", Value "value"], None, None, [SIDE_EFFECTS NOIR];
    CASE            = 0x0405, "case",            [Value "value", Const "case_value+"], None, None, [NOIR];
    PHI             = 0x0406, "phi",             [Value "value+"], Required, None, [NOIR];
    COALESCE        = 0x0407, "coalesce",        [Value "value+"], Required, None, [NOIR];
    RESULT          = 0x0408, "result",          [Value "value?"], None, None, [];
    WHEN            = 0x0410, "when",            [State "dep+"], None, None, [DECORATION];
    UNLESS          = 0x0411, "unless",          [State "dep+"], None, None, [DECORATION];
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
        [IADD, ISUB, IMUL, SDIV, UDIV, SREM, UREM, SHL, LSHR, ASHR, AND, OR, XOR, ROTL, ROTR];
    /// The float binary operations: both operands and the result have one float type.
    FLOAT_BINARY, is_float_binary, [FADD, FSUB, FMUL, FDIV, FREM, FCOPYSIGN, FMIN, FMAX];
    /// The integer unary operations (bit counts, format 2.1): the operand and the result have
    /// one integer type.
    INT_UNARY, is_int_unary, [CLZ, CTZ, POPCNT];
    /// The float unary operations (format 2.1): the operand and the result have one float
    /// type.
    FLOAT_UNARY, is_float_unary, [FNEG, FABS, FSQRT, FCEIL, FFLOOR, FTRUNC, FNEAREST];
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
        for op in Opcode::INT_UNARY.iter().chain(&Opcode::FLOAT_UNARY) {
            assert_eq!(op.info().unwrap().arity, Arity::Exact(1), "{op}");
            assert!(op.is_int_unary() != op.is_float_unary(), "{op}");
            assert!(!op.is_conversion() && !op.is_int_binary() && !op.is_float_binary());
        }
        let members = REGISTRY.iter().filter(|i| {
            let op = i.opcode;
            op.is_int_binary()
                || op.is_float_binary()
                || op.is_conversion()
                || op.is_int_unary()
                || op.is_float_unary()
        });
        assert_eq!(members.count(), 15 + 8 + 12 + 3 + 7);
    }

    #[test]
    fn unknown_opcodes_are_opaque() {
        let op = Opcode(0x7777);
        assert!(!op.is_known());
        assert_eq!(op.to_string(), "#30583");
        assert_eq!(op.flags(), Flags::NONE);
    }
}
