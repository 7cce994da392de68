//! The registry's own checks: ids, names and slots agree, the categories partition it.

use super::*;
use std::collections::HashSet;

/// The dense id table answers exactly what a search of the registry would.
#[test]
fn slots_agree_with_registry() {
    for id in 0..=u16::MAX {
        let searched = REGISTRY.iter().find(|info| info.opcode.0 == id);
        assert_eq!(
            Opcode(id).info().map(|i| i.opcode),
            searched.map(|i| i.opcode),
            "id {id:#x}"
        );
    }
}

#[test]
fn registry_sorted_and_unique() {
    let mut names = HashSet::new();
    for pair in REGISTRY.windows(2) {
        assert!(
            pair[0].opcode.0 < pair[1].opcode.0,
            "{} not sorted",
            pair[1].name
        );
    }
    for info in REGISTRY {
        assert!(names.insert(info.name), "duplicate name {}", info.name);
        assert_eq!(Opcode::from_name(info.name), Some(info.opcode));
        assert_eq!(info.opcode.info().unwrap().name, info.name);
    }
}

#[test]
fn decorations_and_hoistables_are_exclusive() {
    for info in REGISTRY {
        let f = info.flags;
        assert!(!(f.contains(Flags::DECORATION) && f.contains(Flags::HOISTABLE)));
        assert!(!(f.contains(Flags::TERMINATOR) && f.contains(Flags::HOISTABLE)));
        if f.contains(Flags::TYPE) {
            assert_eq!(
                info.ty,
                TypeRule::None,
                "{} is a type and has a type",
                info.name
            );
        }
    }
}

/// `Op` and the registry list the same opcodes in the same order, and converting back
/// and forth is the identity.
#[test]
fn op_enum_agrees_with_registry() {
    assert_eq!(Op::ALL.len(), REGISTRY.len());
    for (op, info) in Op::ALL.iter().zip(REGISTRY) {
        assert_eq!(op.opcode(), info.opcode);
        assert_eq!(op.info().opcode, info.opcode);
        assert_eq!(op.name(), info.name);
        assert_eq!(info.opcode.known(), Some(*op));
    }
    assert_eq!(Opcode(0x7777).known(), None);
    assert_eq!(Opcode(0).known(), None);
}

/// The categories partition the registry (every opcode in exactly one) and name what
/// their docs promise, so that an opcode cannot be filed where it would not be handled.
#[test]
fn categories_partition_the_registry() {
    type Category = (&'static str, fn(Op) -> bool);
    let categories: [Category; 21] = [
        ("structure", |op| matches!(op, op_structure!())),
        ("types", |op| matches!(op, op_types!())),
        ("constants", |op| matches!(op, op_constants!())),
        ("int_binary", |op| matches!(op, op_int_binary!())),
        ("float_binary", |op| matches!(op, op_float_binary!())),
        ("int_unary", |op| matches!(op, op_int_unary!())),
        ("float_unary", |op| matches!(op, op_float_unary!())),
        ("conversions", |op| matches!(op, op_conversions!())),
        ("compare", |op| matches!(op, op_compare!())),
        ("aggregate", |op| matches!(op, op_aggregate!())),
        ("lanes", |op| matches!(op, op_lanes!())),
        ("memory", |op| matches!(op, op_memory!())),
        ("linear_memory", |op| matches!(op, op_linear_memory!())),
        ("calls", |op| matches!(op, op_calls!())),
        ("terminators", |op| matches!(op, op_terminators!())),
        ("decorations", |op| matches!(op, op_decorations!())),
        ("generics", |op| matches!(op, op_generics!())),
        ("noir", |op| matches!(op, op_noir!())),
        ("object_defs", |op| matches!(op, op_object_defs!())),
        ("objects", |op| matches!(op, op_objects!())),
        ("existentials", |op| matches!(op, op_existentials!())),
    ];
    let is = |name: &str, op: Op| categories.iter().any(|(n, f)| *n == name && f(op));
    for &op in Op::ALL {
        let homes: Vec<_> = categories
            .iter()
            .filter(|(_, f)| f(op))
            .map(|c| c.0)
            .collect();
        assert_eq!(homes.len(), 1, "{op} is in {homes:?}");
        let info = op.info();
        let f = info.flags;
        let range = op as u16 >> 8;
        assert_eq!(is("types", op), f.contains(Flags::TYPE), "{op}");
        assert_eq!(is("constants", op), f.contains(Flags::CONSTANT), "{op}");
        assert_eq!(is("decorations", op), f.contains(Flags::DECORATION), "{op}");
        assert_eq!(is("terminators", op), f.contains(Flags::TERMINATOR), "{op}");
        let existential = (0x030A..=0x030C).contains(&(op as u16));
        let generic = range == 3 && !f.contains(Flags::TYPE) && !existential;
        assert_eq!(is("generics", op), generic, "{op}");
        assert_eq!(is("existentials", op), existential, "{op}");
        let proc_part = range == 4 && !f.contains(Flags::DECORATION);
        assert_eq!(is("noir", op), proc_part, "{op}");
        let (object_def, object) = (range == 5 && op as u16 <= 0x0507, op as u16 >= 0x0508);
        assert_eq!(
            (is("object_defs", op), is("objects", op)),
            (object_def, object),
            "{op}"
        );
        // The pure operations are exactly the registry's `in-proc` ones.
        let pure = ["int_binary", "float_binary", "int_unary", "float_unary"]
            .into_iter()
            .chain(["conversions", "compare", "aggregate", "lanes"])
            .any(|c| is(c, op));
        assert_eq!(pure, f.contains(Flags::IN_PROC), "{op}");
        // The category enums hold exactly their pattern's opcodes.
        let in_enum = op.int_binary().map(|x| x.op()) == Some(op)
            || op.float_binary().map(|x| x.op()) == Some(op)
            || op.int_unary().map(|x| x.op()) == Some(op)
            || op.float_unary().map(|x| x.op()) == Some(op)
            || op.conversion().map(|x| x.op()) == Some(op);
        let arith = [
            "int_binary",
            "float_binary",
            "int_unary",
            "float_unary",
            "conversions",
        ]
        .iter()
        .any(|c| is(c, op));
        assert_eq!(in_enum, arith, "{op}");
        // Arity of the arithmetic groups.
        let arity = info.arity;
        if is("int_binary", op) || is("float_binary", op) {
            assert_eq!(arity, Arity::Exact(2), "{op}");
        }
        if is("int_unary", op) || is("float_unary", op) || is("conversions", op) {
            assert_eq!(arity, Arity::Exact(1), "{op}");
        }
    }
}

#[test]
fn unknown_opcodes_are_opaque() {
    let op = Opcode(0x7777);
    assert!(!op.is_known());
    assert_eq!(op.to_string(), "#30583");
    assert_eq!(op.flags(), Flags::NONE);
}
