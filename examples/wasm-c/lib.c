/* The library module: compute kernels over its own linear memory. */
#include "wasm.h"

#define SIEVE_MAX (1 << 22)
static unsigned char composite[SIEVE_MAX];

/* The number of primes below n (at most SIEVE_MAX), by the sieve of Eratosthenes. */
EXPORT("primes") int primes(int n) {
    if (n > SIEVE_MAX) n = SIEVE_MAX;
    for (int i = 0; i < n; i++) composite[i] = 0;
    int count = 0;
    for (int i = 2; i < n; i++) {
        if (composite[i]) continue;
        count++;
        for (long long j = (long long)i * i; j < n; j += i) composite[j] = 1;
    }
    return count;
}

/* The start below n of the longest Collatz chain, and its length in the upper bits. */
EXPORT("collatz") long long collatz(int n) {
    int best = 1, best_len = 1;
    for (int s = 1; s < n; s++) {
        unsigned long long x = (unsigned long long)s;
        int len = 1;
        while (x != 1) {
            x = (x & 1) ? 3 * x + 1 : x >> 1;
            len++;
        }
        if (len > best_len) {
            best_len = len;
            best = s;
        }
    }
    return ((long long)best_len << 32) | (unsigned)best;
}

/* FNV-1a over the bytes i * 2654435761 >> 24 for i below n, rotated by each step. */
EXPORT("hash") unsigned hash(int n) {
    unsigned h = 2166136261u;
    for (int i = 0; i < n; i++) {
        h ^= ((unsigned)i * 2654435761u) >> 24;
        h *= 16777619u;
        h = (h << 5) | (h >> 27);
    }
    return h;
}
