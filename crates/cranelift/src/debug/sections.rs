//! Sections written with `gimli` that refer to symbols and to each other, and their placing
//! in the object file with one relocation per reference.
//!
//! [`Section`] records, beside its bytes, each address of a function (`gimli`'s
//! `Address::Symbol`, its symbol index an index into the caller's symbol list) and each
//! offset into another DWARF section, as a relocation: the system linker then places the
//! code and concatenates the sections of every object, and the references follow.

use cranelift_codegen::gimli;
use cranelift_object::object;
use gimli::write::{EndianVec, RelocateWriter, Relocation, RelocationTarget, Writer};
use gimli::{RunTimeEndian, SectionId};
use object::write::{Object, Relocation as ObjectRelocation, SectionId as ObjSection, SymbolId};
use object::{RelocationEncoding, RelocationFlags, RelocationKind, SectionKind};

/// A section's bytes and the relocations they need.
#[derive(Clone, Debug)]
pub(crate) struct Section {
    pub(crate) writer: EndianVec<RunTimeEndian>,
    pub(crate) relocs: Vec<Relocation>,
}

impl Section {
    pub(crate) fn new(endian: RunTimeEndian) -> Section {
        Section {
            writer: EndianVec::new(endian),
            relocs: Vec::new(),
        }
    }
}

impl RelocateWriter for Section {
    type Writer = EndianVec<RunTimeEndian>;

    fn writer(&self) -> &Self::Writer {
        &self.writer
    }

    fn writer_mut(&mut self) -> &mut Self::Writer {
        &mut self.writer
    }

    fn relocate(&mut self, relocation: Relocation) {
        self.relocs.push(relocation);
    }
}

/// The relocation flags of `r`: relative to the place for a `DW_EH_PE_pcrel` pointer,
/// absolute otherwise, of `r.size` bytes.
fn flags(r: &Relocation) -> Option<RelocationFlags> {
    let relative = r
        .eh_pe
        .is_some_and(|pe| pe.application() == gimli::DW_EH_PE_pcrel);
    Some(RelocationFlags::Generic {
        kind: if relative {
            RelocationKind::Relative
        } else {
            RelocationKind::Absolute
        },
        encoding: RelocationEncoding::Generic,
        size: r.size.checked_mul(8)?,
    })
}

/// Adds the non-empty `sections` (each with its name) to `obj`, then their relocations:
/// a symbol target is the index into `symbols`, a section target one of `sections` (by
/// `gimli`'s id) or, failing that, an error.
pub(crate) fn place(
    obj: &mut Object<'static>,
    sections: Vec<(SectionId, &'static str, SectionKind, Section)>,
    symbols: &[SymbolId],
) -> Result<(), String> {
    let mut placed: Vec<(SectionId, ObjSection, Vec<Relocation>)> = Vec::new();
    for (id, name, kind, s) in sections {
        if s.writer.len() == 0 {
            continue;
        }
        let section = if kind == SectionKind::Debug {
            obj.add_section(Vec::new(), name.as_bytes().to_vec(), kind)
        } else {
            obj.section_id(object::write::StandardSection::EhFrame)
        };
        let align = if kind == SectionKind::Debug { 1 } else { 8 };
        obj.append_section_data(section, s.writer.slice(), align);
        placed.push((id, section, s.relocs));
    }
    let lookup: Vec<(SectionId, ObjSection)> = placed.iter().map(|p| (p.0, p.1)).collect();
    for (_, section, relocs) in placed {
        for r in relocs {
            let symbol = match r.target {
                RelocationTarget::Symbol(i) => *symbols
                    .get(i)
                    .ok_or_else(|| format!("no symbol {i} for a debug relocation"))?,
                RelocationTarget::Section(id) => {
                    let (_, s) = lookup
                        .iter()
                        .find(|(g, _)| *g == id)
                        .ok_or_else(|| format!("no section {} written", id.name()))?;
                    obj.section_symbol(*s)
                }
            };
            let flags = flags(&r).ok_or("a relocation too wide")?;
            obj.add_relocation(
                section,
                ObjectRelocation {
                    offset: r.offset as u64,
                    symbol,
                    addend: r.addend,
                    flags,
                },
            )
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The bytes of `s` with each relocation applied where nothing else will: a function's
/// address is `addresses[symbol]` plus the addend, an offset into another DWARF section the
/// addend (each section is the only one of its kind, at offset 0). For an image whose code
/// is already placed (the JIT's, `super::jit_image`); a place-relative relocation, which a
/// DWARF section does not have, is an error.
pub(crate) fn resolve(s: &Section, addresses: &[u64]) -> Result<Vec<u8>, String> {
    let mut w = s.writer.clone();
    for r in &s.relocs {
        if r.eh_pe.is_some() {
            return Err("a place-relative reference in a debug section".into());
        }
        let value = match r.target {
            RelocationTarget::Symbol(i) => addresses
                .get(i)
                .ok_or_else(|| format!("no symbol {i} for a debug reference"))?
                .wrapping_add_signed(r.addend),
            RelocationTarget::Section(_) => {
                u64::try_from(r.addend).map_err(|_| "a negative section offset".to_string())?
            }
        };
        w.write_udata_at(r.offset, value, r.size)
            .map_err(|e| e.to_string())?;
    }
    Ok(w.into_vec())
}
