//! `.debug_info`, `.debug_abbrev`, `.debug_str`, `.debug_line` and `.debug_ranges` (DWARF 4,
//! written with `gimli::write`): a compile unit per source file, a subprogram per function,
//! and each function's line rows.
//!
//! A function's declaration is its own location (a `loc` on the definition), else its first
//! located instruction's outside any inlining scope, else its first
//! instruction's; it belongs to the compile unit of its declaration's file;
//! the units come in the order their first function does. Each subprogram has the IR
//! function's name (its symbol's, for a function without one), its declaration's file and
//! line, and its address range; each unit lists its functions' ranges. The line program has
//! one sequence per function: a row at each change of location among the code's ranges
//! (`crate::code::Code::lines`), the function's declaration line for the code before its
//! first range (the prologue); code between ranges, which Cranelift attributes to no
//! instruction (register moves, branches), keeps the location of the range before it.
//! A function with inlining scopes gets its inlined subroutines (`super::inlined`).

use cranelift_codegen::gimli;
use gimli::write::{
    Address, AttributeValue, Dwarf, FileId, LineProgram, Range, RangeList, Sections, Unit,
};
use gimli::{Encoding, Format, LineEncoding, RunTimeEndian, SectionId};
use irkit_core::Module;
use rustc_hash::FxHashMap as HashMap;

use super::files::{file_id, line_string};
use super::inlined;
use super::locs::{self, Loc};
use super::sections::Section;
use super::{Described, LineRow};

/// A function of a compile unit, with the location of each of its instructions by ordinal.
type Member<'f, 'm> = (&'f Described<'f>, Vec<Option<Loc<'m>>>);

/// The DWARF sections describing `functions` of `m`, for addresses of `address_size` bytes
/// and byte order `endian`; `comp_dir` is the directory relative file names are read from.
/// Functions without a located instruction are left out; with none left, no section.
pub(crate) fn dwarf_sections(
    m: &Module,
    functions: &[Described<'_>],
    (address_size, endian): (u8, RunTimeEndian),
    comp_dir: &str,
) -> Result<Vec<(SectionId, Section)>, String> {
    let encoding = Encoding {
        format: Format::Dwarf32,
        version: 4,
        address_size,
    };
    // The functions with a location, by compile unit (its file), in order.
    let mut units: Vec<(&str, Vec<Member<'_, '_>>)> = Vec::new();
    let mut unit_of: HashMap<&str, usize> = HashMap::default();
    for f in functions {
        let Some(def) = f.defined.def else { continue };
        if f.defined.lines.is_empty() {
            continue;
        }
        let table = locs::table(m, def);
        let Some(first) = locs::loc_of(m, def).or_else(|| locs::first(&table)) else {
            continue;
        };
        let u = *unit_of.entry(first.file).or_insert_with(|| {
            units.push((first.file, Vec::new()));
            units.len() - 1
        });
        units[u].1.push((f, table));
    }
    if units.is_empty() {
        return Ok(Vec::new());
    }
    let mut dwarf = Dwarf::new();
    let producer = dwarf
        .strings
        .add(format!("irkit {}", env!("CARGO_PKG_VERSION")));
    let dir = dwarf.strings.add(comp_dir);
    for (file, funcs) in units {
        let program = LineProgram::new(
            encoding,
            LineEncoding::default(),
            line_string(comp_dir),
            None,
            line_string(file),
            None,
        );
        let mut unit = Unit::new(encoding, program);
        let root = unit.root();
        let name = dwarf.strings.add(file);
        let ranges = RangeList(
            funcs
                .iter()
                .map(|(f, _)| Range::StartLength {
                    begin: symbol(f.symbol),
                    length: u64::from(f.defined.size),
                })
                .collect(),
        );
        let ranges = unit.ranges.add(ranges);
        let entry = unit.get_mut(root);
        entry.set(gimli::DW_AT_producer, AttributeValue::StringRef(producer));
        entry.set(gimli::DW_AT_name, AttributeValue::StringRef(name));
        entry.set(gimli::DW_AT_comp_dir, AttributeValue::StringRef(dir));
        entry.set(
            gimli::DW_AT_low_pc,
            AttributeValue::Address(Address::Constant(0)),
        );
        entry.set(gimli::DW_AT_ranges, AttributeValue::RangeListRef(ranges));
        let mut files: HashMap<&str, FileId> = HashMap::default();
        let mut subprograms: HashMap<String, gimli::write::UnitEntryId> = HashMap::default();
        let mut described = Vec::with_capacity(funcs.len());
        for (f, table) in &funcs {
            let own = f.defined.def.and_then(|d| locs::loc_of(m, d));
            let Some(first) = own.or_else(|| locs::first(table)) else {
                continue;
            };
            let decl = file_id(&mut unit.line_program, &mut files, first.file);
            let sub = unit.add(root, gimli::DW_TAG_subprogram);
            let name = dwarf.strings.add(f.name.as_str());
            let e = unit.get_mut(sub);
            e.set(gimli::DW_AT_name, AttributeValue::StringRef(name));
            e.set(
                gimli::DW_AT_decl_file,
                AttributeValue::FileIndex(Some(decl)),
            );
            e.set(
                gimli::DW_AT_decl_line,
                AttributeValue::Udata(first.line.into()),
            );
            e.set(
                gimli::DW_AT_low_pc,
                AttributeValue::Address(symbol(f.symbol)),
            );
            e.set(
                gimli::DW_AT_high_pc,
                AttributeValue::Udata(f.defined.size.into()),
            );
            sequence(&mut unit.line_program, &mut files, f, table, first);
            subprograms.entry(f.name.clone()).or_insert(sub);
            described.push((sub, *f, table));
        }
        // The inlined subroutines, once every subprogram of the unit is known.
        let mut origins = inlined::Origins { files, subprograms };
        for (sub, f, table) in described {
            inlined::add(
                m,
                &mut unit,
                &mut dwarf.strings,
                &mut origins,
                (sub, f),
                table,
            );
        }
        dwarf.units.add(unit);
    }
    let mut sections = Sections::new(Section::new(endian));
    dwarf.write(&mut sections).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    sections
        .for_each(|id, s: &Section| {
            out.push((id, s.clone()));
            Ok::<(), ()>(())
        })
        .map_err(|()| "collecting the DWARF sections".to_string())?;
    Ok(out)
}

/// The address of function symbol `index`.
pub(super) fn symbol(index: usize) -> Address {
    Address::Symbol {
        symbol: index,
        addend: 0,
    }
}

/// The line sequence of function `f`, whose locations by ordinal are `table` (`first` the
/// first).
fn sequence<'m>(
    program: &mut LineProgram,
    files: &mut HashMap<&'m str, FileId>,
    f: &Described<'_>,
    table: &[Option<Loc<'m>>],
    first: Loc<'m>,
) {
    // Where each location starts (`None`: code no located instruction produced). Code
    // between two ranges (register moves, branches, which Cranelift attributes to no
    // instruction) keeps the location before it.
    let mut marks: Vec<(u32, Option<Loc<'m>>)> = Vec::new();
    let rows: &[LineRow] = &f.defined.lines;
    if rows.first().is_none_or(|r| r.start > 0) {
        marks.push((0, Some(first)));
    }
    // A row of an instruction without a location (a guarded memory access, which has one for
    // the fault handler: `crate::memories`) is code no located instruction produced.
    for r in rows {
        if let Some(Some(loc)) = table.get(r.inst as usize) {
            marks.push((r.start, Some(*loc)));
        }
    }
    program.begin_sequence(Some(symbol(f.symbol)));
    let mut last = None;
    for (at, loc) in marks {
        if last == Some(loc) || at >= f.defined.size {
            continue;
        }
        last = Some(loc);
        let file = loc.map(|l| file_id(program, files, l.file));
        let r = program.row();
        r.address_offset = at.into();
        match (loc, file) {
            (Some(l), Some(file)) => {
                r.file = file;
                r.line = l.line.into();
                r.column = l.col.into();
            }
            _ => {
                r.line = 0;
                r.column = 0;
            }
        }
        program.generate_row();
    }
    program.end_sequence(f.defined.size.into());
}
