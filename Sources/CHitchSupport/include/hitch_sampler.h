#ifndef HITCH_SAMPLER_H
#define HITCH_SAMPLER_H
// The signal-driven sampling profiler and the explicit backtrace capture (sampler.c).
//
// Each sampled thread gets its own CLOCK_MONOTONIC timer (timer_create with SIGEV_THREAD_ID) that
// sends SIGPROF to that thread. The C handler unwinds the interrupted stack with libunwind into the
// thread's preallocated single-producer/single-consumer ring; one drain thread pops samples with
// hitch_sampler_pop. Addresses are PCs inside their functions: the interrupted PC for frame 0, a
// return address minus one for every caller, so each resolves to the function containing it.
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The deepest stack the sampler and hitch_backtrace_capture keep (deeper frames are cut off).
#define HITCH_MAX_FRAMES 128

/// Which threads a sampling session covers (bit flags).
enum {
    HITCH_SAMPLE_MAIN_THREAD = 1,        ///< the process's initial thread (tid == pid)
    HITCH_SAMPLE_REGISTERED_THREADS = 2, ///< threads that called hitch_sampler_register_current_thread
    HITCH_SAMPLE_ALL_THREADS = 4,        ///< every thread in /proc/self/task (rescanned by hitch_sampler_rescan_threads)
};

typedef struct {
    uint32_t rate_hz;            ///< samples per second per thread (1 ... 10000); 0 means 1000
    uint32_t scope;              ///< HITCH_SAMPLE_* flags; 0 means HITCH_SAMPLE_MAIN_THREAD
    uint32_t ring_words_log2;    ///< per-thread ring size as log2 of 8-byte words; 0 means 16 (512 KiB)
} hitch_sampler_config;

typedef struct {
    uint64_t samples_taken;      ///< samples written into the rings
    uint64_t samples_dropped;    ///< samples lost because a ring was full (the drain fell behind)
    uint64_t timer_overruns;     ///< timer expirations merged by the kernel (thread not scheduled in time)
    uint64_t unwind_failures;    ///< samples whose unwind stopped at frame 0 with an error
    uint64_t samples_contended;  ///< signals skipped because another thread's handler was unwinding
    uint32_t threads_sampled;    ///< threads with an armed timer right now
} hitch_sampler_stats;

typedef struct {
    pid_t tid;                   ///< kernel thread id of the sampled thread
    uint32_t depth;              ///< number of addresses written to the frames buffer
    uint64_t timestamp_ticks;    ///< hitch_now() (the trace clock) when the signal was handled
} hitch_sample_info;

/// Starts a session. Returns 0, EBUSY if one is running, EINVAL for a bad configuration, or the
/// errno of the failing sigaction/timer_create.
int hitch_sampler_start(const hitch_sampler_config *config);

/// Stops the session: disarms every timer and waits for handlers in flight. Samples already in the
/// rings stay there until popped. Returns 0 or EALREADY.
int hitch_sampler_stop(void);

/// 1 while a session runs.
int hitch_sampler_is_running(void);

/// Makes the calling thread samplable under HITCH_SAMPLE_REGISTERED_THREADS (now, if a session
/// runs, and in later sessions) until it exits or calls hitch_sampler_unregister_current_thread.
/// Also warms libunwind's per-thread cache on this thread. Returns 0, ENOSPC (too many threads) or
/// the errno of timer_create.
int hitch_sampler_register_current_thread(void);
void hitch_sampler_unregister_current_thread(void);

/// In HITCH_SAMPLE_ALL_THREADS sessions, arms timers for threads created since the last scan.
/// Returns the number of threads newly armed.
int hitch_sampler_rescan_threads(void);

/// Pops the oldest sample of some thread (round robin over threads) into info/frames. Returns 1 if
/// a sample was popped, 0 if every ring is empty. One consumer at a time (internally serialized).
int hitch_sampler_pop(hitch_sample_info *info, uint64_t *frames, uint32_t capacity);

void hitch_sampler_get_stats(hitch_sampler_stats *stats);

/// The calling thread's stack, innermost first, excluding hitch_backtrace_capture itself and
/// `skip` further frames; addresses are return addresses minus one. Returns the count (0 ... capacity).
/// Not for signal handlers; costs about a microsecond with libunwind's per-thread cache warm.
int hitch_backtrace_capture(uint64_t *frames, int capacity, int skip);

#ifdef __cplusplus
}
#endif
#endif
