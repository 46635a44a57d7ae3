import HitchTrace

/// Metadata keys and well-known names the analyzer reads (docs/METRICS.md "Trace inputs").
public enum MetadataKey {
    public static let peakBandwidthGBps = "peakBandwidthGBps"
    public static let peakGFLOPS = "peakGFLOPS"
    public static let promptTokens = "promptTokens"
    public static let weightsBytes = "weightsBytes"
    public static let kvCacheBytes = "kvCacheBytes"
    /// "false" when the bandwidth probe's arrays were below 4x the last-level cache.
    public static let bandwidthProbeMeetsCacheRule = "bandwidthProbeMeetsCacheRule"
    /// The counter whose maximum is the peak resident memory.
    public static let residentBytesCounter = ProcessMemory.residentCounterName.string
    /// Instants in this category are input arrivals (keystrokes, scroll deltas) for the replay.
    public static let inputCategory = "input"
    /// A thread with this name renders frames (as does any thread that ends or presents one).
    public static let renderThreadName = HitchTrace.ThreadRole.render.rawValue
    /// The thread with this name is the main thread.
    public static let mainThreadName = HitchTrace.ThreadRole.main.rawValue
    /// Where the thread states came from: `perf-context-switch`, `procfs` or `none` (`ThreadStateSource`).
    public static let schedSource = "schedSource"
    /// Why perf was refused, or why the reads are unavailable.
    public static let schedSourceReason = "schedSourceReason"
    /// Which threads' context switches the trace has: `everyRecordingThread` when every thread that
    /// recorded events had a switch ring (the recorder's, docs/FORMAT.md "Thread states").
    public static let schedSwitchThreads = "schedSwitchThreads"
    public static let everyRecordingThread = "recording"
}

public struct AnalyzerOptions: Sendable, Equatable {
    /// Refresh rates to judge/replay at (Hz), in the order they are reported.
    public var refreshRatesHz: [Double]
    /// The device memory budget the LLM memory figures are compared with.
    public var deviceBudgetBytes: UInt64
    /// Sampled functions keep their full demangled names (default: simplified, `Symbol.displayName`).
    public var fullSymbolNames: Bool
    public init(refreshRatesHz: [Double] = [60, 120], deviceBudgetBytes: UInt64 = 1_200_000_000, fullSymbolNames: Bool = false) {
        self.refreshRatesHz = refreshRatesHz
        self.deviceBudgetBytes = deviceBudgetBytes
        self.fullSymbolNames = fullSymbolNames
    }
}
