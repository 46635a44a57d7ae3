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

    static func apply(to figures: inout HitchFigures) {
        figures.verdict = appleTestGrade(figures.hitchTimeRatioMsPerS)
        figures.appleTestScale.grade = figures.verdict
        figures.appleTestScale.scale = appleTestScaleName
        figures.organizerScale.grade = organizerGrade(figures.hitchTimeRatioMsPerS)
        figures.organizerScale.scale = organizerScaleName
    }
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
