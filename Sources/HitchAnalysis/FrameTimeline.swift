import HitchTrace

// Frames and hitches (Apple's definitions; docs/METRICS.md "Frames and hitches").
//
// A frame's events (begin on the main thread, commit, render end, present on the render thread)
// arrive in file order, which is per-thread order only, so frames are assembled by id and judged
// in the order they began once presented (or once `assemblyWindow` later frames have begun).

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

    var hasBegan: Bool { beganNs != .min }
    var hasCommit: Bool { commitNs != .min }
}

/// One frame, judged on some vsync grid.
struct JudgedFrame: Sendable {
    enum Kind: String, Sendable { case none, commit, render, latency }
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
    var frameTimeNs: Int64 { mainWorkNs + renderNs }
    var overrunNs: Int64 { actualNs - expectedNs }
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

/// Judges recorded frames on their own recorded grid (vsync + k * period).
func judgeRecorded(_ frame: FrameRecord, judge: inout LatenessJudge) -> JudgedFrame? {
    guard frame.hasBegan, frame.hasCommit, frame.periodNs > 0 else { return nil }
    let period = frame.periodNs
    let expected = frame.targetNs + period
    let renderStart = vsyncAtOrAfter(frame.commitNs, anchor: frame.vsyncNs, period: period)
    let renderEnd = frame.renderEndNs == .min ? renderStart : frame.renderEndNs
    // Render duration: from the vsync after commit, or from the commit itself when the renderer
    // finished before that vsync (it started at once).
    let renderNs = renderEnd >= renderStart ? renderEnd - renderStart : max(0, renderEnd - frame.commitNs)
    let actual: Int64
    if frame.presentNs != .min {
        actual = frame.presentNs
    } else {
        let periods = max(1, (max(0, renderEnd - renderStart) + period - 1) / period)
        actual = renderStart + periods * period
    }
    let (hitch, latency) = judge.judge(latenessNs: actual - expected, periodNs: period)
    let kind: JudgedFrame.Kind
    if hitch > 0 { kind = frame.commitNs > frame.targetNs ? .commit : .render }
    else if latency > 0 { kind = .latency }
    else { kind = .none }
    return JudgedFrame(frameID: frame.frameID, startNs: frame.vsyncNs, periodNs: period,
                       mainWorkNs: max(0, frame.commitNs - frame.beganNs), renderNs: renderNs,
                       commitNs: frame.commitNs, renderEndNs: renderEnd,
                       expectedNs: expected, actualNs: actual, hitchNs: hitch, latencyNs: latency, kind: kind)
}

/// Accumulates judged frames into `HitchFigures` (one per rate, plus one for the recorded frames).
struct HitchAccumulator: Sendable {
    var source: String
    var rateHz: Double
    private var frameCount = 0
    private var hitchCount = 0
    private var totalHitchNs: Int64 = 0
    private var longestHitchNs: Int64 = 0
    private var commitHitchCount = 0, commitHitchNs: Int64 = 0
    private var renderHitchCount = 0, renderHitchNs: Int64 = 0
    private var tripleBuffered = 0, latencyNs: Int64 = 0
    private var frameTimes = QuantileSketch()
    private var overruns = QuantileSketch()
    private var slowFrames = 0, frozenFrames = 0
    private var unjudged = 0
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
    private var run = 0

    init(source: String, rateHz: Double) { self.source = source; self.rateHz = rateHz }

    mutating func beginRun(_ run: Int) {
        self.run = run
        runFirstStartNs = .max
        runLastPresentNs = .min
        window.removeAll(keepingCapacity: true)
        windowHead = 0
        windowSumNs = 0
    }

    mutating func addUnjudged() { unjudged += 1 }

    mutating func add(_ frame: JudgedFrame, runStartNs: Int64) {
        frameCount += 1
        runFirstStartNs = min(runFirstStartNs, frame.startNs)
        runLastPresentNs = max(runLastPresentNs, frame.actualNs)
        frameTimes.add(frame.frameTimeNs)
        overruns.add(frame.overrunNs)
        if frame.frameTimeNs > frame.periodNs { slowFrames += 1 }
        if frame.frameTimeNs > frozenFrameThresholdNs { frozenFrames += 1 }
        if frame.kind == .latency || frame.latencyNs > 0 {
            if frame.kind == .latency { tripleBuffered += 1 }
            latencyNs += frame.latencyNs
        }
        guard frame.hitchNs > 0 else { return }
        hitchCount += 1
        totalHitchNs += frame.hitchNs
        longestHitchNs = max(longestHitchNs, frame.hitchNs)
        if frame.kind == .commit { commitHitchCount += 1; commitHitchNs += frame.hitchNs }
        else { renderHitchCount += 1; renderHitchNs += frame.hitchNs }
        // Sliding one-second window ending at this hitch's present.
        window.append((frame.actualNs, frame.hitchNs))
        windowSumNs += frame.hitchNs
        while windowHead < window.count, window[windowHead].atNs <= frame.actualNs - 1_000_000_000 {
            windowSumNs -= window[windowHead].hitchNs
            windowHead += 1
        }
        if windowHead > 1024 { window.removeFirst(windowHead); windowHead = 0 }
        if windowSumNs > worstNs {
            worstNs = windowSumNs
            worst.run = run
            worst.startMs = milliseconds(max(runStartNs, frame.actualNs - 1_000_000_000) - runStartNs)
            worst.hitchMs = milliseconds(windowSumNs)
            worst.hitchCount = window.count - windowHead
        }
    }

    /// Closes a run: its animating time is the interactions' union, else first frame start to last present.
    mutating func endRun(interactionUnionNs: Int64?) {
        if let union = interactionUnionNs, union > 0 {
            animatingNs += union
            animatingFromInteractions = true
        } else if runLastPresentNs > runFirstStartNs {
            animatingNs += runLastPresentNs - runFirstStartNs
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
            ? (animatingFromFrames ? "interactions+frames" : "interactions") : "frames"
        f.commitHitchCount = commitHitchCount
        f.commitHitchMs = milliseconds(commitHitchNs)
        f.renderHitchCount = renderHitchCount
        f.renderHitchMs = milliseconds(renderHitchNs)
        f.tripleBufferedFrames = tripleBuffered
        f.addedLatencyMs = milliseconds(latencyNs)
        f.frameTimeMs = frameTimes.percentilesMs()
        f.overrunMs = overruns.percentilesMs()
        f.slowFrames = slowFrames
        f.frozenFrames = frozenFrames
        f.worstWindow = worst
        f.unjudgedFrames = unjudged
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

    init(rateHz: Double) { periodNs = Int64((1e9 / rateHz).rounded()) }

    mutating func beginRun() {
        anchorNs = .min; mainFreeNs = .min; renderFreeNs = .min; groupOpen = false; judge.reset()
    }

    /// Feeds one recorded frame (in begin order); returns a replayed frame when one completes.
    mutating func add(frameID: UInt64, releaseNs: Int64, isInput: Bool, mainWorkNs: Int64, renderNs: Int64) -> JudgedFrame? {
        if anchorNs == .min { anchorNs = releaseNs }
        var emitted: JudgedFrame?
        if groupOpen && releaseNs > groupStartNs {
            emitted = closeGroup()
        }
        if !groupOpen {
            groupOpen = true
            groupStartNs = vsyncAtOrAfter(max(releaseNs, mainFreeNs), anchor: anchorNs, period: periodNs)
            groupInputWorkNs = 0; groupHasInput = false; groupAnimationWorkNs = 0; groupRenderNs = 0
            groupFrameID = frameID
        }
        if isInput { groupInputWorkNs += mainWorkNs; groupHasInput = true }
        else { groupAnimationWorkNs = max(groupAnimationWorkNs, mainWorkNs) }
        groupRenderNs = max(groupRenderNs, renderNs)
        return emitted
    }

    /// Completes the open group at the end of a run.
    mutating func finish() -> JudgedFrame? { groupOpen ? closeGroup() : nil }

    private mutating func closeGroup() -> JudgedFrame {
        groupOpen = false
        let work = groupHasInput ? max(groupInputWorkNs, groupAnimationWorkNs) : groupAnimationWorkNs
        let start = groupStartNs
        let target = start + periodNs
        let commit = start + work
        mainFreeNs = commit
        let renderStart = vsyncAtOrAfter(max(commit, renderFreeNs), anchor: anchorNs, period: periodNs)
        let renderEnd = renderStart + groupRenderNs
        renderFreeNs = renderEnd
        let periods = max(1, (groupRenderNs + periodNs - 1) / periodNs)
        let actual = renderStart + periods * periodNs
        let expected = target + periodNs
        let (hitch, latency) = judge.judge(latenessNs: actual - expected, periodNs: periodNs)
        let kind: JudgedFrame.Kind = hitch > 0 ? (commit > target ? .commit : .render) : (latency > 0 ? .latency : .none)
        return JudgedFrame(frameID: groupFrameID, startNs: start, periodNs: periodNs, mainWorkNs: work,
                           renderNs: groupRenderNs, commitNs: commit, renderEndNs: renderEnd,
                           expectedNs: expected, actualNs: actual, hitchNs: hitch, latencyNs: latency, kind: kind)
    }
}
