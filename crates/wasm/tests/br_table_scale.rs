//! A `br_table` costs the front end what its targets cost (issue 37, "Size"): a table of 10×
//! the targets translates in about 10× the time, never 100× (reading one edge of a terminator
//! listed all of its edges, once per incoming edge of a block: quadratic in a table's size).
//!
//! The modules are generated here; the growth is checked by the ratio of two sizes (the best of
//! a few runs each), with a bound far above n log n and far below n².

use irkit_core::{Module, Opcode};

/// LEB128 of `n`.
fn leb(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A section with id `id`.
fn section(id: u8, payload: &[u8], out: &mut Vec<u8>) {
    out.push(id);
    leb(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// A module of one function `(func (export "f") (param i32) (result i32))` whose body (its
/// locals, then its code) is `body`.
fn exporting_f(body: &[u8]) -> Vec<u8> {
    let mut wasm = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[1, 0x60, 1, 0x7f, 1, 0x7f], &mut wasm); // (i32) -> i32
    section(3, &[1, 0], &mut wasm);
    section(7, &[1, 1, b'f', 0, 0], &mut wasm);
    let mut code = vec![1];
    leb(body.len() as u64, &mut code);
    code.extend_from_slice(body);
    section(10, &code, &mut wasm);
    wasm
}

/// Blocks nested around the table; target `k` leaves `k % DEPTH` of them.
const DEPTH: u32 = 4;

/// `(func (export "f") (param i32) (result i32))`: `DEPTH` nested blocks around a `br_table`
/// on the parameter with `n` targets (target `k` is depth `k % DEPTH`, the default depth 0);
/// after the `end` of the block at depth `d` the function returns the parameter plus `d`, so
/// every exit block reads the local: SSA construction gives it a parameter with an argument
/// on each of its `n / DEPTH` incoming edges, which then proves trivial.
fn br_table_module(n: u32) -> Vec<u8> {
    let mut body = vec![0]; // no locals
    for _ in 0..DEPTH {
        body.extend_from_slice(&[0x02, 0x40]); // block (empty type)
    }
    body.extend_from_slice(&[0x20, 0x00, 0x0e]); // local.get 0; br_table
    leb(u64::from(n), &mut body);
    for k in 0..n {
        leb(u64::from(k % DEPTH), &mut body);
    }
    leb(0, &mut body);
    for d in 0..DEPTH {
        // end; local.get 0; i32.const d; i32.add; return
        body.extend_from_slice(&[0x0b, 0x20, 0x00, 0x41]);
        leb(u64::from(d), &mut body);
        body.extend_from_slice(&[0x6a, 0x0f]);
    }
    body.extend_from_slice(&[0x41, 0x00, 0x0b]); // i32.const 0; end
    exporting_f(&body)
}

/// `(func (export "f") (param i32) (result i32) (local i32))`: `n` `br_if`s out of a block,
/// each ending a block and starting the next, then a `br_table` of `n` targets out of the
/// block around it; after both, the function returns the local. The local's value where the
/// edges meet is looked up through the chain of blocks above the `br_table` from each of its
/// `n` edges: each look-up must stay short (issue 42: SSA construction's look-ups through
/// predecessors are bounded), or this is quadratic.
fn chain_and_table_module(n: u32) -> Vec<u8> {
    let mut body = vec![1, 1, 0x7f]; // one local i32
    body.extend_from_slice(&[0x02, 0x40, 0x02, 0x40]); // block, block
    for _ in 0..n {
        // local.get 0; i32.const 0; i32.eq; br_if 0
        body.extend_from_slice(&[0x20, 0x00, 0x41, 0x00, 0x46, 0x0d, 0x00]);
    }
    body.extend_from_slice(&[0x20, 0x00, 0x0e]); // local.get 0; br_table
    leb(u64::from(n), &mut body);
    for _ in 0..=n {
        leb(1, &mut body);
    }
    body.extend_from_slice(&[0x0b, 0x0b, 0x20, 0x01, 0x0b]); // end; end; local.get 1; end
    exporting_f(&body)
}

/// The translation of `wasm`.
fn translate(wasm: &[u8]) -> Module {
    irkit_wasm::translate(wasm, "t").unwrap()
}

/// Base size: 10× it translates in well under a second in a debug build (it took seconds
/// before, growing with the square).
const N: u32 = 5_000;

#[test]
fn a_br_table_is_one_switch_with_a_case_per_target() {
    let m = translate(&br_table_module(100));
    irkit_core::verify::verify(&m).unwrap();
    let f = m.find_export("wasm:t:f").unwrap();
    let switches: Vec<usize> = m
        .blocks(f)
        .filter_map(|b| m.children(b).last().copied())
        .filter(|&t| m.opcode(t) == Opcode::SWITCH)
        .map(|t| irkit_core::edges::edges_of(&m, t).1.len())
        .collect();
    // The default edge and one per target.
    assert_eq!(switches, [101]);
    // Each exit block's parameter (the local) was trivial and is gone: the only parameter
    // left after the entry's is the function end block's result.
    let params: usize = m.blocks(f).skip(1).map(|b| m.block_params(b).len()).sum();
    assert_eq!(params, 1);
}

#[test]
fn translating_a_br_table_grows_linearly_with_its_targets() {
    let small = br_table_module(N);
    let big = br_table_module(10 * N);
    let t_small = irkit_testkit::best_of(5, || drop(translate(&small)));
    let t_big = irkit_testkit::best_of(3, || drop(translate(&big)));
    irkit_testkit::assert_grows_at_most_n_log_n(
        "translating a br_table (time per target count)",
        (N as usize, 10 * N as usize),
        (t_small.as_secs_f64(), t_big.as_secs_f64()),
        1e-4,
    );
}

#[test]
fn reading_a_local_where_many_edges_meet_grows_linearly() {
    let m = translate(&chain_and_table_module(100));
    irkit_core::verify::verify(&m).unwrap();
    let small = chain_and_table_module(N / 5);
    let big = chain_and_table_module(2 * N);
    let t_small = irkit_testkit::best_of(5, || drop(translate(&small)));
    let t_big = irkit_testkit::best_of(3, || drop(translate(&big)));
    irkit_testkit::assert_grows_at_most_n_log_n(
        "translating a chain of br_ifs and a br_table (time per size)",
        ((N / 5) as usize, 2 * N as usize),
        (t_small.as_secs_f64(), t_big.as_secs_f64()),
        1e-4,
    );
}
