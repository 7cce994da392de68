//! Global data: one data object per `global_var` (writable) and `global_const` (read-only),
//! aligned to its type, holding the bytes of its initial value (spec/ir.md, "Layout":
//! little-endian scalars, zero padding) with relocations where a definition's address is
//! stored. A global whose initial value is all zeros (none, or `zero`, or constants that are
//! all zero) is zero-fill data: `.bss` in an object file, lazily zeroed memory in the JIT; its
//! bytes are never materialized. A global is at most [`MAX_GLOBAL_SIZE`] bytes.

use cranelift_module::{DataDescription, Linkage, Module as ClModule};
use irkit_backend::BackendError;
use irkit_core::{Inst, Opcode};

use crate::context::{Callee, Ctx};
use crate::error::{cl_err, unsupported};
use crate::types::Shape;
use irkit_core::place::verified_def_label;

/// A definition's address stored in data: at `offset`, the address of `target`.
struct Reloc {
    offset: u64,
    target: Inst,
}

/// The largest global native code accepts, in bytes: 2 GiB − 1. Code refers to the data an
/// object file defines PC-relatively (x86-64's small code model and aarch64's `adrp` reach
/// ±2 GiB and ±4 GiB), so a larger object cannot be linked; `cranelift-jit` panics on a
/// PC-relative relocation out of ±2 GiB (`compiled_blob.rs`, `i32::try_from(..).unwrap()`),
/// and copies an initialized object through memory it must allocate whole. Above it, the
/// global is refused with an error naming it.
pub const MAX_GLOBAL_SIZE: u64 = (1 << 31) - 1;

/// The size and alignment of global `d`, refused if larger than [`MAX_GLOBAL_SIZE`].
pub(crate) fn checked_layout<M: ClModule>(
    ctx: &Ctx<'_, M>,
    d: Inst,
) -> Result<(u64, u64), BackendError> {
    let m = ctx.m;
    let place = verified_def_label(m, d);
    let ty = m
        .ty(d)
        .ok_or_else(|| BackendError::Malformed(format!("{place} has no type")))?;
    let layout = ctx
        .layouts
        .get(ty)
        .ok_or_else(|| unsupported(&place, "the global's type is not a value type"))?;
    if layout.size > MAX_GLOBAL_SIZE {
        return Err(unsupported(
            &place,
            format!(
                "a global of {} bytes (native code holds at most {MAX_GLOBAL_SIZE} bytes per global)",
                layout.size
            ),
        ));
    }
    Ok((layout.size, layout.align))
}

/// Whether global `d` starts all zero: no initial value, or one whose every scalar is zero
/// (`zero`, `null`, integer and float constants of all-zero bits, zero bytes).
pub(crate) fn zero_initialized(m: &irkit_core::Module, d: Inst) -> bool {
    let mut work: Vec<Inst> = m.operands(d).to_vec();
    while let Some(v) = work.pop() {
        let zero = match m.opcode(v) {
            Opcode::CONST_NULL | Opcode::CONST_ZERO => true,
            Opcode::CONST_INT | Opcode::CONST_FLOAT => matches!(
                m.payload(v),
                irkit_core::Payload::Int(0) | irkit_core::Payload::Float(0)
            ),
            Opcode::CONST_BYTES => m
                .payload(v)
                .as_bytes()
                .is_some_and(|b| b.iter().all(|&x| x == 0)),
            Opcode::CONST_AGGREGATE => {
                work.extend_from_slice(m.operands(v));
                true
            }
            // A definition's address, or anything else: not zero.
            _ => false,
        };
        if !zero {
            return false;
        }
    }
    true
}

/// Defines the data object of every global of the module but the first `live` top-level
/// definitions (a session's live ones, defined by an earlier lowering).
pub(crate) fn define_all<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    live: usize,
) -> Result<(), BackendError> {
    let m = ctx.m;
    for &d in m.top_level().iter().skip(live) {
        let Some(&id) = ctx.globals.get(&d) else {
            continue;
        };
        // Imported: a C data object, or the JIT's zero-fill memory.
        if ctx.cl.declarations().get_data_decl(id).linkage == Linkage::Import {
            continue;
        }
        let place = verified_def_label(m, d);
        let ty = m
            .ty(d)
            .ok_or_else(|| BackendError::Malformed(format!("{place} has no type")))?;
        let (size, align) = checked_layout(ctx, d)?;
        // Every object gets its own address, even an empty one.
        let len = usize::try_from(size.max(1))
            .map_err(|_| unsupported(&place, format!("a global of {size} bytes")))?;
        let mut desc = DataDescription::new();
        desc.set_align(align);
        match m.operands(d).first() {
            _ if zero_initialized(m, d) => desc.define_zeroinit(len),
            None => desc.define_zeroinit(len),
            Some(&init) => {
                let mut bytes = Vec::new();
                bytes.try_reserve_exact(len).map_err(|_| {
                    unsupported(
                        &place,
                        format!("no memory for the {len} bytes of its initial value"),
                    )
                })?;
                bytes.resize(len, 0u8);
                let mut relocs = Vec::new();
                encode(ctx, init, ty, 0, &mut bytes, &mut relocs)
                    .map_err(|what| unsupported(&place, what))?;
                desc.define(bytes.into_boxed_slice());
                for r in relocs {
                    let offset = u32::try_from(r.offset)
                        .map_err(|_| unsupported(&place, "a relocation beyond 4 GiB"))?;
                    if let Some(&gid) = ctx.globals.get(&r.target) {
                        let gv = ctx.cl.declare_data_in_data(gid, &mut desc);
                        desc.write_data_addr(offset, gv, 0);
                    } else {
                        match ctx.funcs.get(&r.target) {
                            Some(Callee::Func(fid) | Callee::Abort(fid)) => {
                                let fr = ctx.cl.declare_func_in_data(*fid, &mut desc);
                                desc.write_function_addr(offset, fr);
                            }
                            _ => {
                                return Err(unsupported(
                                    &place,
                                    format!(
                                        "the address of {} (not available to this back end)",
                                        verified_def_label(m, r.target)
                                    ),
                                ));
                            }
                        }
                    }
                }
            }
        }
        ctx.cl
            .define_data(id, &desc)
            .map_err(|e| cl_err(&place, e))?;
    }
    Ok(())
}

/// Writes the bytes of constant (or definition) `v` of type `ty` at `at` in `out`.
fn encode<M: ClModule>(
    ctx: &Ctx<'_, M>,
    v: Inst,
    ty: Inst,
    at: u64,
    out: &mut [u8],
    relocs: &mut Vec<Reloc>,
) -> Result<(), String> {
    let m = ctx.m;
    // Work list of (value, type, offset): no recursion, however deep the aggregate.
    let mut work = vec![(v, ty, at)];
    while let Some((v, ty, at)) = work.pop() {
        let op = m.opcode(v);
        if op.is_definition() {
            relocs.push(Reloc {
                offset: at,
                target: v,
            });
            continue;
        }
        let layout = ctx
            .layouts
            .get(ty)
            .ok_or_else(|| "an initializer of a type that is not a value type".to_string())?;
        let start = usize::try_from(at).map_err(|e| e.to_string())?;
        let size = usize::try_from(layout.size).map_err(|e| e.to_string())?;
        let slot = out
            .get_mut(start..start + size)
            .ok_or_else(|| "an initializer larger than its global".to_string())?;
        match op {
            Opcode::CONST_INT | Opcode::CONST_FLOAT => {
                let bits = match m.payload(v) {
                    irkit_core::Payload::Int(b) | irkit_core::Payload::Float(b) => *b,
                    _ => return Err(format!("{op} without its payload")),
                };
                let le = bits.to_le_bytes();
                slot.copy_from_slice(&le[..size]);
            }
            Opcode::CONST_NULL | Opcode::CONST_ZERO => {}
            Opcode::CONST_BYTES => {
                let b = m.payload(v).as_bytes().unwrap_or(&[]);
                if b.len() != size {
                    return Err("const_bytes of the wrong length".into());
                }
                slot.copy_from_slice(b);
            }
            Opcode::CONST_AGGREGATE => match &layout.shape {
                Shape::Array { elem, .. } => {
                    let es = ctx.layouts.get(*elem).map_or(0, |l| l.size);
                    for (i, &e) in m.operands(v).iter().enumerate() {
                        work.push((e, *elem, at + i as u64 * es));
                    }
                }
                Shape::Struct { fields, offsets } => {
                    for ((&e, &f), &o) in m.operands(v).iter().zip(fields).zip(offsets) {
                        work.push((e, f, at + o));
                    }
                }
                Shape::Vector { lane, .. } => {
                    let lane_ty = *m
                        .operands(ty)
                        .first()
                        .ok_or_else(|| "a vector type without its lane".to_string())?;
                    for (i, &e) in m.operands(v).iter().enumerate() {
                        work.push((e, lane_ty, at + i as u64 * lane.size()));
                    }
                }
                Shape::Scalar(_) => return Err("an aggregate constant of a scalar type".into()),
            },
            _ => return Err(format!("{op} is not a constant initializer")),
        }
    }
    Ok(())
}
