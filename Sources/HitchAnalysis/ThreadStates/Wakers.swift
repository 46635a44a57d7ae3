import HitchReader
import HitchTrace

// Who woke a sleeping thread (docs/METRICS.md "Hangs"). A context switch record does not name the
// waker, but the waker was running when it woke the thread: a woken thread is switched in on an idle
// CPU microseconds after the wake-up (while its waker still runs), or on its waker's CPU once the
// waker gives that CPU up. So the waker is the app thread on a CPU just before the sleeper's
// switch-in, or the one that left the sleeper's CPU just before it; of several, the one switched in
// most recently (the waker had itself just woken: a thread that held a lock while it slept).

extension SwitchHistory {
    /// How close before a switch-in the sleeper's CPU must have been given up for its leaver to count.
    static let wakeHandOverNs: Int64 = 200_000

    /// `thread`'s last sleep that ended inside [start, end): a switch-out not marked preempted to its
    /// next switch-in (the switch-in's CPU, `unknownCPU` when unsaid). The last, not the longest: a
    /// wait the hang watchdog's signal interrupted (a futex wait resumes after the handler) shows as
    /// several sleeps, and only the one the wait ended with was ended by its waker. Nil without one.
    func lastSleep(thread: UInt32, from start: Int64, to end: Int64) -> (startNs: Int64, endNs: Int64, cpu: UInt16)? {
        guard end > start, let list = threads[thread] else { return nil }
        var i = Self.firstIndex(list, atOrAfter: start)
        var outSince: Int64? = nil
        if i > 0, list[i - 1].out, !list[i - 1].preempted { outSince = start }
        var last: (startNs: Int64, endNs: Int64, cpu: UInt16)? = nil
        while i < list.count, list[i].atNs < end {
            let s = list[i]
            if s.out { outSince = s.preempted ? nil : s.atNs }
            else if let since = outSince {
                last = (since, s.atNs, s.cpu)
                outSince = nil
            }
            i += 1
        }
        return last
    }

    /// The app thread that most likely woke `thread` when it was switched in at `atNs` on `cpu`
    /// (the rule above); nil when no recorded thread was running then.
    func waker(of thread: UInt32, switchedInAt atNs: Int64, cpu: UInt16) -> UInt32? {
        var best: (thread: UInt32, sinceNs: Int64)? = nil
        for (other, list) in threads where other != thread {
            let next = Self.firstIndex(list, atOrAfter: atNs)
            guard next > 0 else { continue }
            let last = list[next - 1]
            var since: Int64? = nil
            if !last.out {
                // On a CPU when the sleeper came back: not the sleeper's own CPU (it cannot hold both).
                if cpu == SchedSwitch.unknownCPU || last.cpu != cpu { since = last.atNs }
            } else if cpu != SchedSwitch.unknownCPU, last.cpu == cpu, atNs - last.atNs <= Self.wakeHandOverNs, next >= 2, !list[next - 2].out {
                // Left the sleeper's CPU just before it was switched in there.
                since = list[next - 2].atNs
            }
            if let since, best.map({ (since, other) > ($0.sinceNs, $0.thread) }) ?? true { best = (other, since) }
        }
        return best?.thread
    }
}
