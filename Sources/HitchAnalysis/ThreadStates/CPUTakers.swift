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
        guard end > start, runnableNs > 0, let list = threads[thread] else { return [] }
        var low = Self.firstIndex(list, atOrAfter: start)
        var preempted: [(Int64, Int64, UInt16)] = []
        var sleeps: [(Int64, Int64, UInt16)] = []
        var outSince: Int64? = nil, outPreempted = false, outCPU = SchedSwitch.unknownCPU
        if low > 0, list[low - 1].out { outSince = start; outPreempted = list[low - 1].preempted; outCPU = list[low - 1].cpu }
        func close(_ t: Int64, cpu: UInt16) {
            guard let since = outSince, t > since else { outSince = nil; return }
            let interval = (since, t, cpu == SchedSwitch.unknownCPU ? outCPU : cpu)
            if outPreempted { preempted.append(interval) } else { sleeps.append(interval) }
            outSince = nil
        }
        while low < list.count, list[low].atNs < end {
            let s = list[low]
            if s.out { if outSince == nil { outSince = s.atNs; outPreempted = s.preempted; outCPU = s.cpu } }
            else { close(s.atNs, cpu: s.cpu) }
            low += 1
        }
        // Still out at the end: the CPU it comes back on, if the record is in.
        close(end, cpu: low < list.count && !list[low].out ? list[low].cpu : SchedSwitch.unknownCPU)
        var result = preempted.map { (startNs: $0.0, endNs: $0.1, cpu: $0.2) }
        var rest = runnableNs - preempted.reduce(0) { $0 + ($1.1 - $1.0) }
        for sleep in sleeps.reversed() where rest > 0 {
            let length = min(rest, sleep.1 - sleep.0)
            result.append((startNs: sleep.1 - length, endNs: sleep.1, cpu: sleep.2))
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
