import HitchTrace

/// Which threads of a run are its main thread (docs/METRICS.md "Choosing the main thread"),
/// decided from the whole run so that file order never matters:
///
/// 1. every thread whose recorded role is `main`;
/// 2. else, among threads without a role named `main`, or (without one) among threads without a
///    role that began frames: the one that began the most frames, ties to the lowest (process id,
///    thread id).
///
/// The analyzer streams, so while reading it guesses (a `main` role or name at a thread's first
/// event, else the first thread to begin a frame, from that event on) and records what the rule
/// needs. At the end of the run `reread` says whether the guess was exactly the rule's choice for
/// every event; if not, the analyzer reads the run again with `forced` set.
struct MainThreadChoice: Sendable {
    private struct Facts: Sendable {
        var key: (processID: UInt64, threadID: UInt64)
        var hasRole: Bool
        var roleIsMain: Bool
        var namedMain: Bool
        var framesBegun = 0
    }

    private var facts: [UInt32: Facts] = [:]
    /// Threads that were main from their first dispatched event, in this read.
    private var mainFromFirstEvent: Set<UInt32> = []
    /// A thread became main after some of its events were dispatched as another role.
    private var becameMainLate = false
    /// The rule's choice, fixed for a second read (nil: guess while reading).
    private(set) var forced: Set<UInt32>?

    init(forced: Set<UInt32>? = nil) { self.forced = forced }

    /// A thread seen for the first time: what the rule needs to know about it.
    mutating func saw(_ thread: UInt32, key: (processID: UInt64, threadID: UInt64), role: String?, name: String) {
        if thread == pendingThread { pendingFrames = 0 }   // new facts start from no frames
        facts[thread] = Facts(key: key, hasRole: role != nil, roleIsMain: role == ThreadRole.main.rawValue,
                              namedMain: role == nil && name == ThreadRole.main.rawValue)
    }

    /// Frames begun on `pendingThread` not yet added to its facts: one thread begins nearly every
    /// frame, and a hash lookup per frame showed in profiles.
    private var pendingThread: UInt32 = .max
    private var pendingFrames = 0

    mutating func frameBegan(on thread: UInt32) {
        if thread == pendingThread { pendingFrames += 1; return }
        flushPendingFrames()
        pendingThread = thread
        pendingFrames = 1
    }

    private mutating func flushPendingFrames() {
        if pendingFrames > 0 { facts[pendingThread]?.framesBegun += pendingFrames }
        pendingFrames = 0
    }

    /// The thread is main from now on; `fromFirstEvent` when none of its events was dispatched yet.
    mutating func becameMain(_ thread: UInt32, fromFirstEvent: Bool) {
        if fromFirstEvent { mainFromFirstEvent.insert(thread) } else { becameMainLate = true }
    }

    /// The rule's choice over everything seen in this run.
    func chosen() -> Set<UInt32> {
        var counted = self
        counted.flushPendingFrames()
        return counted.choice()
    }

    private func choice() -> Set<UInt32> {
        let withRole = Set(facts.filter(\.value.roleIsMain).keys)
        if !withRole.isEmpty { return withRole }
        var candidates = facts.filter(\.value.namedMain)
        if candidates.isEmpty { candidates = facts.filter { !$0.value.hasRole && $0.value.framesBegun > 0 } }
        let best = candidates.min { a, b in
            (-a.value.framesBegun, a.value.key.processID, a.value.key.threadID, a.key)
                < (-b.value.framesBegun, b.value.key.processID, b.value.key.threadID, b.key)
        }
        return best.map { [$0.key] } ?? []
    }

    /// The choice to read the run again with, or nil when this read already treated exactly the
    /// chosen threads as main from their first event.
    func reread() -> Set<UInt32>? {
        guard forced == nil else { return nil }
        let chosen = chosen()
        return !becameMainLate && chosen == mainFromFirstEvent ? nil : chosen
    }
}
