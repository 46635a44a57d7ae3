#ifndef PLANTED_H
#define PLANTED_H

/// Pins the calling thread to one CPU. Returns 0, or errno.
int planted_pin_current_thread(int cpu);

/// Sets the calling thread's nice value (Linux keeps one per thread). Returns 0, or errno.
int planted_set_current_thread_nice(int nice);

/// The calling thread's nice value.
int planted_current_thread_nice(void);

/// The calling thread's kernel id.
int planted_current_tid(void);

/// Opens `path` for reads that bypass the page cache (O_DIRECT). Returns the descriptor, or -errno.
int planted_open_direct(const char *path);

/// Opens `path` for reads without readahead (POSIX_FADV_RANDOM), for a file system that refuses
/// O_DIRECT. Returns the descriptor, or -errno.
int planted_open_random(const char *path);

/// Drops the file's cached pages (posix_fadvise DONTNEED after fdatasync). Returns 0, or errno.
int planted_drop_cached_pages(int fd);

/// 1 when `fd` is a file on tmpfs (memory: no read of it waits for a disk), else 0.
int planted_is_on_tmpfs(int fd);

/// The calling thread's time waiting on a run queue so far, in ns (the second field of
/// /proc/thread-self/schedstat), or -1 where the kernel does not keep it.
long long planted_current_thread_run_delay_ns(void);

/// The number of CPUs the machine has online.
int planted_online_cpus(void);

#endif
