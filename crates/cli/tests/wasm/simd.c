/* Loops clang vectorizes under `-msimd128`: `clang-19 --target=wasm32 -O2 -msimd128
   -nostdlib -Wl,--no-entry -o simd.wasm simd.c` gives `v128.load`/`store`, `i32x4.add`,
   `i32x4.mul`, `f32x4.add`/`mul`, splats, shifts, comparisons and `bitselect` (the `max`),
   lane extracts and the shuffles of a reduction, and the widening `extend` of a byte sum. Natively (`cc -O2 simd.c`), `main` returns
   what the wasm `run` returns. */

#define N 301

static int xs[N], ys[N], zs[N];
static float fa[N], fb[N], fc[N];
static unsigned char bytes[N];

#ifdef __wasm__
__attribute__((export_name("run")))
#endif
int run(void) {
    volatile int seed = 7;
    for (int i = 0; i < N; i++) {
        xs[i] = i * seed - 100;
        ys[i] = (i ^ 0x55) - seed;
        fa[i] = (float)i * 0.25f;
        fb[i] = (float)(N - i) * 0.5f;
        bytes[i] = (unsigned char)(i * 3);
    }
    for (int i = 0; i < N; i++) zs[i] = xs[i] * 3 + ys[i];            /* i32x4 mul, add */
    for (int i = 0; i < N; i++) fc[i] = fa[i] * fb[i] + 1.5f;         /* f32x4 mul, add */
    for (int i = 0; i < N; i++) zs[i] = zs[i] > ys[i] ? zs[i] : ys[i]; /* max: a compare */
    for (int i = 0; i < N; i++) bytes[i] = (unsigned char)(bytes[i] + bytes[N - 1 - i]);
    for (int i = 0; i < N; i++) ys[i] = (ys[i] << 3) ^ (xs[i] >> 2);  /* shifts */
    int sum = 0;
    for (int i = 0; i < N; i++) sum += zs[i] ^ ys[i];                 /* a reduction */
    float fsum = 0;
    for (int i = 0; i < N; i++) fsum += fc[i];
    unsigned bsum = 0;
    for (int i = 0; i < N; i++) bsum += bytes[i];                    /* widening: extend */
    for (int i = 0; i < N; i++) bsum = bsum * 31 + bytes[i];         /* a recurrence: scalar */
    return (int)(((unsigned)sum + (unsigned)fsum + bsum) & 0x7f);
}

#ifndef __wasm__
int main(void) { return run(); }
#endif
