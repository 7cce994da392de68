//! Where an instruction is, said one way by every tool.
//!
//! The verifier's errors, the interpreter's traps and native code's traps all name a place as
//! `@f ^b, instruction N (op %name)`:
//!
//! * `@f`: the function's (or other definition's) name hint, else its export name, else
//!   `@#<arena index>`;
//! * `^b`: the block's name hint, else `^bb<n>` with `n` its position among the function's
//!   blocks;
//! * `instruction N`: the position of the instruction in its block, 0-based, the block's
//!   parameters not counted; then its opcode and its `%name` if it has one.
//!
//! Places that are not instructions of a block say what they are instead: `@f ^b, parameter
//! N (%x)`, `@f ^b` (a block), `@f` (a definition), `pool entry (op)`, and for a decoration
//! the place of what it decorates followed by `, decoration (op)`.
//!
//! Every lookup is checked: a place can be described in any module, even one the verifier is
//! about to refuse (dangling handles, broken parent links).
//!
//! The back ends (the interpreter's traps, native code's traps and their errors) label
//! definitions and blocks of a module the verifier accepted with [`verified_def_label`] and
//! [`verified_block_label`]: the same rule with plain lookups, where a name hint is taken as
//! written (an empty one gives `@` or `^`, where [`def_label`] and [`block_label`] skip it).

use crate::{Inst, InstData, Module, Opcode};

fn live(m: &Module, i: Inst) -> Option<&InstData> {
    m.get(i).filter(|d| !d.is_dead())
}

/// The name hint of `i`, if it has one (checked lookups only).
fn name_hint(m: &Module, i: Inst) -> Option<&str> {
    live(m, i)?.decorations().iter().find_map(|&d| {
        let dd = live(m, d)?;
        (dd.opcode() == Opcode::NAME_HINT)
            .then(|| dd.payload().as_str())
            .flatten()
            .filter(|s| !s.is_empty())
    })
}

/// `@name` of a definition: its name hint, else its export name, else `@#<arena index>`.
pub fn def_label(m: &Module, def: Inst) -> String {
    let export = || {
        live(m, def)?.decorations().iter().find_map(|&d| {
            let dd = live(m, d)?;
            (dd.opcode() == Opcode::EXPORT)
                .then(|| dd.payload().as_str())
                .flatten()
        })
    };
    def_label_from(name_hint(m, def).or_else(export), def)
}

/// `@name` of a definition of a module the verifier accepted, as the back ends spell it: its
/// first name hint as written (even empty), else its first export name, else
/// `@#<arena index>`. The lookups are plain: `def` must be an instruction of `m`.
pub fn verified_def_label(m: &Module, def: Inst) -> String {
    def_label_from(
        m.name(def)
            .or_else(|| m.decoration_str(def, Opcode::EXPORT)),
        def,
    )
}

/// The rule itself: `@name`, else `@#<arena index>`.
fn def_label_from(name: Option<&str>, def: Inst) -> String {
    name.map_or_else(|| format!("@#{}", def.index()), |n| format!("@{n}"))
}

/// `^name` of a block of `func`: its name hint, else `^bb<n>` with `n` its position among the
/// function's blocks (`^bb?` if it is not one of them).
pub fn block_label(m: &Module, func: Inst, block: Inst) -> String {
    let name = name_hint(m, block);
    let position = match name {
        Some(_) => None,
        None => live(m, func).and_then(|f| {
            f.children()
                .iter()
                .filter(|&&c| live(m, c).is_some_and(|d| d.opcode() == Opcode::BLOCK))
                .position(|&c| c == block)
        }),
    };
    block_label_from(name, position)
}

/// `^name` of a block of a module the verifier accepted, as the back ends spell it, when its
/// position `n` among its function's blocks is known: its name hint as written (even empty),
/// else `^bb<n>`. The lookup is plain: `block` must be an instruction of `m`.
pub fn verified_block_label(m: &Module, block: Inst, n: usize) -> String {
    block_label_from(m.name(block), Some(n))
}

/// The rule itself: `^name`, else `^bb<n>` (`^bb?` without a position).
fn block_label_from(name: Option<&str>, n: Option<usize>) -> String {
    match (name, n) {
        (Some(name), _) => format!("^{name}"),
        (None, Some(n)) => format!("^bb{n}"),
        (None, None) => "^bb?".to_string(),
    }
}

/// `instruction N (op %name)` for an instruction at position `n` of its block.
pub fn instruction_label(m: &Module, inst: Inst, n: usize) -> String {
    let op = live(m, inst).map_or_else(|| "?".to_string(), |d| op_name(d.opcode()));
    match name_hint(m, inst) {
        Some(name) => format!("instruction {n} ({op} %{name})"),
        None => format!("instruction {n} ({op})"),
    }
}

/// `instruction N (op %name)` for an instruction of a module the verifier accepted, as the back
/// ends spell it: its name hint as written (even empty). The lookups are plain: `inst` must be
/// an instruction of `m`.
pub fn verified_instruction_label(m: &Module, inst: Inst, n: usize) -> String {
    let op = m.opcode(inst);
    match m.name(inst) {
        Some(name) => format!("instruction {n} ({op} %{name})"),
        None => format!("instruction {n} ({op})"),
    }
}

/// `FILE:LINE:COL`, the source position of an instruction of a module the verifier accepted:
/// its first `loc` decoration (spec/ir.md, "Decorations"), with the line and column as
/// written (unsigned), whether or not it is in an inlining scope (inlined code traps at its
/// own line). `None` without one, or for one whose operands are not constants. A trap line
/// ends with ` at ` and this (spec/backends.md, "Traps").
pub fn verified_source(m: &Module, inst: Inst) -> Option<String> {
    let loc = m.find_decoration(inst, Opcode::LOC)?;
    let p = crate::scope::position(m, loc)?;
    Some(format!("{}:{}:{}", p.file, p.line, p.col))
}

fn op_name(op: Opcode) -> String {
    op.name()
        .map_or_else(|| format!("#{}", op.0), str::to_string)
}

/// The place of `inst`, as described in the module documentation.
pub fn describe(m: &Module, inst: Inst) -> String {
    describe_inner(m, inst, true)
}

/// [`describe`]; `deco` says whether a decoration is described by its owner's place (one
/// level only: nothing here follows parents without bound).
fn describe_inner(m: &Module, inst: Inst, deco: bool) -> String {
    let Some(d) = live(m, inst) else {
        return format!("#{} (not an instruction of the module)", inst.index());
    };
    if d.opcode().is_hoistable() {
        return format!("pool entry ({})", op_name(d.opcode()));
    }
    let parent = d.parent().and_then(|p| live(m, p).map(|pd| (p, pd)));
    let Some((p, pd)) = parent else {
        return def_label(m, inst);
    };
    if pd.decorations().contains(&inst) {
        let owner = if pd.opcode() == Opcode::MODULE {
            "module".to_string()
        } else if deco {
            describe_inner(m, p, false)
        } else {
            format!("#{}", p.index())
        };
        return format!("{owner}, decoration ({})", op_name(d.opcode()));
    }
    match (d.opcode(), pd.opcode()) {
        (Opcode::BLOCK, _) => format!("{} {}", def_label(m, p), block_label(m, p, inst)),
        (Opcode::PARAM, Opcode::BLOCK) => {
            let n = pd
                .children()
                .iter()
                .filter(|&&c| live(m, c).is_some_and(|x| x.opcode() == Opcode::PARAM))
                .position(|&c| c == inst)
                .unwrap_or(0);
            let name = name_hint(m, inst).map_or_else(String::new, |s| format!(" (%{s})"));
            format!("{}, parameter {n}{name}", block_place(m, p))
        }
        (_, Opcode::BLOCK) => {
            let n = pd
                .children()
                .iter()
                .filter(|&&c| live(m, c).is_some_and(|x| x.opcode() != Opcode::PARAM))
                .position(|&c| c == inst)
                .unwrap_or(0);
            format!("{}, {}", block_place(m, p), instruction_label(m, inst, n))
        }
        (_, Opcode::MODULE) => def_label(m, inst),
        (_, parent_op) => {
            // Inside something without blocks (a proc, a generic, an interface, …): its
            // position among that parent's children.
            let n = pd.children().iter().position(|&c| c == inst).unwrap_or(0);
            let owner = if pd
                .parent()
                .is_some_and(|g| live(m, g).is_some_and(|gd| gd.opcode() == Opcode::MODULE))
            {
                def_label(m, p)
            } else {
                format!("{} ({})", def_label(m, p), op_name(parent_op))
            };
            format!("{owner}, {}", instruction_label(m, inst, n))
        }
    }
}

/// The place of a block: `@f ^b`.
fn block_place(m: &Module, block: Inst) -> String {
    match live(m, block).and_then(|b| b.parent()) {
        Some(f) => format!("{} {}", def_label(m, f), block_label(m, f, block)),
        None => format!("@#? ^#{}", block.index()),
    }
}

#[cfg(test)]
mod tests {
    use super::{
        block_label, def_label, describe, verified_block_label, verified_def_label,
        verified_instruction_label,
    };
    use crate::{Module, Opcode, Payload};

    #[test]
    fn places_read_like_trap_locations() {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let fty = m.ty_fn(i32t, &[i32t]).unwrap();
        let f = m
            .new_inst(Opcode::FUNC, Some(fty), vec![], Payload::None)
            .unwrap();
        let root = m.root();
        m.append_child(root, f).unwrap();
        m.set_name(f, "f").unwrap();
        let b = m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
            .unwrap();
        m.append_child(f, b).unwrap();
        let p = m
            .new_inst(Opcode::PARAM, Some(i32t), vec![], Payload::None)
            .unwrap();
        m.append_child(b, p).unwrap();
        m.set_name(p, "x").unwrap();
        let add = m
            .new_inst(Opcode::IADD, Some(i32t), vec![p, p], Payload::None)
            .unwrap();
        m.append_child(b, add).unwrap();
        m.set_name(add, "y").unwrap();
        let ret = m
            .new_inst(Opcode::RET, None, vec![add], Payload::None)
            .unwrap();
        m.append_child(b, ret).unwrap();
        let export = m
            .add_decoration(root, Opcode::EXPORT, vec![], Payload::Str("f".into()))
            .unwrap();
        assert_eq!(describe(&m, f), "@f");
        assert_eq!(describe(&m, b), "@f ^bb0");
        assert_eq!(describe(&m, p), "@f ^bb0, parameter 0 (%x)");
        assert_eq!(describe(&m, add), "@f ^bb0, instruction 0 (iadd %y)");
        assert_eq!(describe(&m, ret), "@f ^bb0, instruction 1 (ret)");
        assert_eq!(describe(&m, i32t), "pool entry (i32)");
        assert_eq!(describe(&m, export), "module, decoration (export)");
        let hint = m.decorations(add)[0];
        assert_eq!(
            describe(&m, hint),
            "@f ^bb0, instruction 0 (iadd %y), decoration (name_hint)"
        );
    }

    #[test]
    fn back_ends_take_name_hints_as_written() {
        let mut m = Module::new();
        let i32t = m.ty_i32();
        let fty = m.ty_fn(i32t, &[]).unwrap();
        let root = m.root();
        let func = |m: &mut Module| {
            let f = m
                .new_inst(Opcode::FUNC, Some(fty), vec![], Payload::None)
                .unwrap();
            m.append_child(root, f).unwrap();
            f
        };
        let anonymous = func(&mut m);
        let exported = func(&mut m);
        m.add_decoration(exported, Opcode::EXPORT, vec![], Payload::Str("run".into()))
            .unwrap();
        let empty = func(&mut m);
        m.set_name(empty, "").unwrap();
        m.add_decoration(empty, Opcode::EXPORT, vec![], Payload::Str("e".into()))
            .unwrap();
        let b = m
            .new_inst(Opcode::BLOCK, None, vec![], Payload::None)
            .unwrap();
        m.append_child(empty, b).unwrap();
        m.set_name(b, "").unwrap();
        let ret = m
            .new_inst(Opcode::RET, None, vec![], Payload::None)
            .unwrap();
        m.append_child(b, ret).unwrap();
        m.set_name(ret, "").unwrap();

        let index = format!("@#{}", anonymous.index());
        assert_eq!(def_label(&m, anonymous), index);
        assert_eq!(verified_def_label(&m, anonymous), index);
        assert_eq!(def_label(&m, exported), "@run");
        assert_eq!(verified_def_label(&m, exported), "@run");
        // An empty name hint: skipped by the checked labels, taken as written by the back ends'.
        assert_eq!(def_label(&m, empty), "@e");
        assert_eq!(verified_def_label(&m, empty), "@");
        assert_eq!(block_label(&m, empty, b), "^bb0");
        assert_eq!(verified_block_label(&m, b, 0), "^");
        assert_eq!(
            verified_instruction_label(&m, ret, 0),
            "instruction 0 (ret %)"
        );
    }
}
