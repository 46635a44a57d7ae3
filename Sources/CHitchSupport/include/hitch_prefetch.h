#ifndef HITCH_PREFETCH_H
#define HITCH_PREFETCH_H

/// Asks for the cache line holding `address` (for reading, kept in all cache levels) without
/// waiting for it; never faults, so an address past a buffer's end is fine. Swift has no prefetch
/// API; a static inline C function is inlined into Swift callers like any other.
static inline void hitch_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
