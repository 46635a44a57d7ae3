import HitchTrace

/// The additive state behind `DecodeFigures`: tokens, bytes and FLOPs per decode token in integers,
/// the decode steps' sketch and each op's totals. `figures` derives the decode figures from it,
/// for one trace and for a fleet alike; two totals merge exactly (`merge`).
struct DecodeTotals: Codable, Sendable, Equatable {
    /// Inference ops read.
    var opCount = 0
    /// Tokens generated (decode steps, the first included).
    var tokens = 0
    var prefillTokens = 0
    var prefillNs: Int64 = 0
    /// Time to the first token, summed over the runs that had one, and how many did.
    var timeToFirstTokenSumNs: Int64 = 0
    var timeToFirstTokenCount = 0
    /// Decode tokens (after prefill) and what they moved, summed.
    var decodeTokens = 0
    var decodeWeightBytes: UInt64 = 0, decodeKVBytes: UInt64 = 0, decodeOtherBytes: UInt64 = 0, decodeFlops: UInt64 = 0
    /// The largest decode token's weight and KV-cache bytes (the memory estimates without metadata).
    var maxWeightBytesOneToken: UInt64 = 0, maxKVBytesOneToken: UInt64 = 0
    /// The resident-memory counter's maximum.
    var peakResidentBytes: UInt64 = 0
    /// Steady-state decode steps (ns between consecutive produced tokens).
    var steps = QuantileSketch()
    /// Each op's totals, by op name.
    var ops: [String: DecodeOpTotals] = [:]

    mutating func merge(_ other: DecodeTotals) {
        opCount +|= other.opCount
        tokens +|= other.tokens
        prefillTokens +|= other.prefillTokens
        prefillNs +|= other.prefillNs
        timeToFirstTokenSumNs +|= other.timeToFirstTokenSumNs
        timeToFirstTokenCount +|= other.timeToFirstTokenCount
        decodeTokens +|= other.decodeTokens
        decodeWeightBytes &+= other.decodeWeightBytes
        decodeKVBytes &+= other.decodeKVBytes
        decodeOtherBytes &+= other.decodeOtherBytes
        decodeFlops &+= other.decodeFlops
        maxWeightBytesOneToken = max(maxWeightBytesOneToken, other.maxWeightBytesOneToken)
        maxKVBytesOneToken = max(maxKVBytesOneToken, other.maxKVBytesOneToken)
        peakResidentBytes = max(peakResidentBytes, other.peakResidentBytes)
        steps.merge(other.steps)
        for (name, op) in other.ops { ops[name, default: DecodeOpTotals()].merge(op) }
    }

    /// The decode figures (docs/METRICS.md "Decode bandwidth"); the peaks and the memory figures
    /// read `metadata` (the machine's measured peaks, the model's sizes).
    func figures(metadata: [String: String], deviceBudgetBytes: UInt64) -> DecodeFigures {
        var d = DecodeFigures()
        d.tokens = tokens
        d.promptTokens = prefillTokens
        if timeToFirstTokenCount > 0 { d.timeToFirstTokenMs = milliseconds(Double(timeToFirstTokenSumNs) / Double(timeToFirstTokenCount)) }
        d.prefillTokensPerSecond = prefillNs > 0 ? Double(prefillTokens) / (Double(prefillNs) / 1e9) : 0
        let medianStepNs = steps.quantile(0.5)
        if medianStepNs > 0 {
            d.tokensPerSecond = 1e9 / medianStepNs
            d.msPerToken = medianStepNs / 1e6
        }
        let fastest = steps.count > 0 ? steps.quantile(0) : 0
        d.bestTokensPerSecond = fastest > 0 ? 1e9 / fastest : 0
        if decodeTokens > 0 {
            let n = Double(decodeTokens)
            d.weightBytesPerToken = Double(decodeWeightBytes) / n
            d.kvCacheBytesPerToken = Double(decodeKVBytes) / n
            d.otherBytesPerToken = Double(decodeOtherBytes) / n
            d.bytesPerToken = d.weightBytesPerToken + d.kvCacheBytesPerToken + d.otherBytesPerToken
            d.flopsPerToken = Double(decodeFlops) / n
        }
        if medianStepNs > 0 { d.bandwidthGBps = d.bytesPerToken / (medianStepNs / 1e9) / 1e9 }
        d.peakBandwidthGBps = Double(metadata[MetadataKey.peakBandwidthGBps] ?? "") ?? 0
        d.peakBandwidthMayBeCacheBound = metadata[MetadataKey.bandwidthProbeMeetsCacheRule] == "false"
        d.peakGFLOPS = Double(metadata[MetadataKey.peakGFLOPS] ?? "") ?? 0
        if d.peakBandwidthGBps > 0 {
            d.utilization = d.bandwidthGBps / d.peakBandwidthGBps
            d.notBandwidthBound = d.utilization < AnalysisThresholds.notBandwidthBoundUtilization
        }
        if d.peakBandwidthGBps > 0 && d.peakGFLOPS > 0 { d.ridgeFlopsPerByte = d.peakGFLOPS / d.peakBandwidthGBps }
        d.threads = DecodeThreadFigures(threads: metadata[MetadataKey.decodeThreads], rates: metadata[MetadataKey.decodeTokensPerSecondByThreads])
        d.threads.priorityChange = metadata[MetadataKey.decodePriority]
        let totalOpNs = ops.values.reduce(Int64(0)) { $0.addingSaturated($1.totalNs) }
        for (name, t) in ops where t.count > 0 {
            var o = OpFigures()
            o.name = name
            o.computeUnit = t.computeUnit
            o.count = t.count
            o.totalMs = milliseconds(t.totalNs)
            o.timeShare = totalOpNs > 0 ? Double(t.totalNs) / Double(totalOpNs) : 0
            o.bytes = t.bytes
            o.flops = t.flops
            let seconds = Double(t.totalNs) / 1e9
            o.bandwidthGBps = seconds > 0 ? Double(t.bytes) / seconds / 1e9 : 0
            o.gflops = seconds > 0 ? Double(t.flops) / seconds / 1e9 : 0
            o.flopsPerByte = t.bytes > 0 ? Double(t.flops) / Double(t.bytes) : 0
            if d.ridgeFlopsPerByte > 0 {
                o.bound = o.flopsPerByte < d.ridgeFlopsPerByte ? .bandwidth : .compute
                let attainableGFLOPS = min(d.peakGFLOPS, o.flopsPerByte * d.peakBandwidthGBps)
                // A zero-FLOP op is judged on bandwidth alone.
                o.rooflineEfficiency = attainableGFLOPS > 0 ? o.gflops / attainableGFLOPS
                    : (d.peakBandwidthGBps > 0 ? o.bandwidthGBps / d.peakBandwidthGBps : 0)
            } else if d.peakBandwidthGBps > 0 {
                o.rooflineEfficiency = o.bandwidthGBps / d.peakBandwidthGBps
            }
            d.ops.append(o)
        }
        d.ops.sort { ($0.totalMs, $1.name) > ($1.totalMs, $0.name) }
        var m = MemoryBudget()
        let recordedWeights = UInt64(metadata[MetadataKey.weightsBytes] ?? ""), recordedKV = UInt64(metadata[MetadataKey.kvCacheBytes] ?? "")
        m.weightsBytes = recordedWeights ?? maxWeightBytesOneToken
        m.kvCacheBytes = recordedKV ?? maxKVBytesOneToken
        m.weightsBytesEstimated = recordedWeights == nil
        m.kvCacheBytesEstimated = recordedKV == nil
        m.peakResidentBytes = peakResidentBytes
        m.totalBytes = max(m.weightsBytes &+ m.kvCacheBytes, peakResidentBytes)
        m.deviceBudgetBytes = deviceBudgetBytes
        m.withinBudget = m.totalBytes <= deviceBudgetBytes
        d.memory = m
        return d
    }
}

/// One op's totals over every call.
struct DecodeOpTotals: Codable, Sendable, Equatable {
    var count = 0
    var totalNs: Int64 = 0
    var bytes: UInt64 = 0, flops: UInt64 = 0
    /// Where it ran ("cpu"); between two that differ, the one that sorts first.
    var computeUnit = ""

    mutating func merge(_ other: DecodeOpTotals) {
        count +|= other.count
        totalNs +|= other.totalNs
        bytes &+= other.bytes
        flops &+= other.flops
        if computeUnit.isEmpty || (!other.computeUnit.isEmpty && other.computeUnit < computeUnit) { computeUnit = other.computeUnit }
    }
}
