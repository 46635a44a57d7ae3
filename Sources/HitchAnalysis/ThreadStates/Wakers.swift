import HitchReader
import HitchTrace

// Who woke a sleeping thread (docs/METRICS.md "Hangs"). A context switch record does not name the
// waker, but the waker was running when it woke the thread, and the woken thread is switched in once
// a CPU is free for it: microseconds later on an idle CPU, or after waiting runnable (on the waker's
// CPU once the waker gives it up, or behind other work). So the waker is an app thread that was on a
// CPU in the stretch before the sleeper's switch-in as long as the sleeper may have waited for a CPU
// (its runnable time, plus a hand-over margin); of several, the one switched in most recently (the
// waker had itself just woken: a thread that held a lock while it slept).

extension SwitchHistory {
    /// The margin beyond the sleeper's runnable time: the wake-up's and the switch-in's own latency.
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

    /// The app thread that most likely woke `thread` when it was switched in at `atNs` after waiting
    /// at most `waitedNs` for a CPU (the rule above); nil when no recorded thread was on a CPU then.
    func waker(of thread: UInt32, switchedInAt atNs: Int64, waitedNs: Int64) -> UInt32? {
        let from = atNs.subtractingSaturated(max(0, waitedNs).addingSaturated(Self.wakeHandOverNs))
        var best: (thread: UInt32, sinceNs: Int64)? = nil
        for (other, list) in threads where other != thread {
            // Its last switch-in at or before the sleeper's, and whether it was still on a CPU at `from`.
            var i = Self.firstIndex(list, atOrAfter: atNs + 1) - 1
            while i >= 0, list[i].out { i -= 1 }
            guard i >= 0 else { continue }
            let since = list[i].atNs
            let until = i + 1 < list.count ? list[i + 1].atNs : Int64.max
            guard until >= from else { continue }
            if best.map({ (since, other) > ($0.sinceNs, $0.thread) }) ?? true { best = (other, since) }
        }
        return best?.thread
    }
}
