//! The classes of words and tokens the parser decides on: type keywords, and the tokens that
//! start an operand or a constant value.

use irkit_core::Opcode;

use crate::lexer::Tok;

/// The type keyword `word` (`i32`, `ptr`, …), from the one table of scalar types.
pub(super) fn prim_type(word: &str) -> Option<Opcode> {
    irkit_core::scalar::scalar_named(word).map(|s| s.opcode)
}

pub(super) fn is_const_value_start(tok: &Tok) -> bool {
    match tok {
        Tok::Int(_) | Tok::Float(_) | Tok::Nan(_) | Tok::Bytes(_) | Tok::LBracket => true,
        Tok::Ident(w) => matches!(w.as_str(), "true" | "false" | "null" | "zero"),
        _ => false,
    }
}

pub(super) fn is_operand_start(tok: &Tok) -> bool {
    match tok {
        Tok::Name { .. } | Tok::LBracket => true,
        Tok::Ident(w) => prim_type(w).is_some() || w == "struct" || w == "fn" || w == "vec",
        _ => false,
    }
}
