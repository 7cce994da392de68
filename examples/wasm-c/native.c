/* The same program compiled natively (cc -O2 lib.c main.c native.c), to compare run times
   and results with the wasm build: `native` runs `run`, `native primes` (or collatz, hash,
   matmul) runs that kernel's bench export. */
#include <stdio.h>
#include <string.h>

int run(void);
int bench_primes(void);
int bench_collatz(void);
int bench_hash(void);
int bench_matmul(void);

int main(int argc, char **argv) {
    int r;
    if (argc < 2) r = run();
    else if (!strcmp(argv[1], "primes")) r = bench_primes();
    else if (!strcmp(argv[1], "collatz")) r = bench_collatz();
    else if (!strcmp(argv[1], "hash")) r = bench_hash();
    else if (!strcmp(argv[1], "matmul")) r = bench_matmul();
    else return 2;
    printf("%d\n", r);
    return r & 0xff;
}
