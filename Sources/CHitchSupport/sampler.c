// The sampling profiler's signal side, kept in one file: everything the SIGPROF handler touches is
// here, and the handler itself allocates nothing, takes no lock and calls only async-signal-safe
// code (hitch_now, libunwind local unwinding with a warm per-thread cache, atomics).
//
// Each sampled thread owns a slot (heap-allocated once, never freed, so a late signal can never
// touch freed memory). A slot moves through an explicit state machine of atomics:
//
//   IDLE ──arm (control path)──► ARMED ──handler CAS──► SAMPLING ──handler store──► ARMED
//     ▲                            │
//     └────────disarm (CAS, waits while SAMPLING)
//
// Only the handler running on the slot's own thread can move ARMED -> SAMPLING, and only the control
// path (serialized by control_lock) moves IDLE <-> ARMED. Each arm bumps the slot's generation and
// the timer's signal carries (generation, slot index), so a signal still queued from an older timer
// is recognised and ignored. The ring is single-producer (the handler on that thread) and
// single-consumer (hitch_sampler_pop, serialized by pop_lock).
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "hitch_clock.h"
#include "hitch_sampler.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256
#define SAMPLER_SIGNAL SIGPROF
#define DEFAULT_RING_WORDS_LOG2 16
// A ring record: [timestamp_ticks][tid << 32 | depth][depth addresses].
#define RECORD_HEADER_WORDS 2

enum slot_state { SLOT_IDLE = 0, SLOT_ARMED = 1, SLOT_SAMPLING = 2 };
enum session_state { SESSION_STOPPED = 0, SESSION_RUNNING = 1 };

typedef struct {
    _Atomic uint32_t state;
    _Atomic uint32_t generation;
    pid_t tid;                 // written by the control path before arming (published by the state store)
    int registered;            // the thread asked to be sampled (control path only)
    int has_timer;             // control path only
    timer_t timer;
    uint64_t *ring;
    uint64_t mask;
    _Atomic uint64_t head;     // advanced by the producer (handler)
    _Atomic uint64_t tail;     // advanced by the consumer (pop)
} sampler_slot;

static sampler_slot *_Atomic slots[MAX_THREADS];
static _Atomic int session = SESSION_STOPPED;
static uint32_t session_scope;
static long session_interval_ns;
static uint32_t ring_words_log2 = DEFAULT_RING_WORDS_LOG2;

static _Atomic uint64_t samples_taken;
static _Atomic uint64_t samples_dropped;
static _Atomic uint64_t timer_overruns;
static _Atomic uint64_t unwind_failures;
static _Atomic uint64_t samples_contended;

// One unwind in a signal handler at a time. libunwind takes internal locks and calls
// dl_iterate_phdr (the loader's lock); a thread interrupted while holding the loader's lock (in
// dlopen/dlclose) must never wait for a handler on another thread that waits for that same lock.
// With this gate the interrupted thread's handler sees it taken, skips (counted), and returns, so
// the lock holder always makes progress.
static _Atomic int unwinder_busy;

static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t registration_key;
static int handler_installed;

static pid_t current_tid(void) { return (pid_t)syscall(SYS_gettid); }

// MARK: - The signal handler (async-signal-safe from here to the end of on_sample_signal)

static void take_sample(sampler_slot *slot, void *context) {
    uint64_t frames[HITCH_MAX_FRAMES];
    uint32_t depth = 0;
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) < 0) {
        atomic_fetch_add_explicit(&unwind_failures, 1, memory_order_relaxed);
        return;
    }
    do {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        // Callers' IPs are return addresses: step back into the call instruction.
        frames[depth] = depth == 0 ? (uint64_t)ip : (uint64_t)ip - 1;
        depth += 1;
    } while (depth < HITCH_MAX_FRAMES && unw_step(&cursor) > 0);
    if (depth == 0) {
        atomic_fetch_add_explicit(&unwind_failures, 1, memory_order_relaxed);
        return;
    }

    uint64_t timestamp = hitch_now(); // rdtsc or clock_gettime: both async-signal-safe

    uint64_t head = atomic_load_explicit(&slot->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_acquire);
    uint64_t needed = RECORD_HEADER_WORDS + depth;
    if (head - tail + needed > slot->mask + 1) {
        atomic_fetch_add_explicit(&samples_dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t *ring = slot->ring;
    uint64_t mask = slot->mask;
    ring[head & mask] = timestamp;
    ring[(head + 1) & mask] = ((uint64_t)(uint32_t)slot->tid << 32) | depth;
    for (uint32_t i = 0; i < depth; i++) ring[(head + RECORD_HEADER_WORDS + i) & mask] = frames[i];
    atomic_store_explicit(&slot->head, head + needed, memory_order_release);
    atomic_fetch_add_explicit(&samples_taken, 1, memory_order_relaxed);
}

static void on_sample_signal(int signo, siginfo_t *info, void *context) {
    (void)signo;
    int saved_errno = errno;
    if (info != NULL && info->si_code == SI_TIMER) {
        uintptr_t token = (uintptr_t)info->si_value.sival_ptr;
        uint32_t index = (uint32_t)(token & 0xffff);
        uint32_t generation = (uint32_t)(token >> 16);
        sampler_slot *slot = index < MAX_THREADS ? atomic_load_explicit(&slots[index], memory_order_acquire) : NULL;
        uint32_t expected = SLOT_ARMED;
        if (slot != NULL && atomic_compare_exchange_strong_explicit(&slot->state, &expected, SLOT_SAMPLING,
                                                                    memory_order_acquire, memory_order_relaxed)) {
            if (atomic_load_explicit(&slot->generation, memory_order_relaxed) == generation) {
                if (info->si_overrun > 0)
                    atomic_fetch_add_explicit(&timer_overruns, (uint64_t)info->si_overrun, memory_order_relaxed);
                if (atomic_exchange_explicit(&unwinder_busy, 1, memory_order_acquire) == 0) {
                    take_sample(slot, context);
                    atomic_store_explicit(&unwinder_busy, 0, memory_order_release);
                } else {
                    atomic_fetch_add_explicit(&samples_contended, 1, memory_order_relaxed);
                }
            }
            atomic_store_explicit(&slot->state, SLOT_ARMED, memory_order_release);
        }
    }
    errno = saved_errno;
}

// MARK: - Control path (never runs in a signal handler; serialized by control_lock)

static void unregister_at_thread_exit(void *value);

static void setup(void) {
    // Per-thread caches keep the handler away from libunwind's global cache lock.
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    pthread_key_create(&registration_key, unregister_at_thread_exit);
}

/// Runs one unwind on the calling thread so libunwind's per-thread cache and lazily bound
/// symbols are initialised before a signal needs them.
static void warm_up_unwinder(void) {
    void *frames[8];
    (void)unw_backtrace(frames, 8);
}

static int install_handler(void) {
    if (handler_installed) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sample_signal;
    // SA_RESTART: a sampled thread blocked in read/write/wait resumes its syscall after the handler.
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SAMPLER_SIGNAL, &action, NULL) != 0) return errno;
    // Never uninstalled: a signal still queued after a session ends must not take the default
    // action (SIGPROF terminates the process).
    handler_installed = 1;
    return 0;
}

/// The slot already bound to `tid`, or a reusable one (idle, unregistered, drained), or a new one.
static int slot_for_thread(pid_t tid, uint32_t *index_out) {
    int reusable = -1;
    for (uint32_t i = 0; i < MAX_THREADS; i++) {
        sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (slot == NULL) {
            if (reusable < 0) reusable = (int)i;
            continue;
        }
        if (slot->tid == tid && (slot->registered || slot->has_timer)) { *index_out = i; return 0; }
        if (reusable < 0 && !slot->registered && !slot->has_timer &&
            atomic_load_explicit(&slot->state, memory_order_acquire) == SLOT_IDLE &&
            atomic_load_explicit(&slot->head, memory_order_acquire) == atomic_load_explicit(&slot->tail, memory_order_acquire))
            reusable = (int)i;
    }
    if (reusable < 0) return ENOSPC;
    sampler_slot *slot = atomic_load_explicit(&slots[reusable], memory_order_acquire);
    if (slot == NULL) {
        slot = calloc(1, sizeof *slot);
        if (slot == NULL) return ENOMEM;
        size_t words = (size_t)1 << ring_words_log2;
        slot->ring = calloc(words, sizeof(uint64_t));
        if (slot->ring == NULL) { free(slot); return ENOMEM; }
        slot->mask = words - 1;
        atomic_store_explicit(&slots[reusable], slot, memory_order_release);
    }
    slot->tid = tid;
    *index_out = (uint32_t)reusable;
    return 0;
}

static int arm(uint32_t index) {
    sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
    if (slot->has_timer) return 0;
    uint32_t generation = (atomic_load_explicit(&slot->generation, memory_order_relaxed) + 1) & 0x7fffffffu;
    atomic_store_explicit(&slot->generation, generation, memory_order_relaxed);

    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SAMPLER_SIGNAL;
    event._sigev_un._tid = slot->tid;
    event.sigev_value.sival_ptr = (void *)(((uintptr_t)generation << 16) | index);
    if (timer_create(CLOCK_MONOTONIC, &event, &slot->timer) != 0) return errno;
    slot->has_timer = 1;
    atomic_store_explicit(&slot->state, SLOT_ARMED, memory_order_release);

    // Stagger first expiries so the threads' signals don't all land on the same tick.
    long first = session_interval_ns + (long)((index * 37003L) % session_interval_ns);
    struct itimerspec spec = {
        .it_interval = {.tv_sec = session_interval_ns / 1000000000L, .tv_nsec = session_interval_ns % 1000000000L},
        .it_value = {.tv_sec = first / 1000000000L, .tv_nsec = first % 1000000000L},
    };
    if (timer_settime(slot->timer, 0, &spec, NULL) != 0) {
        int error = errno;
        atomic_store_explicit(&slot->state, SLOT_IDLE, memory_order_release);
        timer_delete(slot->timer);
        slot->has_timer = 0;
        return error;
    }
    return 0;
}

static void disarm(sampler_slot *slot) {
    if (!slot->has_timer) return;
    // Close the gate first, waiting out a handler in flight on the sampled thread.
    for (;;) {
        uint32_t expected = SLOT_ARMED;
        if (atomic_compare_exchange_weak_explicit(&slot->state, &expected, SLOT_IDLE,
                                                  memory_order_acq_rel, memory_order_relaxed)) break;
        if (expected == SLOT_IDLE) break;
        sched_yield();
    }
    timer_delete(slot->timer);
    slot->has_timer = 0;
}

static int arm_thread(pid_t tid, int registered) {
    uint32_t index;
    int error = slot_for_thread(tid, &index);
    if (error != 0) return error;
    sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
    if (registered) slot->registered = 1;
    return arm(index);
}

static int scan_all_threads(int *armed) {
    DIR *directory = opendir("/proc/self/task");
    if (directory == NULL) return errno;
    struct dirent *entry;
    int error = 0;
    while ((entry = readdir(directory)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        pid_t tid = (pid_t)atoi(entry->d_name);
        uint32_t index;
        int already = 0;
        for (index = 0; index < MAX_THREADS; index++) {
            sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
            if (slot != NULL && slot->tid == tid && slot->has_timer) { already = 1; break; }
        }
        if (already) continue;
        int result = arm_thread(tid, 0);
        if (result == 0) *armed += 1;
        else if (result != EINVAL) error = result; // EINVAL: the thread exited since readdir
    }
    closedir(directory);
    return error;
}

int hitch_sampler_start(const hitch_sampler_config *config) {
    uint32_t rate = config && config->rate_hz ? config->rate_hz : 1000;
    uint32_t scope = config && config->scope ? config->scope : HITCH_SAMPLE_MAIN_THREAD;
    uint32_t words_log2 = config && config->ring_words_log2 ? config->ring_words_log2 : DEFAULT_RING_WORDS_LOG2;
    if (rate > 10000 || words_log2 < 10 || words_log2 > 24 ||
        (scope & ~(uint32_t)(HITCH_SAMPLE_MAIN_THREAD | HITCH_SAMPLE_REGISTERED_THREADS | HITCH_SAMPLE_ALL_THREADS)))
        return EINVAL;
    pthread_once(&setup_once, setup);
    warm_up_unwinder();
    pthread_mutex_lock(&control_lock);
    if (atomic_load(&session) != SESSION_STOPPED) { pthread_mutex_unlock(&control_lock); return EBUSY; }
    int error = install_handler();
    if (error == 0) {
        session_interval_ns = 1000000000L / (long)rate;
        session_scope = scope;
        ring_words_log2 = words_log2; // applies to slots allocated from now on
        atomic_store(&session, SESSION_RUNNING);
        if (scope & HITCH_SAMPLE_ALL_THREADS) {
            int armed = 0;
            error = scan_all_threads(&armed);
        } else {
            if (scope & HITCH_SAMPLE_MAIN_THREAD) error = arm_thread(getpid(), 0);
            if (error == 0 && (scope & HITCH_SAMPLE_REGISTERED_THREADS)) {
                for (uint32_t i = 0; i < MAX_THREADS && error == 0; i++) {
                    sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
                    if (slot != NULL && slot->registered) error = arm(i);
                }
            }
        }
        if (error != 0) {
            for (uint32_t i = 0; i < MAX_THREADS; i++) {
                sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
                if (slot != NULL) disarm(slot);
            }
            atomic_store(&session, SESSION_STOPPED);
        }
    }
    pthread_mutex_unlock(&control_lock);
    return error;
}

int hitch_sampler_stop(void) {
    pthread_mutex_lock(&control_lock);
    if (atomic_load(&session) != SESSION_RUNNING) { pthread_mutex_unlock(&control_lock); return EALREADY; }
    for (uint32_t i = 0; i < MAX_THREADS; i++) {
        sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (slot != NULL) disarm(slot);
    }
    atomic_store(&session, SESSION_STOPPED);
    pthread_mutex_unlock(&control_lock);
    return 0;
}

int hitch_sampler_is_running(void) { return atomic_load(&session) == SESSION_RUNNING; }

int hitch_sampler_register_current_thread(void) {
    pthread_once(&setup_once, setup);
    warm_up_unwinder();
    pid_t tid = current_tid();
    pthread_mutex_lock(&control_lock);
    uint32_t index;
    int error = slot_for_thread(tid, &index);
    if (error == 0) {
        sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
        slot->registered = 1;
        pthread_setspecific(registration_key, slot);
        if (atomic_load(&session) == SESSION_RUNNING && (session_scope & HITCH_SAMPLE_REGISTERED_THREADS))
            error = arm(index);
    }
    pthread_mutex_unlock(&control_lock);
    return error;
}

static void unregister_slot(sampler_slot *slot) {
    pthread_mutex_lock(&control_lock);
    disarm(slot);
    slot->registered = 0;
    pthread_mutex_unlock(&control_lock);
}

static void unregister_at_thread_exit(void *value) {
    if (value != NULL) unregister_slot((sampler_slot *)value);
}

void hitch_sampler_unregister_current_thread(void) {
    pthread_once(&setup_once, setup);
    sampler_slot *slot = pthread_getspecific(registration_key);
    if (slot == NULL) return;
    pthread_setspecific(registration_key, NULL);
    unregister_slot(slot);
}

int hitch_sampler_rescan_threads(void) {
    int armed = 0;
    pthread_mutex_lock(&control_lock);
    if (atomic_load(&session) == SESSION_RUNNING && (session_scope & HITCH_SAMPLE_ALL_THREADS)) {
        // Timers aimed at exited threads no longer fire; release their slots for reuse.
        for (uint32_t i = 0; i < MAX_THREADS; i++) {
            sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
            if (slot != NULL && slot->has_timer && !slot->registered &&
                syscall(SYS_tgkill, getpid(), slot->tid, 0) != 0 && errno == ESRCH)
                disarm(slot);
        }
        (void)scan_all_threads(&armed);
    }
    pthread_mutex_unlock(&control_lock);
    return armed;
}

// MARK: - Consumer

int hitch_sampler_pop(hitch_sample_info *info, uint64_t *frames, uint32_t capacity) {
    static uint32_t next_slot;
    int found = 0;
    pthread_mutex_lock(&pop_lock);
    for (uint32_t step = 0; step < MAX_THREADS && !found; step++) {
        uint32_t index = (next_slot + step) % MAX_THREADS;
        sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
        if (slot == NULL) continue;
        uint64_t head = atomic_load_explicit(&slot->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_relaxed);
        if (head == tail) continue;
        uint64_t *ring = slot->ring;
        uint64_t mask = slot->mask;
        uint64_t word = ring[(tail + 1) & mask];
        uint32_t depth = (uint32_t)(word & 0xffffffffu);
        uint32_t kept = depth < capacity ? depth : capacity;
        info->timestamp_ticks = ring[tail & mask];
        info->tid = (pid_t)(uint32_t)(word >> 32);
        info->depth = kept;
        for (uint32_t i = 0; i < kept; i++) frames[i] = ring[(tail + RECORD_HEADER_WORDS + i) & mask];
        atomic_store_explicit(&slot->tail, tail + RECORD_HEADER_WORDS + depth, memory_order_release);
        next_slot = index + 1;
        found = 1;
    }
    pthread_mutex_unlock(&pop_lock);
    return found;
}

void hitch_sampler_get_stats(hitch_sampler_stats *stats) {
    stats->samples_taken = atomic_load_explicit(&samples_taken, memory_order_relaxed);
    stats->samples_dropped = atomic_load_explicit(&samples_dropped, memory_order_relaxed);
    stats->timer_overruns = atomic_load_explicit(&timer_overruns, memory_order_relaxed);
    stats->unwind_failures = atomic_load_explicit(&unwind_failures, memory_order_relaxed);
    stats->samples_contended = atomic_load_explicit(&samples_contended, memory_order_relaxed);
    uint32_t armed = 0;
    for (uint32_t i = 0; i < MAX_THREADS; i++) {
        sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (slot != NULL && atomic_load_explicit(&slot->state, memory_order_relaxed) != SLOT_IDLE) armed += 1;
    }
    stats->threads_sampled = armed;
}

// MARK: - Explicit backtraces (normal context, not signal handlers)

__attribute__((noinline)) int hitch_backtrace_capture(uint64_t *frames, int capacity, int skip) {
    enum { extra = 16 };
    void *raw[HITCH_MAX_FRAMES + extra];
    if (capacity <= 0) return 0;
    if (skip < 0) skip = 0;
    if (skip > extra - 1) skip = extra - 1;
    int wanted = capacity + skip + 1;
    if (wanted > HITCH_MAX_FRAMES + extra) wanted = HITCH_MAX_FRAMES + extra;
    int count = unw_backtrace(raw, wanted);
    int written = 0;
    // raw[0] is the return address into this function's caller... of unw_backtrace: ours.
    for (int i = 1 + skip; i < count && written < capacity; i++) {
        uintptr_t address = (uintptr_t)raw[i];
        if (address == 0) break;
        frames[written++] = (uint64_t)address - 1;
    }
    return written;
}
