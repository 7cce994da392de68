//! Verifier tests: one realistic module that verifies, one negative test per rule (asserting
//! the message), and robustness against corrupted modules.

use super::verify;
use crate::{Builder, FloatCC, Inst, IntCC, Module, Opcode, Payload};

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

#[track_caller]
fn expect_ok(m: &Module) {
    let ms = msgs(m);
    assert!(ms.is_empty(), "expected no errors, got {ms:#?}");
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

fn named(
    m: &mut Module,
    parent: Inst,
    name: &str,
    op: Opcode,
    ty: Option<Inst>,
    ops: Vec<Inst>,
) -> Inst {
    let i = add(m, parent, op, ty, ops, Payload::None);
    m.set_name(i, name).unwrap();
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

// ---- the positive test ------------------------------------------------------------------

#[test]
fn realistic_module_verifies() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let i64t = m.ty_i64();
    let f64t = m.ty_f64();
    let i8t = m.ty_i8();
    let ptr = m.ty_ptr();
    let void = m.ty_void();
    let pair = m.ty_named_struct("Pair", &[i32t, f64t]).unwrap();
    let arr = m.ty_array(i32t, 2).unwrap();
    let sig_ii = m.ty_fn(i32t, &[i32t]).unwrap();
    let sig_main = m.ty_fn(i32t, &[]).unwrap();
    let sig_void = m.ty_fn(void, &[]).unwrap();
    let zero = m.const_i32(0);
    let one = m.const_i32(1);
    let two = m.const_i32(2);
    let ten = m.const_i32(10);
    let table_init = m.const_aggregate(arr, &[one, two]).unwrap();
    let hello = m.const_bytes(b"hi\n");
    let fone = m.const_f64(1.0);
    let hello_ty = m.ty(hello).unwrap();
    let mut b = Builder::new(&mut m);
    let counter = b.global_var("counter", i32t, Some(zero)).unwrap();
    b.export(counter, "counter").unwrap();
    let table = b.global_const("table", arr, table_init).unwrap();
    let msg = b.global_const("msg", hello_ty, hello).unwrap();
    let _ = msg;
    let putchar = b.func("putchar", sig_ii).unwrap();
    b.decorate(
        putchar,
        Opcode::EXTERN,
        vec![],
        Payload::Str("putchar".into()),
    )
    .unwrap();
    let ext = b.func("ext", sig_void).unwrap();
    b.import(ext, "other.ext").unwrap();
    // helper(x) = x * 2
    let helper = b.func("helper", sig_ii).unwrap();
    b.decorate(helper, Opcode::INLINE_HINT, vec![], Payload::None)
        .unwrap();
    b.decorate(helper, Opcode::PURE, vec![], Payload::None)
        .unwrap();
    let (hb, hp) = b.block(helper, &[i32t]).unwrap();
    b.position_at_end(hb);
    let d = b.binary(Opcode::IMUL, hp[0], two).unwrap();
    b.ret(Some(d)).unwrap();
    // main
    let main = b.func("main", sig_main).unwrap();
    b.export(main, "main").unwrap();
    b.decorate(main, Opcode::PIN, vec![helper], Payload::None)
        .unwrap();
    b.decorate(main, Opcode::PIN_IF, vec![table, counter], Payload::None)
        .unwrap();
    let (entry, _) = b.block(main, &[]).unwrap();
    let (lp, lps) = b.block(main, &[i32t, i32t]).unwrap();
    let (exit, eps) = b.block(main, &[i32t]).unwrap();
    let (dflt, dps) = b.block(main, &[i32t]).unwrap();
    let (case1, _) = b.block(main, &[]).unwrap();
    let (case2, _) = b.block(main, &[]).unwrap();
    let (dead, _) = b.block(main, &[]).unwrap();
    b.position_at_end(entry);
    let slot = b
        .inst(Opcode::STACKALLOC, Some(ptr), vec![pair], Payload::None)
        .unwrap();
    let fld = b
        .inst(
            Opcode::ELEM,
            Some(ptr),
            vec![pair, slot, zero, one],
            Payload::None,
        )
        .unwrap();
    b.inst(Opcode::STORE, None, vec![fld, fone], Payload::None)
        .unwrap();
    let tel = b
        .inst(
            Opcode::ELEM,
            Some(ptr),
            vec![arr, table, zero, one],
            Payload::None,
        )
        .unwrap();
    let t1 = b
        .inst(Opcode::LOAD, Some(i32t), vec![tel], Payload::None)
        .unwrap();
    b.jump(lp, &[zero, t1]).unwrap();
    b.position_at_end(lp);
    let done = b.icmp(IntCC::Sge, lps[0], ten).unwrap();
    let next = b.binary(Opcode::IADD, lps[0], one).unwrap();
    let c = b.call(helper, &[lps[0]]).unwrap();
    let acc2 = b.binary(Opcode::IADD, lps[1], c).unwrap();
    b.br(done, exit, &[lps[1]], lp, &[next, acc2]).unwrap();
    b.position_at_end(exit);
    let g = b
        .inst(Opcode::LOAD, Some(i32t), vec![counter], Payload::None)
        .unwrap();
    let sum = b.binary(Opcode::IADD, eps[0], g).unwrap();
    let wide = b.convert(Opcode::SEXT, i64t, sum).unwrap();
    let back = b.convert(Opcode::TRUNC, i32t, wide).unwrap();
    b.inst(Opcode::STORE, None, vec![counter, back], Payload::None)
        .unwrap();
    b.switch(
        back,
        (dflt, &[back]),
        &[(one, case1, &[]), (two, case2, &[])],
    )
    .unwrap();
    b.position_at_end(dflt);
    let fl = b.convert(Opcode::SITOFP, f64t, dps[0]).unwrap();
    let lt = b.fcmp(FloatCC::Olt, fl, fone).unwrap();
    let sel = b
        .inst(
            Opcode::SELECT,
            Some(i32t),
            vec![lt, dps[0], one],
            Payload::None,
        )
        .unwrap();
    let agg = b
        .inst(Opcode::LOAD, Some(i32t), vec![slot], Payload::None)
        .unwrap();
    let _ = agg;
    b.ret(Some(sel)).unwrap();
    b.position_at_end(case1);
    let r = b.call_indirect(sig_ii, helper, &[one]).unwrap();
    let ch = b.convert(Opcode::TRUNC, i8t, r).unwrap();
    let ch32 = b.convert(Opcode::ZEXT, i32t, ch).unwrap();
    b.call(putchar, &[ch32]).unwrap();
    b.call(ext, &[]).unwrap();
    b.ret(Some(r)).unwrap();
    b.position_at_end(case2);
    let line = b.module().const_i32(12);
    let col = b.module().const_i32(3);
    let tr = b.inst(Opcode::TRAP, None, vec![], Payload::None).unwrap();
    b.decorate(
        tr,
        Opcode::LOC,
        vec![line, col],
        Payload::Str("main.c".into()),
    )
    .unwrap();
    // An unreachable block may use anything of its function: dominance is vacuous there.
    b.position_at_end(dead);
    let u = b.binary(Opcode::IADD, sum, one).unwrap();
    b.ret(Some(u)).unwrap();
    m.set_name(lp, "loop").unwrap();
    m.set_name(done, "done").unwrap();
    expect_ok(&m);
}

// ---- registry -----------------------------------------------------------------------------

#[test]
fn unknown_opcode() {
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
        Opcode(4660),
        Some(i32t),
        vec![x, x],
        Payload::Int(7),
    );
    ret(&mut m, entry, Some(y));
    expect_err(&m, "unknown opcode #4660: this verifier does not know it");
}

/// The generics opcodes are no longer reserved (format 1.1): one with a wrong shape gets the
/// registry's checks like any other.
#[test]
fn formerly_reserved_opcode() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    add(
        &mut m,
        entry,
        Opcode::LOOKUP_WITNESS,
        None,
        vec![],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "`lookup_witness` takes 2 operands, found 0");
}

#[test]
fn wrong_arity() {
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
        vec![x, x, x],
        Payload::None,
    );
    ret(&mut m, entry, Some(y));
    expect_err(&m, "`iadd` takes 2 operands, found 3");
}

#[test]
fn missing_result_type() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    add(&mut m, entry, Opcode::IADD, None, vec![x, x], Payload::None);
    ret(&mut m, entry, Some(x));
    expect_err(&m, "`iadd` needs a result type");
}

#[test]
fn unexpected_result_type() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let p = add(
        &mut m,
        entry,
        Opcode::INTTOPTR,
        None,
        vec![x],
        Payload::None,
    );
    let ptr = m.ty_ptr();
    m.set_type(p, Some(ptr)).unwrap();
    add(
        &mut m,
        entry,
        Opcode::STORE,
        Some(i32t),
        vec![p, x],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "`store` has no result type, but one is given");
}

#[test]
fn wrong_payload_kind() {
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
        Payload::Int(3),
    );
    ret(&mut m, entry, Some(y));
    expect_err(&m, "`iadd` takes no payload, found a integer payload");
}

#[test]
fn invalid_condition_code() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    let i1 = m.ty_i1();
    add(
        &mut m,
        entry,
        Opcode::ICMP,
        Some(i1),
        vec![x, x],
        Payload::Int(7),
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "`icmp` has an invalid integer condition code 7");
}

#[test]
fn non_parent_with_children() {
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
    let z = m
        .new_inst(Opcode::IADD, Some(i32t), vec![x, x], Payload::None)
        .unwrap();
    m.insts[y.idx()].children.push(z);
    m.insts[z.idx()].parent = Some(y);
    ret(&mut m, entry, Some(y));
    expect_err(&m, "`iadd` cannot have children (it has 1 child)");
}

// ---- structure ----------------------------------------------------------------------------

#[test]
fn module_child_not_a_definition() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    ret(&mut m, entry, Some(x));
    let root = m.root();
    let one = m.const_i32(1);
    add(
        &mut m,
        root,
        Opcode::IADD,
        Some(i32t),
        vec![one, one],
        Payload::None,
    );
    expect_err(&m, "`iadd` cannot appear at module level");
}

#[test]
fn func_child_not_a_block() {
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    ret(&mut m, entry, Some(x));
    add(&mut m, f, Opcode::RET, None, vec![], Payload::None);
    expect_err(
        &m,
        "`ret` cannot be a child of a function: a function's children are blocks",
    );
}

#[test]
fn declaration_needs_import_or_extern() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[]).unwrap();
    Builder::new(&mut m).func("g", sig).unwrap();
    expect_err(
        &m,
        "function has no body: a declaration must carry `import` or `extern`",
    );
}

#[test]
fn imported_function_with_body() {
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    ret(&mut m, entry, Some(x));
    Builder::new(&mut m).import(f, "f").unwrap();
    expect_err(
        &m,
        "an imported function has no body, but this one has blocks",
    );
}

#[test]
fn entry_param_count() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(i32t, &[i32t, i32t]).unwrap();
    let mut b = Builder::new(&mut m);
    let f = b.func("f", sig).unwrap();
    let (e, ps) = b.block(f, &[i32t]).unwrap();
    b.position_at_end(e);
    b.ret(Some(ps[0])).unwrap();
    expect_err(
        &m,
        "the entry block takes 1 parameter, the function type has 2",
    );
}

#[test]
fn entry_param_type() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let i64t = m.ty_i64();
    let sig = m.ty_fn(i32t, &[i32t]).unwrap();
    let mut b = Builder::new(&mut m);
    let f = b.func("f", sig).unwrap();
    let (e, _) = b.block(f, &[i64t]).unwrap();
    b.position_at_end(e);
    let one = b.module().const_i32(1);
    b.ret(Some(one)).unwrap();
    expect_err(&m, "entry parameter 0 has type i64, expected i32");
}

#[test]
fn block_without_terminator() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, x],
        Payload::None,
    );
    expect_err(&m, "block has no terminator");
    let Fx { m, .. } = fx();
    expect_err(&m, "block has no terminator");
}

#[test]
fn terminator_not_last() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    ret(&mut m, entry, Some(x));
    let y = add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, x],
        Payload::None,
    );
    ret(&mut m, entry, Some(y));
    expect_err(
        &m,
        "terminator `ret` is not the last instruction of its block",
    );
}

#[test]
fn param_after_instruction() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, x],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::PARAM,
        Some(i32t),
        vec![],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(
        &m,
        "`param` after the first instruction of the block: parameters come first",
    );
}

#[test]
fn func_type_not_fn() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let f = Builder::new(&mut m).func("f", i32t).unwrap();
    Builder::new(&mut m).import(f, "f").unwrap();
    expect_err(&m, "the type of a `func` must be a fn type, found i32");
}

#[test]
fn global_type_not_value_type() {
    let mut m = Module::new();
    let void = m.ty_void();
    Builder::new(&mut m).global_var("g", void, None).unwrap();
    expect_err(
        &m,
        "the type of a `global_var` must be a value type, found void",
    );
}

#[test]
fn global_const_needs_init() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let mut b = Builder::new(&mut m);
    let g = b.global_var("g", i32t, None).unwrap();
    let _ = g;
    let c = b
        .module()
        .new_inst(Opcode::GLOBAL_CONST, Some(i32t), vec![], Payload::None)
        .unwrap();
    let root = m.root();
    m.append_child(root, c).unwrap();
    expect_err(
        &m,
        "`global_const` needs an initializer unless it is imported",
    );
}

#[test]
fn global_init_type() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let one = m.const_i64(1);
    Builder::new(&mut m)
        .global_var("g", i32t, Some(one))
        .unwrap();
    expect_err(&m, "the initializer has type i64, expected i32");
}

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
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let mut b = Builder::new(&mut m);
    let g = b.global_var("g", i32t, None).unwrap();
    b.global_var("h", i32t, Some(g)).unwrap();
    expect_err(&m, "the initializer @g is an address (ptr), expected i32");
}

#[test]
fn imported_global_with_init() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let one = m.const_i32(1);
    let mut b = Builder::new(&mut m);
    let g = b.global_var("g", i32t, Some(one)).unwrap();
    b.import(g, "g").unwrap();
    expect_err(
        &m,
        "an imported `global_var` has no initializer, but this one has one",
    );
}

// ---- typing -------------------------------------------------------------------------------

#[test]
fn int_operand_type() {
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
    assert_eq!(
        msgs(&m),
        ["operand 1 has type f64, expected an integer type"]
    );
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let d = m.const_i64(1);
    let y = add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, d],
        Payload::None,
    );
    ret(&mut m, entry, Some(y));
    assert_eq!(msgs(&m), ["operand 1 has type i64, expected i32"]);
}

#[test]
fn int_result_type() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    let i64t = m.ty_i64();
    add(
        &mut m,
        entry,
        Opcode::IMUL,
        Some(i64t),
        vec![x, x],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    assert_eq!(msgs(&m), ["result type is i64, expected i32"]);
}

#[test]
fn float_op_on_ints() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    add(
        &mut m,
        entry,
        Opcode::FADD,
        Some(i32t),
        vec![x, x],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "operand 0 has type i32, expected a float type");
}

#[test]
fn icmp_operand_types() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    let big = m.const_i64(1);
    let i1 = m.ty_i1();
    add(
        &mut m,
        entry,
        Opcode::ICMP,
        Some(i1),
        vec![x, big],
        Payload::Int(IntCC::Slt.code()),
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "operand 1 has type i64, expected i32");
}

#[test]
fn fcmp_result_i1() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let d = m.const_f64(1.0);
    add(
        &mut m,
        entry,
        Opcode::FCMP,
        Some(i32t),
        vec![d, d],
        Payload::Int(FloatCC::Olt.code()),
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "result type is i32, expected i1");
}

#[test]
fn conversions() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let i64t = m.ty_i64();
    let i8t = m.ty_i8();
    let f64t = m.ty_f64();
    add(
        &mut m,
        entry,
        Opcode::TRUNC,
        Some(i64t),
        vec![x],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::ZEXT,
        Some(i8t),
        vec![x],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::SITOFP,
        Some(i32t),
        vec![x],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::BITCAST,
        Some(f64t),
        vec![x],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::FPEXT,
        Some(f64t),
        vec![x],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "`trunc` from i32 to i64 does not narrow");
    expect_err(&m, "`zext` from i32 to i8 does not widen");
    expect_err(&m, "result type is i32, expected a float type");
    expect_err(&m, "`bitcast` from i32 to f64");
    expect_err(&m, "operand 0 has type i32, expected f32");
}

#[test]
fn select_condition() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let y = m.const_i64(2);
    add(
        &mut m,
        entry,
        Opcode::SELECT,
        Some(i32t),
        vec![x, x, x],
        Payload::None,
    );
    let t = m.const_bool(true);
    add(
        &mut m,
        entry,
        Opcode::SELECT,
        Some(i32t),
        vec![t, x, y],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "operand 0 has type i32, expected i1");
    expect_err(&m, "operand 2 has type i64, expected i32");
}

#[test]
fn stackalloc_needs_a_type() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    let ptr = m.ty_ptr();
    add(
        &mut m,
        entry,
        Opcode::STACKALLOC,
        Some(ptr),
        vec![x],
        Payload::None,
    );
    let void = m.ty_void();
    add(
        &mut m,
        entry,
        Opcode::STACKALLOC,
        Some(ptr),
        vec![void],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "operand 0 must be a type, found %x (`param`)");
    expect_err(&m, "operand 0 must be a value type, found void");
}

#[test]
fn load_and_store_types() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let ptr = m.ty_ptr();
    let s = m.ty_struct(&[i32t, i32t]).unwrap();
    let p = add(
        &mut m,
        entry,
        Opcode::STACKALLOC,
        Some(ptr),
        vec![s],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::STORE,
        None,
        vec![x, p],
        Payload::None,
    );
    add(&mut m, entry, Opcode::LOAD, Some(s), vec![p], Payload::None);
    let z = m.const_zero(s).unwrap();
    add(
        &mut m,
        entry,
        Opcode::STORE,
        None,
        vec![p, z],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "operand 0 has type i32, expected ptr");
    expect_err(
        &m,
        "operand 1 has type struct {i32, i32}, expected a scalar (int, float or ptr)",
    );
    expect_err(
        &m,
        "result type is struct {i32, i32}, expected a scalar (int, float or ptr)",
    );
}

#[test]
fn elem_struct_index() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let ptr = m.ty_ptr();
    let i64t = m.ty_i64();
    let s = m.ty_struct(&[i32t, i64t]).unwrap();
    let p = add(
        &mut m,
        entry,
        Opcode::STACKALLOC,
        Some(ptr),
        vec![s],
        Payload::None,
    );
    let zero = m.const_i32(0);
    let five = m.const_i32(5);
    add(
        &mut m,
        entry,
        Opcode::ELEM,
        Some(ptr),
        vec![s, p, zero, x],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::ELEM,
        Some(ptr),
        vec![s, p, zero, five],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::ELEM,
        Some(ptr),
        vec![i32t, p, zero, zero],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(
        &m,
        "operand 3 must be a const_int to index into struct {i32, i64}",
    );
    expect_err(
        &m,
        "field index 5 is out of range for struct {i32, i64} (2 fields)",
    );
    expect_err(
        &m,
        "operand 3 indexes into i32, which has no fields or elements",
    );
}

#[test]
fn extract_and_insert() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let f64t = m.ty_f64();
    let s = m.ty_struct(&[i32t, f64t]).unwrap();
    let sig = m.ty_fn(i32t, &[s]).unwrap();
    let mut b = Builder::new(&mut m);
    let f = b.func("f", sig).unwrap();
    let (e, ps) = b.block(f, &[s]).unwrap();
    b.position_at_end(e);
    b.inst(Opcode::EXTRACT, Some(i32t), vec![ps[0]], Payload::Int(2))
        .unwrap();
    b.inst(Opcode::EXTRACT, Some(i32t), vec![ps[0]], Payload::Int(1))
        .unwrap();
    let one = b.module().const_i32(1);
    b.inst(Opcode::INSERT, Some(s), vec![ps[0], one], Payload::Int(1))
        .unwrap();
    b.ret(Some(one)).unwrap();
    expect_err(
        &m,
        "`extract` index 2 is out of range for struct {i32, f64} (2 fields)",
    );
    expect_err(&m, "result type is i32, expected f64");
    expect_err(&m, "operand 1 has type i32, expected f64");
}

fn with_callee() -> (Module, Inst, Inst, Inst) {
    // @g: fn(i32, i32) -> i64; @f: fn() -> i32 with an entry block.
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let i64t = m.ty_i64();
    let sig_g = m.ty_fn(i64t, &[i32t, i32t]).unwrap();
    let sig_f = m.ty_fn(i32t, &[]).unwrap();
    let mut b = Builder::new(&mut m);
    let g = b.func("g", sig_g).unwrap();
    b.import(g, "g").unwrap();
    let f = b.func("f", sig_f).unwrap();
    let (e, _) = b.block(f, &[]).unwrap();
    (m, g, f, e)
}

#[test]
fn call_argument_count_and_types() {
    let (mut m, g, _, e) = with_callee();
    let one = m.const_i32(1);
    let fl = m.const_f32(2.0);
    let i64t = m.ty_i64();
    add(
        &mut m,
        e,
        Opcode::CALL,
        Some(i64t),
        vec![g, one],
        Payload::None,
    );
    add(
        &mut m,
        e,
        Opcode::CALL,
        Some(i64t),
        vec![g, one, fl],
        Payload::None,
    );
    ret(&mut m, e, Some(one));
    expect_err(&m, "call passes 1 argument, @g takes 2");
    expect_err(&m, "argument 1 has type f32, expected i32");
}

#[test]
fn call_result_type() {
    let (mut m, g, _, e) = with_callee();
    let one = m.const_i32(1);
    let i32t = m.ty_i32();
    add(
        &mut m,
        e,
        Opcode::CALL,
        Some(i32t),
        vec![g, one, one],
        Payload::None,
    );
    add(
        &mut m,
        e,
        Opcode::CALL,
        None,
        vec![g, one, one],
        Payload::None,
    );
    ret(&mut m, e, Some(one));
    expect_err(&m, "result type is i32, expected i64");
    expect_err(&m, "call has no result type, expected i64");
}

#[test]
fn void_call_has_no_result() {
    let (mut m, _, _, e) = with_callee();
    let void = m.ty_void();
    let i32t = m.ty_i32();
    let sig = m.ty_fn(void, &[]).unwrap();
    let h = Builder::new(&mut m).func("h", sig).unwrap();
    Builder::new(&mut m).import(h, "h").unwrap();
    add(&mut m, e, Opcode::CALL, Some(i32t), vec![h], Payload::None);
    let one = m.const_i32(1);
    ret(&mut m, e, Some(one));
    expect_err(&m, "call of a function returning void has a result type");
}

#[test]
fn call_of_non_function() {
    let (mut m, _, _, e) = with_callee();
    let i32t = m.ty_i32();
    let v = Builder::new(&mut m).global_var("v", i32t, None).unwrap();
    add(&mut m, e, Opcode::CALL, Some(i32t), vec![v], Payload::None);
    let one = m.const_i32(1);
    ret(&mut m, e, Some(one));
    expect_err(
        &m,
        "operand 0 (the callee) must be a `func`, a `proc`, a specialized generic function or a `lookup_witness`, found @v (`global_var`)",
    );
}

#[test]
fn call_indirect_checks() {
    let (mut m, g, _, e) = with_callee();
    let one = m.const_i32(1);
    let i32t = m.ty_i32();
    let i64t = m.ty_i64();
    let sig = m.ty_fn(i64t, &[i32t]).unwrap();
    add(
        &mut m,
        e,
        Opcode::CALL_INDIRECT,
        Some(i64t),
        vec![sig, one, one],
        Payload::None,
    );
    add(
        &mut m,
        e,
        Opcode::CALL_INDIRECT,
        Some(i64t),
        vec![i32t, g, one],
        Payload::None,
    );
    add(
        &mut m,
        e,
        Opcode::CALL_INDIRECT,
        Some(i64t),
        vec![sig, g],
        Payload::None,
    );
    ret(&mut m, e, Some(one));
    expect_err(&m, "operand 1 has type i32, expected ptr");
    expect_err(&m, "operand 0 (the signature) must be a fn type, found i32");
    expect_err(&m, "call passes 0 arguments, the signature takes 1");
}

#[test]
fn ret_types() {
    let Fx { mut m, entry, .. } = fx();
    let big = m.const_i64(1);
    ret(&mut m, entry, Some(big));
    expect_err(&m, "`ret` value has type i64, expected i32");
    let Fx { mut m, entry, .. } = fx();
    ret(&mut m, entry, None);
    expect_err(&m, "`ret` without a value in a function returning i32");
    let mut m = Module::new();
    let void = m.ty_void();
    let sig = m.ty_fn(void, &[]).unwrap();
    let f = Builder::new(&mut m).func("v", sig).unwrap();
    let (e, _) = block(&mut m, f, "entry", &[]);
    let one = m.const_i32(1);
    ret(&mut m, e, Some(one));
    expect_err(&m, "`ret` with a value in a function returning void");
}

#[test]
fn branch_argument_count() {
    let Fx {
        mut m,
        f,
        entry,
        x,
        i32t,
    } = fx();
    let (next, ps) = block(&mut m, f, "next", &[i32t, i32t]);
    Builder::new(&mut m).jump(next, &[]).unwrap_err();
    add(
        &mut m,
        entry,
        Opcode::JUMP,
        None,
        vec![next, x],
        Payload::None,
    );
    ret(&mut m, next, Some(ps[0]));
    expect_err(&m, "branch to ^next passes 1 argument, the block takes 2");
}

#[test]
fn branch_argument_types() {
    let Fx {
        mut m,
        f,
        entry,
        x,
        i32t,
    } = fx();
    let i64t = m.ty_i64();
    let (a, _) = block(&mut m, f, "a", &[i64t]);
    let t = m.const_bool(true);
    let (b, _) = block(&mut m, f, "b", &[]);
    add(
        &mut m,
        entry,
        Opcode::BR,
        None,
        vec![t, a, x, b],
        Payload::None,
    );
    ret(&mut m, a, Some(x));
    ret(&mut m, b, Some(x));
    let _ = i32t;
    expect_err(&m, "argument 0 to ^a has type i32, expected i64");
}

#[test]
fn branch_to_entry() {
    let Fx {
        mut m, entry, x, ..
    } = fx();
    add(
        &mut m,
        entry,
        Opcode::JUMP,
        None,
        vec![entry, x],
        Payload::None,
    );
    expect_err(&m, "branch to the entry block ^entry");
}

#[test]
fn br_condition_and_targets() {
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    let (a, _) = block(&mut m, f, "a", &[]);
    let (b, _) = block(&mut m, f, "b", &[]);
    add(
        &mut m,
        entry,
        Opcode::BR,
        None,
        vec![x, a, b],
        Payload::None,
    );
    ret(&mut m, a, Some(x));
    ret(&mut m, b, Some(x));
    expect_err(&m, "operand 0 has type i32, expected i1");
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    let (a, _) = block(&mut m, f, "a", &[]);
    let t = m.const_bool(true);
    add(
        &mut m,
        entry,
        Opcode::BR,
        None,
        vec![t, a, x, x],
        Payload::None,
    );
    ret(&mut m, a, Some(x));
    expect_err(&m, "`br` needs two target blocks, found 1");
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
fn switch_cases() {
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    let one = m.const_i32(1);
    let two = m.const_i64(2);
    let (d, _) = block(&mut m, f, "d", &[]);
    let (a, _) = block(&mut m, f, "a", &[]);
    let (b, _) = block(&mut m, f, "b", &[]);
    add(
        &mut m,
        entry,
        Opcode::SWITCH,
        None,
        vec![x, one, one, two, d, a, b],
        Payload::None,
    );
    for blk in [d, a, b] {
        ret(&mut m, blk, Some(x));
    }
    expect_err(&m, "`switch` has 3 case values but 2 case targets");
    expect_err(&m, "case value 1 duplicates case value 0 (1)");
    expect_err(&m, "case value 2 has type i64, expected i32");
    let Fx {
        mut m, entry, x, ..
    } = fx();
    add(
        &mut m,
        entry,
        Opcode::SWITCH,
        None,
        vec![x, x],
        Payload::None,
    );
    expect_err(&m, "`switch` needs a default target block");
}

// ---- SSA ----------------------------------------------------------------------------------

#[test]
fn dominance_across_blocks() {
    let Fx {
        mut m,
        f,
        entry,
        x,
        i32t,
    } = fx();
    let c = m.const_bool(true);
    let (a, _) = block(&mut m, f, "a", &[]);
    let (b, _) = block(&mut m, f, "b", &[]);
    let (join, _) = block(&mut m, f, "join", &[]);
    add(
        &mut m,
        entry,
        Opcode::BR,
        None,
        vec![c, a, b],
        Payload::None,
    );
    let v = named(&mut m, a, "v", Opcode::IADD, Some(i32t), vec![x, x]);
    add(&mut m, a, Opcode::JUMP, None, vec![join], Payload::None);
    add(&mut m, b, Opcode::JUMP, None, vec![join], Payload::None);
    ret(&mut m, join, Some(v));
    assert_eq!(msgs(&m), ["operand 0: value %v does not dominate this use"]);
}

#[test]
fn dominance_in_one_block() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let a = add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, x],
        Payload::None,
    );
    let b = named(&mut m, entry, "b", Opcode::IADD, Some(i32t), vec![x, x]);
    m.set_operand(a, 0, b).unwrap();
    m.set_operand(b, 1, b).unwrap();
    ret(&mut m, entry, Some(a));
    expect_err(&m, "operand 0: value %b is used before it is defined");
    expect_err(&m, "operand 1: the instruction uses its own result");
}

#[test]
fn block_params_dominate_only_their_block() {
    let Fx {
        mut m,
        f,
        entry,
        x,
        i32t,
    } = fx();
    let (a, ap) = block(&mut m, f, "a", &[i32t]);
    let (b, _) = block(&mut m, f, "b", &[]);
    m.set_name(ap[0], "p").unwrap();
    add(&mut m, entry, Opcode::JUMP, None, vec![b], Payload::None);
    add(&mut m, b, Opcode::JUMP, None, vec![a, x], Payload::None);
    ret(&mut m, a, Some(ap[0]));
    expect_ok(&m);
    // Now use %p in b, which a does not dominate.
    let Fx {
        mut m,
        f,
        entry,
        x,
        i32t,
    } = fx();
    let (a, ap) = block(&mut m, f, "a", &[i32t]);
    let (b, _) = block(&mut m, f, "b", &[]);
    m.set_name(ap[0], "p").unwrap();
    let c = m.const_bool(true);
    add(
        &mut m,
        entry,
        Opcode::BR,
        None,
        vec![c, a, x, b],
        Payload::None,
    );
    ret(&mut m, a, Some(ap[0]));
    ret(&mut m, b, Some(ap[0]));
    expect_err(&m, "operand 0: value %p does not dominate this use");
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

#[test]
fn blocks_and_types_are_not_values() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, i32t],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![entry, x],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "operand 1 is the type i32, not a value");
    expect_err(&m, "operand 0 is block ^entry, not a value");
}

#[test]
fn operand_without_value() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let ptr = m.ty_ptr();
    let p = add(
        &mut m,
        entry,
        Opcode::STACKALLOC,
        Some(ptr),
        vec![i32t],
        Payload::None,
    );
    let s = add(
        &mut m,
        entry,
        Opcode::STORE,
        None,
        vec![p, x],
        Payload::None,
    );
    add(
        &mut m,
        entry,
        Opcode::IADD,
        Some(i32t),
        vec![x, s],
        Payload::None,
    );
    ret(&mut m, entry, Some(x));
    expect_err(&m, "operand 1 (inst");
    expect_err(&m, "has no value: `store` has no result type");
}

// ---- hoistables, types, constants ---------------------------------------------------------

#[test]
fn hoistable_not_unique() {
    let mut m = Module::new();
    let a = m.ty_i32();
    // Corrupt: a second i32, pushed into the pool behind the intern map's back.
    let dup = m
        .alloc(crate::module::InstData::new(
            Opcode::I32,
            None,
            thin_vec::ThinVec::new(),
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
    m.insts[entry.idx()].children.insert(1, c);
    expect_err(&m, "is the hoistable `const_int`");
    let mut m = Module::new();
    let t = m.ty_i32();
    m.pool.clear();
    let _ = t;
    expect_err(&m, "hoistable `i32` is not in the pool");
}

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

// ---- decorations --------------------------------------------------------------------------

#[test]
fn decoration_payloads() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let zero = m.const_i32(0);
    let mut b = Builder::new(&mut m);
    let g = b.global_var("g", i32t, Some(zero)).unwrap();
    b.export(g, "").unwrap();
    expect_err(&m, "`export` needs a non-empty string payload");
}

#[test]
fn decoration_placement() {
    let Fx {
        mut m,
        entry,
        x,
        i32t,
        ..
    } = fx();
    let zero = m.const_i32(0);
    let mut b = Builder::new(&mut m);
    let g = b.global_var("g", i32t, Some(zero)).unwrap();
    b.decorate(g, Opcode::INLINE_HINT, vec![], Payload::None)
        .unwrap();
    let c = b.global_const("c", i32t, zero).unwrap();
    b.decorate(c, Opcode::EXTERN, vec![], Payload::Str("c".into()))
        .unwrap();
    b.decorate(x, Opcode::EXPORT, vec![], Payload::Str("x".into()))
        .unwrap();
    ret(&mut m, entry, Some(x));
    expect_err(
        &m,
        "`inline_hint` is only allowed on a `func`, not on `global_var`",
    );
    expect_err(
        &m,
        "`extern` is only allowed on a `func` or a `global_var`, not on `global_const`",
    );
    expect_err(
        &m,
        "`export` is only allowed on top-level definitions, not on `param`",
    );
}

#[test]
fn pin_and_loc_operands() {
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    let three = m.const_i32(3);
    let big = m.const_i64(3);
    let mut b = Builder::new(&mut m);
    b.decorate(f, Opcode::PIN, vec![three], Payload::None)
        .unwrap();
    b.decorate(f, Opcode::PIN_IF, vec![f, x], Payload::None)
        .unwrap();
    let r = ret(&mut m, entry, Some(x));
    m.add_decoration(r, Opcode::LOC, vec![three, big], Payload::Str("a.c".into()))
        .unwrap();
    expect_err(&m, "`pin` operand 0 must be a top-level definition");
    expect_err(
        &m,
        "`pin_if` operand 1 must be a top-level definition, found %x (`param`)",
    );
    expect_err(&m, "`loc` operand 1 (column) must be an i32 const_int");
}

#[test]
fn decoration_conflicts() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let zero = m.const_i32(0);
    let mut b = Builder::new(&mut m);
    let c = b.global_var("c", i32t, None).unwrap();
    b.export(c, "c").unwrap();
    b.import(c, "c").unwrap();
    let d = b.global_var("d", i32t, Some(zero)).unwrap();
    b.decorate(d, Opcode::WEAK, vec![], Payload::None).unwrap();
    b.decorate(d, Opcode::LINKONCE, vec![], Payload::None)
        .unwrap();
    let e = b.global_var("e", i32t, Some(zero)).unwrap();
    b.export(e, "e1").unwrap();
    b.export(e, "e2").unwrap();
    let h = b.global_var("h", i32t, None).unwrap();
    b.import(h, "h").unwrap();
    b.decorate(h, Opcode::WEAK, vec![], Payload::None).unwrap();
    b.decorate(h, Opcode::NAME_HINT, vec![], Payload::Str("again".into()))
        .unwrap();
    expect_err(&m, "`export` and `import` on one definition");
    expect_err(&m, "`weak` and `linkonce` are exclusive");
    expect_err(&m, "more than one `export` on one instruction");
    expect_err(&m, "an imported definition cannot be `weak` or `linkonce`");
    expect_err(&m, "more than one `name_hint` on one instruction");
}

#[test]
fn export_names_are_unique() {
    let mut m = Module::new();
    let i32t = m.ty_i32();
    let zero = m.const_i32(0);
    let mut b = Builder::new(&mut m);
    let e = b.global_var("e", i32t, Some(zero)).unwrap();
    b.export(e, "twice").unwrap();
    let f = b.global_var("f", i32t, Some(zero)).unwrap();
    b.export(f, "twice").unwrap();
    assert_eq!(msgs(&m), ["export name \"twice\" is already used by @e"]);
}

#[test]
fn decoration_with_decorations() {
    let Fx {
        mut m, f, entry, x, ..
    } = fx();
    ret(&mut m, entry, Some(x));
    let d = m
        .add_decoration(f, Opcode::STUB, vec![], Payload::None)
        .unwrap();
    let n = m
        .new_inst(Opcode::NAME_HINT, None, vec![], Payload::Str("n".into()))
        .unwrap();
    m.insts[d.idx()].decorations.push(n);
    m.insts[n.idx()].parent = Some(d);
    expect_err(&m, "decoration `stub` cannot carry decorations");
}

// ---- robustness ---------------------------------------------------------------------------

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
    m.insts[entry.idx()].children.push(bogus);
    m.insts[entry.idx()].decorations.push(bogus);
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
    m.insts[entry.idx()].children.push(f);
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
