//! The image that describes JIT code to a debugger (spec/backends.md, "Debugging JIT code"):
//! an ELF file in memory, handed to GDB through its JIT interface (`super::gdb_jit`), with the
//! same DWARF an object file of the module would have ([`super::info`]) and the code's real
//! addresses in it.
//!
//! The code is already placed, so nothing is left to relocate: each reference to a function
//! is its address and each between debug sections its offset ([`super::sections::resolve`]),
//! and the unwind information is `.debug_frame` with absolute addresses
//! ([`super::frame::debug_frame`]). The file is an `ET_EXEC` ELF for the host: one `.text`
//! section per run of adjacent functions (`SHT_NOBITS`: the bytes are the process's own, at
//! the section's address), a `STT_FUNC` symbol per function at its address (its symbol name,
//! as in an object file), and the DWARF sections. A debugger reads each allocated section's
//! address as absolute.

use cranelift_codegen::isa::TargetIsa;
use cranelift_module::FuncId;
use cranelift_object::object;
use irkit_core::Module;
use object::Endianness;
use object::elf;
use object::write::StringId;
use object::write::elf::{FileHeader, SectionHeader, SectionIndex, Sym, Writer};

use super::{Defined, frame, info, sections};

/// Functions closer than this (bytes from one's end to the next's start: alignment padding)
/// share a `.text` section; farther ones may have another module's code between them.
const GAP: u64 = 64;

/// The ELF machine of `isa`, if the image can describe its code.
fn machine(isa: &dyn TargetIsa) -> Option<u16> {
    match isa.name() {
        "x64" => Some(elf::EM_X86_64),
        "aarch64" => Some(elf::EM_AARCH64),
        "riscv64" => Some(elf::EM_RISCV),
        "s390x" => Some(elf::EM_S390),
        _ => None,
    }
}

/// The image describing `defined` (functions of `m` compiled for `isa`, each with its symbol
/// name), each at `address(id)` (a function without one is left out): `None` when the target
/// is not one the image describes, or no function is placed. Relative file names are read
/// from the current directory, as in an object file.
pub(crate) fn image(
    m: &Module,
    defined: &[(Defined, String)],
    address: impl Fn(FuncId) -> Option<u64>,
    isa: &dyn TargetIsa,
) -> Result<Option<Vec<u8>>, String> {
    let Some(e_machine) = machine(isa) else {
        return Ok(None);
    };
    let mut placed: Vec<(u64, &Defined, &str)> = defined
        .iter()
        .filter_map(|(d, name)| Some((address(d.id)?, d, name.as_str())))
        .collect();
    if placed.is_empty() {
        return Ok(None);
    }
    placed.sort_by_key(|p| p.0);
    let addresses: Vec<u64> = placed.iter().map(|p| p.0).collect();
    let described: Vec<super::Described<'_>> = placed
        .iter()
        .enumerate()
        .map(|(i, &(_, d, linkage))| super::described(m, i, d, linkage))
        .collect();
    let endian = frame::endian(isa);
    let mut debug: Vec<(&'static str, Vec<u8>)> = Vec::new();
    let dir = super::comp_dir();
    for (id, s) in info::dwarf_sections(m, &described, (isa.pointer_bytes(), endian), &dir)? {
        if !s.writer.slice().is_empty() {
            debug.push((id.name(), sections::resolve(&s, &addresses)?));
        }
    }
    let frames: Vec<(u64, u32, &[u8])> = placed
        .iter()
        .map(|&(a, d, _)| (a, d.size, &d.cfa[..]))
        .collect();
    if let Some(f) = frame::debug_frame(isa, &frames) {
        debug.push((".debug_frame", f));
    }
    let big = matches!(endian, cranelift_codegen::gimli::RunTimeEndian::Big);
    write_elf(&placed, &debug, (e_machine, isa.pointer_bytes() == 8, big)).map(Some)
}

/// The runs of adjacent functions among `placed` (sorted by address): each its start and
/// end address and the range of `placed` it holds.
fn runs(placed: &[(u64, &Defined, &str)]) -> Vec<(u64, u64, std::ops::Range<usize>)> {
    let mut out: Vec<(u64, u64, std::ops::Range<usize>)> = Vec::new();
    for (i, &(a, d, _)) in placed.iter().enumerate() {
        let end = a.saturating_add(u64::from(d.size));
        match out.last_mut() {
            Some(r) if a <= r.1.saturating_add(GAP) => {
                r.1 = r.1.max(end);
                r.2.end = i + 1;
            }
            _ => out.push((a, end, i..i + 1)),
        }
    }
    out
}

/// The ELF file: the `.text` runs of `placed`, a symbol per function, the `debug` sections;
/// for machine `e_machine`, 64-bit or not, big-endian or not.
fn write_elf(
    placed: &[(u64, &Defined, &str)],
    debug: &[(&'static str, Vec<u8>)],
    (e_machine, is_64, big): (u16, bool, bool),
) -> Result<Vec<u8>, String> {
    let endian = if big {
        Endianness::Big
    } else {
        Endianness::Little
    };
    let mut buffer: Vec<u8> = Vec::new();
    let mut w = Writer::new(endian, is_64, &mut buffer);
    w.reserve_file_header();
    let runs = runs(placed);
    let text_name = w.add_section_name(b".text");
    let texts: Vec<SectionIndex> = runs.iter().map(|_| w.reserve_section_index()).collect();
    let mut debug_at: Vec<(SectionIndex, StringId, usize)> = Vec::with_capacity(debug.len());
    for (name, bytes) in debug {
        let index = w.reserve_section_index();
        let name = w.add_section_name(name.as_bytes());
        let offset = w.reserve(bytes.len(), 1);
        debug_at.push((index, name, offset));
    }
    w.reserve_null_symbol_index();
    let mut symbols: Vec<(StringId, SectionIndex)> = Vec::with_capacity(placed.len());
    for (run, &text) in runs.iter().zip(&texts) {
        for &(_, _, name) in &placed[run.2.clone()] {
            w.reserve_symbol_index(Some(text));
            symbols.push((w.add_string(name.as_bytes()), text));
        }
    }
    w.reserve_symtab_section_index();
    w.reserve_symtab();
    if w.symtab_shndx_needed() {
        w.reserve_symtab_shndx_section_index();
    }
    w.reserve_symtab_shndx();
    w.reserve_strtab_section_index();
    w.reserve_strtab();
    w.reserve_shstrtab_section_index();
    w.reserve_shstrtab();
    w.reserve_section_headers();

    w.write_file_header(&FileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type: elf::ET_EXEC,
        e_machine,
        e_entry: 0,
        e_flags: 0,
    })
    .map_err(|e| e.to_string())?;
    for (_, bytes) in debug {
        w.write(bytes);
    }
    w.write_null_symbol();
    for (&(address, d, _), &(name, text)) in placed.iter().zip(&symbols) {
        w.write_symbol(&Sym {
            name: Some(name),
            section: Some(text),
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_FUNC,
            st_other: elf::STV_DEFAULT,
            st_shndx: 0,
            st_value: address,
            st_size: d.size.into(),
        });
    }
    w.write_symtab_shndx();
    w.write_strtab();
    w.write_shstrtab();
    w.write_null_section_header();
    for (start, end, _) in &runs {
        w.write_section_header(&SectionHeader {
            name: Some(text_name),
            sh_type: elf::SHT_NOBITS,
            sh_flags: u64::from(elf::SHF_ALLOC | elf::SHF_EXECINSTR),
            sh_addr: *start,
            sh_offset: 0,
            sh_size: end - start,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    for ((_, bytes), &(_, name, offset)) in debug.iter().zip(&debug_at) {
        w.write_section_header(&SectionHeader {
            name: Some(name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: 0,
            sh_addr: 0,
            sh_offset: offset as u64,
            sh_size: bytes.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    w.write_symtab_section_header(1);
    w.write_symtab_shndx_section_header();
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    if w.reserved_len() != w.len() {
        return Err("the image's layout does not add up".into());
    }
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::gimli;
    use cranelift_module::Module as _;
    use object::read::elf::ElfFile64;
    use object::{Object, ObjectSection, ObjectSymbol};

    const SOURCE: &str = "\
#[export(\"add\")]
@add: fn(i32, i32) -> i32 = func {
^entry(%a: i32, %b: i32):
  %s: i32 = iadd %a, %b
  ret %s
}

#[export(\"main\")]
@main: fn() -> i32 = func {
^entry:
  %r: i32 = call @add(i32 40, i32 2)
  ret %r
}
";

    /// The (address, line) rows of the line program of `image`.
    fn line_rows(file: &ElfFile64<'_, Endianness>) -> Vec<(u64, u64)> {
        let section =
            |id: gimli::SectionId| -> Result<gimli::EndianSlice<'_, gimli::LittleEndian>, ()> {
                let data = file
                    .section_by_name(id.name())
                    .and_then(|s| s.data().ok())
                    .unwrap_or(&[]);
                Ok(gimli::EndianSlice::new(data, gimli::LittleEndian))
            };
        let dwarf = gimli::Dwarf::load(section).unwrap();
        let mut rows = Vec::new();
        let mut units = dwarf.units();
        while let Some(header) = units.next().unwrap() {
            let unit = dwarf.unit(header).unwrap();
            let program = unit.line_program.clone().unwrap();
            let mut program = program.rows();
            while let Some((_, row)) = program.next_row().unwrap() {
                rows.push((row.address(), row.line().map_or(0, |l| l.get())));
            }
        }
        rows
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn the_image_names_each_function_and_its_lines_at_the_code_s_addresses() {
        let (mut m, map) = irkit_text::parse_with_source_map(SOURCE, "t.ir").unwrap();
        irkit_text::attach_locations(&mut m, &map, "t.ir").unwrap();
        let compiled = crate::jit::compile(&m, "main").unwrap();
        let image = compiled.gdb_image().expect("an image");
        let file = ElfFile64::<Endianness>::parse(image).unwrap();
        assert_eq!(
            file.elf_header().e_type.get(Endianness::Little),
            elf::ET_EXEC
        );
        let jit = compiled.module();
        let texts: Vec<(u64, u64)> = file
            .sections()
            .filter(|s| s.name() == Ok(".text"))
            .map(|s| (s.address(), s.size()))
            .collect();
        let mut add = None;
        for sym in file.symbols() {
            let name = sym.name().unwrap();
            // Each symbol is the function of that name in the JIT, inside a `.text` section.
            let Some(cranelift_module::FuncOrDataId::Func(id)) = jit.declarations().get_name(name)
            else {
                panic!("{name} is no function of the JIT");
            };
            let address = jit.get_finalized_function(id) as u64;
            assert_eq!(sym.address(), address, "{name}");
            assert!(
                texts
                    .iter()
                    .any(|&(a, n)| a <= address && address + sym.size() <= a + n),
                "{name} is in no .text section: {texts:?}"
            );
            if name.ends_with("add") {
                add = Some((address, sym.size()));
            }
        }
        let (start, size) = add.expect("a symbol of @add");
        // Line 4 (`iadd`) is in @add's code, at its real address.
        let rows = line_rows(&file);
        assert!(
            rows.iter()
                .any(|&(a, l)| l == 4 && (start..start + size).contains(&a)),
            "{start:#x}+{size}: {rows:x?}"
        );
        assert!(file.section_by_name(".debug_frame").is_some());
    }

    fn defined(size: u32) -> Defined {
        Defined {
            id: FuncId::from_u32(0),
            def: None,
            size,
            lines: Vec::new(),
            cfa: Vec::new(),
        }
    }

    #[test]
    fn adjacent_functions_share_a_text_section_and_distant_ones_do_not() {
        let (a, b, c) = (defined(40), defined(10), defined(8));
        let placed = [(0x1000, &a, "a"), (0x1030, &b, "b"), (0x9000, &c, "c")];
        let r = runs(&placed);
        assert_eq!(r, vec![(0x1000, 0x103a, 0..2), (0x9000, 0x9008, 2..3)]);
    }
}
