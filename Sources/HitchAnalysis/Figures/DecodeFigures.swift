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
