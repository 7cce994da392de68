//! Specialization figures: `cargo run --release -p irkit-link --example specialize_bench
//! [-- CALL_SITES DISTINCT RUNS]` (defaults 10000, 100, 5).
//!
//! One module: the `Ord` interface, a generic `max<T: Ord>` whose body calls `less` through
//! `lookup_witness`, DISTINCT types `[k x i32]` each with its `less` and witness table, one
//! `specialize @max, [k x i32], @ord_k` per type, and CALL_SITES calls spread over them (100
//! per caller function, every caller called from `main`). The module is linked RUNS times; the
//! figures are the specialization phase's time (`Stats::specialize`, best and median), the
//! whole link's, and the count of instantiations against the count of distinct `specialize`
//! values and of `max<…>` clones in the output.

use std::fmt::Write as _;
use std::time::Instant;

use irkit_core::Opcode;
use irkit_link::{Input, LinkOptions, link};

fn source(sites: usize, distinct: usize) -> String {
    let mut s = String::new();
    s.push_str("@Ord = interface @less\n@less: fn(@Ord, @Ord) -> i1 = interface_req\n\n");
    s.push_str(
        "@max = generic %T, %w {\n  %T = type_param 0 @max\n  %w: @Ord = witness_param 1 @max, %T\n  \
         %fn: fn(%T, %T) -> %T = func {\n  ^entry(%a: %T, %b: %T):\n    \
         %lt_fn: fn(%T, %T) -> i1 = lookup_witness %w, @less\n    \
         %lt: i1 = call %lt_fn(%a, %b)\n    %r: %T = select %lt, %b, %a\n    ret %r\n  }\n}\n\n",
    );
    for k in 0..distinct {
        let t = format!("[{} x i32]", k + 1);
        let _ = writeln!(
            s,
            "@lt{k}: fn({t}, {t}) -> i1 = func {{\n^entry(%a: {t}, %b: {t}):\n  \
             %x: i32 = extract 0 %a\n  %y: i32 = extract 0 %b\n  %r: i1 = icmp slt %x, %y\n  ret %r\n}}\n\
             @ord{k}: @Ord = witness_table {t} {{\n  witness_entry @less, @lt{k}\n}}\n\
             @max{k}: fn({t}, {t}) -> {t} = specialize @max, {t}, @ord{k}\n"
        );
    }
    let per = 100;
    let callers = sites.div_ceil(per);
    for c in 0..callers {
        let _ = writeln!(s, "@caller{c}: fn() -> i32 = func {{\n^entry:");
        for i in 0..per.min(sites - c * per) {
            let k = (c * per + i) * 7 % distinct;
            let t = format!("[{} x i32]", k + 1);
            let _ = writeln!(s, "  %v{i}: {t} = call @max{k}({t} zero, {t} zero)");
        }
        let _ = writeln!(s, "  ret i32 0\n}}");
    }
    s.push_str("#[export(\"main\")]\n@main: fn() -> i32 = func {\n^entry:\n");
    for c in 0..callers {
        let _ = writeln!(s, "  %r{c}: i32 = call @caller{c}()");
    }
    s.push_str("  ret i32 0\n}\n");
    s
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sites = args.first().copied().unwrap_or(10_000);
    let distinct = args.get(1).copied().unwrap_or(100).max(1);
    let runs = args.get(2).copied().unwrap_or(5).max(1);
    let text = source(sites, distinct);
    let mut spec = Vec::new();
    let mut total = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let input = text_input("bench.ir", &text).expect("the workload parses");
        let t = Instant::now();
        let linked = link(vec![input], &LinkOptions::default()).expect("the workload links");
        total.push(t.elapsed());
        spec.push(linked.stats.specialize);
        last = Some(linked);
    }
    let linked = last.expect("at least one run");
    spec.sort();
    total.sort();
    let m = &linked.module;
    let clones = m
        .top_level()
        .iter()
        .filter(|&&d| {
            m.opcode(d) == Opcode::FUNC && m.name(d).is_some_and(|n| n.starts_with("max<"))
        })
        .count();
    let generics_left = m
        .walk()
        .iter()
        .chain(m.pool())
        .filter(|&&i| (0x0300..=0x0308).contains(&m.opcode(i).0))
        .count();
    println!("call sites:              {sites}");
    println!("distinct instantiations: {distinct}");
    println!("instantiations (stats):  {}", linked.stats.instantiations);
    println!("max<…> clones in output: {clones}");
    println!("generics opcodes left:   {generics_left}");
    println!(
        "specialize phase:        best {:.3} ms, median {:.3} ms ({runs} runs)",
        spec[0].as_secs_f64() * 1e3,
        spec[runs / 2].as_secs_f64() * 1e3
    );
    println!(
        "whole link (in memory):  best {:.3} ms, median {:.3} ms",
        total[0].as_secs_f64() * 1e3,
        total[runs / 2].as_secs_f64() * 1e3
    );
}

/// A `.ir` text input, parsed and encoded in memory as `ir-link` does.
fn text_input(name: &str, text: &str) -> Result<Input, String> {
    let module = irkit_text::parse(text, name).map_err(|e| e.to_string())?;
    Input::from_module(name, &module).map_err(|e| e.to_string())
}
