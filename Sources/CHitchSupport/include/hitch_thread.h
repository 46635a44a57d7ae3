#ifndef HITCH_THREAD_H
#define HITCH_THREAD_H

#include <stdint.h>

/// Makes the calling thread background work: Linux SCHED_IDLE, so any ordinary thread that wakes
/// (the UI's main and render threads at each vsync) preempts it at once, as a device's background
/// QoS yields to user-interactive work. Nice 19 alone still lets a busy thread finish its slice
/// first. Where SCHED_IDLE is refused, falls back to nice 19. Returns 1 for SCHED_IDLE, 0 for the
/// fallback, -1 if neither could be set.
int hitch_thread_make_background(void);

/// Returns thread `tid` of this process to ordinary scheduling at nice 0. Leaving SCHED_IDLE needs
/// CAP_SYS_NICE or an RLIMIT_NICE of 20; returns 0, or the errno (EPERM) when refused.
int hitch_thread_make_normal(int32_t tid);

/// How long thread `tid` of this process has been runnable but waiting for a CPU, in total
/// (its schedstat run delay); -1 when unreadable (no schedstats, or the thread has exited).
int64_t hitch_thread_run_delay_ns(int32_t tid);

#endif
