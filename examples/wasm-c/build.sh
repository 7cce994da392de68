#!/bin/sh
# Rebuilds lib.wasm and main.wasm from the C sources (clang with the wasm32 target and
# wasm-ld; Debian: apt-get install clang lld). The .wasm files are committed, so the tests do
# not need a C-to-wasm compiler. -fno-builtin keeps clang from turning loops into calls of
# memset or memcpy, which nothing here provides.
set -eu
cd "$(dirname "$0")"
CFLAGS="--target=wasm32 -O2 -fno-builtin -nostdlib -Wl,--no-entry -Wl,--allow-undefined"
clang $CFLAGS -o lib.wasm lib.c
clang $CFLAGS -o main.wasm main.c
