// The recorder's slow path and bookkeeping: a bounded pool of buffers, the queue of full buffers
// the writer thread drains, and a registry of threads so a stop (or a thread's exit) never loses
// an unflushed buffer. Everything here takes one mutex; the hot path (hitch_recorder.h) never does.
// The writer also takes each active buffer's committed part while its thread keeps recording
// (hitch_writer_take_committed), so no event waits for its buffer to fill. POSIX + C11 only; the
// few platform calls are in platform.c.
#define _GNU_SOURCE
#include "hitch_recorder.h"
#include "hitch_platform.h"
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

_Thread_local hitch_cursor hitch_tls_cursor __attribute__((tls_model("initial-exec"))) = { NULL, NULL };
int hitch_recording_flag = 0;

typedef struct hitch_thread_state {
    struct hitch_thread_state *prev, *next;
    hitch_cursor *cursor;      // this thread's thread-local cursor (valid while registered)
    hitch_buffer *buffer;      // active buffer, or NULL
    int32_t tid;
    uint64_t dropped;          // events this thread dropped (written by the owner, read under `lock`)
    char name[64];
    char role[HITCH_ROLE_CAPACITY];
} hitch_thread_state;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t full_available = PTHREAD_COND_INITIALIZER;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static _Thread_local hitch_thread_state *thread_state = NULL;

static hitch_thread_state *registry = NULL;
static hitch_buffer *free_list = NULL;
static hitch_buffer *full_head = NULL, *full_tail = NULL;
static int session_active = 0;
static int session_ending = 0;
static uint64_t session_id = 0;
static uint64_t dropped_by_exited_threads = 0;   // plus every registered thread's `dropped`
static uint32_t free_count = 0;                  // buffers in free_list; read without the lock
static int flush_requested;                      // a signal handler asked for a flush (under `lock`)

// Buffer memory is mapped once per configuration and never unmapped: a thread preempted inside
// the hot path across a stop may still store into it, which must never fault.
static void *region = NULL;
static size_t region_bytes = 0;
static hitch_buffer *headers = NULL;
static uint32_t region_buffer_records = 0, region_buffer_count = 0;

int32_t hitch_current_tid(void) { return hitch_platform_thread_id(); }

// sched_state.c (hitch_sched.h, whose hitch_thread_state reader clashes with this file's type name).
void hitch_sched_join_thread(void);

// The thread's cursor as last published by `hitch_commit`, as an index into `b`, or -1 when it is
// not in `b` (NULL after a stop, or another session's buffer).
static ptrdiff_t committed_index(hitch_thread_state *st, hitch_buffer *b) {
    hitch_record *cursor = __atomic_load_n(&st->cursor->cursor, __ATOMIC_ACQUIRE);
    if (!cursor || cursor < b->records || cursor > b->records + b->capacity) return -1;
    return cursor - b->records;
}

static void enqueue_full_locked(hitch_buffer *b) {
    b->next = NULL;
    if (full_tail) full_tail->next = b; else full_head = b;
    full_tail = b;
    pthread_cond_signal(&full_available);
}

// Hands the thread's active buffer (with what the thread wrote so far) to the writer.
static void submit_active_locked(hitch_thread_state *st) {
    hitch_buffer *b = st->buffer;
    if (!b) return;
    st->buffer = NULL;
    ptrdiff_t used = committed_index(st, b);
    if (b->session != session_id || !session_active) return;   // stale: its session already ended
    // A cursor outside the buffer (cleared by a stop) leaves what the writer already took.
    b->used = used < (ptrdiff_t)b->taken ? b->taken : (uint32_t)used;
    b->tid = st->tid;
    memcpy(b->thread_name, st->name, sizeof b->thread_name);
    memcpy(b->thread_role, st->role, sizeof b->thread_role);
    enqueue_full_locked(b);
}

static void thread_exit(void *value) {
    hitch_thread_state *st = value;
    pthread_mutex_lock(&lock);
    submit_active_locked(st);
    dropped_by_exited_threads += __atomic_load_n(&st->dropped, __ATOMIC_RELAXED);
    if (st->prev) st->prev->next = st->next; else registry = st->next;
    if (st->next) st->next->prev = st->prev;
    pthread_mutex_unlock(&lock);
    hitch_tls_cursor.cursor = NULL;
    hitch_tls_cursor.limit = NULL;
    thread_state = NULL;
    free(st);
}

static void make_key(void) { pthread_key_create(&exit_key, thread_exit); }

static hitch_thread_state *current_state(void) {
    hitch_thread_state *st = thread_state;
    if (st) return st;
    pthread_once(&key_once, make_key);
    st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->tid = hitch_current_tid();
    st->cursor = &hitch_tls_cursor;
    hitch_platform_current_thread_name(st->name, sizeof st->name);
    pthread_mutex_lock(&lock);
    st->next = registry;
    if (registry) registry->prev = st;
    registry = st;
    pthread_mutex_unlock(&lock);
    pthread_setspecific(exit_key, st);
    thread_state = st;
    return st;
}

static void count_drop(hitch_thread_state *st) {
    __atomic_store_n(&st->dropped, __atomic_load_n(&st->dropped, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

hitch_record *hitch_reserve_slow(uint32_t count) {
    hitch_thread_state *st = current_state();
    if (!st) return NULL;
    // Dropping (no buffer, none free): count without taking the lock, so a writer that cannot
    // keep up is not slowed further by producers queueing on its mutex.
    if (!st->buffer && hitch_is_recording() && __atomic_load_n(&free_count, __ATOMIC_ACQUIRE) == 0) {
        count_drop(st);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    if (!session_active || session_ending || count == 0 || count > region_buffer_records) {
        // Raced with stop: never silent, count it.
        if (session_active || session_ending) count_drop(st);
        hitch_tls_cursor.cursor = NULL;
        hitch_tls_cursor.limit = NULL;
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    submit_active_locked(st);
    hitch_buffer *b = free_list;
    if (!b) {
        count_drop(st);
        hitch_tls_cursor.cursor = NULL;
        hitch_tls_cursor.limit = NULL;
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    free_list = b->next;
    __atomic_store_n(&free_count, free_count - 1, __ATOMIC_RELEASE);
    b->next = NULL;
    b->session = session_id;
    b->used = 0;
    b->taken = 0;
    st->buffer = b;
    hitch_tls_cursor.cursor = b->records;
    hitch_tls_cursor.limit = b->records + b->capacity;
    pthread_mutex_unlock(&lock);
    // Every thread that records events has its context switches recorded too (no-op after the
    // first buffer of the session): who held the CPUs while a frame thread waited for one.
    hitch_sched_join_thread();
    return b->records;
}

int hitch_recorder_begin(uint32_t buffer_records, uint32_t buffer_count) {
    if (buffer_records < 16 || buffer_count < 1) return -2;
    pthread_mutex_lock(&lock);
    if (session_active || session_ending) { pthread_mutex_unlock(&lock); return -1; }
    if (!region || region_buffer_records != buffer_records || region_buffer_count < buffer_count) {
        size_t bytes = (size_t)buffer_records * buffer_count * sizeof(hitch_record);
#ifdef MAP_POPULATE
        int populate = MAP_POPULATE;   // fault the pages in now, not on the hot path
#else
        int populate = 0;
#endif
        void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
        hitch_buffer *new_headers = calloc(buffer_count, sizeof(hitch_buffer));
        if (memory == MAP_FAILED || !new_headers) {
            if (memory != MAP_FAILED) munmap(memory, bytes);
            free(new_headers);
            pthread_mutex_unlock(&lock);
            return -2;
        }
        // The old region and headers stay mapped (see above); only their pages were released.
        region = memory;
        region_bytes = bytes;
        headers = new_headers;
        region_buffer_records = buffer_records;
        region_buffer_count = buffer_count;
    }
#ifdef MADV_POPULATE_WRITE
    else {
        // Reused after a stop released its pages: fault them in now, not on the hot path.
        madvise(region, region_bytes, MADV_POPULATE_WRITE);
    }
#endif
    free_list = NULL;
    for (uint32_t i = 0; i < buffer_count; i++) {
        hitch_buffer *b = &headers[i];
        b->records = (hitch_record *)region + (size_t)i * buffer_records;
        b->capacity = buffer_records;
        b->next = free_list;
        free_list = b;
    }
    __atomic_store_n(&free_count, buffer_count, __ATOMIC_RELEASE);
    full_head = full_tail = NULL;
    session_id += 1;
    session_active = 1;
    session_ending = 0;
    // Threads still holding a buffer of an earlier session go to the slow path on their next event.
    for (hitch_thread_state *st = registry; st; st = st->next) {
        st->buffer = NULL;
        st->cursor->cursor = NULL;
        st->cursor->limit = NULL;
    }
    __atomic_store_n(&hitch_recording_flag, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return 0;
}

void hitch_recorder_end(void) {
    pthread_mutex_lock(&lock);
    __atomic_store_n(&hitch_recording_flag, 0, __ATOMIC_SEQ_CST);
    if (session_active) {
        for (hitch_thread_state *st = registry; st; st = st->next) {
            submit_active_locked(st);
            // Another thread's cursor: a store it may be racing with lands in mapped memory and
            // leaves limit < cursor, which sends its next event to the slow path.
            st->cursor->cursor = NULL;
            st->cursor->limit = NULL;
        }
        session_ending = 1;
    }
    pthread_cond_broadcast(&full_available);
    pthread_mutex_unlock(&lock);
}

void hitch_recorder_release(void) {
    pthread_mutex_lock(&lock);
    session_active = 0;
    session_ending = 0;
    free_list = NULL;
    __atomic_store_n(&free_count, 0, __ATOMIC_RELEASE);
    full_head = full_tail = NULL;
    if (region) madvise(region, region_bytes, MADV_DONTNEED);
    pthread_mutex_unlock(&lock);
}

hitch_buffer *hitch_writer_take(int timeout_ms, int *finished) {
    *finished = 0;
    pthread_mutex_lock(&lock);
    if (!full_head && !session_ending && !flush_requested && timeout_ms > 0) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec += 1; deadline.tv_nsec -= 1000000000L; }
        while (!full_head && !session_ending && !flush_requested) {
            if (pthread_cond_timedwait(&full_available, &lock, &deadline) == ETIMEDOUT) break;
        }
    }
    hitch_buffer *b = full_head;
    if (b) {
        full_head = b->next;
        if (!full_head) full_tail = NULL;
        b->next = NULL;
    } else if (session_ending || !session_active) {
        *finished = 1;
    }
    pthread_mutex_unlock(&lock);
    return b;
}

void hitch_writer_give_back(hitch_buffer *b) {
    pthread_mutex_lock(&lock);
    if (session_active && !session_ending && b->session == session_id) {
        b->used = 0;
        b->taken = 0;
        b->next = free_list;
        free_list = b;
        __atomic_store_n(&free_count, free_count + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

uint64_t hitch_dropped_total(void) {
    pthread_mutex_lock(&lock);
    uint64_t value = dropped_by_exited_threads;
    for (hitch_thread_state *st = registry; st; st = st->next) value += __atomic_load_n(&st->dropped, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
    return value;
}

/// Sets a thread's name or role (`label`, truncated to `size` - 1 bytes) in its registry entry and,
/// when it has one, its buffer (which names the thread's events): both fields are `size` bytes.
/// Under `lock`.
static void set_thread_label(char *entry, char *buffer, size_t size, const char *label) {
    strncpy(entry, label, size - 1);
    entry[size - 1] = 0;
    if (buffer) memcpy(buffer, entry, size);
}

void hitch_set_current_thread_name(const char *name) {
    // Renaming the initial thread would rename the process as ps and top show it.
    if (!hitch_platform_is_initial_thread()) hitch_platform_set_kernel_thread_name(name);
    hitch_thread_state *st = current_state();
    if (!st) return;
    pthread_mutex_lock(&lock);
    set_thread_label(st->name, st->buffer ? st->buffer->thread_name : NULL, sizeof st->name, name);
    pthread_mutex_unlock(&lock);
}

int hitch_thread_name_of(int32_t tid, char *out, size_t capacity) {
    if (capacity == 0) return 0;
    int found = 0;
    pthread_mutex_lock(&lock);
    for (hitch_thread_state *st = registry; st; st = st->next) {
        if (st->tid == tid) {
            strncpy(out, st->name, capacity - 1);
            out[capacity - 1] = 0;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void hitch_set_current_thread_role(const char *role) {
    hitch_thread_state *st = current_state();
    if (!st) return;
    pthread_mutex_lock(&lock);
    set_thread_label(st->role, st->buffer ? st->buffer->thread_role : NULL, sizeof st->role, role);
    pthread_mutex_unlock(&lock);
}

uint32_t hitch_writer_take_committed(hitch_partial *out, uint32_t capacity, int *more) {
    *more = 0;
    uint32_t filled = 0;
    pthread_mutex_lock(&lock);
    // Full buffers first: a thread's older records must reach the file before its newer ones.
    if (full_head) { *more = 2; pthread_mutex_unlock(&lock); return 0; }
    if (session_active) {
        for (hitch_thread_state *st = registry; st; st = st->next) {
            hitch_buffer *b = st->buffer;
            if (!b || b->session != session_id) continue;
            ptrdiff_t committed = committed_index(st, b);
            if (committed <= (ptrdiff_t)b->taken) continue;
            if (filled == capacity) { *more = 1; break; }
            hitch_partial *p = &out[filled++];
            p->records = b->records;
            p->begin = b->taken;
            p->end = (uint32_t)committed;
            p->tid = st->tid;
            memcpy(p->thread_name, st->name, sizeof p->thread_name);
            memcpy(p->thread_role, st->role, sizeof p->thread_role);
            // Only the writer reads records below `taken`, and only the writer returns the buffer
            // to the pool, so [begin, end) stays valid after the lock is released.
            b->taken = (uint32_t)committed;
        }
    }
    pthread_mutex_unlock(&lock);
    return filled;
}

// MARK: Flushing on fatal signals
//
// A signal handler may only call async-signal-safe functions, so it writes nothing itself: it
// posts a semaphore (sem_post is async-signal-safe) that a helper thread waits on; the helper
// wakes the writer through the mutex and condition variable (ordinary thread context), and the
// writer puts every committed event on disk. The handler waits for that (polling an atomic flag
// with nanosleep, both async-signal-safe) for at most 2 s, then runs the previous disposition.
// What cannot be saved: a thread's events after its last commit, and everything when the writer
// itself is the faulting thread or the interrupted thread holds the recorder's mutex (then the
// wait times out).

static sem_t signal_flush_semaphore;
static int flush_generation_done = 0;       // atomic: bumped by the writer after each requested flush
static int ending_signal = 0;               // atomic: a terminating SIGTERM/SIGINT/SIGHUP is flushing
static int signal_hooks_installed = 0;      // under `lock`
static const int flushed_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define FLUSHED_SIGNAL_COUNT (sizeof flushed_signals / sizeof flushed_signals[0])
static struct sigaction previous_actions[FLUSHED_SIGNAL_COUNT];

static void *signal_flush_helper(void *unused) {
    (void)unused;
    for (;;) {
        while (sem_wait(&signal_flush_semaphore) != 0) {}
        pthread_mutex_lock(&lock);
        flush_requested = 1;
        pthread_cond_broadcast(&full_available);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int hitch_writer_flush_requested(void) {
    pthread_mutex_lock(&lock);
    int requested = flush_requested;
    flush_requested = 0;
    pthread_mutex_unlock(&lock);
    return requested;
}

void hitch_writer_flush_done(void) {
    __atomic_add_fetch(&flush_generation_done, 1, __ATOMIC_RELEASE);
}

int hitch_writer_ending_signal(void) {
    return __atomic_load_n(&ending_signal, __ATOMIC_ACQUIRE);
}

static void flush_on_signal(int signo, siginfo_t *info, void *context) {
    int saved_errno = errno;
    size_t index = 0;
    while (index < FLUSHED_SIGNAL_COUNT && flushed_signals[index] != signo) index++;
    struct sigaction *previous = &previous_actions[index < FLUSHED_SIGNAL_COUNT ? index : 0];
    if (__atomic_load_n(&hitch_recording_flag, __ATOMIC_ACQUIRE)) {
        // A request to terminate whose default action will end the process: the flush is the
        // recording's end, and the writer marks it so. A fault is a crash, never a clean end.
        int terminates = (signo == SIGTERM || signo == SIGINT || signo == SIGHUP)
            && !(previous->sa_flags & SA_SIGINFO) && previous->sa_handler == SIG_DFL;
        if (terminates) __atomic_store_n(&ending_signal, signo, __ATOMIC_RELEASE);
        int before = __atomic_load_n(&flush_generation_done, __ATOMIC_ACQUIRE);
        sem_post(&signal_flush_semaphore);
        struct timespec pause = { 0, 2 * 1000 * 1000 };
        for (int waited = 0; waited < 1000 && __atomic_load_n(&flush_generation_done, __ATOMIC_ACQUIRE) == before; waited++) {
            nanosleep(&pause, NULL);
        }
    }
    errno = saved_errno;
    if (previous->sa_flags & SA_SIGINFO) {
        if (previous->sa_sigaction) { previous->sa_sigaction(signo, info, context); return; }
    } else if (previous->sa_handler == SIG_IGN) {
        return;
    } else if (previous->sa_handler != SIG_DFL && previous->sa_handler) {
        previous->sa_handler(signo);
        return;
    }
    // The default action: put it back and deliver the signal again (a fault re-faults on return).
    sigaction(signo, previous, NULL);
    if (signo != SIGSEGV && signo != SIGBUS && signo != SIGILL && signo != SIGFPE) raise(signo);
}

int hitch_recorder_install_signal_flush(void) {
    pthread_mutex_lock(&lock);
    if (signal_hooks_installed) { pthread_mutex_unlock(&lock); return 0; }
    if (sem_init(&signal_flush_semaphore, 0, 0) != 0) { pthread_mutex_unlock(&lock); return -1; }
    pthread_t helper;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    // The helper must not take the process's signals itself (it would wait on its own semaphore).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int created = pthread_create(&helper, &attributes, signal_flush_helper, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attributes);
    if (created != 0) { pthread_mutex_unlock(&lock); return -1; }
    for (size_t i = 0; i < FLUSHED_SIGNAL_COUNT; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = flush_on_signal;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(flushed_signals[i], &action, &previous_actions[i]);
    }
    signal_hooks_installed = 1;
    pthread_mutex_unlock(&lock);
    return 0;
}
