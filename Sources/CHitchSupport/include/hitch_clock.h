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

#endif
