import Foundation

// The figures `hitch diff` compares and `hitch history` stores, drawn from an `Analysis`
// (docs/METRICS.md "Comparing runs"); Comparison.swift judges their changes.

/// What a compared figure is about, in the order a reader wants them (the trend page's order): the
/// hitch time ratio and the app's share first (the primary figures of a verdict), then its causes,
/// decode speed, the other hitch figures, hangs, the app's work (stages, views, layout), the recorder.
public enum FigureGroup: Int, Comparable, Sendable {
    case hitchTimeRatio, hitchCause, decode, otherHitch, hang, work, recorder

    public init(metric path: String) {
        if path.hasPrefix("hitches.") {
            if path.contains(".byCause.") { self = .hitchCause }
            else if path.hasSuffix(".hitchTimeRatioMsPerS") || path.hasSuffix(".appHitchTimeRatioMsPerS") { self = .hitchTimeRatio }
            else { self = .otherHitch }
        } else if path.hasPrefix("decode.") || path.hasPrefix("tokens.") {
            self = .decode
        } else if path.hasPrefix("hangs.") {
            self = .hang
        } else if path.hasPrefix("stages[") || path.hasPrefix("views[") || path.hasPrefix("layout.") {
            self = .work
        } else {
            self = .recorder
        }
    }

    public static func < (a: FigureGroup, b: FigureGroup) -> Bool { a.rawValue < b.rawValue }
}

/// A figure `hitch diff` compares (and `hitch history` stores): path, words, normalization, role,
/// direction, and the smallest absolute change (after normalization) that matters.
public struct ComparedFigure: Sendable {
    public var metric: String
    /// The figure in words, from `DisplayNames`.
    public var label: String
    public var unit: FigureUnit
    var scale: FigureScale
    var role: FigureRole
    var primary: Bool
    public var value: Double
    public var higherIsBetter: Bool
    public var absoluteFloor: Double
}

extension Analysis {
    /// The figures `hitch diff` compares, by metric path, normalized by this run's frames and seconds.
    public func comparedFigures() -> [ComparedFigure] {
        var result: [ComparedFigure] = []
        let frames = Double(recorded.frameCount), seconds = recorded.animatingSeconds
        // Labels come from the one table of display names, by metric path.
        func add(_ metric: String, _ unit: FigureUnit, _ value: Double, _ role: FigureRole,
                 scale: FigureScale = .asIs, higherIsBetter: Bool = false, floor: Double) {
            let divisor = scale == .perFrame ? frames : scale == .perSecond ? seconds : 1
            // A run without frames has no per-frame figures (nothing to divide by).
            guard divisor > 0 else { return }
            result.append(ComparedFigure(metric: metric, label: DisplayNames.metric(metric), unit: unit, scale: scale, role: role,
                                         primary: role == .judged && FigureGroup(metric: metric) == .hitchTimeRatio,
                                         value: value / divisor, higherIsBetter: higherIsBetter, absoluteFloor: floor))
        }
        for key in hitches.keys.sorted(by: { (Double($0) ?? 0, $0) < (Double($1) ?? 0, $1) }) {
            guard let h = hitches[key], h.frameCount > 0 else { continue }
            let p = "hitches.\(key)."
            add(p + "hitchTimeRatioMsPerS", .msPerS, h.hitchTimeRatioMsPerS, .judged, floor: 0.5)
            // The app's share is judged (what a change to the app moves); the other causes are the
            // machine's and the scheduler's: shown, never a regression.
            if let app = h.appHitchTimeRatioMsPerS {
                add(p + "appHitchTimeRatioMsPerS", .msPerS, app, .judged, floor: 0.5)
                for cause in HitchCause.allCases where cause != .appWork {
                    add(p + "byCause.\(cause).hitchTimeRatioMsPerS", .msPerS,
                        h.byCause[cause].hitchTimeRatioMsPerS, .informational, floor: 0.5)
                }
            }
            add(p + "hitchCount", .perSecond, Double(h.hitchCount), .judged, scale: .perSecond, floor: 0.2)
            add(p + "longestHitchMs", .ms, h.longestHitchMs, .judged, floor: 1)
            add(p + "frameTimeMs.p95", .ms, h.frameTimeMs.p95, .judged, floor: 0.25)
            add(p + "frameTimeMs.p99", .ms, h.frameTimeMs.p99, .judged, floor: 0.25)
            // Frames over one period, as a share of frames: a run with more frames is not worse for it.
            result.append(ComparedFigure(metric: p + "slowFrames", label: DisplayNames.metric(p + "slowFrames"), unit: .percentOfFrames, scale: .asIs,
                                         role: .judged, primary: false, value: Double(h.slowFrames) / Double(h.frameCount) * 100,
                                         higherIsBetter: false, absoluteFloor: 0.5))
            add(p + "frozenFrames", .frames, Double(h.frozenFrames), .judged, floor: 1)
        }
        for s in stages {
            // Time a stage spends on the main thread delays frames; time elsewhere does not.
            add("stages[\(s.name)].mainThreadMs", .msPerFrame, s.mainThreadMs, .judged, scale: .perFrame, floor: 0.05)
            add("stages[\(s.name)].totalMs", .msPerFrame, s.totalMs, .informational, scale: .perFrame, floor: 0.05)
            // Self time moves whenever work moves into or out of a nested stage.
            add("stages[\(s.name)].selfMs", .msPerFrame, s.selfMs, .informational, scale: .perFrame, floor: 0.05)
            add("stages[\(s.name)].count", .perFrame, Double(s.count), .informational, scale: .perFrame, floor: 0.05)
            add("stages[\(s.name)].p95Ms", .ms, s.p95Ms, .informational, floor: 0.1)
        }
        for v in views {
            // Body evaluations run on the main thread (the view runtime is main-actor isolated).
            add("views[\(v.type)].totalMs", .msPerFrame, v.totalMs, .judged, scale: .perFrame, floor: 0.05)
            add("views[\(v.type)].bodyEvaluations", .perFrame, Double(v.bodyEvaluations), .judged, scale: .perFrame, floor: 0.1)
            add("views[\(v.type)].longUpdates", .perSecond, Double(v.longUpdates), .judged, scale: .perSecond, floor: 0.1)
            add("views[\(v.type)].maxMs", .ms, v.maxMs, .informational, floor: 0.1)
        }
        if layout.passes > 0 {
            add("layout.totalMs", .msPerFrame, layout.totalMs, .judged, scale: .perFrame, floor: 0.05)
        }
        if let d = decode {
            add("decode.tokensPerSecond", .tokensPerSecond, d.tokensPerSecond, .informational, higherIsBetter: true, floor: 0.1)
            add("decode.timeToFirstTokenMs", .ms, d.timeToFirstTokenMs, .informational, floor: 1)
            add("decode.bytesPerToken", .bytes, d.bytesPerToken, .informational, floor: 1)
            add("decode.bandwidthGBps", .gigabytesPerSecond, d.bandwidthGBps, .informational, higherIsBetter: true, floor: 0.01)
            add("decode.utilization", .fraction, d.utilization, .informational, higherIsBetter: true, floor: 0.005)
        }
        if let t = tokens {
            add("tokens.dropped", .tokens, Double(t.dropped), .informational, floor: 1)
            add("tokens.tokenToScreenMs.p95", .ms, t.tokenToScreenMs.p95, .informational, floor: 0.5)
        }
        if let h = hangs, h.recordedSeconds > 0 {
            // The main thread's responsiveness: judged, like the frames' figures. Per hour of recording
            // (the hang rate), so a longer run is not worse for it; the longest as is.
            add("hangs.rateSecondsPerHour", .secondsPerHour, h.rateSecondsPerHour, .judged, floor: 1)
            add("hangs.longestMs", .ms, h.longestMs, .judged, floor: 10)
            add("hangs.brief.rateSecondsPerHour", .secondsPerHour, h.brief.rateSecondsPerHour, .judged, floor: 1)
        }
        add("droppedEvents", .events, Double(droppedEvents), .informational, floor: 1)
        return result
    }
}
