//! WebAssembly value types and function types as irkit types.

use irkit_core::{CoreError, Inst, Module};
use wasmparser::{FuncType, ValType};

/// The irkit type of a wasm value type (`v128` is `vec i32 4`, [`crate::simd`]). A reference
/// (`funcref`, `externref`) is a `ptr` ([`crate::table`]).
pub fn val_type(m: &mut Module, t: ValType) -> Option<Inst> {
    Some(match t {
        ValType::I32 => m.ty_i32(),
        ValType::I64 => m.ty_i64(),
        ValType::F32 => m.ty_f32(),
        ValType::F64 => m.ty_f64(),
        ValType::Ref(_) => m.ty_ptr(),
        ValType::V128 => v128_type(m)?,
    })
}

/// The irkit type of `v128`: `vec i32 4` (each SIMD operator bitcasts it to its own shape,
/// [`crate::simd`]).
pub fn v128_type(m: &mut Module) -> Option<Inst> {
    let i32t = m.ty_i32();
    m.ty_vec(i32t, 4).ok()
}

/// The wasm spelling of a value type, for messages.
pub fn val_type_name(t: ValType) -> String {
    match t {
        ValType::I32 => "i32".into(),
        ValType::I64 => "i64".into(),
        ValType::F32 => "f32".into(),
        ValType::F64 => "f64".into(),
        ValType::V128 => "v128".into(),
        ValType::Ref(r) => format!("{r}"),
    }
}

/// The types of a list of wasm value types; `Err(t)` names the first unsupported one.
pub fn val_types(m: &mut Module, ts: &[ValType]) -> Result<Vec<Inst>, ValType> {
    ts.iter().map(|&t| val_type(m, t).ok_or(t)).collect()
}

/// The irkit return type of a list of results: `void` for none, the type itself for one, a
/// `struct` of them for several (multi-value).
pub fn results_type(m: &mut Module, results: &[Inst]) -> Result<Inst, CoreError> {
    match results {
        [] => Ok(m.ty_void()),
        [t] => Ok(*t),
        ts => m.ty_struct(ts),
    }
}

/// The irkit signature of a wasm function type; `Err(t)` names an unsupported value type.
pub fn signature(m: &mut Module, ft: &FuncType) -> Result<Result<Inst, CoreError>, ValType> {
    let params = val_types(m, ft.params())?;
    let results = val_types(m, ft.results())?;
    Ok(results_type(m, &results).and_then(|r| m.ty_fn(r, &params)))
}
