#!/bin/sh
# The linker benchmark, in one run: builds ir-link and irkit-bench in release mode, generates
# the 50-module, ~1M-instruction program at 1 % and at 100 % reachability, and links each with
# ir-link and with llvm-link --only-needed (text .ll and bitcode .bc), reporting wall times,
# peak RSS and their ratios; then measures native code generation at 100 % reachability
# (`irkit-bench codegen`: ir-link --emit obj on one thread and every core against llc -O0 and
# -O2, and a one-edit --emit exe rebuild with a warm code cache against a cold build).
# Extra arguments go to both subcommands (e.g. --runs 5).
# Needs llvm-link, llvm-as and llc (Debian: apt-get install -y llvm)
# and a fast linker, mold (apt-get install -y mold): `--emit exe` links through
# `cc -fuse-ld=mold` when `mold` is on the PATH, else `cc -fuse-ld=lld` when `ld.lld` is, else
# GNU ld (the link of the bench's object alone: about 28, 51 and 80 ms, in a warm one-edit build
# of about 0.31 s), so the figures are only comparable with the same linker.
set -eu
cd "$(dirname "$0")/../.."
if ! command -v llvm-link >/dev/null 2>&1; then
    echo "llvm-link not found; installing llvm" >&2
    apt-get install -y llvm >&2
fi
if ! command -v mold >/dev/null 2>&1; then
    echo "mold not found; installing mold" >&2
    apt-get install -y mold >&2
fi
cargo build --release -p irkit-cli --bin ir-link
cargo build --release -p irkit-bench
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
"$target_dir/release/irkit-bench" bench --ir-link "$target_dir/release/ir-link" \
    --dir "$target_dir/irkit-bench" "$@"
exec "$target_dir/release/irkit-bench" codegen --ir-link "$target_dir/release/ir-link" \
    --dir "$target_dir/irkit-bench" "$@"
