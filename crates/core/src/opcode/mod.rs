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
    ($( $konst:ident $variant:ident = $id:literal, $name:literal, [$($role:ident $slot:literal),*], $ty:ident, $payload:ident, [$($flag:ident)*]; )*) => {
        /// A known opcode: one variant per registry entry, its discriminant the stable id.
        ///
        /// Code that must handle every instruction kind (the verifier, the back ends, the
        /// printer, the generator) matches on this enum without a catch-all arm, so that an
        /// opcode added to the registry fails to compile until each of them handles it. An
        /// opaque opcode has no `Op`: [`Opcode::known`] returns `None` for it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Op {
            $(
                #[doc = concat!("`", $name, "` (stable id ", stringify!($id), ").")]
                $variant = $id,
            )*
        }

        impl Op {
            /// Every known opcode, in registry (stable id) order.
            pub const ALL: &'static [Op] = &[$(Op::$variant),*];
        }

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
const SLOT_IDS: usize = 0x600;

/// Marks an id of [`SLOTS`] that the registry does not know.
const NO_SLOT: u8 = u8::MAX;

/// Id -> position in [`REGISTRY`] (or [`NO_SLOT`]), so that [`Opcode::info`] is one load
/// instead of a binary search; built from the registry at compile time.
static SLOTS: [u8; SLOT_IDS] = {
    assert!(REGISTRY.len() < NO_SLOT as usize, "registry too large");
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
    MODULE Module                   = 0x0001, "module",          [], None, None, [PARENT];
    // -- types --------------------------------------------------------------------------------
    VOID Void                       = 0x0010, "void",            [], None, None, [HOISTABLE TYPE];
    I1 I1                           = 0x0011, "i1",              [], None, None, [HOISTABLE TYPE];
    I8 I8                           = 0x0012, "i8",              [], None, None, [HOISTABLE TYPE];
    I16 I16                         = 0x0013, "i16",             [], None, None, [HOISTABLE TYPE];
    I32 I32                         = 0x0014, "i32",             [], None, None, [HOISTABLE TYPE];
    I64 I64                         = 0x0015, "i64",             [], None, None, [HOISTABLE TYPE];
    F32 F32                         = 0x0016, "f32",             [], None, None, [HOISTABLE TYPE];
    F64 F64                         = 0x0017, "f64",             [], None, None, [HOISTABLE TYPE];
    PTR Ptr                         = 0x0018, "ptr",             [], None, None, [HOISTABLE TYPE];
    ARRAY Array                     = 0x0019, "array",           [Type "elem"], None, Int, [HOISTABLE TYPE];
    STRUCT Struct                   = 0x001A, "struct",          [Type "field*"], None, None, [HOISTABLE TYPE];
    NAMED_STRUCT NamedStruct        = 0x001B, "named_struct",    [Type "field*"], None, Str, [HOISTABLE TYPE];
    FN Fn                           = 0x001C, "fn",              [Type "ret", Type "param*"], None, None, [HOISTABLE TYPE];
    // -- short vectors (format 6.3) -------------------------------------------------------------
    VEC Vec                         = 0x001D, "vec",             [Type "lane"], None, Int, [HOISTABLE TYPE];
    // -- constants ----------------------------------------------------------------------------
    CONST_INT ConstInt              = 0x0030, "const_int",       [], Required, Int, [HOISTABLE CONSTANT];
    CONST_FLOAT ConstFloat          = 0x0031, "const_float",     [], Required, Float, [HOISTABLE CONSTANT];
    CONST_NULL ConstNull            = 0x0032, "const_null",      [], Required, None, [HOISTABLE CONSTANT];
    CONST_ZERO ConstZero            = 0x0033, "const_zero",      [], Required, None, [HOISTABLE CONSTANT];
    CONST_AGGREGATE ConstAggregate  = 0x0034, "const_aggregate", [Value "elem*"], Required, None, [HOISTABLE CONSTANT];
    CONST_BYTES ConstBytes          = 0x0035, "const_bytes",     [], Required, Bytes, [HOISTABLE CONSTANT];
    // -- definitions and structure ------------------------------------------------------------
    FUNC Func                       = 0x0050, "func",            [], Required, None, [PARENT DEFINITION];
    GLOBAL_VAR GlobalVar            = 0x0051, "global_var",      [Value "init?"], Required, None, [DEFINITION];
    GLOBAL_CONST GlobalConst        = 0x0052, "global_const",    [Value "init?"], Required, None, [DEFINITION];
    BLOCK Block                     = 0x0058, "block",           [], None, None, [PARENT];
    PARAM Param                     = 0x0059, "param",           [], Required, None, [];
    // -- integer and float arithmetic (NIR's `bin`) ---------------------------------------------
    IADD Iadd                       = 0x0100, "iadd",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    ISUB Isub                       = 0x0101, "isub",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    IMUL Imul                       = 0x0102, "imul",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    SDIV Sdiv                       = 0x0103, "sdiv",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    UDIV Udiv                       = 0x0104, "udiv",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    SREM Srem                       = 0x0105, "srem",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    UREM Urem                       = 0x0106, "urem",            [Value "lhs", Value "rhs"], Required, None, [MAY_TRAP IN_PROC];
    SHL Shl                         = 0x0107, "shl",             [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    LSHR Lshr                       = 0x0108, "lshr",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    ASHR Ashr                       = 0x0109, "ashr",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    AND And                         = 0x010A, "and",             [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    OR Or                           = 0x010B, "or",              [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    XOR Xor                         = 0x010C, "xor",             [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FADD Fadd                       = 0x010D, "fadd",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FSUB Fsub                       = 0x010E, "fsub",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FMUL Fmul                       = 0x010F, "fmul",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FDIV Fdiv                       = 0x0110, "fdiv",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FREM Frem                       = 0x0111, "frem",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    // -- comparisons (Ark's ICMP/FCMP condition codes) ------------------------------------------
    ICMP Icmp                       = 0x0120, "icmp",            [Value "lhs", Value "rhs"], Required, IntCC, [IN_PROC];
    FCMP Fcmp                       = 0x0121, "fcmp",            [Value "lhs", Value "rhs"], Required, FloatCC, [IN_PROC];
    // -- conversions (NIR's `conv`) -------------------------------------------------------------
    TRUNC Trunc                     = 0x0130, "trunc",           [Value "value"], Required, None, [IN_PROC];
    ZEXT Zext                       = 0x0131, "zext",            [Value "value"], Required, None, [IN_PROC];
    SEXT Sext                       = 0x0132, "sext",            [Value "value"], Required, None, [IN_PROC];
    FPTRUNC Fptrunc                 = 0x0133, "fptrunc",         [Value "value"], Required, None, [IN_PROC];
    FPEXT Fpext                     = 0x0134, "fpext",           [Value "value"], Required, None, [IN_PROC];
    FPTOUI Fptoui                   = 0x0135, "fptoui",          [Value "value"], Required, None, [IN_PROC];
    FPTOSI Fptosi                   = 0x0136, "fptosi",          [Value "value"], Required, None, [IN_PROC];
    UITOFP Uitofp                   = 0x0137, "uitofp",          [Value "value"], Required, None, [IN_PROC];
    SITOFP Sitofp                   = 0x0138, "sitofp",          [Value "value"], Required, None, [IN_PROC];
    PTRTOINT Ptrtoint               = 0x0139, "ptrtoint",        [Value "value"], Required, None, [IN_PROC];
    INTTOPTR Inttoptr               = 0x013A, "inttoptr",        [Value "value"], Required, None, [IN_PROC];
    BITCAST Bitcast                 = 0x013B, "bitcast",         [Value "value"], Required, None, [IN_PROC];
    SELECT Select                   = 0x0140, "select",          [Value "cond", Value "if_true", Value "if_false"], Required, None, [IN_PROC];
    // -- memory ---------------------------------------------------------------------------------
    STACKALLOC Stackalloc           = 0x0150, "stackalloc",      [Type "type"], Required, None, [SIDE_EFFECTS];
    LOAD Load                       = 0x0151, "load",            [Value "ptr"], Required, None, [SIDE_EFFECTS MAY_TRAP];
    STORE Store                     = 0x0152, "store",           [Value "ptr", Value "value"], None, None, [SIDE_EFFECTS MAY_TRAP];
    ELEM Elem                       = 0x0153, "elem",            [Type "type", Value "ptr", Value "index+"], Required, None, [IN_PROC];
    EXTRACT Extract                 = 0x0154, "extract",         [Value "aggregate"], Required, Int, [IN_PROC];
    INSERT Insert                   = 0x0155, "insert",          [Value "aggregate", Value "value"], Required, Int, [IN_PROC];
    // -- linear memories (format 6.4): bounds-checked accesses of a `{ptr, i64, i32, i64}` record -
    MEM_LOAD MemLoad                = 0x0156, "mem_load",        [Def "memory", Value "address"], Required, Int, [SIDE_EFFECTS MAY_TRAP];
    MEM_STORE MemStore              = 0x0157, "mem_store",       [Def "memory", Value "address", Value "value"], None, Int, [SIDE_EFFECTS MAY_TRAP];
    MEM_GROW MemGrow                = 0x0158, "mem_grow",        [Def "memory", Value "delta"], Required, None, [SIDE_EFFECTS];
    // -- calls ----------------------------------------------------------------------------------
    CALL Call                       = 0x0160, "call",            [Def "callee", Value "arg*"], Optional, None, [SIDE_EFFECTS MAY_TRAP];
    CALL_INDIRECT CallIndirect      = 0x0161, "call_indirect",   [Type "signature", Value "callee", Value "arg*"], Optional, None, [SIDE_EFFECTS MAY_TRAP];
    // -- terminators ----------------------------------------------------------------------------
    RET Ret                         = 0x0180, "ret",             [Value "value?"], None, None, [TERMINATOR SIDE_EFFECTS];
    JUMP Jump                       = 0x0181, "jump",            [Edge "target"], None, None, [TERMINATOR SIDE_EFFECTS];
    BR Br                           = 0x0182, "br",              [Value "cond", Edge "then", Edge "else"], None, None, [TERMINATOR SIDE_EFFECTS];
    SWITCH Switch                   = 0x0183, "switch",          [Value "value", Const "case_value*", Edge "default", Edge "case*"], None, None, [TERMINATOR SIDE_EFFECTS];
    UNREACHABLE Unreachable         = 0x0184, "unreachable",     [], None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    TRAP Trap                       = 0x0185, "trap",            [], None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    TRAP_MSG TrapMsg                = 0x0186, "trap_msg",        [], None, Str, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    // -- tail calls (format 6.1): a call that replaces the caller's activation ---------------
    TAIL_CALL TailCall              = 0x0187, "tail_call",       [Def "callee", Value "arg*"], None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    TAIL_CALL_INDIRECT TailCallIndirect = 0x0188, "tail_call_indirect", [Type "signature", Value "callee", Value "arg*"], None, None, [TERMINATOR SIDE_EFFECTS MAY_TRAP];
    // -- bit counts, rotates and float unary operations (format 2.1) --------------------------
    CLZ Clz                         = 0x0190, "clz",             [Value "value"], Required, None, [IN_PROC];
    CTZ Ctz                         = 0x0191, "ctz",             [Value "value"], Required, None, [IN_PROC];
    POPCNT Popcnt                   = 0x0192, "popcnt",          [Value "value"], Required, None, [IN_PROC];
    ROTL Rotl                       = 0x0193, "rotl",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    ROTR Rotr                       = 0x0194, "rotr",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FNEG Fneg                       = 0x0195, "fneg",            [Value "value"], Required, None, [IN_PROC];
    FABS Fabs                       = 0x0196, "fabs",            [Value "value"], Required, None, [IN_PROC];
    FCOPYSIGN Fcopysign             = 0x0197, "fcopysign",       [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FMIN Fmin                       = 0x0198, "fmin",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FMAX Fmax                       = 0x0199, "fmax",            [Value "lhs", Value "rhs"], Required, None, [IN_PROC];
    FSQRT Fsqrt                     = 0x019A, "fsqrt",           [Value "value"], Required, None, [IN_PROC];
    FCEIL Fceil                     = 0x019B, "fceil",           [Value "value"], Required, None, [IN_PROC];
    FFLOOR Ffloor                   = 0x019C, "ffloor",          [Value "value"], Required, None, [IN_PROC];
    FTRUNC Ftrunc                   = 0x019D, "ftrunc",          [Value "value"], Required, None, [IN_PROC];
    FNEAREST Fnearest               = 0x019E, "fnearest",        [Value "value"], Required, None, [IN_PROC];
    // -- vector lanes (format 6.3) ----------------------------------------------------------
    SPLAT Splat                     = 0x01A0, "splat",           [Value "value"], Required, None, [IN_PROC];
    SHUFFLE Shuffle                 = 0x01A1, "shuffle",         [Value "lhs", Value "rhs"], Required, Bytes, [IN_PROC];
    SWIZZLE Swizzle                 = 0x01A2, "swizzle",         [Value "vector", Value "indices"], Required, None, [IN_PROC];
    // -- decorations ----------------------------------------------------------------------------
    EXPORT Export                   = 0x0200, "export",          [], None, Str, [DECORATION];
    IMPORT Import                   = 0x0201, "import",          [], None, Str, [DECORATION];
    PIN Pin                         = 0x0202, "pin",             [Def "def"], None, None, [DECORATION];
    PIN_IF PinIf                    = 0x0203, "pin_if",          [Def "def", Def "cond"], None, None, [DECORATION];
    PIN_WEAK PinWeak                = 0x0204, "pin_weak",        [Def "def"], None, None, [DECORATION];
    STUB Stub                       = 0x0205, "stub",            [], None, None, [DECORATION];
    EXTERN Extern                   = 0x0206, "extern",          [], None, Str, [DECORATION];
    WEAK Weak                       = 0x0207, "weak",            [], None, None, [DECORATION];
    LINKONCE Linkonce               = 0x0208, "linkonce",        [], None, None, [DECORATION];
    INLINE_HINT InlineHint          = 0x0209, "inline_hint",     [], None, None, [DECORATION];
    INLINE_ALWAYS InlineAlways      = 0x020A, "inline_always",   [], None, None, [DECORATION];
    INLINE_NEVER InlineNever        = 0x020B, "inline_never",    [], None, None, [DECORATION];
    PURE Pure                       = 0x020C, "pure",            [], None, None, [DECORATION];
    NAME_HINT NameHint              = 0x020D, "name_hint",       [], None, Str, [DECORATION];
    LOC Loc                         = 0x020E, "loc",             [Const "line", Const "column", Any "scope?"], None, Str, [DECORATION];
    // -- generics policy (format 6.0): how the link compiles one generic --------------------------
    SPECIALIZE_ALWAYS SpecializeAlways = 0x020F, "specialize_always", [], None, None, [DECORATION];
    DYNAMIC_DISPATCH DynamicDispatch = 0x0210, "dynamic_dispatch", [], None, None, [DECORATION];
    // -- inlining scopes (format 6.2): where inlined code came from, for debuggers --------------
    INLINE_SCOPE InlineScope        = 0x0211, "inline_scope",    [Any "parent?"], None, Str, [DECORATION];
    // -- NaN results (format 6.5): a function whose NaNs need not be canonical ----------------
    RELAXED_NAN RelaxedNan          = 0x0212, "relaxed_nan",     [], None, None, [DECORATION];
    // -- generics (format 1.1): validated before link, specialized after ---------------------
    GENERIC Generic                 = 0x0300, "generic",         [Any "param*"], Optional, None, [PARENT DEFINITION];
    TYPE_PARAM TypeParam            = 0x0301, "type_param",      [Def "generic"], None, Int, [HOISTABLE TYPE];
    WITNESS_PARAM WitnessParam      = 0x0302, "witness_param",   [Def "generic", Type "type_param"], Required, Int, [HOISTABLE];
    SPECIALIZE Specialize           = 0x0303, "specialize",      [Def "generic", Any "arg*"], Optional, None, [HOISTABLE];
    INTERFACE Interface             = 0x0304, "interface",       [Def "requirement*"], None, None, [DEFINITION];
    INTERFACE_REQ InterfaceReq      = 0x0305, "interface_req",   [], Required, None, [DEFINITION];
    WITNESS_TABLE WitnessTable      = 0x0306, "witness_table",   [Type "type"], Required, None, [PARENT DEFINITION];
    WITNESS_ENTRY WitnessEntry      = 0x0307, "witness_entry",   [Def "requirement", Def "impl"], None, None, [];
    LOOKUP_WITNESS LookupWitness    = 0x0308, "lookup_witness",  [Any "witness", Def "requirement"], Required, None, [];
    // -- existentials (format 6.0): values of an interface type, lowered by a full link ------
    EXISTS Exists                   = 0x0309, "exists",          [Def "interface"], None, None, [HOISTABLE TYPE];
    PACK Pack                       = 0x030A, "pack",            [Value "value", Def "witness"], Required, None, [SIDE_EFFECTS];
    EXISTS_CALL ExistsCall          = 0x030B, "exists_call",     [Value "existential", Def "requirement", Value "arg*"], Optional, None, [SIDE_EFFECTS MAY_TRAP];
    EXISTS_OPEN ExistsOpen          = 0x030C, "exists_open",     [Def "generic", Value "existential", Value "arg*"], Optional, None, [SIDE_EFFECTS MAY_TRAP];
    // -- NOIR (format 1.2): the blockless function form of the design document *NOIR* ---
    PROC Proc                       = 0x0400, "proc",            [], Required, None, [PARENT DEFINITION];
    EVENT Event                     = 0x0401, "event",           [], None, None, [NOIR];
    CUE Cue                         = 0x0402, "cue",             [State "event"], None, None, [SIDE_EFFECTS NOIR];
    VAR Var                         = 0x0403, "var",             [Value "init"], Required, None, [NOIR];
    NEXT Next                       = 0x0404, "next",            [Var "var", Value "value"], None, None, [SIDE_EFFECTS NOIR];
    CASE Case                       = 0x0405, "case",            [Value "value", Const "case_value+"], None, None, [NOIR];
    PHI Phi                         = 0x0406, "phi",             [Value "value+"], Required, None, [NOIR];
    COALESCE Coalesce               = 0x0407, "coalesce",        [Value "value+"], Required, None, [NOIR];
    RESULT Result                   = 0x0408, "result",          [Value "value?"], None, None, [];
    WHEN When                       = 0x0410, "when",            [State "dep+"], None, None, [DECORATION];
    UNLESS Unless                   = 0x0411, "unless",          [State "dep+"], None, None, [DECORATION];
    // -- objects (format 5.1): Scala Native NIR's classes, traits and modules, lowered by the linker
    CLASS Class                     = 0x0500, "class",           [Def "super*"], None, None, [PARENT DEFINITION];
    TRAIT Trait                     = 0x0501, "trait",           [Def "super*"], None, None, [PARENT DEFINITION];
    OBJECT Object                   = 0x0502, "object",          [Def "super*"], None, None, [PARENT DEFINITION];
    FIELD_DEF FieldDef              = 0x0503, "field_def",       [Type "type"], None, Str, [];
    METHOD_DEF MethodDef            = 0x0504, "method_def",      [Type "signature", Def "impl?"], None, Str, [];
    CTOR_DEF CtorDef                = 0x0505, "ctor_def",        [Def "constructor"], None, None, [];
    CLASSALLOC Classalloc           = 0x0508, "classalloc",      [Def "class"], Required, None, [SIDE_EFFECTS MAY_TRAP];
    FIELD Field                     = 0x0509, "field",           [Def "class", Value "object"], Required, Str, [MAY_TRAP];
    METHOD Method                   = 0x050A, "method",          [Value "object", Def "class"], Required, Str, [MAY_TRAP];
    DYNMETHOD Dynmethod             = 0x050B, "dynmethod",       [Value "object"], Required, Str, [MAY_TRAP];
    IS Is                           = 0x050C, "is",              [Def "type", Value "object"], Required, None, [];
    AS As                           = 0x050D, "as",              [Def "type", Value "object"], Required, None, [MAY_TRAP];
    INSTANCE Instance               = 0x050E, "instance",        [Def "object"], Required, None, [SIDE_EFFECTS MAY_TRAP];
}

// The opcode categories split the registry into disjoint parts (a test checks that they
// partition it and agree with its flags and id ranges), for the exhaustive `match`es over
// [`Op`] of code that must handle every instruction kind:
//
// * each category has a pattern macro (`op_types!()`, `op_int_binary!()`, …): a dispatch names a
//   whole category in one arm where one helper handles it, or rejects it;
// * the arithmetic categories also have an enum of their own ([`IntBinary`], [`FloatBinary`],
//   [`IntUnary`], [`FloatUnary`], [`Conversion`]; `Op::int_binary()` … convert), so that the
//   helper that writes their semantics matches on exactly its opcodes, without a catch-all.
//
// A new opcode therefore fails to compile exactly where its semantics must be written.

/// Defines the categories: for each, an exported pattern macro and, for those given an enum
/// name, the enum (see `category_enum!`).
macro_rules! categories {
    (
        $(
            $(#[$doc:meta])*
            $macro:ident $(=> $enum:ident, $conv:ident)?: [$($op:ident),* $(,)?];
        )*
    ) => {
        $(
            $(#[$doc])*
            #[macro_export]
            macro_rules! $macro {
                () => { $($crate::Op::$op)|* };
            }

            category_enum!($macro, [$($enum, $conv)?], [$($op),*]);
        )*
    };
}

/// The enum of one category, its conversions from and to [`Op`], and its list of members;
/// nothing for a category without an enum name.
macro_rules! category_enum {
    ($macro:ident, [], [$($op:ident),*]) => {};
    ($macro:ident, [$enum:ident, $conv:ident], [$($op:ident),*]) => {
        #[doc = concat!("The opcodes of [`", stringify!($macro), "!`] as an enum of their own.")]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $enum {
            $(
                #[doc = concat!("[`Op::", stringify!($op), "`].")]
                $op,
            )*
        }

        impl $enum {
            /// Every member, in registry order.
            pub const ALL: &'static [$enum] = &[$($enum::$op),*];

            /// The opcode.
            #[inline]
            pub const fn op(self) -> Op {
                match self {
                    $($enum::$op => Op::$op,)*
                }
            }
        }

        impl Op {
            #[doc = concat!("This opcode as a member of [`", stringify!($enum), "`], if it is one.")]
            #[inline]
            pub const fn $conv(self) -> Option<$enum> {
                match self {
                    $(Op::$op => Some($enum::$op),)*
                    _ => None,
                }
            }
        }

        impl fmt::Display for $enum {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.op().name())
            }
        }
    };
}

categories! {
    /// The module and its structure: definitions of functions and globals, blocks, block
    /// parameters.
    op_structure: [Module, Func, GlobalVar, GlobalConst, Block, Param];
    /// The types (flag `type`): operands of other instructions, never executed.
    op_types: [Void, I1, I8, I16, I32, I64, F32, F64, Ptr, Array, Struct, NamedStruct, Fn, Vec,
        TypeParam, Exists];
    /// The constants (flag `constant`): values a back end materializes where they are used.
    op_constants: [ConstInt, ConstFloat, ConstNull, ConstZero, ConstAggregate, ConstBytes];
    /// The integer binary operations (NIR's `bin` on integers): both operands and the result
    /// have one integer type.
    op_int_binary => IntBinary, int_binary: [Iadd, Isub, Imul, Sdiv, Udiv, Srem, Urem, Shl, Lshr,
        Ashr, And, Or, Xor, Rotl, Rotr];
    /// The float binary operations: both operands and the result have one float type.
    op_float_binary => FloatBinary, float_binary: [Fadd, Fsub, Fmul, Fdiv, Frem, Fcopysign, Fmin,
        Fmax];
    /// The integer unary operations (bit counts): the operand and the result have one integer
    /// type.
    op_int_unary => IntUnary, int_unary: [Clz, Ctz, Popcnt];
    /// The float unary operations: the operand and the result have one float type.
    op_float_unary => FloatUnary, float_unary: [Fneg, Fabs, Fsqrt, Fceil, Ffloor, Ftrunc,
        Fnearest];
    /// The conversions (NIR's `conv`): one operand, the result type is the target.
    op_conversions => Conversion, conversion: [Trunc, Zext, Sext, Fptrunc, Fpext, Fptoui, Fptosi,
        Uitofp, Sitofp, Ptrtoint, Inttoptr, Bitcast];
    /// The comparisons, with a condition code payload and an `i1` result.
    op_compare: [Icmp, Fcmp];
    /// `select` and the aggregate and address operations that do not access memory.
    op_aggregate: [Select, Elem, Extract, Insert];
    /// The vector lane operations (format 6.3): a vector from a scalar, from the lanes of two
    /// vectors, or from lanes chosen at run time.
    op_lanes: [Splat, Shuffle, Swizzle];
    /// The memory operations.
    op_memory: [Stackalloc, Load, Store];
    /// The linear memory operations (format 6.4): accesses checked against a memory record,
    /// and its growth.
    op_linear_memory: [MemLoad, MemStore, MemGrow];
    /// The calls.
    op_calls: [Call, CallIndirect];
    /// The terminators (flag `terminator`).
    op_terminators: [Ret, Jump, Br, Switch, Unreachable, Trap, TrapMsg, TailCall,
        TailCallIndirect];
    /// The decorations (flag `decoration`): attached to their owner, never executed.
    op_decorations: [Export, Import, Pin, PinIf, PinWeak, Stub, Extern, Weak, Linkonce,
        InlineHint, InlineAlways, InlineNever, Pure, NameHint, Loc, SpecializeAlways,
        DynamicDispatch, InlineScope, RelaxedNan, When, Unless];
    /// The generics instructions other than `type_param` (ids `0x03xx`): validated before
    /// link and specialized away by it.
    op_generics: [Generic, WitnessParam, Specialize, Interface, InterfaceReq, WitnessTable,
        WitnessEntry, LookupWitness];
    /// The NOIR instructions other than its decorations (ids `0x04xx`): a `proc` and its body,
    /// run by the interpreter's NOIR evaluator and lowered to functions for native code.
    op_noir: [Proc, Event, Cue, Var, Next, Case, Phi, Coalesce, Result];
    /// The object definitions and their members (`0x0500`–`0x0505`), laid out by the linker.
    op_object_defs: [Class, Trait, Object, FieldDef, MethodDef, CtorDef];
    /// The object instructions (`0x0508`–`0x050E`), lowered by a full link; back ends refuse them.
    op_objects: [Classalloc, Field, Method, Dynmethod, Is, As, Instance];
    /// The existential instructions (`0x030A`–`0x030C`), lowered by a full link; back ends
    /// refuse them.
    op_existentials: [Pack, ExistsCall, ExistsOpen];
}

// Unions of categories, for the crates that dispatch on opcodes (within this crate, write the
// categories out: a macro defined by a macro cannot be named by path in its own crate).

/// The pure operations (flag `in-proc`): the arithmetic, comparison, conversion and aggregate
/// categories, which one evaluator serves in every form that runs them.
#[macro_export]
macro_rules! op_pure {
    () => {
        $crate::op_int_binary!()
            | $crate::op_float_binary!()
            | $crate::op_int_unary!()
            | $crate::op_float_unary!()
            | $crate::op_conversions!()
            | $crate::op_compare!()
            | $crate::op_aggregate!()
            | $crate::op_lanes!()
    };
}

/// What never executes in a function body or a proc: the structure, types, constants,
/// decorations, generics and object definitions.
#[macro_export]
macro_rules! op_outside_bodies {
    () => {
        $crate::op_structure!()
            | $crate::op_types!()
            | $crate::op_constants!()
            | $crate::op_decorations!()
            | $crate::op_generics!()
            | $crate::op_object_defs!()
    };
}

impl Op {
    /// The opcode (its stable id).
    #[inline]
    pub const fn opcode(self) -> Opcode {
        Opcode(self as u16)
    }

    /// The registry entry; every `Op` has one.
    #[inline]
    pub fn info(self) -> &'static OpInfo {
        // SLOTS and ALL are built from the same registry list: the slot of a variant's id is
        // its position in REGISTRY (checked by a test).
        &REGISTRY[usize::from(SLOTS[usize::from(self as u16)])]
    }

    /// The text name.
    #[inline]
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Whether the operation has a lane-wise meaning on vector operands (spec/ir.md,
    /// "Vectors"): the integer and float arithmetic, bit counts and float unary operations,
    /// the comparisons (lane masks) and the conversions.
    #[inline]
    pub fn is_lanewise(self) -> bool {
        matches!(
            self,
            op_int_binary!()
                | op_float_binary!()
                | op_int_unary!()
                | op_float_unary!()
                | op_compare!()
                | op_conversions!()
        )
    }

    /// Whether a NaN this operation computes is subject to spec/ir.md "Canonical NaN" (and,
    /// in a `relaxed_nan` function, to its relaxation): the float arithmetic other than the
    /// sign operations, and the conversions between float widths. The sign operations,
    /// moves and reinterpretations keep a NaN's bits; no other operation makes a NaN.
    #[inline]
    pub fn makes_nan(self) -> bool {
        matches!(
            self,
            Op::Fadd
                | Op::Fsub
                | Op::Fmul
                | Op::Fdiv
                | Op::Frem
                | Op::Fmin
                | Op::Fmax
                | Op::Fsqrt
                | Op::Fceil
                | Op::Ffloor
                | Op::Ftrunc
                | Op::Fnearest
                | Op::Fptrunc
                | Op::Fpext
        )
    }
}

impl From<Op> for Opcode {
    #[inline]
    fn from(op: Op) -> Opcode {
        op.opcode()
    }
}

impl PartialEq<Op> for Opcode {
    #[inline]
    fn eq(&self, op: &Op) -> bool {
        self.0 == *op as u16
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Opcode {
    /// The known opcode this is, or `None` for an opaque one: what a `match` that must
    /// handle every opcode starts from.
    #[inline]
    pub fn known(self) -> Option<Op> {
        let slot = *SLOTS.get(usize::from(self.0))?;
        Op::ALL.get(usize::from(slot)).copied()
    }

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
mod tests;
