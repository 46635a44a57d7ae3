#define _GNU_SOURCE
#include "hitch_thread.h"
#include <sched.h>
#include <sys/resource.h>

int hitch_thread_make_background(void) {
    struct sched_param param = { .sched_priority = 0 };
    // pid 0: on Linux the calling thread, not the whole process.
    if (sched_setscheduler(0, SCHED_IDLE, &param) == 0) return 1;
    return setpriority(PRIO_PROCESS, 0, 19) == 0 ? 0 : -1;
}
