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

    /// The largest part of a frame's time not running, its threads summed. A late start spent asleep
    /// is a timed wait (for the vsync) that woke late: the thread asked to run then, and neither its
    /// work nor a lock kept it, so that part is the machine's.
    static func largestNotRunning(_ states: FrameStates) -> HitchCause {
        var notRunning = states.main ?? StateSplit()
        if let render = states.render { notRunning.add(render) }
        if let lateStart = states.lateStart { notRunning.add(lateStart.countedAsLateStart) }
        return notRunning.largestNotRunning
    }
}
