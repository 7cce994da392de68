//! A function's machine code apart from its symbols: the bytes, their alignment, what its
//! debug information needs (`crate::debug`: line rows and call frame program), and the
//! relocations, each naming its target by the function's own external-name reference (its
//! index in the function's name table), never by a module-wide id. The same code can so be
//! defined again under other ids, in another build (the code cache, `crate::cache`): the
//! relocations are resolved through what the name table denotes in the build defining it now
//! (`crate::names`).

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{ExternalName, KnownSymbol, LibCall};
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::{CompiledCode, FinalizedRelocTarget};
use cranelift_module::{FuncId, ModuleReloc, ModuleRelocTarget};

use crate::debug::LineRow;
use crate::sites::CodeTrap;

/// Compiled code of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Code {
    /// The alignment the code needs (a power of two).
    pub(crate) alignment: u64,
    /// The machine code and its constants.
    pub(crate) bytes: Vec<u8>,
    /// The relocations, in the order the compiler gave them.
    pub(crate) relocs: Vec<CodeReloc>,
    /// The code ranges of its located IR instructions, in code order (`crate::debug`).
    pub(crate) lines: Vec<LineRow>,
    /// Its call frame program (`crate::debug::frame`; empty if the target has none).
    pub(crate) cfa: Vec<u8>,
    /// Its trap instructions with a site code, in code order (`crate::sites`).
    pub(crate) traps: Vec<CodeTrap>,
}

/// One relocation of [`Code`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodeReloc {
    /// Offset in the code.
    pub(crate) offset: u32,
    /// The relocation kind.
    pub(crate) kind: Reloc,
    /// What it refers to.
    pub(crate) target: Target,
    /// The addend.
    pub(crate) addend: i64,
}

/// What a relocation refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Entry `n` of the function's external-name table (a function or data object).
    Name(u32),
    /// A Cranelift library routine.
    LibCall(LibCall),
    /// A symbol known to the object format.
    Known(KnownSymbol),
    /// An offset in this very function.
    SelfOffset(u32),
}

/// Every relocation kind, numbered by its position (the code cache's encoding). A kind not
/// listed cannot be stored in the cache (the function is compiled every time).
pub(crate) const RELOC_KINDS: &[Reloc] = &[
    Reloc::Abs4,
    Reloc::Abs8,
    Reloc::X86PCRel4,
    Reloc::X86CallPCRel4,
    Reloc::X86CallPLTRel4,
    Reloc::X86GOTPCRel4,
    Reloc::X86SecRel,
    Reloc::Arm32Call,
    Reloc::Arm64Call,
    Reloc::S390xPCRel32Dbl,
    Reloc::S390xPLTRel32Dbl,
    Reloc::Aarch64AdrGotPage21,
    Reloc::Aarch64AdrPrelPgHi21,
    Reloc::Aarch64AddAbsLo12Nc,
    Reloc::Aarch64Ld64GotLo12Nc,
    Reloc::RiscvCallPlt,
    Reloc::RiscvGotHi20,
    Reloc::RiscvPCRelHi20,
    Reloc::RiscvPCRelLo12I,
    Reloc::ElfX86_64TlsGd,
    Reloc::Aarch64TlsDescAdrPage21,
    Reloc::Aarch64TlsDescLd64Lo12,
    Reloc::Aarch64TlsDescAddLo12,
    Reloc::Aarch64TlsDescCall,
];

/// Whether Cranelift's code for architecture `arch` (a `TargetIsa::name`) in the object format
/// `format` names may carry a relocation of kind `kind`: the kinds its backend emits (in every
/// object format; a section-relative one only in COFF, and the ELF general-dynamic ones only
/// in ELF, for thread-local data: the runtime's per-thread state).
fn reloc_kind_fits(kind: Reloc, arch: &str, format: impl Fn() -> String) -> bool {
    use Reloc::*;
    match arch {
        "x64" => {
            matches!(
                kind,
                Abs4 | Abs8 | X86PCRel4 | X86CallPCRel4 | X86CallPLTRel4 | X86GOTPCRel4
            ) || (kind == X86SecRel && format() == "coff")
                || (kind == ElfX86_64TlsGd && format() == "elf")
        }
        "aarch64" => {
            matches!(
                kind,
                Abs4 | Abs8
                    | Arm64Call
                    | Aarch64AdrGotPage21
                    | Aarch64Ld64GotLo12Nc
                    | Aarch64AdrPrelPgHi21
                    | Aarch64AddAbsLo12Nc
            ) || (matches!(
                kind,
                Aarch64TlsDescAdrPage21
                    | Aarch64TlsDescLd64Lo12
                    | Aarch64TlsDescAddLo12
                    | Aarch64TlsDescCall
            ) && format() == "elf")
        }
        "s390x" => matches!(kind, Abs4 | Abs8 | S390xPCRel32Dbl | S390xPLTRel32Dbl),
        "riscv64" => matches!(
            kind,
            Abs4 | Abs8 | RiscvCallPlt | RiscvGotHi20 | RiscvPCRelHi20 | RiscvPCRelLo12I
        ),
        _ => false,
    }
}

/// How many bytes of code a relocation of kind `kind` patches (an instruction pair for
/// RISC-V's call).
fn reloc_width(kind: Reloc) -> usize {
    match kind {
        Reloc::Abs8 | Reloc::RiscvCallPlt => 8,
        _ => 4,
    }
}

/// Every known symbol, numbered by position (the code cache's encoding).
pub(crate) const KNOWN_SYMBOLS: &[KnownSymbol] =
    &[KnownSymbol::ElfGlobalOffsetTable, KnownSymbol::CoffTlsIndex];

impl Code {
    /// Whether this could be code Cranelift compiled for `isa`: each relocation of a kind its
    /// architecture's code carries, whole inside the code, each known symbol one of its
    /// object format. Code from the cache that is not (which only someone writing the entry
    /// on purpose can make: the key holds the target) is refused before `cranelift-object`
    /// sees it, which would stop the build on a relocation kind it cannot write (32-bit
    /// Arm's, for one: a panic).
    pub(crate) fn fits_target(&self, isa: &dyn TargetIsa) -> bool {
        // The object format's name, asked only by the few relocations that depend on it (not
        // once per function taken from the cache).
        let format = || isa.triple().binary_format.to_string();
        self.relocs.iter().all(|r| {
            reloc_kind_fits(r.kind, isa.name(), format)
                && (r.offset as usize).saturating_add(reloc_width(r.kind)) <= self.bytes.len()
                && match r.target {
                    Target::Known(KnownSymbol::ElfGlobalOffsetTable) => format() == "elf",
                    Target::Known(KnownSymbol::CoffTlsIndex) => format() == "coff",
                    _ => true,
                }
        })
    }

    /// The code `compiled` for `isa`, with its relocations by name-table entry.
    pub(crate) fn new(compiled: &CompiledCode, isa: &dyn TargetIsa) -> Code {
        let buffer = &compiled.buffer;
        let relocs = buffer
            .relocs()
            .iter()
            .map(|r| CodeReloc {
                offset: r.offset,
                kind: r.kind,
                target: match r.target {
                    FinalizedRelocTarget::ExternalName(ExternalName::User(n)) => {
                        Target::Name(n.index() as u32)
                    }
                    FinalizedRelocTarget::ExternalName(ExternalName::LibCall(l)) => {
                        Target::LibCall(l)
                    }
                    FinalizedRelocTarget::ExternalName(ExternalName::KnownSymbol(k)) => {
                        Target::Known(k)
                    }
                    // Only Cranelift's own filetests name functions so; a module never does.
                    FinalizedRelocTarget::ExternalName(ExternalName::TestCase(_)) => {
                        Target::Name(u32::MAX)
                    }
                    FinalizedRelocTarget::Func(off) => Target::SelfOffset(off),
                },
                addend: r.addend,
            })
            .collect();
        Code {
            alignment: u64::from(buffer.alignment),
            bytes: buffer.data().to_vec(),
            relocs,
            lines: crate::debug::line_rows(compiled),
            cfa: crate::debug::frame::cfa_program(compiled, isa),
            traps: crate::sites::code_traps(compiled),
        }
    }

    /// The relocations as `cranelift-module` takes them for function `id`, whose name-table
    /// entries denote `names` (`crate::names::resolve`); `None` if one refers to an entry
    /// there is not (code that is not this function's).
    pub(crate) fn module_relocs(
        &self,
        names: &[ModuleRelocTarget],
        id: FuncId,
    ) -> Option<Vec<ModuleReloc>> {
        self.relocs
            .iter()
            .map(|r| {
                let name = match r.target {
                    Target::Name(n) => names.get(usize::try_from(n).ok()?)?.clone(),
                    Target::LibCall(l) => ModuleRelocTarget::LibCall(l),
                    Target::Known(k) => ModuleRelocTarget::KnownSymbol(k),
                    Target::SelfOffset(off) => ModuleRelocTarget::FunctionOffset(id, off),
                };
                Some(ModuleReloc {
                    offset: r.offset,
                    kind: r.kind,
                    name,
                    addend: r.addend,
                })
            })
            .collect()
    }
}
