//! Trap sites (spec/backends.md, "Checks as machine traps"): in a build whose code runs under
//! irkit's fault handler (an executable with an IR entry, `ir-run`'s JIT), a check that fails
//! is a machine trap where it is made (Cranelift's `trapnz`, `trapz` and `trap`, and a guarded
//! linear memory access faulting in its guard region) instead of a branch to a block calling
//! the trap routine. The handler finds the trap line by the interrupted program counter in the
//! table `irkit.rt.sites` (built by `crate::site_table`); this module holds what the table is
//! made of and depends on no other part of the back end.
//!
//! A check's trap code names its line: code [`FIRST_CODE`] + k is message k of the function's
//! message table (the trap lines its code refers to, `crate::names`), so the compiled code's
//! trap records (offset, code) give each trap instruction's line exactly, wherever Cranelift
//! placed it (an out-of-line `ud2`, a load merged into the instruction using its value). A
//! function with more distinct trap lines than codes checks the rest with branches. A
//! division, and a guarded access beyond the codes, trap with Cranelift's own codes and are
//! found by their instruction's code range.

use cranelift_codegen::CompiledCode;
use cranelift_codegen::ir::TrapCode;
use cranelift_module::{DataId, FuncId, Linkage, Module as ClModule};
use irkit_backend::BackendError;

use crate::error::cl_err;

/// The offset of the interrupted program counter in the `ucontext_t` a signal handler gets,
/// on the targets whose layout is known here (elsewhere checks are branches, and a guarded
/// access's fault is reported without its instruction).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub(crate) const PC_IN_CONTEXT: Option<i32> = Some(
    (std::mem::offset_of!(libc::ucontext_t, uc_mcontext)
        + std::mem::offset_of!(libc::mcontext_t, gregs)
        + 8 * libc::REG_RIP as usize) as i32,
);
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
pub(crate) const PC_IN_CONTEXT: Option<i32> = Some(
    (std::mem::offset_of!(libc::ucontext_t, uc_mcontext)
        + std::mem::offset_of!(libc::mcontext_t, pc)) as i32,
);
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub(crate) const PC_IN_CONTEXT: Option<i32> = None;

/// The first user trap code of a site (code 1 is `crate::runtime::UNREACHABLE_AFTER_EXIT`).
pub(crate) const FIRST_CODE: u8 = 2;

/// The number of site codes a function has: Cranelift's user trap codes from [`FIRST_CODE`].
pub(crate) const CODES: usize = 249;

/// The trap code of message `index` of a function, if it has one.
pub(crate) fn code_of_message(index: usize) -> Option<TrapCode> {
    if index >= CODES {
        return None;
    }
    TrapCode::user(FIRST_CODE + index as u8)
}

/// The message a trap code names, if it is a site code.
pub(crate) fn message_of_code(code: u8) -> Option<u32> {
    (code >= FIRST_CODE && usize::from(code - FIRST_CODE) < CODES)
        .then(|| u32::from(code - FIRST_CODE))
}

/// Whether a site may carry trap code `code`: a site code, or one of Cranelift's own that
/// irkit reports (`crate::site_table`).
pub(crate) fn reported_code(code: u8) -> bool {
    let own = [
        TrapCode::HEAP_OUT_OF_BOUNDS,
        TrapCode::INTEGER_DIVISION_BY_ZERO,
        TrapCode::INTEGER_OVERFLOW,
        TrapCode::STACK_OVERFLOW,
    ];
    message_of_code(code).is_some() || own.iter().any(|c| c.as_raw().get() == code)
}

/// A trap instruction of compiled code: its offset and its trap code (a site code, or one
/// of Cranelift's own irkit reports: [`reported_code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodeTrap {
    pub(crate) offset: u32,
    pub(crate) code: u8,
}

impl CodeTrap {
    /// The message of the function's table this trap reports, for a site code.
    pub(crate) fn message(self) -> Option<u32> {
        message_of_code(self.code)
    }
}

/// The trap instructions of `compiled` a site may name, in code order.
pub(crate) fn code_traps(compiled: &CompiledCode) -> Vec<CodeTrap> {
    let mut traps: Vec<CodeTrap> = compiled
        .buffer
        .traps()
        .iter()
        .map(|t| CodeTrap {
            offset: t.offset,
            code: t.code.as_raw().get(),
        })
        .filter(|t| reported_code(t.code))
        .collect();
    traps.sort_unstable_by_key(|t| t.offset);
    traps
}

/// One entry of `irkit.rt.sites`: bytes `start..end` of function `func` report the trap line
/// at `at..at + len` of data object `text`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Site {
    pub(crate) func: FuncId,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) text: DataId,
    pub(crate) at: u32,
    pub(crate) len: u32,
}

/// The bytes of one entry of `irkit.rt.sites`: the function's address, the start and end of
/// the code range in it, the trap line's address and length.
pub(crate) const SITE_BYTES: i32 = 40;

/// The trap sites of one build, collected as its functions are defined.
#[derive(Clone, Debug)]
pub(crate) struct Sites {
    /// `irkit.rt.sites`: a count, then one [`SITE_BYTES`] entry per site.
    pub(crate) table: DataId,
    /// `irkit.rt.site_lines`: [`Sites::lines`].
    pub(crate) text: DataId,
    /// The sites found so far.
    pub(crate) found: Vec<Site>,
    /// The lines of the sites of Cranelift's own trap codes (`crate::site_table`), one after the
    /// other.
    pub(crate) lines: String,
}

impl Sites {
    /// Declares the table and the text of the lines of Cranelift's own trap codes.
    pub(crate) fn declare<M: ClModule>(cl: &mut M) -> Result<Sites, BackendError> {
        let mut data = |name: &str| {
            cl.declare_data(name, Linkage::Local, false, false)
                .map_err(|e| cl_err("runtime", e))
        };
        Ok(Sites {
            table: data("irkit.rt.sites")?,
            text: data("irkit.rt.site_lines")?,
            found: Vec::new(),
            lines: String::new(),
        })
    }
}
