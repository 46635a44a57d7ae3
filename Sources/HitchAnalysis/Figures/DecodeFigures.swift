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
    /// Decode cannot read faster than memory: utilization over this says the probe's peak is low
    /// (it ran while other work held the cores), and the reports say so in words.
    public static let peakTooLowUtilization = 1.05
    public var peakTooLowSentence: String? {
        guard peakBandwidthGBps > 0, utilization > Self.peakTooLowUtilization else { return nil }
        return "decode read faster than the measured peak, so the peak is too low: the bandwidth probe ran "
            + "while other work held the cores, and utilization against it overstates"
    }
    /// The roofline's ridge point: peakGFLOPS / peakBandwidthGBps (FLOPs per byte).
    public var ridgeFlopsPerByte = 0.0
    /// The decode's thread count and the rates measured before the recording.
    public var threads = DecodeThreadFigures()
    public var ops: [OpFigures] = []
    public var memory = MemoryBudget()
    public init() {}
}

/// How many threads decoded, and whether they, not memory, bound it: the rates the LLM workload
/// measures before it records (metadata `decodeThreads`, `decodeTokensPerSecondByThreads`).
public struct DecodeThreadFigures: Codable, Sendable, Equatable {
    /// Threads that decoded (metadata `decodeThreads`; 0 when absent).
    public var count = 0
    /// The most threads measured (every core); 0 when nothing was measured.
    public var cores = 0
    /// Decode rate measured with `count` threads and with `cores` threads.
    public var measuredTokensPerSecond = 0.0, allCoresTokensPerSecond = 0.0
    /// True when every core decoded at least `DecodeThreadFigures.boundRatio` times as fast as
    /// `count` threads: the decode's threads (their arithmetic), not memory, bound it.
    public var boundByThreads = false
    public static let boundRatio = 1.2
    /// Metadata `decodePriority`: the inference threads starved in the background and were raised
    /// to normal priority (or could not be), in words; nil while they stayed in the background.
    public var priorityChange: String?
    public init() {}

    /// From the metadata values ("2", "1:38.2,2:70.9").
    public init(threads: String?, rates: String?) {
        count = threads.flatMap { Int($0) } ?? 0
        var measured: [Int: Double] = [:]
        for pair in (rates ?? "").split(separator: ",") {
            let parts = pair.split(separator: ":")
            if parts.count == 2, let n = Int(parts[0]), let rate = Double(parts[1]), rate.isFinite, rate > 0 { measured[n] = rate }
        }
        guard let most = measured.keys.max(), let mine = measured[count] else { return }
        cores = most
        measuredTokensPerSecond = mine
        allCoresTokensPerSecond = measured[most] ?? 0
        boundByThreads = most > count && allCoresTokensPerSecond >= Self.boundRatio * mine
    }

    /// The finding in words, or nil when the threads did not bound the decode.
    public var sentence: String? {
        guard boundByThreads else { return nil }
        return "bound by its \(count) decode thread\(count == 1 ? "" : "s"), not by memory: all \(cores) cores decoded "
            + String(format: "%.2fx", allCoresTokensPerSecond / measuredTokensPerSecond) + " as fast ("
            + String(format: "%.1f vs %.1f", allCoresTokensPerSecond, measuredTokensPerSecond)
            + " tok/s, measured before recording); the UI keeps a core, so more threads were not taken"
    }
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
