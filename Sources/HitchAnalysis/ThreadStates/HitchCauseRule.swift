import HitchTrace

/// Classifies one hitch (docs/METRICS.md "Hitch causes"): app work when the counterfactual frame,
/// doing only on-CPU work, still hitches; otherwise the largest part of the time not running. Recorded
/// frames are judged over the whole timeline (`CauseChain`), replayed ones by the replay's own
/// counterfactual timeline (`ReplayModel`); both end here.
enum HitchCauseRule {
    /// App work when the counterfactual frame still hitches; otherwise the largest part of the time
    /// not running (ties: machine, waiting, blocked, unknown).
    static func cause(hitchNs: Int64, counterfactualHitchNs: Int64, states: FrameStates) -> HitchCause {
        guard hitchNs > 0, states.main != nil else { return .unknown }
        if counterfactualHitchNs > 0 { return .appWork }
        return largestNotRunning(states)
    }

    /// The largest part of a frame's time not running, its threads summed, less the part earlier
    /// late frames held (`CauseChain`). A late start spent asleep is a timed wait (for the vsync)
    /// that woke late: the thread asked to run then, and neither its work nor a lock kept it, so
    /// that part is the machine's. A present later than the pipeline allowed is unknown: the wait
    /// for the present vsync woke late, outside every window the readings split.
    static func largestNotRunning(_ states: FrameStates, less held: StateSplit = StateSplit(), latePresentNs: Int64 = 0) -> HitchCause {
        var notRunning = counted(states)
        notRunning.unknownNs +|= latePresentNs
        notRunning.runnableNs -= min(notRunning.runnableNs, held.runnableNs)
        notRunning.blockedNs -= min(notRunning.blockedNs, held.blockedNs)
        notRunning.machineNs -= min(notRunning.machineNs, held.machineNs)
        notRunning.unknownNs -= min(notRunning.unknownNs, held.unknownNs)
        return notRunning.largestNotRunning
    }

    /// A frame's time as its cause counts it: its main thread's window, its late start (asleep
    /// there counted as the machine's) and its render.
    static func counted(_ states: FrameStates) -> StateSplit {
        var sum = states.main ?? StateSplit()
        if let render = states.render { sum.add(render) }
        if let lateStart = states.lateStart { sum.add(lateStart.countedAsLateStart(wokeLateNs: states.lateStartWokeLateNs)) }
        return sum
    }
}
