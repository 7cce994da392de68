//! Source positions as `loc` decorations (spec/text.md, "Source positions"): a module parsed
//! from `.ir` text can carry where each of its instructions was written, as a front end's
//! locations are carried, so that traps (and debuggers) name the `.ir` line.

use irkit_core::{CoreError, Inst, Module, Opcode, Payload};

use crate::SourceMap;

/// Decorates every instruction of a function's block or of a proc (block parameters and
/// parameters excepted) that `map` has a position for and that has no `loc` yet with
/// `#[loc("file", i32 LINE, i32 COL)]`, the position of its statement; returns how many.
pub fn attach_locations(m: &mut Module, map: &SourceMap, file: &str) -> Result<u64, CoreError> {
    let i32t = m.ty_i32();
    let mut places: Vec<(Inst, u32, u32)> = Vec::new();
    for &def in m.top_level() {
        let bodies: Vec<Inst> = match m.opcode(def) {
            Opcode::FUNC => m.blocks(def).collect(),
            Opcode::PROC => vec![def],
            _ => continue,
        };
        for body in bodies {
            for &i in m.children(body) {
                if m.opcode(i) == Opcode::PARAM || m.find_decoration(i, Opcode::LOC).is_some() {
                    continue;
                }
                if let Some(p) = map.pos(i) {
                    places.push((i, p.line, p.col));
                }
            }
        }
    }
    for &(i, line, col) in &places {
        let line = m.const_int(i32t, u64::from(line))?;
        let col = m.const_int(i32t, u64::from(col))?;
        m.add_decoration(i, Opcode::LOC, vec![line, col], Payload::Str(file.into()))?;
    }
    Ok(places.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_instruction_gets_the_position_of_its_statement() {
        let src = "@f: fn(i32) -> i32 = func {\n^entry(%a: i32):\n  %b: i32 = iadd %a, i32 1\n    ret %b\n}\n";
        let (mut m, map) = crate::parse_with_source_map(src, "f.ir").unwrap();
        assert_eq!(attach_locations(&mut m, &map, "f.ir").unwrap(), 2);
        let text = crate::print(&m);
        assert!(
            text.contains("#[loc(\"f.ir\", i32 3, i32 3)] %b: i32 = iadd"),
            "{text}"
        );
        assert!(
            text.contains("#[loc(\"f.ir\", i32 4, i32 5)] ret %b"),
            "{text}"
        );
        irkit_core::verify::verify(&m).unwrap();
        // A location written in the text is kept, and a second pass adds nothing.
        assert_eq!(attach_locations(&mut m, &map, "f.ir").unwrap(), 0);
    }
}
