// The analyzer's one result value. Every renderer (text, JSON, markdown, JUnit, HTML) reads this and
// computes nothing; every figure is defined once, in docs/METRICS.md and in the pass that fills it.
// Times that cross this boundary are milliseconds (`...Ms`) relative to the start of their run.

/// Everything `hitch analyze` found in one or more traces (several traces = several runs merged).
public struct Analysis: Codable, Sendable, Equatable {
    /// The analyzer's schema version; bumped when a JSON key changes meaning.
    public var schemaVersion: Int = 1
    /// One entry per input trace, in the order given.
    public var runs: [RunSummary] = []
    /// Metadata of the first run (host, cpu, refreshRateHz, peakBandwidthGBps, workload...).
    public var metadata: [String: String] = [:]
    /// Events the recorder dropped (counted in the trace), summed over runs.
    public var droppedEvents: UInt64 = 0
    /// Events read, summed over runs.
    public var eventCount: UInt64 = 0

    /// Frames judged at the rates they were recorded at (each frame on its own period).
    public var recorded = HitchFigures()
    /// Refresh rates (Hz) the frames were recorded at, with frame counts; more than one = the rate changed.
    public var recordedRates: [RecordedRate] = []
    /// Where the refresh period changed between consecutive frames (first 100).
    public var refreshRateChanges: [RefreshRateChange] = []
    /// Figures per refresh rate, keyed by the rate in Hz as a string ("60", "120"). A rate every frame
    /// was recorded at uses the recorded frames (`source` "recorded"); any other rate is the replay model.
    public var hitches: [String: HitchFigures] = [:]
    /// Per recorded frame, for timelines (first `FrameSample.limit` frames over all runs).
    public var frames: [FrameSample] = []
    /// True when `frames` stopped at its limit.
    public var framesTruncated = false
    /// Hitch's verdicts beside the platform's, for imported traces that carry them; nil otherwise.
    public var platformAgreement: PlatformAgreement? = nil

    /// Pipeline stages (every duration event), sorted by total time, longest first.
    public var stages: [StageFigures] = []
    /// View body evaluations per view type, sorted by total time.
    public var views: [ViewFigures] = []
    /// Layout passes.
    public var layout = LayoutFigures()
    /// Views torn down and rebuilt per update, and likely unstable identities; nil when the trace
    /// has no view lifetime events.
    public var identityChurn: IdentityChurnFigures? = nil
    /// Invalidation edges source -> target, sorted by count.
    public var invalidations: [InvalidationEdge] = []
    /// Sources ranked by how many invalidations they caused (widest fan-out first; top 20).
    public var invalidationSources: [InvalidationSource] = []

    /// The hitching frames with the most hitch time (top `HitchAttribution.limit`), worst first.
    public var hitchAttributions: [HitchAttribution] = []
    /// What was on the main thread during hitches, weighted by hitch time (top 30).
    public var offenders: [Offender] = []
    /// Main-thread samples, as folded stacks (all samples and those inside hitching frames).
    public var samples = SampleFigures()

    /// LLM decode bandwidth; nil when the trace has no inference ops.
    public var decode: DecodeFigures? = nil
    /// Token delivery (produced vs shown vs dropped); nil when the trace has no token events.
    public var tokens: TokenFigures? = nil

    /// The refresh rates analyzed (Hz), in the order asked for.
    public var refreshRatesHz: [Double] = []
    /// Why `hitches` has no replayed rates although others were asked for: a run's frames carry no
    /// work times (metadata `frameWorkTimes` `none`), so only the recorded rate is judged; nil otherwise.
    public var replayUnavailable: String? = nil
    /// What the scheduler did to the threads that make frames (docs/METRICS.md "Thread states");
    /// nil when the trace has no thread-state records (older traces, Chrome imports).
    public var threadStates: ThreadStateFigures? = nil
    /// Warnings from the analysis (unmatched interval ends, frames without commit...).
    public var warnings: [String] = []
    /// What the figures stand on: frames judged, seconds animated, events, whether every file
    /// ended on a whole record (docs/METRICS.md "Evidence").
    public var evidence = Evidence()
    /// What a report says first: the recorded verdict, the leading cause, the heaviest offenders and
    /// the widest invalidation (docs/METRICS.md "Headline"); nil without frames.
    public var headline: Headline? = nil

    public init() {}
}

public struct RunSummary: Codable, Sendable, Equatable {
    public var path = ""
    public var eventCount: UInt64 = 0, droppedEvents: UInt64 = 0
    public var durationMs = 0.0
    public var frameCount = 0
    /// False when the file ends inside a record; `cutShortAtByte` is that record's offset.
    public var endedCleanly = true
    public var cutShortAtByte: UInt64? = nil
    /// Whether the run ends with the end-of-recording marker its recorder promised (docs/METRICS.md
    /// "Evidence"): `missing` means the process was killed or crashed while recording.
    public var endMarker: EndMarker = .notPromised
    /// How the recording ended, from the marker (`stop`, `exit`, `SIGTERM`, …); nil without one.
    public var endedBy: String? = nil
    public init() {}

    /// Cut short: the file ends inside a record, or the promised end-of-recording marker is missing.
    public var isCutShort: Bool { !endedCleanly || endMarker == .missing }
}

public struct RecordedRate: Codable, Sendable, Equatable {
    public var rateHz = 0.0
    public var frameCount = 0
    public init() {}
}

public struct RefreshRateChange: Codable, Sendable, Equatable {
    public var run = 0, atMs = 0.0
    public var fromHz = 0.0, toHz = 0.0
    public init() {}
}
