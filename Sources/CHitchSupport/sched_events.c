// Exact context switches of the recorded threads (hitch_sched.h): one perf_event_open software
// event per thread (PERF_COUNT_SW_DUMMY, context_switch=1, user space only, so perf_event_paranoid
// 2 permits it for the process's own threads) with a small mmap ring the kernel appends
// PERF_RECORD_SWITCH records to. The writer thread is the only consumer of every ring; a thread
// opens its ring, counts its own switches in it (reading only, never moving the tail: see
// hitch_sched_events_count) and, when it exits, marks it for the writer to close after a last drain.
// Slots carry a generation so a stale handle can never touch a slot reused by another thread.
#define _GNU_SOURCE
#include "hitch_sched.h"
#include "hitch_platform.h"
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#endif

enum { SLOT_FREE = 0, SLOT_OPENING = 1, SLOT_ACTIVE = 2, SLOT_EXITED = 3, SLOT_CLOSING = 4 };
#define SLOT_COUNT 256
#define RING_DATA_PAGES 16
/// More than any record the kernel appends to a ring (a switch record is 32 bytes, a lost record 48).
#define RING_RECORD_ROOM 128

// One cache line per slot: each frame thread counts in its own ring at every reading (an atomic
// add and subtract on `readers`), and the main and render threads must not share a line for that.
typedef struct __attribute__((aligned(64))) ring_slot {
    uint64_t state;          // generation << 8 | SLOT_*
    uint32_t readers;        // the ring's thread is counting in it: the writer must not unmap it
    int fd;
    int32_t tid;
    void *map;
    size_t map_bytes;
} ring_slot;

static ring_slot slots[SLOT_COUNT];
static int events_enabled = 0;

void hitch_sched_events_enable(int on) { __atomic_store_n(&events_enabled, on, __ATOMIC_RELEASE); }

#if defined(__linux__)
static int open_switch_event(void) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.context_switch = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.sample_id_all = 1;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    // CLOCK_MONOTONIC: the trace clock's reference (hitch_clock.h), converted to ticks by the writer.
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}
#endif

int hitch_sched_switch_ring_open(void **map, size_t *map_bytes) {
#if defined(__linux__)
    int fd = open_switch_event();
    if (fd < 0) return -1;
    size_t bytes = (size_t)sysconf(_SC_PAGESIZE) * (1 + RING_DATA_PAGES);
    void *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) { close(fd); return -1; }
    *map = mapped;
    *map_bytes = bytes;
    return fd;
#else
    (void)map; (void)map_bytes;
    return -1;
#endif
}

int hitch_sched_events_probe(char *reason, size_t capacity) {
#if defined(__linux__)
    int fd = open_switch_event();
    if (fd >= 0) { close(fd); return 0; }
    int error = errno;
    if (capacity) {
        char paranoid[16] = "?";
        FILE *file = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
        if (file) { if (!fgets(paranoid, sizeof paranoid, file)) paranoid[0] = 0; fclose(file); }
        paranoid[strcspn(paranoid, "\n")] = 0;
        snprintf(reason, capacity, "perf_event_open(context_switch) refused: %s (perf_event_paranoid=%s)", strerror(error), paranoid);
    }
    return error ? error : -1;
#else
    if (capacity) snprintf(reason, capacity, "perf_event_open exists only on Linux");
    return -1;
#endif
}

int64_t hitch_sched_events_register_thread(void) {
#if defined(__linux__)
    if (!__atomic_load_n(&events_enabled, __ATOMIC_ACQUIRE)) return -1;
    for (int index = 0; index < SLOT_COUNT; index++) {
        ring_slot *slot = &slots[index];
        uint64_t state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        if ((state & 0xff) != SLOT_FREE) continue;
        uint64_t opening = (state & ~0xffull) | SLOT_OPENING;
        if (!__atomic_compare_exchange_n(&slot->state, &state, opening, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) continue;
        void *map = NULL;
        size_t bytes = 0;
        int fd = hitch_sched_switch_ring_open(&map, &bytes);
        if (fd < 0) {
            __atomic_store_n(&slot->state, state, __ATOMIC_RELEASE);   // back to free, same generation
            return -1;
        }
        slot->fd = fd;
        slot->map = map;
        slot->map_bytes = bytes;
        slot->tid = hitch_platform_thread_id();
        uint64_t active = (state & ~0xffull) | SLOT_ACTIVE;
        __atomic_store_n(&slot->state, active, __ATOMIC_RELEASE);
        return (int64_t)(active >> 8) << 16 | index;
    }
#endif
    return -1;
}

void hitch_sched_events_release(int64_t handle) {
    if (handle < 0) return;
    ring_slot *slot = &slots[handle & 0xffff];
    uint64_t expected = (uint64_t)(handle >> 16) << 8 | SLOT_ACTIVE;
    __atomic_compare_exchange_n(&slot->state, &expected, (expected & ~0xffull) | SLOT_EXITED, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

#if defined(__linux__)
static void close_slot(ring_slot *slot, uint64_t state) {
    munmap(slot->map, slot->map_bytes);
    close(slot->fd);
    slot->map = NULL;
    slot->fd = -1;
    // The next generation: a handle of the thread that had it no longer matches.
    __atomic_store_n(&slot->state, ((state >> 8) + 1) << 8 | SLOT_FREE, __ATOMIC_RELEASE);
}

/// Copies the ring's switch records into `out`; returns how many, stopping at `capacity`.
static uint32_t drain_slot(ring_slot *slot, hitch_sched_switch *out, uint32_t capacity, uint64_t *lost) {
    struct perf_event_mmap_page *page = slot->map;
    uint8_t *data = (uint8_t *)slot->map + page->data_offset;
    uint64_t size = page->data_size;
    uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = page->data_tail;
    uint32_t count = 0;
    while (tail < head && count < capacity) {
        struct perf_event_header header;
        uint8_t record[64];
        for (size_t i = 0; i < sizeof header; i++) ((uint8_t *)&header)[i] = data[(tail + i) % size];
        if (header.size < sizeof header || tail + header.size > head) break;
        size_t length = header.size < sizeof record ? header.size : sizeof record;
        for (size_t i = 0; i < length; i++) record[i] = data[(tail + i) % size];
        tail += header.size;
        if (header.type == PERF_RECORD_SWITCH && length >= sizeof header + 24) {
            // sample_id: u32 pid, u32 tid; u64 time; u32 cpu, u32 res (PERF_SAMPLE_TID | TIME | CPU).
            uint32_t tid, cpu;
            uint64_t time;
            memcpy(&tid, record + sizeof header + 4, 4);
            memcpy(&time, record + sizeof header + 8, 8);
            memcpy(&cpu, record + sizeof header + 16, 4);
            hitch_sched_switch *s = &out[count++];
            s->monotonic_ns = time;
            s->tid = (int32_t)tid;
            s->cpu = (uint16_t)cpu;
            s->switched_in = (header.misc & PERF_RECORD_MISC_SWITCH_OUT) ? 0 : 1;
            s->preempted = (header.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? 1 : 0;
        } else if (header.type == PERF_RECORD_LOST && length >= sizeof header + 16) {
            uint64_t dropped;
            memcpy(&dropped, record + sizeof header + 8, 8);
            *lost += dropped;
        }
    }
    __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
    return count;
}
#endif

uint32_t hitch_sched_drain(hitch_sched_switch *out, uint32_t capacity, uint64_t *lost) {
    uint32_t count = 0;
#if defined(__linux__)
    for (int index = 0; index < SLOT_COUNT && count < capacity; index++) {
        ring_slot *slot = &slots[index];
        uint64_t state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        uint64_t kind = state & 0xff;
        if (kind != SLOT_ACTIVE && kind != SLOT_EXITED) continue;
        uint32_t before = count;
        count += drain_slot(slot, out + count, capacity - count, lost);
        if (kind == SLOT_EXITED && count - before < capacity - before) close_slot(slot, state);
    }
#else
    (void)out; (void)capacity; (void)lost;
#endif
    return count;
}

void hitch_sched_close(void) {
#if defined(__linux__)
    for (int index = 0; index < SLOT_COUNT; index++) {
        ring_slot *slot = &slots[index];
        uint64_t state = __atomic_load_n(&slot->state, __ATOMIC_SEQ_CST);
        // An exiting thread may flip ACTIVE to EXITED meanwhile; either way the writer closes it.
        while ((state & 0xff) == SLOT_ACTIVE
               && !__atomic_compare_exchange_n(&slot->state, &state, (state & ~0xffull) | SLOT_CLOSING, 0,
                                               __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
        uint64_t kind = state & 0xff;
        if (kind != SLOT_ACTIVE && kind != SLOT_EXITED) continue;
        // The ring's thread may be counting in it (it entered before it saw CLOSING): wait it out.
        while (__atomic_load_n(&slot->readers, __ATOMIC_SEQ_CST) != 0) sched_yield();
        close_slot(slot, state);
    }
#endif
}

// MARK: The ring's own thread counts its switches

#if defined(__linux__)
/// The slot of `handle` if it is still that thread's active ring, with a reader counted (the writer
/// then waits before unmapping it); NULL otherwise. A store then a load on each side, both
/// sequentially consistent: the writer sees the reader, or the reader sees CLOSING.
static ring_slot *enter_ring(int64_t handle) {
    if (handle < 0) return NULL;
    ring_slot *slot = &slots[handle & 0xffff];
    __atomic_add_fetch(&slot->readers, 1, __ATOMIC_SEQ_CST);
    uint64_t expected = (uint64_t)(handle >> 16) << 8 | SLOT_ACTIVE;
    if (__atomic_load_n(&slot->state, __ATOMIC_SEQ_CST) == expected) return slot;
    __atomic_sub_fetch(&slot->readers, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void leave_ring(ring_slot *slot) { __atomic_sub_fetch(&slot->readers, 1, __ATOMIC_RELEASE); }

static void copy_from_ring(const uint8_t *data, uint64_t size, uint64_t at, void *out, size_t length) {
    uint64_t offset = at & (size - 1);
    if (offset + length <= size) { memcpy(out, data + offset, length); return; }
    size_t first = (size_t)(size - offset);
    memcpy(out, data + offset, first);
    memcpy((uint8_t *)out + first, data, length - first);
}
#endif

int hitch_sched_events_count(int64_t handle, hitch_switch_cursor *cursor, uint64_t *voluntary,
                             uint64_t *involuntary, int *switched) {
#if defined(__linux__)
    ring_slot *slot = enter_ring(handle);
    if (!slot) return -1;
    struct perf_event_mmap_page *page = slot->map;
    const uint8_t *data = (const uint8_t *)slot->map + page->data_offset;
    uint64_t size = page->data_size;
    uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
    // No record was dropped since the cursor was set: a drop needs a ring without room for one
    // record, i.e. head - tail > size - a record at that moment, and since then the head has only
    // grown (to at most `head`) and the tail only moved on from `tail_floor`. The same bound keeps
    // the records after the cursor from having been overwritten.
    int exact = cursor->valid && head >= cursor->head && head - cursor->tail_floor + RING_RECORD_ROOM <= size;
    uint64_t at = cursor->head, outs_asleep = 0, outs_preempted = 0;
    while (exact && at < head) {
        struct perf_event_header header;
        copy_from_ring(data, size, at, &header, sizeof header);
        if (header.size < sizeof header || header.size > head - at || header.type == PERF_RECORD_LOST) { exact = 0; break; }
        if (header.type == PERF_RECORD_SWITCH && (header.misc & PERF_RECORD_MISC_SWITCH_OUT)) {
            if (header.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) outs_preempted++; else outs_asleep++;
        }
        at += header.size;
    }
    // A switch while counting (the thread was preempted here) may have overwritten what was read.
    if (exact && __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE) != head) exact = 0;
    if (exact) {
        *voluntary = outs_asleep;
        *involuntary = outs_preempted;
        *switched = head != cursor->head;
        cursor->head = head;
        // Any tail seen before an interval bounds it; an older one only brings the next resync
        // closer. The tail is the writer's cache line: read it when half the ring is used up.
        if (head - cursor->tail_floor > size / 2) cursor->tail_floor = __atomic_load_n(&page->data_tail, __ATOMIC_ACQUIRE);
    }
    leave_ring(slot);
    return exact;
#else
    (void)handle; (void)cursor; (void)voluntary; (void)involuntary; (void)switched;
    return -1;
#endif
}

int hitch_sched_events_resync(int64_t handle, hitch_switch_cursor *cursor, uint64_t *voluntary, uint64_t *involuntary) {
#if defined(__linux__)
    ring_slot *slot = enter_ring(handle);
    if (!slot) return -1;
    struct perf_event_mmap_page *page = slot->map;
    int result = 0;
    cursor->valid = 0;
    // The counts and the ring position must be of the same moment: retry while a switch lands between them.
    for (int attempt = 0; attempt < 4; attempt++) {
        uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = __atomic_load_n(&page->data_tail, __ATOMIC_ACQUIRE);
        struct rusage usage;
        if (getrusage(RUSAGE_THREAD, &usage) != 0) break;
        *voluntary = (uint64_t)usage.ru_nvcsw;
        *involuntary = (uint64_t)usage.ru_nivcsw;
        result = 1;
        if (__atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE) != head) continue;
        cursor->head = head;
        cursor->tail_floor = tail;
        cursor->valid = 1;
        break;
    }
    leave_ring(slot);
    return result;
#else
    (void)handle; (void)cursor; (void)voluntary; (void)involuntary;
    return -1;
#endif
}
