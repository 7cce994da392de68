//! The call graph (`irkit_link::CallGraph`, spec/linking.md "Optimization passes"): each
//! call site with what it may call, on one module that has every kind of callee.

use irkit_core::{Inst, Module};
use irkit_link::{CallGraph, Callees, Visible};

const TEXT: &str = r#"
@inc: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = iadd %x, i32 1
  ret %r
}

@dbl: fn(i32) -> i32 = func {
^entry(%x: i32):
  %r: i32 = iadd %x, %x
  ret %r
}

@unused: fn(i32) -> i32 = func {
^entry(%x: i32):
  ret %x
}

@wide: fn(i64) -> i64 = func {
^entry(%x: i64):
  ret %x
}

@table: [2 x ptr] = global_const [2 x ptr] [@inc, @wide]

@apply: fn(ptr, i32) -> i32 = func {
^entry(%f: ptr, %x: i32):
  %r: i32 = call_indirect fn(i32) -> i32, %f(%x)
  ret %r
}

#[export("main")]
@main: fn() -> i32 = func {
^entry:
  %a: i32 = call @apply(@dbl, i32 1)
  %c: i1 = icmp slt %a, i32 3
  %p: ptr = select %c, @inc, @dbl
  %b: i32 = call_indirect fn(i32) -> i32, %p(%a)
  %q: ptr = elem ptr, @table, i64 0
  %g: ptr = load %q
  %d: i32 = call_indirect fn(i32) -> i32, %g(%b)
  %h: ptr = load @table
  %e: i1 = icmp eq %h, @inc
  br %e, ^hit, ^miss
^hit:
  ret %d
^miss:
  %m: i32 = call_indirect fn(i32) -> i32, %h(%d)
  ret %m
}
"#;

fn def(m: &Module, name: &str) -> Inst {
    m.find_named(name)
        .unwrap_or_else(|| panic!("@{name} is defined"))
}

#[test]
fn every_call_site_has_what_it_may_call() {
    let m = irkit_text::parse(TEXT, "callgraph.ir").expect("parses");
    irkit_core::verify::verify(&m).expect("verifies");
    let visible = Visible {
        library: false,
        names: &[],
        entry: "main",
    };
    let graph = CallGraph::of(&m, &visible);
    let (inc, dbl, apply, main) = (
        def(&m, "inc"),
        def(&m, "dbl"),
        def(&m, "apply"),
        def(&m, "main"),
    );
    let sites: Vec<(Inst, Callees)> = graph
        .sites
        .iter()
        .map(|s| (s.caller, s.callees.clone()))
        .collect();
    let indirect = |targets: Vec<Inst>, only| Callees::Indirect { targets, only };
    assert_eq!(
        sites,
        vec![
            // A function argument: every address-taken function of the signature (`unused`'s
            // address is never taken; `wide` has another type).
            (apply, indirect(vec![inc, dbl], false)),
            (main, Callees::Direct(apply)),
            // A select of two functions: exactly those.
            (main, indirect(vec![inc, dbl], true)),
            // Entry 0 of a constant table: `inc` alone.
            (main, indirect(vec![inc], true)),
            // Entry 0 again, on the false edge of `%h == @inc`: nothing is left.
            (main, indirect(vec![], true)),
        ]
    );
}
