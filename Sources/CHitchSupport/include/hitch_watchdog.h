#ifndef HITCH_WATCHDOG_H
#define HITCH_WATCHDOG_H
// The hang watchdog (watchdog.c; docs/FORMAT.md "Hangs"). The thread that runs the frame loop says
// when it leaves its loop and when it comes back (the frame calls: Trace.frameBegan, frameCommitted,
// FrameMarker.mark), with two atomic stores. A watchdog thread that finds it away for the threshold
// reads what the kernel says it is doing (/proc: its state, system call and wait channel) and, unless
// it sleeps in a call a signal would end early, captures its stack: a queued SIGPROF whose handler
// (sampler.c, the sampler's own) only copies registers and stack; the watchdog thread unwinds the copy
// as the sampler's drain does. It captures again every capture interval while the thread stays away,
// and reports the stretch when the thread comes back. Everything a report carries is in plain memory,
// so the caller can put it in the trace at once: what reached the file before a SIGKILL survives it.
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/// The loop's state: ticks << 1 | 1 while the loop's thread is away since `ticks`, ticks << 1 once it
/// came back at `ticks`; 0 before the first call.
extern uint64_t hitch_loop_word;
/// When the stretch the watchdog is reporting began (0: none). The loop's thread ends that stretch
/// itself, at the exact moment it comes back or leaves again (hitch_loop_end_reported).
extern uint64_t hitch_loop_reported_since;
/// Non-zero on the thread that last registered as the loop's thread.
extern _Thread_local int hitch_loop_thread_registered __attribute__((tls_model("initial-exec")));

/// Makes the calling thread the loop's thread: its id, its pthread and its stack bounds, for the
/// watchdog. Called once per thread by the first hitch_loop_left / hitch_loop_returned on it.
void hitch_loop_register(void);
/// The loop's thread ends the stretch the watchdog is reporting, at `ticks`.
void hitch_loop_end_reported(uint64_t ticks);

/// The loop's thread leaves its loop at `ticks` (a frame begins; a marked loop's mark, which also
/// ends the stretch since the previous mark).
static inline void hitch_loop_left(uint64_t ticks) {
    if (__builtin_expect(!hitch_loop_thread_registered, 0)) hitch_loop_register();
    if (__builtin_expect(__atomic_load_n(&hitch_loop_reported_since, __ATOMIC_ACQUIRE) != 0, 0)) hitch_loop_end_reported(ticks);
    __atomic_store_n(&hitch_loop_word, ticks << 1 | 1, __ATOMIC_RELEASE);
}

/// The loop's thread is back in its loop at `ticks` (a frame's commit).
static inline void hitch_loop_returned(uint64_t ticks) {
    if (__builtin_expect(!hitch_loop_thread_registered, 0)) hitch_loop_register();
    if (__builtin_expect(__atomic_load_n(&hitch_loop_reported_since, __ATOMIC_ACQUIRE) != 0, 0)) hitch_loop_end_reported(ticks);
    __atomic_store_n(&hitch_loop_word, ticks << 1, __ATOMIC_RELEASE);
}

/// What the watchdog reports.
enum {
    /// The loop's thread has been away for the threshold or more: its stack and state now.
    HITCH_HANG_CAPTURE = 1,
    /// The loop's thread came back (or left again, a marked loop's next frame) after a reported stretch.
    HITCH_HANG_ENDED = 2,
};

typedef struct hitch_hang_report {
    uint32_t kind;              ///< HITCH_HANG_*
    int32_t tid;                ///< the loop's thread (kernel thread id)
    uint64_t since_ticks;       ///< when it left its loop
    uint64_t at_ticks;          ///< the capture's time; for HITCH_HANG_ENDED, when it came back
    uint32_t depth;             ///< frames written for a capture (0: no stack, see `no_stack_reason`)
    char state;                 ///< its /proc stat state letter (R, S, D, ...); 0 when unread
    char system_call[24];       ///< the system call it was in ("futex", "pread64", ...); "" when in none or unread
    char wait_channel[48];      ///< its /proc wchan; "" when none or unread
    /// Why a capture has no stack: 0 none; 1 it slept in a call a signal ends early (a sleep, a
    /// poll); 2 the signal was not handled in time (blocked, or the thread stuck in the kernel);
    /// 3 the unwind found no frame.
    uint32_t no_stack_reason;
} hitch_hang_report;

/// Starts watching the loop's thread: away for `threshold_ticks` is a hang; while it stays away a
/// capture every `capture_interval_ticks`, at most `captures_per_hang`. Returns 0, EBUSY if a
/// watchdog is running, EINVAL for a zero threshold or interval.
int hitch_watchdog_start(uint64_t threshold_ticks, uint64_t capture_interval_ticks, uint32_t captures_per_hang,
                         uint64_t ticks_per_second);
/// Stops watching: hitch_watchdog_next returns 0 (after reporting the end of a reported stretch the
/// thread already came back from).
void hitch_watchdog_stop(void);
/// Waits for the next report (returns 1; a capture's frames, innermost first, in `frames`), or
/// returns 0 once the watchdog is stopped. One caller at a time.
int hitch_watchdog_next(hitch_hang_report *report, uint64_t *frames, uint32_t capacity);
/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), in nanoseconds: the watchdog
/// thread's own cost, for `hitch bench watchdog`.
uint64_t hitch_thread_cpu_ns(void);

#endif
