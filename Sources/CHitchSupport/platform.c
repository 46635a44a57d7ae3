// See hitch_platform.h. Every #ifdef __linux__ of the recorder lives here.
#define _GNU_SOURCE
#include "hitch_platform.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

int32_t hitch_platform_thread_id(void) {
#if defined(__linux__)
    return (int32_t)syscall(SYS_gettid);
#else
    static int32_t next_id = 0;
    static _Thread_local int32_t id = 0;
    if (id == 0) id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    return id;
#endif
}

int hitch_platform_is_initial_thread(void) {
#if defined(__linux__)
    return hitch_platform_thread_id() == (int32_t)getpid();
#elif defined(__APPLE__)
    return pthread_main_np() != 0;
#else
    return 0;
#endif
}

void hitch_platform_set_kernel_thread_name(const char *name) {
    char kernel_name[16];
    strncpy(kernel_name, name, sizeof kernel_name - 1);
    kernel_name[sizeof kernel_name - 1] = 0;
#if defined(__APPLE__)
    pthread_setname_np(kernel_name);
#elif defined(__linux__)
    pthread_setname_np(pthread_self(), kernel_name);
#endif
}

void hitch_platform_current_thread_name(char *out, size_t capacity) {
    if (capacity == 0) return;
    out[0] = 0;
#if defined(__linux__) || defined(__APPLE__)
    pthread_getname_np(pthread_self(), out, capacity);
#endif
}

int hitch_platform_thread_name_of(int32_t tid, char *out, size_t capacity) {
    if (capacity == 0) return 0;
#if defined(__linux__)
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    size_t length = fread(out, 1, capacity - 1, file);
    fclose(file);
    while (length > 0 && (out[length - 1] == '\n' || out[length - 1] == ' ')) length--;
    out[length] = 0;
    return length > 0;
#else
    (void)tid; out[0] = 0;
    return 0;
#endif
}
