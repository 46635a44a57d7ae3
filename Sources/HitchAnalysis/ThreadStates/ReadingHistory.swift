import HitchTrace

/// Each frame thread's recent readings in its own order (file order is per-thread order, so the
/// same in any interleaving of threads): the thread's state over any recent interval.
struct ReadingHistory: Sendable {
    /// Enough for a thread's buffer to reach the file a few thousand frames ahead of the frames
    /// being judged (3 readings a frame): the `EventOrder.holdLimit` frames assembly may hold.
    static let perThread = 12_288
    static let threads = 16
    /// Each thread's latest `perThread` readings (the holder lets the oldest go).
    private var rings: [UInt32: BoundedHolder<PhaseReading>] = [:]

    mutating func removeAll() { rings.removeAll(keepingCapacity: true) }

    /// Adds a reading; returns the thread's previous one.
    mutating func add(_ reading: PhaseReading, thread: UInt32) -> PhaseReading? {
        if rings[thread] == nil {
            guard rings.count < Self.threads else { return nil }
            rings[thread] = BoundedHolder(limit: Self.perThread)
        }
        let previous = rings[thread]?.last
        rings[thread]?.appendKeepingLimit(reading)
        return previous
    }

    /// The time not running of `thread` in [start, end), from each pair of consecutive readings
    /// overlapping it: a pair's runnable time, then its stolen time, then its time asleep are taken
    /// as lying at its end, up to the overlap (a thread that slept, woke and waited for a CPU waits
    /// last, and slept before that); `runningNs` is the pair's running time in what the overlap has
    /// left (on-CPU work in the late start). Nil when the readings kept do not reach back to `start`,
    /// or there was no such time.
    func lateStart(thread: UInt32, from start: Int64, to end: Int64, switches: SwitchHistory) -> StateSplit? {
        guard end > start, let ring = rings[thread] else { return nil }
        var result = StateSplit(), later: PhaseReading? = nil, covered = false
        ring.forEachNewestFirst { earlier in
            defer { later = earlier }
            guard let later else { return true }
            if later.atNs <= start { return false }
            if earlier.atNs <= start { covered = true }
            let overlap = min(end, later.atNs) - max(start, earlier.atNs)
            let span = later.atNs - earlier.atNs
            guard overlap > 0, span > 0, let split = StateSplit.between(earlier, later, thread: thread, switches: switches) else { return !covered }
            let runnable = min(overlap, split.runnableNs)
            result.runnableNs +|= runnable
            let machine = min(overlap - runnable, split.machineNs)
            result.machineNs +|= machine
            // Asleep past the vsync (a wake-up timer the host fired late, a lock): not on-CPU work,
            // so the counterfactual frame does not keep it. The pair's running time may all lie
            // after the wake-up (work before the frame began), so only what is left beyond it counts.
            result.blockedNs +|= max(0, min(overlap - runnable - machine - split.runningNs, split.blockedNs))
            result.runningNs +|= min(overlap - runnable - machine, split.runningNs)
            return !covered
        }
        return covered && result.wallNs > 0 ? result : nil
    }
}
