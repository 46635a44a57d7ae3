#define _GNU_SOURCE
#include "hitch_thread.h"
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

int hitch_thread_make_background(void) {
    struct sched_param param = { .sched_priority = 0 };
    // pid 0: on Linux the calling thread, not the whole process.
    if (sched_setscheduler(0, SCHED_IDLE, &param) == 0) return 1;
    return setpriority(PRIO_PROCESS, 0, 19) == 0 ? 0 : -1;
}

int hitch_thread_make_normal(int32_t tid) {
    struct sched_param param = { .sched_priority = 0 };
    if (sched_setscheduler(tid, SCHED_OTHER, &param) != 0) return errno;
    if (getpriority(PRIO_PROCESS, tid) != 0 && setpriority(PRIO_PROCESS, tid, 0) != 0) return errno;
    return 0;
}

int64_t hitch_thread_run_delay_ns(int32_t tid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
    FILE *file = fopen(path, "r");
    if (file == NULL) return -1;
    // "<ns on a CPU> <ns runnable, waiting for one> <timeslices>"
    unsigned long long running = 0, waiting = 0;
    int read = fscanf(file, "%llu %llu", &running, &waiting);
    fclose(file);
    return read == 2 ? (int64_t)waiting : -1;
}
