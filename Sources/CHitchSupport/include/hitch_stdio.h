#ifndef HITCH_STDIO_H
#define HITCH_STDIO_H
#include <stdio.h>

/// Flushes standard output and says whether any write to it failed, now or earlier (a full disk,
/// a closed pipe). C's `stdout` is a mutable global Swift 6 will not touch; this reads it here.
static inline int hitch_flush_standard_output_failed(void) {
    int flushed = fflush(stdout);
    return flushed != 0 || ferror(stdout);
}

#endif
