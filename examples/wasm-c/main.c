/* The program module: a matrix product of its own, and the library's kernels, imported. */
#include "wasm.h"

IMPORT("lib", "primes") int primes(int n);
IMPORT("lib", "collatz") long long collatz(int n);
IMPORT("lib", "hash") unsigned hash(int n);

#define N 160
static double a[N][N], b[N][N], c[N][N];

static double matmul(int reps) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)((i * 7 + j * 3) % 17) / 16.0;
            b[i][j] = (double)((i * 5 + j * 11) % 13) / 12.0;
        }
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                double s = 0.0;
                for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
                c[i][j] = s + r;
            }
    double t = 0.0;
    for (int i = 0; i < N; i++) t += c[i][(i * 31) % N];
    return t;
}

/* A checksum of every kernel's result; its low 8 bits are the process's exit code. */
EXPORT("run") int run(void) {
    unsigned r = (unsigned)primes(2000000);
    long long cz = collatz(300000);
    r = r * 31u + (unsigned)cz + (unsigned)(cz >> 32);
    r = r * 31u + hash(20000000);
    r = r * 31u + (unsigned)(long long)(matmul(1) * 1000.0);
    return (int)r;
}

/* Larger runs of each kernel alone, for timing against the native build (`native.c`). */
EXPORT("bench_primes") int bench_primes(void) {
    int r = 0;
    for (int k = 0; k < 20; k++) r += primes(4000000);
    return r;
}
EXPORT("bench_collatz") int bench_collatz(void) { return (int)collatz(2000000); }
EXPORT("bench_hash") int bench_hash(void) { return (int)hash(200000000); }
EXPORT("bench_matmul") int bench_matmul(void) { return (int)(matmul(300) * 1000.0); }
