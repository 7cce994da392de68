/* Calls through function pointers, compiled by clang 19 with its default flags (Debian's
   clang-19: `clang-19 --target=wasm32 -O2 -nostdlib -Wl,--no-entry -o fnptr.wasm fnptr.c`).
   Its default CPU enables reference types, so every `call_indirect` carries its table index
   as a 5-byte LEB. Natively (`cc -O2 fnptr.c`), `main` returns what the wasm `run` returns. */

typedef int (*binop)(int, int);

static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
static int sub(int a, int b) { return a - b; }
static int xor_(int a, int b) { return a ^ b; }

/* A table of pointers, read at run time. */
static binop ops[4] = { add, mul, sub, xor_ };

/* A pointer passed as an argument. */
static int fold(binop f, const int *xs, int n, int acc) {
    for (int i = 0; i < n; i++) acc = f(acc, xs[i]);
    return acc;
}

/* A pointer in a struct, chosen by data. */
struct shape {
    int (*area)(const struct shape *);
    int w, h;
};
static int rect(const struct shape *s) { return s->w * s->h; }
static int tri(const struct shape *s) { return s->w * s->h / 2; }

/* A callback sort. */
static void sort(int *xs, int n, int (*less)(int, int)) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && less(xs[j], xs[j - 1]); j--) {
            int t = xs[j];
            xs[j] = xs[j - 1];
            xs[j - 1] = t;
        }
}
static int lt(int a, int b) { return a < b; }
static int gt(int a, int b) { return a > b; }

#ifdef __wasm__
__attribute__((export_name("run")))
#endif
int run(void) {
    volatile int seed = 7;
    int xs[8];
    for (int i = 0; i < 8; i++) xs[i] = (seed * (i + 3) * 37) % 101;
    int acc = 0;
    for (int k = 0; k < 4; k++) acc += fold(ops[(seed + k) % 4], xs, 8, k + 1);
    struct shape shapes[3] = { { rect, 3, 4 }, { tri, 5, 6 }, { rect, seed, 2 } };
    for (int i = 0; i < 3; i++) acc += shapes[i].area(&shapes[i]);
    sort(xs, 8, seed > 3 ? lt : gt);
    for (int i = 0; i < 8; i++) acc = acc * 31 + xs[i];
    return acc & 0x7f;
}

#ifndef __wasm__
int main(void) { return run(); }
#endif
