//! Inlining scopes in the bytes (spec/format.md §2.3, debug record kind 2): a `loc` whose third
//! operand is an `inline_scope` of its function moves to the debug section like any `loc`,
//! naming the scope by its local index, and reads back as the same tree.

use irkit_core::equiv::modules_equal;
use irkit_core::{Builder, Inst, Module, Opcode, Payload, scope};
use irkit_format::{ModuleView, write};

/// `@main` with two nested scopes (`square` inlined at main.ir:9:8, `mul` inlined into it at
/// lib.ir:4:8) and three located instructions, two of them in the scopes; `scoped` says
/// whether their `loc`s name the scopes.
fn module(scoped: bool) -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[]).unwrap();
    let f = b.func("main", sig).unwrap();
    b.export(f, "main").unwrap();
    let (entry, _) = b.block(f, &[]).unwrap();
    b.position_at_end(entry);
    let six = b.module().const_i32(6);
    let p = b.binary(Opcode::IMUL, six, six).unwrap();
    let q = b.binary(Opcode::IADD, p, six).unwrap();
    let r = b.ret(Some(q)).unwrap();
    let loc = |m: &mut Module, i: Inst, file: &str, line: u64| {
        let (l, c) = (m.const_i32(line as i32), m.const_i32(3));
        m.add_decoration(i, Opcode::LOC, vec![l, c], Payload::Str(file.into()))
            .unwrap()
    };
    let site0 = loc(&mut m, f, "main.ir", 9);
    let s0 = scope::add_scope(&mut m, f, "square", Some(site0), None).unwrap();
    m.remove(site0).unwrap();
    let site1 = loc(&mut m, f, "lib.ir", 4);
    let s1 = scope::add_scope(&mut m, f, "mul", Some(site1), Some(s0)).unwrap();
    m.remove(site1).unwrap();
    for (i, line, s) in [(p, 12, s1), (q, 5, s0)] {
        loc(&mut m, i, "lib.ir", line);
        if scoped {
            scope::set_scope(&mut m, i, s).unwrap();
        }
    }
    loc(&mut m, r, "main.ir", 10);
    irkit_core::verify::verify(&m).unwrap();
    m
}

#[test]
fn scoped_locations_round_trip_through_the_debug_section() {
    let m = module(true);
    let bytes = write(&m).unwrap();
    let view = ModuleView::from_bytes(&bytes).unwrap();
    view.validate_all().unwrap();
    let back = view.materialize().unwrap();
    modules_equal(&m, &back).unwrap();
    assert_eq!(write(&back).unwrap(), bytes, "deterministic bytes");
    let f = back.find_named("main").unwrap();
    let scopes: Vec<Inst> = back
        .decorations(f)
        .iter()
        .copied()
        .filter(|&d| back.opcode(d) == Opcode::INLINE_SCOPE)
        .collect();
    assert_eq!(scopes.len(), 2);
    assert_eq!(scope::callee(&back, scopes[1]), "mul");
    assert_eq!(scope::parent(&back, scopes[1]), Some(scopes[0]));
    let site = scope::call_site(&back, scopes[1]).unwrap();
    assert_eq!((site.file, site.line, site.col), ("lib.ir", 4, 3));

    // The scoped `loc`s left the body as the plain ones do: the body is the same size.
    let plain = write(&module(false)).unwrap();
    let plain = ModuleView::from_bytes(&plain).unwrap();
    let (a, b) = (view.def_info(0).unwrap(), plain.def_info(0).unwrap());
    assert_eq!((a.inst_count, a.size), (b.inst_count, b.size));
}

/// A kind-2 record naming a local past its definition's end is refused where the debug
/// section is validated (its hashes resealed, so only the record is wrong).
#[test]
fn a_scope_index_past_the_definition_is_refused() {
    use irkit_hostile::{FieldKind, fields, reseal};
    let m = module(true);
    let mut bytes = write(&m).unwrap();
    let scopes: Vec<usize> = fields(&bytes)
        .into_iter()
        .filter(|f| f.what == FieldKind::DebugScope)
        .map(|f| f.at)
        .collect();
    assert_eq!(scopes.len(), 2, "one record per scoped loc");
    bytes[scopes[0]..scopes[0] + 3].copy_from_slice(&[0xff, 0xff, 0x00]);
    reseal(&mut bytes);
    let view = ModuleView::from_bytes(&bytes).unwrap();
    let e = view.validate_all().unwrap_err().to_string();
    assert!(e.contains("scope local index"), "{e}");
}
