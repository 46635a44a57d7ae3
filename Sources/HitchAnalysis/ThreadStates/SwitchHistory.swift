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
    /// Threads one of whose records came after a later one of theirs: their latest record proves
    /// nothing about the earlier ones (`inThroughNs`).
    private var outOfOrder: Set<UInt32> = []

    init(perThread: Int = 1 << 16) { self.perThread = perThread }

    var isEmpty: Bool { threads.isEmpty }
    mutating func removeAll() { threads.removeAll(keepingCapacity: true); outOfOrder.removeAll() }

    /// Every switch record of `thread` before this time is in: the latest one read, while the
    /// thread's records have come in time order (the recorder drains each thread's ring in order,
    /// so each thread's records are in time order in its file order, whatever the interleaving of
    /// threads); `.min` without records, or once one came out of order.
    func inThroughNs(thread: UInt32) -> Int64 {
        guard !outOfOrder.contains(thread), let last = threads[thread]?.last else { return .min }
        return last.atNs
    }

    mutating func add(_ s: Switch, thread: UInt32) {
        if threads[thread] == nil {
            guard threads.count < Self.threadLimit else { return }
            threads[thread] = []
        }
        // Per-thread records arrive in time order: appending is the common case.
        if let last = threads[thread]!.last, s.atNs < last.atNs {
            outOfOrder.insert(thread)
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

    /// One stretch of a thread switched out: from its switch-out (or the window's start) to its next
    /// switch-in (or the window's end); `preempted` when it left runnable; `cpu` the one it came back
    /// on (else the one it left, else unknown).
    struct Out: Sendable, Equatable {
        var startNs: Int64
        var endNs: Int64
        var preempted: Bool
        var cpu: UInt16
    }

    /// The stretches `thread` spent switched out in [start, end), in time order. A thread switched
    /// out before `start` counts from `start`; one still out at `end`, to `end`.
    func outs(thread: UInt32, from start: Int64, to end: Int64) -> [Out] {
        guard end > start, let list = threads[thread] else { return [] }
        var i = Self.firstIndex(list, atOrAfter: start)
        var result: [Out] = []
        var open: Out? = nil
        if i > 0, list[i - 1].out { open = Out(startNs: start, endNs: start, preempted: list[i - 1].preempted, cpu: list[i - 1].cpu) }
        func close(_ t: Int64, cpu: UInt16) {
            guard var out = open else { return }
            open = nil
            guard t > out.startNs else { return }
            out.endNs = t
            if cpu != SchedSwitch.unknownCPU { out.cpu = cpu }
            result.append(out)
        }
        while i < list.count, list[i].atNs < end {
            let s = list[i]
            if s.out { if open == nil { open = Out(startNs: s.atNs, endNs: s.atNs, preempted: s.preempted, cpu: s.cpu) } }
            else { close(s.atNs, cpu: s.cpu) }
            i += 1
        }
        // Still out at the end: the CPU it comes back on, if the record is in.
        close(end, cpu: i < list.count && !list[i].out ? list[i].cpu : SchedSwitch.unknownCPU)
        return result
    }

    /// The time `thread` spent switched out in [start, end): after a preempting switch-out runnable
    /// (it waited on a run queue until its next switch-in), after any other switch-out blocked.
    /// A thread switched out before `start` counts from `start`. Nil when the window's switches are
    /// not all in (fewer switch-outs than `expectedOuts`: records lost or not drained).
    func outTime(thread: UInt32, from start: Int64, to end: Int64, expectedOuts: Int64) -> (runnableNs: Int64, blockedNs: Int64)? {
        guard end > start else { return (0, 0) }
        guard isComplete(thread: thread, from: start, to: end, expectedOuts: expectedOuts) else { return nil }
        var runnable: Int64 = 0, blocked: Int64 = 0
        for out in outs(thread: thread, from: start, to: end) {
            if out.preempted { runnable +|= out.endNs - out.startNs } else { blocked +|= out.endNs - out.startNs }
        }
        return (runnable, blocked)
    }

    /// How long `thread` was kept off a CPU (preempted) after `t` before it had run `runningNs` more
    /// or slept: a release it recorded at `t` (a render's end) wakes its waiter within its first
    /// moments on a CPU after it, however long busier threads held that CPU in between. Counts only
    /// the records that are in; 0 without them.
    func preemptedAfter(thread: UInt32, from t: Int64, runningNs budget: Int64) -> Int64 {
        guard let list = threads[thread] else { return 0 }
        var i = Self.firstIndex(list, atOrAfter: t)
        var preemptedNs: Int64 = 0, ranNs: Int64 = 0
        var preemptedSince: Int64? = nil, runningSince: Int64? = t
        if i > 0, list[i - 1].out {
            guard list[i - 1].preempted else { return 0 }
            preemptedSince = t
            runningSince = nil
        }
        while i < list.count {
            let s = list[i]
            if s.out, let since = runningSince {
                ranNs +|= s.atNs - since
                guard ranNs < budget, s.preempted else { return preemptedNs }
                runningSince = nil
                preemptedSince = s.atNs
            } else if !s.out, let since = preemptedSince {
                preemptedNs +|= s.atNs - since
                preemptedSince = nil
                runningSince = s.atNs
            }
            i += 1
        }
        return preemptedNs
    }

    /// How long a thread may run between two sleeps that are one wait: a signal that interrupts a
    /// wait the kernel restarts (the hang watchdog's capture) switches the thread in for its handler,
    /// tens of microseconds, and it sleeps again on the same wait.
    static let resumedSleepGapNs: Int64 = 200_000

    /// The stretches `thread` slept in [start, end) (switched out, not preempted), when the
    /// window's switches are all in (`isComplete`); nil otherwise. A sleep's end is its switch-in,
    /// so a woken thread's wait for a CPU is inside it. From `resumedFromNs` on (where the hang
    /// watchdog may interrupt the thread), sleeps less than `resumedSleepGapNs` apart are one sleep;
    /// before it they stay apart (a loop of short waits, such as reads from a disk, is many sleeps).
    func sleeps(thread: UInt32, from start: Int64, to end: Int64, expectedOuts: Int64, resumedFromNs: Int64 = .max) -> [(startNs: Int64, endNs: Int64)]? {
        guard end > start else { return [] }
        guard threads[thread] != nil, isComplete(thread: thread, from: start, to: end, expectedOuts: expectedOuts) else { return nil }
        var result: [(startNs: Int64, endNs: Int64)] = []
        for out in outs(thread: thread, from: start, to: end) where !out.preempted {
            if let last = result.last, last.endNs >= resumedFromNs, out.startNs - last.endNs < Self.resumedSleepGapNs {
                result[result.count - 1].endNs = out.endNs
            } else {
                result.append((out.startNs, out.endNs))
            }
        }
        return result
    }
}
