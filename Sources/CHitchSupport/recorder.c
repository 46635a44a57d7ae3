// The recorder's slow path and bookkeeping: a bounded pool of buffers, the queue of full buffers
// the writer thread drains, and a registry of threads so a stop (or a thread's exit) never loses
// an unflushed buffer. Everything here takes one mutex; the hot path (hitch_recorder.h) never does.
#define _GNU_SOURCE
#include "hitch_recorder.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

_Thread_local hitch_cursor hitch_tls_cursor __attribute__((tls_model("initial-exec"))) = { NULL, NULL };
int hitch_recording_flag = 0;

typedef struct hitch_thread_state {
    struct hitch_thread_state *prev, *next;
    hitch_cursor *cursor;      // this thread's thread-local cursor (valid while registered)
    hitch_buffer *buffer;      // active buffer, or NULL
    int32_t tid;
    uint64_t dropped;          // events this thread dropped (written by the owner, read under `lock`)
    char name[64];
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

// Buffer memory is mapped once per configuration and never unmapped: a thread preempted inside
// the hot path across a stop may still store into it, which must never fault.
static void *region = NULL;
static size_t region_bytes = 0;
static hitch_buffer *headers = NULL;
static uint32_t region_buffer_records = 0, region_buffer_count = 0;

int32_t hitch_current_tid(void) { return (int32_t)syscall(SYS_gettid); }

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
    hitch_record *cursor = st->cursor->cursor;
    ptrdiff_t used = (cursor && cursor >= b->records && cursor <= b->records + b->capacity) ? cursor - b->records : 0;
    if (b->session != session_id || !session_active) return;   // stale: its session already ended
    b->used = (uint32_t)used;
    b->tid = st->tid;
    memcpy(b->thread_name, st->name, sizeof b->thread_name);
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
    pthread_getname_np(pthread_self(), st->name, sizeof st->name);
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
    st->buffer = b;
    hitch_tls_cursor.cursor = b->records;
    hitch_tls_cursor.limit = b->records + b->capacity;
    pthread_mutex_unlock(&lock);
    return b->records;
}

int hitch_recorder_begin(uint32_t buffer_records, uint32_t buffer_count) {
    if (buffer_records < 16 || buffer_count < 1) return -2;
    pthread_mutex_lock(&lock);
    if (session_active || session_ending) { pthread_mutex_unlock(&lock); return -1; }
    if (!region || region_buffer_records != buffer_records || region_buffer_count < buffer_count) {
        size_t bytes = (size_t)buffer_records * buffer_count * sizeof(hitch_record);
        void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
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
    if (!full_head && !session_ending && timeout_ms > 0) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec += 1; deadline.tv_nsec -= 1000000000L; }
        while (!full_head && !session_ending) {
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

void hitch_set_current_thread_name(const char *name) {
    char kernel_name[16];
    strncpy(kernel_name, name, sizeof kernel_name - 1);
    kernel_name[sizeof kernel_name - 1] = 0;
    pthread_setname_np(pthread_self(), kernel_name);
    hitch_thread_state *st = current_state();
    if (!st) return;
    pthread_mutex_lock(&lock);
    strncpy(st->name, name, sizeof st->name - 1);
    st->name[sizeof st->name - 1] = 0;
    if (st->buffer) memcpy(st->buffer->thread_name, st->name, sizeof st->name);
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
