//! Source lines of a module compiled with DWARF (`clang -g`): the line table of its
//! `.debug_line` custom section (read with `gimli`), keyed by code offset, and the `loc`
//! decorations it gives the instructions translated from each operator (spec/wasm.md, "Source
//! locations").
//!
//! DWARF in WebAssembly addresses code by its offset from the start of the code section's
//! contents. Each row of the table maps the operators from its address up to the next row's
//! to its file, line and column (an end of sequence, or line 0, maps them to nothing).
//! Malformed or missing debug sections give an empty table: custom sections never make a
//! module invalid.

use gimli::{EndianSlice, LittleEndian};
use irkit_core::{CoreError, Inst, Module, Opcode, Payload};

/// The line table: rows sorted by address.
#[derive(Clone, Debug, Default)]
pub struct LineTable {
    /// Address, file (index in `files`; `u32::MAX` for no location), line, column.
    rows: Vec<(u64, u32, u32, u32)>,
    /// File paths.
    files: Vec<String>,
}

impl LineTable {
    /// The table of the debug sections `sections` (each with its name, `.debug_line`, …);
    /// empty if they have none or it cannot be read.
    pub fn read(sections: &[(&str, &[u8])]) -> LineTable {
        let mut t = LineTable::default();
        if t.fill(sections).is_err() {
            return LineTable::default();
        }
        t.rows.sort_by_key(|r| r.0);
        t
    }

    /// Whether the table has no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn fill(&mut self, sections: &[(&str, &[u8])]) -> gimli::Result<()> {
        let load = |id: gimli::SectionId| -> gimli::Result<EndianSlice<'_, LittleEndian>> {
            let bytes = sections
                .iter()
                .find(|(n, _)| *n == id.name())
                .map_or(&[][..], |(_, b)| b);
            Ok(EndianSlice::new(bytes, LittleEndian))
        };
        let dwarf = gimli::Dwarf::load(load)?;
        let mut units = dwarf.units();
        let mut files: std::collections::HashMap<String, u32> = Default::default();
        while let Some(header) = units.next()? {
            let unit = dwarf.unit(header)?;
            let Some(program) = unit.line_program.clone() else {
                continue;
            };
            let mut rows = program.rows();
            while let Some((header, row)) = rows.next_row()? {
                let file = match row.file(header) {
                    Some(f) if !row.end_sequence() && row.line().is_some() => {
                        let name = dwarf.attr_string(&unit, f.path_name())?;
                        let name = name.to_string_lossy();
                        let path = match f.directory(header) {
                            Some(d) if !name.starts_with('/') => {
                                let d = dwarf.attr_string(&unit, d)?;
                                let d = d.to_string_lossy();
                                if d.is_empty() {
                                    name.into_owned()
                                } else {
                                    format!("{}/{name}", d.trim_end_matches('/'))
                                }
                            }
                            _ => name.into_owned(),
                        };
                        let next = self.files.len() as u32;
                        *files.entry(path.clone()).or_insert_with(|| {
                            self.files.push(path);
                            next
                        })
                    }
                    _ => u32::MAX,
                };
                let line = row.line().map_or(0, |l| l.get()) as u32;
                let col = match row.column() {
                    gimli::ColumnType::LeftEdge => 0,
                    gimli::ColumnType::Column(c) => c.get() as u32,
                };
                self.rows.push((row.address(), file, line, col));
            }
        }
        Ok(())
    }

    /// The file, line and column of the code at `address`.
    pub fn at(&self, address: u64) -> Option<(&str, u32, u32)> {
        let i = self.rows.partition_point(|r| r.0 <= address);
        let &(_, file, line, col) = self.rows.get(i.checked_sub(1)?)?;
        if line == 0 {
            return None;
        }
        Some((self.files.get(file as usize)?, line, col))
    }
}

/// Gives each body instruction of function `f` in `m` the location of the operator it was
/// translated from: `marks` holds, for each operator in order, the module's arena length
/// when its translation began and its offset in the binary; `code_start` is where the code
/// section's contents start.
pub fn annotate(
    m: &mut Module,
    f: Inst,
    marks: &[(usize, u64)],
    code_start: u64,
    table: &LineTable,
) -> Result<(), CoreError> {
    let i32t = m.ty_i32();
    let blocks: Vec<Inst> = m.blocks(f).collect();
    for blk in blocks {
        let body = m.children(blk)[m.block_params(blk).len()..].to_vec();
        for inst in body {
            let n = marks.partition_point(|&(start, _)| start <= inst.index() as usize);
            let Some(&(_, offset)) = n.checked_sub(1).and_then(|n| marks.get(n)) else {
                continue;
            };
            let Some((file, line, col)) = offset.checked_sub(code_start).and_then(|a| table.at(a))
            else {
                continue;
            };
            if m.find_decoration(inst, Opcode::LOC).is_some() {
                continue;
            }
            let file = file.to_string();
            let line = m.const_int(i32t, u64::from(line))?;
            let col = m.const_int(i32t, u64::from(col))?;
            m.add_decoration(
                inst,
                Opcode::LOC,
                vec![line, col],
                Payload::Str(file.into()),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sequences: `a.c` lines 3 and 4 from 10, an end at 20; `b.c` line 7 from 30,
    /// line 0 from 36, an end at 40.
    fn table() -> LineTable {
        LineTable {
            rows: vec![
                (10, 0, 3, 5),
                (14, 0, 4, 1),
                (20, u32::MAX, 0, 0),
                (30, 1, 7, 2),
                (36, 1, 0, 0),
                (40, u32::MAX, 0, 0),
            ],
            files: vec!["dir/a.c".into(), "/abs/b.c".into()],
        }
    }

    #[test]
    fn an_address_has_the_location_of_the_row_at_or_before_it() {
        let t = table();
        assert_eq!(t.at(9), None);
        assert_eq!(t.at(10), Some(("dir/a.c", 3, 5)));
        assert_eq!(t.at(13), Some(("dir/a.c", 3, 5)));
        assert_eq!(t.at(19), Some(("dir/a.c", 4, 1)));
        // After an end of sequence, at line 0: none.
        assert_eq!(t.at(25), None);
        assert_eq!(t.at(31), Some(("/abs/b.c", 7, 2)));
        assert_eq!(t.at(37), None);
        assert_eq!(t.at(1000), None);
    }

    #[test]
    fn missing_or_malformed_debug_sections_give_an_empty_table() {
        assert!(LineTable::read(&[]).is_empty());
        let junk = [0xffu8; 64];
        let t = LineTable::read(&[(".debug_info", &junk[..]), (".debug_line", &junk[..])]);
        assert!(t.is_empty());
    }
}
