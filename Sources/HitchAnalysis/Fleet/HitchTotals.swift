/// The additive state behind one `HitchFigures` (one refresh rate, or the recorded frames): counts,
/// integer nanoseconds and the frame-time and overrun sketches; `figures` derives every figure from
/// it. Two totals merge exactly (`merge`): the totals of two traces merged are the totals of the
/// two as runs of one analysis (docs/FLEET.md "Merging").
struct HitchTotals: Codable, Sendable, Equatable {
    /// `replay` when any part was judged by the replay model.
    var source: HitchSource
    /// The rate judged at (0 for the recorded frames, each on its own period).
    var rateHz: Double
    var frameCount = 0, hitchCount = 0
    var totalHitchNs: Int64 = 0, longestHitchNs: Int64 = 0
    var commitHitchCount = 0, commitHitchNs: Int64 = 0
    var renderHitchCount = 0, renderHitchNs: Int64 = 0
    var tripleBufferedFrames = 0, addedLatencyNs: Int64 = 0
    var frameTimes = QuantileSketch()
    var overruns = QuantileSketch()
    var frameTimeHistogram = FrameTimeHistogram()
    var slowFrames = 0, frozenFrames = 0, unjudgedFrames = 0
    /// Hitches and hitch time per cause, keyed by `HitchCause` raw value.
    var byCause: [String: CauseTotals] = [:]
    var framesWithThreadStates = 0
    /// Frames whose cause could be told: from thread states, or from the platform's verdict (imports).
    var framesWithCauses = 0
    var animatingNs: Int64 = 0
    var animatingFromInteractions = false, animatingFromFrames = false
    var worstWindow = WorstWindowTotals()

    init(source: HitchSource, rateHz: Double) { self.source = source; self.rateHz = rateHz }

    /// Adds `other`'s frames, hitches and animating time: afterwards these are the totals of both.
    mutating func merge(_ other: HitchTotals) {
        // The replay's word when any part with frames was replayed; parts without frames decide only
        // among themselves (so merging in any order agrees).
        if other.frameCount > 0 && frameCount == 0 { source = other.source }
        else if other.source == .replay && (other.frameCount > 0 || frameCount == 0) { source = .replay }
        frameCount +|= other.frameCount
        hitchCount +|= other.hitchCount
        totalHitchNs +|= other.totalHitchNs
        longestHitchNs = max(longestHitchNs, other.longestHitchNs)
        commitHitchCount +|= other.commitHitchCount
        commitHitchNs +|= other.commitHitchNs
        renderHitchCount +|= other.renderHitchCount
        renderHitchNs +|= other.renderHitchNs
        tripleBufferedFrames +|= other.tripleBufferedFrames
        addedLatencyNs +|= other.addedLatencyNs
        frameTimes.merge(other.frameTimes)
        overruns.merge(other.overruns)
        frameTimeHistogram.merge(other.frameTimeHistogram)
        slowFrames +|= other.slowFrames
        frozenFrames +|= other.frozenFrames
        unjudgedFrames +|= other.unjudgedFrames
        for (cause, totals) in other.byCause { byCause[cause, default: CauseTotals()].merge(totals) }
        framesWithThreadStates +|= other.framesWithThreadStates
        framesWithCauses +|= other.framesWithCauses
        animatingNs +|= other.animatingNs
        animatingFromInteractions = animatingFromInteractions || other.animatingFromInteractions
        animatingFromFrames = animatingFromFrames || other.animatingFromFrames
        if other.worstWindow.isWorse(than: worstWindow) { worstWindow = other.worstWindow }
    }

    /// One hitching frame under its cause.
    mutating func addHitch(_ cause: HitchCause, hitchNs: Int64) {
        byCause[cause.rawValue, default: CauseTotals()].merge(CauseTotals(hitchCount: 1, hitchNs: hitchNs))
    }

    /// Hitch ms per second of animating time (0 without animating time).
    var hitchTimeRatioMsPerS: Double { animatingNs > 0 ? milliseconds(totalHitchNs) / (Double(animatingNs) / 1e9) : 0 }

    /// Every figure of the totals (docs/METRICS.md "Hitch time ratio").
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
        f.hitchTimeRatioMsPerS = hitchTimeRatioMsPerS
        f.animatingTimeSource = animatingFromInteractions
            ? (animatingFromFrames ? .interactionsAndFrames : .interactions) : .frames
        f.commitHitchCount = commitHitchCount
        f.commitHitchMs = milliseconds(commitHitchNs)
        f.renderHitchCount = renderHitchCount
        f.renderHitchMs = milliseconds(renderHitchNs)
        f.tripleBufferedFrames = tripleBufferedFrames
        f.addedLatencyMs = milliseconds(addedLatencyNs)
        f.frameTimeMs = frameTimes.percentilesMs()
        f.frameTimeHistogram = frameTimeHistogram
        f.overrunMs = overruns.percentilesMs()
        f.slowFrames = slowFrames
        f.frozenFrames = frozenFrames
        f.worstWindow = worstWindow.figures
        f.unjudgedFrames = unjudgedFrames
        for cause in HitchCause.allCases {
            let totals = byCause[cause.rawValue] ?? CauseTotals()
            var c = CauseFigures()
            c.hitchCount = totals.hitchCount
            c.totalHitchMs = milliseconds(totals.hitchNs)
            c.hitchTimeRatioMsPerS = animatingNs > 0 ? c.totalHitchMs / f.animatingSeconds : 0
            f.byCause[cause] = c
        }
        f.framesWithThreadStates = framesWithThreadStates
        if framesWithCauses > 0 {
            f.appHitchTimeRatioMsPerS = f.byCause.appWork.hitchTimeRatioMsPerS + f.byCause.waitingForAppThreads.hitchTimeRatioMsPerS
        }
        HitchGrading.apply(to: &f)
        return f
    }
}

/// One cause's hitches.
struct CauseTotals: Codable, Sendable, Equatable {
    var hitchCount = 0
    var hitchNs: Int64 = 0

    mutating func merge(_ other: CauseTotals) {
        hitchCount +|= other.hitchCount
        hitchNs +|= other.hitchNs
    }
}

/// The one-second window with the most hitch time, and the trace it is in.
struct WorstWindowTotals: Codable, Sendable, Equatable {
    var hitchNs: Int64 = 0
    var hitchCount = 0
    /// The run (input index) it is in, and where it starts, relative to that run's first event.
    var run = 0
    var startMs = 0.0
    /// The trace's path, in a summary (nil inside one analysis, where `run` says which).
    var trace: String? = nil

    /// More hitch time; between equals, the one in the trace whose path sorts first, then the rest
    /// (so the choice depends on no order of merging, and matches `hitch analyze` given the paths sorted).
    func isWorse(than other: WorstWindowTotals) -> Bool {
        if hitchNs != other.hitchNs { return hitchNs > other.hitchNs }
        return (trace ?? "", run, startMs, hitchCount) < (other.trace ?? "", other.run, other.startMs, other.hitchCount)
    }

    var figures: WorstWindow {
        var w = WorstWindow()
        w.run = run
        w.startMs = startMs
        w.hitchMs = milliseconds(hitchNs)
        w.hitchCount = hitchCount
        return w
    }
}

extension FrameTimeHistogram {
    /// Adds `other`'s frames bin by bin.
    mutating func merge(_ other: FrameTimeHistogram) {
        guard !other.counts.isEmpty else { return }
        if counts.isEmpty { counts = [Int](repeating: 0, count: Self.binCount) }
        for index in other.counts.indices where index < counts.count { counts[index] +|= other.counts[index] }
    }
}
