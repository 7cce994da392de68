#!/bin/sh
# The native back end's figures in one run: generates the linker workload at 100 % reach
# (default 20 modules x 100 functions x 100 instructions; override with the irkit-bench gen
# options, e.g. --modules 50 --functions 200), then runs the compile-throughput and fib(30)
# benchmark (crates/cranelift/benches/compile.rs) in release mode.
set -eu
cd "$(dirname "$0")/../.."
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
work="$target_dir/irkit-bench/cranelift-workload"
rm -rf "$work"
if [ "$#" -eq 0 ]; then
    set -- --modules 20 --functions 100 --insts 100
fi
cargo run -q --release -p irkit-bench -- gen --reach 1 --out "$work" "$@"
IRKIT_BENCH_WORKLOAD="$work" cargo bench -q -p irkit-cranelift --bench compile
