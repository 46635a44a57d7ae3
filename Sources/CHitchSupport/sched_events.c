// Exact context switches of the recorded threads (hitch_sched.h): one perf_event_open software
// event per thread (PERF_COUNT_SW_DUMMY, context_switch=1, user space only, so perf_event_paranoid
// 2 permits it for the process's own threads) with a small mmap ring the kernel appends
// PERF_RECORD_SWITCH records to. The writer thread is the only consumer of every ring; a thread
// only opens its ring and, when it exits, marks it for the writer to close after a last drain.
// Slots carry a generation so a stale handle can never touch a slot reused by another thread.
#define _GNU_SOURCE
#include "hitch_sched.h"
#include "hitch_platform.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#endif

enum { SLOT_FREE = 0, SLOT_OPENING = 1, SLOT_ACTIVE = 2, SLOT_EXITED = 3 };
#define SLOT_COUNT 256
#define RING_DATA_PAGES 16

typedef struct ring_slot {
    uint64_t state;          // generation << 8 | SLOT_*
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
        int fd = open_switch_event();
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t bytes = page * (1 + RING_DATA_PAGES);
        void *map = fd >= 0 ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
        if (map == MAP_FAILED) {
            if (fd >= 0) close(fd);
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
        uint64_t state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        uint64_t kind = state & 0xff;
        if (kind != SLOT_ACTIVE && kind != SLOT_EXITED) continue;
        // An exiting thread may flip ACTIVE to EXITED meanwhile; either way the writer closes it.
        close_slot(slot, state);
    }
#endif
}
