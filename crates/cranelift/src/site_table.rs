//! The table of trap sites (`crate::sites`) built from compiled functions: each trap
//! instruction a function's code carries, reported at its line (found with [`find`] on any
//! thread, noted with [`note`] in module order), and the table's definition once every
//! function is ([`define_sites`]).

use cranelift_codegen::ir::TrapCode;
use cranelift_module::{DataDescription, DataId, FuncId, Module as ClModule};
use irkit_backend::{BackendError, trap_kinds};
use irkit_core::{Inst, Opcode};
use rustc_hash::FxHashMap as HashMap;

use crate::context::Ctx;
use crate::debug::LineRow;
use crate::error::cl_err;
use crate::sites::{CodeTrap, SITE_BYTES, Site};

/// The trap kind of Cranelift's own trap code `code` at IR instruction `inst` (an
/// instruction whose machine code traps by itself: a guarded access out of bounds, a division
/// by zero or of the minimum by -1), if irkit reports it.
fn located_kind<M: ClModule>(ctx: &Ctx<'_, M>, inst: Inst, code: u8) -> Option<&'static str> {
    let code = TrapCode::from_raw(std::num::NonZeroU8::new(code)?);
    let op = ctx.m.opcode(inst);
    if code == TrapCode::HEAP_OUT_OF_BOUNDS && crate::memories::guarded_access(ctx, inst) {
        Some(trap_kinds::OUT_OF_BOUNDS_MEMORY)
    } else if code == TrapCode::INTEGER_DIVISION_BY_ZERO && divides(op) {
        Some(trap_kinds::DIVISION_BY_ZERO)
    } else if code == TrapCode::INTEGER_OVERFLOW && matches!(op, Opcode::SDIV | Opcode::SREM) {
        Some(trap_kinds::INTEGER_OVERFLOW)
    } else {
        None
    }
}

/// Whether IR instruction `inst` is lowered to machine code that traps by itself, found by
/// its Cranelift source location ([`note_function`]): a guarded access, or (where checks are
/// machine traps) a division.
pub(crate) fn traps_by_itself<M: ClModule>(ctx: &Ctx<'_, M>, inst: Inst) -> bool {
    crate::memories::guarded_access(ctx, inst) || (ctx.site_codes() && divides(ctx.m.opcode(inst)))
}

/// Whether `op` divides (and so traps on a zero divisor).
fn divides(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::SDIV | Opcode::UDIV | Opcode::SREM | Opcode::UREM
    )
}

/// Where a trap site's line is.
#[derive(Clone, Copy, Debug)]
enum Line {
    /// Line `k` of the function's message table.
    Message(usize),
    /// The line at `at` (`len` bytes) of the function's own text ([`Found::text`]).
    Own { at: u32, len: u32 },
}

/// A function's trap sites, found on any thread ([`find`]) and noted in the build's table
/// in module order ([`note`]).
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Each site's code range (start, end) and line, in code order.
    sites: Vec<(u32, u32, Line)>,
    /// The lines of the sites of Cranelift's own trap codes, one after the other.
    text: String,
}

/// Notes the trap sites of function definition `f` ([`find`], then [`note`]).
pub(crate) fn note_function<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    (f, id): (Inst, FuncId),
    (table, messages): (Option<DataId>, &[String]),
    rows: &[LineRow],
    traps: &[CodeTrap],
) {
    if ctx.sites.is_some() {
        let found = find(ctx, f, messages, rows, traps);
        note(ctx, id, (table, messages), found);
    }
}

/// The trap sites of function definition `f`, whose trap messages are `messages`, from the
/// code ranges `rows` of its located instructions (`crate::debug::line_rows`) and its trap
/// instructions `traps` (`crate::sites::code_traps`): a site code names its line in the
/// message table; Cranelift's own code is reported at the instruction whose code range holds
/// it, if that is an instruction trapping so ([`located_kind`]; a load merged into the
/// instruction using its value is in that one's range, and the fault handler reports it
/// without its instruction). The lines are rendered here, on the thread that asks.
pub(crate) fn find<M: ClModule>(
    ctx: &Ctx<'_, M>,
    f: Inst,
    messages: &[String],
    rows: &[LineRow],
    traps: &[CodeTrap],
) -> Found {
    let mut out = Found::default();
    let m = ctx.m;
    // The function's label and its instructions by ordinal, once a trap needs them.
    let mut func = None;
    let mut body = Vec::new();
    let mut lines: HashMap<(u32, u8), (u32, u32)> = HashMap::default();
    for &t in traps {
        let end = t.offset.saturating_add(1);
        if let Some(k) = t.message() {
            if (k as usize) < messages.len() {
                out.sites.push((t.offset, end, Line::Message(k as usize)));
            }
            continue;
        }
        // A prologue's stack check (a function given the limit, `Ctx::internal`) reports at
        // the function's first instruction; the others at their instruction's code range.
        let prologue = t.code == TrapCode::STACK_OVERFLOW.as_raw().get();
        let ordinal = if prologue {
            0
        } else {
            let i = rows.partition_point(|r| r.end <= t.offset);
            let Some(r) = rows.get(i).filter(|r| r.start <= t.offset) else {
                continue;
            };
            r.inst
        };
        if func.is_none() {
            func = Some(irkit_core::place::verified_def_label(m, f));
            for (k, blk) in m.blocks(f).enumerate() {
                let insts = &m.children(blk)[m.block_params(blk).len()..];
                body.extend(insts.iter().enumerate().map(|(i, &inst)| (k, blk, i, inst)));
            }
        }
        let Some(&(k, blk, index, inst)) = body.get(ordinal as usize) else {
            continue;
        };
        let kind = if prologue {
            Some(trap_kinds::NATIVE_STACK_EXHAUSTED)
        } else {
            located_kind(ctx, inst, t.code)
        };
        let Some(kind) = kind else {
            continue;
        };
        let text = &mut out.text;
        let (at, len) = *lines.entry((ordinal, t.code)).or_insert_with(|| {
            let place =
                crate::place::Place::new(func.clone().unwrap_or_default(), (blk, k), index, inst);
            let line = format!("trap: {kind} in {}\n", place.render(m));
            let at = text.len() as u32;
            text.push_str(&line);
            (at, line.len() as u32)
        });
        out.sites.push((t.offset, end, Line::Own { at, len }));
    }
    out
}

/// Notes `found`, the trap sites of the function defined as `id` with message table
/// `table` (`messages` concatenated), in the build's table.
pub(crate) fn note<M: ClModule>(
    ctx: &mut Ctx<'_, M>,
    id: FuncId,
    (table, messages): (Option<DataId>, &[String]),
    found: Found,
) {
    let Some(sites) = &mut ctx.sites else {
        return;
    };
    let (own_text, base) = (sites.text, sites.lines.len());
    let mut starts = Vec::with_capacity(messages.len());
    let mut at = 0u32;
    for m in messages {
        starts.push(at);
        at = at.saturating_add(m.len() as u32);
    }
    for (start, end, line) in found.sites {
        let (text, at, len) = match line {
            Line::Message(k) => match (table, starts.get(k), messages.get(k)) {
                (Some(table), Some(&at), Some(line)) => (table, at, line.len() as u32),
                _ => continue,
            },
            Line::Own { at, len } => (own_text, (base as u32).saturating_add(at), len),
        };
        sites.found.push(Site {
            func: id,
            start,
            end,
            text,
            at,
            len,
        });
    }
    sites.lines.push_str(&found.text);
}

/// Defines `irkit.rt.sites` and `irkit.rt.site_lines` once every function is.
pub(crate) fn define_sites<M: ClModule>(ctx: &mut Ctx<'_, M>) -> Result<(), BackendError> {
    let Some(s) = ctx.sites.take() else {
        return Ok(());
    };
    let mut lines = DataDescription::new();
    lines.define(
        if s.lines.is_empty() { "-" } else { &s.lines }
            .as_bytes()
            .into(),
    );
    ctx.cl
        .define_data(s.text, &lines)
        .map_err(|e| cl_err("runtime", e))?;
    let mut bytes = vec![0u8; 8 + s.found.len() * SITE_BYTES as usize];
    bytes[..8].copy_from_slice(&(s.found.len() as u64).to_le_bytes());
    let mut d = DataDescription::new();
    d.set_align(8);
    let mut relocs = Vec::new();
    for (k, site) in s.found.iter().enumerate() {
        let at = 8 + k * SITE_BYTES as usize;
        bytes[at + 8..at + 16].copy_from_slice(&u64::from(site.start).to_le_bytes());
        bytes[at + 16..at + 24].copy_from_slice(&u64::from(site.end).to_le_bytes());
        bytes[at + 32..at + 40].copy_from_slice(&u64::from(site.len).to_le_bytes());
        relocs.push((at as u32, *site));
    }
    d.define(bytes.into_boxed_slice());
    let mut texts = rustc_hash::FxHashMap::default();
    for (at, site) in relocs {
        let fr = ctx.cl.declare_func_in_data(site.func, &mut d);
        d.write_function_addr(at, fr);
        let gv = *texts
            .entry(site.text)
            .or_insert_with(|| ctx.cl.declare_data_in_data(site.text, &mut d));
        d.write_data_addr(at + 24, gv, i64::from(site.at));
    }
    ctx.cl
        .define_data(s.table, &d)
        .map_err(|e| cl_err("runtime", e))?;
    ctx.sites = Some(s);
    Ok(())
}
