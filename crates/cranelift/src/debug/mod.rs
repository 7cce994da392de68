//! Debug information in object files (spec/backends.md, "Debug information"): DWARF line
//! tables and function descriptions from the IR's `loc` decorations, and unwind information
//! for every function.
//!
//! Compiling a function keeps, beside its code, what the debug sections need and what does
//! not depend on where the code is placed ([`Defined`]: the code ranges of each located IR
//! instruction, by ordinal, see [`locs`]; the encoded call frame program, see [`frame`]); the
//! code cache stores both in its entries. Once every function is defined and the object is
//! finished, [`write()`] adds the sections, their references to the functions as relocations
//! against the function symbols ([`sections`]). The files: [`locs`] (ordinals and the
//! location table), [`frame`] (`.eh_frame`), [`info`] (the DWARF units and line programs),
//! [`sections`] (relocating writer, placing the sections). For the JIT, [`jit_image`] builds
//! the same DWARF with the code's real addresses into an ELF image in memory, which
//! [`gdb_jit`] hands to GDB.

pub(crate) mod files;
pub(crate) mod frame;
pub(crate) mod gdb_jit;
pub(crate) mod info;
pub(crate) mod inlined;
pub(crate) mod jit_image;
pub(crate) mod locs;
pub(crate) mod sections;

use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::{CompiledCode, gimli};
use cranelift_module::FuncId;
use cranelift_object::ObjectProduct;
use cranelift_object::object::SectionKind;
use irkit_backend::BackendError;
use irkit_core::{Inst, Module};

/// The machine code one located IR instruction produced: bytes `start..end` of the
/// function's code came from body instruction `inst` (an ordinal, [`locs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineRow {
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) inst: u32,
}

/// The code ranges of each located instruction of `compiled`, in code order.
pub(crate) fn line_rows(compiled: &CompiledCode) -> Vec<LineRow> {
    compiled
        .buffer
        .get_srclocs_sorted()
        .iter()
        .filter(|s| !s.loc.is_default() && s.start < s.end)
        .map(|s| LineRow {
            start: s.start,
            end: s.end,
            inst: s.loc.bits(),
        })
        .collect()
}

/// What one function defined in the object keeps for its debug information.
#[derive(Clone, Debug)]
pub(crate) struct Defined {
    /// Its symbol.
    pub(crate) id: FuncId,
    /// Its IR definition (`None` for a generated routine).
    pub(crate) def: Option<Inst>,
    /// The length of its code.
    pub(crate) size: u32,
    /// Its line rows ([`line_rows`]).
    pub(crate) lines: Vec<LineRow>,
    /// Its call frame program ([`frame::cfa_program`]).
    pub(crate) cfa: Vec<u8>,
}

impl Defined {
    /// What compiling `compiled` (function `id` of definition `def`, for `isa`) keeps.
    pub(crate) fn of(
        id: FuncId,
        def: Option<Inst>,
        compiled: &CompiledCode,
        isa: &dyn TargetIsa,
    ) -> Defined {
        Defined {
            id,
            def,
            size: u32::try_from(compiled.code_buffer().len()).unwrap_or(u32::MAX),
            lines: line_rows(compiled),
            cfa: frame::cfa_program(compiled, isa),
        }
    }
}

/// A function described: its symbol index, its definition, names and code.
pub(crate) struct Described<'d> {
    /// Its index in the symbol list relocations name.
    pub(crate) symbol: usize,
    /// Its name in the source (the IR name, without `@`; else its symbol's).
    pub(crate) name: String,
    /// What compiling it kept.
    pub(crate) defined: &'d Defined,
}

/// Function `d` of `m` (its symbol `linkage`, symbol index `index`) as the DWARF describes
/// it: named by its IR name, else by its symbol.
pub(crate) fn described<'d>(
    m: &Module,
    index: usize,
    d: &'d Defined,
    linkage: &str,
) -> Described<'d> {
    let name = d
        .def
        .and_then(|f| m.name(f))
        .map_or_else(|| linkage.to_string(), str::to_string);
    Described {
        symbol: index,
        name,
        defined: d,
    }
}

/// The compile units' `DW_AT_comp_dir`: the current directory (`.` if unknown).
pub(crate) fn comp_dir() -> String {
    std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| ".".into())
}

/// Adds the debug sections of `defined` (functions of `m`, each with its symbol's name in
/// `names`) to `product`, compiled for `isa`: `.eh_frame` for every function with a call
/// frame program, and the DWARF sections for those with a location. Relative file names are
/// read from the current directory, the compile units' `DW_AT_comp_dir`.
pub(crate) fn write(
    product: &mut ObjectProduct,
    m: &Module,
    defined: &[(Defined, String)],
    isa: &dyn TargetIsa,
) -> Result<(), BackendError> {
    let err = |e: String| BackendError::Codegen(format!("writing debug information: {e}"));
    let mut symbols = Vec::with_capacity(defined.len());
    let mut described = Vec::with_capacity(defined.len());
    let mut framed = Vec::with_capacity(defined.len());
    for (d, linkage) in defined {
        let Some((symbol, _)) = product.functions.get(d.id).copied().flatten() else {
            continue;
        };
        let index = symbols.len();
        symbols.push(symbol);
        framed.push((index, d.size, &d.cfa[..]));
        described.push(self::described(m, index, d, linkage));
    }
    let dir = comp_dir();
    let endian = frame::endian(isa);
    let address_size = isa.pointer_bytes();
    let mut all: Vec<(
        gimli::SectionId,
        &'static str,
        SectionKind,
        sections::Section,
    )> = Vec::new();
    for (id, s) in info::dwarf_sections(m, &described, (address_size, endian), &dir).map_err(err)? {
        all.push((id, id.name(), SectionKind::Debug, s));
    }
    if let Some(s) = frame::eh_frame(isa, &framed) {
        all.push((
            gimli::SectionId::EhFrame,
            ".eh_frame",
            SectionKind::ReadOnlyData,
            s,
        ));
    }
    sections::place(&mut product.object, all, &symbols).map_err(err)
}
