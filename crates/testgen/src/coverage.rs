//! What the generator produces, opcode by opcode: one exhaustive table, so that an opcode added
//! to the registry fails to compile here until someone decides whether random modules hold it
//! (and, if they do, teaches the generator to make it). `tests/coverage.rs` checks the table
//! against what many seeds really generate, in both directions.

use irkit_core::Op;

/// Whether generated modules hold instructions of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Some modules of [`crate::module`], [`crate::module_set`] or [`crate::proc_module`] hold
    /// it (with the default [`crate::Config`], over a few hundred seeds).
    Generated,
    /// No generated module holds it, for the reason given.
    NotGenerated(&'static str),
}

/// The generator's coverage of `op`.
pub fn coverage(op: Op) -> Coverage {
    match op {
        Op::Module
        | Op::Void
        | Op::I1
        | Op::I8
        | Op::I16
        | Op::I32
        | Op::I64
        | Op::F32
        | Op::F64
        | Op::Ptr
        | Op::Array
        | Op::Struct
        | Op::NamedStruct
        | Op::Fn
        | Op::ConstInt
        | Op::ConstFloat
        | Op::ConstNull
        | Op::ConstZero
        | Op::ConstAggregate
        | Op::ConstBytes
        | Op::Func
        | Op::GlobalVar
        | Op::GlobalConst
        | Op::Block
        | Op::Param
        | Op::Iadd
        | Op::Isub
        | Op::Imul
        | Op::Sdiv
        | Op::Udiv
        | Op::Srem
        | Op::Urem
        | Op::Shl
        | Op::Lshr
        | Op::Ashr
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Fadd
        | Op::Fsub
        | Op::Fmul
        | Op::Fdiv
        | Op::Frem
        | Op::Icmp
        | Op::Fcmp
        | Op::Trunc
        | Op::Zext
        | Op::Sext
        | Op::Fptrunc
        | Op::Fpext
        | Op::Fptoui
        | Op::Fptosi
        | Op::Uitofp
        | Op::Sitofp
        | Op::Ptrtoint
        | Op::Inttoptr
        | Op::Bitcast
        | Op::Select
        | Op::Stackalloc
        | Op::Load
        | Op::Store
        | Op::Elem
        | Op::Extract
        | Op::Insert
        | Op::Call
        | Op::CallIndirect
        | Op::Ret
        | Op::Jump
        | Op::Br
        | Op::Switch
        | Op::Unreachable
        | Op::Trap
        | Op::TrapMsg
        | Op::Clz
        | Op::Ctz
        | Op::Popcnt
        | Op::Rotl
        | Op::Rotr
        | Op::Fneg
        | Op::Fabs
        | Op::Fcopysign
        | Op::Fmin
        | Op::Fmax
        | Op::Fsqrt
        | Op::Fceil
        | Op::Ffloor
        | Op::Ftrunc
        | Op::Fnearest
        | Op::Export
        | Op::Import
        | Op::Pin
        | Op::PinIf
        | Op::PinWeak
        | Op::Stub
        | Op::Extern
        | Op::Weak
        | Op::Linkonce
        | Op::InlineHint
        | Op::InlineAlways
        | Op::InlineNever
        | Op::Pure
        | Op::NameHint
        | Op::Loc
        | Op::Generic
        | Op::TypeParam
        | Op::WitnessParam
        | Op::Specialize
        | Op::Interface
        | Op::InterfaceReq
        | Op::WitnessTable
        | Op::WitnessEntry
        | Op::LookupWitness
        | Op::Proc
        | Op::Event
        | Op::Cue
        | Op::Var
        | Op::Next
        | Op::Case
        | Op::Phi
        | Op::Coalesce
        | Op::Result
        | Op::When
        | Op::Unless => Coverage::Generated,
    }
}
