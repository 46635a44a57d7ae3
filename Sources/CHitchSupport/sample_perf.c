// The kernel sample source: one perf_event_open task-clock event per sampled thread. The kernel
// takes each sample itself (in its timer interrupt, while the thread runs user code) and writes a
// record with the thread's user registers and a copy of its stack from SP up
// (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, as perf record --call-graph dwarf does) into a
// ring mapped into our address space. No signal reaches the thread. The drain thread reads the
// rings and turns each record into the same sample_snapshot the SIGPROF handler writes, so both
// sources share one unwinder (sample_unwind.c) and one sample path (sampler.c).
//
// Register order: a REGS_USER record holds the registers whose bits are set in sample_regs_user,
// in ascending bit order (perf's PERF_REG_X86_* numbering: AX BX CX DX SI DI BP SP IP FLAGS CS SS
// DS ES FS GS R8 ... R15). The snapshot keeps libunwind's order (RAX RDX RCX RBX ...): the table
// below maps one to the other.
#define _GNU_SOURCE
#include "sample_snapshot.h"

#if defined(__linux__) && defined(__x86_64__)
#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The perf register behind each snapshot register (libunwind's x86-64 numbering).
static const int perf_register_of[SNAPSHOT_REGISTERS] = {
    PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX, PERF_REG_X86_SI, PERF_REG_X86_DI,
    PERF_REG_X86_BP, PERF_REG_X86_SP, PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
    PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15, PERF_REG_X86_IP};

static uint64_t requested_registers(void) {
    uint64_t mask = 0;
    for (int i = 0; i < SNAPSHOT_REGISTERS; i++) mask |= 1ull << perf_register_of[i];
    return mask;
}

/// Opens the event (registers and `stack_bytes` of stack per sample; neither when `bare`) and maps
/// its ring. Shared by perf_source_open and the floor's bare event.
static int open_event(perf_source *source, pid_t tid, uint64_t period_ns, uint32_t stack_bytes, int bare,
                      uint64_t data_bytes, uint64_t min_data_bytes) {
    memset(source, 0, sizeof *source);
    source->fd = -1;
    if (stack_bytes > PERF_SOURCE_MAX_STACK_BYTES) return EINVAL;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    // task-clock: counts only while this thread runs, so a sample every period of its CPU time.
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = period_ns;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (!bare) {
        attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        attr.sample_regs_user = requested_registers();
        attr.sample_stack_user = stack_bytes;
    }
    // User code only: what perf_event_paranoid 2 permits without privileges, and all we unwind.
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.disabled = 1;
    // Sample times on CLOCK_MONOTONIC, the clock the trace's ticks are calibrated against.
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    // Wake a poller (the drain) when a quarter of the ring is written; three quarters are left for
    // its latency. The watermark is fixed at open, so each ring size gets its own event.
    attr.watermark = 1;
    long page = sysconf(_SC_PAGESIZE);
    // The data area is a power of two of pages; locked memory is budgeted per user and process
    // (perf_event_mlock_kb, RLIMIT_MEMLOCK), so a refused size is retried at half, down to the minimum.
    int error = 0;
    for (uint64_t bytes = data_bytes; bytes >= min_data_bytes && bytes >= (uint64_t)page; bytes /= 2) {
        attr.wakeup_watermark = (uint32_t)(bytes / 4);
        int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) return errno;
        void *map = mmap(NULL, (size_t)(bytes + (uint64_t)page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED) {
            source->fd = fd;
            source->page = map;
            source->data = (uint8_t *)map + page;
            source->data_bytes = bytes;
            source->map_bytes = bytes + (uint64_t)page;
            return 0;
        }
        error = errno;
        close(fd);
        if (error != EPERM && error != ENOMEM) break;
    }
    return error ? error : ENOMEM;
}

int perf_source_open(perf_source *source, pid_t tid, uint64_t period_ns, uint32_t stack_bytes,
                     uint64_t data_bytes, uint64_t min_data_bytes) {
    return open_event(source, tid, period_ns, stack_bytes, 0, data_bytes, min_data_bytes);
}

int perf_source_open_bare(perf_source *source, pid_t tid, uint64_t period_ns, uint64_t data_bytes) {
    return open_event(source, tid, period_ns, 0, 1, data_bytes, data_bytes);
}

int perf_source_enable(perf_source *source) {
    return ioctl(source->fd, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : errno;
}

void perf_source_disable(perf_source *source) {
    // Synchronous: once it returns, the kernel writes no further record into the ring.
    if (source->fd >= 0) ioctl(source->fd, PERF_EVENT_IOC_DISABLE, 0);
}

void perf_source_close(perf_source *source) {
    if (source->page != NULL) munmap(source->page, (size_t)source->map_bytes);
    if (source->fd >= 0) close(source->fd);
    memset(source, 0, sizeof *source);
    source->fd = -1;
}

int perf_source_pending(const perf_source *source) {
    if (source->page == NULL) return 0;
    const struct perf_event_mmap_page *page = source->page;
    // Atomic: the control path asks this while the drain may be advancing the tail.
    return __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE) != __atomic_load_n(&page->data_tail, __ATOMIC_RELAXED);
}

/// Copies `count` bytes at ring offset `offset` (wrapping at the end of the data area).
static void ring_read(const perf_source *source, uint64_t offset, void *destination, uint64_t count) {
    uint64_t start = offset & (source->data_bytes - 1);
    uint64_t first = source->data_bytes - start;
    if (first > count) first = count;
    memcpy(destination, source->data + start, (size_t)first);
    if (count > first) memcpy((uint8_t *)destination + first, source->data, (size_t)(count - first));
}

/// Parses one PERF_RECORD_SAMPLE (`size` bytes at `offset`, header included) into a snapshot.
/// Returns 0 if the record is malformed.
static int parse_sample(const perf_source *source, uint64_t offset, uint64_t size, sample_snapshot *snapshot,
                        uint64_t *stack, uint64_t stack_capacity_words, uint64_t stack_top, uint64_t *time_ns) {
    uint64_t end = offset + size, at = offset + sizeof(struct perf_event_header);
    uint32_t ids[2];   // PERF_SAMPLE_TID: pid, tid
    uint64_t abi = 0;
    if (at + 8 + 8 + 8 > end) return 0;
    ring_read(source, at, ids, 8); at += 8;
    ring_read(source, at, time_ns, 8); at += 8;
    ring_read(source, at, &abi, 8); at += 8;
    memset(snapshot, 0, sizeof *snapshot);
    snapshot->tid = ids[1];
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
        uint64_t values[64];
        uint64_t mask = requested_registers(), count = (uint64_t)__builtin_popcountll(mask);
        if (at + count * 8 > end) return 0;
        ring_read(source, at, values, count * 8); at += count * 8;
        for (int i = 0; i < SNAPSHOT_REGISTERS; i++) {
            int bit = perf_register_of[i];
            snapshot->registers[i] = values[__builtin_popcountll(mask & ((1ull << bit) - 1))];
        }
    }
    uint64_t dump_bytes = 0, copied_bytes = 0;
    if (at + 8 > end) return 0;
    ring_read(source, at, &dump_bytes, 8); at += 8;
    if (dump_bytes > 0) {
        if (at + dump_bytes + 8 > end) return 0;
        ring_read(source, at + dump_bytes, &copied_bytes, 8);
        if (copied_bytes > dump_bytes) copied_bytes = dump_bytes;
    }
    uint64_t words = copied_bytes / 8;
    if (words > stack_capacity_words) words = stack_capacity_words;
    // The kernel copies the full size whatever the stack's depth: bytes above the top are not the
    // thread's stack, so they are not copied out (most of a record, for a shallow stack).
    uint64_t sp = snapshot->registers[SNAPSHOT_REG_RSP];
    if (stack_top != 0 && sp < stack_top && (stack_top - sp) / 8 < words) words = (stack_top - sp) / 8;
    if (words > 0) ring_read(source, at, stack, words * 8);
    snapshot->stack_words = (uint32_t)words;
    snapshot->stack_base = snapshot->registers[SNAPSHOT_REG_RSP]; // the kernel copies from SP itself
    if (abi == PERF_SAMPLE_REGS_ABI_NONE || words == 0) snapshot->flags = SNAPSHOT_STACK_UNKNOWN;
    return 1;
}

int perf_source_read(perf_source *source, sample_snapshot *snapshot, uint64_t *stack, uint64_t stack_capacity_words,
                     uint64_t stack_top, uint64_t *time_ns, uint64_t *lost) {
    if (source->page == NULL) return 0;
    struct perf_event_mmap_page *page = source->page;
    uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = page->data_tail;
    int found = 0;
    while (!found && tail < head) {
        struct perf_event_header header;
        ring_read(source, tail, &header, sizeof header);
        if (header.size < sizeof header || tail + header.size > head) {
            *lost += 1; // cannot happen with a well-formed ring: skip everything written so far, counted
            tail = head;
            break;
        }
        if (header.type == PERF_RECORD_SAMPLE) {
            found = parse_sample(source, tail, header.size, snapshot, stack, stack_capacity_words, stack_top, time_ns);
            if (!found) *lost += 1;
        } else if (header.type == PERF_RECORD_LOST) {
            uint64_t id_and_count[2];
            if (header.size >= sizeof header + sizeof id_and_count) {
                ring_read(source, tail + sizeof header, id_and_count, sizeof id_and_count);
                *lost += id_and_count[1];
            }
        }
        // Other records (throttling notices) carry no sample.
        tail += header.size;
    }
    // The release store orders our reads of the record before the kernel may overwrite it.
    __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
    return found;
}

#else // no perf_event_open (or no register mapping for this architecture): the timer signal only

#include <errno.h>
#include <string.h>

int perf_source_open(perf_source *source, pid_t tid, uint64_t period_ns, uint32_t stack_bytes,
                     uint64_t data_bytes, uint64_t min_data_bytes) {
    (void)tid; (void)period_ns; (void)stack_bytes; (void)data_bytes; (void)min_data_bytes;
    memset(source, 0, sizeof *source);
    source->fd = -1;
    return ENOSYS;
}
int perf_source_open_bare(perf_source *source, pid_t tid, uint64_t period_ns, uint64_t data_bytes) {
    return perf_source_open(source, tid, period_ns, 0, data_bytes, data_bytes);
}
int perf_source_enable(perf_source *source) { (void)source; return ENOSYS; }
void perf_source_disable(perf_source *source) { (void)source; }
void perf_source_close(perf_source *source) { memset(source, 0, sizeof *source); source->fd = -1; }
int perf_source_pending(const perf_source *source) { (void)source; return 0; }
int perf_source_read(perf_source *source, sample_snapshot *snapshot, uint64_t *stack, uint64_t stack_capacity_words,
                     uint64_t stack_top, uint64_t *time_ns, uint64_t *lost) {
    (void)source; (void)snapshot; (void)stack; (void)stack_capacity_words; (void)stack_top; (void)time_ns; (void)lost;
    return 0;
}
#endif
