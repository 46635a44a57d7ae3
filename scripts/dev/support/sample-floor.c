// The machine's floor for 1 kHz sampling: what taking the samples costs a busy thread before any of
// Hitch's code runs (scripts/dev/sample-floor.sh). The same fixed busy loop runs in interleaved rounds:
// unsampled; under a bare perf task-clock event (TID|TIME only); under the sampler's perf event
// (user registers and a stack copy, ring read by a thread every 10 ms, nothing unwound); and under a
// per-thread timer whose SIGPROF handler does nothing. Cost is the whole process's CPU time, as in
// `hitch bench sample`. Prints JSON: the median over rounds of (variant / unsampled - 1), percent.
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { UNSAMPLED, PERF_BARE, PERF_STACK, SIGNAL, VARIANTS };
static const char *names[VARIANTS] = {"unsampled", "perfBare", "perfRegistersAndStack", "timerSignalEmptyHandler"};

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static volatile unsigned long sink;
__attribute__((noinline)) static void work(long iterations) {
    unsigned long value = 1;
    for (long i = 0; i < iterations; i++) value = value * 6364136223846793005ul + (unsigned long)i;
    sink += value;
}

static struct perf_event_mmap_page *_Atomic ring;
static atomic_int stop_reader;

static void *reader(void *unused) {
    (void)unused;
    while (!atomic_load(&stop_reader)) {
        struct perf_event_mmap_page *page = atomic_load(&ring);
        if (page) __atomic_store_n(&page->data_tail, __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
        usleep(10000);
    }
    return NULL;
}

static void on_signal(int signo) { (void)signo; }

static double run(int variant, long iterations, int rate, int stack_bytes) {
    int fd = -1;
    void *map = NULL;
    size_t map_bytes = ((size_t)1 << 20) + 4096;
    timer_t timer;
    if (variant == PERF_BARE || variant == PERF_STACK) {
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = PERF_COUNT_SW_TASK_CLOCK;
        attr.sample_period = 1000000000ull / (unsigned)rate;
        attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
        if (variant == PERF_STACK) {
            attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
            attr.sample_regs_user = 0xff01ffull; // AX..IP, R8..R15
            attr.sample_stack_user = (unsigned)stack_bytes;
        }
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        attr.disabled = 1;
        attr.use_clockid = 1;
        attr.clockid = CLOCK_MONOTONIC;
        fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
        if (fd < 0) { perror("perf_event_open"); exit(2); }
        map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) { perror("mmap"); exit(2); }
        atomic_store(&ring, map);
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    } else if (variant == SIGNAL) {
        struct sigevent event;
        memset(&event, 0, sizeof event);
        event.sigev_notify = SIGEV_THREAD_ID;
        event.sigev_signo = SIGPROF;
        event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        timer_create(CLOCK_MONOTONIC, &event, &timer);
        long interval = 1000000000L / rate;
        struct itimerspec spec = {{0, interval}, {0, interval}};
        timer_settime(timer, 0, &spec, NULL);
    }
    double before = cpu_seconds();
    work(iterations);
    double cost = cpu_seconds() - before;
    if (fd >= 0) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        atomic_store(&ring, NULL);
        usleep(20000); // the reader is past any use of the ring
        munmap(map, map_bytes);
        close(fd);
    } else if (variant == SIGNAL) {
        timer_delete(timer);
    }
    return cost;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    int rate = argc > 2 ? atoi(argv[2]) : 1000;
    int stack_bytes = argc > 3 ? atoi(argv[3]) : 32768;
    if (rounds < 3 || rounds > 1000 || rate < 1 || rate > 10000 || stack_bytes < 8 || stack_bytes > 65528 || stack_bytes % 8) {
        fprintf(stderr, "usage: sample-floor [ROUNDS 3..1000] [RATE_HZ 1..10000] [STACK_BYTES 8..65528, a multiple of 8]\n");
        return 2;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &action, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, reader, NULL);
    // About 250 ms of CPU per repetition, as in `hitch bench sample`.
    long iterations = 10000000;
    while (run(UNSAMPLED, iterations, rate, stack_bytes) < 0.25) iterations *= 2;
    double ratios[VARIANTS][1000];
    for (int round = 0; round < rounds; round++) {
        double cost[VARIANTS];
        for (int step = 0; step < VARIANTS; step++) {
            int variant = (step + round) % VARIANTS; // rotate the order every round
            cost[variant] = run(variant, iterations, rate, stack_bytes);
        }
        for (int variant = 1; variant < VARIANTS; variant++) ratios[variant][round] = (cost[variant] / cost[UNSAMPLED] - 1) * 100;
    }
    atomic_store(&stop_reader, 1);
    pthread_join(thread, NULL);
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    printf("{\n  \"rateHz\": %d,\n  \"stackCopyBytes\": %d,\n  \"rounds\": %d,\n  \"loadAverage\": \"%.2f %.2f %.2f\"", rate, stack_bytes, rounds, load[0], load[1], load[2]);
    for (int variant = 1; variant < VARIANTS; variant++) {
        qsort(ratios[variant], (size_t)rounds, sizeof(double), compare);
        double median = rounds % 2 ? ratios[variant][rounds / 2] : (ratios[variant][rounds / 2 - 1] + ratios[variant][rounds / 2]) / 2;
        printf(",\n  \"%sOverheadPercent\": %.2f", names[variant], median);
    }
    printf("\n}\n");
    return 0;
}
