//! `DW_TAG_inlined_subroutine` entries (spec/backends.md, "Debug information") from the
//! inlining scopes of a function (spec/ir.md, "Inlining scopes").
//!
//! The code of a scope is the code ranges (`crate::code::Code::lines`) of the instructions
//! whose `loc` names it or one of the scopes nested in it, a run of consecutive ranges with
//! the code between them (which no instruction produced, and which the line program gives the
//! location before it) one range. Each scope
//! with code is an inlined subroutine below its parent's (the function's subprogram for an
//! outermost one), in the order of the function's `inline_scope` decorations (a parent always
//! before its children), with `DW_AT_abstract_origin` the subprogram of the inlined function
//! in the same unit (its own, when the unit describes a function of that name; else an
//! abstract `DW_TAG_subprogram`, `DW_AT_inline` `DW_INL_inlined`, made once per unit and name),
//! `DW_AT_call_file`, `DW_AT_call_line` and `DW_AT_call_column` its call site when the scope
//! has one, and `DW_AT_low_pc`/`DW_AT_high_pc` (one range) or `DW_AT_ranges` (several: a base
//! address entry, the function's, then offset pairs) its code. Line rows are unchanged: each
//! instruction keeps its own location.

use cranelift_codegen::gimli;
use gimli::write::{
    Address, AttributeValue, FileId, Range, RangeList, StringTable, Unit, UnitEntryId,
};
use irkit_core::{Inst, Module, Opcode, scope};
use rustc_hash::FxHashMap as HashMap;

use super::Described;
use super::files::file_id;
use super::locs::Loc;

/// What the inlined subroutines of one unit share: its files and the subprogram of each
/// function name (its own, or an abstract one made for an inlined function).
pub(crate) struct Origins<'m> {
    pub(crate) files: HashMap<&'m str, FileId>,
    pub(crate) subprograms: HashMap<String, UnitEntryId>,
}

/// Adds the inlined subroutines of function `f` (its location table `table`, by ordinal)
/// below its subprogram `sub` in `unit`.
pub(crate) fn add<'m>(
    m: &'m Module,
    unit: &mut Unit,
    strings: &mut StringTable,
    origins: &mut Origins<'m>,
    (sub, f): (UnitEntryId, &Described<'_>),
    table: &[Option<Loc<'m>>],
) {
    let Some(def) = f.defined.def else { return };
    let scopes: Vec<Inst> = m
        .decorations(def)
        .iter()
        .copied()
        .filter(|&d| m.opcode(d) == Opcode::INLINE_SCOPE)
        .collect();
    if scopes.is_empty() {
        return;
    }
    // Each scope's code, in code order: a run of consecutive rows in the scope is one range,
    // the code between them (which no instruction produced) included, as the line program
    // gives that code the location before it. (The last row each scope had, then its ranges.)
    let mut code: HashMap<Inst, (usize, Vec<(u32, u32)>)> = HashMap::default();
    for (k, r) in f.defined.lines.iter().enumerate() {
        let Some(Some(loc)) = table.get(r.inst as usize) else {
            continue;
        };
        // A chain is at most as long as the function's scopes (each parent is earlier).
        let mut at = loc.scope;
        for _ in 0..scopes.len() {
            let Some(s) = at else { break };
            let (last, ranges) = code.entry(s).or_insert((usize::MAX, Vec::new()));
            match ranges.last_mut() {
                Some(run) if *last == k.wrapping_sub(1) => run.1 = run.1.max(r.end),
                _ => ranges.push((r.start, r.end)),
            }
            *last = k;
            at = scope::parent(m, s);
        }
    }
    let mut dies: HashMap<Inst, UnitEntryId> = HashMap::default();
    for s in scopes {
        let Some((_, ranges)) = code.get(&s) else {
            continue;
        };
        let parent = scope::parent(m, s)
            .and_then(|p| dies.get(&p).copied())
            .unwrap_or(sub);
        let origin = origin(unit, strings, origins, scope::callee(m, s));
        let die = unit.add(parent, gimli::DW_TAG_inlined_subroutine);
        let site = scope::call_site(m, s);
        let file = site.map(|p| file_id(&mut unit.line_program, &mut origins.files, p.file));
        let at = |start: u32| Address::Symbol {
            symbol: f.symbol,
            addend: i64::from(start),
        };
        // Several ranges: the function's address once, then offsets from it (one relocation
        // per list, not two per range).
        let ranges_id = match ranges.as_slice() {
            [_] => None,
            many => {
                let base = Range::BaseAddress { address: at(0) };
                let pairs = many.iter().map(|&(b, e)| Range::OffsetPair {
                    begin: b.into(),
                    end: e.into(),
                });
                Some(
                    unit.ranges
                        .add(RangeList(std::iter::once(base).chain(pairs).collect())),
                )
            }
        };
        let e = unit.get_mut(die);
        e.set(
            gimli::DW_AT_abstract_origin,
            AttributeValue::UnitRef(origin),
        );
        match (ranges_id, ranges.first()) {
            (Some(id), _) => e.set(gimli::DW_AT_ranges, AttributeValue::RangeListRef(id)),
            (None, Some(&(b, end))) => {
                e.set(gimli::DW_AT_low_pc, AttributeValue::Address(at(b)));
                e.set(
                    gimli::DW_AT_high_pc,
                    AttributeValue::Udata((end - b).into()),
                );
            }
            (None, None) => {}
        }
        if let (Some(p), Some(file)) = (site, file) {
            e.set(
                gimli::DW_AT_call_file,
                AttributeValue::FileIndex(Some(file)),
            );
            e.set(gimli::DW_AT_call_line, AttributeValue::Udata(p.line.into()));
            e.set(
                gimli::DW_AT_call_column,
                AttributeValue::Udata(p.col.into()),
            );
        }
        dies.insert(s, die);
    }
}

/// The subprogram of the function named `name` in `unit`: the unit's own, else an abstract
/// one made now.
fn origin(
    unit: &mut Unit,
    strings: &mut StringTable,
    origins: &mut Origins<'_>,
    name: &str,
) -> UnitEntryId {
    if let Some(&id) = origins.subprograms.get(name) {
        return id;
    }
    let root = unit.root();
    let id = unit.add(root, gimli::DW_TAG_subprogram);
    let text = strings.add(name);
    let e = unit.get_mut(id);
    e.set(gimli::DW_AT_name, AttributeValue::StringRef(text));
    e.set(
        gimli::DW_AT_inline,
        AttributeValue::Inline(gimli::DW_INL_inlined),
    );
    origins.subprograms.insert(name.to_string(), id);
    id
}
