import HitchTrace

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
    /// Frames whose cause could be told: from thread states, or from the platform's verdict.
    private var framesWithCauses = 0
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
        if frame.states.main != nil || frame.hasPlatformVerdict { framesWithCauses += 1 }
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
        if framesWithCauses > 0 {
            f.appHitchTimeRatioMsPerS = f.byCause.appWork.hitchTimeRatioMsPerS + f.byCause.waitingForAppThreads.hitchTimeRatioMsPerS
        }
        HitchGrading.apply(to: &f)
        return f
    }
}
