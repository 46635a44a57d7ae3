// Each thread's scheduling from ftrace (`sched_switch`, `sched_waking` and their `compact_sched`
// forms) as the counters a recorder's thread-state reading holds: time on a CPU, time runnable
// but waiting for one, switches out asleep and switches out preempted (docs/FORMAT.md "Thread
// states"), at any time the thread's transitions cover. ftrace writes one bundle per CPU, so a
// thread that moves between CPUs has its transitions arrive out of order: they are kept sorted per
// thread, with the counters after each one computed lazily, and bounded (the oldest half folded
// into a base when full).

struct SchedAccounting {
    enum Transition: UInt8 { case switchIn, switchOutPreempted, switchOutAsleep, waking }
    enum State: UInt8 { case running, runnable, asleep }

    /// Cumulative counters after a transition, and the state it left the thread in.
    struct Counters: Equatable {
        var cpuNs: Int64 = 0
        var runnableNs: Int64 = 0
        var voluntary: Int64 = 0
        var involuntary: Int64 = 0
        var state = State.asleep

        /// These counters moved on by `ns` spent in `state`.
        func advanced(by ns: Int64) -> Counters {
            var c = self
            if state == .running { c.cpuNs = SchedAccounting.sum(c.cpuNs, ns) }
            if state == .runnable { c.runnableNs = SchedAccounting.sum(c.runnableNs, ns) }
            return c
        }

        /// These counters moved on to `atNs` (from `fromNs`) and through `transition`.
        func applying(_ transition: Transition, fromNs: Int64, atNs: Int64) -> Counters {
            var c = advanced(by: SchedAccounting.elapsed(from: fromNs, to: atNs))
            switch transition {
            case .switchIn: c.state = .running
            case .switchOutPreempted: c.involuntary += 1; c.state = .runnable
            case .switchOutAsleep: c.voluntary += 1; c.state = .asleep
            case .waking: if c.state == .asleep { c.state = .runnable }
            }
            return c
        }
    }

    fileprivate struct History {
        var times: [Int64] = []
        var transitions: [Transition] = []
        /// Counters after each transition, valid for the first `validCount`.
        var after: [Counters] = []
        var validCount = 0
        /// The counters at `baseNs` (the last folded transition's time); `.min`: nothing folded, the
        /// counters start at zero with the first transition (the state before it is unknown).
        var base = Counters()
        var baseNs = Int64.min
    }

    /// `a + b`, stuck at `Int64.max` (hostile timestamps).
    static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : total
    }

    /// `to - from` when positive, else 0; `Int64.max` past the type's range.
    static func elapsed(from: Int64, to: Int64) -> Int64 {
        guard to > from else { return 0 }
        let (difference, overflow) = to.subtractingReportingOverflow(from)
        return overflow ? .max : difference
    }

    private var histories: [Int64: History] = [:]
    /// Threads followed at once; transitions of further threads are counted as skipped.
    static let threadLimit = 2048
    /// Transitions kept of one of the app's threads, and of any other thread (the app's threads
    /// are known from its first frame on; before that every thread is followed, briefly). When a
    /// thread has more, its oldest half is folded into its base. At about 50 bytes a transition,
    /// that is at most 400 KB per app thread and 13 KB per other thread.
    static let appThreadTransitions = 1 << 13
    static let otherThreadTransitions = 256
    private(set) var skippedTransitions = 0

    mutating func add(_ transition: Transition, thread tid: Int64, atNs: Int64, isAppThread: Bool) {
        if histories[tid] == nil {
            guard histories.count < Self.threadLimit else { skippedTransitions += 1; return }
            histories[tid] = History()
        }
        let keep = isAppThread ? Self.appThreadTransitions : Self.otherThreadTransitions
        histories[tid]!.insert(transition, atNs: atNs, perThread: keep, skipped: &skippedTransitions)
    }

    /// The thread's counters at `atNs`, or nil when its kept transitions do not reach back to it.
    mutating func counters(thread tid: Int64, atNs: Int64) -> Counters? {
        guard var history = histories[tid] else { return nil }
        histories[tid] = nil   // mutated in place, without a copy
        defer { histories[tid] = history }
        return history.counters(atNs: atNs)
    }
}

extension SchedAccounting.History {
    /// The index of the first transition later than `t`.
    private func upperBound(_ t: Int64) -> Int {
        var low = 0, high = times.count
        while low < high { let mid = (low + high) / 2; if times[mid] <= t { low = mid + 1 } else { high = mid } }
        return low
    }

    mutating func insert(_ transition: SchedAccounting.Transition, atNs: Int64, perThread: Int, skipped: inout Int) {
        if baseNs != .min && atNs < baseNs { skipped += 1; return }   // older than what was folded
        let at = times.last.map { atNs >= $0 } ?? true ? times.count : upperBound(atNs)
        times.insert(atNs, at: at)
        transitions.insert(transition, at: at)
        if at < after.count { after.removeSubrange(at...) }
        validCount = min(validCount, at)
        if times.count > perThread { fold(perThread / 2) }
    }

    /// Computes the counters after each transition up to index `index`.
    private mutating func settle(through index: Int) {
        while validCount <= index {
            let i = validCount
            let c: SchedAccounting.Counters
            if i == 0 {
                c = baseNs == .min ? SchedAccounting.Counters().applying(transitions[0], fromNs: times[0], atNs: times[0])
                                   : base.applying(transitions[0], fromNs: baseNs, atNs: times[0])
            } else {
                c = after[i - 1].applying(transitions[i], fromNs: times[i - 1], atNs: times[i])
            }
            if after.count > i { after[i] = c } else { after.append(c) }
            validCount += 1
        }
    }

    private mutating func fold(_ count: Int) {
        guard count > 0, count <= times.count else { return }
        settle(through: count - 1)
        base = after[count - 1]
        baseNs = times[count - 1]
        times.removeFirst(count)
        transitions.removeFirst(count)
        after.removeFirst(count)
        validCount -= count
    }

    mutating func counters(atNs: Int64) -> SchedAccounting.Counters? {
        let index = upperBound(atNs) - 1
        if index < 0 {
            // Before every kept transition: only from a folded base at or before it.
            guard baseNs != .min, atNs >= baseNs else { return nil }
            return base.advanced(by: SchedAccounting.elapsed(from: baseNs, to: atNs))
        }
        settle(through: index)
        return after[index].advanced(by: SchedAccounting.elapsed(from: times[index], to: atNs))
    }
}
