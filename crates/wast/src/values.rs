//! Values of a script: the arguments of an `invoke` as back-end values, and whether a result
//! matches what an `assert_return` expects (`nan:canonical` and `nan:arithmetic` included).
//!
//! A reference is a `ptr` (spec/wasm.md, "References"): `ref.null` is 0, and the host
//! reference `ref.extern N` is [`host_ref`]`(N)`, an address no definition has.

use irkit_backend::Val;
use wast::core::{NanPattern, WastArgCore, WastRetCore};
use wast::{WastArg, WastRet};

/// The tag of a host reference: `ref.extern N` is the pointer `HOST_REF_TAG | N`.
pub const HOST_REF_TAG: u64 = 1 << 63;

/// The pointer standing for the host reference `ref.extern n`.
pub fn host_ref(n: u32) -> u64 {
    HOST_REF_TAG | u64::from(n)
}

/// The back-end value of an argument; `Err` names what this runner does not pass.
pub fn arg(a: &WastArg<'_>) -> Result<Val, String> {
    match a {
        WastArg::Core(c) => match c {
            WastArgCore::I32(v) => Ok(Val::I32(*v as u32)),
            WastArgCore::I64(v) => Ok(Val::I64(*v as u64)),
            WastArgCore::F32(v) => Ok(Val::F32(v.bits)),
            WastArgCore::F64(v) => Ok(Val::F64(v.bits)),
            WastArgCore::V128(v) => Ok(Val::V128(v.to_le_bytes())),
            WastArgCore::RefNull(_) => Ok(Val::Ptr(0)),
            WastArgCore::RefExtern(n) => Ok(Val::Ptr(host_ref(*n))),
            WastArgCore::RefHost(_) => Err("a host anyref argument (GC is out of scope)".into()),
        },
        _ => Err("a component-model argument".into()),
    }
}

/// An expected result, as this runner compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Exactly this value (floats by their bits).
    Exact(Val),
    /// An `f32` NaN with the canonical payload (either sign).
    CanonicalNan32,
    /// An `f32` NaN with the quiet bit set (either sign, any other payload).
    ArithmeticNan32,
    /// An `f64` NaN with the canonical payload.
    CanonicalNan64,
    /// An `f64` NaN with the quiet bit set.
    ArithmeticNan64,
    /// A non-null reference (`ref.func`, `ref.extern` without a value).
    NonNull,
    /// A `v128` whose lanes (lane 0 first, all of one width) match these, each an `Exact`
    /// integer or float of the lane's width or a NaN pattern.
    Lanes(Vec<Expected>),
}

/// The expectation of a result; `Err` names what this runner does not compare.
pub fn expected(r: &WastRet<'_>) -> Result<Expected, String> {
    let WastRet::Core(c) = r else {
        return Err("a component-model result".into());
    };
    Ok(match c {
        WastRetCore::I32(v) => Expected::Exact(Val::I32(*v as u32)),
        WastRetCore::I64(v) => Expected::Exact(Val::I64(*v as u64)),
        WastRetCore::F32(NanPattern::Value(v)) => Expected::Exact(Val::F32(v.bits)),
        WastRetCore::F32(NanPattern::CanonicalNan) => Expected::CanonicalNan32,
        WastRetCore::F32(NanPattern::ArithmeticNan) => Expected::ArithmeticNan32,
        WastRetCore::F64(NanPattern::Value(v)) => Expected::Exact(Val::F64(v.bits)),
        WastRetCore::F64(NanPattern::CanonicalNan) => Expected::CanonicalNan64,
        WastRetCore::F64(NanPattern::ArithmeticNan) => Expected::ArithmeticNan64,
        WastRetCore::V128(p) => Expected::Lanes(lanes(p)),
        WastRetCore::RefNull(_) => Expected::Exact(Val::Ptr(0)),
        WastRetCore::RefExtern(Some(n)) => Expected::Exact(Val::Ptr(host_ref(*n))),
        // A function reference's identity is not observable in WebAssembly 2.0.
        WastRetCore::RefExtern(None) | WastRetCore::RefFunc(_) => Expected::NonNull,
        _ => return Err("a reference result of a later proposal (GC)".into()),
    })
}

/// The lane expectations of a `v128` pattern.
fn lanes(p: &wast::core::V128Pattern) -> Vec<Expected> {
    use wast::core::V128Pattern as P;
    let f32 = |n: &NanPattern<wast::token::F32>| match n {
        NanPattern::Value(v) => Expected::Exact(Val::F32(v.bits)),
        NanPattern::CanonicalNan => Expected::CanonicalNan32,
        NanPattern::ArithmeticNan => Expected::ArithmeticNan32,
    };
    let f64 = |n: &NanPattern<wast::token::F64>| match n {
        NanPattern::Value(v) => Expected::Exact(Val::F64(v.bits)),
        NanPattern::CanonicalNan => Expected::CanonicalNan64,
        NanPattern::ArithmeticNan => Expected::ArithmeticNan64,
    };
    match p {
        P::I8x16(v) => v
            .iter()
            .map(|&x| Expected::Exact(Val::I8(x as u8)))
            .collect(),
        P::I16x8(v) => v
            .iter()
            .map(|&x| Expected::Exact(Val::I16(x as u16)))
            .collect(),
        P::I32x4(v) => v
            .iter()
            .map(|&x| Expected::Exact(Val::I32(x as u32)))
            .collect(),
        P::I64x2(v) => v
            .iter()
            .map(|&x| Expected::Exact(Val::I64(x as u64)))
            .collect(),
        P::F32x4(v) => v.iter().map(f32).collect(),
        P::F64x2(v) => v.iter().map(f64).collect(),
    }
}

/// Lane `k` of the bytes of a `v128`, as the value `like` expects (its type and width).
fn lane_value(like: &Expected, bytes: &[u8; 16], k: usize) -> Option<Val> {
    let size = match like {
        Expected::Exact(Val::I8(_)) => 1,
        Expected::Exact(Val::I16(_)) => 2,
        Expected::Exact(Val::I32(_) | Val::F32(_))
        | Expected::CanonicalNan32
        | Expected::ArithmeticNan32 => 4,
        _ => 8,
    };
    let mut b = [0u8; 8];
    b[..size].copy_from_slice(bytes.get(k * size..(k + 1) * size)?);
    let x = u64::from_le_bytes(b);
    Some(match like {
        Expected::Exact(Val::I8(_)) => Val::I8(x as u8),
        Expected::Exact(Val::I16(_)) => Val::I16(x as u16),
        Expected::Exact(Val::I32(_)) => Val::I32(x as u32),
        Expected::Exact(Val::F32(_)) | Expected::CanonicalNan32 | Expected::ArithmeticNan32 => {
            Val::F32(x as u32)
        }
        Expected::Exact(Val::I64(_)) => Val::I64(x),
        _ => Val::F64(x),
    })
}

const F32_EXP: u32 = 0x7f80_0000;
const F32_QUIET: u32 = 0x0040_0000;
const F64_EXP: u64 = 0x7ff0_0000_0000_0000;
const F64_QUIET: u64 = 0x0008_0000_0000_0000;

impl Expected {
    /// Whether `v` satisfies this expectation.
    pub fn matches(&self, v: Val) -> bool {
        match (self, v) {
            (Expected::Exact(e), v) => *e == v,
            (Expected::NonNull, Val::Ptr(p)) => p != 0,
            (Expected::CanonicalNan32, Val::F32(b)) => b & 0x7fff_ffff == F32_EXP | F32_QUIET,
            (Expected::ArithmeticNan32, Val::F32(b)) => {
                b & (F32_EXP | F32_QUIET) == F32_EXP | F32_QUIET
            }
            (Expected::CanonicalNan64, Val::F64(b)) => {
                b & 0x7fff_ffff_ffff_ffff == F64_EXP | F64_QUIET
            }
            (Expected::ArithmeticNan64, Val::F64(b)) => {
                b & (F64_EXP | F64_QUIET) == F64_EXP | F64_QUIET
            }
            (Expected::Lanes(ls), Val::V128(bytes)) => ls
                .iter()
                .enumerate()
                .all(|(k, e)| lane_value(e, &bytes, k).is_some_and(|v| e.matches(v))),
            _ => false,
        }
    }
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expected::Exact(v) => f.write_str(&show(*v)),
            Expected::CanonicalNan32 => f.write_str("f32 nan:canonical"),
            Expected::ArithmeticNan32 => f.write_str("f32 nan:arithmetic"),
            Expected::CanonicalNan64 => f.write_str("f64 nan:canonical"),
            Expected::ArithmeticNan64 => f.write_str("f64 nan:arithmetic"),
            Expected::NonNull => f.write_str("a non-null reference"),
            Expected::Lanes(ls) => {
                let parts: Vec<String> = ls.iter().map(|e| e.to_string()).collect();
                write!(f, "v128 [{}]", parts.join(", "))
            }
        }
    }
}

/// A value as a script would write it, with the float's bits when they say more.
pub fn show(v: Val) -> String {
    match v {
        Val::I1(b) => format!("i1 {}", b as u8),
        Val::I8(x) => format!("i8 {}", x as i8),
        Val::I16(x) => format!("i16 {}", x as i16),
        Val::I32(x) => format!("i32 {}", x as i32),
        Val::I64(x) => format!("i64 {}", x as i64),
        Val::F32(b) => format!("f32 {} (0x{b:08x})", f32::from_bits(b)),
        Val::F64(b) => format!("f64 {} (0x{b:016x})", f64::from_bits(b)),
        Val::Ptr(0) => "ref.null".into(),
        Val::Ptr(a) if a & HOST_REF_TAG != 0 => format!("ref.extern {}", a & !HOST_REF_TAG),
        Val::Ptr(a) => format!("ptr 0x{a:x}"),
        Val::V128(b) => format!("v128 0x{:032x}", u128::from_le_bytes(b)),
    }
}

/// Values in a list, as `[a, b]`.
pub fn show_all<T>(vs: &[T], one: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = vs.iter().map(one).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_patterns() {
        let canon32 = 0x7fc0_0000;
        assert!(Expected::CanonicalNan32.matches(Val::F32(canon32)));
        assert!(Expected::CanonicalNan32.matches(Val::F32(canon32 | 0x8000_0000)));
        assert!(!Expected::CanonicalNan32.matches(Val::F32(canon32 | 1)));
        assert!(Expected::ArithmeticNan32.matches(Val::F32(canon32 | 1)));
        assert!(!Expected::ArithmeticNan32.matches(Val::F32(0x7f80_0001)));
        assert!(!Expected::ArithmeticNan32.matches(Val::F64(0x7ff8_0000_0000_0000)));
        assert!(Expected::CanonicalNan64.matches(Val::F64(0xfff8_0000_0000_0000)));
        assert!(!Expected::CanonicalNan64.matches(Val::F64(0x7ff8_0000_0000_0001)));
        assert!(Expected::ArithmeticNan64.matches(Val::F64(0x7ff8_0000_0000_0001)));
        assert!(!Expected::ArithmeticNan64.matches(Val::F64(0x7ff0_0000_0000_0001)));
    }

    #[test]
    fn references_are_pointers() {
        let null = WastArg::Core(WastArgCore::RefNull(wast::core::HeapType::Abstract {
            shared: false,
            ty: wast::core::AbstractHeapType::Extern,
        }));
        assert_eq!(arg(&null), Ok(Val::Ptr(0)));
        assert_eq!(
            arg(&WastArg::Core(WastArgCore::RefExtern(7))),
            Ok(Val::Ptr(host_ref(7)))
        );
        assert!(Expected::NonNull.matches(Val::Ptr(host_ref(0))));
        assert!(!Expected::NonNull.matches(Val::Ptr(0)));
        assert!(!Expected::Exact(Val::Ptr(host_ref(1))).matches(Val::Ptr(host_ref(2))));
        assert_eq!(show(Val::Ptr(host_ref(3))), "ref.extern 3");
    }

    #[test]
    fn exact_values_compare_bits_and_types() {
        assert!(Expected::Exact(Val::F32(0x8000_0000)).matches(Val::F32(0x8000_0000)));
        assert!(!Expected::Exact(Val::F32(0x8000_0000)).matches(Val::F32(0)));
        assert!(!Expected::Exact(Val::I32(1)).matches(Val::I64(1)));
    }

    #[test]
    fn vectors_compare_lane_by_lane() {
        let mut b = [0u8; 16];
        b[..4].copy_from_slice(&0x7fc0_0000u32.to_le_bytes());
        b[4..8].copy_from_slice(&1.5f32.to_bits().to_le_bytes());
        let e = Expected::Lanes(vec![
            Expected::CanonicalNan32,
            Expected::Exact(Val::F32(1.5f32.to_bits())),
            Expected::Exact(Val::F32(0)),
            Expected::ArithmeticNan32,
        ]);
        assert!(!e.matches(Val::V128(b)), "lane 3 is 0, not a NaN");
        b[12..].copy_from_slice(&0xffc0_0001u32.to_le_bytes());
        assert!(e.matches(Val::V128(b)));
        let bytes = Expected::Lanes((0..16).map(|k| Expected::Exact(Val::I8(k))).collect());
        let ramp: [u8; 16] = std::array::from_fn(|k| k as u8);
        assert!(bytes.matches(Val::V128(ramp)));
        assert!(!bytes.matches(Val::I32(0)));
    }
}
