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
    public var recorded: HitchFigures = HitchFigures()
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
    public var framesTruncated: Bool = false
    /// Hitch's verdicts beside the platform's, for imported traces that carry them; nil otherwise.
    public var platformAgreement: PlatformAgreement? = nil

    /// Pipeline stages (every duration event), sorted by total time, longest first.
    public var stages: [StageFigures] = []
    /// View body evaluations per view type, sorted by total time.
    public var views: [ViewFigures] = []
    /// Layout passes.
    public var layout: LayoutFigures = LayoutFigures()
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
    public var samples: SampleFigures = SampleFigures()

    /// LLM decode bandwidth; nil when the trace has no inference ops.
    public var decode: DecodeFigures? = nil
    /// Token delivery (produced vs shown vs dropped); nil when the trace has no token events.
    public var tokens: TokenFigures? = nil

    /// The refresh rates analyzed (Hz), in the order asked for.
    public var refreshRatesHz: [Double] = []
    /// What the scheduler did to the threads that make frames (docs/METRICS.md "Thread states");
    /// nil when the trace has no thread-state records (older traces, Chrome imports).
    public var threadStates: ThreadStateFigures? = nil
    /// Warnings from the analysis (unmatched interval ends, frames without commit...).
    public var warnings: [String] = []
    /// What the figures stand on: frames judged, seconds animated, events, whether every file
    /// ended on a whole record (docs/METRICS.md "Evidence").
    public var evidence: Evidence = Evidence()

    public init() {}
}

/// How much an analysis stands on. `check`, `diff` and `history add` refuse to judge a trace
/// without frames or cut short (`EvidenceRule`), unless the user opts in.
public struct Evidence: Codable, Sendable, Equatable {
    /// Frames judged at their recorded rates (`recorded.frameCount`).
    public var framesJudged: Int = 0
    /// Seconds of animation the hitch time ratio divides by (`recorded.animatingSeconds`).
    public var animatingSeconds: Double = 0
    /// Events read, over all runs.
    public var eventCount: UInt64 = 0
    /// Runs whose file ends inside a record (the writer was killed, or the file was cut).
    public var runsCutShort: Int = 0
    /// True when every run's file ended on a whole record.
    public var endedCleanly: Bool = true
    /// Fewer frames than `HitchGrading.fewFramesBelow`: the grades are marked as from a small sample.
    public var fewFrames: Bool = true
    public init() {}
}

public struct RunSummary: Codable, Sendable, Equatable {
    public var path: String = ""
    public var eventCount: UInt64 = 0
    public var droppedEvents: UInt64 = 0
    public var durationMs: Double = 0
    public var frameCount: Int = 0
    /// False when the file ends inside a record; `cutShortAtByte` is that record's offset.
    public var endedCleanly: Bool = true
    public var cutShortAtByte: UInt64? = nil
    public init() {}
}

public struct RecordedRate: Codable, Sendable, Equatable {
    public var rateHz: Double = 0
    public var frameCount: Int = 0
    public init() {}
}

public struct RefreshRateChange: Codable, Sendable, Equatable {
    public var run: Int = 0
    public var atMs: Double = 0
    public var fromHz: Double = 0
    public var toHz: Double = 0
    public init() {}
}

/// The grade of a hitch time ratio on one named scale.
public struct HitchVerdict: Codable, Sendable, Equatable {
    /// "good", "warning" or "critical" (Apple test scale); "good", "fair", "poor", "critical" (Organizer scale).
    public var grade: HitchGrade = .ungraded
    /// The scale's name, so a reader knows which thresholds applied.
    public var scale: String = ""
    public init() {}
}

/// Hitch figures for one refresh rate (or for the recorded frames).
public struct HitchFigures: Codable, Sendable, Equatable {
    /// "recorded" (judged from the recorded frames) or "replay" (the replay model at `rateHz`).
    public var source: HitchSource = .recorded
    /// The refresh rate judged at; 0 for the recorded figures when the trace mixes rates.
    public var rateHz: Double = 0
    public var periodMs: Double = 0
    public var frameCount: Int = 0
    public var hitchCount: Int = 0
    public var totalHitchMs: Double = 0
    public var longestHitchMs: Double = 0
    /// Total hitch ms per second of animating time.
    public var hitchTimeRatioMsPerS: Double = 0
    public var animatingSeconds: Double = 0
    /// "interactions" (union of interaction intervals) or "frames" (first frame start to last present).
    public var animatingTimeSource: AnimatingTimeSource = .frames
    /// Apple's test scale grade (good < 5, warning 5-10, critical >= 10 ms/s); `ungraded` without frames.
    public var verdict: HitchGrade = .ungraded
    /// Fewer judged frames than `HitchGrading.fewFramesBelow`: the grade stands on a small sample.
    public var fewFrames: Bool = true
    /// Both grades with their scales named.
    public var appleTestScale: HitchVerdict = HitchVerdict()
    public var organizerScale: HitchVerdict = HitchVerdict()
    /// Hitches whose commit missed its deadline vs those committed in time but rendered late.
    public var commitHitchCount: Int = 0
    public var commitHitchMs: Double = 0
    public var renderHitchCount: Int = 0
    public var renderHitchMs: Double = 0
    /// Frames in a steady triple-buffered state: one period of added latency, not a hitch.
    public var tripleBufferedFrames: Int = 0
    public var addedLatencyMs: Double = 0
    /// Frame time = main-thread work (frame start to commit) + render duration.
    public var frameTimeMs: Percentiles = Percentiles()
    /// Overrun = actual present - expected present (negative = early).
    public var overrunMs: Percentiles = Percentiles()
    /// Every judged frame's frame time, binned (not only the `frames[]` samples).
    public var frameTimeHistogram: FrameTimeHistogram = FrameTimeHistogram()
    /// Frames whose frame time exceeds one period.
    public var slowFrames: Int = 0
    /// Frames whose frame time exceeds 700 ms.
    public var frozenFrames: Int = 0
    /// The one-second window with the most hitch time.
    public var worstWindow: WorstWindow = WorstWindow()
    /// Frames recorded without a commit (not judged).
    public var unjudgedFrames: Int = 0
    /// Hitch time split by cause (docs/METRICS.md "Hitch causes"): each hitch counts whole under
    /// one cause, so the five parts sum to the totals above.
    public var byCause: HitchCauseFigures = HitchCauseFigures()
    /// `byCause.appWork.hitchTimeRatioMsPerS`: the hitch time the app's own work caused, the figure
    /// a CI gate holds the app to. Absent (null) when no frame carried thread-state readings, so a
    /// budget on it never passes a trace that cannot tell.
    public var appHitchTimeRatioMsPerS: Double? = nil
    /// Judged frames whose main thread had thread-state readings (the rest are `unknown` if they hitch).
    public var framesWithThreadStates: Int = 0
    public init() {}
}

/// One cause's share of the hitches at one rate.
public struct CauseFigures: Codable, Sendable, Equatable {
    public var hitchCount: Int = 0
    public var totalHitchMs: Double = 0
    /// This cause's hitch ms per second of animating time (the same denominator as the total).
    public var hitchTimeRatioMsPerS: Double = 0
    public init() {}
}

/// Hitches by cause, one field per `HitchCause`.
public struct HitchCauseFigures: Codable, Sendable, Equatable {
    public var appWork: CauseFigures = CauseFigures()
    public var waitingForCPU: CauseFigures = CauseFigures()
    public var blocked: CauseFigures = CauseFigures()
    public var machineStall: CauseFigures = CauseFigures()
    public var unknown: CauseFigures = CauseFigures()
    public init() {}

    public subscript(cause: HitchCause) -> CauseFigures {
        get {
            switch cause {
            case .appWork: appWork
            case .waitingForCPU: waitingForCPU
            case .blocked: blocked
            case .machineStall: machineStall
            case .unknown: unknown
            }
        }
        set {
            switch cause {
            case .appWork: appWork = newValue
            case .waitingForCPU: waitingForCPU = newValue
            case .blocked: blocked = newValue
            case .machineStall: machineStall = newValue
            case .unknown: unknown = newValue
            }
        }
    }
}

/// Where one thread's time in a window went (docs/METRICS.md "Thread states"); the parts sum to
/// the window's wall time.
public struct ThreadStateSplit: Codable, Sendable, Equatable {
    /// On a CPU (the thread's CPU clock).
    public var runningMs: Double = 0
    /// Runnable, waiting for a CPU (schedstat run delay, or preempted switch-out to switch-in).
    public var runnableMs: Double = 0
    /// Asleep: a lock, I/O, a wait on another thread (voluntary switches, or a not-preempted switch-out).
    public var blockedMs: Double = 0
    /// Neither running, waiting nor asleep by the thread's own counters: the machine took the CPU
    /// (steal in a VM with steal accounting).
    public var machineMs: Double = 0
    /// Not told apart (a counter unavailable on this machine).
    public var unknownMs: Double = 0
    public init() {}
}

/// Machine-wide counters over a window (deltas of the `machineState` readings, prorated to the window).
public struct MachineWindow: Codable, Sendable, Equatable {
    /// Steal time summed over CPUs, divided by the online CPUs: the average CPU's stolen time.
    public var stealMs: Double = 0
    /// /proc/pressure/cpu "some": time at least one runnable task waited for a CPU.
    public var cpuPressureSomeMs: Double = 0
    /// cgroup CPU throttling, divided by the online CPUs.
    public var cgroupThrottledMs: Double = 0
    public init() {}
}

/// The trace's thread states as a whole (docs/METRICS.md "Thread states").
public struct ThreadStateFigures: Codable, Sendable, Equatable {
    /// Where the thread states came from (metadata `schedSource`); `none` when unsaid.
    public var source: ThreadStateSource = .none
    /// Why perf was refused or reads were unavailable (metadata `schedSourceReason`).
    public var sourceReason: String = ""
    /// Recorded frames whose main thread had readings at begin and commit, and those without.
    public var framesWithReadings: Int = 0
    public var framesWithoutReadings: Int = 0
    /// Exact context switches recorded (perf_event_open).
    public var contextSwitches: Int = 0
    /// The main thread's frame windows (begin to commit), summed over every recorded frame with readings.
    public var mainThread: ThreadStateSplit = ThreadStateSplit()
    /// ... over the hitching recorded frames only.
    public var mainThreadInHitches: ThreadStateSplit = ThreadStateSplit()
    /// The render thread's render windows of the hitching recorded frames.
    public var renderThreadInHitches: ThreadStateSplit = ThreadStateSplit()
    /// Machine counters over the whole recording (first to last reading), and over the hitching frames.
    public var machine: MachineWindow = MachineWindow()
    public var machineInHitches: MachineWindow = MachineWindow()
    public init() {}
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
    public var count: Int = 0
    public var p50: Double = 0
    public var p90: Double = 0
    public var p95: Double = 0
    public var p99: Double = 0
    public var max: Double = 0
    public var mean: Double = 0
    /// Bound on the relative error of p50..p99 (0 when computed exactly from every value).
    public var relativeError: Double = 0
    public init() {}
}

public struct WorstWindow: Codable, Sendable, Equatable {
    public var run: Int = 0
    public var startMs: Double = 0
    public var hitchMs: Double = 0
    public var hitchCount: Int = 0
    public init() {}
}

/// One recorded frame, for timelines.
public struct FrameSample: Codable, Sendable, Equatable {
    public static let limit = 20_000
    public var run: Int = 0
    public var frameID: UInt64 = 0
    public var startMs: Double = 0
    public var periodMs: Double = 0
    public var mainThreadMs: Double = 0
    public var renderMs: Double = 0
    public var frameTimeMs: Double = 0
    public var overrunMs: Double = 0
    public var hitchMs: Double = 0
    /// "none", "commit", "render" or "latency" (triple-buffered).
    public var kind: FrameKind = .none
    /// Why the frame hitched; nil when it did not.
    public var cause: HitchCause? = nil
    /// The main thread's begin-to-commit window by state; nil without readings.
    public var mainThreadStates: ThreadStateSplit? = nil
    /// The platform's own verdict on an imported frame ("janky: App Deadline Missed", "on time"); nil
    /// for frames without one (every recorded trace).
    public var platformVerdict: String? = nil
    public init() {}
}

public struct StageFigures: Codable, Sendable, Equatable {
    public var name: String = ""
    public var count: Int = 0
    public var totalMs: Double = 0
    /// Total minus the time of stages nested inside it on the same thread.
    public var selfMs: Double = 0
    public var meanMs: Double = 0
    public var p50Ms: Double = 0
    public var p95Ms: Double = 0
    public var p99Ms: Double = 0
    public var maxMs: Double = 0
    public var threads: [String] = []
    /// This stage's self time on the main thread / all stages' self time on the main thread.
    public var mainThreadShare: Double = 0
    /// This stage's time on the main thread / its total time.
    public var onMainThreadFraction: Double = 0
    /// This stage's time on the main thread (what delays frames; `hitch diff` judges it per frame).
    public var mainThreadMs: Double = 0
    /// Self time that fell inside hitching frames' windows.
    public var inHitchingFramesMs: Double = 0
    public init() {}
}

public struct ViewFigures: Codable, Sendable, Equatable {
    public var type: String = ""
    public var bodyEvaluations: Int = 0
    public var totalMs: Double = 0
    public var maxMs: Double = 0
    /// Evaluations longer than 500 us (Instruments' orange).
    public var longUpdates: Int = 0
    /// Evaluations longer than 1 ms (Instruments' red).
    public var longUpdatesOver1ms: Int = 0
    /// Evaluations / recorded frames.
    public var evaluationsPerFrame: Double = 0
    public init() {}
}

public struct LayoutFigures: Codable, Sendable, Equatable {
    public var passes: Int = 0
    public var totalMs: Double = 0
    public var maxMs: Double = 0
    public var viewsLaidOut: UInt64 = 0
    public init() {}
}

public struct InvalidationEdge: Codable, Sendable, Equatable {
    /// The written property (from the event), e.g. `FeedModel.query`.
    public var source: String = ""
    /// The invalidated view type.
    public var target: String = ""
    public var count: Int = 0
    /// The writer's function from its backtrace (first frame outside the recorder and Observation), if any.
    public var writer: String? = nil
    public init() {}
}

public struct InvalidationSource: Codable, Sendable, Equatable {
    public var source: String = ""
    public var invalidations: Int = 0
    /// Distinct target view types.
    public var targetTypes: Int = 0
    public init() {}
}

/// Why one hitching frame was late.
public struct HitchAttribution: Codable, Sendable, Equatable {
    public static let limit = 50
    public var run: Int = 0
    public var frameID: UInt64 = 0
    public var startMs: Double = 0
    public var hitchMs: Double = 0
    /// "commit" or "render".
    public var kind: FrameKind = .commit
    public var mainThreadMs: Double = 0
    public var renderMs: Double = 0
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
    /// The main thread's begin-to-commit window and the render thread's render window by state
    /// (from the readings); nil without readings.
    public var mainThreadStates: ThreadStateSplit? = nil
    public var renderThreadStates: ThreadStateSplit? = nil
    /// The main thread's window from exact context switches, when the trace has them.
    public var mainThreadSwitches: ThreadStateSplit? = nil
    /// Machine counters over the frame (begin to the later of commit and render end); nil without readings.
    public var machine: MachineWindow? = nil
    public init() {}
}

public struct NamedDuration: Codable, Sendable, Equatable {
    public var name: String = ""
    public var count: Int = 0
    public var ms: Double = 0
    public init() {}
}

public struct SampledStack: Codable, Sendable, Equatable {
    /// Function names, innermost first.
    public var frames: [String] = []
    public var samples: Int = 0
    public init() {}
}

public struct Offender: Codable, Sendable, Equatable {
    /// "stage", "view" or "function" (the innermost symbol of main-thread samples).
    public var kind: OffenderKind = .stage
    public var name: String = ""
    /// Sum over hitching frames of hitch ms x this offender's share of the frame's window.
    public var weightedHitchMs: Double = 0
    /// Distinct hitching frames this offender is in (once per frame, however many samples or stacks).
    public var hitchingFrames: Int = 0
    public init() {}
}

public struct SampleFigures: Codable, Sendable, Equatable {
    public var mainThreadSamples: Int = 0
    public var samplesInHitches: Int = 0
    /// Folded stacks ("outer;inner count", root first) of every main-thread sample (top 500).
    public var folded: [FoldedStack] = []
    /// Folded stacks of main-thread samples inside hitching frames (top 500).
    public var foldedInHitches: [FoldedStack] = []
    /// Samples inside hitching frames that caught the main thread asleep (innermost frame a blocking
    /// call, `BlockingCalls`): blocked time, never a hot function among the offenders.
    public var samplesAsleepInHitches: Int = 0
    /// Where the main thread slept in hitching frames: the first frame above the blocking call,
    /// weighted like offenders (top 10).
    public var waitingInHitches: [Offender] = []
    public init() {}
}

public struct FoldedStack: Codable, Sendable, Equatable {
    /// Root first, separated by ";".
    public var stack: String = ""
    public var count: Int = 0
    public init() {}
}

/// LLM decode figures.
public struct DecodeFigures: Codable, Sendable, Equatable {
    /// Tokens generated (decode steps, including the first).
    public var tokens: Int = 0
    public var promptTokens: Int = 0
    public var timeToFirstTokenMs: Double = 0
    public var prefillTokensPerSecond: Double = 0
    /// Steady-state decode rate after the first token: the median step.
    public var tokensPerSecond: Double = 0
    /// The fastest decode step.
    public var bestTokensPerSecond: Double = 0
    public var msPerToken: Double = 0
    /// Bytes moved per decode token (read + written), split by what they are.
    public var bytesPerToken: Double = 0
    public var weightBytesPerToken: Double = 0
    public var kvCacheBytesPerToken: Double = 0
    public var otherBytesPerToken: Double = 0
    public var flopsPerToken: Double = 0
    /// bytesPerToken / seconds per token (median step).
    public var bandwidthGBps: Double = 0
    /// From metadata `peakBandwidthGBps`; 0 when absent.
    public var peakBandwidthGBps: Double = 0
    /// True when the trace says the bandwidth probe's arrays were below 4x the last-level cache
    /// (metadata `bandwidthProbeMeetsCacheRule` false): the peak may be a cache figure, and every
    /// report says so beside it.
    public var peakBandwidthMayBeCacheBound: Bool = false
    /// From metadata `peakGFLOPS`; 0 when absent.
    public var peakGFLOPS: Double = 0
    /// bandwidthGBps / peakBandwidthGBps (0 when no peak was recorded).
    public var utilization: Double = 0
    /// True when utilization < 0.3 (and a peak was recorded).
    public var notBandwidthBound: Bool = false
    /// The roofline's ridge point: peakGFLOPS / peakBandwidthGBps (FLOPs per byte).
    public var ridgeFlopsPerByte: Double = 0
    public var ops: [OpFigures] = []
    public var memory: MemoryBudget = MemoryBudget()
    public init() {}
}

public struct OpFigures: Codable, Sendable, Equatable {
    public var name: String = ""
    public var computeUnit: String = ""
    public var count: Int = 0
    public var totalMs: Double = 0
    /// This op's time / all ops' time.
    public var timeShare: Double = 0
    public var bytes: UInt64 = 0
    public var flops: UInt64 = 0
    public var bandwidthGBps: Double = 0
    public var gflops: Double = 0
    public var flopsPerByte: Double = 0
    /// "bandwidth" or "compute" (intensity below or above the ridge point); "unknown" without peaks.
    public var bound: OpBound = .unknown
    /// Achieved / roofline-attainable performance at this op's intensity.
    public var rooflineEfficiency: Double = 0
    public init() {}
}

public struct MemoryBudget: Codable, Sendable, Equatable {
    public var weightsBytes: UInt64 = 0
    public var kvCacheBytes: UInt64 = 0
    /// True when the trace had no `weightsBytes` / `kvCacheBytes` metadata and the figure is
    /// estimated from the largest decode token's op bytes (every report labels it "estimated").
    public var weightsBytesEstimated: Bool = false
    public var kvCacheBytesEstimated: Bool = false
    public var peakResidentBytes: UInt64 = 0
    /// weights + KV cache + peak resident (as the issue defines the budget).
    public var totalBytes: UInt64 = 0
    public var deviceBudgetBytes: UInt64 = 0
    public var withinBudget: Bool = true
    public init() {}
}

public struct TokenFigures: Codable, Sendable, Equatable {
    public var produced: Int = 0
    public var delivered: Int = 0
    public var shown: Int = 0
    public var dropped: Int = 0
    /// Produced but neither shown nor reported dropped by the end of the trace.
    public var lost: Int = 0
    /// Token produced -> shown on a committed frame.
    public var tokenToScreenMs: Percentiles = Percentiles()
    /// P95 token-to-screen latency in frames at the dominant recorded period.
    public var tokenToScreenP95Frames: Double = 0
    public init() {}
}
