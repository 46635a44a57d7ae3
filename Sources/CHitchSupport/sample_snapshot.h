#ifndef HITCH_SAMPLE_SNAPSHOT_H
#define HITCH_SAMPLE_SNAPSHOT_H
// Private to CHitchSupport: the snapshot both sample sources produce (the SIGPROF handler in
// sampler.c writes it into a thread's ring; the drain converts each perf_event_open record into
// it, sample_perf.c), and the off-handler unwinder (sample_unwind.c) that turns it into frames.
#include "hitch_sampler.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/// Registers kept per sample, in libunwind's x86-64 numbering (UNW_X86_64_RAX ... R15, then RIP).
#define SNAPSHOT_REGISTERS 17
#define SNAPSHOT_REG_RBP 6
#define SNAPSHOT_REG_RSP 7
#define SNAPSHOT_REG_RIP 16

/// Snapshot flags.
enum {
    /// No stack bytes were copied: the thread's stack bounds are not known yet (a thread found by
    /// the /proc scan, until the drain thread learns them) or SP lay outside them (an alternate
    /// signal stack, a coroutine). Only the interrupted PC is kept.
    SNAPSHOT_STACK_UNKNOWN = 1,
};

/// The fixed part of a ring record; `stack_words` words of copied stack follow it.
typedef struct {
    uint64_t timestamp_ticks;    ///< hitch_now() when the handler ran
    uint32_t tid;
    uint32_t flags;              ///< SNAPSHOT_*
    uint32_t module_generation;  ///< the unwinder's module-table generation when the sample was taken
    uint32_t stack_words;        ///< 8-byte words of stack copied, starting at stack_base
    uint64_t stack_base;         ///< the address of the first copied byte (SP, rounded down to 8 by the handler)
    uint64_t stack_limit;        ///< the stack's top (one past its last byte), or the copy's end when unknown
    uint64_t registers[SNAPSHOT_REGISTERS];
} sample_snapshot;

#define SNAPSHOT_HEADER_WORDS (sizeof(sample_snapshot) / sizeof(uint64_t))

/// Why an unwind ended.
typedef enum {
    UNWIND_COMPLETE = 0,         ///< reached the outermost frame (or the frame limit)
    UNWIND_STACK_UNKNOWN,        ///< no stack was copied: only the interrupted PC
    UNWIND_OFF_COPY_END,         ///< needed stack bytes above the copied range
    UNWIND_MODULES_CHANGED,      ///< reached code of a module loaded after the sample was taken
    UNWIND_NO_MODULE,            ///< reached an address outside every loaded module (JIT, unloaded)
    UNWIND_ERROR,                ///< libunwind could not step (no unwind info, bad frame)
    UNWIND_END_COUNT
} unwind_end;

/// Read by the handler and stamped into every snapshot (atomic load, no lock).
uint32_t hitch_unwind_module_generation(void);

/// The generation that was current at `monotonic_ns` (CLOCK_MONOTONIC), for samples the kernel took
/// (perf records carry their time, not a generation): the newest table built at or before that
/// time, from a short history; older than the history, one below its oldest (conservative: later
/// modules count as changed). Drain thread only.
uint32_t hitch_unwind_module_generation_at(uint64_t monotonic_ns);

/// Refreshes the module table from the loader's list. Must run inside a dl_iterate_phdr callback
/// (the caller holds the loader's write lock, so the list and every mapping in it stay put until
/// the callback returns). Drain thread only.
void hitch_unwind_refresh_modules(void);

/// Unwinds served from the memo of earlier identical unwinds (no libunwind walk). Any thread.
uint64_t hitch_unwind_memo_hits(void);

/// Unwinds one snapshot into frames (innermost first; callers' return addresses minus one). Must
/// run inside the same dl_iterate_phdr callback as the last hitch_unwind_refresh_modules. Returns
/// the depth (at least 1 when the PC is nonzero), sets *end, and *stack_bytes_read to how far above
/// the snapshot's stack base the unwind read.
uint32_t hitch_unwind_snapshot(const sample_snapshot *snapshot, const uint64_t *stack,
                               uint64_t *frames, uint32_t capacity, unwind_end *end,
                               uint64_t *stack_bytes_read);


/// The hang watchdog's stack capture (watchdog.c): queues SIGPROF to `thread` (kernel id `tid`) with
/// the watchdog's token; the sampler's handler, on that thread, copies its registers and its stack
/// from SP up (within [stack_low, stack_high)) into the one capture slot. Waits up to `timeout_ns`
/// for the copy, then unwinds it under the drain's lock, as the drain unwinds samples. Returns the
/// depth; 0 with `*not_handled` set when the signal was not handled in time.
uint32_t hitch_sampler_capture_thread(pthread_t thread, pid_t tid, uint64_t stack_low, uint64_t stack_high,
                                      uint64_t *frames, uint32_t capacity, uint64_t timeout_ns, int *not_handled);

// MARK: - The perf_event_open source (sample_perf.c; drain thread and control path, never a handler)

/// The largest stack copy a perf record holds (sample_stack_user must stay below 64 KiB; the kernel
/// trims it further so the whole record fits in 64 KiB).
#define PERF_SOURCE_MAX_STACK_BYTES ((uint32_t)HITCH_PERF_MAX_STACK_COPY_BYTES)

/// One thread's perf event and its mapped ring (fd -1 and page NULL when none).
typedef struct {
    int fd;
    void *page;                  ///< struct perf_event_mmap_page, then the data area
    uint8_t *data;
    uint64_t data_bytes;         ///< a power of two
    uint64_t map_bytes;
} perf_source;

/// Opens a task-clock event on thread `tid` sampling every `period_ns` of its CPU time, with
/// user registers and `stack_bytes` of stack, and maps a ring of `data_bytes` (halved on EPERM or
/// ENOMEM down to `min_data_bytes`). Disabled until perf_source_enable. Returns 0 or an errno
/// (EACCES/EPERM: not permitted; ENOSYS/ENOENT/EOPNOTSUPP: not supported; EINVAL).
int perf_source_open(perf_source *source, pid_t tid, uint64_t period_ns, uint32_t stack_bytes,
                     uint64_t data_bytes, uint64_t min_data_bytes);
/// The floor's bare event (hitch_sampler_floor_start): the same task-clock event sampling only the
/// thread id and time, no registers or stack; its ring (`data_bytes`) is never read.
int perf_source_open_bare(perf_source *source, pid_t tid, uint64_t period_ns, uint64_t data_bytes);
int perf_source_enable(perf_source *source);
/// Stops sampling (synchronously); the ring stays readable.
void perf_source_disable(perf_source *source);
void perf_source_close(perf_source *source);
/// 1 if the ring holds unread records.
int perf_source_pending(const perf_source *source);
/// Reads records until the first sample: converts it into `snapshot` (registers in snapshot order,
/// stack bytes into `stack`, at most `stack_capacity_words` and none at or above `stack_top` when
/// it is nonzero; stack_limit left 0 for the caller) and
/// its CLOCK_MONOTONIC time into *time_ns, and returns 1. Adds samples the kernel lost
/// (PERF_RECORD_LOST) and malformed records to *lost. Returns 0 when the ring is empty. One reader.
int perf_source_read(perf_source *source, sample_snapshot *snapshot, uint64_t *stack, uint64_t stack_capacity_words,
                     uint64_t stack_top, uint64_t *time_ns, uint64_t *lost);

#endif
