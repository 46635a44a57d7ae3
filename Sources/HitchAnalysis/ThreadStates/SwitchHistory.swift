import HitchReader

/// Each recorded thread's exact context switches (perf source), kept sorted by time per thread
/// whatever the file order: the writer drains them after the fact, so they reach the file after
/// other events of the same time. Where a thread's readings lack the schedstat run delay (no
/// schedstat file), a window's runnable and blocked time come from here (`outTime`).
struct SwitchHistory: Sendable {
    struct Switch: Sendable, Equatable {
        var atNs: Int64
        var out: Bool
        var preempted: Bool
        /// The CPU left or taken (`SchedSwitch.unknownCPU` when unsaid).
        var cpu: UInt16 = SchedSwitch.unknownCPU
    }
    /// A reading is stamped just before its counters are read: a switch this soon after a window's
    /// end reading may already be in that reading's switch counts.
    static let readSlackNs: Int64 = 50_000
    /// Every thread that records events has its switches recorded (`schedSwitchThreads`): enough
    /// for the frame threads and the app's other threads.
    static let threadLimit = 64
    /// Switches kept per thread: the oldest half goes when full.
    let perThread: Int
    private(set) var threads: [UInt32: [Switch]] = [:]

    init(perThread: Int = 1 << 16) { self.perThread = perThread }

    var isEmpty: Bool { threads.isEmpty }
    mutating func removeAll() { threads.removeAll(keepingCapacity: true) }

    mutating func add(_ s: Switch, thread: UInt32) {
        if threads[thread] == nil {
            guard threads.count < Self.threadLimit else { return }
            threads[thread] = []
        }
        // Per-thread records arrive in time order: appending is the common case.
        if let last = threads[thread]!.last, s.atNs < last.atNs {
            let at = Self.firstIndex(threads[thread]!, atOrAfter: s.atNs)
            threads[thread]!.insert(s, at: at)
        } else {
            threads[thread]!.append(s)
        }
        // Bounded: the oldest go (frames are judged a bounded number of frames behind).
        if threads[thread]!.count > perThread { threads[thread]!.removeFirst(perThread / 2) }
    }

    static func firstIndex(_ list: [Switch], atOrAfter t: Int64) -> Int {
        var low = 0, high = list.count
        while low < high { let mid = (low + high) / 2; if list[mid].atNs < t { low = mid + 1 } else { high = mid } }
        return low
    }

    /// Switch-outs of `thread` in [start, end + readSlackNs): at least `expectedOuts` (the readings' switch
    /// count over the window) means every switch of the window is in.
    func isComplete(thread: UInt32, from start: Int64, to end: Int64, expectedOuts: Int64) -> Bool {
        guard expectedOuts > 0 else { return true }
        guard let list = threads[thread] else { return false }
        var outs: Int64 = 0, i = Self.firstIndex(list, atOrAfter: start)
        let limit = end.addingSaturated(Self.readSlackNs)
        while i < list.count, list[i].atNs < limit, outs < expectedOuts { if list[i].out { outs += 1 }; i += 1 }
        return outs >= expectedOuts
    }

    /// The time `thread` spent switched out in [start, end): after a preempting switch-out runnable
    /// (it waited on a run queue until its next switch-in), after any other switch-out blocked.
    /// A thread switched out before `start` counts from `start`. Nil when the window's switches are
    /// not all in (fewer switch-outs than `expectedOuts`: records lost or not drained).
    func outTime(thread: UInt32, from start: Int64, to end: Int64, expectedOuts: Int64) -> (runnableNs: Int64, blockedNs: Int64)? {
        guard end > start else { return (0, 0) }
        guard isComplete(thread: thread, from: start, to: end, expectedOuts: expectedOuts) else { return nil }
        guard let list = threads[thread] else { return (0, 0) }
        let low = Self.firstIndex(list, atOrAfter: start)
        var outSince: Int64? = nil, preempted = false
        if low > 0, list[low - 1].out { outSince = start; preempted = list[low - 1].preempted }
        var runnable: Int64 = 0, blocked: Int64 = 0
        func close(_ t: Int64) {
            guard let since = outSince else { return }
            if preempted { runnable +|= t - since } else { blocked +|= t - since }
            outSince = nil
        }
        var i = low
        while i < list.count, list[i].atNs < end {
            let s = list[i]
            if s.out { if outSince == nil { outSince = s.atNs; preempted = s.preempted } } else { close(s.atNs) }
            i += 1
        }
        close(end)
        return (runnable, blocked)
    }
}
