//! Verifier tests that the text form cannot express. Every rule the text can show is a file
//! case under `tests/cases/verify/` (the whole module re-printed with its errors annotated);
//! what stays here builds modules no `.ir` file can hold, or asserts on the Rust API:
//!
//! * **references across scopes**: a global initialized with, a branch to, or a use of
//!   something local to another function (a name in text is visible only in its own top-level
//!   statement, so such a module cannot be written);
//! * **broken pools**: duplicate or misplaced hoistables, pool cycles, hoistables in a child
//!   list or missing from the pool (the parser interns every type and constant), and malformed
//!   types and constants that nothing uses (the printer prints a type or constant only where it
//!   is used, so a file case would lose them);
//! * **broken handles and trees**: removed or out-of-range handles, detached values, a removed
//!   root, a child list looping back to an ancestor, a nest 100,000 types deep;
//! * **the API**: the cap on the number of errors, the one-line rendering of an error, the
//!   order of the returned errors, and the builder refusing to emit without a cursor.

use super::verify;
use crate::{Builder, Inst, Module, Opcode, Payload};

fn msgs(m: &Module) -> Vec<String> {
    match verify(m) {
        Ok(()) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.message).collect(),
    }
}

#[track_caller]
fn expect_err(m: &Module, needle: &str) {
    let ms = msgs(m);
    assert!(
        ms.iter().any(|s| s.contains(needle)),
        "expected an error containing {needle:?}, got {ms:#?}"
    );
}

/// Appends a new instruction to `parent`.
fn add(
    m: &mut Module,
    parent: Inst,
    op: Opcode,
    ty: Option<Inst>,
    ops: Vec<Inst>,
    p: Payload,
) -> Inst {
    let i = m.new_inst(op, ty, ops, p).unwrap();
    m.append_child(parent, i).unwrap();
    i
}

fn ret(m: &mut Module, b: Inst, v: Option<Inst>) -> Inst {
    add(
        m,
        b,
        Opcode::RET,
        None,
        v.into_iter().collect(),
        Payload::None,
    )
}

/// `@f: fn(i32) -> i32` with `^entry(%x: i32)` and no instructions yet.
struct Fx {
    m: Module,
    f: Inst,
    entry: Inst,
    x: Inst,
    i32t: Inst,
}

fn fx() -> Fx {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[i32t]).unwrap();
    let mut b = Builder::new(&mut m);
    let f = b.func("f", sig).unwrap();
    let (entry, ps) = b.block(f, &[i32t]).unwrap();
    m.set_name(entry, "entry").unwrap();
    m.set_name(ps[0], "x").unwrap();
    Fx {
        m,
        f,
        entry,
        x: ps[0],
        i32t,
    }
}

/// A block appended to `f` with params of the given types.
fn block(m: &mut Module, f: Inst, name: &str, tys: &[Inst]) -> (Inst, Vec<Inst>) {
    let (b, ps) = Builder::new(m).block(f, tys).unwrap();
    m.set_name(b, name).unwrap();
    (b, ps)
}

// ---- references across scopes -------------------------------------------------------------

/// A global initialized with an instruction of a function (the initializer that is a
/// global's address is the file case `globals.ir`).
#[test]
fn global_init_not_constant_or_address() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let y = add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, x],
        Payload::None,
    );
    ret(&mut m, entry, Some(y));
    Builder::new(&mut m).global_var("g", i32t, Some(y)).unwrap();
    expect_err(
        &m,
        "the initializer must be a constant or a definition, found inst",
    );
}

#[test]
fn branch_to_another_function() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[]).unwrap();
    let g = Builder::new(&mut m).func("g", sig).unwrap();
    let (ge, _) = block(&mut m, g, "gentry", &[]);
    let (gb, _) = block(&mut m, g, "gother", &[]);
    let one = m.const_i32(1);
    add(&mut m, ge, Opcode::JUMP, None, vec![gb], Payload::None);
    ret(&mut m, gb, Some(one));
    add(&mut m, entry, Opcode::JUMP, None, vec![gb], Payload::None);
    let _ = x;
    expect_err(&m, "branch target ^gother is not a block of this function");
}

#[test]
fn value_of_another_function() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    ret(&mut m, entry, Some(x));
    let Fx { m: _, .. } = fx();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[]).unwrap();
    let g = Builder::new(&mut m).func("g", sig).unwrap();
    let (ge, _) = block(&mut m, g, "entry", &[]);
    ret(&mut m, ge, Some(x));
    expect_err(
        &m,
        "operand 0: value %x is defined in another function (@f)",
    );
}

// ---- broken pools -------------------------------------------------------------------------

#[test]
fn hoistable_not_unique() {
    let mut m = Module::new();
    let a = m.ty_i32();
    // Corrupt: a second i32, pushed into the pool behind the intern map's back.
    let dup = m
        .alloc(crate::module::InstData::new(
            Opcode::I32,
            None,
            crate::module::Operands::new(),
            Payload::None,
        ))
        .unwrap();
    m.insts[dup.idx()].parent = Some(m.root());
    m.pool.push(dup);
    expect_err(
        &m,
        &format!("hoistable i32 is not unique (also inst {})", a.index()),
    );
    expect_err(&m, "the intern map gives inst");
}

#[test]
fn hoistable_scope() {
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    ret(&mut m, entry, Some(x));
    let t = m.ty_i64();
    m.insts[t.idx()].parent = Some(f);
    expect_err(&m, "hoistable is in inst");
    expect_err(&m, "expected the outermost scope the module");
}

#[test]
fn pool_cycle_is_reported_not_followed() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let a = m.ty_struct(&[i32t]).unwrap();
    let b = m.ty_struct(&[a]).unwrap();
    // Corrupt: a's field becomes b, a cycle a -> b -> a.
    m.insts[a.idx()].operands[0] = b;
    let ms = msgs(&m);
    assert!(
        ms.iter()
            .any(|s| s.contains("does not precede it in the pool")),
        "{ms:#?}"
    );
}

#[test]
fn hoistable_in_child_list_and_not_in_pool() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    ret(&mut m, entry, Some(x));
    let c = m.const_i32(5);
    m.insts[entry.idx()].insert_child(1, c);
    expect_err(&m, "is the hoistable `const_int`");
    let mut m = Module::new();
    let t = m.ty_i32();
    m.pool.clear();
    let _ = t;
    expect_err(&m, "hoistable `i32` is not in the pool");
}

/// Types nothing uses: the printer would drop them.
#[test]
fn malformed_types() {
    let mut m = Module::new();
    let void = m.ty_void();
    let i32t = m.ty_i32();
    let arr = m.ty_array(void, 3).unwrap();
    let sig = m.ty_fn(i32t, &[void]).unwrap();
    let sig0 = m.ty_fn(i32t, &[]).unwrap();
    let st = m.ty_struct(&[i32t, sig0]).unwrap();
    let ns = m.ty_named_struct("", &[i32t]).unwrap();
    let _ = (arr, st, ns, sig);
    expect_err(&m, "array element type void is not a value type");
    expect_err(
        &m,
        "fn parameter 0 has type void, which is not a value type",
    );
    expect_err(
        &m,
        "field 1 has type fn() -> i32, which is not a value type",
    );
    expect_err(&m, "`named_struct` needs a non-empty name");
}

/// Constants nothing uses: the printer would drop them.
#[test]
fn constants() {
    let mut m = Module::new();
    let i8t = m.ty_i8();
    let i32t = m.ty_i32();
    let f64t = m.ty_f64();
    let f32t = m.ty_f32();
    m.intern(Opcode::CONST_INT, Some(i8t), &[], Payload::Int(300))
        .unwrap();
    m.intern(Opcode::CONST_INT, Some(f64t), &[], Payload::Int(1))
        .unwrap();
    m.intern(
        Opcode::CONST_FLOAT,
        Some(f32t),
        &[],
        Payload::Float(1 << 40),
    )
    .unwrap();
    m.intern(Opcode::CONST_NULL, Some(i32t), &[], Payload::None)
        .unwrap();
    let s = m.ty_struct(&[i32t, f64t]).unwrap();
    let one = m.const_i32(1);
    m.const_aggregate(s, &[one]).unwrap();
    m.const_aggregate(s, &[one, one]).unwrap();
    let arr = m.ty_array(i8t, 4).unwrap();
    m.intern(
        Opcode::CONST_BYTES,
        Some(arr),
        &[],
        Payload::Bytes(b"abc"[..].into()),
    )
    .unwrap();
    expect_err(&m, "`const_int` value 300 does not fit in i8");
    expect_err(&m, "`const_int` has type f64, expected an integer type");
    expect_err(
        &m,
        "`const_float` of type f32 has bits set above the low 32",
    );
    expect_err(&m, "`const_null` has type i32, expected ptr");
    expect_err(
        &m,
        "`const_aggregate` has 1 element, its type struct {i32, f64} has 2 fields",
    );
    expect_err(&m, "element 1 has type i32, expected f64");
    expect_err(&m, "`const_bytes` holds 3 bytes, its type [4 x i8] has 4");
}

// ---- broken handles and trees -------------------------------------------------------------

#[test]
fn dangling_handles_are_reported() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let y = add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, x],
        Payload::None,
    );
    let z = add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![y, y],
        Payload::None,
    );
    ret(&mut m, entry, Some(z));
    m.remove(y).unwrap();
    expect_err(
        &m,
        &format!("operand 0 names inst {}, which was removed", y.index()),
    );
    // Out of range, in every slot kind.
    let bogus = Inst::from_index(1_000_000);
    m.insts[z.idx()].operands[1] = bogus;
    m.insts[z.idx()].ty = Some(bogus);
    m.insts[entry.idx()].push_child(bogus);
    m.insts[entry.idx()].push_decoration(bogus);
    m.pool.push(bogus);
    let ms = msgs(&m);
    assert!(
        ms.iter().any(|s| s.contains("which is out of range")),
        "{ms:#?}"
    );
    // A detached (live, parentless) value.
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let loose = m
        .new_inst(Opcode::IADD, Some(i32t), vec![x, x], Payload::None)
        .unwrap();
    ret(&mut m, entry, Some(loose));
    expect_err(&m, "which is not in the module tree");
}

#[test]
fn removed_root_and_tree_cycles() {
    let mut m = Module::new();
    let root = m.root();
    m.remove(root).unwrap();
    expect_err(&m, "the root `module` instruction was removed");
    // A child list that loops back to an ancestor.
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    ret(&mut m, entry, Some(x));
    m.insts[entry.idx()].push_child(f);
    expect_err(&m, "appears more than once in the tree");
}

#[test]
fn deep_type_nest_and_dangling_do_not_panic() {
    let mut m = Module::new();
    let mut t = m.ty_i32();
    for _ in 0..100_000 {
        t = m.ty_array(t, 1).unwrap();
    }
    let void = m.ty_void();
    // The innermost level made malformed: one error, not 100k.
    let i32t = m.ty_i32();
    let first = m.ty_array(i32t, 1).unwrap();
    m.insts[first.idx()].operands[0] = void;
    // void comes after `first` in the pool: reported as misordered, and nothing recurses.
    let sig = m.ty_fn(t, &[t]).unwrap();
    let mut b = Builder::new(&mut m);
    let f = b.func("deep", sig).unwrap();
    let (e, ps) = b.block(f, &[t]).unwrap();
    b.position_at_end(e);
    let y = b.binary(Opcode::IADD, ps[0], ps[0]).unwrap();
    b.ret(Some(ps[0])).unwrap();
    m.remove(y).unwrap_or(());
    let r = verify(&m);
    let errs = r.unwrap_err();
    assert!(!errs.is_empty() && errs.len() <= super::MAX_ERRORS);
    // Rendering a deep type in a message is cut short.
    for e in &errs {
        assert!(e.message.len() < 600, "{}", e.message);
    }
}

// ---- the API -------------------------------------------------------------------------------

#[test]
fn wide_module_is_capped() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[]).unwrap();
    let mut b = Builder::new(&mut m);
    for k in 0..1500 {
        b.func(&format!("f{k}"), sig).unwrap();
    }
    let errs = verify(&m).unwrap_err();
    assert_eq!(errs.len(), super::MAX_ERRORS);
}

/// `n` functions, each with a registry error (an `iadd` with a payload) and, after it, a
/// handle error (an `iadd` operand out of range).
fn registry_then_handle_errors(n: usize) -> Module {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[i32t]).unwrap();
    let bogus = Inst::from_index(10_000_000);
    for k in 0..n {
        let mut b = Builder::new(&mut m);
        let f = b.func(&format!("f{k}"), sig).unwrap();
        let (entry, ps) = b.block(f, &[i32t]).unwrap();
        let x = ps[0];
        let y = add(
            &mut m,
            entry,
            Opcode::IADD,
            Some(i32t),
            vec![x, x],
            Payload::None,
        );
        m.insts[y.idx()].payload = Payload::Int(3).into();
        let z = add(
            &mut m,
            entry,
            Opcode::IADD,
            Some(i32t),
            vec![x, x],
            Payload::None,
        );
        m.insts[z.idx()].operands[1] = bogus;
        ret(&mut m, entry, Some(x));
    }
    m
}

fn msgs_on(threads: usize, m: &Module) -> Vec<String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| msgs(m))
}

/// Passes 1 and 2 check the tree per definition, on every core, yet their errors are bounded as
/// in one serial run: every handle error before any registry error. Under the bound, all come
/// back in tree order; over it, the registry errors are the ones left out; on any number of
/// threads.
#[test]
fn handle_errors_fill_the_bound_before_registry_errors() {
    let m = registry_then_handle_errors(300);
    let ms = msgs_on(1, &m);
    assert_eq!(ms.len(), 600, "{ms:#?}");
    for pair in ms.chunks(2) {
        assert!(pair[0].contains("takes no payload"), "{pair:#?}");
        assert!(pair[1].contains("operand 1 names inst"), "{pair:#?}");
    }
    for threads in [2, 3, 8] {
        assert_eq!(ms, msgs_on(threads, &m), "{threads} threads");
    }
    let m = registry_then_handle_errors(1200);
    let ms = msgs_on(1, &m);
    assert_eq!(ms.len(), super::MAX_ERRORS);
    assert!(
        ms.iter().all(|s| s.contains("operand 1 names inst")),
        "{:#?}",
        &ms[..4]
    );
    for threads in [2, 3, 8] {
        assert_eq!(ms, msgs_on(threads, &m), "{threads} threads");
    }
}

#[test]
fn display_names_func_block_and_inst() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let d = m.const_f64(1.0);
    let y = add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, d],
        Payload::None,
    );
    ret(&mut m, entry, Some(y));
    let errs = verify(&m).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "in @f ^entry, instruction 0 (iadd): operand 1 has type f64, expected an integer type"
    );
    let e = super::VerifyError::new(None, None, y, "x");
    assert_eq!(e.to_string(), format!("in #{}: x", y.index()));
}

#[test]
fn errors_come_in_tree_order() {
    let Fx {
        mut m,
        f,
        entry,
        x,
        i32t,
    } = fx();
    let i64t = m.ty_i64();
    let (b, _) = block(&mut m, f, "b", &[]);
    add(&mut m, entry, Opcode::JUMP, None, vec![b], Payload::None);
    let late = add(
        &mut m,
        b,
        Opcode::IMUL,
        Some(i64t),
        vec![x, x],
        Payload::None,
    );
    ret(&mut m, b, Some(x));
    // An error on an earlier instruction, created later.
    let early = m
        .new_inst(Opcode::IMUL, Some(i64t), vec![x, x], Payload::None)
        .unwrap();
    m.insert_child(entry, 1, early).unwrap();
    let _ = i32t;
    let errs = verify(&m).unwrap_err();
    let order: Vec<Inst> = errs.iter().map(|e| e.inst).collect();
    assert_eq!(order, [early, late]);
}

/// A builder without a cursor block emits nothing (this assertion stayed behind when the
/// verifier's side of the test moved to the file case `branch_arg_count.ir`).
#[test]
fn builder_without_a_cursor_refuses_a_jump() {
    let Fx { mut m, f, i32t, .. } = fx();
    let (next, _) = block(&mut m, f, "next", &[i32t, i32t]);
    Builder::new(&mut m).jump(next, &[]).unwrap_err();
}

/// An unnamed block is spelled one way in a whole message: `^bb<n>`, its position among its
/// function's blocks, both where the message says the place and in its text.
#[test]
fn an_unnamed_block_is_spelled_one_way() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[]).unwrap();
    let mut b = Builder::new(&mut m);
    let f = b.func("f", sig).unwrap();
    let (entry, _) = b.block(f, &[]).unwrap();
    let (second, _) = b.block(f, &[]).unwrap();
    b.position_at_end(entry);
    b.jump(second, &[]).unwrap();
    b.position_at_end(second);
    b.jump(entry, &[]).unwrap();
    let errors = verify(&m).unwrap_err();
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        ["in @f ^bb1, instruction 0 (jump): branch to the entry block ^bb0"],
        "{text:?}"
    );
}

/// A function made twice under one name (a bodyless one, then the definition) is named as
/// such, not only as a function without a body.
#[test]
fn a_function_made_twice_is_said_so() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[]).unwrap();
    let mut b = Builder::new(&mut m);
    b.func("f", sig).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, _) = b.entry_block(f).unwrap();
    b.position_at_end(entry);
    let zero = b.module().const_i32(0);
    b.ins().ret(Some(zero));
    let errors = verify(&m).unwrap_err();
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "in @f: function has no body, and another function is also named @f: was one function made twice? (a declaration must carry `import` or `extern`)"
        ],
        "{text:?}"
    );
}
