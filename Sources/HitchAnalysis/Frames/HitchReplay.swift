import HitchTrace

/// The replay model (docs/METRICS.md "Replay"): the recorded per-frame main-thread work, render
/// durations and release times (input arrival, else the recorded vsync) replayed on a vsync grid
/// of another period. One main thread and one render server, each doing one thing at a time;
/// work released while the main thread is busy coalesces into the next frame (input-driven work
/// adds up, animation-only work is drawn once: the largest).
struct ReplayModel: Sendable {
    let periodNs: Int64
    var judge = LatenessJudge()
    private var anchorNs: Int64 = .min
    private var mainFreeNs: Int64 = .min
    private var renderFreeNs: Int64 = .min
    // The open group: frames that will run in the replay frame starting at `groupStartNs`.
    private var groupOpen = false
    private var groupStartNs: Int64 = 0
    private var groupInputWorkNs: Int64 = 0
    private var groupHasInput = false
    private var groupAnimationWorkNs: Int64 = 0
    private var groupRenderNs: Int64 = 0
    private var groupFrameID: UInt64 = 0
    // The group's thread states, combined like its work: the input frames' summed, the animation
    // frame with the most work, the frame with the longest render (nil once a member has none).
    private var groupInputStates: StateSplit? = StateSplit()
    private var groupAnimationStates: StateSplit? = nil
    private var groupRenderStates: StateSplit? = nil
    private var groupReleaseNs: Int64 = 0
    // The counterfactual timeline (docs/METRICS.md "Hitch causes"): the same frames doing only their
    // on-CPU work, so a backlog that waits built up is not carried into later frames' causes.
    private var counterfactualMainFreeNs: Int64 = .min
    private var counterfactualRenderFreeNs: Int64 = .min
    /// The replayed frame the last `add` or `finish` that returned true completed. Kept here and read
    /// in place: returning it as an Optional copied the whole frame at every level.
    private(set) var completed = JudgedFrame.zero

    init(rateHz: Double) {
        // The CLI accepts 1...1000 Hz; anything else (a library caller) is clamped to a usable period.
        let period = 1e9 / rateHz
        periodNs = period.isFinite && period >= 1 ? Int64(min(period, Double(maxFramePeriodNs)).rounded()) : 1
    }

    private(set) var lastReleaseNs: Int64 = .min

    /// Starts a new grid: the next frame's release becomes the anchor.
    mutating func reset() {
        anchorNs = .min; mainFreeNs = .min; renderFreeNs = .min; groupOpen = false; judge.reset()
        lastReleaseNs = .min
        counterfactualMainFreeNs = .min; counterfactualRenderFreeNs = .min
    }

    /// Feeds one recorded frame (in begin order); returns whether a replayed frame completed (`completed`).
    mutating func add(frameID: UInt64, releaseNs: Int64, isInput: Bool, mainWorkNs: Int64, renderNs: Int64,
                      states: FrameStates = .unknown) -> Bool {
        if anchorNs == .min { anchorNs = releaseNs }
        lastReleaseNs = max(lastReleaseNs, releaseNs)
        var emitted = false
        if groupOpen && releaseNs > groupStartNs {
            closeGroup()
            emitted = true
        }
        if !groupOpen {
            groupOpen = true
            groupStartNs = vsyncAtOrAfter(max(releaseNs, mainFreeNs), anchor: anchorNs, period: periodNs)
            groupInputWorkNs = 0; groupHasInput = false; groupAnimationWorkNs = 0; groupRenderNs = 0
            groupFrameID = frameID
            groupReleaseNs = releaseNs
            groupInputStates = StateSplit(); groupAnimationStates = states.main; groupRenderStates = states.render
        }
        if isInput {
            groupInputWorkNs +|= mainWorkNs; groupHasInput = true
            if let main = states.main { groupInputStates?.add(main) } else { groupInputStates = nil }
        } else if mainWorkNs >= groupAnimationWorkNs {
            groupAnimationWorkNs = mainWorkNs
            groupAnimationStates = states.main
        }
        if renderNs >= groupRenderNs {
            groupRenderNs = renderNs
            groupRenderStates = states.render
        }
        return emitted
    }

    /// Completes the open group (the end of a timeline); returns whether there was one (`completed`).
    mutating func finish() -> Bool {
        guard groupOpen else { return false }
        closeGroup()
        return true
    }

    private mutating func closeGroup() {
        groupOpen = false
        // Clamped so a hostile trace's absurd work cannot push the grid past Int64 over many groups.
        let inputLeads = groupHasInput && groupInputWorkNs >= groupAnimationWorkNs
        let work = min(inputLeads ? groupInputWorkNs : groupAnimationWorkNs, analyzerTimeLimitNs)
        let states = FrameStates(main: inputLeads ? groupInputStates : groupAnimationStates, render: groupRenderStates)
        let start = groupStartNs
        let target = start + periodNs
        let commit = clampedTime(start + work)
        mainFreeNs = commit
        let renderStart = vsyncAtOrAfter(max(commit, renderFreeNs), anchor: anchorNs, period: periodNs)
        let renderEnd = clampedTime(renderStart + min(groupRenderNs, analyzerTimeLimitNs))
        renderFreeNs = renderEnd
        let periods = max(1, (min(groupRenderNs, analyzerTimeLimitNs) + periodNs - 1) / periodNs)
        let actual = renderStart + periods * periodNs
        let expected = target + periodNs
        let (hitch, latency) = judge.judge(latenessNs: actual - expected, periodNs: periodNs)
        let kind: JudgedFrame.Kind = hitch > 0 ? (commit > target ? .commit : .render) : (latency > 0 ? .latency : .none)
        completed = JudgedFrame(frameID: groupFrameID, startNs: start, periodNs: periodNs, mainWorkNs: work,
                                renderNs: groupRenderNs, commitNs: commit, renderEndNs: renderEnd,
                                expectedNs: expected, actualNs: actual, hitchNs: hitch, latencyNs: latency, kind: kind)
        completed.states = states
        // The counterfactual frames: released as this one, started when the counterfactual main
        // thread is free, doing only their on-CPU work on both threads (the one whose timeline goes
        // on), or that work with the frame's sleeps.
        let cfStart = vsyncAtOrAfter(max(groupReleaseNs, counterfactualMainFreeNs), anchor: anchorNs, period: periodNs)
        let cappedRenderNs = min(groupRenderNs, analyzerTimeLimitNs)
        // Judged with the real frame's triple-buffering allowance (lateness - hitch).
        func hitchIfOnly(mainNs: Int64, renderNs: Int64) -> (hitchNs: Int64, commitNs: Int64, renderEndNs: Int64) {
            let cfCommit = clampedTime(cfStart + max(0, mainNs))
            let cfRenderNs = max(0, renderNs)
            let cfRenderStart = vsyncAtOrAfter(max(cfCommit, counterfactualRenderFreeNs), anchor: anchorNs, period: periodNs)
            let cfActual = cfRenderStart + max(1, (cfRenderNs + periodNs - 1) / periodNs) * periodNs
            return ((cfActual - (cfStart + 2 * periodNs)) - ((actual - expected) - hitch), cfCommit, clampedTime(cfRenderStart + cfRenderNs))
        }
        let mainNotRunning = states.main?.notRunningNs ?? 0, renderNotRunning = states.render?.notRunningNs ?? 0
        let onCPU = hitchIfOnly(mainNs: work - mainNotRunning, renderNs: cappedRenderNs - renderNotRunning)
        let withSleeps = hitchIfOnly(mainNs: work - mainNotRunning + (states.main?.blockedNs ?? 0),
                                     renderNs: cappedRenderNs - renderNotRunning + (states.render?.blockedNs ?? 0))
        counterfactualMainFreeNs = onCPU.commitNs
        counterfactualRenderFreeNs = onCPU.renderEndNs
        completed.cause = HitchCauseRule.cause(hitchNs: hitch, counterfactuals: .init(onCPUHitchNs: onCPU.hitchNs, withOwnSleepsHitchNs: withSleeps.hitchNs),
                                               states: states)
    }
}

/// One refresh rate's replay over every run: the model and the figures it accumulates. A run whose
/// first frame is released after the previous run's last release (a later piece of the same
/// session, or a later recording on the same clock) continues the previous run's timeline: the
/// same vsync grid, main-thread and render state, and the frame group still open at the cut. So a
/// session split over several traces replays exactly like one trace. A run that starts earlier
/// (another clock, or the same run passed twice) starts a grid of its own.
struct ReplayTimeline: Sendable {
    private var model: ReplayModel
    private var figures: HitchAccumulator
    // The previous run, ended but not yet closed: the next run's first frame decides.
    private struct PendingRun: Sendable { var interactionUnionNs: Int64? }
    private var pendingRun: PendingRun?
    private var run = 0
    private var runHasFrames = false

    init(rateHz: Double) {
        model = ReplayModel(rateHz: rateHz)
        figures = HitchAccumulator(source: .replay, rateHz: rateHz)
    }

    mutating func beginRun(_ run: Int) {
        self.run = run
        runHasFrames = false
    }

    mutating func resolveRunStart(_ run: Int, runStartNs: Int64) { figures.resolveRunStart(run, runStartNs: runStartNs) }

    mutating func add(frameID: UInt64, releaseNs: Int64, isInput: Bool, mainWorkNs: Int64, renderNs: Int64, states: FrameStates) {
        if !runHasFrames {
            runHasFrames = true
            if let pending = pendingRun {
                pendingRun = nil
                if releaseNs >= model.lastReleaseNs {
                    figures.continueRun(run, previousInteractionUnionNs: pending.interactionUnionNs)
                } else {
                    close(pending)
                    figures.beginRun(run)
                }
            } else {
                figures.beginRun(run)
            }
        }
        if model.add(frameID: frameID, releaseNs: releaseNs, isInput: isInput, mainWorkNs: mainWorkNs, renderNs: renderNs, states: states) {
            figures.add(model.completed)
        }
    }

    /// Ends a run without closing its timeline: the next run may continue it. A run without frames
    /// adds its interactions to the pending run's.
    mutating func endRun(interactionUnionNs: Int64?) {
        if runHasFrames {
            pendingRun = PendingRun(interactionUnionNs: interactionUnionNs)
        } else if let pending = pendingRun {
            let union = (pending.interactionUnionNs ?? 0).addingSaturated(interactionUnionNs ?? 0)
            pendingRun = PendingRun(interactionUnionNs: union > 0 ? union : nil)
        }
    }

    private mutating func close(_ pending: PendingRun) {
        if model.finish() { figures.add(model.completed) }
        figures.endRun(interactionUnionNs: pending.interactionUnionNs)
        model.reset()
    }

    /// The totals of every run so far, the open timeline closed.
    var totals: HitchTotals {
        var closed = self
        if let pending = closed.pendingRun { closed.close(pending) }
        return closed.figures.totals
    }
}
