/// Why one hitching frame was late.
public struct HitchAttribution: Codable, Sendable, Equatable {
    public static let limit = 50
    public var run = 0
    public var frameID: UInt64 = 0
    public var startMs = 0.0, hitchMs = 0.0
    /// "commit" or "render".
    public var kind: FrameKind = .commit
    public var mainThreadMs = 0.0, renderMs = 0.0
    /// Stages on the main and render threads overlapping the frame's window, with the overlapping
    /// self time (top 10): the work of producing frames.
    public var stages: [NamedDuration] = []
    /// Stages on other threads overlapping the window (top 5): not part of the frame, but running
    /// beside it and competing for the CPU (background decode, a search off the main actor).
    public var concurrentStages: [NamedDuration] = []
    /// Body evaluations in the window per view type (top 10).
    public var bodies: [NamedDuration] = []
    /// Top main-thread stacks sampled in the window (top 5), innermost frame first.
    public var stacks: [SampledStack] = []
    /// Why the frame was late (docs/METRICS.md "Hitch causes").
    public var cause: HitchCause = .unknown
    /// The root frame this one queued behind (`FrameSample.queuedBehind`); nil when late on its own.
    public var queuedBehind: UInt64? = nil
    /// The app's other threads on the CPU the main or render thread waited for in the frame, with
    /// their time (`count` = 1), most first; empty when none or when the trace cannot tell.
    public var cpuTakenBy: [NamedDuration] = []
    /// The main thread's begin-to-commit window and the render thread's render window by state
    /// (from the readings); nil without readings.
    public var mainThreadStates: ThreadStateSplit? = nil, renderThreadStates: ThreadStateSplit? = nil
    /// The main thread's late start, its vsync to its begin, as the cause counts it (`FrameSample.mainLateStartStates`).
    public var mainLateStartStates: ThreadStateSplit? = nil
    /// The part of those states an earlier late frame held (`FrameSample.heldByEarlierFrames`).
    public var heldByEarlierFrames: ThreadStateSplit? = nil
    /// How much later than its pipeline allowed the frame was shown (`FrameSample.latePresentMs`).
    public var latePresentMs: Double? = nil
    /// The main thread's window from exact context switches, when the trace has them.
    public var mainThreadSwitches: ThreadStateSplit? = nil
    /// Machine counters over the frame (begin to the later of commit and render end); nil without readings.
    public var machine: MachineWindow? = nil
    public init() {}
}

public struct NamedDuration: Codable, Sendable, Equatable {
    public var name = ""
    public var count = 0, ms = 0.0
    public init() {}
}

public struct SampledStack: Codable, Sendable, Equatable {
    /// Function names, innermost first.
    public var frames: [String] = []
    public var samples = 0
    public init() {}
}

public struct Offender: Codable, Sendable, Equatable {
    /// "stage", "view", "function" (the innermost symbol of main-thread samples) or "thread" (one
    /// of the app's threads that held a CPU a frame thread waited for).
    public var kind: OffenderKind = .stage
    public var name = ""
    /// Sum over the hitches the app caused of hitch ms x this offender's on-CPU time in the frame's
    /// window / the window (docs/METRICS.md "Hitch attribution"); `onCPUMs`, its estimated time on a
    /// CPU inside those windows.
    public var weightedHitchMs = 0.0, onCPUMs = 0.0
    /// Distinct hitching frames this offender is in (once per frame, however many samples or stacks).
    public var hitchingFrames = 0
    public init() {}

    /// The published list: the 30 heaviest, ties by kind and name.
    static func ranked(_ offenders: [Offender]) -> [Offender] {
        Array(offenders.sorted { ($0.weightedHitchMs, $1.kind.rawValue, $1.name) > ($1.weightedHitchMs, $0.kind.rawValue, $0.name) }.prefix(30))
    }
}

public struct SampleFigures: Codable, Sendable, Equatable {
    public var mainThreadSamples = 0, samplesInHitches = 0
    /// Folded stacks ("outer;inner count", root first) of every main-thread sample, and of those
    /// inside hitching frames (top 500 each).
    public var folded: [FoldedStack] = [], foldedInHitches: [FoldedStack] = []
    /// Samples inside hitching frames that caught the main thread asleep (innermost frame a blocking
    /// call, `BlockingCalls`): blocked time, never a hot function among the offenders.
    public var samplesAsleepInHitches = 0
    /// Where the main thread slept in hitching frames: the first frame above the blocking call,
    /// weighted like offenders (top 10).
    public var waitingInHitches: [Offender] = []
    public init() {}
}

public struct FoldedStack: Codable, Sendable, Equatable {
    /// Root first, separated by ";".
    public var stack = ""
    public var count = 0
    public init() {}
}
