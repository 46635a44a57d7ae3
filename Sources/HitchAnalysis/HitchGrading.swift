// The two published grading scales for a hitch time ratio (ms of hitch per second of animation).

public enum HitchGrading {
    public static let appleTestScaleName = "Apple test scale (good < 5, warning 5-10, critical >= 10 ms/s)"
    public static let organizerScaleName = "Xcode Organizer field scale (good <= 10, fair <= 25, poor <= 50, critical > 50 ms/s)"

    /// Apple's scale for performance tests: good < 5, warning 5-10, critical >= 10 ms/s.
    public static func appleTestGrade(_ ratioMsPerS: Double) -> HitchGrade {
        ratioMsPerS < 5 ? .good : ratioMsPerS < 10 ? .warning : .critical
    }

    /// Xcode Organizer's field scale: <= 10, <= 25, <= 50, above 50 ms/s.
    public static func organizerGrade(_ ratioMsPerS: Double) -> HitchGrade {
        ratioMsPerS <= 10 ? .good : ratioMsPerS <= 25 ? .fair : ratioMsPerS <= 50 ? .poor : .critical
    }

    /// A grade from fewer judged frames than this is marked `fewFrames`: one hitch in a handful of
    /// frames is a large ratio over a fraction of a second, not a measurement of the app.
    public static let fewFramesBelow = 60

    /// Grades on both scales; no frames judged is `ungraded` (nothing was measured, so nothing is good).
    static func apply(to figures: inout HitchFigures) {
        let judged = figures.frameCount > 0
        figures.verdict = judged ? appleTestGrade(figures.hitchTimeRatioMsPerS) : .ungraded
        figures.appleTestScale.grade = figures.verdict
        figures.appleTestScale.scale = appleTestScaleName
        figures.organizerScale.grade = judged ? organizerGrade(figures.hitchTimeRatioMsPerS) : .ungraded
        figures.organizerScale.scale = organizerScaleName
        figures.fewFrames = figures.frameCount < fewFramesBelow
    }
}

/// The thresholds the analysis applies, published for renderers to print (no renderer repeats one).
public enum AnalysisThresholds {
    /// Body evaluations longer than this are long updates (`ViewFigures.longUpdates`).
    public static var longUpdateMs: Double { milliseconds(longUpdateThresholdNs) }
    /// ... and longer than this, `ViewFigures.longUpdatesOver1ms`.
    public static var veryLongUpdateMs: Double { milliseconds(veryLongUpdateThresholdNs) }
    /// Decode below this share of the peak bandwidth is `DecodeFigures.notBandwidthBound`.
    public static let notBandwidthBoundUtilization = 0.3
    /// Frames longer than this are frozen (`HitchFigures.frozenFrames`).
    public static var frozenFrameMs: Double { milliseconds(frozenFrameThresholdNs) }
}

extension Analysis {
    /// The frame deadlines (one period) of the rates analyzed, shortest first: what charts draw.
    public var frameDeadlinesMs: [Double] { refreshRatesHz.sorted(by: >).map { 1000 / $0 } }
}

/// Frames whose frame time exceeds this are "frozen" (Android vitals' definition).
let frozenFrameThresholdNs: Int64 = 700_000_000
/// Body evaluations longer than these are long updates (Instruments' orange and red).
let longUpdateThresholdNs: Int64 = 500_000
let veryLongUpdateThresholdNs: Int64 = 1_000_000
/// Two periods within this fraction are the same refresh rate.
let periodTolerance = 0.01
/// A frame whose lateness is within this fraction of a period of one period, after a frame that
/// was also one period late, is steady triple buffering (latency, not a hitch).
let tripleBufferTolerance = 0.1
