//! Tests of the fallible path and of the typed path (`Builder::ins`), and of each misuse
//! message of the typed path.

use super::*;

#[test]
fn memory_aggregate_and_terminator_helpers_build_valid_code() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let i64t = b.module().ty_i64();
    let pair = b.module().ty_struct(&[i32t, i64t]).unwrap();
    let sig = b.module().ty_fn(i64t, &[i32t]).unwrap();
    let g = b.global_var("g", pair, None).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, params) = b.block(f, &[i32t]).unwrap();
    let (bad, _) = b.block(f, &[]).unwrap();
    let (dead, _) = b.block(f, &[]).unwrap();
    let (ok, _) = b.block(f, &[]).unwrap();
    b.position_at_end(entry);
    let zero = b.module().const_i64(0);
    let one = b.module().const_i32(1);
    let field1 = b.elem(pair, g, &[zero, one]).unwrap();
    let v = b.load(i64t, field1).unwrap();
    let agg = b.module().const_zero(pair).unwrap();
    let agg = b.insert(agg, 1, v).unwrap();
    let x = b.extract(agg, 1).unwrap();
    assert_eq!(b.module().ty(x), Some(i64t));
    b.store(field1, x).unwrap();
    let c = b.icmp(IntCC::Eq, params[0], one).unwrap();
    let y = b.select(c, x, zero).unwrap();
    assert!(b.extract(y, 0).is_err());
    b.br(c, bad, &[], ok, &[]).unwrap();
    b.position_at_end(bad);
    b.trap().unwrap();
    b.position_at_end(dead);
    b.unreachable().unwrap();
    b.position_at_end(ok);
    b.ret(Some(y)).unwrap();
    crate::verify::verify(&m).unwrap();
}

#[test]
fn append_block_param_goes_after_the_parameters() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, params) = b.block(f, &[i32t]).unwrap();
    let (next, _) = b.block(f, &[]).unwrap();
    b.position_at_end(entry);
    b.jump(next, &[params[0]]).unwrap();
    b.position_at_end(next);
    let one = b.module().const_i32(1);
    let r = b.binary(Opcode::IADD, one, one).unwrap();
    b.ret(Some(r)).unwrap();
    let p = b.append_block_param(next, i32t).unwrap();
    assert_eq!(m.block_params(next), [p]);
    assert_eq!(m.children(next)[0], p);
    crate::verify::verify(&m).unwrap();
    let mut b = Builder::new(&mut m);
    assert!(b.append_block_param(f, i32t).is_err());
}

#[test]
fn global_declarations_are_imports_or_zeroed_variables() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i64t = b.module().ty_i64();
    let c = b.global_decl("c", i64t, false).unwrap();
    b.import(c, "lib:c").unwrap();
    let v = b.global_decl("v", i64t, true).unwrap();
    assert_eq!(m.opcode(c), Opcode::GLOBAL_CONST);
    assert_eq!(m.opcode(v), Opcode::GLOBAL_VAR);
    assert!(m.operands(v).is_empty());
    crate::verify::verify(&m).unwrap();
}

// ---- the typed path ---------------------------------------------------------------------

use crate::{Conversion, FloatBinary, FloatUnary, IntBinary, IntUnary};

/// Each generated shorthand is named as its opcode, and each family has one per member.
#[test]
fn shorthands_are_named_as_their_opcodes() {
    fn check<E: Copy + std::fmt::Display>(names: &[(E, &str)], all: &[E]) {
        assert_eq!(names.len(), all.len());
        for (op, name) in names {
            assert_eq!(op.to_string(), *name);
        }
    }
    check(ins::INT_BINARY, IntBinary::ALL);
    check(ins::FLOAT_BINARY, FloatBinary::ALL);
    check(ins::INT_UNARY, IntUnary::ALL);
    check(ins::FLOAT_UNARY, FloatUnary::ALL);
    check(ins::CONVERSION, Conversion::ALL);
}

/// A function `f(i32, f64) -> i32` with its entry block from the signature.
fn typed_fn(m: &mut Module) -> (Inst, Inst, Vec<Inst>) {
    let mut b = Builder::new(m);
    let i32t = b.module().ty_i32();
    let f64t = b.module().ty_f64();
    let sig = b.module().ty_fn(i32t, &[i32t, f64t]).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, params) = b.entry_block(f).unwrap();
    (f, entry, params)
}

#[test]
fn every_family_member_builds_code_the_verifier_accepts() {
    let mut m = Module::new();
    let (f, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    let (x, y) = (p[0], p[1]);
    for &op in IntBinary::ALL {
        let i = b.ins().int_binary(op, x, x);
        assert_eq!(b.module().opcode(i), op.op());
    }
    for &op in FloatBinary::ALL {
        b.ins().float_binary(op, y, y);
    }
    for &op in IntUnary::ALL {
        b.ins().int_unary(op, x);
    }
    for &op in FloatUnary::ALL {
        b.ins().float_unary(op, y);
    }
    let (i16t, i64t, f32t) = (
        b.module().ty_i16(),
        b.module().ty_i64(),
        b.module().ty_f32(),
    );
    assert_eq!(b.module().opcode(i16t), Opcode::I16);
    let w = b.ins().sext(i64t, x);
    let n = b.ins().trunc(i16t, w);
    b.ins().zext(i64t, n);
    let fl = b.ins().fptrunc(f32t, y);
    let f64t = b.module().ty_f64();
    b.ins().fpext(f64t, fl);
    let i32t = b.module().ty_i32();
    b.ins().bitcast(f32t, x);
    let s = b.ins().iadd(x, x);
    let d = b.ins().imul(s, x);
    let q = b.ins().fadd(y, y);
    let r = b.ins().fptosi(i32t, q);
    let c = b.ins().fcmp(FloatCC::Olt, y, q);
    let v = b.ins().select(c, d, r);
    b.ins().ret(Some(v));
    assert_eq!(m.entry_block(f), Some(entry));
    crate::verify::verify(&m).unwrap();
}

#[test]
fn memory_calls_and_branches_on_the_typed_path() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let i64t = b.module().ty_i64();
    let pair = b.module().ty_struct(&[i32t, i64t]).unwrap();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let ext = b.import_func("ext", sig, "lib:ext").unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, p) = b.entry_block(f).unwrap();
    let (then, tp) = b.block(f, &[i32t]).unwrap();
    let (other, _) = b.block(f, &[]).unwrap();
    let (last, _) = b.block(f, &[]).unwrap();
    let (dead, _) = b.block(f, &[]).unwrap();
    b.position_at_end(entry);
    let slot = b.ins().stackalloc(pair);
    let zero = b.module().const_i64(0);
    let one = b.module().const_i32(1);
    let field = b.ins().elem(pair, slot, &[zero, one]);
    b.ins().store(field, zero);
    let v = b.ins().load(i64t, field);
    let agg = b.module().const_zero(pair).unwrap();
    let agg = b.ins().insert(agg, 1, v);
    let back = b.ins().extract(agg, 1);
    assert_eq!(b.module().ty(back), Some(i64t));
    let got = b.ins().call(ext, &[p[0]]);
    let fp = b.ins().call_indirect(sig, ext, &[got]);
    let c = b.ins().icmp(IntCC::Sgt, fp, one);
    b.ins().br(c, then, &[fp], other, &[]);
    b.position_at_end(then);
    b.ins().ret(Some(tp[0]));
    b.position_at_end(other);
    let two = b.module().const_i32(2);
    b.ins().switch(p[0], (last, &[]), &[(two, dead, &[])]);
    b.position_at_end(last);
    b.ins().trap_msg("no way");
    b.position_at_end(dead);
    b.ins().unreachable();
    assert_eq!(m.decoration_str(ext, Opcode::IMPORT), Some("lib:ext"));
    assert_eq!(m.entry_block(ext), None);
    crate::verify::verify(&m).unwrap();
}

#[test]
fn entry_block_needs_a_function_without_blocks() {
    let mut m = Module::new();
    let (f, _, p) = typed_fn(&mut m);
    assert_eq!(p.len(), 2);
    assert_eq!(m.ty(p[1]), Some(m.ty_f64()));
    let mut b = Builder::new(&mut m);
    assert!(b.entry_block(f).is_err());
    let i32t = b.module().ty_i32();
    let g = b.global_decl("g", i32t, true).unwrap();
    assert!(b.entry_block(g).is_err());
}

#[test]
fn position_before_inserts_before_the_instruction() {
    let mut m = Module::new();
    let (_, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    let r = b.ins().ret(Some(p[0]));
    b.position_before(r);
    let a = b.ins().iadd(p[0], p[0]);
    let c = b.ins().imul(a, a);
    assert_eq!(m.children(entry)[2..], [a, c, r]);
    let mut b = Builder::new(&mut m);
    b.position_before(r);
    b.position_at_end(entry);
    let t = b.ins().trap();
    assert_eq!(m.children(entry).last(), Some(&t));
}

// ---- misuse of the typed path: a panic naming the operation and the operand --------------

#[test]
#[should_panic(expected = "`iadd`: no current block (place the cursor with position_at_end")]
fn no_current_block() {
    let mut m = Module::new();
    let (_, _, p) = typed_fn(&mut m);
    Builder::new(&mut m).ins().iadd(p[0], p[0]);
}

#[test]
#[should_panic(expected = "`iadd`: operand 1 is the type `i32`, not a value")]
fn a_type_is_not_a_value() {
    let mut m = Module::new();
    let (_, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    let t = b.module().ty_i32();
    b.ins().iadd(p[0], t);
}

#[test]
#[should_panic(
    expected = "`isub`: operand 0 is the type `fn(i32, f64) -> i32`, not a value (a type passed as a value, or a handle from another module?)"
)]
fn a_handle_from_another_module() {
    // In `other`, the handle names a constant; here, the same index is a type.
    let mut here = Module::new();
    let (_, entry, _) = typed_fn(&mut here);
    let mut other = Module::new();
    let foreign = {
        let mut b = Builder::new(&mut other);
        b.module().ty_f64();
        b.module().const_i32(3)
    };
    let sig_here = here.ty(here.top_level()[0]).unwrap();
    assert_eq!(
        foreign, sig_here,
        "the test needs the two handles to coincide"
    );
    let mut b = Builder::new(&mut here);
    b.position_at_end(entry);
    b.ins().isub(foreign, foreign);
}

#[test]
#[should_panic(expected = "operand 0 (inst4000) is not an instruction of this module")]
fn a_handle_past_the_arena() {
    let mut m = Module::new();
    let (_, entry, _) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    b.ins().clz(Inst::from_index(4000));
}

#[test]
#[should_panic(
    expected = "`iadd`: operands have different types: operand 0 is `i32`, operand 1 is `i64`"
)]
fn operands_of_different_types() {
    let mut m = Module::new();
    let (_, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    let big = b.module().const_i64(1);
    b.ins().iadd(p[0], big);
}

#[test]
#[should_panic(expected = "`fadd`: operand 0 has type `i32`, not a float type")]
fn operands_of_the_wrong_class() {
    let mut m = Module::new();
    let (_, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    b.ins().fadd(p[0], p[1]);
}

#[test]
#[should_panic(expected = "`call`: the callee @f takes 2 arguments, given 1")]
fn a_call_with_the_wrong_argument_count() {
    let mut m = Module::new();
    let (f, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    b.ins().call(f, &[p[0]]);
}

#[test]
#[should_panic(expected = "`call`: argument 1 has type `i32`, but the callee @f takes `f64` there")]
fn a_call_with_an_argument_of_the_wrong_type() {
    let mut m = Module::new();
    let (f, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    b.ins().call(f, &[p[0], p[0]]);
}

#[test]
#[should_panic(expected = "`call`: the callee `i32 7` is not a function")]
fn a_call_of_something_else() {
    let mut m = Module::new();
    let (_, entry, _) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    let seven = b.module().const_i32(7);
    b.ins().call(seven, &[]);
}

#[test]
#[should_panic(expected = "`ret`: the function returns `i32`, but no value was given")]
fn a_ret_that_does_not_fit_the_signature() {
    let mut m = Module::new();
    let (_, entry, _) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    b.ins().ret(None);
}

#[test]
#[should_panic(expected = "`ret`: operand 0 has type `f64`, but the function returns `i32`")]
fn a_ret_of_the_wrong_type() {
    let mut m = Module::new();
    let (_, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    b.ins().ret(Some(p[1]));
}

#[test]
#[should_panic(expected = "`jump`: the block @f ^bb1 takes 1 argument, given 0")]
fn a_jump_without_the_block_arguments() {
    let mut m = Module::new();
    let (f, entry, _) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let (next, _) = b.block(f, &[i32t]).unwrap();
    b.position_at_end(entry);
    b.ins().jump(next, &[]);
}

#[test]
#[should_panic(expected = "`zext`: the target `i32 7` is not a type")]
fn a_conversion_to_a_value() {
    let mut m = Module::new();
    let (_, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    let seven = b.module().const_i32(7);
    b.ins().zext(seven, p[0]);
}

#[test]
#[should_panic(expected = "position_before: @f is not an instruction in a block")]
fn position_before_a_definition() {
    let mut m = Module::new();
    let (f, _, _) = typed_fn(&mut m);
    Builder::new(&mut m).position_before(f);
}

// ---- generics ----------------------------------------------------------------------------

/// `pick<T>(c: i1, a: T, b: T) -> T`, its body a `select`.
fn pick(b: &mut Builder<'_>) -> (Inst, Inst) {
    let i1 = b.module().ty_i1();
    let (g, t) = b.generic("pick", 1).unwrap();
    let sig = b.module().ty_fn(t[0], &[i1, t[0], t[0]]).unwrap();
    let f = b.generic_func(g, sig).unwrap();
    let (entry, p) = b.entry_block(f).unwrap();
    b.position_at_end(entry);
    let r = b.ins().select(p[0], p[1], p[2]);
    b.ins().ret(Some(r));
    (g, t[0])
}

#[test]
fn a_generic_function_specialized_and_called() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let (g, t) = pick(&mut b);
    let i32t = b.module().ty_i32();
    let pick_i32 = b.specialize(g, &[i32t]).unwrap();
    let want = b.module().ty_i1();
    let want = b.module().ty_fn(i32t, &[want, i32t, i32t]).unwrap();
    assert_eq!(b.module().ty(pick_i32), Some(want));
    assert_eq!(b.specialize(g, &[i32t]).unwrap(), pick_i32, "interned");
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let f = b.func("user", sig).unwrap();
    let (entry, p) = b.entry_block(f).unwrap();
    b.position_at_end(entry);
    let yes = b.module().const_bool(true);
    let r = b.ins().call(pick_i32, &[yes, p[0], p[0]]);
    b.ins().ret(Some(r));
    assert_eq!(m.opcode(t), Opcode::TYPE_PARAM);
    crate::verify::verify(&m).unwrap();
}

#[test]
fn specialization_substitutes_inside_types() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let (g, t) = b.generic("g", 2).unwrap();
    let ptr = b.module().ty_ptr();
    let pair = b.module().ty_struct(&[t[0], t[1]]).unwrap();
    let arr = b.module().ty_array(pair, 4).unwrap();
    let sig = b.module().ty_fn(t[1], &[ptr, arr]).unwrap();
    b.generic_func(g, sig).unwrap();
    b.import(g, "lib:g").unwrap(); // imported: the signature alone
    let (i8t, f64t) = (b.module().ty_i8(), b.module().ty_f64());
    let s = b.specialize(g, &[i8t, f64t]).unwrap();
    let pair = b.module().ty_struct(&[i8t, f64t]).unwrap();
    let arr = b.module().ty_array(pair, 4).unwrap();
    let want = b.module().ty_fn(f64t, &[ptr, arr]).unwrap();
    assert_eq!(m.ty(s), Some(want));
    let mut b = Builder::new(&mut m);
    assert!(b.specialize(g, &[i8t]).is_err());
    assert!(b.specialize(want, &[i8t, i8t]).is_err());
    assert!(b.generic_func(want, sig).is_err());
    crate::verify::verify(&m).unwrap();
}

#[test]
fn jumps_and_void_calls_on_the_typed_path() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let void = b.module().ty_void();
    let sink_sig = b.module().ty_fn(void, &[i32t]).unwrap();
    let sink = b.import_func("sink", sink_sig, "lib:sink").unwrap();
    let sig = b.module().ty_fn(void, &[i32t]).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, p) = b.entry_block(f).unwrap();
    let (next, np) = b.block(f, &[i32t]).unwrap();
    b.position_at_end(entry);
    b.ins().jump(next, &[p[0]]);
    b.position_at_end(next);
    let c = b.ins().call(sink, &[np[0]]);
    assert_eq!(b.module().ty(c), None, "a void call has no result");
    b.ins().ret(None);
    crate::verify::verify(&m).unwrap();
}

#[test]
#[should_panic(expected = "`br`: operand 0 has type `i32`, not i1")]
fn a_branch_on_a_non_boolean() {
    let mut m = Module::new();
    let (f, entry, p) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    let (next, _) = b.block(f, &[]).unwrap();
    b.position_at_end(entry);
    b.ins().br(p[0], next, &[], next, &[]);
}

#[test]
#[should_panic(expected = "`ret`: the function returns void, but `i32 1` was given")]
fn a_value_returned_from_a_void_function() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let void = b.module().ty_void();
    let sig = b.module().ty_fn(void, &[]).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, _) = b.entry_block(f).unwrap();
    b.position_at_end(entry);
    let one = b.module().const_i32(1);
    b.ins().ret(Some(one));
}

#[test]
#[should_panic(expected = "`load`: the loaded type `i32 7` is not a type")]
fn a_load_of_a_value_instead_of_a_type() {
    let mut m = Module::new();
    let (_, entry, _) = typed_fn(&mut m);
    let mut b = Builder::new(&mut m);
    b.position_at_end(entry);
    let seven = b.module().const_i32(7);
    let null = b.module().const_null();
    b.ins().load(seven, null);
}

/// The fallible path refuses a call with another number of arguments than the callee's
/// signature takes (direct and indirect), and builds nothing.
#[test]
fn fallible_calls_check_their_argument_count() {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[i32t, i32t]).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, p) = b.block(f, &[i32t, i32t]).unwrap();
    b.position_at_end(entry);
    let ptr = b.module().const_null();
    let before = b.module().arena_len();
    let e = b.call(f, &[p[0]]).unwrap_err();
    assert_eq!(
        e,
        CoreError::ArgumentCount {
            callee: f,
            expected: 2,
            given: 1
        }
    );
    assert!(
        e.to_string()
            .contains("with 1 arguments: its signature takes 2"),
        "{e}"
    );
    let e = b.call_indirect(sig, ptr, &[p[0], p[1], p[0]]).unwrap_err();
    assert!(
        matches!(
            e,
            CoreError::ArgumentCount {
                expected: 2,
                given: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(b.module().arena_len(), before, "nothing built");
    let r = b.call(f, &[p[0], p[1]]).unwrap();
    b.ret(Some(r)).unwrap();
    crate::verify::verify(&m).unwrap();
}

/// A function of `n` blocks after its entry, each jumping to the next with one argument.
fn chain_of_blocks(n: usize) -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let f = b.func("f", sig).unwrap();
    let (entry, p) = b.entry_block(f).unwrap();
    let blocks: Vec<(Inst, Vec<Inst>)> = (0..n).map(|_| b.block(f, &[i32t]).unwrap()).collect();
    b.position_at_end(entry);
    b.ins().jump(blocks[0].0, &[p[0]]);
    for w in blocks.windows(2) {
        b.position_at_end(w[0].0);
        let next = b.ins().iadd(w[0].1[0], w[0].1[0]);
        b.ins().jump(w[1].0, &[next]);
    }
    let (last, lp) = &blocks[n - 1];
    b.position_at_end(*last);
    b.ins().ret(Some(lp[0]));
    m
}

/// The typed path checks an edge in what its arguments cost, not what its function's blocks
/// cost: naming the target for a message (a scan of the function's blocks) was done for every
/// edge, which made building a function quadratic in its blocks.
#[test]
fn branches_cost_what_their_arguments_cost() {
    const N: usize = 2_000;
    crate::verify::verify(&chain_of_blocks(100)).unwrap();
    let t_small = irkit_testkit::best_cpu_of(5, || drop(chain_of_blocks(N)));
    let t_big = irkit_testkit::best_cpu_of(3, || drop(chain_of_blocks(10 * N)));
    irkit_testkit::assert_grows_at_most_n_log_n(
        "building a chain of blocks (time per block count)",
        (N, 10 * N),
        (t_small.as_secs_f64(), t_big.as_secs_f64()),
        1e-4,
    );
}
