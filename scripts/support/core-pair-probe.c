// Two kinds of pure register work, for what two processes at once get from the machine's two CPUs
// (scripts/fleet-throughput.sh). "independent": six independent integer operations per iteration,
// which a core issues side by side (high instructions per cycle: two such processes on two
// hardware threads of one physical core share its execution units). "chain": one dependent
// multiply-add per iteration (one result per multiply latency: two hardware threads of one core
// interleave without slowing each other). Neither touches memory.
//   core-pair-probe independent|chain ITERATIONS
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "independent") != 0 && strcmp(argv[1], "chain") != 0)) {
        fprintf(stderr, "usage: core-pair-probe independent|chain ITERATIONS\n");
        return 2;
    }
    long n = atol(argv[2]);
    uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
    if (strcmp(argv[1], "independent") == 0) {
        for (long i = 0; i < n; i++) {
            a += (uint64_t)i; b ^= (uint64_t)i; c += a; d ^= b; e += c; f ^= d;
            __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
        }
    } else {
        for (long i = 0; i < n; i++) {
            a = a * 2862933555777941757ULL + 3037000493ULL;
            __asm__ volatile("" : "+r"(a));
        }
    }
    return 0;
}
