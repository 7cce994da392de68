//! Operand roles: what each operand of an opcode stands for, as registry data.
//!
//! Every registry entry carries a [`Signature`]: its operand *slots* in order, each a name (the
//! spec's word for it), a [`Role`] (what the operand is: a value, a type, an edge, …) and a
//! [`Rep`] (one, optional, zero or more, one or more). The spec's operand column
//! (`cond, then, arg*, else, arg*`) and the opcode's [`Arity`] are both computed from it, so
//! the registry states each shape once; a terminator's edges are found from it
//! ([`crate::edges::branch`]).
//!
//! A signature is *decodable*: a slot of variable length other than an edge is followed only
//! by edges (whose block operands end it), and a variable run of edges is last. So where each
//! operand belongs follows from the operand count, and, with edges, from where the block
//! operands are.

use std::fmt;

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

/// What an operand position stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Read as a value: a local value, a constant, or a definition (its address).
    Value,
    /// A type (a type position: the operand is a type, never a value).
    Type,
    /// A `const_int` read for its number (a case value, a source line or column).
    Const,
    /// One edge: a block operand, then the edge's arguments (values) up to the next block
    /// operand or the end (spec/ir.md, "Edges").
    Edge,
    /// A definition named for itself, not read as a value: a callee, a pinned definition, a
    /// generic, an interface requirement, an implementation. Before specialization a
    /// `specialize` or `lookup_witness` may stand for the function.
    Def,
    /// A NOIR instruction whose state (defined or not) is read, not a value: the event a
    /// `cue` cues, a passive dependency of `when`/`unless`.
    State,
    /// The `var` a `next` writes (not read).
    Var,
    /// Any instruction the opcode's typing rule admits, named for itself: a generic's
    /// parameters (types or witnesses), a specialization's arguments, a witness.
    Any,
}

impl Role {
    /// Every role, in the order of the spec's role table.
    pub const ALL: [Role; 8] = [
        Role::Value,
        Role::Type,
        Role::Const,
        Role::Edge,
        Role::Def,
        Role::State,
        Role::Var,
        Role::Any,
    ];

    /// The spec's name for the role (the opcode table's roles column).
    pub const fn name(self) -> &'static str {
        match self {
            Role::Value => "value",
            Role::Type => "type",
            Role::Const => "const",
            Role::Edge => "edge",
            Role::Def => "def",
            Role::State => "state",
            Role::Var => "var",
            Role::Any => "any",
        }
    }

    /// Whether an operand in this role is read when the instruction executes (a NOIR proc's
    /// *active dependencies* are its read operands that are proc-local): values, case values
    /// and states; not types, the `var` a `next` writes, definitions or instructions named
    /// for themselves. An edge's arguments are values.
    pub const fn is_read(self) -> bool {
        matches!(self, Role::Value | Role::Const | Role::State | Role::Edge)
    }
}

/// How many operands a slot takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rep {
    /// Exactly one (`x`).
    One,
    /// Zero or one (`x?`).
    Optional,
    /// Zero or more (`x*`).
    ZeroOrMore,
    /// One or more (`x+`).
    OneOrMore,
}

impl Rep {
    /// The spec's suffix: none, `?`, `*` or `+`.
    pub const fn suffix(self) -> &'static str {
        match self {
            Rep::One => "",
            Rep::Optional => "?",
            Rep::ZeroOrMore => "*",
            Rep::OneOrMore => "+",
        }
    }

    /// Whether the slot may take other than exactly one operand.
    pub const fn is_variable(self) -> bool {
        !matches!(self, Rep::One)
    }
}

/// One operand slot of a signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slot {
    /// The spec's name for the operand (`cond`, `then`, `case_value`).
    pub name: &'static str,
    /// What the operand stands for.
    pub role: Role,
    /// How many operands the slot takes.
    pub rep: Rep,
}

impl Slot {
    /// A slot spelled as the registry writes it: a name with the spec's repetition suffix
    /// (`"cond"`, `"init?"`, `"arg*"`, `"index+"`).
    pub const fn new(role: Role, spelled: &'static str) -> Slot {
        let bytes = spelled.as_bytes();
        let (rep, cut) = match bytes.last() {
            Some(b'?') => (Rep::Optional, 1),
            Some(b'*') => (Rep::ZeroOrMore, 1),
            Some(b'+') => (Rep::OneOrMore, 1),
            _ => (Rep::One, 0),
        };
        let name = match std::str::from_utf8(bytes.split_at(bytes.len() - cut).0) {
            Ok(name) => name,
            Err(_) => panic!("a slot name is UTF-8"),
        };
        Slot { name, role, rep }
    }
}

/// An opcode's operand signature: its slots in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Signature(pub &'static [Slot]);

/// Where a terminator's edges start, from its signature: after `fixed` operands, or, when a
/// variable run of non-edge operands comes first (`switch`'s case values), at the first block
/// operand from there on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeStart {
    /// The operands before the first edge that are always there (the condition of `br`).
    pub fixed: usize,
    /// Whether a variable run of operands follows them (ended by the first block operand).
    pub variable: bool,
}

impl Signature {
    /// The slots.
    pub const fn slots(self) -> &'static [Slot] {
        self.0
    }

    /// The operand count the signature accepts. An edge takes its block operand and any
    /// number of arguments after it.
    pub const fn arity(self) -> Arity {
        let (mut min, mut max, mut unbounded) = (0u8, 0u8, false);
        let mut k = 0;
        while k < self.0.len() {
            let s = self.0[k];
            match s.rep {
                Rep::One => {
                    min += 1;
                    max += 1;
                }
                Rep::Optional => max += 1,
                Rep::ZeroOrMore => unbounded = true,
                Rep::OneOrMore => {
                    min += 1;
                    unbounded = true;
                }
            }
            if matches!(s.role, Role::Edge) {
                unbounded = true;
            }
            k += 1;
        }
        if unbounded {
            Arity::AtLeast(min)
        } else if min == max {
            Arity::Exact(min)
        } else {
            Arity::Range(min, max)
        }
    }

    /// Whether operands are divided into edges (the signature has an [`Role::Edge`] slot).
    pub const fn has_edges(self) -> bool {
        let mut k = 0;
        while k < self.0.len() {
            if matches!(self.0[k].role, Role::Edge) {
                return true;
            }
            k += 1;
        }
        false
    }

    /// How many edges the signature takes: `(n, false)` exactly `n`, `(n, true)` at least `n`
    /// (`jump` one, `br` two, `switch` a default and any number of cases).
    pub const fn edge_count(self) -> (usize, bool) {
        let (mut n, mut variable) = (0, false);
        let mut k = 0;
        while k < self.0.len() {
            let s = self.0[k];
            if matches!(s.role, Role::Edge) {
                match s.rep {
                    Rep::One => n += 1,
                    Rep::OneOrMore => {
                        n += 1;
                        variable = true;
                    }
                    Rep::Optional | Rep::ZeroOrMore => variable = true,
                }
            }
            k += 1;
        }
        (n, variable)
    }

    /// Where the edges start, if the signature has any.
    pub const fn edge_start(self) -> Option<EdgeStart> {
        let mut fixed = 0;
        let mut variable = false;
        let mut k = 0;
        while k < self.0.len() {
            let s = self.0[k];
            if matches!(s.role, Role::Edge) {
                return Some(EdgeStart { fixed, variable });
            }
            if s.rep.is_variable() {
                variable = true;
            } else if !variable {
                fixed += 1;
            }
            k += 1;
        }
        None
    }

    /// Whether the signature is decodable (see the module doc): a variable slot other than an
    /// edge is followed by edges only, and a variable edge slot is last.
    pub const fn is_decodable(self) -> bool {
        let mut k = 0;
        while k < self.0.len() {
            let s = self.0[k];
            if s.rep.is_variable() {
                let mut j = k + 1;
                while j < self.0.len() {
                    if !matches!(self.0[j].role, Role::Edge) || matches!(s.role, Role::Edge) {
                        return false;
                    }
                    j += 1;
                }
            }
            k += 1;
        }
        true
    }

    /// The slot of operand `k` of an instruction with `n` operands, for a signature without
    /// edges (`None` with edges, where it depends on where the block operands are, and past
    /// the end).
    pub fn slot_at(self, k: usize, n: usize) -> Option<Slot> {
        if self.has_edges() || k >= n {
            return None;
        }
        // In a decodable signature without edges the variable slot, if any, is last and
        // takes what the fixed ones before it leave.
        let slots = self.0;
        match slots.iter().position(|s| s.rep.is_variable()) {
            Some(v) if k >= v => Some(slots[v]),
            _ => slots.get(k).copied(),
        }
    }

    /// The role of operand `k` of an instruction with `n` operands ([`Signature::slot_at`]).
    pub fn role_at(self, k: usize, n: usize) -> Option<Role> {
        self.slot_at(k, n).map(|s| s.role)
    }

    /// The spec's roles column: each slot's role with its repetition (`value, edge, edge`).
    pub const fn roles(self) -> RolesColumn {
        RolesColumn(self)
    }

    /// How many leading operands are not read ([`Role::is_read`]): the type of `elem`, the
    /// `var` of `next`. Only the leading fixed slots count; the spec's rule that every other
    /// operand of a proc's instruction is read is checked against the registry by a test.
    pub fn unread_prefix(self) -> usize {
        self.0
            .iter()
            .take_while(|s| s.rep == Rep::One && !s.role.is_read())
            .count()
    }
}

/// The spec's roles column of a signature ([`Signature::roles`]).
pub struct RolesColumn(Signature);

/// Each slot's role with its repetition (`value, edge, edge`); `-` for none.
impl fmt::Display for RolesColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_slots(f, self.0, |f, s| {
            write!(f, "{}{}", s.role.name(), s.rep.suffix())
        })
    }
}

/// The spec's operand column: `cond, then, arg*, else, arg*`; an edge is its block and its
/// arguments (`(case, arg*)*` when it repeats); `-` for none.
impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_slots(f, *self, |f, s| match (s.role, s.rep) {
            (Role::Edge, Rep::One) => write!(f, "{}, arg*", s.name),
            (Role::Edge, rep) => write!(f, "({}, arg*){}", s.name, rep.suffix()),
            (_, rep) => write!(f, "{}{}", s.name, rep.suffix()),
        })
    }
}

/// Writes the slots of `sig` separated by commas, each as `slot` spells it; `-` for none.
fn write_slots(
    f: &mut fmt::Formatter<'_>,
    sig: Signature,
    slot: impl Fn(&mut fmt::Formatter<'_>, &Slot) -> fmt::Result,
) -> fmt::Result {
    if sig.0.is_empty() {
        return f.write_str("-");
    }
    for (k, s) in sig.0.iter().enumerate() {
        if k > 0 {
            f.write_str(", ")?;
        }
        slot(f, s)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::REGISTRY;

    #[test]
    fn spelled_as_the_spec_writes_it() {
        const SW: Signature = Signature(&[
            Slot::new(Role::Value, "value"),
            Slot::new(Role::Const, "case_value*"),
            Slot::new(Role::Edge, "default"),
            Slot::new(Role::Edge, "case*"),
        ]);
        let sw = SW;
        assert_eq!(sw.slots()[1].name, "case_value");
        assert_eq!(sw.slots()[1].rep, Rep::ZeroOrMore);
        assert_eq!(
            sw.to_string(),
            "value, case_value*, default, arg*, (case, arg*)*"
        );
        assert_eq!(sw.arity(), Arity::AtLeast(2));
        assert_eq!(
            sw.edge_start(),
            Some(EdgeStart {
                fixed: 1,
                variable: true
            })
        );
        assert_eq!(sw.edge_count(), (1, true));
        assert_eq!(sw.roles().to_string(), "value, const*, edge, edge*");
        assert_eq!(Signature(&[]).to_string(), "-");
    }

    /// [`Role::ALL`] lists every role once (a new role fails to compile here until it is
    /// listed, and so until the spec's role table has it: `tests/tests/spec.rs`).
    #[test]
    fn all_roles_are_listed() {
        let position = |r: Role| match r {
            Role::Value => 0,
            Role::Type => 1,
            Role::Const => 2,
            Role::Edge => 3,
            Role::Def => 4,
            Role::State => 5,
            Role::Var => 6,
            Role::Any => 7,
        };
        for (k, r) in Role::ALL.into_iter().enumerate() {
            assert_eq!(position(r), k, "{r:?}");
        }
    }

    #[test]
    fn roles_by_position() {
        const ELEM: Signature = Signature(&[
            Slot::new(Role::Type, "type"),
            Slot::new(Role::Value, "ptr"),
            Slot::new(Role::Value, "index+"),
        ]);
        let elem = ELEM;
        let roles: Vec<Option<Role>> = (0..5).map(|k| elem.role_at(k, 4)).collect();
        let v = Some(Role::Value);
        assert_eq!(roles, [Some(Role::Type), v, v, v, None]);
        assert_eq!(elem.unread_prefix(), 1);
        assert_eq!(elem.edge_start(), None);
    }

    /// Every opcode has a signature the spec can spell, with named slots; edges only on
    /// terminators; and every terminator either has edges (its successors: `jump`, `br`,
    /// `switch`) or leaves the function (`ret`, `unreachable`, `trap`, `trap_msg`, the tail
    /// calls). A new opcode is
    /// handled where its roles say: a terminator with edges by [`crate::edges::branch`] and
    /// so by the verifier's `check_branch` (verify/calls.rs), the interpreter's
    /// `branch::decode` and the Cranelift lowering's terminator arms (lower/func.rs), each of
    /// which has a test or a `match` that names the opcodes it knows.
    #[test]
    fn every_opcode_has_roles_and_every_terminator_an_edge_description() {
        use crate::Opcode;
        let exits = [
            Opcode::RET,
            Opcode::UNREACHABLE,
            Opcode::TRAP,
            Opcode::TRAP_MSG,
            Opcode::TAIL_CALL,
            Opcode::TAIL_CALL_INDIRECT,
        ];
        for info in REGISTRY {
            let sig = info.signature;
            assert!(
                sig.slots().iter().all(|s| !s.name.is_empty()),
                "`{}`: a slot without a name",
                info.name
            );
            assert_eq!(info.arity, sig.arity(), "`{}`", info.name);
            if sig.has_edges() {
                assert!(info.opcode.is_terminator(), "`{}` has edges", info.name);
            }
            if info.opcode.is_terminator() {
                assert!(
                    sig.has_edges() != exits.contains(&info.opcode),
                    "terminator `{}`: neither edges nor an exit of the function",
                    info.name
                );
            }
        }
    }

    /// Every opcode's signature is decodable, and where a NOIR proc may hold the opcode, its
    /// unread operands are a leading run (so a proc's active dependencies are a suffix of the
    /// operands: `irkit_core::noir::read_operands`).
    #[test]
    fn registry_signatures_are_decodable() {
        use crate::Flags;
        for info in REGISTRY {
            let sig = info.signature;
            assert!(sig.is_decodable(), "`{}`: {sig}", info.name);
            let in_proc = info.flags.contains(Flags::IN_PROC)
                || info.flags.contains(Flags::NOIR)
                || info.opcode == crate::Opcode::RESULT;
            if in_proc {
                let rest = &sig.slots()[sig.unread_prefix()..];
                assert!(
                    rest.iter().all(|s| s.role.is_read()),
                    "`{}`: an unread operand after a read one",
                    info.name
                );
            }
        }
    }
}
