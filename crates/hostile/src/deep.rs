//! Deeply nested modules, for the nesting-limit tests (`spec/ir.md`, Limits): an instruction
//! tree nested `depth` levels deep and a chain of types and constants `depth` values deep,
//! built bottom-up through the core API so that building costs O(depth).

use irkit_core::{Inst, Module, Opcode, Payload};

use irkit_format::WriteError;

/// An opaque opcode (no registry entry) used for the nested chain of [`deep_tree`].
pub const DEEP_OPCODE: Opcode = Opcode(0x7F00);

/// A module with one function, `@deep` (exported as `deep`, `fn() -> void`), whose entry block
/// holds a chain of opaque [`DEEP_OPCODE`] instructions, each the only child of the previous
/// one, then `ret`: its deepest instruction has `depth` ancestors (the module root is at depth
/// 0, the function at 1, the block at 2). `depth` below 3 gives the chain-less function.
pub fn deep_tree(depth: u32) -> Result<Module, irkit_core::CoreError> {
    let mut m = Module::new();
    let void = m.ty_void();
    let sig = m.ty_fn(void, &[])?;
    // Bottom-up: each new parent is detached while its child is attached, so attaching never
    // walks a long ancestor chain.
    let mut chain: Option<Inst> = None;
    for _ in 3..=depth {
        let i = m.new_inst(DEEP_OPCODE, None, Vec::new(), Payload::None)?;
        if let Some(c) = chain {
            m.append_child(i, c)?;
        }
        chain = Some(i);
    }
    let f = m.new_inst(Opcode::FUNC, Some(sig), Vec::new(), Payload::None)?;
    let b = m.new_inst(Opcode::BLOCK, None, Vec::new(), Payload::None)?;
    if let Some(c) = chain {
        m.append_child(b, c)?;
    }
    let ret = m.new_inst(Opcode::RET, None, Vec::new(), Payload::None)?;
    m.append_child(b, ret)?;
    m.append_child(f, b)?;
    let root = m.root();
    m.append_child(root, f)?;
    m.set_name(f, "deep")?;
    m.add_decoration(f, Opcode::EXPORT, Vec::new(), Payload::Str("deep".into()))?;
    Ok(m)
}

/// A module whose pool holds a type chain `T1 = struct {i32}`, `Tk = struct {Tk-1}` up to
/// `T(depth-1)` and a constant chain `c0 = i32 0`, `ck = Tk [ck-1]`: the deepest value,
/// `c(depth-2)`, is `depth` values deep (`i32` is 1 deep, a value is one deeper than its
/// type and operands). It defines `@c: T(depth-2) = global_const c(depth-2)` (exported as `c`)
/// and `@main: fn() -> i32` (exported as `main`), which allocates a `T(depth-1)` on the stack
/// and returns 0. `depth` must be at least 2.
pub fn deep_types(depth: u32) -> Result<Module, irkit_core::CoreError> {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let mut ty = i32t;
    let mut c = m.const_i32(0);
    let mut types = vec![i32t];
    for _ in 1..depth.max(2) {
        ty = m.ty_struct(&[ty])?;
        types.push(ty);
    }
    for &t in &types[1..types.len() - 1] {
        c = m.const_aggregate(t, &[c])?;
    }
    let cty = types[types.len() - 2];
    let g = m.new_inst(Opcode::GLOBAL_CONST, Some(cty), vec![c], Payload::None)?;
    let root = m.root();
    m.append_child(root, g)?;
    m.set_name(g, "c")?;
    m.add_decoration(g, Opcode::EXPORT, Vec::new(), Payload::Str("c".into()))?;

    let sig = m.ty_fn(i32t, &[])?;
    let ptr = m.ty_ptr();
    let zero = m.const_i32(0);
    let f = m.new_inst(Opcode::FUNC, Some(sig), Vec::new(), Payload::None)?;
    let b = m.new_inst(Opcode::BLOCK, None, Vec::new(), Payload::None)?;
    let a = m.new_inst(Opcode::STACKALLOC, Some(ptr), vec![ty], Payload::None)?;
    let ret = m.new_inst(Opcode::RET, None, vec![zero], Payload::None)?;
    m.append_child(b, a)?;
    m.append_child(b, ret)?;
    m.append_child(f, b)?;
    m.append_child(root, f)?;
    m.set_name(f, "main")?;
    m.add_decoration(f, Opcode::EXPORT, Vec::new(), Payload::Str("main".into()))?;
    Ok(m)
}

/// Writes `m` as [`write`](irkit_format::write()) does, whatever its depth (a valid writer refuses a
/// module nested deeper than the limit; this one writes it anyway, as a hostile writer would).
pub fn write_any_depth(m: &Module) -> Result<Vec<u8>, WriteError> {
    irkit_format::testing::write_unlimited(m)
}

/// [`deep_tree`] written as a file, whatever its depth (a valid writer refuses a module nested
/// deeper than the limit; this one writes it anyway, as a hostile writer would).
pub fn deep_tree_file(depth: u32) -> Result<Vec<u8>, WriteError> {
    let m = deep_tree(depth).map_err(|e| WriteError::Unrepresentable(e.to_string()))?;
    irkit_format::testing::write_unlimited(&m)
}

/// [`deep_types`] written as a file, whatever its depth.
pub fn deep_types_file(depth: u32) -> Result<Vec<u8>, WriteError> {
    let m = deep_types(depth).map_err(|e| WriteError::Unrepresentable(e.to_string()))?;
    irkit_format::testing::write_unlimited(&m)
}
