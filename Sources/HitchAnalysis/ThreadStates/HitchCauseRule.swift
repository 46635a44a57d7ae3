import HitchTrace

/// Classifies one hitch (docs/METRICS.md "Hitch causes"). The counterfactual frame starts when the
/// frame started and does only its on-CPU work: its commit moves earlier by the main thread's time
/// not running, its render shrinks by the render thread's. Where that saves whole periods, the
/// frame would have been shown that much earlier; if it would still hitch, the hitch is the app's
/// work. Otherwise the hitch is the largest part of the time not running: the machine, waiting for
/// a CPU, blocked, or unknown. The same rule judges recorded frames and replayed ones (at a replayed
/// rate a frame's work is the recorded wall time, waits included, so the waits are removed the same way).
enum HitchCauseRule {
    /// A recorded frame: the counterfactual moves its commit and render earlier in place (the
    /// recorded timeline's later frames are what was recorded).
    static func cause(hitchNs: Int64, periodNs: Int64, anchorNs: Int64, commitNs: Int64,
                      renderNs: Int64, states: FrameStates) -> HitchCause {
        guard hitchNs > 0, periodNs > 0, let main = states.main else { return .unknown }
        let renderStart = vsyncAtOrAfter(commitNs, anchor: anchorNs, period: periodNs)
        let counterfactualCommit = commitNs.subtractingSaturated(main.notRunningNs).subtractingSaturated(states.lateStart?.notRunningNs ?? 0)
        let counterfactualStart = vsyncAtOrAfter(counterfactualCommit, anchor: anchorNs, period: periodNs)
        let renderNotRunning = states.render?.notRunningNs ?? 0
        func periods(_ ns: Int64) -> Int64 { max(1, (max(0, ns) + periodNs - 1) / periodNs) }
        let savedNs = (renderStart - counterfactualStart).addingSaturated((periods(renderNs) - periods(renderNs - renderNotRunning)) * periodNs)
        return cause(hitchNs: hitchNs, counterfactualHitchNs: hitchNs - savedNs, states: states)
    }

    /// App work when the counterfactual frame still hitches; otherwise the largest part of the time
    /// not running (ties: machine, waiting, blocked, unknown).
    static func cause(hitchNs: Int64, counterfactualHitchNs: Int64, states: FrameStates) -> HitchCause {
        guard hitchNs > 0, let main = states.main else { return .unknown }
        if counterfactualHitchNs > 0 { return .appWork }
        var notRunning = main
        if let render = states.render { notRunning.add(render) }
        if let lateStart = states.lateStart { notRunning.add(lateStart) }
        return notRunning.largestNotRunning
    }
}
