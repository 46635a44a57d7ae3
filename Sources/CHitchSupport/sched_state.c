// Thread and machine scheduler readings (hitch_sched.h). A frame thread reads its own counters:
// - the CPU clock (clock_gettime), every reading;
// - its switch counts: with its perf context-switch ring (sched_events.c), by counting the
//   switch-out records the kernel appended since its last reading (memory reads, no syscall;
//   asleep = voluntary, preempted = involuntary, over a getrusage baseline taken when the ring
//   opened and again whenever the ring cannot vouch for an exact count); without a ring,
//   getrusage(RUSAGE_THREAD);
// - its run delay, a pread of its schedstat file (kept open), only when the thread was switched
//   since that read: the run delay grows only when a thread is switched back in, which a switch
//   out precedes, so no switch means an unchanged run delay, exactly, and the costliest read
//   (about 0.6 us warm, 1 us after a sleep) is skipped.
// Then two raw records; no lock or allocation after the first reading. Machine counters are read by the
// writer thread, off every frame path (they format whole files: /proc/stat has a line per CPU).
#define _GNU_SOURCE
#include "hitch_sched.h"
#include "hitch_platform.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

int hitch_thread_states_flag = 0;
static uint64_t sched_session = 0;         // bumped by every hitch_sched_begin
static char proc_root[256] = "/proc";
static char cgroup_root[256] = "/sys/fs/cgroup";
static char cgroup_cpu_stat[512];          // resolved once per session; "" when none
static int cgroup_is_v1 = 0;

typedef struct sched_thread {
    uint64_t session;                      // the session this thread registered in
    int schedstat_fd;                      // -1 when unavailable; kept open until the thread exits
    int exit_hooked;
    int64_t events_handle;                 // perf ring handle (sched_events.c), or -1
    uint64_t last_switches;                // without a ring: voluntary + involuntary at the last schedstat read
    uint64_t last_run_delay;               // that read's run delay (HITCH_SCHED_NONE: none yet)
    int renders_with_begin;                // the thread marks render begins: presents need no reading
    // With a ring: the switch counts kept from its records, and whether one was seen since the schedstat read.
    hitch_switch_cursor cursor;
    uint64_t voluntary, involuntary;
    int counts_known;
    int switched_since_schedstat;
} sched_thread;

static _Thread_local sched_thread this_thread = {
    .session = 0, .schedstat_fd = -1, .events_handle = -1, .last_run_delay = HITCH_SCHED_NONE,
};
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;

static void thread_exit(void *value) {
    sched_thread *t = value;
    if (t->schedstat_fd >= 0) close(t->schedstat_fd);
    t->schedstat_fd = -1;
    if (t->events_handle >= 0) hitch_sched_events_release(t->events_handle);
    t->events_handle = -1;
}

static void make_key(void) { pthread_key_create(&exit_key, thread_exit); }

static void open_schedstat(sched_thread *t) {
    char path[320];
    snprintf(path, sizeof path, "%s/self/task/%d/schedstat", proc_root, (int)hitch_platform_thread_id());
    t->schedstat_fd = open(path, O_RDONLY | O_CLOEXEC);
}

/// The thread's schedstat file, opened once per thread, with the exit hook that closes it (and the ring).
static void open_thread_files(sched_thread *t) {
    if (!t->exit_hooked) {
        pthread_once(&key_once, make_key);
        pthread_setspecific(exit_key, t);
        t->exit_hooked = 1;
    }
    if (t->schedstat_fd < 0) open_schedstat(t);
}

// First reading of this thread in this session: the schedstat file (once per thread), the perf
// ring (once per session), the exit hook that closes both.
static void register_thread(sched_thread *t, uint64_t session) {
    open_thread_files(t);
    t->events_handle = hitch_sched_events_register_thread();
    t->cursor.valid = 0;
    t->last_run_delay = HITCH_SCHED_NONE;
    t->renders_with_begin = 0;
    t->session = session;
}

/// The second field of a schedstat line ("on-cpu-ns runnable-wait-ns timeslices").
static uint64_t parse_run_delay(const char *text) {
    const char *p = text;
    while (*p >= '0' && *p <= '9') p++;
    if (*p != ' ') return HITCH_SCHED_NONE;
    p++;
    if (*p < '0' || *p > '9') return HITCH_SCHED_NONE;
    uint64_t value = 0;
    while (*p >= '0' && *p <= '9') value = value * 10 + (uint64_t)(*p++ - '0');
    return value;
}

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0
        ? (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec : 0;
}

static uint64_t read_run_delay(sched_thread *t) {
    if (t->schedstat_fd < 0) return HITCH_SCHED_NONE;
    char text[96];
    ssize_t n = pread(t->schedstat_fd, text, sizeof text - 1, 0);
    if (n <= 0) return HITCH_SCHED_NONE;
    text[n] = 0;
    return parse_run_delay(text);
}

/// Without a ring: getrusage for the switch counts, the schedstat read when they changed.
static void read_thread(sched_thread *t, hitch_thread_reading *out) {
    out->cpu_ns = thread_cpu_ns();
    struct rusage usage;
    int have_switches = getrusage(RUSAGE_THREAD, &usage) == 0;
    if (have_switches) {
        out->voluntary_switches = (uint64_t)usage.ru_nvcsw;
        out->involuntary_switches = (uint64_t)usage.ru_nivcsw;
    } else {
        out->voluntary_switches = out->involuntary_switches = HITCH_SCHED_NONE;
    }
    uint64_t switches = out->voluntary_switches + out->involuntary_switches;
    if (have_switches && t->last_run_delay != HITCH_SCHED_NONE && switches == t->last_switches) {
        out->runnable_wait_ns = t->last_run_delay;   // not switched since: unchanged (see the top)
        return;
    }
    out->runnable_wait_ns = read_run_delay(t);
    t->last_switches = switches;
    t->last_run_delay = have_switches ? out->runnable_wait_ns : HITCH_SCHED_NONE;
}

/// With the thread's ring: switch counts from its records, the schedstat read after a switch.
/// Returns 0 (nothing read) when the ring is gone: the session is closing.
static int read_thread_with_ring(sched_thread *t, hitch_thread_reading *out) {
    uint64_t cpu_ns = thread_cpu_ns();
    uint64_t voluntary = 0, involuntary = 0;
    int switched = 0;
    int counted = hitch_sched_events_count(t->events_handle, &t->cursor, &voluntary, &involuntary, &switched);
    if (counted < 0) return 0;
    if (counted) {
        t->voluntary += voluntary;
        t->involuntary += involuntary;
    } else {
        int synced = hitch_sched_events_resync(t->events_handle, &t->cursor, &voluntary, &involuntary);
        if (synced < 0) return 0;
        // The counts never go back: getrusage may class a rare switch otherwise than its record did
        // (a sleep that a pending signal cut short counts as voluntary, its record as preempted).
        if (synced) {
            if (voluntary > t->voluntary) t->voluntary = voluntary;
            if (involuntary > t->involuntary) t->involuntary = involuntary;
        }
        t->counts_known = synced;
        switched = 1;   // unknown: read the run delay
    }
    out->cpu_ns = cpu_ns;
    out->voluntary_switches = t->counts_known ? t->voluntary : HITCH_SCHED_NONE;
    out->involuntary_switches = t->counts_known ? t->involuntary : HITCH_SCHED_NONE;
    if (switched) t->switched_since_schedstat = 1;
    if (!t->switched_since_schedstat && t->last_run_delay != HITCH_SCHED_NONE) {
        out->runnable_wait_ns = t->last_run_delay;   // not switched since: unchanged (see the top)
        return 1;
    }
    out->runnable_wait_ns = read_run_delay(t);
    t->last_run_delay = out->runnable_wait_ns;
    t->switched_since_schedstat = 0;
    return 1;
}

void hitch_sched_join_thread(void) {
    if (!__atomic_load_n(&hitch_thread_states_flag, __ATOMIC_ACQUIRE)) return;
    sched_thread *t = &this_thread;
    uint64_t session = __atomic_load_n(&sched_session, __ATOMIC_ACQUIRE);
    if (t->session != session) register_thread(t, session);
}

void hitch_thread_state_emit(uint64_t ticks, uint64_t frame_id, uint32_t phase) {
    sched_thread *t = &this_thread;
    uint64_t session = __atomic_load_n(&sched_session, __ATOMIC_ACQUIRE);
    if (__builtin_expect(t->session != session, 0)) register_thread(t, session);
    // A thread that marks its render begins has its render bracketed by renderBegan and
    // renderEnded; the reading after its wait for the present vsync would add nothing.
    if (phase == 2) t->renders_with_begin = 1;   // ThreadStateReading.Phase.renderBegan
    if (phase == 4 && t->renders_with_begin) return;   // .presented
    hitch_thread_reading r;
    if (t->events_handle < 0 || !read_thread_with_ring(t, &r)) {
        if (t->events_handle >= 0) { t->events_handle = -1; t->last_run_delay = HITCH_SCHED_NONE; }
        read_thread(t, &r);
    }
    hitch_emit2(ticks, HITCH_RAW_KIND_THREAD_STATE << 56 | phase, frame_id, r.cpu_ns,
                r.runnable_wait_ns, r.voluntary_switches, r.involuntary_switches, 0);
}

void hitch_thread_read(hitch_thread_reading *out) {
    sched_thread *t = &this_thread;
    t->last_run_delay = HITCH_SCHED_NONE;   // a direct read always reads everything
    open_thread_files(t);
    read_thread(t, out);
}

void hitch_thread_read_floor(void) {
    sched_thread *t = &this_thread;
    open_thread_files(t);
    uint64_t first = thread_cpu_ns();
    uint64_t run_delay = read_run_delay(t);
    uint64_t second = thread_cpu_ns();
    __asm__ volatile("" : : "r"(first), "r"(run_delay), "r"(second) : "memory");   // keep the reads
}

void hitch_sched_set_roots(const char *proc, const char *cgroup) {
    snprintf(proc_root, sizeof proc_root, "%s", proc ? proc : "/proc");
    snprintf(cgroup_root, sizeof cgroup_root, "%s", cgroup ? cgroup : "/sys/fs/cgroup");
    // Threads reopen their schedstat file under the new root at their next registration.
    if (this_thread.schedstat_fd >= 0) { close(this_thread.schedstat_fd); this_thread.schedstat_fd = -1; }
}

// MARK: Machine readings

/// Reads a small file whole into `buffer` (NUL-terminated); the length, or -1.
static ssize_t read_small_file(const char *path, char *buffer, size_t capacity) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t used = 0;
    while (used + 1 < capacity) {
        ssize_t n = read(fd, buffer + used, capacity - 1 - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        used += (size_t)n;
    }
    close(fd);
    buffer[used] = 0;
    return (ssize_t)used;
}

/// The number after `key` in `text` (key includes its separator, e.g. "total="), or -1.
static int64_t number_after(const char *text, const char *key) {
    const char *p = strstr(text, key);
    if (!p) return -1;
    p += strlen(key);
    if (*p < '0' || *p > '9') return -1;
    int64_t value = 0;
    while (*p >= '0' && *p <= '9') value = value * 10 + (*p++ - '0');
    return value;
}

/// Finds the cgroup's cpu.stat: v2 ("0::/path" in /proc/self/cgroup) if its cpu.stat exists,
/// else the v1 cpu controller's ("N:cpu,cpuacct:/path" or "N:cpu:/path").
static void resolve_cgroup(void) {
    cgroup_cpu_stat[0] = 0;
    char path[320], text[4096];
    snprintf(path, sizeof path, "%s/self/cgroup", proc_root);
    if (read_small_file(path, text, sizeof text) <= 0) return;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *first = strchr(line, ':');
        char *second = first ? strchr(first + 1, ':') : NULL;
        if (!second) continue;
        *second = 0;
        const char *controllers = first + 1, *group = second + 1;
        char candidate[512];
        if (controllers[0] == 0) {
            snprintf(candidate, sizeof candidate, "%s%s/cpu.stat", cgroup_root, group);
            if (access(candidate, R_OK) == 0) { snprintf(cgroup_cpu_stat, sizeof cgroup_cpu_stat, "%s", candidate); cgroup_is_v1 = 0; return; }
        } else if (strcmp(controllers, "cpu") == 0 || strcmp(controllers, "cpu,cpuacct") == 0 || strcmp(controllers, "cpuacct,cpu") == 0) {
            snprintf(candidate, sizeof candidate, "%s/%s%s/cpu.stat", cgroup_root, controllers, group);
            if (access(candidate, R_OK) != 0) snprintf(candidate, sizeof candidate, "%s/cpu%s/cpu.stat", cgroup_root, group);
            if (access(candidate, R_OK) == 0 && !cgroup_cpu_stat[0]) { snprintf(cgroup_cpu_stat, sizeof cgroup_cpu_stat, "%s", candidate); cgroup_is_v1 = 1; }
        }
    }
}

void hitch_machine_read(hitch_machine_reading *out) {
    memset(out, 0, sizeof *out);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    out->online_cpus = cpus > 0 ? (int32_t)cpus : 0;
    char path[320], text[1024];
    // The first line of /proc/stat sums every CPU: "cpu user nice system idle iowait irq softirq steal ...".
    snprintf(path, sizeof path, "%s/stat", proc_root);
    if (read_small_file(path, text, sizeof text) > 0 && strncmp(text, "cpu ", 4) == 0) {
        const char *p = text + 4;
        uint64_t column[8] = {0};
        int found = 0;
        for (; found < 8; found++) {
            while (*p == ' ') p++;
            if (*p < '0' || *p > '9') break;
            uint64_t v = 0;
            while (*p >= '0' && *p <= '9') v = v * 10 + (uint64_t)(*p++ - '0');
            column[found] = v;
        }
        long hz = sysconf(_SC_CLK_TCK);
        if (found == 8 && hz > 0) { out->steal_ns = (int64_t)(column[7] * (1000000000ull / (uint64_t)hz)); out->has_steal = 1; }
    }
    snprintf(path, sizeof path, "%s/pressure/cpu", proc_root);
    if (read_small_file(path, text, sizeof text) > 0) {
        char *some = strstr(text, "some ");
        int64_t total = some ? number_after(some, "total=") : -1;
        if (total >= 0) { out->cpu_pressure_some_us = total; out->has_cpu_pressure = 1; }
    }
    if (cgroup_cpu_stat[0] && read_small_file(cgroup_cpu_stat, text, sizeof text) > 0) {
        int64_t value = cgroup_is_v1 ? number_after(text, "throttled_time ") : number_after(text, "throttled_usec ");
        if (value >= 0) { out->cgroup_throttled_us = cgroup_is_v1 ? value / 1000 : value; out->has_cgroup_throttled = 1; }
    }
}

// MARK: Sessions

int hitch_sched_begin(int thread_states, int switch_events, char *reason, size_t capacity) {
    if (capacity) reason[0] = 0;
    resolve_cgroup();
    int source = 0;
    if (thread_states) {
        char path[320];
        snprintf(path, sizeof path, "%s/self/task/%d/schedstat", proc_root, (int)hitch_platform_thread_id());
        source = access(path, R_OK) == 0 ? 1 : 0;
        if (!source && capacity) snprintf(reason, capacity, "%s: %s", path, strerror(errno));
        if (switch_events && hitch_sched_events_probe(source ? reason : reason + strlen(reason), source ? capacity : capacity - strlen(reason)) == 0) {
            source = 2;
        } else if (!switch_events && source && capacity) {
            snprintf(reason, capacity, "context-switch events off");
        }
        hitch_sched_events_enable(source == 2);
    } else if (capacity) {
        snprintf(reason, capacity, "thread states off (HITCH_THREAD_STATES=0 or the recorder option)");
    }
    __atomic_add_fetch(&sched_session, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&hitch_thread_states_flag, thread_states ? 1 : 0, __ATOMIC_RELEASE);
    return source;
}

void hitch_sched_end(void) {
    __atomic_store_n(&hitch_thread_states_flag, 0, __ATOMIC_RELEASE);
    hitch_sched_events_enable(0);
}
