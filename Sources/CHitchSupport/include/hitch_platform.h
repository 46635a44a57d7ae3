#ifndef HITCH_PLATFORM_H
#define HITCH_PLATFORM_H
// The recorder's only platform-specific calls, in one place (platform.c). The recording path
// itself is POSIX threads, clock_gettime and C11 atomics. Linux is where this is built and tested;
// the other branches are what the code falls back to elsewhere (README "Platforms").
#include <stdint.h>
#include <stddef.h>

/// The calling thread's id: the kernel thread id on Linux (gettid), else a number assigned per
/// thread in order of first use (1, 2, ...), unique within the process.
int32_t hitch_platform_thread_id(void);
/// 1 if the calling thread is the process's initial thread (whose kernel name is the process's).
int hitch_platform_is_initial_thread(void);
/// Sets the calling thread's kernel name (truncated to what the kernel keeps).
void hitch_platform_set_kernel_thread_name(const char *name);
/// The calling thread's kernel name into `out` ("" when the platform has none).
void hitch_platform_current_thread_name(char *out, size_t capacity);
/// Any thread's kernel name by id (Linux: /proc/self/task/<tid>/comm). 0 when unknown.
int hitch_platform_thread_name_of(int32_t tid, char *out, size_t capacity);

#endif
