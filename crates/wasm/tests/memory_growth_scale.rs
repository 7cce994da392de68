//! Growing a memory page by page, or a table entry by entry, costs what the pages or entries
//! cost, not their square: `memory.grow` copied the whole memory to a new allocation on every
//! growth, so 1,000 growths of one page copied 32 GB (34 s as an executable), and `table.grow`
//! likewise. A table keeps a capacity that doubles (crates/wasm/src/table.rs, `build_grow`);
//! a memory grows with `mem_grow`, whose back ends do the same (the interpreter's buffer
//! doubles: crates/interp/src/linear.rs; Cranelift's `irkit.rt.mem_grow` reserves twice).
//!
//! The growth is checked by the ratio of two sizes (the best of a few runs each, in the
//! interpreter), with a bound far above linear and far below quadratic.

use irkit_interp::{Interpreter, Value};
use irkit_link::{Input, LinkOptions};

/// `(func (export "grow") (param $n i32) (result i32))`: `$n` growths of one page, each
/// writing the new page's last word; the memory's size in pages.
const GROW: &str = r#"(module
  (memory 1)
  (func (export "grow") (param $n i32) (result i32)
    (loop $l
      (drop (memory.grow (i32.const 1)))
      (i32.store (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 4))
                 (local.get $n))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n)))
    (memory.size))
  (table $t 1 funcref)
  (func (export "grow_table") (param $n i32) (result i32)
    (loop $l
      (drop (table.grow $t (ref.null func) (i32.const 1)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n)))
    (table.size $t)))"#;

fn linked() -> irkit_core::Module {
    let m = irkit_wasm::translate_input(GROW.as_bytes(), "g").unwrap();
    let bytes = irkit_format::write(&m).unwrap();
    let input = Input::from_bytes("g.irm", &bytes).unwrap();
    let opts = LinkOptions {
        library: true,
        ..LinkOptions::default()
    };
    irkit_link::link(vec![input], &opts).unwrap().module
}

/// Calls `export` (`grow` or `grow_table`) of a fresh instance to grow `n` times by one;
/// checks the final size.
fn grow(m: &irkit_core::Module, export: &str, n: i32) {
    let mut it = Interpreter::new(m).unwrap();
    it.run(irkit_wasm::init_symbol("g").as_str(), &[]).unwrap();
    let size = it
        .run(
            format!("wasm:g:{export}").as_str(),
            &[Value::I32(n as u32 as u64)],
        )
        .unwrap();
    assert_eq!(size, Some(Value::I32(n as u32 as u64 + 1)), "{n} growths");
}

/// Whether `n` growths by `export` take at most 35x what `n / 10` take.
fn check_linear(export: &str, n: i32) {
    let m = linked();
    let small = irkit_testkit::growth::best_cpu_of(3, || grow(&m, export, n / 10));
    let big = irkit_testkit::growth::best_cpu_of(3, || grow(&m, export, n));
    let floor = std::time::Duration::from_millis(2);
    assert!(
        big <= small.max(floor) * 35,
        "{export}: {n} growths took {big:?}, {} took {small:?}: more than 35x",
        n / 10
    );
}

/// 100 growths (6.4 MB) against 1,000 (64 MB): about 10x the work, 100x when every growth
/// copied the memory.
#[test]
fn growing_page_by_page_is_linear_in_the_pages() {
    check_linear("grow", 1_000);
}

/// 10,000 growths of one entry against 100,000 (800 KB of entries): about 10x the work, 100x
/// when every growth copied the entries.
#[test]
fn growing_a_table_entry_by_entry_is_linear_in_the_entries() {
    check_linear("grow_table", 100_000);
}
