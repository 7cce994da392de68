//! Modules built with the core builder, shared by the integration tests.
#![allow(dead_code)]

use irkit_core::{Builder, Inst, IntCC, Module, Opcode, Payload};

/// A module exercising most of the IR: functions with branches (forward block references),
/// calls, globals, an aggregate constant holding a function address, strings, bytes, floats,
/// exports, imports, name hints, locations, an opaque opcode, root decorations.
pub fn sample() -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i32t = b.module().ty_i32();
    let i1t = b.module().ty_i1();
    let ptr = b.module().ty_ptr();
    let f64t = b.module().ty_f64();
    let sig = b.module().ty_fn(i32t, &[i32t]).unwrap();
    let ext = b.func("ext", sig).unwrap();
    b.import(ext, "lib.ext").unwrap();
    let f = b.func("abs", sig).unwrap();
    b.export(f, "abs").unwrap();
    let (entry, params) = b.block(f, &[i32t]).unwrap();
    let (neg, _) = b.block(f, &[]).unwrap();
    let (done, dp) = b.block(f, &[i32t]).unwrap();
    b.position_at_end(entry);
    let zero = b.module().const_i32(0);
    let c = b.icmp(IntCC::Slt, params[0], zero).unwrap();
    b.br(c, neg, &[], done, &[params[0]]).unwrap();
    b.position_at_end(neg);
    let n = b.binary(Opcode::ISUB, zero, params[0]).unwrap();
    let called = b.call(ext, &[n]).unwrap();
    b.jump(done, &[called]).unwrap();
    b.position_at_end(done);
    let fl = b.module().const_f64(1.5);
    let _ = b
        .inst(Opcode::FADD, Some(f64t), vec![fl, fl], Payload::None)
        .unwrap();
    // An opaque opcode from a "newer" version, with a payload and operands.
    let _ = b
        .inst(
            Opcode(0x7abc),
            Some(i1t),
            vec![dp[0], f],
            Payload::Bytes(vec![1, 2, 3].into()),
        )
        .unwrap();
    b.ret(Some(dp[0])).unwrap();
    // Globals: bytes, a table with the function's address.
    let s = b.module().const_bytes(b"hello\0");
    let st = b.module().ty(s).unwrap();
    let g = b.global_const("greeting", st, s).unwrap();
    b.export(g, "greeting").unwrap();
    let tt = b.module().ty_struct(&[ptr, i32t]).unwrap();
    let agg = b.module().const_aggregate(tt, &[f, zero]).unwrap();
    let table = b.global_var("table", tt, Some(agg)).unwrap();
    let _ = b.global_var("", i32t, None).unwrap();
    let ns = b.module().ty_named_struct("Point", &[f64t, f64t]).unwrap();
    let _ = b.global_var("origin", ns, None).unwrap();
    // Locations and a pin.
    let line = b.module().const_i32(12);
    let col = b.module().const_i32(3);
    b.decorate(
        f,
        Opcode::LOC,
        vec![line, col],
        Payload::Str("abs.c".into()),
    )
    .unwrap();
    b.decorate(table, Opcode::PIN, vec![f], Payload::None)
        .unwrap();
    let root = m.root();
    m.add_decoration(
        root,
        Opcode::NAME_HINT,
        vec![],
        Payload::Str("sample".into()),
    )
    .unwrap();
    m
}

/// `count` small exported functions (`f0`, `f1`, ...) each calling the previous one.
pub fn chain(count: usize, body_len: usize) -> Module {
    let mut m = Module::new();
    let mut b = Builder::new(&mut m);
    let i64t = b.module().ty_i64();
    let sig = b.module().ty_fn(i64t, &[i64t]).unwrap();
    let mut prev: Option<Inst> = None;
    for k in 0..count {
        let f = b.func(&format!("f{k}"), sig).unwrap();
        if k % 2 == 0 {
            b.export(f, &format!("f{k}")).unwrap();
        }
        let (entry, p) = b.block(f, &[i64t]).unwrap();
        b.position_at_end(entry);
        let mut v = p[0];
        for j in 0..body_len {
            let c = b.module().const_i64((j % 17) as i64);
            let op = [Opcode::IADD, Opcode::IMUL, Opcode::XOR][j % 3];
            v = b.binary(op, v, c).unwrap();
        }
        if let Some(g) = prev {
            v = b.call(g, &[v]).unwrap();
        }
        b.ret(Some(v)).unwrap();
        prev = Some(f);
    }
    m
}
