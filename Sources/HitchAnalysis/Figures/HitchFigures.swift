/// The grade of a hitch time ratio on one named scale.
public struct HitchVerdict: Codable, Sendable, Equatable {
    /// "good", "warning" or "critical" (Apple test scale); "good", "fair", "poor", "critical" (Organizer scale).
    public var grade: HitchGrade = .ungraded
    /// The scale's name, so a reader knows which thresholds applied.
    public var scale = ""
    public init() {}
}

/// Hitch figures for one refresh rate (or for the recorded frames).
public struct HitchFigures: Codable, Sendable, Equatable {
    /// "recorded" (judged from the recorded frames) or "replay" (the replay model at `rateHz`).
    public var source: HitchSource = .recorded
    /// The refresh rate judged at, and its period; 0 for the recorded figures when the trace mixes rates.
    public var rateHz = 0.0, periodMs = 0.0
    public var frameCount = 0, hitchCount = 0
    public var totalHitchMs = 0.0, longestHitchMs = 0.0
    /// Total hitch ms per second of animating time.
    public var hitchTimeRatioMsPerS = 0.0
    public var animatingSeconds = 0.0
    /// "interactions" (union of interaction intervals) or "frames" (first frame start to last present).
    public var animatingTimeSource: AnimatingTimeSource = .frames
    /// Apple's test scale grade (good < 5, warning 5-10, critical >= 10 ms/s); `ungraded` without frames.
    public var verdict: HitchGrade = .ungraded
    /// Fewer judged frames than `HitchGrading.fewFramesBelow`: the grade stands on a small sample.
    public var fewFrames = true
    /// Both grades with their scales named.
    public var appleTestScale = HitchVerdict(), organizerScale = HitchVerdict()
    /// Hitches whose commit missed its deadline vs those committed in time but rendered late.
    public var commitHitchCount = 0, commitHitchMs = 0.0
    public var renderHitchCount = 0, renderHitchMs = 0.0
    /// Frames in a steady triple-buffered state: one period of added latency, not a hitch.
    public var tripleBufferedFrames = 0, addedLatencyMs = 0.0
    /// Frame time = main-thread work (frame start to commit) + render duration.
    /// Overrun = actual present - expected present (negative = early).
    public var frameTimeMs = Percentiles(), overrunMs = Percentiles()
    /// Every judged frame's frame time, binned (not only the `frames[]` samples).
    public var frameTimeHistogram = FrameTimeHistogram()
    /// Frames whose frame time exceeds one period.
    public var slowFrames = 0
    /// Frames whose frame time exceeds 700 ms.
    public var frozenFrames = 0
    /// The one-second window with the most hitch time.
    public var worstWindow = WorstWindow()
    /// Frames recorded without a commit (not judged).
    public var unjudgedFrames = 0
    /// Hitch time split by cause (docs/METRICS.md "Hitch causes"): each hitch counts whole under
    /// one cause, so the five parts sum to the totals above.
    public var byCause = HitchCauseFigures()
    /// `byCause.appWork` + `byCause.waitingForAppThreads` hitch time ratios: the hitch time the app's
    /// own work caused (on its frame threads, or its other threads taking their CPU), the figure a
    /// CI gate holds the app to. Absent (null) when no frame carried thread-state readings, so a
    /// budget on it never passes a trace that cannot tell.
    public var appHitchTimeRatioMsPerS: Double? = nil
    /// Judged frames whose main thread had thread-state readings (the rest are `unknown` if they hitch).
    public var framesWithThreadStates = 0
    public init() {}
}

/// One cause's share of the hitches at one rate.
public struct CauseFigures: Codable, Sendable, Equatable {
    public var hitchCount = 0, totalHitchMs = 0.0
    /// This cause's hitch ms per second of animating time (the same denominator as the total).
    public var hitchTimeRatioMsPerS = 0.0
    public init() {}
}

/// Hitches by cause, one field per `HitchCause`.
public struct HitchCauseFigures: Codable, Sendable, Equatable {
    public var appWork = CauseFigures()
    /// Waiting for a CPU held by the app's own threads (its background work).
    public var waitingForAppThreads = CauseFigures()
    /// Waiting for a CPU held by other processes or the machine.
    public var waitingForCPU = CauseFigures()
    public var blocked = CauseFigures()
    public var machineStall = CauseFigures()
    /// The platform's compositor or display (imports: the platform's verdict blames its own pipeline).
    public var compositor = CauseFigures()
    public var unknown = CauseFigures()
    public init() {}

    public subscript(cause: HitchCause) -> CauseFigures {
        get {
            switch cause {
            case .appWork: appWork
            case .waitingForAppThreads: waitingForAppThreads
            case .waitingForCPU: waitingForCPU
            case .blocked: blocked
            case .machineStall: machineStall
            case .compositor: compositor
            case .unknown: unknown
            }
        }
        set {
            switch cause {
            case .appWork: appWork = newValue
            case .waitingForAppThreads: waitingForAppThreads = newValue
            case .waitingForCPU: waitingForCPU = newValue
            case .blocked: blocked = newValue
            case .machineStall: machineStall = newValue
            case .compositor: compositor = newValue
            case .unknown: unknown = newValue
            }
        }
    }
}

/// Frame times in fixed bins of `binMs` from 0; the last bin holds everything from its lower edge up.
public struct FrameTimeHistogram: Codable, Sendable, Equatable {
    public static let binNs: Int64 = 250_000
    public static let binCount = 401              // 0-100 ms in quarter milliseconds, then the rest
    public var binMs: Double = Double(FrameTimeHistogram.binNs) / 1e6
    /// Frames per bin; empty when no frame was judged.
    public var counts: [Int] = []
    public init() {}

    public mutating func add(frameTimeNs: Int64) {
        if counts.isEmpty { counts = [Int](repeating: 0, count: Self.binCount) }
        counts[Int(min(max(0, frameTimeNs) / Self.binNs, Int64(Self.binCount - 1)))] += 1
    }
}

public struct Percentiles: Codable, Sendable, Equatable {
    /// Values the percentiles are taken from (`PercentileEvidence` says when that is too few).
    public var count = 0
    public var p50 = 0.0, p90 = 0.0, p95 = 0.0, p99 = 0.0, max = 0.0, mean = 0.0
    /// Bound on the relative error of p50..p99 (0 when computed exactly from every value).
    public var relativeError = 0.0
    public init() {}
}

public struct WorstWindow: Codable, Sendable, Equatable {
    public var run = 0
    public var startMs = 0.0, hitchMs = 0.0, hitchCount = 0
    public init() {}
}

/// One recorded frame, for timelines.
public struct FrameSample: Codable, Sendable, Equatable {
    public static let limit = 20_000
    public var run = 0
    public var frameID: UInt64 = 0
    public var startMs = 0.0, periodMs = 0.0
    public var mainThreadMs = 0.0, renderMs = 0.0, frameTimeMs = 0.0, overrunMs = 0.0, hitchMs = 0.0
    /// "none", "commit", "render" or "latency" (triple-buffered).
    public var kind: FrameKind = .none
    /// Why the frame hitched; nil when it did not.
    public var cause: HitchCause? = nil
    /// The earlier frame (the root) whose hold of the main thread, the render thread or the
    /// display made this one late, and whose cause this one carries; nil when it was late on its own.
    public var queuedBehind: UInt64? = nil
    /// The main thread's begin-to-commit window by state; nil without readings.
    public var mainThreadStates: ThreadStateSplit? = nil
    /// A hitching frame's main-thread late start, its vsync to its begin, by state as the cause counts
    /// it (asleep there is the machine's: a wake-up delivered late); nil when it began on time or
    /// did not hitch. With `mainThreadStates` and the render's split it is what the cause was read from.
    public var mainLateStartStates: ThreadStateSplit? = nil
    /// The part of a hitching frame's shown time not running (main window, late start, render) that
    /// an earlier late frame held: its own cause is read from the rest; nil when none.
    public var heldByEarlierFrames: ThreadStateSplit? = nil
    /// How much later than its pipeline allowed a hitching frame was shown (after its render, and a
    /// vsync after the previous frame's present): its wait for the present vsync woke late, outside
    /// every window the readings split, so the cause counts it as unknown; nil when not later.
    public var latePresentMs: Double? = nil
    /// The platform's own verdict on an imported frame ("janky: App Deadline Missed", "on time"); nil
    /// for frames without one (every recorded trace).
    public var platformVerdict: String? = nil
    public init() {}
}
