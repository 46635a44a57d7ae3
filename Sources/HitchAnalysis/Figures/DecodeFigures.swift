/// LLM decode figures.
public struct DecodeFigures: Codable, Sendable, Equatable {
    /// Tokens generated (decode steps, including the first).
    public var tokens = 0, promptTokens = 0
    public var timeToFirstTokenMs = 0.0, prefillTokensPerSecond = 0.0
    /// Steady-state decode rate after the first token: the median step.
    public var tokensPerSecond = 0.0
    /// The fastest decode step.
    public var bestTokensPerSecond = 0.0
    public var msPerToken = 0.0
    /// Bytes moved per decode token (read + written), split by what they are.
    public var bytesPerToken = 0.0, weightBytesPerToken = 0.0, kvCacheBytesPerToken = 0.0, otherBytesPerToken = 0.0
    public var flopsPerToken = 0.0
    /// bytesPerToken / seconds per token (median step).
    public var bandwidthGBps = 0.0
    /// From metadata `peakBandwidthGBps`; 0 when absent.
    public var peakBandwidthGBps = 0.0
    /// True when the trace says the bandwidth probe's arrays were below 4x the last-level cache
    /// (metadata `bandwidthProbeMeetsCacheRule` false): the peak may be a cache figure, and every
    /// report says so beside it.
    public var peakBandwidthMayBeCacheBound = false
    /// From metadata `peakGFLOPS`; 0 when absent.
    public var peakGFLOPS = 0.0
    /// bandwidthGBps / peakBandwidthGBps (0 when no peak was recorded).
    public var utilization = 0.0
    /// True when utilization < 0.3 (and a peak was recorded).
    public var notBandwidthBound = false
    /// The roofline's ridge point: peakGFLOPS / peakBandwidthGBps (FLOPs per byte).
    public var ridgeFlopsPerByte = 0.0
    public var ops: [OpFigures] = []
    public var memory = MemoryBudget()
    public init() {}
}

public struct OpFigures: Codable, Sendable, Equatable {
    public var name = "", computeUnit = ""
    public var count = 0, totalMs = 0.0
    /// This op's time / all ops' time.
    public var timeShare = 0.0
    public var bytes: UInt64 = 0, flops: UInt64 = 0
    public var bandwidthGBps = 0.0, gflops = 0.0, flopsPerByte = 0.0
    /// "bandwidth" or "compute" (intensity below or above the ridge point); "unknown" without peaks.
    public var bound: OpBound = .unknown
    /// Achieved / roofline-attainable performance at this op's intensity.
    public var rooflineEfficiency = 0.0
    public init() {}
}

public struct MemoryBudget: Codable, Sendable, Equatable {
    public var weightsBytes: UInt64 = 0, kvCacheBytes: UInt64 = 0
    /// True when the trace had no `weightsBytes` / `kvCacheBytes` metadata and the figure is
    /// estimated from the largest decode token's op bytes (every report labels it "estimated").
    public var weightsBytesEstimated = false, kvCacheBytesEstimated = false
    public var peakResidentBytes: UInt64 = 0
    /// weights + KV cache + peak resident: the memory the model needs on the device.
    public var totalBytes: UInt64 = 0
    public var deviceBudgetBytes: UInt64 = 0
    public var withinBudget = true
    public init() {}
}

public struct TokenFigures: Codable, Sendable, Equatable {
    public var produced = 0, delivered = 0, shown = 0, dropped = 0
    /// Produced but neither shown nor reported dropped by the end of the trace.
    public var lost = 0
    /// Token produced -> shown on a committed frame.
    public var tokenToScreenMs = Percentiles()
    /// P95 token-to-screen latency in frames at the dominant recorded period.
    public var tokenToScreenP95Frames = 0.0
    public init() {}
}
