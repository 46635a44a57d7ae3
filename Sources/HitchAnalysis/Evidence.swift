// What an analysis stands on, and the rules that say when it is too little to judge
// (docs/METRICS.md "Evidence"). A gate that reads figures (`check`, `diff`, `history add`) asks
// `EvidenceRule` first, so an empty, cut-short or frameless trace cannot pass for a good run.

/// How much an analysis stands on. `check`, `diff` and `history add` refuse to judge a trace
/// without frames or cut short (`EvidenceRule`), unless the user opts in.
public struct Evidence: Codable, Sendable, Equatable {
    /// Frames judged at their recorded rates (`recorded.frameCount`).
    public var framesJudged: Int = 0
    /// Seconds of animation the hitch time ratio divides by (`recorded.animatingSeconds`).
    public var animatingSeconds: Double = 0
    /// Events read, over all runs.
    public var eventCount: UInt64 = 0
    /// Runs cut short: the file ends inside a record (the writer was killed, or the file was cut), or
    /// the end-of-recording marker its recorder promised is missing (the process was killed or crashed).
    public var runsCutShort: Int = 0
    /// True when no run was cut short.
    public var endedCleanly: Bool = true
    /// Runs whose writer promised no end-of-recording marker (imports, older recorders): for them a
    /// kill between two flushes cannot be told from a clean end.
    public var runsWithoutEndMarker: Int = 0
    /// Fewer frames than `HitchGrading.fewFramesBelow`: the grades are marked as from a small sample.
    public var fewFrames: Bool = true
    public init() {}
}

extension Evidence {
    /// The evidence of an analysis whose passes have contributed their figures.
    init(of analysis: Analysis) {
        framesJudged = analysis.recorded.frameCount
        animatingSeconds = analysis.recorded.animatingSeconds
        eventCount = analysis.eventCount
        runsCutShort = analysis.runs.filter(\.isCutShort).count
        endedCleanly = runsCutShort == 0
        runsWithoutEndMarker = analysis.runs.filter { $0.endMarker == .notPromised }.count
        fewFrames = framesJudged < HitchGrading.fewFramesBelow
    }

    /// One line for reports: "1,440 frames judged over 12.0 s of animation, 84,123 events; every run
    /// ended with its end-of-recording marker".
    public var summary: String {
        let files = !endedCleanly ? "\(runsCutShort) run\(runsCutShort == 1 ? "" : "s") cut short (killed or crashed while recording)"
            : runsWithoutEndMarker == 0 ? "every run ended with its end-of-recording marker"
            : "every file ended on a whole record (\(runsWithoutEndMarker == 1 ? "it promised" : "\(runsWithoutEndMarker) promised") no end-of-recording marker, so a kill between two flushes cannot be told)"
        let seconds = animatingSeconds.isFinite ? (animatingSeconds * 100).rounded() / 100 : 0
        return "\(framesJudged) frame\(framesJudged == 1 ? "" : "s") judged over \(seconds) s of animation, \(eventCount) events; \(files)"
            + (framesJudged > 0 && fewFrames ? "; fewer than \(HitchGrading.fewFramesBelow) frames: a small sample, grades are provisional" : "")
    }
}

/// When a gate refuses to judge: too few frames, or a file cut short.
public struct EvidenceRule: Sendable, Equatable {
    /// Fewer judged frames than this is too little to judge (`--min-frames`; 0 accepts traces without frames).
    public var minimumFrames: Int
    /// Accept traces whose file ends inside a record (`--allow-cut-short`).
    public var allowCutShort: Bool

    public static let defaultMinimumFrames = 1

    public init(minimumFrames: Int = EvidenceRule.defaultMinimumFrames, allowCutShort: Bool = false) {
        self.minimumFrames = minimumFrames
        self.allowCutShort = allowCutShort
    }

    /// Why `analysis` is too little to judge, in one line naming the runs and the option that
    /// accepts it; nil when it is enough.
    public func refusal(of analysis: Analysis, what: String) -> String? {
        if !allowCutShort, let cut = analysis.runs.first(where: \.isCutShort) {
            let how = !cut.endedCleanly
                ? "its file ends inside a record\(cut.cutShortAtByte.map { " at byte \($0)" } ?? ""): the recorder was killed or the file truncated"
                : "its recorder promised an end-of-recording marker and the file has none: the app was killed or crashed while recording"
            return "\(what) '\(cut.path)' was cut short (\(how)), "
                + "so its figures miss the rest of the run; record it again, or pass --allow-cut-short to judge what it has"
        }
        let frames = analysis.evidence.framesJudged
        if frames < minimumFrames {
            let paths = analysis.runs.map(\.path).joined(separator: ", ")
            let held = frames == 0 ? "no frames to judge (\(analysis.eventCount) events)"
                : "\(frames) judged frame\(frames == 1 ? "" : "s"), fewer than --min-frames \(minimumFrames)"
            return "\(what) '\(paths)' has \(held): too little to judge; check that the app recorded frames "
                + "(Trace.frameBegan/frameCommitted), or pass --min-frames \(frames) to accept it"
        }
        return nil
    }
}

/// How many values a percentile needs before it is more than the few slowest values: at least
/// five values beyond it (P50: 10, P90: 50, P95: 100, P99: 500). A percentile from fewer is
/// marked, and a budget on it warns: it moves run to run with one slow value.
public enum PercentileEvidence {
    public static let valuesBeyondPercentile = 5.0

    /// The fewest values the percentile `level` (0-100) needs.
    public static func minimumValues(forPercentile level: Double) -> Int {
        guard level > 0, level < 100 else { return 1 }
        return Int((valuesBeyondPercentile / (1 - level / 100)).rounded(.up))
    }

    /// The percentile a JSON key names: "p95" and "p95Ms" are 95; nil for other keys.
    public static func level(ofKey key: String) -> Double? {
        guard key.hasPrefix("p") else { return nil }
        var digits = key.dropFirst()
        if digits.hasSuffix("Ms") { digits = digits.dropLast(2) }
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), let level = Double(digits) else { return nil }
        return level
    }

    /// True when `count` values are too few for the percentile `level`.
    public static func isThin(percentile level: Double, count: Int) -> Bool {
        count < minimumValues(forPercentile: level)
    }
}
