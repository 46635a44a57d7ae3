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
    /// The main thread's time asleep from the vsync to its begin, before the app's usual phase is
    /// taken out of `mainLateStart` (`CauseChain.usualPhaseNs`).
    var mainLateStartAsleepNs: Int64 = 0
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
    /// How long after the frame began the hang watchdog may first interrupt the main thread's wait
    /// (its default threshold: it watches from when the thread left its loop, the frame's begin).
    static let watchdogFirstCaptureNs = Int64(HangWatchdogConfiguration().thresholdMs) * 1_000_000

    /// The main thread's sleeps in its frame window (begin to commit reading) from its switch
    /// records; nil when they are not all in, or the readings lack the switch counts. From where the
    /// watchdog may first capture the thread on, a wait its signal interrupted is one sleep.
    func mainSleeps(switches: SwitchHistory) -> [(startNs: Int64, endNs: Int64)]? {
        let began = mainBegan.isPresent ? mainBegan : beforeCommit
        guard began.isPresent, mainCommitted.isPresent, began.voluntarySwitches >= 0, mainCommitted.voluntarySwitches >= 0,
              began.involuntarySwitches >= 0, mainCommitted.involuntarySwitches >= 0 else { return nil }
        let outs = mainCommitted.voluntarySwitches - began.voluntarySwitches + mainCommitted.involuntarySwitches - began.involuntarySwitches
        return switches.sleeps(thread: mainThread, from: began.atNs, to: mainCommitted.atNs, expectedOuts: outs,
                               resumedFromNs: began.atNs.addingSaturated(Self.watchdogFirstCaptureNs))
    }

    /// How long `thread` may have waited for a CPU after being woken in [start, end): its run delay
    /// there (`runnableNs`) less the time its switch records have it preempted (a wait no record
    /// marks: after a wake-up). Over all its sleeps there, so an upper bound for each one.
    static func wokenWaitNs(runnableNs: Int64, thread: UInt32, from start: Int64, to end: Int64, switches: SwitchHistory) -> Int64 {
        let preempted = switches.outs(thread: thread, from: start, to: end).filter(\.preempted).reduce(Int64(0)) { $0.addingSaturated($1.endNs - $1.startNs) }
        return max(0, runnableNs - preempted)
    }

    /// The render thread's split of its render. The judged render duration runs from the first
    /// vsync after the commit, so a render that began later adds the part of that late start it
    /// did not run (waiting for a CPU, stolen, or asleep past the last vsync before it began, which
    /// is `wokeLateNs` before its begin: a late wake-up, machine).
    func render(switches: SwitchHistory, wokeLateNs: Int64) -> StateSplit? {
        guard var split = StateSplit.between(renderBegan, renderEnded, thread: renderThread, switches: switches) else { return nil }
        if var late = renderLateStart?.countedAsLateStart(wokeLateNs: wokeLateNs) {
            late.runningNs = 0   // the render thread's earlier work (an earlier frame's render), not this render's
            split.add(late)
        }
        return split
    }

}
