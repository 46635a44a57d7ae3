// Inference threads run as background work (SCHED_IDLE), so the main and render threads preempt them
// the moment they wake. SCHED_IDLE has no floor: while other processes keep every core busy, such a
// thread gets almost no CPU, and a stream can stall for tens of minutes. So the main thread watches
// them: once a second it reads how long each waited for a CPU, and when one waited more than half of
// the second, it raises them all to normal priority for the rest of the stream, as Swift raises a
// task that a higher-priority one awaits. The trace says when and why (metadata `decodePriority`).

import CHitchSupport
import Foundation
import HitchTrace
import Synchronization

/// The threads of one inference that run as background work, and the floor under them.
public final class BackgroundThreads: Sendable {
    private struct State {
        var threads: [Int32: Int64] = [:]   // thread id -> run delay at the start of the window
        var windowStartNs: Int64 = 0
        var priorityChange: String?
    }
    private let state = Mutex(State())

    /// The shortest window whose waits are judged (the check runs at frames, so a window can run longer).
    public static let windowNs: Int64 = 1_000_000_000
    /// A thread that waited for a CPU longer than this share of a window was starved.
    public static let starvedShare = 0.5

    public init() {}

    /// Makes the calling thread background work (unless the floor was already raised) and watches it.
    func adoptCurrentThread() {
        let tid = hitch_current_tid()
        state.withLock { state in
            if state.priorityChange == nil { _ = hitch_thread_make_background() }
            state.threads[tid] = hitch_thread_run_delay_ns(tid)
        }
    }

    /// The calling thread leaves (it is about to exit).
    func releaseCurrentThread() {
        let tid = hitch_current_tid()
        _ = state.withLock { $0.threads.removeValue(forKey: tid) }
    }

    /// Why the threads were raised to normal priority, or nil while they run in the background.
    public var priorityChange: String? { state.withLock { $0.priorityChange } }

    /// Call often (each frame); judges a window once a second. Returns `priorityChange` the once it
    /// is decided.
    public func checkStarvation(nowNs: Int64) -> String? {
        state.withLock { state in
            guard state.priorityChange == nil else { return nil }
            let windowNs = nowNs - state.windowStartNs
            let judged = state.windowStartNs > 0
            guard !judged || windowNs >= Self.windowNs else { return nil }
            var longestWaitNs: Int64 = 0
            for (tid, startDelay) in state.threads {
                let delay = hitch_thread_run_delay_ns(tid)
                if delay >= 0, startDelay >= 0 { longestWaitNs = max(longestWaitNs, delay - startDelay) }
                state.threads[tid] = delay
            }
            state.windowStartNs = nowNs
            guard judged else { return nil }   // the first call opens the first window
            guard Double(longestWaitNs) > Self.starvedShare * Double(windowNs) else { return nil }
            var refusals: Set<Int32> = []
            for tid in state.threads.keys {
                let error = hitch_thread_make_normal(tid)
                if error != 0 { refusals.insert(error) }
            }
            // schedstat credits a wait when it ends, so a wait that began before the window can
            // exceed it: the window bounds what is said.
            let waitedNs = min(longestWaitNs, windowNs)
            let waited = String(format: "waited %.2f s of %.2f s for a CPU", Double(waitedNs) / 1e9, Double(windowNs) / 1e9)
            let sentence = refusals.isEmpty
                ? "raised to normal priority: a background inference thread \(waited) (other processes kept the cores busy)"
                : "starved in the background (a thread \(waited)); raising it to normal priority was refused "
                    + "(\(refusals.map { String(cString: strerror($0)) }.sorted().joined(separator: ", ")); it needs CAP_SYS_NICE)"
            state.priorityChange = sentence
            return sentence
        }
    }
}
