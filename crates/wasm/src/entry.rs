//! An entry point for a translated module: `main`, which runs the module's initializer and
//! then one of its exported functions, so a wasm program links into an executable (`ir-link
//! --emit exe`) or runs with `ir-run` like any irkit program.

use irkit_core::{Builder, Module, Opcode};

use crate::error::{At, Place, WasmError};
use crate::names;

/// Adds `main` (exported as `main`) to `m`, the translation of a module compiled as `name`:
/// it calls `wasm-init:NAME`, then the export `field`, which must take no parameters and
/// return nothing or an `i32`, and returns that result (0 for none).
pub fn add_main(m: &mut Module, name: &str, field: &str) -> Result<(), WasmError> {
    let place = Place::at(0);
    let sym = names::symbol(name, field);
    let no_such = || {
        WasmError::unsupported(
            format!("`--main {field}`: no exported function `{field}`"),
            place,
        )
    };
    let f = m.find_export(&sym).ok_or_else(no_such)?;
    let init = m
        .find_export(&names::init_symbol(name))
        .ok_or_else(no_such)?;
    // The initializer takes nothing, as translation makes it (`m` may come from elsewhere:
    // this is checked before it is called).
    let init_ok = m.opcode(init) == Opcode::FUNC
        && m.ty(init)
            .and_then(|s| m.fn_signature(s))
            .is_some_and(|(_, params)| params.is_empty());
    if m.opcode(f) != Opcode::FUNC || !init_ok {
        return Err(no_such());
    }
    let sig = m.ty(f).ok_or_else(no_such)?;
    let (ret, params) = m.fn_signature(sig).ok_or_else(no_such)?;
    let ret_op = m.opcode(ret);
    if !params.is_empty() || !(ret_op == Opcode::VOID || ret_op == Opcode::I32) {
        return Err(WasmError::unsupported(
            format!(
                "`--main {field}`: a main function of a type other than [] -> [] or [] -> [i32]"
            ),
            place,
        ));
    }
    let mut b = Builder::new(m);
    let i32t = b.module().ty_i32();
    let main_sig = b.module().ty_fn(i32t, &[]).at(place)?;
    // `main` treats NaNs as the function it calls does, so that the function inlined into it
    // keeps its NaNs relaxed (a relaxed body inlined into a function that is not computes
    // canonical NaNs there, crates/opt).
    let nans = if b.module().find_decoration(f, Opcode::RELAXED_NAN).is_some() {
        crate::translate::Nans::Wasm
    } else {
        crate::translate::Nans::Canonical
    };
    let main = crate::translate::wasm_func(&mut b, "main", main_sig, nans).at(place)?;
    b.export(main, "main").at(place)?;
    let (entry, _) = b.entry_block(main).at(place)?;
    b.position_at_end(entry);
    b.ins().call(init, &[]);
    let r = b.ins().call(f, &[]);
    let r = if ret_op == Opcode::VOID {
        b.module().const_i32(0)
    } else {
        r
    };
    b.ins().ret(Some(r));
    Ok(())
}
