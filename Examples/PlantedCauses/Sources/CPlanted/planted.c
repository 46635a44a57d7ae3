#define _GNU_SOURCE
#include "planted.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

int planted_pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

int planted_current_tid(void) { return (int)syscall(SYS_gettid); }

int planted_set_current_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)planted_current_tid(), nice) == 0 ? 0 : errno;
}

int planted_current_thread_nice(void) {
    errno = 0;
    return getpriority(PRIO_PROCESS, (id_t)planted_current_tid());
}

int planted_open_direct(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECT);
    return fd >= 0 ? fd : -errno;
}

int planted_open_random(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -errno;
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    return fd;
}

int planted_drop_cached_pages(int fd) {
    if (fdatasync(fd) != 0) return errno;
    return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

int planted_is_on_tmpfs(int fd) {
    struct statfs fs;
    return fstatfs(fd, &fs) == 0 && fs.f_type == 0x01021994;   // TMPFS_MAGIC
}

long long planted_current_thread_run_delay_ns(void) {
    FILE *file = fopen("/proc/thread-self/schedstat", "r");
    if (file == NULL) return -1;
    unsigned long long running = 0, waiting = 0;
    int fields = fscanf(file, "%llu %llu", &running, &waiting);
    fclose(file);
    return fields == 2 ? (long long)waiting : -1;
}

int planted_online_cpus(void) { return (int)sysconf(_SC_NPROCESSORS_ONLN); }
