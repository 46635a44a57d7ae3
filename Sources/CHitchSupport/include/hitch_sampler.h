#ifndef HITCH_SAMPLER_H
#define HITCH_SAMPLER_H
// The sampling profiler and the explicit backtrace capture (sampler.c, sample_perf.c).
//
// Two sample sources, one per session (HITCH_SAMPLER_SOURCE_*):
// - perf events (Linux, where perf_event_open is permitted): a task-clock event per sampled thread;
//   the kernel copies the thread's user registers and up to stack_copy_bytes of its stack into a
//   ring mapped per thread, every 1/rate of the thread's CPU time. No signal reaches the thread.
// - the timer signal: a CLOCK_MONOTONIC timer per thread (timer_create with SIGEV_THREAD_ID) sends
//   SIGPROF to that thread; the C handler only copies the same registers and stack bytes into the
//   thread's preallocated single-producer/single-consumer ring.
// One drain thread pops samples with hitch_sampler_pop, which unwinds the snapshots of either
// source there (libunwind's remote API, sample_unwind.c), never in a handler. Off Linux no source
// exists: hitch_sampler_start returns ENOSYS. Addresses are
// PCs inside their functions: the interrupted PC for frame 0, a return address minus one for every
// caller, so each resolves to the function containing it.
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The deepest stack the sampler and hitch_backtrace_capture keep (deeper frames are cut off).
#define HITCH_MAX_FRAMES 128

/// Stack bytes copied per sample when the configuration says 0 (chosen from `hitch record feed`'s
/// stacks; docs/RELIABILITY.md says how).
#define HITCH_DEFAULT_STACK_COPY_BYTES 32768

/// The largest stack copy the perf source takes (a perf record, header included, fits in 64 KiB);
/// a session asking for more samples with the timer signal.
#define HITCH_PERF_MAX_STACK_COPY_BYTES 65528

/// Which threads a sampling session covers (bit flags).
enum {
    HITCH_SAMPLE_MAIN_THREAD = 1,        ///< the process's initial thread (tid == pid)
    HITCH_SAMPLE_REGISTERED_THREADS = 2, ///< threads that called hitch_sampler_register_current_thread
    HITCH_SAMPLE_ALL_THREADS = 4,        ///< every thread in /proc/self/task (rescanned by hitch_sampler_rescan_threads)
};

/// Where samples come from.
enum {
    HITCH_SAMPLER_SOURCE_AUTOMATIC = 0, ///< perf events where permitted, else the timer signal
    HITCH_SAMPLER_SOURCE_SIGNAL = 1,    ///< the per-thread timer and SIGPROF handler
    HITCH_SAMPLER_SOURCE_PERF = 2,      ///< perf_event_open (a session fails if it is refused)
};

typedef struct {
    uint32_t rate_hz;            ///< samples per second per thread (1 ... 10000); 0 means 1000
    uint32_t scope;              ///< HITCH_SAMPLE_* flags; 0 means HITCH_SAMPLE_MAIN_THREAD
    uint32_t ring_words_log2;    ///< per-thread ring size as log2 of 8-byte words; 0 means 18 (2 MiB)
    uint32_t stack_copy_bytes;   ///< stack bytes copied per sample, 256 ... 1 MiB (at most a quarter of the
                                 ///< ring); 0 means HITCH_DEFAULT_STACK_COPY_BYTES
    uint32_t source;             ///< HITCH_SAMPLER_SOURCE_*
    uint64_t ticks_per_second;   ///< hitch_now()'s rate (converts perf records' times); 0: measured at start
} hitch_sampler_config;

typedef struct {
    uint64_t samples_taken;      ///< snapshots written into the rings (perf: records read from them)
    uint64_t samples_dropped;    ///< snapshots lost because a ring was full (the drain fell behind),
                                 ///< perf_samples_lost included
    uint64_t timer_overruns;     ///< timer expirations merged by the kernel (thread not scheduled in time)
    // How each unwound snapshot ended (they sum to the snapshots unwound so far):
    uint64_t unwound_complete;   ///< reached the outermost frame (or HITCH_MAX_FRAMES)
    uint64_t unwind_stack_unknown;   ///< only the PC: the thread's stack bounds were not known yet
    uint64_t unwind_off_copy_end;    ///< stopped needing stack bytes above the copied range
    uint64_t unwind_modules_changed; ///< stopped at code of a module loaded after the sample (dropped if at frame 0)
    uint64_t unwind_no_module;       ///< stopped at an address outside every loaded module
    uint64_t unwind_errors;          ///< libunwind could not step (no unwind info, bad frame)
    uint64_t samples_discarded;  ///< unwound to no frame at all (the PC's module changed, or PC 0): not popped
    uint64_t perf_samples_lost;  ///< samples the kernel could not write (PERF_RECORD_LOST: ring full)
    int32_t perf_refusal;        ///< the errno that kept this session (or perf_fallback_threads of its
                                 ///< threads) off perf events; EMSGSIZE: the stack copy exceeds a record
    uint32_t perf_fallback_threads; ///< threads of a perf session sampled by the timer signal instead
    uint32_t threads_sampled;    ///< threads armed (timer or perf event) right now
    uint64_t unwind_memo_hits;   ///< unwinds answered from the memo of an earlier identical unwind
} hitch_sampler_stats;

typedef struct {
    pid_t tid;                   ///< kernel thread id of the sampled thread
    uint32_t depth;              ///< number of addresses written to the frames buffer
    uint64_t timestamp_ticks;    ///< hitch_now() (the trace clock) when the signal was handled
} hitch_sample_info;

/// Starts a session. Returns 0, EBUSY if one is running, EINVAL for a bad configuration, ENOSYS off
/// Linux, the errno of perf_event_open when HITCH_SAMPLER_SOURCE_PERF is refused, or the errno of
/// the failing sigaction/timer_create.
int hitch_sampler_start(const hitch_sampler_config *config);

/// The source the current (or last) session samples with: HITCH_SAMPLER_SOURCE_SIGNAL or _PERF.
uint32_t hitch_sampler_source(void);

/// Stops the session: disarms every timer and waits for handlers in flight. Samples already in the
/// rings stay there until popped. Returns 0 or EALREADY. No new session starts (EBUSY) until
/// hitch_sampler_finish: the stopping session's drain pops what is left first.
int hitch_sampler_stop(void);

/// Ends a stopped session once its drain has popped everything; a new session may start.
void hitch_sampler_finish(void);

/// 1 while a session runs.
int hitch_sampler_is_running(void);

/// Makes the calling thread samplable under HITCH_SAMPLE_REGISTERED_THREADS (now, if a session
/// runs, and in later sessions) until it exits or calls hitch_sampler_unregister_current_thread.
/// Also records the thread's stack bounds (the handler copies no further). Returns 0, ENOSPC (too
/// many threads) or the errno of timer_create.
int hitch_sampler_register_current_thread(void);
void hitch_sampler_unregister_current_thread(void);

/// In HITCH_SAMPLE_ALL_THREADS sessions, arms timers for threads created since the last scan.
/// Returns the number of threads newly armed.
int hitch_sampler_rescan_threads(void);

/// Pops the oldest sample of some thread (round robin over threads) into info/frames, unwinding
/// snapshots in batches of up to 64 on the calling thread (inside dl_iterate_phdr: other threads'
/// dlopen/dlclose wait for a batch). Returns 1 if a sample was popped, 0 if every ring is empty.
/// One consumer at a time (internally serialized). Never call it from a signal handler.
int hitch_sampler_pop(hitch_sample_info *info, uint64_t *frames, uint32_t capacity);

/// The handler's duration at `quantile` (0 ... 1) over every sample since the last reset (each
/// hitch_sampler_start resets), in
/// hitch_now() ticks (16-tick resolution); 0 before any sample.
uint64_t hitch_sampler_handler_ticks_percentile(double quantile);
void hitch_sampler_reset_handler_times(void);

/// The drain's time per sample (read the snapshot or perf record, unwind it) at `quantile`, in
/// ticks (256-tick resolution, up to 2^20 ticks); reset with the handler's.
uint64_t hitch_sampler_unwind_ticks_percentile(double quantile);

/// The stack bytes (from SP) that complete unwinds since the last reset read, at `quantile`, as
/// the power of two (256 ... 1 MiB) at or above it: the copy size that would have sufficed.
uint64_t hitch_sampler_stack_bytes_needed_percentile(double quantile);

void hitch_sampler_get_stats(hitch_sampler_stats *stats);

/// The drain thread's sleep: returns when a sampled thread's ring passes a quarter full (the timer
/// signal's handler signals an eventfd once per crossing; a perf ring wakes its poller at that
/// watermark), when hitch_sampler_stop or hitch_sampler_wake_drain
/// is called, or after `timeout_ns`, whichever comes first. Off Linux: sleeps `timeout_ns`.
void hitch_sampler_wait_for_samples(uint64_t timeout_ns);
void hitch_sampler_wake_drain(void);

/// The floor under the sampler's cost, for benchmarks: samples the calling thread at `rate_hz` with
/// none of the sampler's work. HITCH_SAMPLER_SOURCE_SIGNAL: a per-thread timer whose SIGPROF the
/// handler dismisses at its first check; _PERF: a bare task-clock event (thread id and time only,
/// no registers or stack, its ring never read). Independent of sessions; one floor at a time.
/// Returns 0, EBUSY, EINVAL, or the errno of timer_create / perf_event_open.
int hitch_sampler_floor_start(uint32_t source, uint32_t rate_hz);
void hitch_sampler_floor_stop(void);

/// The calling thread's stack, innermost first, excluding hitch_backtrace_capture itself and
/// `skip` further frames; addresses are return addresses minus one. Returns the count (0 ... capacity).
/// Not for signal handlers; costs about a microsecond with libunwind's per-thread cache warm.
int hitch_backtrace_capture(uint64_t *frames, int capacity, int skip);

#ifdef __cplusplus
}
#endif
#endif
