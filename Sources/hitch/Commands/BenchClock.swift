import Foundation

/// The clocks and machine readings the benchmarks measure with.
enum BenchClock {
    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// CPU time of the calling thread: on a shared machine, time spent descheduled is not the
    /// measured code's cost, so the benchmarks' rates are per CPU-second of the measuring thread.
    static func threadCPUNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func threadCPUSeconds() -> Double { Double(threadCPUNanoseconds()) / 1e9 }

    /// CPU time of the whole process (every thread, user and system), in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The 1-, 5- and 15-minute load averages as /proc/loadavg spells them (empty where unavailable),
    /// so a noisy run is visible in the output.
    static func loadAverages() -> [Substring] {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").prefix(3).map { $0 }
    }
}
