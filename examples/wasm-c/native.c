/* The same program compiled natively (cc -O2 lib.c main.c native.c), to compare run times
   and the result with the wasm build. */
#include <stdio.h>

int run(void);

int main(void) {
    int r = run();
    printf("%d\n", r);
    return r & 0xff;
}
