//! The archived schema: the rkyv types each section holds. Plain data only (vectors of
//! fixed-size records of primitives, byte vectors): no maps, no `Rc`, no niches, no enums with
//! fields, so bytecheck has nothing subtle to get wrong and validation of the big vectors is a
//! bounds check. Cross-references are `u32` indices, checked in range after bytecheck
//! (see `validate.rs`).

use rkyv::{Archive, Serialize};

/// A reference that is absent (only allowed as a type).
pub const REF_NONE: u32 = u32::MAX;
/// The largest index a reference can carry (30 bits).
pub const REF_MAX_INDEX: u32 = (1 << 30) - 1;
/// Reference tag: an instruction of the same archive, by local index.
pub const TAG_LOCAL: u32 = 0;
/// Reference tag: a pool entry, by pool index.
pub const TAG_POOL: u32 = 1;
/// Reference tag: a top-level definition, by definition index.
pub const TAG_DEF: u32 = 2;

/// Packs a tagged reference.
pub fn pack_ref(tag: u32, index: u32) -> u32 {
    (tag << 30) | (index & REF_MAX_INDEX)
}

/// Payload kind codes.
pub mod payload_kind {
    /// No payload; both payload words are 0.
    pub const NONE: u8 = 0;
    /// An integer: `lo | hi << 32`.
    pub const INT: u8 = 1;
    /// Float bits: `lo | hi << 32`.
    pub const FLOAT: u8 = 2;
    /// A string: `lo` is a string-table index, `hi` is 0.
    pub const STR: u8 = 3;
    /// Bytes: `lo` is an offset into the archive's byte blob, `hi` the length.
    pub const BYTES: u8 = 4;
}

/// Size of the symbol-index section's header (count u32, record size u32, 8 zero bytes).
pub const SYMIX_HEADER: usize = 16;
/// Size of a symbol-index record as written by 1.0 (readers accept longer records and read
/// the first 52 bytes): name offset u32, name length u32, def u32, signature u32, opcode u16,
/// role u8, reserved u8, content hash [u8; 32].
pub const SYMIX_RECORD: usize = 52;

/// A string table: string `i` is `data[ends[i-1]..ends[i]]` (with `ends[-1] = 0`), UTF-8.
#[derive(Archive, Serialize, Default)]
pub(crate) struct StringTable {
    pub ends: Vec<u32>,
    pub data: Vec<u8>,
}

/// One symbol (48 bytes archived).
#[derive(Archive, Serialize)]
pub(crate) struct SymbolRec {
    /// String index of the name.
    pub name: u32,
    /// 0 = export, 1 = import, 2 = extern.
    pub role: u8,
    pub reserved: u8,
    /// Opcode id of the definition (func, global_var, global_const, ...).
    pub def_opcode: u16,
    /// Definition index.
    pub def: u32,
    /// Pool index of the definition's type, or `REF_NONE`.
    pub signature: u32,
    /// The definition's content hash.
    pub hash: [u8; 32],
}

/// The symbol table, sorted by (name bytes, role, definition index). An rkyv section of 1.x
/// and 2.x files only; 3.x keeps the symbol index alone (the writer still builds this list,
/// from which it writes the index).
#[derive(Archive, Serialize, Default)]
pub(crate) struct SymbolTable {
    pub symbols: Vec<SymbolRec>,
}

/// One pool entry (20 bytes archived). Operands are
/// `operands[ops_end[i-1]..ops_end[i]]` of the pool archive.
#[derive(Archive, Serialize)]
pub(crate) struct PoolRec {
    pub opcode: u16,
    pub payload_kind: u8,
    pub reserved: u8,
    pub ty: u32,
    pub ops_end: u32,
    pub payload_lo: u32,
    pub payload_hi: u32,
}

/// The pool section.
#[derive(Archive, Serialize, Default)]
pub(crate) struct PoolTable {
    pub entries: Vec<PoolRec>,
    pub operands: Vec<u32>,
    pub bytes: Vec<u8>,
}

/// One definition directory entry (88 bytes archived).
#[derive(Archive, Serialize, Default, Clone)]
pub(crate) struct DefEntry {
    /// Offset of the definition's archive from the start of the `definitions` section.
    pub offset: u64,
    /// Length of that archive.
    pub length: u64,
    /// Number of instructions in it.
    pub inst_count: u32,
    /// Opcode id of the definition's own instruction.
    pub opcode: u16,
    pub reserved: u16,
    /// blake3 of the archive's bytes.
    pub body_hash: [u8; 32],
    /// The canonical content hash (see `hash.rs`).
    pub content_hash: [u8; 32],
}

/// A definitions-directory entry as the reader reads it, out of the archived [`DefEntry`]
/// in place (`placed::DefEntries`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DefMeta {
    pub offset: u64,
    pub length: u64,
    pub inst_count: u32,
    pub opcode: u16,
    pub body_hash: [u8; 32],
    pub content_hash: [u8; 32],
}

/// The definitions directory.
#[derive(Archive, Serialize, Default)]
pub(crate) struct DefIndex {
    pub defs: Vec<DefEntry>,
}

/// One instruction of a body (28 bytes archived), in pre-order local numbering.
#[derive(Archive, Serialize)]
pub(crate) struct InstRec {
    pub opcode: u16,
    pub payload_kind: u8,
    pub reserved: u8,
    pub ty: u32,
    pub ops_end: u32,
    /// One past the last local of this instruction's subtree.
    pub end: u32,
    /// How many of its direct sub-instructions (the first ones) are decorations.
    pub n_decos: u32,
    pub payload_lo: u32,
    pub payload_hi: u32,
}

/// A flattened instruction tree: one definition, or the root's decorations. The writer builds
/// it for every version (content hashes are defined over it); 1.x and 2.x files store it as an
/// rkyv archive, 3.x files in the compact layout of `compact/`.
#[derive(Archive, Serialize, Default)]
pub(crate) struct Body {
    pub insts: Vec<InstRec>,
    pub operands: Vec<u32>,
    pub bytes: Vec<u8>,
}

/// One debug record (28 bytes archived).
#[derive(Archive, Serialize)]
pub(crate) struct DebugRec {
    pub def: u32,
    /// Local index of the decorated instruction.
    pub local: u32,
    /// Position of the decoration in the owner's decoration list.
    pub position: u32,
    /// 0 = name hint, 1 = source location, 2 (6.2) = source location in an inlining scope.
    pub kind: u8,
    /// Kind 2: the local index of the scope, 24 bits little-endian; otherwise zero.
    pub reserved: [u8; 3],
    /// Index into the debug section's own string table (name, or file name).
    pub text: u32,
    pub line: u32,
    pub col: u32,
}

/// Debug kind: a `name_hint` decoration.
pub const DEBUG_NAME: u8 = 0;
/// Debug kind: a `loc` decoration.
pub const DEBUG_LOC: u8 = 1;
/// Debug kind (6.2): a `loc` decoration whose third operand is an `inline_scope`, a
/// decoration of the definition's own instruction (local index in `reserved`).
pub const DEBUG_SCOPED_LOC: u8 = 2;
/// The most locals a kind-2 record's scope index can name (24 bits).
pub const DEBUG_SCOPE_LIMIT: u32 = 1 << 24;

/// The debug section.
#[derive(Archive, Serialize, Default)]
pub(crate) struct DebugTable {
    pub strings: StringTable,
    pub entries: Vec<DebugRec>,
}
