#ifndef HITCH_RECORDER_H
#define HITCH_RECORDER_H
// The recorder's hot path (Tracy-style): a thread-local cursor into the thread's buffer of
// fixed-size 32-byte raw records, a bump, no lock, allocation or syscall. Everything that is
// not the hot path (buffer hand-off, the pool, thread registry, the writer's queue) is in
// recorder.c. The raw record layout per kind is documented in Sources/HitchTrace/RawRecord.swift.
#include <stdint.h>
#include <stddef.h>

typedef struct hitch_record {
    uint64_t w0, w1, w2, w3;
} hitch_record;

/// The calling thread's bump cursor. Both NULL (or limit < cursor) sends every event to the slow path.
typedef struct hitch_cursor {
    hitch_record *cursor;
    hitch_record *limit;
} hitch_cursor;

extern _Thread_local hitch_cursor hitch_tls_cursor __attribute__((tls_model("initial-exec")));

/// Non-zero while a recording session is active. The disabled path is one load of this and a branch.
extern int hitch_recording_flag;

static inline int hitch_is_recording(void) {
    return __atomic_load_n(&hitch_recording_flag, __ATOMIC_RELAXED);
}

/// Slow path: hands the full buffer to the writer and takes a free one. Returns NULL (and counts
/// the event as dropped) when no buffer is free or the session ended.
hitch_record *hitch_reserve_slow(uint32_t count);

/// Reserves `count` consecutive records (1...8) on the calling thread's buffer, or NULL if dropped.
/// The caller fills them, then calls `hitch_commit`.
static inline hitch_record *hitch_reserve(uint32_t count) {
    hitch_cursor *tls = &hitch_tls_cursor;
    hitch_record *r = tls->cursor;
    if (__builtin_expect(tls->limit - r < (ptrdiff_t)count, 0)) return hitch_reserve_slow(count);
    return r;
}

/// Publishes the records up to `end`: a release store (a plain store on x86-64), so the writer
/// thread, which reads the cursor with acquire, sees the records' contents before the new cursor.
static inline void hitch_commit(hitch_record *end) {
    __atomic_store_n(&hitch_tls_cursor.cursor, end, __ATOMIC_RELEASE);
}

/// One record: the common case, kept to a handful of instructions.
static inline void hitch_emit1(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3) {
    hitch_record *r = hitch_reserve(1);
    if (__builtin_expect(r == NULL, 0)) return;
    r->w0 = w0; r->w1 = w1; r->w2 = w2; r->w3 = w3;
    hitch_commit(r + 1);
}

/// Two consecutive records (typed events with more fields).
static inline void hitch_emit2(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3,
                               uint64_t w4, uint64_t w5, uint64_t w6, uint64_t w7) {
    hitch_record *r = hitch_reserve(2);
    if (__builtin_expect(r == NULL, 0)) return;
    r[0].w0 = w0; r[0].w1 = w1; r[0].w2 = w2; r[0].w3 = w3;
    r[1].w0 = w4; r[1].w1 = w5; r[1].w2 = w6; r[1].w3 = w7;
    hitch_commit(r + 2);
}

/// Longest thread role ("main", "render", or an app's own) including the NUL.
#define HITCH_ROLE_CAPACITY 16

/// A full buffer handed to the writer thread: records [taken, used) of thread `tid` are still to
/// be written (the writer took [0, taken) earlier, while the thread was still filling it).
typedef struct hitch_buffer {
    struct hitch_buffer *next;
    hitch_record *records;
    uint64_t session;
    uint32_t capacity;
    uint32_t used;
    uint32_t taken;            // written by the writer thread only (and reset when handed out)
    int32_t tid;
    char thread_name[64];
    char thread_role[HITCH_ROLE_CAPACITY];
} hitch_buffer;

/// The committed, not yet written records of a thread's active buffer: [begin, end) of `records`.
/// The thread keeps filling the buffer past `end`; it never rewrites what it committed.
typedef struct hitch_partial {
    hitch_record *records;
    uint32_t begin, end;
    int32_t tid;
    char thread_name[64];
    char thread_role[HITCH_ROLE_CAPACITY];
} hitch_partial;

/// Starts a session with `buffer_count` buffers of `buffer_records` records each.
/// Returns 0, -1 if a session is already active, -2 if memory could not be reserved.
int hitch_recorder_begin(uint32_t buffer_records, uint32_t buffer_count);
/// Disables recording and queues every thread's partly filled buffer; the writer then drains.
void hitch_recorder_end(void);
/// After the writer drained everything: returns the buffers' memory to the OS.
void hitch_recorder_release(void);

/// Writer side: waits up to `timeout_ms` for a full buffer. Returns NULL on timeout, or when the
/// session ended and nothing is left (then *finished is set to 1).
hitch_buffer *hitch_writer_take(int timeout_ms, int *finished);
/// Returns a written buffer to the free pool.
void hitch_writer_give_back(hitch_buffer *buffer);
/// Writer side: fills `out` (up to `capacity` threads) with each recording thread's committed
/// records the writer has not taken yet, and marks them taken; returns how many were filled. The
/// recording threads are never stopped: each publishes its cursor with a release store
/// (`hitch_commit`) and the writer reads it with acquire (single producer, single consumer).
/// `*more` is set to 1 when threads were left for another call, and to 2 (nothing taken) while
/// full buffers wait in the queue: write those first, then call again.
uint32_t hitch_writer_take_committed(hitch_partial *out, uint32_t capacity, int *more);
/// Writer side: 1 (and clears it) when a fatal-signal handler asked for an immediate flush.
int hitch_writer_flush_requested(void);
/// Writer side: the flush a signal handler asked for is on disk.
void hitch_writer_flush_done(void);
/// Writer side: the signal (SIGTERM, SIGINT or SIGHUP) that asked for the flush and will end the
/// process once it is done (its previous disposition is the default), or 0: the writer then marks
/// the end of the recording as it flushes.
int hitch_writer_ending_signal(void);

/// Installs handlers for SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT
/// (once per process) that get the writer thread to put every committed event on disk before
/// the previous disposition runs. Returns 0, or -1 if the helper thread could not start.
/// See docs/FORMAT.md section 5 for what is safe and what is not.
int hitch_recorder_install_signal_flush(void);

/// Events dropped since the process started (monotonic; the writer records deltas).
uint64_t hitch_dropped_total(void);

/// The calling thread's id: the kernel thread id on Linux (what samples and /proc use), else a
/// per-process counter (see hitch_platform.h).
int32_t hitch_current_tid(void);
/// Sets the calling thread's name for the trace. Also sets its kernel name (truncated to 15 bytes),
/// except on the process's initial thread, whose kernel name is the process's name in ps and top.
void hitch_set_current_thread_name(const char *name);
/// Sets the calling thread's role in the trace ("main", "render", ...); never renames the thread.
void hitch_set_current_thread_role(const char *role);
/// Copies the trace name of thread `tid` if it is registered (returns 1), else 0.
int hitch_thread_name_of(int32_t tid, char *out, size_t capacity);

#endif
