import HitchReader
import HitchTrace

// Thread states and hitch causes (docs/METRICS.md "Thread states", "Hitch causes").
//
// The recorder reads each frame-making thread's scheduler counters at the frame's phases (CPU clock,
// schedstat run delay, voluntary and involuntary switches). Differencing two readings of the same
// thread splits the wall time between them into running, runnable, blocked, machine and unknown
// (`StateSplit.between`). FramePass keeps the readings with the frame they belong to, so every judged
// frame, recorded or replayed, carries its split, and `HitchCauseRule` classifies each hitch with one
// counterfactual: the same frame doing only its on-CPU work. This file's pass adds what needs the
// whole run: machine counters over each hitch, exact context switches, the trace-level summary.

/// One thread's counters at one frame phase, compact (-1 = unavailable; `atNs == .min` = no reading).
struct PhaseReading: Sendable, Equatable {
    var atNs: Int64 = .min
    var cpuNs: Int64 = 0
    var runnableWaitNs: Int64 = -1
    var voluntarySwitches: Int64 = -1
    var involuntarySwitches: Int64 = -1

    init() {}

    init(atNs: Int64, _ r: ThreadStateReading) {
        self.atNs = atNs
        cpuNs = r.cpuNs
        runnableWaitNs = r.runnableWaitNs.map { max(0, $0) } ?? -1
        voluntarySwitches = r.voluntarySwitches.map { max(0, $0) } ?? -1
        involuntarySwitches = r.involuntarySwitches.map { max(0, $0) } ?? -1
    }

    var isPresent: Bool { atNs != .min }
}

/// A frame's readings: the main thread's at begin and commit, the render thread's around its render.
struct FrameReadings: Sendable {
    /// No reading at any phase.
    static let none = FrameReadings()

    var mainBegan = PhaseReading()
    var mainCommitted = PhaseReading()
    /// The waiting and stolen parts of the frame's late starts (`ReadingHistory.lateStart`): the
    /// main thread's from the vsync to its begin, the render thread's from the first vsync after
    /// the commit to its render began. Filled when the frame is judged.
    var mainLateStart: StateSplit? = nil
    var renderLateStart: StateSplit? = nil
    /// The threads the main and render readings came from.
    var mainThread: UInt32 = .max
    var renderThread: UInt32 = .max
    /// The committing thread's reading before its commit reading: the frame's begin when the
    /// recorder took none for it (`FrameMarker` takes one reading per mark, which ends one frame
    /// and begins the next).
    var beforeCommit = PhaseReading()
    var renderBegan = PhaseReading()
    var renderEnded = PhaseReading()

    mutating func set(_ phase: FramePhase, _ reading: PhaseReading) {
        switch phase {
        case .frameBegan: mainBegan = reading
        case .committed: mainCommitted = reading
        case .renderBegan: renderBegan = reading
        case .renderEnded: renderEnded = reading
        case .presented: break   // after the frame's work: not part of a window the analysis splits
        }
    }

    /// The main thread's split from its begin reading, else from its reading before the commit
    /// when that was taken no earlier than the frame began (never across idle time between frames).
    func main(beganNs: Int64, switches: SwitchHistory) -> StateSplit? {
        if mainBegan.isPresent { return StateSplit.between(mainBegan, mainCommitted, thread: mainThread, switches: switches) }
        guard beforeCommit.isPresent, beforeCommit.atNs >= beganNs else { return nil }
        return StateSplit.between(beforeCommit, mainCommitted, thread: mainThread, switches: switches)
    }
    /// The render thread's split of its render. The judged render duration runs from the first
    /// vsync after the commit, so a render that began later adds the part of that late start it
    /// did not run (waiting for a CPU, stolen, or asleep past that vsync: a late wake-up, machine).
    func render(switches: SwitchHistory) -> StateSplit? {
        guard var split = StateSplit.between(renderBegan, renderEnded, thread: renderThread, switches: switches) else { return nil }
        if var late = renderLateStart?.countedAsLateStart {
            late.runningNs = 0   // the render thread's earlier work (an earlier frame's render), not this render's
            split.add(late)
        }
        return split
    }

}
