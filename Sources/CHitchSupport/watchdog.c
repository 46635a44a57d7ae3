// The hang watchdog (hitch_watchdog.h). The loop's thread publishes two words (when it left its
// loop, when it came back); the watchdog thread reads them, sleeping until the earliest moment the
// loop's thread could have been away for the threshold, so it wakes about once per threshold however
// fast the loop runs. Nothing here runs in a signal handler: the stack capture's handler is the
// sampler's (sampler.c, hitch_sampler_capture_thread).
#define _GNU_SOURCE
#include "hitch_watchdog.h"
#include "hitch_clock.h"
#include "hitch_platform.h"
#include "sample_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t hitch_loop_word;
uint64_t hitch_loop_reported_since;
_Thread_local int hitch_loop_thread_registered __attribute__((tls_model("initial-exec")));

// The loop's thread, as it registered (its id, its pthread, its stack). The generation changes with
// every registration, so the watchdog never pairs one thread's id with another's stack.
static pthread_mutex_t loop_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int32_t tid;
    pthread_t thread;
    uint64_t stack_low, stack_high;
    uint64_t generation;
} loop_thread;

void hitch_loop_register(void) {
    hitch_loop_thread_registered = 1;
    uint64_t low = 0, high = 0;
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
        void *address = NULL;
        size_t size = 0;
        if (pthread_attr_getstack(&attributes, &address, &size) == 0 && size > 0) {
            low = (uint64_t)(uintptr_t)address;
            high = low + size;
        }
        pthread_attr_destroy(&attributes);
    }
    pthread_mutex_lock(&loop_lock);
    loop_thread.tid = hitch_platform_thread_id();
    loop_thread.thread = pthread_self();
    loop_thread.stack_low = low;
    loop_thread.stack_high = high;
    loop_thread.generation += 1;
    pthread_mutex_unlock(&loop_lock);
}

// The end of the reported stretch, as the loop's thread set it: when it began (the handshake: the
// watchdog takes the end when this equals its reported stretch) and when it ended.
static uint64_t ended_since, ended_ticks;

void hitch_loop_end_reported(uint64_t ticks) {
    uint64_t since = __atomic_exchange_n(&hitch_loop_reported_since, 0, __ATOMIC_ACQ_REL);
    if (since == 0) return;   // the watchdog took its report back first
    __atomic_store_n(&ended_ticks, ticks, __ATOMIC_RELAXED);
    __atomic_store_n(&ended_since, since, __ATOMIC_RELEASE);
}

uint64_t hitch_thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// MARK: - The watchdog's state (one watchdog at a time; the fields below belong to its thread)

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t state_changed;
static pthread_once_t condition_once = PTHREAD_ONCE_INIT;
static int running, stopping;
static uint64_t threshold_ticks, interval_ticks, ticks_per_second;
static uint32_t captures_per_hang;

// The stretch being reported: when it began (0: none), captures taken, when the next is due.
static uint64_t reported_since;
static uint32_t captures_taken;
static uint64_t next_capture_ticks;

static void make_condition(void) {
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&state_changed, &attributes);
    pthread_condattr_destroy(&attributes);
}

int hitch_watchdog_start(uint64_t threshold, uint64_t interval, uint32_t captures, uint64_t rate) {
    if (threshold == 0 || interval == 0 || rate == 0) return EINVAL;
    pthread_once(&condition_once, make_condition);
    pthread_mutex_lock(&state_lock);
    if (running) { pthread_mutex_unlock(&state_lock); return EBUSY; }
    running = 1;
    stopping = 0;
    // A word left by an earlier session (a frame it began and never committed) is no stretch of this one.
    __atomic_store_n(&hitch_loop_word, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&hitch_loop_reported_since, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ended_since, 0, __ATOMIC_RELEASE);
    threshold_ticks = threshold;
    interval_ticks = interval;
    captures_per_hang = captures;
    ticks_per_second = rate;
    reported_since = 0;
    captures_taken = 0;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

void hitch_watchdog_stop(void) {
    pthread_once(&condition_once, make_condition);
    pthread_mutex_lock(&state_lock);
    if (running) stopping = 1;
    pthread_cond_broadcast(&state_changed);
    pthread_mutex_unlock(&state_lock);
}

/// Sleeps until `ticks` on the trace clock (or a stop). Returns 0 when stopping.
static int sleep_until(uint64_t ticks) {
    uint64_t now = hitch_now();
    uint64_t wait_ns = ticks > now ? (uint64_t)((double)(ticks - now) * 1e9 / (double)ticks_per_second) : 0;
    if (wait_ns > 1000000000ull) wait_ns = 1000000000ull;
    pthread_mutex_lock(&state_lock);
    if (!stopping && wait_ns > 0) {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        uint64_t ns = (uint64_t)deadline.tv_nsec + wait_ns;
        deadline.tv_sec += (time_t)(ns / 1000000000ull);
        deadline.tv_nsec = (long)(ns % 1000000000ull);
        while (!stopping && pthread_cond_timedwait(&state_changed, &state_lock, &deadline) == 0) {}
    }
    int keep = !stopping;
    pthread_mutex_unlock(&state_lock);
    return keep;
}

// MARK: - What the kernel says about the loop's thread

/// Reads a small /proc file of thread `tid` into `out` (NUL-terminated). Returns the bytes read, or -1.
static ssize_t read_task_file(int32_t tid, const char *name, char *out, size_t capacity) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, out, capacity - 1);
    close(fd);
    if (n < 0) return -1;
    out[n] = 0;
    return n;
}

/// The kernel's name for a system call number (the ones a waiting thread is found in), or NULL.
static const char *system_call_name(long number) {
    switch (number) {
#define NAME(call) case SYS_##call: return #call;
#ifdef SYS_futex
    NAME(futex)
#endif
#ifdef SYS_futex_waitv
    NAME(futex_waitv)
#endif
#ifdef SYS_flock
    NAME(flock)
#endif
#ifdef SYS_read
    NAME(read)
#endif
#ifdef SYS_pread64
    NAME(pread64)
#endif
#ifdef SYS_readv
    NAME(readv)
#endif
#ifdef SYS_preadv
    NAME(preadv)
#endif
#ifdef SYS_preadv2
    NAME(preadv2)
#endif
#ifdef SYS_write
    NAME(write)
#endif
#ifdef SYS_pwrite64
    NAME(pwrite64)
#endif
#ifdef SYS_writev
    NAME(writev)
#endif
#ifdef SYS_fsync
    NAME(fsync)
#endif
#ifdef SYS_fdatasync
    NAME(fdatasync)
#endif
#ifdef SYS_sync_file_range
    NAME(sync_file_range)
#endif
#ifdef SYS_open
    NAME(open)
#endif
#ifdef SYS_openat
    NAME(openat)
#endif
#ifdef SYS_newfstatat
    NAME(newfstatat)
#endif
#ifdef SYS_statx
    NAME(statx)
#endif
#ifdef SYS_getdents64
    NAME(getdents64)
#endif
#ifdef SYS_io_uring_enter
    NAME(io_uring_enter)
#endif
#ifdef SYS_io_getevents
    NAME(io_getevents)
#endif
#ifdef SYS_nanosleep
    NAME(nanosleep)
#endif
#ifdef SYS_clock_nanosleep
    NAME(clock_nanosleep)
#endif
#ifdef SYS_poll
    NAME(poll)
#endif
#ifdef SYS_ppoll
    NAME(ppoll)
#endif
#ifdef SYS_select
    NAME(select)
#endif
#ifdef SYS_pselect6
    NAME(pselect6)
#endif
#ifdef SYS_epoll_wait
    NAME(epoll_wait)
#endif
#ifdef SYS_epoll_pwait
    NAME(epoll_pwait)
#endif
#ifdef SYS_epoll_pwait2
    NAME(epoll_pwait2)
#endif
#ifdef SYS_recvfrom
    NAME(recvfrom)
#endif
#ifdef SYS_recvmsg
    NAME(recvmsg)
#endif
#ifdef SYS_accept
    NAME(accept)
#endif
#ifdef SYS_accept4
    NAME(accept4)
#endif
#ifdef SYS_connect
    NAME(connect)
#endif
#ifdef SYS_wait4
    NAME(wait4)
#endif
#ifdef SYS_waitid
    NAME(waitid)
#endif
#ifdef SYS_pause
    NAME(pause)
#endif
#ifdef SYS_rt_sigsuspend
    NAME(rt_sigsuspend)
#endif
#ifdef SYS_rt_sigtimedwait
    NAME(rt_sigtimedwait)
#endif
#ifdef SYS_msgrcv
    NAME(msgrcv)
#endif
#undef NAME
    default: return NULL;
    }
}

/// Calls a signal handler ends early whatever SA_RESTART says (signal(7)): a thread asleep in one
/// is not signalled, so the watchdog never cuts an app's sleep or poll short.
static int signal_ends_early(const char *call) {
    static const char *const calls[] = {"nanosleep", "clock_nanosleep", "poll", "ppoll", "select", "pselect6", "epoll_wait",
                                        "epoll_pwait", "epoll_pwait2", "pause", "rt_sigsuspend", "rt_sigtimedwait",
                                        "io_getevents", "msgrcv"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (strcmp(call, calls[i]) == 0) return 1;
    return 0;
}

/// The thread's state letter, system call (by name; a number the table lacks as "syscall N") and
/// wait channel. Returns 1 when the thread sleeps in a call a signal would end early.
static int read_kernel_view(int32_t tid, hitch_hang_report *report) {
    char text[512];
    report->state = 0;
    report->system_call[0] = 0;
    report->wait_channel[0] = 0;
    if (read_task_file(tid, "stat", text, sizeof text) > 0) {
        char *close = strrchr(text, ')');
        if (close != NULL && close[1] == ' ' && close[2] != 0) report->state = close[2];
    }
    int asleep = report->state == 'S' || report->state == 'D';
    if (asleep && read_task_file(tid, "syscall", text, sizeof text) > 0 && text[0] != 'r') {
        char *end = NULL;
        long number = strtol(text, &end, 10);
        if (end != text && number >= 0) {
            const char *name = system_call_name(number);
            if (name != NULL) snprintf(report->system_call, sizeof report->system_call, "%s", name);
            else snprintf(report->system_call, sizeof report->system_call, "syscall %ld", number);
        }
    }
    if (asleep && read_task_file(tid, "wchan", text, sizeof text) > 0 && strcmp(text, "0") != 0) {
        text[strcspn(text, "\n")] = 0;
        snprintf(report->wait_channel, sizeof report->wait_channel, "%s", text);
    }
    return asleep && signal_ends_early(report->system_call);
}

// MARK: - The loop

/// How long a capture waits for the handler to copy the stack.
#define CAPTURE_TIMEOUT_NS 20000000ull

/// Reads the kernel's view of the loop's thread and, unless it sleeps in a call a signal ends early,
/// its stack. Returns 0 when the stretch ended while the capture was taken: what it saw may be of
/// the loop after the stretch, so it is not reported.
static int capture(hitch_hang_report *report, uint64_t *frames, uint32_t capacity) {
    pthread_mutex_lock(&loop_lock);
    int32_t tid = loop_thread.tid;
    pthread_t thread = loop_thread.thread;
    uint64_t low = loop_thread.stack_low, high = loop_thread.stack_high;
    pthread_mutex_unlock(&loop_lock);
    report->kind = HITCH_HANG_CAPTURE;
    report->tid = tid;
    report->since_ticks = reported_since;
    report->at_ticks = hitch_now();
    report->depth = 0;
    report->no_stack_reason = 0;
    if (read_kernel_view(tid, report)) {
        report->no_stack_reason = 1;
    } else {
        int not_handled = 0;
        report->depth = hitch_sampler_capture_thread(thread, tid, low, high, frames, capacity, CAPTURE_TIMEOUT_NS, &not_handled);
        if (report->depth == 0) report->no_stack_reason = not_handled ? 2 : 3;
    }
    return __atomic_load_n(&hitch_loop_reported_since, __ATOMIC_ACQUIRE) == reported_since;
}

/// The report of the end of the stretch being reported, from `since` to `end`.
static void report_end(hitch_hang_report *report, uint64_t end) {
    pthread_mutex_lock(&loop_lock);
    report->tid = loop_thread.tid;
    pthread_mutex_unlock(&loop_lock);
    report->kind = HITCH_HANG_ENDED;
    report->since_ticks = reported_since;
    report->at_ticks = end;
    report->depth = 0;
    report->state = 0;
    report->system_call[0] = 0;
    report->wait_channel[0] = 0;
    report->no_stack_reason = 0;
    reported_since = 0;
}

int hitch_watchdog_next(hitch_hang_report *report, uint64_t *frames, uint32_t capacity) {
    for (;;) {
        // The stretch being reported ended: the loop's thread took the report (it stores when, next).
        if (reported_since != 0 && __atomic_load_n(&hitch_loop_reported_since, __ATOMIC_ACQUIRE) == 0) {
            while (__atomic_load_n(&ended_since, __ATOMIC_ACQUIRE) != reported_since) sched_yield();
            uint64_t end = __atomic_load_n(&ended_ticks, __ATOMIC_RELAXED);
            __atomic_store_n(&ended_since, 0, __ATOMIC_RELAXED);
            report_end(report, end);
            return 1;
        }
        pthread_mutex_lock(&state_lock);
        int stop = stopping;
        if (stop) running = 0;
        pthread_mutex_unlock(&state_lock);
        if (stop) {
            // A stretch still going stays unended in the trace (the loop's thread is away at the stop);
            // one the loop's thread ended meanwhile is reported first.
            if (reported_since != 0 && __atomic_exchange_n(&hitch_loop_reported_since, 0, __ATOMIC_ACQ_REL) == 0) continue;
            reported_since = 0;
            return 0;
        }
        uint64_t word = __atomic_load_n(&hitch_loop_word, __ATOMIC_ACQUIRE);
        uint64_t now = hitch_now();
        int away = (word & 1) != 0;
        uint64_t since = word >> 1;
        uint64_t wake;
        if (away && since != 0 && now - since >= threshold_ticks) {
            if (reported_since != since) {
                // A new stretch: published for the loop's thread, which ends it. If it came back
                // before it could see that, take the report back: it returned at its word's time.
                reported_since = since;
                captures_taken = 0;
                next_capture_ticks = now;
                __atomic_store_n(&hitch_loop_reported_since, since, __ATOMIC_RELEASE);
                uint64_t after = __atomic_load_n(&hitch_loop_word, __ATOMIC_ACQUIRE);
                if (after != word && __atomic_exchange_n(&hitch_loop_reported_since, 0, __ATOMIC_ACQ_REL) == since) {
                    report_end(report, after >> 1);
                    return 1;
                }
            }
            if (captures_taken < captures_per_hang && now >= next_capture_ticks) {
                captures_taken += 1;
                next_capture_ticks = now + interval_ticks;
                if (capture(report, frames, capacity)) return 1;
                continue;   // it ended meanwhile: report the end
            }
            // Captures spent: look again once an interval (the loop's thread ends the stretch itself).
            wake = captures_taken < captures_per_hang ? next_capture_ticks : now + interval_ticks;
        } else if (away && since != 0) {
            wake = since + threshold_ticks;
        } else {
            wake = now + threshold_ticks;
        }
        sleep_until(wake);
    }
}
