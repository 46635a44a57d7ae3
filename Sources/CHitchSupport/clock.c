#include "hitch_clock.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif

int hitch_clock_uses_tsc = 0;

int hitch_cpu_has_invariant_tsc(void) {
#if defined(__x86_64__)
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return 0;
    if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) return 0;
    return (edx >> 8) & 1u;
#else
    return 0;
#endif
}

// Decide the clock source before any Swift code can read it, so `hitch_now` never changes units.
__attribute__((constructor)) static void hitch_clock_choose_source(void) {
    hitch_clock_uses_tsc = hitch_cpu_has_invariant_tsc();
}

// One (ticks, ns) pair with the ticks read as close as possible to the clock_gettime call:
// the tightest of a few tries bounds the error from preemption between the two reads.
void hitch_clock_pair(uint64_t *ticks, uint64_t *ns) {
    uint64_t best_width = UINT64_MAX;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint64_t before = hitch_now();
        uint64_t mono = hitch_monotonic_ns();
        uint64_t after = hitch_now();
        if (after - before < best_width) {
            best_width = after - before;
            *ticks = before + (after - before) / 2;
            *ns = mono;
        }
    }
}

double hitch_clock_calibrate(uint64_t window_ns) {
    if (!hitch_clock_uses_tsc) return 1e9;
    uint64_t t0, n0, t1, n1;
    hitch_clock_pair(&t0, &n0);
    struct timespec pause = { (time_t)(window_ns / 1000000000ull), (long)(window_ns % 1000000000ull) };
    while (nanosleep(&pause, &pause) != 0) {}
    hitch_clock_pair(&t1, &n1);
    if (n1 <= n0 || t1 <= t0) return 1e9;
    return (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}
