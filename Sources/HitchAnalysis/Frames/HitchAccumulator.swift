import HitchTrace

/// Accumulates judged frames into `HitchTotals` (one per rate, plus one for the recorded frames),
/// from which `HitchFigures` are derived: the totals are what a trace's summary keeps, so a fleet's
/// figures come from the same code as one trace's.
struct HitchAccumulator: Sendable {
    /// Everything but the worst window's start, which is resolved against its run's first event in `totals`.
    private var counted: HitchTotals
    // Per run: first frame start and last present (the animating time without interactions).
    private var runFirstStartNs: Int64 = .max
    private var runLastPresentNs: Int64 = .min
    // Worst one-second window: hitches in the last second of presents.
    private var window: [(atNs: Int64, hitchNs: Int64)] = []
    private var windowHead = 0
    private var windowSumNs: Int64 = 0
    /// Where the worst window starts (absolute): made relative to its run's first event in `totals`.
    private var worstStartNs: Int64 = 0
    /// Each run's first event, known when the run ends.
    private var runStartsNs: [Int: Int64] = [:]
    private var run = 0

    init(source: HitchSource, rateHz: Double) { counted = HitchTotals(source: source, rateHz: rateHz) }

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
            counted.animatingNs +|= union
            counted.animatingFromInteractions = true
            runFirstStartNs = .max
            runLastPresentNs = .min
        }
    }

    mutating func addUnjudged() { counted.unjudgedFrames += 1 }

    mutating func resolveRunStart(_ run: Int, runStartNs: Int64) { runStartsNs[run] = runStartNs }

    mutating func add(_ frame: JudgedFrame) {
        counted.frameCount += 1
        runFirstStartNs = min(runFirstStartNs, frame.startNs)
        runLastPresentNs = max(runLastPresentNs, frame.actualNs)
        counted.frameTimes.add(frame.frameTimeNs)
        counted.frameTimeHistogram.add(frameTimeNs: frame.frameTimeNs)
        counted.overruns.add(frame.overrunNs)
        if frame.frameTimeNs > frame.periodNs { counted.slowFrames += 1 }
        if frame.frameTimeNs > frozenFrameThresholdNs { counted.frozenFrames += 1 }
        if frame.states.main != nil { counted.framesWithThreadStates += 1 }
        if frame.states.main != nil || frame.hasPlatformVerdict { counted.framesWithCauses += 1 }
        if frame.kind == .latency || frame.latencyNs > 0 {
            if frame.kind == .latency { counted.tripleBufferedFrames += 1 }
            counted.addedLatencyNs +|= frame.latencyNs
        }
        guard frame.hitchNs > 0 else { return }
        counted.hitchCount += 1
        counted.totalHitchNs +|= frame.hitchNs
        counted.longestHitchNs = max(counted.longestHitchNs, frame.hitchNs)
        if frame.kind == .commit { counted.commitHitchCount += 1; counted.commitHitchNs +|= frame.hitchNs }
        else { counted.renderHitchCount += 1; counted.renderHitchNs +|= frame.hitchNs }
        counted.addHitch(frame.cause, hitchNs: frame.hitchNs)
        // Sliding one-second window ending at this hitch's present.
        window.append((frame.actualNs, frame.hitchNs))
        windowSumNs +|= frame.hitchNs
        while windowHead < window.count, window[windowHead].atNs <= frame.actualNs - 1_000_000_000 {
            windowSumNs = windowSumNs.subtractingSaturated(window[windowHead].hitchNs)
            windowHead += 1
        }
        if windowHead > 1024 { window.removeFirst(windowHead); windowHead = 0 }
        if windowSumNs > counted.worstWindow.hitchNs {
            counted.worstWindow.hitchNs = windowSumNs
            counted.worstWindow.run = run
            counted.worstWindow.hitchCount = window.count - windowHead
            worstStartNs = frame.actualNs - 1_000_000_000
        }
    }

    /// Closes a run: its animating time is the interactions' union, else first frame start to last present.
    mutating func endRun(interactionUnionNs: Int64?) {
        if let union = interactionUnionNs, union > 0 {
            counted.animatingNs +|= union
            counted.animatingFromInteractions = true
        } else if runLastPresentNs > runFirstStartNs {
            counted.animatingNs +|= runLastPresentNs - runFirstStartNs
            counted.animatingFromFrames = true
        }
    }

    var frames: Int { counted.frameCount }

    /// The totals of every frame added, the worst window's start relative to its run.
    var totals: HitchTotals {
        var t = counted
        if t.worstWindow.hitchNs > 0, let start = runStartsNs[t.worstWindow.run] {
            t.worstWindow.startMs = milliseconds(max(start, worstStartNs).subtractingSaturated(start))
        }
        return t
    }

    func figures(periodMs: Double) -> HitchFigures { totals.figures(periodMs: periodMs) }
}
