//! The scalar types, once.
//!
//! `void`, the integers, the floats and `ptr`: their text name, class, width and memory
//! layout (spec/ir.md, "Types" and "Layout"). Every crate that needs one of these facts reads
//! this table (the parser and printer for names, the verifier for widths and classes, the
//! interpreter and the native back end for layouts), so that a new scalar type is one row
//! here, not a change in eight places. Its tests check the table against the opcode registry.

use crate::Opcode;

/// What kind of value a scalar type holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarClass {
    /// `void`: no value.
    Void,
    /// A two's-complement integer of `bits` bits (`i1` is a boolean).
    Int,
    /// An IEEE 754 binary float of `bits` bits.
    Float,
    /// An address.
    Ptr,
}

/// One scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarInfo {
    /// Its opcode.
    pub opcode: Opcode,
    /// Its text name (the opcode's name).
    pub name: &'static str,
    /// What it holds.
    pub class: ScalarClass,
    /// Its width in bits (0 for `void`).
    pub bits: u32,
    /// Its size in memory, in bytes (0 for `void`).
    pub size: u64,
    /// Its alignment in memory, in bytes (1 for `void`).
    pub align: u64,
}

const fn row(
    opcode: Opcode,
    name: &'static str,
    class: ScalarClass,
    bits: u32,
    size: u64,
) -> ScalarInfo {
    ScalarInfo {
        opcode,
        name,
        class,
        bits,
        size,
        align: if size == 0 { 1 } else { size },
    }
}

/// Every scalar type, in opcode order.
pub static SCALARS: [ScalarInfo; 9] = [
    row(Opcode::VOID, "void", ScalarClass::Void, 0, 0),
    row(Opcode::I1, "i1", ScalarClass::Int, 1, 1),
    row(Opcode::I8, "i8", ScalarClass::Int, 8, 1),
    row(Opcode::I16, "i16", ScalarClass::Int, 16, 2),
    row(Opcode::I32, "i32", ScalarClass::Int, 32, 4),
    row(Opcode::I64, "i64", ScalarClass::Int, 64, 8),
    row(Opcode::F32, "f32", ScalarClass::Float, 32, 4),
    row(Opcode::F64, "f64", ScalarClass::Float, 64, 8),
    row(Opcode::PTR, "ptr", ScalarClass::Ptr, 64, 8),
];

/// The scalar type of opcode `op`, if it is one.
pub fn scalar(op: Opcode) -> Option<&'static ScalarInfo> {
    SCALARS.iter().find(|s| s.opcode == op)
}

/// The scalar type spelled `name` in text (`i32`, `ptr`, …), if there is one.
pub fn scalar_named(name: &str) -> Option<&'static ScalarInfo> {
    SCALARS.iter().find(|s| s.name == name)
}

/// The integer type of `bits` bits, if there is one (1, 8, 16, 32, 64).
pub fn int_of_width(bits: u32) -> Option<Opcode> {
    SCALARS
        .iter()
        .find(|s| s.class == ScalarClass::Int && s.bits == bits)
        .map(|s| s.opcode)
}

/// The float type of `bits` bits, if there is one (32, 64).
pub fn float_of_width(bits: u32) -> Option<Opcode> {
    SCALARS
        .iter()
        .find(|s| s.class == ScalarClass::Float && s.bits == bits)
        .map(|s| s.opcode)
}

/// The width of integer type `op`, `None` for anything else.
pub fn int_width(op: Opcode) -> Option<u32> {
    scalar(op)
        .filter(|s| s.class == ScalarClass::Int)
        .map(|s| s.bits)
}

/// The width of float type `op`, `None` for anything else.
pub fn float_width(op: Opcode) -> Option<u32> {
    scalar(op)
        .filter(|s| s.class == ScalarClass::Float)
        .map(|s| s.bits)
}

/// A value scalar as the back ends handle it: the class and width of a non-`void` row of
/// [`SCALARS`] in one small value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `iN`.
    Int(u32),
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `ptr`.
    Ptr,
    /// A short vector `vec T N` held whole, for back ends that keep one in one register
    /// (core's layout describes vectors as [`LayoutShape::Vector`](crate::layout::LayoutShape)
    /// and never makes this).
    Vector(Lane, u16),
}

/// The lane type of a vector (spec/ir.md, "Types": `vec T N`): an integer of 8 to 64 bits
/// or a float.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// `iN`, `N` in 8, 16, 32, 64.
    Int(u32),
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl Lane {
    /// The lane type of type opcode `op`, if it may be one (`i1` and `ptr` may not).
    pub fn of(op: Opcode) -> Option<Lane> {
        match Scalar::of(op)? {
            Scalar::Int(w) if w >= 8 => Some(Lane::Int(w)),
            Scalar::F32 => Some(Lane::F32),
            Scalar::F64 => Some(Lane::F64),
            _ => None,
        }
    }

    /// The lane as a scalar.
    pub fn scalar(self) -> Scalar {
        match self {
            Lane::Int(w) => Scalar::Int(w),
            Lane::F32 => Scalar::F32,
            Lane::F64 => Scalar::F64,
        }
    }

    /// Its width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Lane::Int(w) => w,
            Lane::F32 => 32,
            Lane::F64 => 64,
        }
    }

    /// Its size in bytes.
    pub fn size(self) -> u64 {
        u64::from(self.bits() / 8)
    }
}

/// The most lanes a vector type may have.
pub const MAX_LANES: u64 = 256;

impl Scalar {
    /// The scalar of type opcode `op` (`None` for `void` and non-scalars).
    pub fn of(op: Opcode) -> Option<Scalar> {
        let s = scalar(op)?;
        match s.class {
            ScalarClass::Int => Some(Scalar::Int(s.bits)),
            ScalarClass::Float if s.bits == 32 => Some(Scalar::F32),
            ScalarClass::Float => Some(Scalar::F64),
            ScalarClass::Ptr => Some(Scalar::Ptr),
            ScalarClass::Void => None,
        }
    }

    /// Size in memory, in bytes.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Int(w) => u64::from(w.div_ceil(8)),
            Scalar::F32 => 4,
            Scalar::F64 | Scalar::Ptr => 8,
            Scalar::Vector(l, n) => l.size() * u64::from(n),
        }
    }

    /// The integer width, for integers.
    pub fn width(self) -> Option<u32> {
        match self {
            Scalar::Int(w) => Some(w),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Flags, REGISTRY};

    /// The table is the registry's scalar types: each row's name is its opcode's name, and
    /// every registry type without operands or payload that is not a structure is a row.
    #[test]
    fn the_table_is_the_registrys_scalar_types() {
        for s in &SCALARS {
            assert_eq!(s.opcode.name(), Some(s.name));
            assert!(
                s.opcode
                    .info()
                    .is_some_and(|i| i.flags.contains(Flags::TYPE))
            );
        }
        let in_registry: Vec<Opcode> = REGISTRY
            .iter()
            .filter(|i| {
                i.flags.contains(Flags::TYPE)
                    && matches!(i.arity, crate::Arity::Exact(0))
                    && i.payload == crate::PayloadKind::None
            })
            .map(|i| i.opcode)
            .collect();
        let in_table: Vec<Opcode> = SCALARS.iter().map(|s| s.opcode).collect();
        assert_eq!(in_registry, in_table);
    }

    #[test]
    fn widths_and_layouts() {
        assert_eq!(int_of_width(16), Some(Opcode::I16));
        assert_eq!(int_of_width(7), None);
        assert_eq!(float_of_width(32), Some(Opcode::F32));
        assert_eq!(int_width(Opcode::I1), Some(1));
        assert_eq!(int_width(Opcode::F32), None);
        assert_eq!(float_width(Opcode::F64), Some(64));
        assert_eq!(scalar_named("ptr").map(|s| (s.size, s.align)), Some((8, 8)));
        assert_eq!(scalar(Opcode::I1).map(|s| (s.size, s.align)), Some((1, 1)));
        for s in SCALARS.iter().filter(|s| s.class != ScalarClass::Void) {
            assert_eq!(
                Scalar::of(s.opcode).map(Scalar::size),
                Some(s.size),
                "{}",
                s.name
            );
        }
        assert_eq!(Scalar::of(Opcode::VOID), None);
    }
}
