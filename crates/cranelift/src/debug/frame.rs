//! Unwind information: each function's call frame program, and the `.eh_frame` section that
//! holds one common entry (CIE) and a frame description entry (FDE) per function.
//!
//! Cranelift describes a compiled function's frame (`CompiledCode::create_unwind_info`) as
//! `gimli` call frame instructions that only `gimli` can write. [`cfa_program`] writes them
//! once, when the function is compiled, and keeps the encoded instructions: bytes that do not
//! depend on where the function is placed (offsets in them are from its start), so the code
//! cache stores them beside the code. [`eh_frame`] then writes each FDE itself around those
//! bytes: its length, the distance back to the CIE, the function's address (4 bytes relative
//! to the field: `DW_EH_PE_pcrel | DW_EH_PE_sdata4`, as C compilers write it, so that a
//! position-independent executable needs no run-time relocation here), the code length, an
//! empty augmentation, the program, and `DW_CFA_nop` padding to the address size.
//! [`debug_frame`] writes the same programs as `.debug_frame`, with absolute addresses, for
//! code already placed (the JIT's image for debuggers, `super::jit_image`).

use cranelift_codegen::CompiledCode;
use cranelift_codegen::gimli;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::isa::unwind::UnwindInfo;
use gimli::RunTimeEndian;
use gimli::write::{
    Address, DebugFrame, EhFrame, EndianVec, FrameDescriptionEntry, FrameTable, Writer,
};

use super::sections::Section;

/// The byte order of `isa`'s code and data.
pub(crate) fn endian(isa: &dyn TargetIsa) -> RunTimeEndian {
    match isa.endianness() {
        cranelift_codegen::ir::Endianness::Little => RunTimeEndian::Little,
        cranelift_codegen::ir::Endianness::Big => RunTimeEndian::Big,
    }
}

/// The encoded call frame instructions of `compiled` (code compiled for `isa`): empty if the
/// target gives no System V unwind information.
pub(crate) fn cfa_program(compiled: &CompiledCode, isa: &dyn TargetIsa) -> Vec<u8> {
    let Ok(Some(UnwindInfo::SystemV(info))) = compiled.create_unwind_info(isa) else {
        return Vec::new();
    };
    let Some(mut cie) = isa.create_systemv_cie() else {
        return Vec::new();
    };
    // A CIE without augmentation and absolute FDE addresses: the FDE's header is then its
    // length, the CIE pointer, the address and the length (an address size each).
    cie.fde_address_encoding = gimli::DW_EH_PE_absptr;
    cie.lsda_encoding = None;
    cie.personality = None;
    cie.signal_trampoline = false;
    let size = usize::from(isa.pointer_bytes());
    let mut table = FrameTable::default();
    let id = table.add_cie(cie);
    table.add_fde(id, info.to_fde(Address::Constant(0)));
    let mut out = EhFrame(EndianVec::new(endian(isa)));
    if table.write_eh_frame(&mut out).is_err() {
        return Vec::new();
    }
    let bytes = out.0.into_vec();
    let word = |at: usize| -> Option<usize> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        let v = match endian(isa) {
            RunTimeEndian::Little => u32::from_le_bytes(b),
            RunTimeEndian::Big => u32::from_be_bytes(b),
        };
        usize::try_from(v).ok()
    };
    // Lengths of the 32-bit format only (below 0xffff_fff0).
    let program = || {
        let fde = 4 + word(0).filter(|&n| n < 0xffff_fff0)?;
        let end = fde + 4 + word(fde)?;
        bytes.get(fde + 8 + 2 * size..end).map(<[u8]>::to_vec)
    };
    program().unwrap_or_default()
}

/// The CIE of `isa` as `.eh_frame` (`eh`: FDE addresses `DW_EH_PE_pcrel | DW_EH_PE_sdata4`)
/// or `.debug_frame` (absolute addresses) writes it: its bytes, length field included.
/// `None` if the target has no System V CIE.
fn cie(isa: &dyn TargetIsa, eh: bool) -> Option<Vec<u8>> {
    let mut cie = isa.create_systemv_cie()?;
    cie.fde_address_encoding = if eh {
        gimli::DW_EH_PE_pcrel | gimli::DW_EH_PE_sdata4
    } else {
        gimli::DW_EH_PE_absptr
    };
    cie.lsda_encoding = None;
    cie.personality = None;
    cie.signal_trampoline = false;
    // `gimli` writes a CIE only before an FDE using it: the CIE is what comes before a
    // placeholder FDE.
    let mut table = FrameTable::default();
    let id = table.add_cie(cie);
    table.add_fde(id, FrameDescriptionEntry::new(Address::Constant(0), 0));
    let mut head = EndianVec::new(endian(isa));
    if eh {
        let mut w = EhFrame(head);
        table.write_eh_frame(&mut w).ok()?;
        head = w.0;
    } else {
        let mut w = DebugFrame(head);
        table.write_debug_frame(&mut w).ok()?;
        head = w.0;
    }
    let head = head.into_vec();
    let len: [u8; 4] = head.get(..4)?.try_into().ok()?;
    let len = match endian(isa) {
        RunTimeEndian::Little => u32::from_le_bytes(len),
        RunTimeEndian::Big => u32::from_be_bytes(len),
    };
    head.get(..4 + usize::try_from(len).ok()?)
        .map(<[u8]>::to_vec)
}

/// The `.eh_frame` section for `isa` describing `functions`: each the index of its symbol
/// (a relocation target, `super::sections`), its code length and its call frame program
/// (a function without one gets no FDE). `None` if the target has no System V CIE.
pub(crate) fn eh_frame(isa: &dyn TargetIsa, functions: &[(usize, u32, &[u8])]) -> Option<Section> {
    let align = usize::from(isa.pointer_bytes());
    let mut s = Section::new(endian(isa));
    s.write(&cie(isa, true)?).ok()?;
    for &(symbol, len, program) in functions {
        if program.is_empty() {
            continue;
        }
        let start = s.len();
        s.write_u32(0).ok()?;
        // The CIE is at offset 0: the distance from this field back to it.
        s.write_u32(u32::try_from(s.len()).ok()?).ok()?;
        s.write_eh_pointer(
            Address::Symbol { symbol, addend: 0 },
            gimli::DW_EH_PE_pcrel | gimli::DW_EH_PE_sdata4,
            4,
        )
        .ok()?;
        s.write_u32(len).ok()?;
        // The augmentation data: none.
        s.write_u8(0).ok()?;
        s.write(program).ok()?;
        while !(s.len() - start).is_multiple_of(align) {
            s.write_u8(gimli::DW_CFA_nop.0).ok()?;
        }
        let length = u32::try_from(s.len() - start - 4).ok()?;
        s.write_u32_at(start, length).ok()?;
    }
    Some(s)
}

/// The `.debug_frame` section for `isa` describing `functions` already placed: each its
/// address, its code length and its call frame program (none: no FDE). One CIE at offset 0
/// (Cranelift's, without augmentation), and per function an FDE with the absolute address
/// and length (an address size each): what a debugger reads for code no linker placed (the
/// JIT's, `super::jit_image`). `None` if the target has no System V CIE.
pub(crate) fn debug_frame(isa: &dyn TargetIsa, functions: &[(u64, u32, &[u8])]) -> Option<Vec<u8>> {
    let size = isa.pointer_bytes();
    let mut s = EndianVec::new(endian(isa));
    s.write(&cie(isa, false)?).ok()?;
    for &(address, len, program) in functions {
        if program.is_empty() {
            continue;
        }
        let start = s.len();
        s.write_u32(0).ok()?;
        // The CIE's offset in the section.
        s.write_u32(0).ok()?;
        s.write_udata(address, size).ok()?;
        s.write_udata(len.into(), size).ok()?;
        s.write(program).ok()?;
        while !(s.len() - start).is_multiple_of(usize::from(size)) {
            s.write_u8(gimli::DW_CFA_nop.0).ok()?;
        }
        let length = u32::try_from(s.len() - start - 4).ok()?;
        s.write_u32_at(start, length).ok()?;
    }
    Some(s.into_vec())
}
