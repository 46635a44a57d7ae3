// The sampling profiler's control path, its two sample sources' per-thread state, and the drain.
//
// Two sources feed one path. Where perf_event_open is permitted, the kernel samples each thread
// (a task-clock event, sample_perf.c) and writes registers and a stack copy into a ring mapped per
// thread; the drain reads those records as snapshots. Elsewhere (or when a thread's event is
// refused) a per-thread timer sends SIGPROF and the handler here copies the same snapshot into the
// thread's own ring. Either way the drain unwinds the snapshots off any handler (sample_unwind.c).
//
// Everything the SIGPROF handler touches is in this file. The handler only copies: the interrupted thread's registers (from the ucontext) and a
// bounded copy of its stack from SP up, into that thread's preallocated ring, with a timestamp and
// the unwinder's module-table generation. No libunwind, no dl_*, no lock, no allocation, errno
// preserved; its one system call is a write() to the drain's eventfd when the ring passes a quarter full.
// The unwinding happens later on the drain thread (hitch_sampler_pop -> sample_unwind.c),
// so a signal that lands inside the loader (dlopen holding its lock) can never wait for that lock.
//
// Each sampled thread owns a slot (heap-allocated once, never freed, so a late signal can never
// touch freed memory). A slot moves through an explicit state machine of atomics:
//
//   IDLE ──arm (control path)──► ARMED ──handler CAS──► SAMPLING ──handler store──► ARMED
//     ▲                            │
//     └────────disarm (CAS, waits while SAMPLING)
//
// Only the handler running on the slot's own thread can move ARMED -> SAMPLING, and only the control
// path (serialized by control_lock) moves IDLE <-> ARMED. A slot armed with a perf event goes
// through the same states (no handler ever samples it: its generation matches no timer). Each arm bumps the slot's generation and
// the timer's signal carries (generation, slot index), so a signal still queued from an older timer
// is recognised and ignored. The ring is single-producer (the handler on that thread) and
// single-consumer (the drain's batch, serialized by pop_lock).
#define _GNU_SOURCE
#include "hitch_sampler.h"

#if defined(__linux__)
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "hitch_clock.h"
#include "sample_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_THREADS 256
#define SAMPLER_SIGNAL SIGPROF
// 2 MiB per thread: at 1 kHz and 32 KiB copies, 63 full snapshots; the drain wakes at a quarter.
#define DEFAULT_RING_WORDS_LOG2 18
// At most this many snapshots are unwound per batch, i.e. per hold of the loader's lock.
#define BATCH_SAMPLES 64
// Handler durations: buckets of 2^HANDLER_BUCKET_SHIFT ticks; the last bucket takes the rest. The
// drain's per-sample times are longer (tens of microseconds in a debug build): coarser buckets.
#define HANDLER_BUCKET_SHIFT 4
#define UNWIND_BUCKET_SHIFT 8
#define HANDLER_BUCKETS 4096

enum slot_state { SLOT_IDLE = 0, SLOT_ARMED = 1, SLOT_SAMPLING = 2 };
// STOPPING: timers disarmed, the session's drain still unwinding what is left; a new session may
// not start until hitch_sampler_finish, or two drains would split one session's samples.
enum session_state { SESSION_STOPPED = 0, SESSION_RUNNING = 1, SESSION_STOPPING = 2 };

typedef struct {
    _Atomic uint32_t state;
    _Atomic uint32_t generation;
    _Atomic pid_t tid;         // written by the control path; read by the handler and the drain
    int registered;            // the thread asked to be sampled (control path only)
    int armed_with;            // HITCH_SAMPLER_SOURCE_SIGNAL or _PERF while armed, else 0 (control path only)
    timer_t timer;
    // The thread's perf event and ring (fd -1 when none). Written by the control path under
    // pop_lock, read by the drain under pop_lock; kept after disarm until the drain has read it.
    perf_source perf;
    int perf_hung_up;          // its fd reported POLLHUP/POLLERR (thread gone): not polled (pop_lock)
    // The thread's stack, [stack_low, stack_high): set when the thread registers or is armed, or
    // learned by the drain thread from /proc/self/maps; high == 0 means unknown (no copy).
    _Atomic uint64_t stack_low;
    _Atomic uint64_t stack_high;
    uint64_t *ring;            // the signal source's ring: allocated when first armed with a timer
    uint64_t mask;
    _Atomic uint64_t head;     // advanced by the producer (handler)
    _Atomic uint64_t tail;     // advanced by the consumer (pop)
} sampler_slot;

static sampler_slot *_Atomic slots[MAX_THREADS];
static _Atomic int session = SESSION_STOPPED;
static uint32_t session_scope;
static long session_interval_ns;
static uint32_t ring_words_log2 = DEFAULT_RING_WORDS_LOG2;
static _Atomic uint64_t stack_copy_bytes = HITCH_DEFAULT_STACK_COPY_BYTES;
static uint32_t session_source;      // what threads are armed with (control path)
static double ticks_per_ns = 1.0;    // the trace clock's rate, for perf records' CLOCK_MONOTONIC times
static _Atomic int32_t perf_refusal; // errno that kept the session (or a thread) off perf events
static _Atomic uint32_t perf_fallback_threads;
static _Atomic uint64_t perf_samples_lost;
// Wakes the drain thread (hitch_sampler_wait_for_samples): written by a handler whose ring just
// passed a quarter full, and by hitch_sampler_stop. Created once, never closed (a late handler may write).
static _Atomic int wake_fd = -1;

static _Atomic uint64_t samples_taken;
static _Atomic uint64_t samples_dropped;
static _Atomic uint64_t timer_overruns;
static _Atomic uint64_t unwind_ends[UNWIND_END_COUNT];
static _Atomic uint64_t samples_discarded;
// Stack bytes complete unwinds read (from SP): buckets of powers of two from 2^8 to 2^20.
#define NEEDED_BUCKETS 13
static _Atomic uint64_t stack_needed_histogram[NEEDED_BUCKETS];
static _Atomic uint64_t handler_ticks_histogram[HANDLER_BUCKETS];
// The drain's time per sample (read the record, unwind it), in the same buckets.
static _Atomic uint64_t unwind_ticks_histogram[HANDLER_BUCKETS];

static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t registration_key;
static int handler_installed;

static pid_t current_tid(void) { return (pid_t)syscall(SYS_gettid); }

// MARK: - The signal handler (async-signal-safe from here to the end of on_sample_signal)

/// Copies `count` words. Inline assembly on x86-64: the source is the interrupted thread's live
/// stack, ASan's poisoned redzones included, so the copy must not be instrumented (nor become a
/// call to an intercepted memcpy).
static inline void copy_stack_words(uint64_t *destination, const uint64_t *source, uint64_t count) {
#if defined(__x86_64__)
    __asm__ __volatile__("rep movsq" : "+D"(destination), "+S"(source), "+c"(count) : : "memory");
#else
    const volatile uint64_t *from = source;
    for (uint64_t i = 0; i < count; i++) destination[i] = from[i];
#endif
}

/// The interrupted registers, in libunwind's order.
static void copy_registers(sample_snapshot *snapshot, const ucontext_t *context) {
#if defined(__x86_64__)
    const greg_t *gregs = context->uc_mcontext.gregs;
    // libunwind's x86-64 order: RAX RDX RCX RBX RSI RDI RBP RSP R8-R15 RIP.
    static const int order[SNAPSHOT_REGISTERS] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
                                                  REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                                  REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
    for (int i = 0; i < SNAPSHOT_REGISTERS; i++) snapshot->registers[i] = (uint64_t)gregs[order[i]];
#else
    (void)snapshot; (void)context; // other architectures: no registers, the unwind counts an error
#endif
}

static void take_snapshot(sampler_slot *slot, const ucontext_t *context, uint64_t timestamp) {
    sample_snapshot snapshot;
    memset(&snapshot, 0, sizeof snapshot);
    copy_registers(&snapshot, context);
    snapshot.timestamp_ticks = timestamp;
    snapshot.tid = (uint32_t)slot->tid;
    snapshot.module_generation = hitch_unwind_module_generation();

    uint64_t base = snapshot.registers[SNAPSHOT_REG_RSP] & ~(uint64_t)7;
    uint64_t low = atomic_load_explicit(&slot->stack_low, memory_order_relaxed);
    uint64_t high = atomic_load_explicit(&slot->stack_high, memory_order_acquire);
    uint64_t words = 0;
    if (high != 0 && base >= low && base < high) {
        uint64_t bytes = high - base;
        uint64_t limit = atomic_load_explicit(&stack_copy_bytes, memory_order_relaxed);
        if (bytes > limit) bytes = limit;
        words = bytes / sizeof(uint64_t);
        snapshot.stack_base = base;
        snapshot.stack_limit = high;
    } else {
        snapshot.flags = SNAPSHOT_STACK_UNKNOWN;
    }
    snapshot.stack_words = (uint32_t)words;

    uint64_t head = atomic_load_explicit(&slot->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_acquire);
    uint64_t needed = SNAPSHOT_HEADER_WORDS + words;
    if (head - tail + needed > slot->mask + 1) {
        atomic_fetch_add_explicit(&samples_dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t *ring = slot->ring;
    uint64_t mask = slot->mask;
    const uint64_t *header = (const uint64_t *)&snapshot;
    for (uint64_t i = 0; i < SNAPSHOT_HEADER_WORDS; i++) ring[(head + i) & mask] = header[i];
    if (words > 0) {
        uint64_t start = (head + SNAPSHOT_HEADER_WORDS) & mask;
        uint64_t first = mask + 1 - start;
        if (first > words) first = words;
        copy_stack_words(ring + start, (const uint64_t *)(uintptr_t)base, first);
        if (words > first) copy_stack_words(ring, (const uint64_t *)(uintptr_t)(base + first * 8), words - first);
    }
    atomic_store_explicit(&slot->head, head + needed, memory_order_release);
    atomic_fetch_add_explicit(&samples_taken, 1, memory_order_relaxed);
    // Passing a quarter full wakes the drain (once per crossing: write() is async-signal-safe, and
    // the eventfd stays readable until the drain reads it); three quarters are left for its latency.
    uint64_t quarter = (mask + 1) / 4;
    if (head - tail < quarter && head - tail + needed >= quarter) hitch_sampler_wake_drain();
}

// The hang watchdog's one capture slot (hitch_sampler_capture_thread). A queued SIGPROF carrying
// WATCHDOG_TOKEN asks the handler, on the watched thread, to copy its registers and stack here.
// States: IDLE -> ASKED (the watchdog, before the signal) -> FILLING (the handler's CAS) -> FILLED;
// the watchdog gives up with ASKED -> IDLE, so a late signal finds nothing to fill.
#define WATCHDOG_TOKEN ((void *)(uintptr_t)0x68616e67)
#define WATCHDOG_STACK_WORDS (HITCH_DEFAULT_STACK_COPY_BYTES / 8)
enum { WATCHDOG_IDLE = 0, WATCHDOG_ASKED = 1, WATCHDOG_FILLING = 2, WATCHDOG_FILLED = 3 };
static _Atomic uint32_t watchdog_state;
static sample_snapshot watchdog_snapshot;
static uint64_t watchdog_stack[WATCHDOG_STACK_WORDS];
static _Atomic uint64_t watchdog_stack_low, watchdog_stack_high;

static void take_watchdog_snapshot(const ucontext_t *context, uint64_t timestamp) {
    sample_snapshot *snapshot = &watchdog_snapshot;
    memset(snapshot, 0, sizeof *snapshot);
    copy_registers(snapshot, context);
    snapshot->timestamp_ticks = timestamp;
    snapshot->module_generation = hitch_unwind_module_generation();
    uint64_t base = snapshot->registers[SNAPSHOT_REG_RSP] & ~(uint64_t)7;
    uint64_t low = atomic_load_explicit(&watchdog_stack_low, memory_order_relaxed);
    uint64_t high = atomic_load_explicit(&watchdog_stack_high, memory_order_relaxed);
    if (high != 0 && base >= low && base < high) {
        uint64_t words = (high - base) / sizeof(uint64_t);
        if (words > WATCHDOG_STACK_WORDS) words = WATCHDOG_STACK_WORDS;
        copy_stack_words(watchdog_stack, (const uint64_t *)(uintptr_t)base, words);
        snapshot->stack_words = (uint32_t)words;
        snapshot->stack_base = base;
        snapshot->stack_limit = high;
    } else {
        snapshot->flags = SNAPSHOT_STACK_UNKNOWN;
    }
}

/// Counts one duration in a histogram of HANDLER_BUCKETS buckets (atomic add: signal-safe).
static void record_duration(_Atomic uint64_t *histogram, unsigned shift, uint64_t ticks) {
    uint64_t bucket = ticks >> shift;
    if (bucket >= HANDLER_BUCKETS) bucket = HANDLER_BUCKETS - 1;
    atomic_fetch_add_explicit(&histogram[bucket], 1, memory_order_relaxed);
}

static void on_sample_signal(int signo, siginfo_t *info, void *context) {
    (void)signo;
    int saved_errno = errno;
    if (info != NULL && info->si_code == SI_TIMER) {
        uint64_t entered = hitch_now();
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
                take_snapshot(slot, (const ucontext_t *)context, entered);
                record_duration(handler_ticks_histogram, HANDLER_BUCKET_SHIFT, hitch_now() - entered);
            }
            atomic_store_explicit(&slot->state, SLOT_ARMED, memory_order_release);
        }
    } else if (info != NULL && info->si_code == SI_QUEUE && info->si_value.sival_ptr == WATCHDOG_TOKEN) {
        uint32_t expected = WATCHDOG_ASKED;
        if (atomic_compare_exchange_strong_explicit(&watchdog_state, &expected, WATCHDOG_FILLING,
                                                    memory_order_acquire, memory_order_relaxed)) {
            take_watchdog_snapshot((const ucontext_t *)context, hitch_now());
            atomic_store_explicit(&watchdog_state, WATCHDOG_FILLED, memory_order_release);
        }
    }
    errno = saved_errno;
}

// MARK: - Control path (never runs in a signal handler; serialized by control_lock)

static void unregister_at_thread_exit(void *value);
static int prepare_unwinder(uint32_t copy_bytes);
void hitch_sampler_reset_handler_times(void);

static void setup(void) {
    // hitch_backtrace_capture's local unwinds: a per-thread cache avoids libunwind's global lock.
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    pthread_key_create(&registration_key, unregister_at_thread_exit);
}

/// The mapping of /proc/self/maps that contains `address` (its bounds), or the main thread's
/// "[stack]" mapping when `address` is 0. Returns 1 if found. Control path / drain thread only.
static int mapping_containing(uint64_t address, uint64_t *low, uint64_t *high) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return 0;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, maps) != NULL) {
        unsigned long start = 0, end = 0;
        if (sscanf(line, "%lx-%lx", &start, &end) != 2) continue;
        if (address == 0 ? strstr(line, "[stack]") != NULL : (address >= start && address < end)) {
            *low = start;
            *high = end;
            found = 1;
        }
    }
    fclose(maps);
    return found;
}

/// Publishes a thread's stack bounds to its handler (low first: the handler reads high first).
static void set_stack_bounds(sampler_slot *slot, uint64_t low, uint64_t high) {
    atomic_store_explicit(&slot->stack_high, 0, memory_order_release);
    atomic_store_explicit(&slot->stack_low, low, memory_order_relaxed);
    atomic_store_explicit(&slot->stack_high, high, memory_order_release);
}

/// The main thread's stack: the "[stack]" mapping's top, and as low as the stack may grow.
static void learn_main_thread_stack(sampler_slot *slot) {
    uint64_t low = 0, high = 0;
    if (!mapping_containing(0, &low, &high)) return;
    struct rlimit limit;
    uint64_t room = 1ull << 30;
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < room)
        room = limit.rlim_cur;
    set_stack_bounds(slot, high > room ? high - room : 0, high);
}

/// The calling thread's own stack, from its pthread attributes.
static void learn_current_thread_stack(sampler_slot *slot) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
    void *address = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attributes, &address, &size) == 0 && size > 0)
        set_stack_bounds(slot, (uint64_t)(uintptr_t)address, (uint64_t)(uintptr_t)address + size);
    pthread_attr_destroy(&attributes);
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

/// Closes a slot's perf event and unmaps its ring. Control path; takes pop_lock (the drain may be
/// reading the ring). Records still unread are counted as dropped.
static void release_perf(sampler_slot *slot) {
    if (slot->perf.fd < 0 && slot->perf.page == NULL) return;
    pthread_mutex_lock(&pop_lock);
    sample_snapshot ignored;
    uint64_t time_ns = 0, lost = 0, unread = 0, word = 0;
    while (perf_source_read(&slot->perf, &ignored, &word, 0, 0, &time_ns, &lost)) unread += 1;
    if (unread + lost > 0) {
        atomic_fetch_add_explicit(&samples_dropped, unread + lost, memory_order_relaxed);
        atomic_fetch_add_explicit(&perf_samples_lost, unread + lost, memory_order_relaxed);
    }
    perf_source_close(&slot->perf);
    slot->perf_hung_up = 0;
    pthread_mutex_unlock(&pop_lock);
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
        if (slot->tid == tid && (slot->registered || slot->armed_with)) { *index_out = i; return 0; }
        if (reusable < 0 && !slot->registered && !slot->armed_with &&
            atomic_load_explicit(&slot->state, memory_order_acquire) == SLOT_IDLE &&
            atomic_load_explicit(&slot->head, memory_order_acquire) == atomic_load_explicit(&slot->tail, memory_order_acquire) &&
            !perf_source_pending(&slot->perf))
            reusable = (int)i;
    }
    if (reusable < 0) return ENOSPC;
    sampler_slot *slot = atomic_load_explicit(&slots[reusable], memory_order_acquire);
    if (slot == NULL) {
        slot = calloc(1, sizeof *slot);
        if (slot == NULL) return ENOMEM;
        slot->perf.fd = -1;
        atomic_store_explicit(&slots[reusable], slot, memory_order_release);
    }
    if (slot->tid != tid) {
        set_stack_bounds(slot, 0, 0);
        slot->tid = tid;
        if (tid == getpid()) learn_main_thread_stack(slot);
    }
    *index_out = (uint32_t)reusable;
    return 0;
}

/// A new generation for the slot: a signal still queued from an older timer carries the old one.
static uint32_t next_generation(sampler_slot *slot) {
    uint32_t generation = (atomic_load_explicit(&slot->generation, memory_order_relaxed) + 1) & 0x7fffffffu;
    atomic_store_explicit(&slot->generation, generation, memory_order_relaxed);
    return generation;
}

/// A CLOCK_MONOTONIC timer that sends the sampling signal to thread `tid` with `token` as its
/// value (the handler's slot index and generation); not yet set. 0 or errno.
static int create_signal_timer(pid_t tid, uintptr_t token, timer_t *timer) {
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SAMPLER_SIGNAL;
    event._sigev_un._tid = tid;
    event.sigev_value.sival_ptr = (void *)token;
    return timer_create(CLOCK_MONOTONIC, &event, timer) != 0 ? errno : 0;
}

static struct itimerspec timer_spec(long interval_ns, long first_ns) {
    return (struct itimerspec){
        .it_interval = {.tv_sec = interval_ns / 1000000000L, .tv_nsec = interval_ns % 1000000000L},
        .it_value = {.tv_sec = first_ns / 1000000000L, .tv_nsec = first_ns % 1000000000L},
    };
}

static int arm_timer(uint32_t index, sampler_slot *slot) {
    if (slot->ring == NULL) {
        size_t words = (size_t)1 << ring_words_log2;
        uint64_t *ring = calloc(words, sizeof(uint64_t));
        if (ring == NULL) return ENOMEM;
        // Touch every page now: a first write in the handler would page-fault (microseconds each).
        memset(ring, 0, words * sizeof(uint64_t));
        slot->mask = words - 1;
        slot->ring = ring; // published to the handler by the state's release store below
    }
    uint32_t generation = next_generation(slot);
    int created = create_signal_timer(slot->tid, ((uintptr_t)generation << 16) | index, &slot->timer);
    if (created != 0) return created;
    slot->armed_with = HITCH_SAMPLER_SOURCE_SIGNAL;
    atomic_store_explicit(&slot->state, SLOT_ARMED, memory_order_release);

    // Stagger first expiries so the threads' signals don't all land on the same tick.
    long first = session_interval_ns + (long)((index * 37003L) % session_interval_ns);
    struct itimerspec spec = timer_spec(session_interval_ns, first);
    if (timer_settime(slot->timer, 0, &spec, NULL) != 0) {
        int error = errno;
        atomic_store_explicit(&slot->state, SLOT_IDLE, memory_order_release);
        timer_delete(slot->timer);
        slot->armed_with = 0;
        return error;
    }
    return 0;
}

/// The ring's data area: the configured ring size (the kernel reserves the full stack copy in every
/// record, however shallow the stack: 63 records of 32 KiB in 2 MiB), at least 8 full records; the
/// minimum the locked-memory budget may halve it to is 4 records.
static uint64_t perf_ring_bytes(uint64_t record_bytes, int minimum) {
    uint64_t wanted = minimum ? 4 * record_bytes : (uint64_t)8 << ring_words_log2;
    if (!minimum && wanted < 8 * record_bytes) wanted = 8 * record_bytes;
    uint64_t bytes = 4096;
    while (bytes < wanted) bytes *= 2;
    return bytes;
}

static int arm_perf(sampler_slot *slot) {
    release_perf(slot); // a previous session's ring, already drained (slot_for_thread, finish)
    uint32_t copy = (uint32_t)atomic_load_explicit(&stack_copy_bytes, memory_order_relaxed);
    uint64_t record = (uint64_t)copy + 512; // the stack copy plus the header, registers and sizes
    perf_source source;
    int error = perf_source_open(&source, slot->tid, (uint64_t)session_interval_ns, copy,
                                 perf_ring_bytes(record, 0), perf_ring_bytes(record, 1));
    if (error == ESRCH) return EINVAL; // the thread exited (as timer_create reports it)
    if (error != 0) return error;
    pthread_mutex_lock(&pop_lock);
    slot->perf = source;
    pthread_mutex_unlock(&pop_lock);
    (void)next_generation(slot); // no queued signal of an older timer may sample this slot
    slot->armed_with = HITCH_SAMPLER_SOURCE_PERF;
    atomic_store_explicit(&slot->state, SLOT_ARMED, memory_order_release);
    error = perf_source_enable(&slot->perf);
    if (error != 0) {
        atomic_store_explicit(&slot->state, SLOT_IDLE, memory_order_release);
        slot->armed_with = 0;
        release_perf(slot);
    } else {
        // A drain already waiting polls the rings it knew: it must poll this one too, or the
        // ring fills before its timeout (a thread registered after the start).
        hitch_sampler_wake_drain();
    }
    return error;
}

static int arm(uint32_t index) {
    sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
    if (slot->armed_with) return 0;
    if (session_source == HITCH_SAMPLER_SOURCE_PERF) {
        int error = arm_perf(slot);
        if (error == 0 || error == EINVAL) return error;
        // This thread's event was refused (its ring did not fit the locked-memory budget, say):
        // it is sampled by the timer signal instead, counted and reported.
        atomic_fetch_add_explicit(&perf_fallback_threads, 1, memory_order_relaxed);
        atomic_store_explicit(&perf_refusal, error, memory_order_relaxed);
    }
    return arm_timer(index, slot);
}

static void disarm(sampler_slot *slot) {
    if (!slot->armed_with) return;
    // Close the gate first, waiting out a handler in flight on the sampled thread.
    for (;;) {
        uint32_t expected = SLOT_ARMED;
        if (atomic_compare_exchange_weak_explicit(&slot->state, &expected, SLOT_IDLE,
                                                  memory_order_acq_rel, memory_order_relaxed)) break;
        if (expected == SLOT_IDLE) break;
        sched_yield();
    }
    if (slot->armed_with == HITCH_SAMPLER_SOURCE_SIGNAL) timer_delete(slot->timer);
    else perf_source_disable(&slot->perf); // the ring stays for the drain; released at finish or reuse
    slot->armed_with = 0;
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
            if (slot != NULL && slot->tid == tid && slot->armed_with) { already = 1; break; }
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
    uint32_t copy_bytes = config && config->stack_copy_bytes ? config->stack_copy_bytes : HITCH_DEFAULT_STACK_COPY_BYTES;
    uint32_t source = config ? config->source : HITCH_SAMPLER_SOURCE_AUTOMATIC;
    copy_bytes &= ~7u; // whole words (the kernel requires it of perf's stack copies)
    if (rate > 10000 || words_log2 < 10 || words_log2 > 24 || copy_bytes < 256 || copy_bytes > (1u << 20) ||
        source > HITCH_SAMPLER_SOURCE_PERF ||
        ((uint64_t)copy_bytes / 8 + SNAPSHOT_HEADER_WORDS) * 4 > (1ull << words_log2) ||
        (scope & ~(uint32_t)(HITCH_SAMPLE_MAIN_THREAD | HITCH_SAMPLE_REGISTERED_THREADS | HITCH_SAMPLE_ALL_THREADS)))
        return EINVAL;
    pthread_once(&setup_once, setup);
    pthread_mutex_lock(&control_lock);
    if (atomic_load(&session) != SESSION_STOPPED) { pthread_mutex_unlock(&control_lock); return EBUSY; }
    if (atomic_load(&wake_fd) < 0) atomic_store(&wake_fd, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    hitch_sampler_reset_handler_times(); // the figures describe one session
    session_interval_ns = 1000000000L / (long)rate;
    atomic_store(&perf_fallback_threads, 0);
    atomic_store(&perf_refusal, 0);
    int error = 0;
    // perf events where the kernel permits them (a probe on this thread says), else the timer.
    if (source != HITCH_SAMPLER_SOURCE_SIGNAL) {
        int refusal = copy_bytes > PERF_SOURCE_MAX_STACK_BYTES ? EMSGSIZE : 0;
        // Probed once per process once it passes (a thread refused later falls back on its own).
        static int perf_probe_passed;
        if (refusal == 0 && !perf_probe_passed) {
            perf_source probe;
            refusal = perf_source_open(&probe, 0, (uint64_t)session_interval_ns, copy_bytes, 4096, 4096);
            if (refusal == 0) perf_source_close(&probe);
            perf_probe_passed = refusal == 0;
        }
        if (refusal != 0 && source == HITCH_SAMPLER_SOURCE_PERF) error = refusal;
        atomic_store(&perf_refusal, refusal);
        source = refusal == 0 ? HITCH_SAMPLER_SOURCE_PERF : HITCH_SAMPLER_SOURCE_SIGNAL;
    }
    if (error == 0 && source == HITCH_SAMPLER_SOURCE_PERF) {
        double tps = config && config->ticks_per_second ? (double)config->ticks_per_second : hitch_clock_calibrate(20000000);
        ticks_per_ns = tps / 1e9;
    }
    // The handler is installed for perf sessions too: a thread whose event is refused falls back.
    if (error == 0) error = install_handler();
    if (error == 0) error = prepare_unwinder(copy_bytes);
    if (error == 0) {
        session_source = source;
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
                if (slot != NULL) { disarm(slot); release_perf(slot); }
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
    atomic_store(&session, SESSION_STOPPING);
    pthread_mutex_unlock(&control_lock);
    hitch_sampler_wake_drain();
    return 0;
}

/// Async-signal-safe (the handler calls it): one atomic load and one write().
void hitch_sampler_wake_drain(void) {
    int fd = atomic_load(&wake_fd);
    uint64_t one = 1;
    if (fd >= 0 && write(fd, &one, sizeof one) < 0) { /* counter full: already signalled; the drain's timeout still comes */ }
}

void hitch_sampler_wait_for_samples(uint64_t timeout_ns) {
    struct pollfd fds[MAX_THREADS + 1];
    uint32_t owners[MAX_THREADS + 1];
    nfds_t count = 0;
    int wake = atomic_load(&wake_fd);
    if (wake >= 0) fds[count++] = (struct pollfd){.fd = wake, .events = POLLIN};
    // Perf rings wake their poller when a quarter full (sample_perf.c sets the watermark).
    pthread_mutex_lock(&pop_lock);
    for (uint32_t i = 0; i < MAX_THREADS; i++) {
        sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (slot == NULL || slot->perf.fd < 0 || slot->perf_hung_up) continue;
        owners[count] = i;
        fds[count++] = (struct pollfd){.fd = slot->perf.fd, .events = POLLIN};
    }
    pthread_mutex_unlock(&pop_lock);
    // An fd closed meanwhile (release_perf) reports POLLNVAL or waits on nothing until the timeout:
    // either way the next wait polls the current set.
    int timeout_ms = (int)((timeout_ns + 999999) / 1000000);
    if (poll(fds, count, timeout_ms) <= 0) return;
    if (wake >= 0 && (fds[0].revents & POLLIN)) {
        uint64_t value;
        if (read(wake, &value, sizeof value) < 0) { /* EAGAIN: another reader took it */ }
    }
    pthread_mutex_lock(&pop_lock);
    for (nfds_t k = wake >= 0 ? 1 : 0; k < count; k++) {
        if (!(fds[k].revents & (POLLHUP | POLLERR))) continue;
        // The sampled thread exited: its fd would report this at once forever.
        sampler_slot *slot = atomic_load_explicit(&slots[owners[k]], memory_order_acquire);
        if (slot != NULL && slot->perf.fd == fds[k].fd) slot->perf_hung_up = 1;
    }
    pthread_mutex_unlock(&pop_lock);
}

void hitch_sampler_finish(void) {
    pthread_mutex_lock(&control_lock);
    if (atomic_load(&session) == SESSION_STOPPING) {
        // The drain has read every ring: the perf events and their locked memory go now.
        for (uint32_t i = 0; i < MAX_THREADS; i++) {
            sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
            if (slot != NULL && !slot->armed_with) release_perf(slot);
        }
        atomic_store(&session, SESSION_STOPPED);
    }
    pthread_mutex_unlock(&control_lock);
}

uint32_t hitch_sampler_source(void) {
    pthread_mutex_lock(&control_lock);
    uint32_t source = session_source;
    pthread_mutex_unlock(&control_lock);
    return source;
}

int hitch_sampler_is_running(void) { return atomic_load(&session) == SESSION_RUNNING; }

int hitch_sampler_register_current_thread(void) {
    pthread_once(&setup_once, setup);
    pid_t tid = current_tid();
    pthread_mutex_lock(&control_lock);
    uint32_t index;
    int error = slot_for_thread(tid, &index);
    if (error == 0) {
        sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
        slot->registered = 1;
        learn_current_thread_stack(slot);
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
            if (slot != NULL && slot->armed_with && !slot->registered &&
                syscall(SYS_tgkill, getpid(), slot->tid, 0) != 0 && errno == ESRCH)
                disarm(slot);
        }
        (void)scan_all_threads(&armed);
    }
    pthread_mutex_unlock(&control_lock);
    return armed;
}

// MARK: - The floor: taking samples with none of the sampler's work (hitch bench sample)

// The token of the floor's timer: an index past every slot, so the handler returns at its first
// check. Control path only (control_lock).
#define FLOOR_TOKEN ((uintptr_t)0xffff)
static timer_t floor_timer;
static int floor_timer_armed;
static perf_source floor_perf = {.fd = -1};

int hitch_sampler_floor_start(uint32_t source, uint32_t rate_hz) {
    if (rate_hz == 0 || rate_hz > 10000 || (source != HITCH_SAMPLER_SOURCE_SIGNAL && source != HITCH_SAMPLER_SOURCE_PERF))
        return EINVAL;
    pthread_mutex_lock(&control_lock);
    int error = floor_timer_armed || floor_perf.fd >= 0 ? EBUSY : 0;
    long interval = 1000000000L / (long)rate_hz;
    if (error == 0 && source == HITCH_SAMPLER_SOURCE_PERF) {
        // A ring that holds a second of bare records at 10 kHz; nobody reads it.
        error = perf_source_open_bare(&floor_perf, current_tid(), (uint64_t)interval, 1 << 18);
        if (error == 0) error = perf_source_enable(&floor_perf);
        if (error != 0) perf_source_close(&floor_perf);
    } else if (error == 0) {
        error = install_handler();
        if (error == 0) error = create_signal_timer(current_tid(), FLOOR_TOKEN, &floor_timer);
        if (error == 0) {
            struct itimerspec spec = timer_spec(interval, interval);
            if (timer_settime(floor_timer, 0, &spec, NULL) != 0) { error = errno; timer_delete(floor_timer); }
            else floor_timer_armed = 1;
        }
    }
    pthread_mutex_unlock(&control_lock);
    return error;
}

void hitch_sampler_floor_stop(void) {
    pthread_mutex_lock(&control_lock);
    if (floor_timer_armed) { timer_delete(floor_timer); floor_timer_armed = 0; }
    if (floor_perf.fd >= 0) { perf_source_disable(&floor_perf); perf_source_close(&floor_perf); }
    pthread_mutex_unlock(&control_lock);
}

// MARK: - Consumer (the drain thread; everything below runs under pop_lock)

typedef struct {
    hitch_sample_info info;
    uint64_t frames[HITCH_MAX_FRAMES];
} unwound_sample;

/// A thread whose stack bounds the drain should look up (its SP from an uncopied snapshot).
typedef struct {
    uint32_t slot;
    pid_t tid;
    uint64_t sp;
} bounds_request;

static unwound_sample ready[BATCH_SAMPLES];
static uint32_t ready_count, ready_next;
static uint64_t *scratch;            // one raw record's stack words, linear
static uint64_t scratch_words;
static uint32_t next_slot;
static bounds_request requests[BATCH_SAMPLES];
static uint32_t request_count;

static int refresh_modules_callback(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info; (void)size; (void)data;
    hitch_unwind_refresh_modules();
    return 1;
}

/// Sizes the drain's scratch buffer for `copy_bytes` snapshots and builds the module table, so
/// the first snapshots carry a generation the table knows. Control path, before any timer is armed.
static int prepare_unwinder(uint32_t copy_bytes) {
    int error = 0;
    pthread_mutex_lock(&pop_lock);
    uint64_t words = copy_bytes / sizeof(uint64_t);
    if (words > scratch_words) {
        uint64_t *grown = realloc(scratch, words * sizeof(uint64_t));
        if (grown == NULL) error = ENOMEM;
        else { scratch = grown; scratch_words = words; }
    }
    if (error == 0) {
        atomic_store_explicit(&stack_copy_bytes, copy_bytes, memory_order_relaxed);
        dl_iterate_phdr(refresh_modules_callback, NULL);
    }
    pthread_mutex_unlock(&pop_lock);
    return error;
}

// The trace clock and CLOCK_MONOTONIC read together at the start of each batch: a perf record's
// time converts through this pair, so the rate's calibration error scales with the record's age
// (milliseconds), not with the session's length.
static uint64_t batch_ticks, batch_ns;

static uint64_t ticks_from_monotonic(uint64_t ns) {
    if (!hitch_clock_is_tsc()) return ns; // the trace clock is CLOCK_MONOTONIC itself
    double delta = (double)(int64_t)(ns - batch_ns) * ticks_per_ns;
    return batch_ticks + (uint64_t)(int64_t)delta;
}

/// Reads the next sample of the slot's perf ring into `snapshot` and `scratch`, on the trace's clock
/// and with the module generation of its time. Counts what the kernel lost.
static int pop_perf_record(sampler_slot *slot, sample_snapshot *snapshot) {
    uint64_t time_ns = 0, lost = 0;
    uint64_t top = atomic_load_explicit(&slot->stack_high, memory_order_acquire);
    int found = perf_source_read(&slot->perf, snapshot, scratch, scratch_words, top, &time_ns, &lost);
    if (lost > 0) {
        atomic_fetch_add_explicit(&samples_dropped, lost, memory_order_relaxed);
        atomic_fetch_add_explicit(&perf_samples_lost, lost, memory_order_relaxed);
    }
    if (!found) return 0;
    atomic_fetch_add_explicit(&samples_taken, 1, memory_order_relaxed);
    snapshot->timestamp_ticks = ticks_from_monotonic(time_ns);
    snapshot->module_generation = hitch_unwind_module_generation_at(time_ns);
    // The kernel copied from SP without knowing where the stack ends: the known top bounds it.
    uint64_t copied_end = snapshot->stack_base + (uint64_t)snapshot->stack_words * 8;
    uint64_t high = atomic_load_explicit(&slot->stack_high, memory_order_acquire);
    uint64_t low = atomic_load_explicit(&slot->stack_low, memory_order_relaxed);
    if (high != 0 && snapshot->stack_base >= low && snapshot->stack_base < high) {
        if (copied_end > high) snapshot->stack_words = (uint32_t)((high - snapshot->stack_base) / 8);
        snapshot->stack_limit = high;
    } else {
        snapshot->stack_limit = copied_end;
    }
    return 1;
}

/// Moves the signal ring's oldest raw snapshot into `snapshot` and `scratch`.
static int pop_signal_record(sampler_slot *slot, sample_snapshot *snapshot) {
    uint64_t head = atomic_load_explicit(&slot->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&slot->tail, memory_order_relaxed);
    if (head == tail) return 0;
    const uint64_t *ring = slot->ring;
    uint64_t mask = slot->mask;
    uint64_t *header = (uint64_t *)snapshot;
    for (uint64_t i = 0; i < SNAPSHOT_HEADER_WORDS; i++) header[i] = ring[(tail + i) & mask];
    uint64_t words = snapshot->stack_words;
    uint64_t kept = words <= scratch_words ? words : scratch_words;
    uint64_t start = (tail + SNAPSHOT_HEADER_WORDS) & mask;
    uint64_t first = mask + 1 - start;
    if (first > kept) first = kept;
    memcpy(scratch, ring + start, first * sizeof(uint64_t));
    if (kept > first) memcpy(scratch + first, ring, (kept - first) * sizeof(uint64_t));
    snapshot->stack_words = (uint32_t)kept;
    atomic_store_explicit(&slot->tail, tail + SNAPSHOT_HEADER_WORDS + words, memory_order_release);
    return 1;
}

/// Moves the oldest snapshot of some slot (round robin; a slot's perf ring first) into `snapshot`
/// and `scratch`.
static sampler_slot *pop_snapshot(sample_snapshot *snapshot, uint32_t *slot_index) {
    for (uint32_t step = 0; step < MAX_THREADS; step++) {
        uint32_t index = (next_slot + step) % MAX_THREADS;
        sampler_slot *slot = atomic_load_explicit(&slots[index], memory_order_acquire);
        if (slot == NULL) continue;
        if (!pop_perf_record(slot, snapshot) && !pop_signal_record(slot, snapshot)) continue;
        next_slot = index + 1;
        *slot_index = index;
        return slot;
    }
    return NULL;
}

/// The batch: runs inside dl_iterate_phdr, so the loader's write lock is held and no object can be
/// unmapped while its memory is read (see sample_unwind.c). Unwinds up to BATCH_SAMPLES snapshots.
static int unwind_batch_callback(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info; (void)size; (void)data;
    hitch_unwind_refresh_modules();
    hitch_clock_pair(&batch_ticks, &batch_ns);
    sample_snapshot snapshot;
    uint32_t index = 0;
    while (ready_count < BATCH_SAMPLES) {
        uint64_t started = hitch_now();
        sampler_slot *slot = pop_snapshot(&snapshot, &index);
        if (slot == NULL) break;
        if (request_count < BATCH_SAMPLES && atomic_load_explicit(&slot->stack_high, memory_order_relaxed) == 0)
            requests[request_count++] = (bounds_request){index, (pid_t)snapshot.tid, snapshot.registers[SNAPSHOT_REG_RSP]};
        unwound_sample *out = &ready[ready_count];
        unwind_end end = UNWIND_COMPLETE;
        uint64_t needed = 0;
        uint32_t depth = hitch_unwind_snapshot(&snapshot, scratch, out->frames, HITCH_MAX_FRAMES, &end, &needed);
        record_duration(unwind_ticks_histogram, UNWIND_BUCKET_SHIFT, hitch_now() - started);
        atomic_fetch_add_explicit(&unwind_ends[end], 1, memory_order_relaxed);
        if (end == UNWIND_COMPLETE) {
            uint32_t bucket = 0;
            while (bucket < NEEDED_BUCKETS - 1 && needed > (256ull << bucket)) bucket += 1;
            atomic_fetch_add_explicit(&stack_needed_histogram[bucket], 1, memory_order_relaxed);
        }
        if (depth == 0) { atomic_fetch_add_explicit(&samples_discarded, 1, memory_order_relaxed); continue; }
        out->info.tid = (pid_t)snapshot.tid;
        out->info.depth = depth;
        out->info.timestamp_ticks = snapshot.timestamp_ticks;
        ready_count += 1;
    }
    return 1;
}

/// Threads found by the /proc scan have unknown stacks until their first sample shows an SP: the
/// mapping that contains it bounds later copies. Outside the loader's lock (reads /proc).
static void learn_requested_stacks(void) {
    for (uint32_t i = 0; i < request_count; i++) {
        sampler_slot *slot = atomic_load_explicit(&slots[requests[i].slot], memory_order_acquire);
        uint64_t low = 0, high = 0;
        if (slot == NULL || slot->tid != requests[i].tid || atomic_load(&slot->stack_high) != 0) continue;
        if (mapping_containing(requests[i].sp, &low, &high) && slot->tid == requests[i].tid)
            set_stack_bounds(slot, low, high);
    }
    request_count = 0;
}

static int any_snapshot_pending(void) {
    for (uint32_t i = 0; i < MAX_THREADS; i++) {
        sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (slot != NULL && (atomic_load_explicit(&slot->head, memory_order_acquire) !=
                                 atomic_load_explicit(&slot->tail, memory_order_relaxed) ||
                             perf_source_pending(&slot->perf)))
            return 1;
    }
    return 0;
}

int hitch_sampler_pop(hitch_sample_info *info, uint64_t *frames, uint32_t capacity) {
    int found = 0;
    pthread_mutex_lock(&pop_lock);
    if (ready_next == ready_count && scratch != NULL) {
        ready_next = ready_count = 0;
        if (any_snapshot_pending()) {
            dl_iterate_phdr(unwind_batch_callback, NULL);
            learn_requested_stacks();
        }
    }
    if (ready_next < ready_count) {
        const unwound_sample *sample = &ready[ready_next++];
        uint32_t kept = sample->info.depth < capacity ? sample->info.depth : capacity;
        *info = sample->info;
        info->depth = kept;
        memcpy(frames, sample->frames, kept * sizeof(uint64_t));
        found = 1;
    }
    pthread_mutex_unlock(&pop_lock);
    return found;
}

// MARK: - The hang watchdog's capture (the watchdog thread; unwinds under pop_lock)

static uint32_t watchdog_depth;
static uint64_t *watchdog_frames;
static uint32_t watchdog_capacity;

static int unwind_watchdog_callback(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info; (void)size; (void)data;
    hitch_unwind_refresh_modules();
    unwind_end end = UNWIND_COMPLETE;
    uint64_t needed = 0;
    watchdog_depth = hitch_unwind_snapshot(&watchdog_snapshot, watchdog_stack, watchdog_frames, watchdog_capacity, &end, &needed);
    return 1;
}

uint32_t hitch_sampler_capture_thread(pthread_t thread, pid_t tid, uint64_t stack_low, uint64_t stack_high,
                                      uint64_t *frames, uint32_t capacity, uint64_t timeout_ns, int *not_handled) {
    *not_handled = 0;
    pthread_mutex_lock(&control_lock);
    int error = install_handler();
    pthread_mutex_unlock(&control_lock);
    if (error != 0) { *not_handled = 1; return 0; }
    atomic_store_explicit(&watchdog_stack_high, 0, memory_order_relaxed);
    atomic_store_explicit(&watchdog_stack_low, stack_low, memory_order_relaxed);
    atomic_store_explicit(&watchdog_stack_high, stack_high, memory_order_relaxed);
    atomic_store_explicit(&watchdog_state, WATCHDOG_ASKED, memory_order_release);
    (void)tid;
    union sigval value;
    value.sival_ptr = WATCHDOG_TOKEN;
    if (pthread_sigqueue(thread, SAMPLER_SIGNAL, value) != 0) {
        atomic_store_explicit(&watchdog_state, WATCHDOG_IDLE, memory_order_release);
        *not_handled = 1;
        return 0;
    }
    uint64_t deadline = hitch_monotonic_ns() + timeout_ns;
    while (atomic_load_explicit(&watchdog_state, memory_order_acquire) != WATCHDOG_FILLED) {
        if (hitch_monotonic_ns() >= deadline) {
            uint32_t expected = WATCHDOG_ASKED;
            if (atomic_compare_exchange_strong_explicit(&watchdog_state, &expected, WATCHDOG_IDLE,
                                                        memory_order_acq_rel, memory_order_acquire)) {
                *not_handled = 1;
                return 0;
            }
            // The handler is copying now: it finishes in microseconds.
        }
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    pthread_mutex_lock(&pop_lock);
    watchdog_frames = frames;
    watchdog_capacity = capacity;
    watchdog_depth = 0;
    dl_iterate_phdr(unwind_watchdog_callback, NULL);
    uint32_t depth = watchdog_depth;
    pthread_mutex_unlock(&pop_lock);
    atomic_store_explicit(&watchdog_state, WATCHDOG_IDLE, memory_order_release);
    return depth;
}

_Static_assert(NEEDED_BUCKETS <= HANDLER_BUCKETS, "percentile_bucket reads at most HANDLER_BUCKETS counters");

/// The bucket that holds the `quantile` of a histogram of `buckets` counters, or -1 when it counted
/// nothing. Each counter is read once, so counts added meanwhile cannot move the rank past the end.
static int32_t percentile_bucket(_Atomic uint64_t *histogram, uint32_t buckets, double quantile) {
    uint64_t counts[HANDLER_BUCKETS], total = 0;
    for (uint32_t i = 0; i < buckets; i++) {
        counts[i] = atomic_load_explicit(&histogram[i], memory_order_relaxed);
        total += counts[i];
    }
    if (total == 0) return -1;
    uint64_t rank = (uint64_t)(quantile * (double)(total - 1)), seen = 0;
    for (uint32_t i = 0; i < buckets; i++) {
        seen += counts[i];
        if (seen > rank) return (int32_t)i;
    }
    return (int32_t)buckets - 1;
}

/// A duration histogram's percentile: the middle of its bucket, in ticks.
static uint64_t duration_percentile(_Atomic uint64_t *histogram, unsigned shift, double quantile) {
    int32_t bucket = percentile_bucket(histogram, HANDLER_BUCKETS, quantile);
    return bucket < 0 ? 0 : ((uint64_t)bucket << shift) + (1u << shift) / 2;
}

uint64_t hitch_sampler_handler_ticks_percentile(double quantile) {
    return duration_percentile(handler_ticks_histogram, HANDLER_BUCKET_SHIFT, quantile);
}

uint64_t hitch_sampler_unwind_ticks_percentile(double quantile) {
    return duration_percentile(unwind_ticks_histogram, UNWIND_BUCKET_SHIFT, quantile);
}

void hitch_sampler_reset_handler_times(void) {
    for (uint32_t i = 0; i < HANDLER_BUCKETS; i++) {
        atomic_store_explicit(&handler_ticks_histogram[i], 0, memory_order_relaxed);
        atomic_store_explicit(&unwind_ticks_histogram[i], 0, memory_order_relaxed);
    }
    for (uint32_t i = 0; i < NEEDED_BUCKETS; i++) atomic_store_explicit(&stack_needed_histogram[i], 0, memory_order_relaxed);
}

uint64_t hitch_sampler_stack_bytes_needed_percentile(double quantile) {
    int32_t bucket = percentile_bucket(stack_needed_histogram, NEEDED_BUCKETS, quantile);
    return bucket < 0 ? 0 : 256ull << bucket;
}

void hitch_sampler_get_stats(hitch_sampler_stats *stats) {
    stats->samples_taken = atomic_load_explicit(&samples_taken, memory_order_relaxed);
    stats->samples_dropped = atomic_load_explicit(&samples_dropped, memory_order_relaxed);
    stats->timer_overruns = atomic_load_explicit(&timer_overruns, memory_order_relaxed);
    stats->unwound_complete = atomic_load_explicit(&unwind_ends[UNWIND_COMPLETE], memory_order_relaxed);
    stats->unwind_stack_unknown = atomic_load_explicit(&unwind_ends[UNWIND_STACK_UNKNOWN], memory_order_relaxed);
    stats->unwind_off_copy_end = atomic_load_explicit(&unwind_ends[UNWIND_OFF_COPY_END], memory_order_relaxed);
    stats->unwind_modules_changed = atomic_load_explicit(&unwind_ends[UNWIND_MODULES_CHANGED], memory_order_relaxed);
    stats->unwind_no_module = atomic_load_explicit(&unwind_ends[UNWIND_NO_MODULE], memory_order_relaxed);
    stats->unwind_errors = atomic_load_explicit(&unwind_ends[UNWIND_ERROR], memory_order_relaxed);
    stats->samples_discarded = atomic_load_explicit(&samples_discarded, memory_order_relaxed);
    stats->perf_samples_lost = atomic_load_explicit(&perf_samples_lost, memory_order_relaxed);
    stats->perf_refusal = atomic_load_explicit(&perf_refusal, memory_order_relaxed);
    stats->perf_fallback_threads = atomic_load_explicit(&perf_fallback_threads, memory_order_relaxed);
    stats->unwind_memo_hits = hitch_unwind_memo_hits();
    uint32_t armed = 0;
    for (uint32_t i = 0; i < MAX_THREADS; i++) {
        sampler_slot *slot = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (slot != NULL && atomic_load_explicit(&slot->state, memory_order_relaxed) != SLOT_IDLE) armed += 1;
    }
    stats->threads_sampled = armed;
}

// The unwinder behind explicit backtraces: libunwind's where it is linked.
#define HITCH_RAW_BACKTRACE(buffer, size) unw_backtrace((buffer), (size))

#else // !__linux__: no sample source (per-thread signal timers and perf events are Linux's)

#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

int hitch_sampler_start(const hitch_sampler_config *config) { (void)config; return ENOSYS; }
int hitch_sampler_stop(void) { return EALREADY; }
void hitch_sampler_finish(void) {}
int hitch_sampler_is_running(void) { return 0; }
uint32_t hitch_sampler_source(void) { return HITCH_SAMPLER_SOURCE_AUTOMATIC; }
int hitch_sampler_register_current_thread(void) { return ENOSYS; }
void hitch_sampler_unregister_current_thread(void) {}
int hitch_sampler_rescan_threads(void) { return 0; }
int hitch_sampler_pop(hitch_sample_info *info, uint64_t *frames, uint32_t capacity) {
    (void)info; (void)frames; (void)capacity;
    return 0;
}
uint64_t hitch_sampler_handler_ticks_percentile(double quantile) { (void)quantile; return 0; }
uint64_t hitch_sampler_unwind_ticks_percentile(double quantile) { (void)quantile; return 0; }
void hitch_sampler_reset_handler_times(void) {}
uint64_t hitch_sampler_stack_bytes_needed_percentile(double quantile) { (void)quantile; return 0; }
void hitch_sampler_get_stats(hitch_sampler_stats *stats) { memset(stats, 0, sizeof *stats); }
int hitch_sampler_floor_start(uint32_t source, uint32_t rate_hz) { (void)source; (void)rate_hz; return ENOSYS; }
void hitch_sampler_floor_stop(void) {}
void hitch_sampler_wait_for_samples(uint64_t timeout_ns) {
    struct timespec delay = {(time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull)};
    nanosleep(&delay, NULL);
}
void hitch_sampler_wake_drain(void) {}
uint32_t hitch_sampler_capture_thread(pthread_t thread, pid_t tid, uint64_t stack_low, uint64_t stack_high,
                                      uint64_t *frames, uint32_t capacity, uint64_t timeout_ns, int *not_handled) {
    (void)thread; (void)tid; (void)stack_low; (void)stack_high; (void)frames; (void)capacity; (void)timeout_ns;
    *not_handled = 1;
    return 0;
}

// The system's frame-pointer backtrace (execinfo) where libunwind is not linked.
#define HITCH_RAW_BACKTRACE(buffer, size) backtrace((buffer), (size))
#endif

// MARK: - Explicit backtraces (normal context, not signal handlers)

__attribute__((noinline)) int hitch_backtrace_capture(uint64_t *frames, int capacity, int skip) {
    enum { extra = 16 };
    void *raw[HITCH_MAX_FRAMES + extra];
    if (capacity <= 0) return 0;
    if (skip < 0) skip = 0;
    if (skip > extra - 1) skip = extra - 1;
    int wanted = capacity + skip + 1;
    if (wanted > HITCH_MAX_FRAMES + extra) wanted = HITCH_MAX_FRAMES + extra;
    int count = HITCH_RAW_BACKTRACE(raw, wanted);
    int written = 0;
    // raw[0] is the return address into this function (the backtrace call's caller): skipped.
    for (int i = 1 + skip; i < count && written < capacity; i++) {
        uintptr_t address = (uintptr_t)raw[i];
        if (address == 0) break;
        frames[written++] = (uint64_t)address - 1;
    }
    return written;
}
