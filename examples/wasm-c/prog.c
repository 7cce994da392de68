/* A larger program than the kernels of lib.c: a bytecode interpreter (a dispatch loop over a
   switch), running a program that sorts an array with its own quicksort and fills an
   open-addressing hash table, then a checksum of both. A module of its own (prog.wasm), with
   no imports: `ir-wasm prog.wasm --main run` (or `--main bench_program`, the timed run)
   makes its entry point; natively, `cc -O2 -DNATIVE_MAIN prog.c` runs `run`, or
   `bench_program` given any argument. */
#include "wasm.h"

enum { PUSH, LOAD, STORE, ADD, SUB, MUL, LT, JZ, JMP, GET, SET, SORT, HASH, MIX, HALT };

#define CELLS 65536
static int cells[CELLS];
static unsigned table[1 << 16];

static void swap(int *a, int *b) { int t = *a; *a = *b; *b = t; }

/* Quicksort of cells[lo..hi], recursive on the smaller side, median of three. */
static void sort(int lo, int hi) {
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cells[mid] < cells[lo]) swap(&cells[mid], &cells[lo]);
        if (cells[hi] < cells[lo]) swap(&cells[hi], &cells[lo]);
        if (cells[hi] < cells[mid]) swap(&cells[hi], &cells[mid]);
        int pivot = cells[mid], i = lo, j = hi;
        while (i <= j) {
            while (cells[i] < pivot) i++;
            while (cells[j] > pivot) j--;
            if (i <= j) swap(&cells[i++], &cells[j--]);
        }
        if (j - lo < hi - i) { sort(lo, j); lo = i; }
        else { sort(i, hi); hi = j; }
    }
}

/* Inserts key into the table (linear probing); returns the number of probes. */
static int insert(unsigned key) {
    unsigned mask = (1u << 16) - 1, h = (key * 2654435761u) >> 16, probes = 1;
    while (table[h & mask] != 0 && table[h & mask] != key) { h++; probes++; }
    table[h & mask] = key;
    return (int)probes;
}

/* Runs bytecode `code` on a stack of 64 values with 8 variables; returns the top at HALT. */
static int interpret(const int *code) {
    int stack[64], vars[8] = {0}, sp = 0, pc = 0;
    for (;;) {
        int op = code[pc++];
        switch (op) {
        case PUSH: stack[sp++] = code[pc++]; break;
        case LOAD: stack[sp++] = vars[code[pc++]]; break;
        case STORE: vars[code[pc++]] = stack[--sp]; break;
        case ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
        case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
        case JZ: if (stack[--sp] == 0) pc = code[pc]; else pc++; break;
        case JMP: pc = code[pc]; break;
        case GET: stack[sp - 1] = cells[stack[sp - 1] & (CELLS - 1)]; break;
        case SET: sp -= 2; cells[stack[sp] & (CELLS - 1)] = stack[sp + 1]; break;
        case SORT: sp--; sort(0, stack[sp] - 1); break;
        case HASH: stack[sp - 1] = insert((unsigned)stack[sp - 1] | 1u); break;
        case MIX: stack[sp - 1] = (int)(((unsigned)stack[sp - 1] * 1103515245u + 12345u) >> 1); break;
        case HALT: return stack[sp - 1];
        default: return -1;
        }
    }
}

/* The program, emitted at run time: v0 = seed; for i < n: v0 = mix(v0), cells[i] = v0; sort
   the n cells; for i < n: v1 += hash(cells[i]) * (i - 7); the result is v1 + 2n. */
static int code[128];

static int emit_program(int seed, int n) {
    int k = 0;
#define E(x) (code[k++] = (x))
    E(PUSH); E(seed); E(STORE); E(0);
    E(PUSH); E(n); E(STORE); E(3);
    E(PUSH); E(0); E(STORE); E(2);
    int loop1 = k;
    E(LOAD); E(2); E(LOAD); E(3); E(LT); E(JZ); int exit1 = k; E(0);
    E(LOAD); E(0); E(MIX); E(STORE); E(0);
    E(LOAD); E(2); E(LOAD); E(0); E(SET);
    E(LOAD); E(2); E(PUSH); E(1); E(ADD); E(STORE); E(2);
    E(JMP); E(loop1);
    code[exit1] = k;
    E(LOAD); E(3); E(SORT);
    E(PUSH); E(0); E(STORE); E(2);
    int loop2 = k;
    E(LOAD); E(2); E(LOAD); E(3); E(LT); E(JZ); int exit2 = k; E(0);
    E(LOAD); E(2); E(GET); E(HASH); E(LOAD); E(2); E(PUSH); E(7); E(SUB); E(MUL);
    E(LOAD); E(1); E(ADD); E(STORE); E(1);
    E(LOAD); E(2); E(PUSH); E(1); E(ADD); E(STORE); E(2);
    E(JMP); E(loop2);
    code[exit2] = k;
    E(LOAD); E(1); E(LOAD); E(3); E(PUSH); E(2); E(MUL); E(ADD); E(HALT);
#undef E
    return k;
}

/* One run: `n` cells from `seed`. */
EXPORT("program") int run_program(int seed, int n) {
    for (unsigned i = 0; i < (1u << 16); i++) table[i] = 0;
    emit_program(seed, n);
    return interpret(code);
}

/* A short run, for tests: its low 8 bits are the process's exit code. */
EXPORT("run") int run(void) { return run_program(7, 5000); }

/* The benchmark: 80 runs over 50,000 cells. */
EXPORT("bench_program") int bench_program(void) {
    int r = 0;
    for (int s = 0; s < 80; s++) r = r * 31 + run_program(s + 1, 50000);
    return r;
}

#ifdef NATIVE_MAIN
#include <stdio.h>
int main(int argc, char **argv) {
    (void)argv;
    int r = argc > 1 ? bench_program() : run();
    printf("%d\n", r);
    return r & 0xff;
}
#endif
