import HitchTrace

// Frames and hitches (Apple's definitions; docs/METRICS.md "Frames and hitches").
//
// A frame's events (begin on the main thread, commit, render end, present on the render thread)
// arrive in file order, which is per-thread order only, so frames are assembled by id and judged
// in the order they began once final (see `FrameAssembler`).

/// A frame's recorded lifecycle, assembled from its events.
struct FrameRecord: Sendable {
    var frameID: UInt64
    var beganNs: Int64 = .min       // the frame-began event's time (main thread starts work)
    var vsyncNs: Int64 = 0
    var targetNs: Int64 = 0
    var periodNs: Int64 = 0
    var commitNs: Int64 = .min
    var renderEndNs: Int64 = .min
    var presentNs: Int64 = .min
    /// The earliest input that arrived since the previous frame began (release time in the replay).
    var inputArrivalNs: Int64 = .min
    /// The main and render threads' scheduler counters at the frame's phases (ThreadStates.swift),
    /// boxed: most of a record's size, copied with every record, and absent from most traces.
    private var readingsBox: FrameReadingsBox? = nil

    init(frameID: UInt64) { self.frameID = frameID }

    var hasBegan: Bool { beganNs != .min }
    var hasCommit: Bool { commitNs != .min }
    /// Whether `judgeRecorded` can judge the frame: it began, committed and has a period.
    var isJudgeable: Bool { hasBegan && hasCommit && periodNs > 0 }

    /// Whether any reading was recorded (without one, `readings` is all absent: callers skip it).
    var hasReadings: Bool { readingsBox != nil }

    /// The readings (none recorded: all absent). Changed in place, the box copied first when shared.
    var readings: FrameReadings {
        get { readingsBox?.readings ?? FrameReadings.none }
        _modify {
            if readingsBox == nil {
                readingsBox = FrameReadingsBox(FrameReadings.none)
            } else if !isKnownUniquelyReferenced(&readingsBox) {
                readingsBox = FrameReadingsBox(readingsBox.unsafelyUnwrapped.readings)
            }
            yield &readingsBox.unsafelyUnwrapped.readings
        }
    }
}

/// A frame's readings on the heap (`FrameRecord.readings`). `@unchecked Sendable`: it is only
/// changed through `FrameRecord.readings`, which copies it first unless the record holds the only reference.
final class FrameReadingsBox: @unchecked Sendable {
    var readings: FrameReadings
    init(_ readings: FrameReadings) { self.readings = readings }
}

/// One frame, judged on some vsync grid.
struct JudgedFrame: Sendable {
    typealias Kind = FrameKind
    var frameID: UInt64
    var startNs: Int64          // vsync the frame's work started at
    var periodNs: Int64
    var mainWorkNs: Int64
    var renderNs: Int64
    var commitNs: Int64
    var renderEndNs: Int64
    var expectedNs: Int64
    var actualNs: Int64
    var hitchNs: Int64
    var latencyNs: Int64
    var kind: Kind
    /// Why the frame hitched (`HitchCauseRule`); `.unknown` when it did not or without readings.
    var cause: HitchCause = .unknown
    /// The main thread's frame work and the render thread's render by state (nil without readings).
    var states = FrameStates.unknown
    var mainStates: StateSplit? { states.main }
    var renderStates: StateSplit? { states.render }
    var frameTimeNs: Int64 { mainWorkNs + renderNs }
    var overrunNs: Int64 { actualNs - expectedNs }

    /// All zero: what storage frames are judged into starts as (`ReplayModel.completed`).
    static let zero = JudgedFrame(frameID: 0, startNs: 0, periodNs: 0, mainWorkNs: 0, renderNs: 0, commitNs: 0, renderEndNs: 0,
                                  expectedNs: 0, actualNs: 0, hitchNs: 0, latencyNs: 0, kind: .none)
}

/// Smallest t' = anchor + k * period with t' >= t (k may be negative).
@inline(__always)
func vsyncAtOrAfter(_ t: Int64, anchor: Int64, period: Int64) -> Int64 {
    guard period > 0 else { return t }
    let delta = t - anchor
    // Integer division truncates toward zero: that is the ceiling for negative deltas.
    let k = delta > 0 && delta % period != 0 ? delta / period + 1 : delta / period
    return anchor + k * period
}

/// A recorded present is a clock read after a real wait for the display, so it lands a little
/// after (or, predicted, before) the vsync it belongs to. Within this fraction of a period of a
/// vsync it is taken as that vsync (docs/METRICS.md "Present jitter").
let presentSnapTolerance = 0.25

/// The vsync a recorded present belongs to: the nearest one on the frame's grid when within
/// `presentSnapTolerance` of a period, else the first one at or after it (a frame cannot be shown
/// between vsyncs).
func presentOnVsyncGrid(_ t: Int64, anchor: Int64, period: Int64) -> Int64 {
    guard period > 0 else { return t }
    let after = vsyncAtOrAfter(t, anchor: anchor, period: period)
    let before = after - period
    let nearest = after - t <= t - before ? after : before
    return abs(t - nearest) <= Int64(Double(period) * presentSnapTolerance) ? nearest : after
}

/// Lateness -> hitch, applying the triple-buffering rule. Keeps the previous frame's lateness.
struct LatenessJudge: Sendable {
    private var previousLatenessNs: Int64 = 0

    mutating func reset() { previousLatenessNs = 0 }

    /// Returns (hitch, latency). A frame one period late right after a frame also one period late
    /// is steady triple buffering: latency. After such a frame the expectation moves one period.
    mutating func judge(latenessNs: Int64, periodNs: Int64) -> (hitchNs: Int64, latencyNs: Int64) {
        defer { previousLatenessNs = latenessNs }
        let tolerance = Int64(Double(periodNs) * tripleBufferTolerance)
        let previousWasOnePeriodLate = abs(previousLatenessNs - periodNs) <= tolerance && periodNs > 0
        if previousWasOnePeriodLate {
            if abs(latenessNs - periodNs) <= tolerance { return (0, latenessNs) }
            return (max(0, latenessNs - periodNs), min(max(0, latenessNs), periodNs))
        }
        return (max(0, latenessNs), 0)
    }
}

/// Judges a recorded frame (`isJudgeable`) on its own recorded grid (vsync + k * period). Not an
/// Optional: the frame is built in the caller's storage, where an Optional's payload was copied out.
func judgeRecorded(_ frame: FrameRecord, judge: inout LatenessJudge, switches: SwitchHistory) -> JudgedFrame {
    let period = frame.periodNs
    let expected = frame.targetNs + period
    let renderStart = vsyncAtOrAfter(frame.commitNs, anchor: frame.vsyncNs, period: period)
    let renderEnd = frame.renderEndNs == .min ? renderStart : frame.renderEndNs
    // Render duration: from the vsync after commit, or from the commit itself when the renderer
    // finished before that vsync (it started at once).
    let renderNs = renderEnd >= renderStart ? renderEnd - renderStart : max(0, renderEnd - frame.commitNs)
    let actual: Int64
    if frame.presentNs != .min {
        actual = presentOnVsyncGrid(frame.presentNs, anchor: frame.vsyncNs, period: period)
    } else {
        let periods = max(1, (max(0, renderEnd - renderStart) + period - 1) / period)
        actual = renderStart + periods * period
    }
    let (hitch, latency) = judge.judge(latenessNs: actual - expected, periodNs: period)
    let kind: JudgedFrame.Kind
    if hitch > 0 { kind = frame.commitNs > frame.targetNs ? .commit : .render }
    else if latency > 0 { kind = .latency }
    else { kind = .none }
    var judged = JudgedFrame(frameID: frame.frameID, startNs: frame.vsyncNs, periodNs: period,
                             mainWorkNs: max(0, frame.commitNs - frame.beganNs), renderNs: renderNs,
                             commitNs: frame.commitNs, renderEndNs: renderEnd,
                             expectedNs: expected, actualNs: actual, hitchNs: hitch, latencyNs: latency, kind: kind)
    if frame.hasReadings {   // without readings every split is nil
        judged.states = FrameStates(main: frame.readings.main(beganNs: frame.beganNs, switches: switches),
                                    render: frame.readings.render(switches: switches),
                                    lateStart: frame.readings.mainLateStart)
    }
    judged.cause = HitchCauseRule.cause(hitchNs: hitch, periodNs: period, anchorNs: frame.vsyncNs, commitNs: frame.commitNs,
                                        renderNs: renderNs, states: judged.states)
    return judged
}

/// Accumulates judged frames into `HitchFigures` (one per rate, plus one for the recorded frames).
struct HitchAccumulator: Sendable {
    var source: HitchSource
    var rateHz: Double
    private var frameCount = 0
    private var hitchCount = 0
    private var totalHitchNs: Int64 = 0
    private var longestHitchNs: Int64 = 0
    private var commitHitchCount = 0, commitHitchNs: Int64 = 0
    private var renderHitchCount = 0, renderHitchNs: Int64 = 0
    private var tripleBuffered = 0, latencyNs: Int64 = 0
    private var frameTimes = QuantileSketch()
    private var histogram = FrameTimeHistogram()
    private var overruns = QuantileSketch()
    private var slowFrames = 0, frozenFrames = 0
    private var unjudged = 0
    /// `HitchCause.allCases` once: the synthesized property builds a new array at every call.
    private static let causes = HitchCause.allCases
    private var causeCounts = [Int](repeating: 0, count: HitchCause.allCases.count)
    private var causeNs = [Int64](repeating: 0, count: HitchCause.allCases.count)
    private var framesWithStates = 0
    private var animatingNs: Int64 = 0
    private var animatingFromInteractions = false
    private var animatingFromFrames = false
    // Per run: first frame start and last present (the animating time without interactions).
    private var runFirstStartNs: Int64 = .max
    private var runLastPresentNs: Int64 = .min
    // Worst one-second window: hitches in the last second of presents.
    private var window: [(atNs: Int64, hitchNs: Int64)] = []
    private var windowHead = 0
    private var windowSumNs: Int64 = 0
    private var worst = WorstWindow()
    private var worstNs: Int64 = 0
    /// Where the worst window starts (absolute): made relative to its run's first event in `figures`.
    private var worstStartNs: Int64 = 0
    /// Each run's first event, known when the run ends.
    private var runStartsNs: [Int: Int64] = [:]
    private var run = 0

    init(source: HitchSource, rateHz: Double) { self.source = source; self.rateHz = rateHz }

    mutating func beginRun(_ run: Int) {
        self.run = run
        runFirstStartNs = .max
        runLastPresentNs = .min
        window.removeAll(keepingCapacity: true)
        windowHead = 0
        windowSumNs = 0
    }

    /// Run `run` continues the previous run's timeline: the one-second window and, when the
    /// previous run had no interactions, its first-frame-to-last-present span run on across the cut.
    mutating func continueRun(_ run: Int, previousInteractionUnionNs union: Int64?) {
        self.run = run
        if let union, union > 0 {
            animatingNs +|= union
            animatingFromInteractions = true
            runFirstStartNs = .max
            runLastPresentNs = .min
        }
    }

    mutating func addUnjudged() { unjudged += 1 }

    mutating func resolveRunStart(_ run: Int, runStartNs: Int64) { runStartsNs[run] = runStartNs }

    mutating func add(_ frame: JudgedFrame) {
        frameCount += 1
        runFirstStartNs = min(runFirstStartNs, frame.startNs)
        runLastPresentNs = max(runLastPresentNs, frame.actualNs)
        frameTimes.add(frame.frameTimeNs)
        histogram.add(frameTimeNs: frame.frameTimeNs)
        overruns.add(frame.overrunNs)
        if frame.frameTimeNs > frame.periodNs { slowFrames += 1 }
        if frame.frameTimeNs > frozenFrameThresholdNs { frozenFrames += 1 }
        if frame.states.main != nil { framesWithStates += 1 }
        if frame.kind == .latency || frame.latencyNs > 0 {
            if frame.kind == .latency { tripleBuffered += 1 }
            latencyNs +|= frame.latencyNs
        }
        guard frame.hitchNs > 0 else { return }
        hitchCount += 1
        totalHitchNs +|= frame.hitchNs
        longestHitchNs = max(longestHitchNs, frame.hitchNs)
        if frame.kind == .commit { commitHitchCount += 1; commitHitchNs +|= frame.hitchNs }
        else { renderHitchCount += 1; renderHitchNs +|= frame.hitchNs }
        let cause = Self.causes.firstIndex(of: frame.cause) ?? 0
        causeCounts[cause] += 1
        causeNs[cause] +|= frame.hitchNs
        // Sliding one-second window ending at this hitch's present.
        window.append((frame.actualNs, frame.hitchNs))
        windowSumNs +|= frame.hitchNs
        while windowHead < window.count, window[windowHead].atNs <= frame.actualNs - 1_000_000_000 {
            windowSumNs = windowSumNs.subtractingSaturated(window[windowHead].hitchNs)
            windowHead += 1
        }
        if windowHead > 1024 { window.removeFirst(windowHead); windowHead = 0 }
        if windowSumNs > worstNs {
            worstNs = windowSumNs
            worst.run = run
            worstStartNs = frame.actualNs - 1_000_000_000
            worst.hitchMs = milliseconds(windowSumNs)
            worst.hitchCount = window.count - windowHead
        }
    }

    /// Closes a run: its animating time is the interactions' union, else first frame start to last present.
    mutating func endRun(interactionUnionNs: Int64?) {
        if let union = interactionUnionNs, union > 0 {
            animatingNs +|= union
            animatingFromInteractions = true
        } else if runLastPresentNs > runFirstStartNs {
            animatingNs +|= runLastPresentNs - runFirstStartNs
            animatingFromFrames = true
        }
    }

    var frames: Int { frameCount }

    func figures(periodMs: Double) -> HitchFigures {
        var f = HitchFigures()
        f.source = source
        f.rateHz = rateHz
        f.periodMs = periodMs
        f.frameCount = frameCount
        f.hitchCount = hitchCount
        f.totalHitchMs = milliseconds(totalHitchNs)
        f.longestHitchMs = milliseconds(longestHitchNs)
        f.animatingSeconds = Double(animatingNs) / 1e9
        f.hitchTimeRatioMsPerS = animatingNs > 0 ? f.totalHitchMs / f.animatingSeconds : 0
        f.animatingTimeSource = animatingFromInteractions
            ? (animatingFromFrames ? .interactionsAndFrames : .interactions) : .frames
        f.commitHitchCount = commitHitchCount
        f.commitHitchMs = milliseconds(commitHitchNs)
        f.renderHitchCount = renderHitchCount
        f.renderHitchMs = milliseconds(renderHitchNs)
        f.tripleBufferedFrames = tripleBuffered
        f.addedLatencyMs = milliseconds(latencyNs)
        f.frameTimeMs = frameTimes.percentilesMs()
        f.frameTimeHistogram = histogram
        f.overrunMs = overruns.percentilesMs()
        f.slowFrames = slowFrames
        f.frozenFrames = frozenFrames
        f.worstWindow = worst
        if worstNs > 0, let start = runStartsNs[worst.run] {
            f.worstWindow.startMs = milliseconds(max(start, worstStartNs).subtractingSaturated(start))
        }
        f.unjudgedFrames = unjudged
        for (index, cause) in HitchCause.allCases.enumerated() {
            var c = CauseFigures()
            c.hitchCount = causeCounts[index]
            c.totalHitchMs = milliseconds(causeNs[index])
            c.hitchTimeRatioMsPerS = animatingNs > 0 ? c.totalHitchMs / f.animatingSeconds : 0
            f.byCause[cause] = c
        }
        f.framesWithThreadStates = framesWithStates
        if framesWithStates > 0 { f.appHitchTimeRatioMsPerS = f.byCause.appWork.hitchTimeRatioMsPerS }
        HitchGrading.apply(to: &f)
        return f
    }
}

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
        // The counterfactual frame: released as this one, started when the counterfactual main
        // thread is free, doing only its on-CPU work on both threads.
        let cfStart = vsyncAtOrAfter(max(groupReleaseNs, counterfactualMainFreeNs), anchor: anchorNs, period: periodNs)
        let cfCommit = clampedTime(cfStart + max(0, work - (states.main?.notRunningNs ?? 0)))
        let cfRenderNs = max(0, min(groupRenderNs, analyzerTimeLimitNs) - (states.render?.notRunningNs ?? 0))
        let cfRenderStart = vsyncAtOrAfter(max(cfCommit, counterfactualRenderFreeNs), anchor: anchorNs, period: periodNs)
        counterfactualMainFreeNs = cfCommit
        counterfactualRenderFreeNs = clampedTime(cfRenderStart + cfRenderNs)
        let cfActual = cfRenderStart + max(1, (cfRenderNs + periodNs - 1) / periodNs) * periodNs
        // Judged with the real frame's triple-buffering allowance (lateness - hitch).
        let cfHitch = (cfActual - (cfStart + 2 * periodNs)) - ((actual - expected) - hitch)
        completed.cause = HitchCauseRule.cause(hitchNs: hitch, counterfactualHitchNs: cfHitch, states: states)
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

    /// The figures of every run so far, the open timeline closed.
    func figures(periodMs: Double) -> HitchFigures {
        var closed = self
        if let pending = closed.pendingRun { closed.close(pending) }
        return closed.figures.figures(periodMs: periodMs)
    }
}

/// Assembles frames from their events, which reach the file in per-thread order only: a thread's
/// buffer is written as a unit, so the render thread's presents may come long before or after the
/// main thread's begins and commits of the same frames. Frames are joined by id and released in the
/// order they began, once final: a later frame has begun, and
/// - its commit is in, or a later-begun frame's commit is (commits come in order on the main thread,
///   so this frame has none), and
/// - its present is in, or a later-begun frame's present or render end is (the render thread
///   records render end then present, frame after frame, so this frame has no present);
/// or `window` later frames have begun (bounded memory whatever the file order), or the run ended.
/// Events of a frame whose begin never comes are dropped once `2 * window` records wait.
struct FrameAssembler: Sendable {
    static let window = 4096
    private static let slotBits = 12

    private struct Entry: Sendable {
        var record: FrameRecord
        var beganPosition = -1     // position in begin order, -1 until the begin arrives
        var done = false
    }
    private var entries: [Entry] = []
    private var head = 0
    private var removed = 0                  // entries dropped from the front (absolute = removed + index)
    private var slots = [Int](repeating: -1, count: 1 << slotBits)   // frameID's low bits -> absolute index
    private var overflow: [UInt64: Int] = [:]                          // frames whose slot another took
    private var beganQueue: [Int] = []       // absolute indexes in begin order
    private var beganHead = 0
    private var beganCount = 0
    private var presentedThrough = -1        // highest begin position of a presented (or rendered) frame
    private var committedThrough = -1        // highest begin position of a committed frame

    mutating func reset() {
        entries.removeAll(keepingCapacity: true); head = 0; removed = 0
        for i in slots.indices { slots[i] = -1 }
        overflow.removeAll()
        beganQueue.removeAll(keepingCapacity: true); beganHead = 0; beganCount = 0
        presentedThrough = -1
        committedThrough = -1
    }

    @inline(__always) private func slot(_ id: UInt64) -> Int { Int(truncatingIfNeeded: id) & ((1 << Self.slotBits) - 1) }

    /// The absolute index of frame `id`'s pending entry, creating one if needed.
    private mutating func index(of id: UInt64) -> Int {
        let s = slot(id)
        let candidate = slots[s]
        if candidate >= 0 {
            let local = candidate - removed
            if local >= head, local < entries.count, entries[local].record.frameID == id, !entries[local].done { return candidate }
        }
        if !overflow.isEmpty, let found = overflow[id] { return found }
        let absolute = removed + entries.count
        entries.append(Entry(record: FrameRecord(frameID: id)))
        if candidate >= 0 {
            let local = candidate - removed
            if local >= head, local < entries.count - 1, !entries[local].done {
                overflow[entries[local].record.frameID] = candidate   // keep the displaced frame findable
            }
        }
        slots[s] = absolute
        return absolute
    }

    /// Applies `change` to frame `id`; `began` marks its begin (it joins the begin order).
    mutating func update(_ id: UInt64, began: Bool = false, _ change: (inout FrameRecord) -> Void) {
        let local = index(of: id) - removed
        change(&entries[local].record)
        if began && entries[local].beganPosition < 0 {
            entries[local].beganPosition = beganCount
            beganCount += 1
            beganQueue.append(local + removed)
        }
        let position = entries[local].beganPosition
        if position >= 0 {
            if entries[local].record.presentNs != .min || entries[local].record.renderEndNs != .min {
                presentedThrough = max(presentedThrough, position)
            }
            if entries[local].record.commitNs != .min { committedThrough = max(committedThrough, position) }
        }
    }

    /// Records kept, judged or not, from the first not yet dropped.
    var keptRecords: Int { entries.count - head }

    /// The begin of the oldest frame begun and not yet handed out, if any.
    var oldestPendingBeganNs: Int64? {
        guard beganHead < beganQueue.count else { return nil }
        return entries[beganQueue[beganHead] - removed].record.beganNs
    }

    /// The next frame to judge, in begin order, if it is final (or `all`: the run ended).
    mutating func nextReady(all: Bool) -> FrameRecord? {
        guard beganHead < beganQueue.count else { compactIfCrowded(); return nil }
        let local = beganQueue[beganHead] - removed
        let position = entries[local].beganPosition
        let laterBegan = position < beganCount - 1
        // The two fields read in place: a copy of the whole record per call showed in profiles.
        let commitNs = entries[local].record.commitNs, presentNs = entries[local].record.presentNs
        let ready = all
            || (laterBegan && (commitNs != .min || position < committedThrough)
                && (presentNs != .min || position < presentedThrough))
            || beganCount - position > Self.window
        guard ready else { compactIfCrowded(); return nil }
        beganHead += 1
        defer { compact() }
        return finish(local)
    }

    /// `compact` when nothing was handed out: only begin-less records can need dropping then (done
    /// entries and the front trims all follow a frame handed out, and were compacted then).
    @inline(__always) private mutating func compactIfCrowded() {
        if entries.count - head > 2 * Self.window { compact() }
    }

    /// Marks the entry judged and moves its record out: the entry keeps only the id, all that is
    /// read of a done entry (a copy of the record, retained, per frame showed in profiles).
    private mutating func finish(_ local: Int) -> FrameRecord {
        entries[local].done = true
        let id = entries[local].record.frameID
        if slots[slot(id)] == local + removed { slots[slot(id)] = -1 }
        if !overflow.isEmpty, overflow[id] == local + removed { overflow.removeValue(forKey: id) }
        var record = FrameRecord(frameID: id)
        swap(&record, &entries[local].record)
        return record
    }

    /// Drops judged entries from the front, and begin-less ones once too many records wait.
    private mutating func compact() {
        while head < entries.count {
            if entries[head].done { head += 1; continue }
            if entries[head].beganPosition < 0 && entries.count - head > 2 * Self.window {
                _ = finish(head)
                head += 1
                continue
            }
            break
        }
        if head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            removed += head
            head = 0
        }
        if beganHead > 1024 && beganHead * 2 > beganQueue.count {
            beganQueue.removeFirst(beganHead)
            beganHead = 0
        }
    }
}

/// Input arrivals (instants in category `input`), kept sorted whatever their file order, and handed
/// to frames in begin order: a frame's input is the earliest that arrived after the previous frame
/// began and no later than its own begin.
struct InputArrivals: Sendable {
    static let limit = 1 << 16
    private var times: [Int64] = []
    private var head = 0
    private var previousBeganNs: Int64 = .min

    mutating func reset() { times.removeAll(keepingCapacity: true); head = 0; previousBeganNs = .min }

    mutating func add(_ t: Int64) {
        if times.count - head >= Self.limit { head += 1 }   // bounded: the oldest goes
        var i = times.count
        while i > head, times[i - 1] > t { i -= 1 }          // nearly always appended at the end
        times.insert(t, at: i)
    }

    /// The input released for a frame that began at `beganNs` (frames come in begin order), or .min.
    mutating func take(beganNs: Int64) -> Int64 {
        defer { previousBeganNs = max(previousBeganNs, beganNs) }
        while head < times.count, times[head] <= previousBeganNs { head += 1 }
        var result = Int64.min
        if head < times.count, times[head] <= beganNs { result = times[head] }
        while head < times.count, times[head] <= beganNs { head += 1 }
        if head > 1024 && head * 2 > times.count { times.removeFirst(head); head = 0 }
        return result
    }
}

/// The union of interaction intervals (the animating time), computed at the end of a run from the
/// begins and ends sorted by time: they may come from different threads, in any file order.
/// Begins and ends pair by overlap (any open interaction keeps the time animating); one still open
/// at the end of the run closes at the run's last event.
struct InteractionUnion: Sendable {
    static let limit = 1 << 20
    private var marks: [(t: Int64, isBegin: Bool)] = []
    private(set) var overflowed = false

    mutating func reset() { marks.removeAll(keepingCapacity: true); overflowed = false }

    mutating func add(_ t: Int64, isBegin: Bool) {
        if marks.count < Self.limit { marks.append((t, isBegin)) } else { overflowed = true }
    }

    /// The union's length in ns, or nil when the run recorded no interaction.
    func unionNs(runEndNs: Int64) -> Int64? {
        guard marks.contains(where: \.isBegin) else { return nil }
        // At equal times begins sort first: an empty interaction opens and closes, touching ones join.
        let sorted = marks.sorted { ($0.t, $0.isBegin ? 0 : 1) < ($1.t, $1.isBegin ? 0 : 1) }
        var open = 0, startNs: Int64 = 0, union: Int64 = 0
        for mark in sorted {
            if mark.isBegin {
                if open == 0 { startNs = mark.t }
                open += 1
            } else if open > 0 {
                open -= 1
                if open == 0 { union +|= max(0, mark.t - startNs) }
            }
        }
        if open > 0 && runEndNs > startNs { union +|= runEndNs - startNs }
        return union
    }
}
