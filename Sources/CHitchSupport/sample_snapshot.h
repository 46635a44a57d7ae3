#ifndef HITCH_SAMPLE_SNAPSHOT_H
#define HITCH_SAMPLE_SNAPSHOT_H
// Private to CHitchSupport: the record a sample source (the SIGPROF handler in sampler.c) writes
// into a thread's ring, and the off-handler unwinder (sample_unwind.c) that turns it into frames.
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
    uint64_t stack_base;         ///< SP rounded down to 8: the address of the first copied word
    uint64_t stack_limit;        ///< the stack's top (one past its last byte); 0 when unknown
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

/// Refreshes the module table from the loader's list. Must run inside a dl_iterate_phdr callback
/// (the caller holds the loader's write lock, so the list and every mapping in it stay put until
/// the callback returns). Drain thread only.
void hitch_unwind_refresh_modules(void);

/// Unwinds one snapshot into frames (innermost first; callers' return addresses minus one). Must
/// run inside the same dl_iterate_phdr callback as the last hitch_unwind_refresh_modules. Returns
/// the depth (at least 1 when the PC is nonzero), sets *end, and *stack_bytes_read to how far above
/// the snapshot's stack base the unwind read.
uint32_t hitch_unwind_snapshot(const sample_snapshot *snapshot, const uint64_t *stack,
                               uint64_t *frames, uint32_t capacity, unwind_end *end,
                               uint64_t *stack_bytes_read);

#endif
