//! The syntax tree the parser builds and the builder turns into a [`Module`](irkit_core::Module).
//!
//! It is close to the text: readable forms are already expanded (labels became `block`
//! statements with `param` children, grouped arguments became plain operands), but names are
//! still names, so forward references are resolved later, by the builder.

use irkit_core::Opcode;
use thin_vec::ThinVec;

use crate::error::Pos;

/// A name as written: sigil, text, and whether it is anonymous (bare digits).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Name {
    pub(crate) sigil: char,
    pub(crate) text: String,
    pub(crate) anon: bool,
}

impl Name {
    /// The name as written, for messages (`%x`, `%"a b"`, `%3`): at most 64 characters of it,
    /// control characters escaped (see [`excerpt`](crate::error::excerpt)).
    pub(crate) fn display(&self) -> String {
        let mut s = String::new();
        if self.anon {
            s.push(self.sigil);
            s.push_str(&self.text);
        } else {
            crate::literal::write_name(&mut s, self.sigil, &self.text);
        }
        crate::error::excerpt(&s, 64)
    }
}

/// A payload literal as written; the builder turns it into a [`Payload`](irkit_core::Payload).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PayloadLit {
    Int(i128),
    /// A decimal float or `inf`/`-inf`, read in the result type's format.
    Float(String),
    /// `nan` or `nan:0x…`.
    Nan(Option<u64>),
    /// `fbits:0x…`.
    FBits(u64),
    Str(String),
    Bytes(Vec<u8>),
    /// A condition code, already numbered.
    Cc(u64),
}

/// The value part of an inline constant (`i32 42`, `T zero`, `T [a, b]`, …).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ConstValue {
    Int(i128),
    Bool(bool),
    Float(String),
    Nan(Option<u64>),
    Null,
    Zero,
    Aggregate(Vec<Operand>),
    Bytes(Vec<u8>),
}

/// One operand.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Operand {
    /// A reference by name.
    Ref(Name, Pos),
    /// `void`, `i32`, … (a primitive type).
    Prim(Opcode, Pos),
    /// `[N x T]`.
    Array(u64, Box<Operand>, Pos),
    /// `struct {T, …}`.
    Struct(Vec<Operand>, Pos),
    /// `fn(T, …) -> R`: return first, then parameters.
    Fn(Vec<Operand>, Pos),
    /// `vec T N`: `N` lanes of `T`.
    Vector(u64, Box<Operand>, Pos),
    /// `T value`.
    Const(Box<Operand>, ConstValue, Pos),
}

impl Operand {
    pub(crate) fn pos(&self) -> Pos {
        match self {
            Operand::Ref(_, p)
            | Operand::Prim(_, p)
            | Operand::Array(_, _, p)
            | Operand::Vector(_, _, p)
            | Operand::Struct(_, p)
            | Operand::Fn(_, p)
            | Operand::Const(_, _, p) => *p,
        }
    }
}

/// The result part of a statement: `%name[: T] =`.
#[derive(Clone, Debug)]
pub(crate) struct ResultDef {
    pub(crate) name: Name,
    pub(crate) pos: Pos,
    /// Boxed: most results are written without a type, and statements are many.
    pub(crate) ty: Option<Box<Operand>>,
}

/// What a statement defines.
#[derive(Clone, Debug)]
pub(crate) enum StmtKind {
    /// The generic form: opcode, payload, operands, body.
    Inst {
        op: Opcode,
        /// Spelled by name (payload kinds are checked) rather than `#id`.
        by_name: bool,
        op_pos: Pos,
        /// Boxed: few statements have one, and statements are many.
        payload: Option<Box<(PayloadLit, Pos)>>,
        operands: Vec<Operand>,
        body: Option<ThinVec<Stmt>>,
    },
    /// `%t = <inline type or constant>`: names a hoistable value.
    Alias(Operand),
}

/// One statement (an instruction, a decoration entry, a block from a label, a parameter).
///
/// Statements are many (one per line), so rare parts are boxed and lists are thin vectors (one
/// pointer, no allocation when empty).
#[derive(Clone, Debug)]
pub(crate) struct Stmt {
    /// The position of its first token (its first decoration group's, if any).
    pub(crate) pos: Pos,
    /// Unique per parse; the builder maps it to the instruction it creates (for trivia).
    pub(crate) id: usize,
    /// The position of its last token (the `}` of its body, the `:` of a label).
    pub(crate) end: Pos,
    /// The positions of its body's `{` and `}`, if it was written with one.
    pub(crate) braces: Option<(Pos, Pos)>,
    /// For a block written as a label: how many of its children are the label's parameters
    /// (the children after them are the statements that followed the label).
    pub(crate) label_params: Option<usize>,
    pub(crate) decos: ThinVec<Stmt>,
    pub(crate) result: Option<ResultDef>,
    pub(crate) kind: StmtKind,
}

/// A whole file.
#[derive(Clone, Debug, Default)]
pub(crate) struct File {
    /// `#![…]` entries.
    pub(crate) root_decos: Vec<Stmt>,
    /// Top-level statements.
    pub(crate) items: Vec<Stmt>,
    /// The first and last token positions of each `#![…]` line, in source order.
    pub(crate) root_spans: Vec<(Pos, Pos)>,
}
