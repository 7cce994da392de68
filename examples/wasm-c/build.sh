#!/bin/sh
# Rebuilds lib.wasm and main.wasm from the C sources with today's clang and its default
# code generation flags for the wasm32 target (Debian 12: apt-get install clang-19 lld-19; the
# default CPU `generic` enables sign extension, mutable globals, multi-value and reference
# types, so no -mcpu is given), -O2, and wasm-ld. CC=clang picks another clang. The .wasm
# files are committed, so the tests do not need a C-to-wasm compiler. -fno-builtin keeps
# clang from turning loops into calls of memset or memcpy, which nothing here provides (a
# freestanding program's choice, not a code generation flag).
set -eu
cd "$(dirname "$0")"
CFLAGS="--target=wasm32 -O2 -fno-builtin -nostdlib -Wl,--no-entry -Wl,--allow-undefined"
CC=${CC:-clang-19}
$CC $CFLAGS -o lib.wasm lib.c
$CC $CFLAGS -o main.wasm main.c
$CC $CFLAGS -o prog.wasm prog.c
