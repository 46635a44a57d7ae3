import HitchTrace

/// Classifies one hitch (docs/METRICS.md "Hitch causes"), asking of the frame as if the machine had
/// been idle: app work when its on-CPU work alone still hitches; blocked when its on-CPU work and its
/// own sleeps (not those earlier frames held) still hitch, so no wait for a CPU made it miss;
/// otherwise the largest part of the time not running. Recorded frames are judged over the whole
/// timeline (`CauseChain`), replayed ones by the replay's own counterfactual timeline (`ReplayModel`);
/// both end here.
enum HitchCauseRule {
    /// The two counterfactual frames' hitches: on-CPU work alone, and on-CPU work with the frame's own sleeps.
    struct Counterfactuals {
        var onCPUHitchNs: Int64
        var withOwnSleepsHitchNs: Int64
    }

    static func cause(hitchNs: Int64, counterfactuals: Counterfactuals, states: FrameStates) -> HitchCause {
        guard hitchNs > 0, states.main != nil else { return .unknown }
        return cause(counterfactuals, states)
    }

    /// The cause of a frame late for its own sake, `held` and `latePresentNs` as `largestNotRunning` takes them.
    static func cause(_ counterfactuals: Counterfactuals, _ states: FrameStates, less held: StateSplit = StateSplit(),
                      latePresentNs: Int64 = 0) -> HitchCause {
        if counterfactuals.onCPUHitchNs > 0 { return .appWork }
        if counterfactuals.withOwnSleepsHitchNs > 0 { return .blocked }
        return largestNotRunning(states, less: held, latePresentNs: latePresentNs)
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
