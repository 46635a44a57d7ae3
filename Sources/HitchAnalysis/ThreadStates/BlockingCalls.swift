import HitchTrace

/// Leaf functions that mean a sample caught its thread asleep in the kernel (the sampler's timer
/// runs on wall time): a poll, a futex wait, a blocking read, a sleep. One list, used by the hitch
/// attribution to count such samples as blocked time, never as a hot function.
enum BlockingCalls {
    static let names: Set<String> = [
        "poll", "__poll", "ppoll", "__ppoll", "__GI___poll", "__GI_ppoll", "select", "__select", "pselect", "pselect6",
        "epoll_wait", "epoll_pwait", "epoll_pwait2", "__epoll_wait",
        "futex", "futex_wait", "__futex_abstimed_wait_common", "__futex_abstimed_wait_common64",
        "__futex_abstimed_wait_cancelable64", "do_futex_wait", "__lll_lock_wait", "__lll_lock_wait_private",
        "pthread_cond_wait", "__pthread_cond_wait", "pthread_cond_timedwait", "__pthread_cond_timedwait",
        "pthread_cond_clockwait", "__pthread_clockjoin_ex", "pthread_join", "__pthread_join",
        "sem_wait", "__new_sem_wait", "__new_sem_wait_slow64", "__new_sem_wait_slow", "sem_timedwait", "sem_clockwait",
        "read", "__read", "__libc_read", "__read_nocancel", "pread", "pread64", "__libc_pread", "__pread64",
        "recv", "__libc_recv", "recvfrom", "__libc_recvfrom", "recvmsg", "__libc_recvmsg", "accept", "accept4",
        "nanosleep", "__nanosleep", "clock_nanosleep", "__clock_nanosleep", "__GI___clock_nanosleep", "usleep", "sleep",
        "wait4", "waitpid", "__waitpid", "waitid", "pause", "sigsuspend", "sigwaitinfo", "sigtimedwait", "__sigtimedwait",
        "fsync", "fdatasync", "msgrcv", "flock",
    ]

    /// `symbol` without a symbol version (`pthread_cond_wait@@GLIBC_2.3.2`) names a blocking call.
    static func isBlocking(_ symbol: String) -> Bool {
        if let at = symbol.firstIndex(of: "@") { return names.contains(String(symbol[..<at])) }
        return names.contains(symbol)
    }
}
