//! # irkit-core: the instruction tree
//!
//! This crate owns irkit's in-memory IR and nothing else: no text, no bytes, no linking.
//!
//! **Everything is an instruction** (the design document *Slang IR*). A module,
//! a function, a block, a block parameter, a type, a constant, a global, a decoration: each is
//! one [`InstData`] with an [`Opcode`], an optional type (itself an instruction), ordered
//! operands, decorations, children, and an optional literal [`Payload`]. The [`Module`] is the
//! root of the tree and the arena that owns it; instructions are named by 32-bit [`Inst`]
//! handles, never by pointers, so copying between modules is a matter of remapping indices.
//!
//! **One registry** ([`opcode::REGISTRY`]) defines every opcode: name, stable numeric id,
//! operand signature (the [`Role`] of each operand), result-type rule, payload kind, flags. An id the registry does not know is an
//! *opaque* opcode: kept, printed and re-serialized losslessly, refused only by the verifier.
//!
//! **Hoistable values** (types, constants, generic parameters, `specialize`) are hash-consed
//! by [`Module::intern`]: one instruction per distinct (opcode, type, operands, payload), at
//! the outermost scope its operands allow (inside a generic when it mentions one of its
//! parameters), kept in the module's pool in dependency order rather than in child lists.
//! [`Module::replace_all_uses`] and the [`Cloner`] keep that invariant through edits and copies.
//!
//! **Control flow** follows Slang and NIR: a function's children are blocks, the first being the
//! entry; a block's leading children are its parameters (no phi), its last child its terminator;
//! every branch edge carries arguments for its target's parameters.
//!
//! **Generics** (Slang's model) are ordinary instructions: a `generic` lists its parameters and
//! defines a function, a witness table or a type; `specialize` names an instantiation;
//! interfaces, witness tables and `lookup_witness` express constraints. The verifier checks
//! every use against a generic's signature alone; instantiation is the linker's job.
//!
//! **Building** a tree goes through the module's own calls (or the [`Builder`] on top of
//! them), or, for bodies built in place on every core as readers and the linker copy them, a
//! [`Fragment`]; both refuse the same edits with the same errors, each rule written once
//! (`module/checks.rs`). Bodies a front end builds on several threads are built in clones of
//! the module (branches), whose additions [`Module::adopt`] moves back ([`branch`]).
//!
//! The [`verify`] module checks all of this, plus typing, on any module, however it was built.
//! One [nesting limit](limits) ([`MAX_NESTING`]) bounds both how deep the tree nests and how
//! deep types and constants nest; every reader enforces it, so no pass needs deep recursion.
//! The normative description is `spec/ir.md`.

pub mod branch;
pub mod builder;
pub mod clone;
pub mod condcode;
pub mod edges;
pub mod entity;
pub mod equiv;
pub mod error;
mod extends;
pub mod fragment;
pub mod intern;
pub mod layout;
pub mod limits;
pub mod message;
pub mod module;
pub mod noir;
#[macro_use]
pub mod opcode;
pub mod payload;
pub mod place;
pub mod rauw;
pub mod roles;
pub mod scalar;
pub mod scope;
pub mod verify;

pub use branch::{Adopted, BranchPoint};
pub use builder::Builder;
pub use clone::{CloneError, Cloner};
pub use condcode::{FloatCC, IntCC};
pub use entity::Inst;
pub use error::{CoreError, Error};
pub use fragment::{Fragment, FragmentsError, Slots};
pub use limits::{MAX_NESTING, MAX_TRAP_KIND, Nesting, check_nesting, trap_kind_problem};
pub use module::{InstData, Module};
pub use opcode::{
    Conversion, Flags, FloatBinary, FloatUnary, IntBinary, IntUnary, Op, OpInfo, Opcode,
    PayloadKind, REGISTRY, TypeRule,
};
pub use payload::{Blob, Payload, Text};
pub use rauw::ReplaceReport;
pub use roles::{Arity, Rep, Role, Signature, Slot};
