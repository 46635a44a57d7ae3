import HitchTrace

/// Calls that put their thread to sleep in the kernel, with what the thread waits on: libc's
/// functions as a sampled stack's innermost frame shows them (the sampler's timer runs on wall time,
/// so it also catches a sleeping thread), and the system calls the hang watchdog reads from /proc.
/// The hitch attribution counts samples in such functions as blocked time, never as a hot function;
/// the hang pass says what a blocked main thread waited on (`HangWait`).
enum BlockingCalls {
    /// libc's blocking functions, as the innermost frame of a sample that caught its thread asleep.
    static let functions: [String: HangWait] = table([
        (.lock, ["futex", "futex_wait", "__futex_abstimed_wait_common", "__futex_abstimed_wait_common64",
                 "__futex_abstimed_wait_cancelable64", "do_futex_wait", "__lll_lock_wait", "__lll_lock_wait_private",
                 "pthread_cond_wait", "__pthread_cond_wait", "pthread_cond_timedwait", "__pthread_cond_timedwait",
                 "pthread_cond_clockwait", "__pthread_clockjoin_ex", "pthread_join", "__pthread_join",
                 "sem_wait", "__new_sem_wait", "__new_sem_wait_slow64", "__new_sem_wait_slow", "sem_timedwait", "sem_clockwait", "flock"]),
        (.io, ["read", "__read", "__libc_read", "__read_nocancel", "pread", "pread64", "__libc_pread", "__pread64", "fsync", "fdatasync"]),
        (.sleep, ["nanosleep", "__nanosleep", "clock_nanosleep", "__clock_nanosleep", "__GI___clock_nanosleep", "usleep", "sleep"]),
        (.otherWait, ["poll", "__poll", "ppoll", "__ppoll", "__GI___poll", "__GI_ppoll", "select", "__select", "pselect", "pselect6",
                      "epoll_wait", "epoll_pwait", "epoll_pwait2", "__epoll_wait",
                      "recv", "__libc_recv", "recvfrom", "__libc_recvfrom", "recvmsg", "__libc_recvmsg", "accept", "accept4",
                      "wait4", "waitpid", "__waitpid", "waitid", "pause", "sigsuspend", "sigwaitinfo", "sigtimedwait", "__sigtimedwait",
                      "msgrcv"]),
    ])

    /// The kernel's system calls a sleeping thread may be in, by the names the watchdog writes
    /// (docs/FORMAT.md "Hangs"): a thread in one of these with state `S` or `D` waits on its kind.
    static let systemCalls: [String: HangWait] = table([
        (.lock, ["futex", "futex_waitv", "flock"]),
        (.io, ["read", "pread64", "readv", "preadv", "preadv2", "write", "pwrite64", "writev", "pwritev", "pwritev2", "fsync",
               "fdatasync", "sync_file_range", "openat", "open", "newfstatat", "statx", "getdents64", "io_uring_enter", "io_getevents"]),
        (.sleep, ["nanosleep", "clock_nanosleep"]),
        (.otherWait, ["poll", "ppoll", "select", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2", "recvfrom", "recvmsg",
                      "accept", "accept4", "connect", "wait4", "waitid", "pause", "rt_sigsuspend", "rt_sigtimedwait", "msgrcv"]),
    ])

    private static func table(_ groups: [(HangWait, [String])]) -> [String: HangWait] {
        var kinds: [String: HangWait] = [:]
        for (kind, names) in groups { for name in names { kinds[name] = kind } }
        return kinds
    }

    /// What a blocking function (with or without a symbol version such as
    /// `pthread_cond_wait@@GLIBC_2.3.2`) waits on; nil when it is not one.
    static func kind(_ symbol: String) -> HangWait? {
        if let at = symbol.firstIndex(of: "@") { return functions[String(symbol[..<at])] }
        return functions[symbol]
    }

    static func isBlocking(_ symbol: String) -> Bool { kind(symbol) != nil }

    /// What a sleeping thread waits on by the kernel's words: its system call when listed, else its
    /// wait channel, else its state (`D`, an uninterruptible sleep, is disk I/O or a page fault).
    static func kind(systemCall: String, waitChannel: String, schedState: String) -> HangWait? {
        if let kind = systemCalls[systemCall] { return kind }
        if waitChannel.contains("futex") { return .lock }
        if waitChannel.contains("nanosleep") { return .sleep }
        if waitChannel.contains("poll") || waitChannel.contains("select") || waitChannel.contains("wait4") { return .otherWait }
        if schedState == "D" || waitChannel.contains("folio") || waitChannel.contains("io_schedule") || waitChannel.contains("page") {
            return .io
        }
        return nil
    }
}
