//! Inlining scopes (spec/ir.md, "Inlining scopes"): reading and making the `inline_scope`
//! decorations of a function and the scope operand of a `loc`.
//!
//! An inlined copy of a function's body gets one `inline_scope` on the function it was copied
//! into, naming the inlined function (payload), its call site (the scope's own `loc`) and the
//! scope the call itself was in (operand, absent at the outermost level). Each instruction of
//! the copy that has a `loc` names the scope as that `loc`'s third operand; the chain of
//! parents is the inlining chain, innermost first.

use crate::{CoreError, Inst, Module, Opcode, Payload};

/// A source position as a `loc` gives it: file, line, column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position<'m> {
    /// The file (the `loc`'s payload).
    pub file: &'m str,
    /// The line.
    pub line: u32,
    /// The column.
    pub col: u32,
}

/// The position a `loc` decoration gives, read from a module the verifier accepted (`None`
/// for operands that are not constants).
pub fn position(m: &Module, loc: Inst) -> Option<Position<'_>> {
    let file = m.payload(loc).as_str()?;
    let (line, col) = match m.operands(loc) {
        [l, c] | [l, c, _] => (*l, *c),
        _ => return None,
    };
    // An i32 constant holds its bits zero-extended.
    let number = |v: Inst| m.payload(v).as_int().map(|x| x as u32);
    Some(Position {
        file,
        line: number(line)?,
        col: number(col)?,
    })
}

/// The inlining scope of `inst`'s location: the third operand of its first `loc`.
pub fn scope_of(m: &Module, inst: Inst) -> Option<Inst> {
    let loc = m.find_decoration(inst, Opcode::LOC)?;
    m.operands(loc).get(2).copied()
}

/// The scope `scope` is nested in (the one its call was in), if any.
pub fn parent(m: &Module, scope: Inst) -> Option<Inst> {
    m.operands(scope).first().copied()
}

/// The name of the function `scope` stands for a copy of.
pub fn callee(m: &Module, scope: Inst) -> &str {
    m.payload(scope).as_str().unwrap_or("")
}

/// The call site of `scope`: its own `loc`.
pub fn call_site(m: &Module, scope: Inst) -> Option<Position<'_>> {
    position(m, m.find_decoration(scope, Opcode::LOC)?)
}

/// The name an inlining scope gives function `f`: its name hint, else its first export,
/// extern or import name, else `func<N>` (its arena index).
pub fn function_name(m: &Module, f: Inst) -> String {
    if let Some(n) = m.name(f).filter(|n| !n.is_empty()) {
        return n.to_string();
    }
    [Opcode::EXPORT, Opcode::EXTERN, Opcode::IMPORT]
        .into_iter()
        .find_map(|op| m.decoration_strs(f, op).find(|s| !s.is_empty()))
        .map_or_else(|| format!("func{}", f.index()), str::to_string)
}

/// Adds to function `func` a scope for a copy of function `callee` (named `callee`) called at
/// `site` (a `loc`, whose file, line and column the scope's own `loc` copies; `None`: unknown)
/// from inside scope `parent` (`None`: from `func`'s own code). Returns the scope, the last
/// of `func`'s decorations.
pub fn add_scope(
    m: &mut Module,
    func: Inst,
    callee: &str,
    site: Option<Inst>,
    parent: Option<Inst>,
) -> Result<Inst, CoreError> {
    let scope = m.add_decoration(
        func,
        Opcode::INLINE_SCOPE,
        parent.into_iter().collect(),
        Payload::Str(callee.into()),
    )?;
    if let Some(site) = site {
        let ops = m.operands(site).get(..2).unwrap_or(&[]).to_vec();
        let file = m.payload(site).clone();
        m.add_decoration(scope, Opcode::LOC, ops, file)?;
    }
    Ok(scope)
}

/// Puts the location of `inst` (its first `loc`) in `scope`: sets or replaces that `loc`'s
/// third operand. Nothing without a `loc`.
pub fn set_scope(m: &mut Module, inst: Inst, scope: Inst) -> Result<(), CoreError> {
    let Some(loc) = m.find_decoration(inst, Opcode::LOC) else {
        return Ok(());
    };
    let mut ops = m.operands(loc).get(..2).unwrap_or(&[]).to_vec();
    if ops.len() == 2 {
        ops.push(scope);
        m.set_operands(loc, ops)?;
    }
    Ok(())
}
