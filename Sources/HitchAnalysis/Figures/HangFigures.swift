/// Stretches in which the main thread did not get back to its frame loop or run loop
/// (docs/METRICS.md "Hangs"): hangs (at least `hangThresholdMs`) and, in a tier of their own,
/// brief unresponsiveness (at least `briefThresholdMs`, shorter than a hang). The top-level counts
/// are the hangs'; `brief` holds the lower tier's.
public struct HangFigures: Codable, Sendable, Equatable {
    /// The thresholds the analysis applied (`--hang-ms`, `--brief-hang-ms`).
    public var hangThresholdMs = AnalyzerOptions.defaultHangThresholdMs
    public var briefThresholdMs = AnalyzerOptions.defaultBriefHangThresholdMs
    /// What the rates divide by: every run's first event to its last, summed.
    public var recordedSeconds = 0.0
    /// Hangs: how many, their time, the longest, and seconds of hang per hour of recording (Xcode
    /// Organizer's hang rate).
    public var count = 0
    public var totalMs = 0.0
    public var longestMs = 0.0
    public var rateSecondsPerHour = 0.0
    /// The same for brief unresponsiveness.
    public var brief = HangTierFigures()
    /// The recorder's watchdog threshold (metadata `hangWatchdogMs`), when it watched the main
    /// thread: stretches that long have its captures.
    public var watchdogThresholdMs: Double? = nil
    /// Hangs as their producer named them (an import's `type`: Instruments' `Hang`, `Brief
    /// Unresponsiveness`, `Potential Interaction Delay`, `Hang Risk: <severity>`; Android's `ANR`, a long slice's name):
    /// per source and type, every `hang` event counted as written, before the tiers above and before
    /// overlapping stretches are merged, as the platform's own tool counts them. Absent when no hang
    /// event names a type (the watchdog's do not).
    public var byType: [HangTypeFigures]? = nil
    /// Every stretch of either tier, in time order over the runs (the first `HangDetail.limit`).
    public var list: [HangDetail] = []
    /// True when `list` stopped at its limit (the counts above cover every stretch).
    public var listTruncated = false
    public init() {}
}

/// One tier's count, time, longest and rate.
public struct HangTierFigures: Codable, Sendable, Equatable {
    public var count = 0
    public var totalMs = 0.0
    public var longestMs = 0.0
    public var rateSecondsPerHour = 0.0
    public init() {}
}

/// The hangs one producer gave one name (`HangFigures.byType`): how many, their time and the longest.
public struct HangTypeFigures: Codable, Sendable, Equatable {
    /// Who found them (`instruments`, `perfetto`, ...) and what it called them, unchanged.
    public var source = ""
    public var type = ""
    public var count = 0
    public var totalMs = 0.0
    public var longestMs = 0.0
    public init(source: String = "", type: String = "", count: Int = 0, totalMs: Double = 0, longestMs: Double = 0) {
        self.source = source; self.type = type; self.count = count; self.totalMs = totalMs; self.longestMs = longestMs
    }
}

/// One stretch away from the loop: when, how long, what the thread did and what held it.
public struct HangDetail: Codable, Sendable, Equatable {
    public static let limit = 200
    public var run = 0
    /// From the run's first event.
    public var startMs = 0.0
    public var durationMs = 0.0
    public var tier: HangTier = .hang
    /// The thread that hung (the main thread, as the trace names it).
    public var thread = ""
    /// What found it: `frameLoop` (a frame's main-thread work), `watchdog`, or the platform an import
    /// names (docs/FORMAT.md "Hangs"), each once.
    public var sources: [String] = []
    /// The producer's own word for it (an import's, such as Instruments' `Brief Unresponsiveness`).
    public var type: String? = nil
    /// The frame whose main-thread work it was, when it was one frame's.
    public var frameID: UInt64? = nil
    /// The recording ended before the thread came back (the app was killed during it): the duration
    /// runs to the run's last event, and the hang lasted at least that long.
    public var unfinished = false
    /// The largest part of the thread's time: running (`appWork`), waiting for a CPU (behind the
    /// app's own threads: `waitingForAppThreads`), asleep (`blocked`), taken by the machine
    /// (`machineStall`), or `unknown` (docs/METRICS.md "Hangs").
    public var cause: HitchCause = .unknown
    /// The thread's time by state over the hang, from its thread-state readings; absent without them.
    public var states: ThreadStateSplit? = nil
    /// What it waited on while asleep, and the function that waited (the first frame above the
    /// blocking call), from the watchdog's captures and sampled stacks.
    public var blockedOn: HangWait? = nil
    public var blockedIn: String? = nil
    /// The app's thread that woke it from its longest sleep in the hang (for a lock, the holder
    /// that released it), from the threads' context switches.
    public var wokenBy: String? = nil
    /// The stack seen most often during it (sampled, or captured by the watchdog), innermost first,
    /// with how many of the `stacks` seen it was.
    public var stack: [String] = []
    public var stackCount = 0
    public var stacks = 0
    /// The trace it is in: set in summaries and fleet figures (`hitch summarize`, `hitch merge`), whose
    /// lists are the longest stretches of many traces.
    public var trace: String? = nil
    public init() {}
}
