/* Zeroing and copying loops that clang turns into `memory.fill` and `memory.copy` under
   `-mbulk-memory` (the default from clang 20 on): `clang-19 --target=wasm32 -O2
   -mbulk-memory -nostdlib -Wl,--no-entry -o bulk.wasm bulk.c`. Natively (`cc -O2 bulk.c`),
   `main` returns what the wasm `run` returns. */

#define N 300

static unsigned char a[N], b[N];
static int words[N];

struct big { int xs[40]; double d; };

static struct big copy_of(const struct big *s) { return *s; }

#ifdef __wasm__
__attribute__((export_name("run")))
#endif
int run(void) {
    volatile int seed = 11;
    for (int i = 0; i < N; i++) a[i] = (unsigned char)(i * seed);
    for (int i = 0; i < N; i++) b[i] = 0;               /* memory.fill */
    for (int i = 0; i < N / 2; i++) b[i + 7] = a[i];     /* memory.copy */
    for (int i = 0; i < N; i++) words[i] = 0;           /* memory.fill */
    for (int i = 0; i < N; i += seed) words[i] = i;
    __builtin_memmove(a + 3, a, 100);                   /* overlapping: memory.copy */
    struct big s = { { 0 }, 2.5 };
    for (int i = 0; i < 40; i++) s.xs[i] = i * i;
    struct big t = copy_of(&s);                         /* a struct copy */
    unsigned acc = 0;
    for (int i = 0; i < N; i++) acc = acc * 33 + a[i] + b[i] + (unsigned)words[i];
    for (int i = 0; i < 40; i++) acc += (unsigned)t.xs[i];
    return (int)((acc + (unsigned)t.d) & 0x7f);
}

#ifndef __wasm__
int main(void) { return run(); }
#endif
