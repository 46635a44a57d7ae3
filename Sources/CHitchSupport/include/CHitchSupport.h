#ifndef CHITCH_SUPPORT_H
#define CHITCH_SUPPORT_H
// Umbrella header of the C core. Each concern has its own header:
//   hitch_clock.h    — the cheap monotonic timestamp (rdtsc where invariant, clock_gettime otherwise)
#include "hitch_clock.h"
#endif
