// How far /proc/self/task/TID/schedstat's first field (the kernel's sum_exec_runtime) lags the
// thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) right after a wake-up, and whether the thread's own
// perf context-switch ring can bound that lag (scripts/dev/schedstat-lag.sh; docs/FORMAT.md "Thread
// states"). Each round sleeps 1 ms (as a frame thread waits for its vsync), spins 0-30 us of wall
// time (not asking for its CPU time, which would bring the kernel's sum up to date), then reads
// schedstat, CLOCK_MONOTONIC and the CPU clock, in that order. lag = CPU clock - schedstat field 1;
// sinceSwitchIn = CLOCK_MONOTONIC - the latest switch-in record's time (perf, use_clockid
// CLOCK_MONOTONIC); lagOverSinceSwitchIn = lag - sinceSwitchIn is what the ring cannot see (the
// kernel's accounting restarts before the switch-in record is written). Prints JSON.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "hitch_sched.h"

#define ACCEPT_SINCE_NS 50000   // the bound a reading would accept the field under

static uint64_t clock_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void print_stats(const char *name, int64_t *values, int count, int last) {
    if (count == 0) { printf("  \"%s\": null%s\n", name, last ? "" : ","); return; }
    qsort(values, (size_t)count, sizeof *values, compare);
    int p99 = (int)((double)count * 0.99);
    if (p99 >= count) p99 = count - 1;
    printf("  \"%s\": {\"count\": %d, \"min\": %lld, \"p50\": %lld, \"p99\": %lld, \"max\": %lld}%s\n", name, count,
           (long long)values[0], (long long)values[count / 2], (long long)values[p99], (long long)values[count - 1], last ? "" : ",");
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    if (rounds <= 0 || rounds > 1000000) { fprintf(stderr, "schedstat-lag: ROUNDS must be 1...1000000\n"); return 2; }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)syscall(SYS_gettid));
    int schedstat = open(path, O_RDONLY | O_CLOEXEC);
    if (schedstat < 0) { fprintf(stderr, "schedstat-lag: cannot open %s\n", path); return 2; }

    // The recorder's switch ring (hitch_sched_switch_ring_open): this thread's switches, CLOCK_MONOTONIC times.
    void *map = NULL;
    size_t map_bytes = 0;
    struct perf_event_mmap_page *page = hitch_sched_switch_ring_open(&map, &map_bytes) >= 0 ? map : NULL;

    int64_t *lag = calloc((size_t)rounds, sizeof *lag), *since = calloc((size_t)rounds, sizeof *since);
    int64_t *over = calloc((size_t)rounds, sizeof *over), *accepted = calloc((size_t)rounds, sizeof *accepted);
    if (!lag || !since || !over || !accepted) return 2;
    int lags = 0, withSince = 0, acceptedCount = 0;
    uint64_t running_since = 0;
    for (int round = 0; round < rounds; round++) {
        struct timespec sleep = {0, 1000000};
        nanosleep(&sleep, NULL);
        uint64_t spin_end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(round % 4) * 10000;
        while (clock_ns(CLOCK_MONOTONIC) < spin_end) {}
        int ring_known = 0;
        if (page) {
            // Consume the ring: the latest switch-in's time (header, then u32 pid, u32 tid, u64 time).
            uint8_t *data = (uint8_t *)page + page->data_offset;
            uint64_t size = page->data_size, head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE), tail = page->data_tail;
            ring_known = head - tail + 128 <= size;
            while (tail < head) {
                struct perf_event_header header;
                uint8_t record[64];
                for (size_t i = 0; i < sizeof header; i++) ((uint8_t *)&header)[i] = data[(tail + i) % size];
                if (header.size < sizeof header) { ring_known = 0; break; }
                size_t length = header.size < sizeof record ? header.size : sizeof record;
                for (size_t i = 0; i < length; i++) record[i] = data[(tail + i) % size];
                if (header.type == PERF_RECORD_LOST) ring_known = 0;
                if (header.type == PERF_RECORD_SWITCH && !(header.misc & PERF_RECORD_MISC_SWITCH_OUT) && length >= sizeof header + 16)
                    memcpy(&running_since, record + sizeof header + 8, 8);
                tail += header.size;
            }
            __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
        }
        char text[96];
        ssize_t n = pread(schedstat, text, sizeof text - 1, 0);
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (n <= 0) continue;
        text[n] = 0;
        uint64_t on_cpu = strtoull(text, NULL, 10);
        lag[lags++] = (int64_t)(cpu - on_cpu);
        if (ring_known && running_since != 0 && now >= running_since) {
            int64_t s = (int64_t)(now - running_since);
            since[withSince] = s;
            over[withSince++] = (int64_t)(cpu - on_cpu) - s;
            if (s <= ACCEPT_SINCE_NS) accepted[acceptedCount++] = (int64_t)(cpu - on_cpu);
        }
    }
    double load = 0;
    FILE *loadavg = fopen("/proc/loadavg", "r");
    if (loadavg) { if (fscanf(loadavg, "%lf", &load) != 1) load = 0; fclose(loadavg); }
    printf("{\n  \"rounds\": %d,\n  \"loadAverage1m\": %.2f,\n  \"switchRecords\": %s,\n", rounds, load, page ? "true" : "false");
    print_stats("lagNs", lag, lags, 0);
    print_stats("sinceSwitchInNs", since, withSince, 0);
    print_stats("lagOverSinceSwitchInNs", over, withSince, 0);
    print_stats("lagNsWhenSinceSwitchInAtMost50us", accepted, acceptedCount, 1);
    printf("}\n");
    return 0;
}
