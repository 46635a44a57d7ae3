import HitchReader

// Who held the CPU while a frame thread waited for one (docs/METRICS.md "Hitch causes").
//
// With context-switch rings on every thread that records events (metadata `schedSwitchThreads` =
// `recording`), each of the app's recording threads has its on-CPU intervals in the trace, with
// the CPU: from a switch-in on CPU c to its next switch-out. A frame thread's wait for a CPU is
// laid on the CPU it waited for (the one it was switched back in on), and each other thread's time
// on that CPU inside the wait is time the app's own thread took from the frame. The rest of the
// wait is behind other processes or the machine.

extension SwitchHistory {
    /// The time `thread` waited for a CPU in [start, end), as intervals on the CPU it waited for:
    /// each preempting switch-out to its next switch-in, then, for the rest of `runnableNs` (the
    /// wait after a wake-up, which no switch record marks), the ends of its sleeps, latest first
    /// (a woken thread waits last).
    func waits(thread: UInt32, from start: Int64, to end: Int64, runnableNs: Int64) -> [(startNs: Int64, endNs: Int64, cpu: UInt16)] {
        guard end > start, runnableNs > 0 else { return [] }
        let outs = outs(thread: thread, from: start, to: end)
        let preempted = outs.filter(\.preempted)
        var result = preempted.map { (startNs: $0.startNs, endNs: $0.endNs, cpu: $0.cpu) }
        var rest = runnableNs - preempted.reduce(0) { $0 + ($1.endNs - $1.startNs) }
        for sleep in outs.reversed() where !sleep.preempted && rest > 0 {
            let length = min(rest, sleep.endNs - sleep.startNs)
            result.append((startNs: sleep.endNs - length, endNs: sleep.endNs, cpu: sleep.cpu))
            rest -= length
        }
        return result
    }

    /// Each other recorded thread's time on the CPU `thread` waited for, inside its waits in
    /// [start, end) (`waits`), summed over the waits and capped by each wait's length; the
    /// threads with time, most first (ties by thread).
    func cpuTakers(thread: UInt32, from start: Int64, to end: Int64, runnableNs: Int64) -> [(thread: UInt32, ns: Int64)] {
        guard threads.count > 1 else { return [] }
        let waits = waits(thread: thread, from: start, to: end, runnableNs: runnableNs)
        guard !waits.isEmpty else { return [] }
        var taken: [UInt32: Int64] = [:]
        for wait in waits where wait.cpu != SchedSwitch.unknownCPU {
            var left = wait.endNs - wait.startNs
            for (other, list) in threads where other != thread && left > 0 {
                let ns = min(left, Self.onCPU(list, cpu: wait.cpu, from: wait.startNs, to: wait.endNs))
                if ns > 0 { taken[other, default: 0] +|= ns; left -= ns }
            }
        }
        return taken.map { (thread: $0.key, ns: $0.value) }.sorted { ($0.ns, $1.thread) > ($1.ns, $0.thread) }
    }

    /// Each recorded thread's time on the CPUs that frame threads waited for, inside the union of
    /// their waits (`waits` of each): a thread that held a CPU while two frame threads waited for it
    /// counts once. The threads with time, most first (ties by thread).
    func cpuTakers(in windows: [(thread: UInt32, startNs: Int64, endNs: Int64, runnableNs: Int64)]) -> [(thread: UInt32, ns: Int64)] {
        guard threads.count > 1 else { return [] }
        var byCPU: [UInt16: [(startNs: Int64, endNs: Int64)]] = [:]
        for window in windows {
            for wait in waits(thread: window.thread, from: window.startNs, to: window.endNs, runnableNs: window.runnableNs)
            where wait.cpu != SchedSwitch.unknownCPU {
                byCPU[wait.cpu, default: []].append((wait.startNs, wait.endNs))
            }
        }
        var taken: [UInt32: Int64] = [:]
        for (cpu, intervals) in byCPU {
            var merged: [(startNs: Int64, endNs: Int64)] = []
            for interval in intervals.sorted(by: { $0.startNs < $1.startNs }) {
                if let last = merged.last, interval.startNs <= last.endNs { merged[merged.count - 1].endNs = max(last.endNs, interval.endNs) }
                else { merged.append(interval) }
            }
            for (thread, list) in threads {
                for interval in merged {
                    let ns = Self.onCPU(list, cpu: cpu, from: interval.startNs, to: interval.endNs)
                    if ns > 0 { taken[thread, default: 0] +|= ns }
                }
            }
        }
        return taken.map { (thread: $0.key, ns: $0.value) }.sorted { ($0.ns, $1.thread) > ($1.ns, $0.thread) }
    }

    /// The time the app's other threads held the CPU `thread` waited for (`cpuTakers`, summed),
    /// at most `runnableNs`.
    func cpuTakenNs(thread: UInt32, from start: Int64, to end: Int64, runnableNs: Int64) -> Int64 {
        guard runnableNs > 0, threads.count > 1 else { return 0 }
        return min(runnableNs, cpuTakers(thread: thread, from: start, to: end, runnableNs: runnableNs).reduce(0) { $0.addingSaturated($1.ns) })
    }

    /// The time a thread's switch list has it on `cpu` within [start, end): from each switch-in
    /// on that CPU to its next switch-out (one in before `start` counts from `start`).
    static func onCPU(_ list: [Switch], cpu: UInt16, from start: Int64, to end: Int64) -> Int64 {
        var i = firstIndex(list, atOrAfter: start)
        var inSince: Int64? = nil
        if i > 0, !list[i - 1].out, list[i - 1].cpu == cpu { inSince = start }
        var total: Int64 = 0
        while i < list.count, list[i].atNs < end {
            let s = list[i]
            if s.out { if let since = inSince { total +|= s.atNs - since; inSince = nil } }
            else if s.cpu == cpu { inSince = s.atNs } else { inSince = nil }
            i += 1
        }
        if let since = inSince { total +|= end - since }
        return total
    }
}

extension PassContext {
    /// A thread's name in this run (`thread N` before its first event named it).
    func threadName(_ thread: UInt32) -> String {
        Int(thread) < threadNameIndex.count && threadNameIndex[Int(thread)] >= 0 ? threadNames[threadNameIndex[Int(thread)]] : "thread \(thread)"
    }
}
