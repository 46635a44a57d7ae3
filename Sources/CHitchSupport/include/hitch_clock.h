#ifndef HITCH_CLOCK_H
#define HITCH_CLOCK_H
#include <stdint.h>
#include <time.h>

/// Nanoseconds on CLOCK_MONOTONIC; the portable fallback and the calibration reference.
static inline uint64_t hitch_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// 1 when the trace clock is the invariant TSC, 0 when it is CLOCK_MONOTONIC in nanoseconds.
/// Decided once when the library loads (a constructor in clock.c), never changed afterwards.
extern int hitch_clock_uses_tsc;

/// The recorder's clock in ticks: rdtsc where the CPU reports an invariant TSC, else CLOCK_MONOTONIC ns.
static inline uint64_t hitch_now(void) {
#if defined(__x86_64__)
    if (__builtin_expect(hitch_clock_uses_tsc, 1)) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
#endif
    return hitch_monotonic_ns();
}

static inline int hitch_clock_is_tsc(void) { return hitch_clock_uses_tsc; }

/// One (ticks, CLOCK_MONOTONIC ns) pair read as close together as a few tries allow: maps
/// CLOCK_MONOTONIC times (perf records) onto the trace clock.
void hitch_clock_pair(uint64_t *ticks, uint64_t *ns);

/// True if the CPU reports an invariant TSC (CPUID leaf 0x80000007, EDX bit 8).
int hitch_cpu_has_invariant_tsc(void);

/// Measures ticks per second of `hitch_now` against CLOCK_MONOTONIC over about `window_ns`
/// (the caller pays that wall time once). Returns 1e9 when the clock is CLOCK_MONOTONIC.
double hitch_clock_calibrate(uint64_t window_ns);

#endif
